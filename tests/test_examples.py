"""The demos: DEM matches Warp's example_dem kernels, SPH keeps its density, the
command line runs them and writes pictures."""

import os
import subprocess
import sys

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.examples import dem, particles, sph


@pytest.fixture(scope="module")
def warp():
    wp = pytest.importorskip("warp", reason="warp-lang is in the test extra")
    wp.config.quiet = True
    wp.init()
    return wp


def warp_dem_frame(wp, points, velocities, example):
    """One frame of Warp's own example_dem kernels on Warp's CPU backend."""
    from warp.examples.core import example_dem as warp_dem

    grid = wp.HashGrid(128, 128, 128, device="cpu")
    x = wp.array(points, dtype=wp.vec3, device="cpu")
    v = wp.array(velocities, dtype=wp.vec3, device="cpu")
    f = wp.zeros_like(v)
    grid.build(x, example.grid_cell_size)
    for _ in range(example.sim_substeps):
        wp.launch(warp_dem.apply_forces, dim=len(x), device="cpu",
                  inputs=[grid.id, x, v, f, example.point_radius, example.k_contact,
                          example.k_damp, example.k_friction, example.k_mu])
        wp.launch(warp_dem.integrate, dim=len(x), device="cpu",
                  inputs=[x, v, f, (0.0, -9.8, 0.0), example.sim_dt, example.inv_mass])
    return x.numpy(), v.numpy()


def test_dem_frame_matches_warps_example_dem(warp):
    example = dem.Example(dims=(16, 16, 16))  # 4,096 particles
    assert example.particle_count == 4096
    start_x, start_v = example.positions().copy(), sim.to_numpy(example.v).copy()
    example.step()
    expected_x, expected_v = warp_dem_frame(warp, start_x, start_v, example)
    np.testing.assert_allclose(example.positions(), expected_x, atol=1e-3)
    assert np.abs(expected_x - start_x).max() > 0.1  # the frame did move the particles


def warp_sph_frames(wp, example, frames):
    """Warp's own example_sph kernels, from the same parameters, on Warp's CPU backend."""
    from warp.examples.core import example_sph as warp_sph

    e = example
    x = wp.empty(e.n, dtype=wp.vec3, device="cpu")
    v = wp.zeros(e.n, dtype=wp.vec3, device="cpu")
    rho = wp.zeros(e.n, dtype=float, device="cpu")
    a = wp.zeros(e.n, dtype=wp.vec3, device="cpu")
    wp.launch(warp_sph.initialize_particles, dim=e.n, device="cpu",
              inputs=[x, e.smoothing_length, e.width, e.height, e.length])
    start = x.numpy().copy()
    grid_size = int(e.height / (4.0 * e.smoothing_length))
    grid = wp.HashGrid(grid_size, grid_size, grid_size, device="cpu")
    for _ in range(frames * e.sim_step_to_frame_ratio):
        grid.build(x, e.smoothing_length)
        wp.launch(warp_sph.compute_density, dim=e.n, device="cpu",
                  inputs=[grid.id, x, rho, e.density_normalization, e.smoothing_length])
        wp.launch(warp_sph.get_acceleration, dim=e.n, device="cpu",
                  inputs=[grid.id, x, v, rho, a, e.isotropic_exp, e.base_density, e.gravity,
                          e.pressure_normalization, e.viscous_normalization, e.smoothing_length])
        wp.launch(warp_sph.apply_bounds, dim=e.n, device="cpu",
                  inputs=[x, v, e.damping_coef, e.width, e.height, e.length])
        wp.launch(warp_sph.kick, dim=e.n, device="cpu", inputs=[v, a, e.dt])
        wp.launch(warp_sph.drift, dim=e.n, device="cpu", inputs=[x, v, e.dt])
    return start, x.numpy(), rho.numpy()


def test_sph_matches_warps_example_sph_and_keeps_its_density(warp):
    example = sph.Example(smoothing_length=2.0)  # 4,000 particles, 16 steps a frame
    warp_start, warp_x, warp_rho = warp_sph_frames(warp, example, frames=2)
    np.testing.assert_array_equal(example.positions(), warp_start)  # same PCG jitter, bit for bit
    initial_density = None
    for _ in range(2):
        example.step()
        rho = sim.to_numpy(example.rho)
        initial_density = initial_density or float(np.median(rho))
    assert np.isfinite(example.positions()).all()
    np.testing.assert_allclose(example.positions(), warp_x, atol=1e-3)
    np.testing.assert_allclose(rho, warp_rho, rtol=1e-3)
    assert 0.5 < np.median(rho) / initial_density < 2.0  # no blow-up, no collapse


def test_particles_bounce_on_the_ground():
    example = particles.Example(n=2000, substeps=4)
    for _ in range(90):
        example.step()
    heights = example.positions()[:, 1]
    assert heights.min() >= 0.0 and heights.max() < 3.0


@pytest.mark.parametrize("out", ["particles.png", "particles.gif"])
def test_command_line_runs_a_demo_and_writes_a_picture(tmp_path, out):
    path = tmp_path / out
    result = subprocess.run([sys.executable, "-m", "numba_sim", "run", "particles", "--frames", "3",
                             "--out", str(path)], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, MPLBACKEND="Agg"))
    assert result.returncode == 0, result.stderr
    assert path.exists() and path.stat().st_size > 10_000
    assert path.read_bytes()[:4] in (b"\x89PNG", b"GIF8")
    assert "3 frames" in result.stdout


def test_command_line_rejects_unknown_demos():
    result = subprocess.run([sys.executable, "-m", "numba_sim", "run", "tornado"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode != 0 and "invalid choice" in result.stderr


def _demo_kernel_inputs():
    n = 4
    vec = np.zeros((n, 3), np.float32)
    scalar = np.zeros(n, np.float32)
    grid_id = np.uint64(0)
    return [
        (dem.apply_forces, [grid_id, vec, vec, vec, 0.1, 1.0, 1.0, 1.0, 1.0]),
        (dem.integrate, [vec, vec, vec, sim.vec3(), 0.1, 1.0]),
        (sph.compute_density, [grid_id, vec, scalar, 1.0, 1.0]),
        (sph.get_acceleration, [grid_id, vec, vec, scalar, vec, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
        (sph.apply_bounds, [vec, vec, 1.0, 1.0, 1.0, 1.0]),
        (sph.initialize_particles, [vec, 1.0, 1.0, 1.0, 1.0]),
        (particles.bounce, [vec, vec, 0.5]),
    ]


@pytest.mark.parametrize("kernel, inputs", _demo_kernel_inputs(), ids=lambda k: getattr(k, "key", ""))
def test_demo_kernels_compile_and_link_for_cuda_offline(kernel, inputs):
    library = kernel.compile("cuda", inputs, cc=(7, 5))
    cubin = bytes(library.get_cubin(cc=(7, 5)).code)
    assert cubin[:4] == b"\x7fELF"
