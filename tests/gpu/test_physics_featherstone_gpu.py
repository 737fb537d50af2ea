"""SolverFeatherstone on a real GPU agrees with its CPU run: a 1-link pendulum and a
3-link chain in one model (one thread per articulation), and a floating box on the
ground (contacts through body_f)."""

import math

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import physics

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")


def run(device):
    b = physics.ModelBuilder(gravity=-9.81)
    for links, x in ((1, 0.0), (3, 2.0)):
        parent = -1
        pivot = np.array([x, 0.0, 3.0])
        for k in range(links):
            body = b.add_body(xform=(pivot + np.array([0.0, 0.25 * (2 * k + 1), 0.0]), None))
            b.add_shape_box(body, hx=0.03, hy=0.25, hz=0.03)
            b.add_joint_revolute(parent, body,
                                 parent_xform=(pivot if parent < 0 else (0.0, 0.25, 0.0), None),
                                 child_xform=((0.0, -0.25, 0.0), None), axis=(1.0, 0.0, 0.0))
            parent = body
    box = b.add_body(xform=((5.0, 0.0, 0.15), None))
    b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)
    b.add_joint_free(box)
    b.add_ground_plane()
    model = b.finalize(device=device)
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    state, contacts = model.state(), model.contacts()
    for _ in range(30):
        model.collide(state, contacts)
        for _ in range(20):
            solver.step(state, state, None, contacts, 1.0 / 1200.0)
    return sim.to_numpy(state.joint_q), sim.to_numpy(state.body_q)


def test_featherstone_on_gpu_matches_cpu():
    gpu_q, gpu_body = run("cuda")
    cpu_q, cpu_body = run("cpu")
    assert np.isfinite(gpu_q).all()
    np.testing.assert_allclose(gpu_q, cpu_q, atol=1e-3)
    np.testing.assert_allclose(gpu_body, cpu_body, atol=1e-3)
    assert abs(cpu_q[0]) > 0.1 and math.isfinite(cpu_q[0])            # the pendulum swung
