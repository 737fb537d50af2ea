"""The demos on a real GPU agree with the CPU runs (float tolerance: FMA contraction
and neighbour order differ)."""

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim.examples import dem, particles, sph

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")


def test_particles_on_gpu_match_cpu():
    gpu, cpu = particles.Example(device="cuda", n=10_000), particles.Example(device="cpu", n=10_000)
    for _ in range(30):
        gpu.step()
        cpu.step()
    sim.synchronize()
    np.testing.assert_allclose(gpu.positions(), cpu.positions(), atol=1e-4)


def test_dem_frame_on_gpu_matches_cpu():
    gpu, cpu = dem.Example(device="cuda", dims=(16, 16, 16)), dem.Example(dims=(16, 16, 16))
    gpu.step()
    cpu.step()
    sim.synchronize()
    np.testing.assert_allclose(gpu.positions(), cpu.positions(), atol=1e-3)


def test_sph_frame_on_gpu_matches_cpu():
    gpu, cpu = sph.Example(device="cuda", smoothing_length=2.0), sph.Example(smoothing_length=2.0)
    gpu.step()
    cpu.step()
    sim.synchronize()
    np.testing.assert_allclose(gpu.positions(), cpu.positions(), atol=1e-3)
    np.testing.assert_allclose(sim.to_numpy(gpu.rho), sim.to_numpy(cpu.rho), rtol=1e-3)
