"""Rigid bodies on a real GPU agree with their CPU runs: ground contacts (both solvers)
and an XPBD pendulum (float tolerance: FMA contraction and the order of atomic force
accumulation differ)."""

import math

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import physics

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")


def scene(device):
    """A box (slightly tilted), a sphere and a capsule dropped on the ground, and a hinged rod."""
    b = physics.ModelBuilder(gravity=-9.81)
    angle = 0.02
    box = b.add_body(xform=((0.0, 0.0, 0.25), (math.sin(angle / 2), 0, 0, math.cos(angle / 2))))
    b.add_shape_box(box, hx=0.15, hy=0.1, hz=0.1)
    sphere = b.add_body(xform=((1.0, 0.0, 0.3), None))
    b.add_shape_sphere(sphere, radius=0.1, cfg=physics.ShapeConfig(restitution=0.5))
    capsule = b.add_body(xform=((2.0, 0.0, 0.2), None))
    b.add_shape_capsule(capsule, radius=0.05, half_height=0.1, axis="x")
    rod = b.add_body(xform=((3.0, 0.3, 2.0), None))
    b.add_shape_box(rod, hx=0.05, hy=0.3, hz=0.05)
    b.add_ground_plane()
    return b, rod


def run(device, solver_class, frames=30, substeps=20, joint=True):
    b, rod = scene(device)
    if joint:
        b.add_joint_revolute(-1, rod, parent_xform=((3.0, 0.0, 2.0), None),
                             child_xform=((0.0, -0.3, 0.0), None), axis=(1.0, 0.0, 0.0))
    model = b.finalize(device=device)
    solver = solver_class(model)
    state = model.state()
    contacts = model.contacts()
    for _ in range(frames):
        model.collide(state, contacts)
        for _ in range(substeps):
            solver.step(state, state, None, contacts, 1.0 / 60.0 / substeps)
    return sim.to_numpy(state.body_q), sim.to_numpy(state.body_qd)


@pytest.mark.parametrize("solver_class, joint", [(physics.SolverXPBD, True),
                                                 (physics.SolverSemiImplicit, False),
                                                 (physics.SolverSemiImplicit, True)])
def test_rigid_bodies_on_gpu_match_cpu(solver_class, joint):
    gpu_q, gpu_qd = run("cuda", solver_class, joint=joint)
    cpu_q, cpu_qd = run("cpu", solver_class, joint=joint)
    assert np.isfinite(gpu_q).all() and np.isfinite(gpu_qd).all()
    np.testing.assert_allclose(gpu_q, cpu_q, atol=2e-3)
    np.testing.assert_allclose(gpu_qd, cpu_qd, atol=2e-2)
    start = scene("cpu")[0].finalize().body_q
    assert np.abs(cpu_q - start).max() > 1e-2                      # they moved


@pytest.mark.parametrize("solver_class", [physics.SolverXPBD, physics.SolverSemiImplicit])
def test_a_box_stack_with_a_ball_rests_alike_on_gpu_and_cpu(solver_class):
    """Body-body contacts (box on box, sphere on box): the contacts come in another order
    on the GPU (atomic slots), so the Gauss-Seidel order differs; the resting poses agree."""
    def run_stack(device):
        b = physics.ModelBuilder(gravity=-9.81)
        for k in range(3):
            body = b.add_body(xform=((0.0, 0.0, 0.11 + 0.21 * k), None))
            b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
        ball = b.add_body(xform=((0.02, 0.0, 0.75), None))
        b.add_shape_sphere(ball, radius=0.1)
        b.add_ground_plane()
        model = b.finalize(device=device)
        solver = solver_class(model)
        state, contacts = model.state(), model.contacts()
        for _ in range(120):
            model.collide(state, contacts)
            for _ in range(20):
                solver.step(state, state, None, contacts, 1.0 / 1200.0)
        return sim.to_numpy(state.body_q)

    gpu_q, cpu_q = run_stack("cuda"), run_stack("cpu")
    np.testing.assert_allclose(gpu_q[:, 2], cpu_q[:, 2], atol=1e-3)
    np.testing.assert_allclose(gpu_q[:, :2], cpu_q[:, :2], atol=1e-2)   # the ball's torque
    np.testing.assert_allclose(cpu_q[:, 2], [0.1, 0.3, 0.5, 0.7], atol=2e-3)
