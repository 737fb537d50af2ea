"""The physics solvers on a real GPU agree with their CPU runs (float tolerance: FMA
contraction and the order of atomic force accumulation differ)."""

import math

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import physics

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")


def scene():
    b = physics.ModelBuilder(up_axis="y")
    b.add_cloth_grid((0, 0.6, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 8, 8, 0.05,
                     0.05, mass=0.01, fix_left=True, tri_drag=0.2, tri_lift=0.2,
                     particle_radius=0.01, add_springs=True)
    b.add_soft_grid((1.0, 0.05, 0), None, (0, 0, 0), 3, 3, 3, 0.1, 0.1, 0.1, density=100.0,
                    k_mu=1e4, k_lambda=1e4, k_damp=1.0, particle_radius=0.02)
    b.add_ground_plane(cfg=physics.ShapeConfig(kd=10.0))
    b.add_shape_sphere(-1, ((0.2, 0.0, 0.2), (0, 0, 0, 1)), radius=0.2,
                       cfg=physics.ShapeConfig(kd=10.0))
    return b


def run(device, frames=10, substeps=16, solver_class=physics.SolverSemiImplicit):
    model = scene().finalize(device=device)
    solver = solver_class(model)
    state = model.state()
    contacts = model.contacts()
    for _ in range(frames):
        model.collide(state, contacts)
        for _ in range(substeps):
            solver.step(state, state, None, contacts, 1.0 / 60.0 / substeps)
    return sim.to_numpy(state.particle_q), solver


def test_semi_implicit_on_gpu_matches_cpu():
    gpu, solver = run("cuda")
    cpu, _ = run("cpu")
    assert not solver.fused
    assert np.isfinite(gpu).all()
    np.testing.assert_allclose(gpu, cpu, atol=2e-3)
    assert np.abs(cpu - scene().finalize().particle_q).max() > 1e-2  # it moved


def test_xpbd_on_gpu_matches_cpu_jacobi():
    gpu, solver = run("cuda", solver_class=physics.SolverXPBD)
    assert not solver.fused
    cpu_model = scene().finalize()
    cpu_solver = physics.SolverXPBD(cpu_model, fuse=False)  # the same (Jacobi) algorithm
    state = cpu_model.state()
    contacts = cpu_model.contacts()
    for _ in range(10):
        cpu_model.collide(state, contacts)
        for _ in range(16):
            cpu_solver.step(state, state, None, contacts, 1.0 / 60.0 / 16)
    assert np.isfinite(gpu).all()
    np.testing.assert_allclose(gpu, state.particle_q, atol=2e-3)
