"""SolverXPBD's rigid substep with a thread per world on a real GPU against the CPU
(which takes blocks of worlds): replicated worlds with joints, D6 limits, drives and
ground contacts (float tolerances: FMA contraction and the collide's contact order
differ), and the D6 limits of each world held on the GPU."""

import math

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import physics

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")

G = 9.81


def worlds_builder(count):
    t = physics.ModelBuilder(gravity=-G)
    rod = t.add_body(xform=((0.0, 0.5 * math.sin(0.4), 2.0 - 0.5 * math.cos(0.4)),
                            (math.sin(0.2), 0.0, 0.0, math.cos(0.2))))
    t.add_shape_box(rod, hx=0.05, hy=0.05, hz=0.5)
    t.add_joint_d6(-1, rod, angular_axes=[
        dict(axis=a, limit_lower=-0.25, limit_upper=0.25, target_kd=2.0) for a in np.eye(3)],
        parent_xform=((0.0, 0.0, 2.0), None), child_xform=((0.0, 0.0, 0.5), None))
    box = t.add_body(xform=((1.0, 0.0, 0.3), None))
    t.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)
    b = physics.ModelBuilder(gravity=-G)
    b.replicate(t, count, spacing=(3.0, 0.0, 0.0))
    b.add_ground_plane()
    return b


def run(device, count=64, frames=30):
    """Every world's bodies kicked differently, 30 frames of 10 substeps: the poses, the
    D6 angles (eval_ik on the CPU) and the substep's thread count."""
    model = worlds_builder(count).finalize(device=device)
    solver = physics.SolverXPBD(model)
    state = model.state()
    kick = np.random.default_rng(3).uniform(-2.0, 2.0, (model.body_count, 6))
    state.body_qd[...] = model._xp.asarray(kick.astype(np.float32))
    contacts = model.contacts()
    for _ in range(frames):
        model.collide(state, contacts)
        for _ in range(10):
            solver.step(state, state, None, contacts, 1.0 / 600.0)
    host = worlds_builder(count).finalize()
    host_state = host.state()
    host_state.body_q[...] = sim.to_numpy(state.body_q)
    host_state.body_qd[...] = sim.to_numpy(state.body_qd)
    q = np.zeros(host.joint_coord_count, np.float32)
    qd = np.zeros(host.joint_dof_count, np.float32)
    physics.eval_ik(host, host_state, q, qd)
    return host_state.body_q, q, solver._rigid_model[1].group_count


def test_world_threads_on_the_gpu_match_the_cpu():
    cpu_q, cpu_angles, cpu_groups = run("cpu")
    gpu_q, gpu_angles, gpu_groups = run("cuda")
    assert gpu_groups == 64 and cpu_groups >= 1
    assert np.all(np.isfinite(gpu_q))
    np.testing.assert_allclose(gpu_q, cpu_q, atol=2e-3)
    # every world's D6 within its limits, no box below the ground (the kicked ones may
    # still tumble: CPU 0.1000 to 0.139 m)
    assert np.abs(gpu_angles).max() < 0.25 + 1e-2
    assert gpu_q[1::2, 2].min() > 0.1 - 2e-3
