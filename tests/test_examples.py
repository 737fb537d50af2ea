"""The demos: DEM matches Warp's example_dem kernels, SPH keeps its density, the
command line runs them and writes pictures."""

import os
import subprocess
import sys

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import __main__ as numba_main
from numba_sim import examples
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


def test_recorded_positions_are_snapshots_that_the_next_step_leaves_alone():
    example = particles.Example(n=500, substeps=2)
    first = example.positions()
    kept = first.copy()
    example.step()
    assert np.array_equal(first, kept)
    assert not np.array_equal(example.positions(), first)


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


def test_a_physics_demo_runs_from_the_command_line(tmp_path):
    """The physics demos are registered; one runs a few frames and writes a picture (the
    next test steps both in this process)."""
    from numba_sim import examples
    from numba_sim.examples import cloth, softbody

    assert examples.load("cloth") is cloth.Example
    assert examples.load("softbody") is softbody.Example
    path = tmp_path / "softbody.png"
    result = subprocess.run([sys.executable, "-m", "numba_sim", "run", "softbody", "--frames",
                             "3", "--out", str(path)], capture_output=True, text=True,
                            timeout=600, env=dict(os.environ, MPLBACKEND="Agg"))
    assert result.returncode == 0, result.stderr
    assert "3 frames" in result.stdout
    assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 10_000


def test_the_ant_demo_writes_a_usd_file_from_the_command_line(tmp_path):
    """``numba-sim run ant --out ant.usda``: the initial state and one sample per frame."""
    Usd = pytest.importorskip("pxr.Usd")
    from pxr import UsdGeom

    path = tmp_path / "ant.usda"
    result = subprocess.run([sys.executable, "-m", "numba_sim", "run", "ant", "--frames", "3",
                             "--out", str(path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "3 frames" in result.stdout and str(path) in result.stdout
    stage = Usd.Stage.Open(str(path))
    torso = UsdGeom.Xformable(stage.GetPrimAtPath("/root/bodies/torso"))
    translate = torso.GetOrderedXformOps()[0]
    assert translate.GetTimeSamples() == [0.0, 1.0, 2.0, 3.0]
    heights = [translate.Get(t)[2] for t in range(4)]
    # dropped from 0.75 m; its legs swing down to their targets and lift it a little first
    assert heights[0] == pytest.approx(0.75) and len(set(heights)) == 4
    assert all(0.5 < h < 1.0 for h in heights)


def test_the_cloth_demo_drapes_over_its_sphere_and_the_softbody_beams_land():
    from numba_sim.examples import cloth, softbody

    example = cloth.Example(width=16, height=8)  # the demo's scene, a coarser sheet
    start = example.positions().copy()
    for _ in range(60):
        example.step()
    q = example.positions()
    assert np.isfinite(q).all()
    assert q[:, 1].min() > -0.05  # held by the ground
    assert (q[:, 1] < start[:, 1] - 1.0).any()  # the free side fell more than a metre

    example = softbody.Example()
    for _ in range(60):
        example.step()
    q = example.positions()
    assert np.isfinite(q).all() and q[:, 1].min() > -0.05
    assert q[:, 1].max() < 0.95  # both beams came down onto the sphere (their top: 1.0) ...
    assert q[:, 1].max() > 0.6  # ... and rest on it (its top is at 0.6)


@pytest.mark.parametrize("arguments, message", [
    (["--frames", "0"], "argument --frames: expected a number of frames >= 1, got 0"),
    (["--device", "gpu"], "argument --device: expected cpu, cuda or cuda:N, got 'gpu'"),
    (["--out", "picture.jpg"], "argument --out: expected a .png, .gif or .usd file"),
    (["--out", "particles.usd"], "argument --out: USD output is for the physics demos"),
    (["--out", "/no/such/directory/x.png"], "argument --out: cannot write into"),
    (["--device", "cuda"], "argument --device: no CUDA GPU is available"),
])
def test_command_line_checks_its_arguments_before_it_simulates(arguments, message):
    if "cuda" in arguments:
        from numba import cuda

        if cuda.is_available():
            pytest.skip("a CUDA GPU is available here: --device cuda is valid")
    result = subprocess.run([sys.executable, "-m", "numba_sim", "run", "particles", *arguments],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(f"numba-sim run: error: {message}")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_run_help_shows_each_demos_defaults():
    result = subprocess.run([sys.executable, "-m", "numba_sim", "run", "--help"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0
    assert set(numba_main.DEMO_DEFAULTS) == set(examples.EXAMPLES)
    for name, defaults in numba_main.DEMO_DEFAULTS.items():
        assert f"{name:10s} {defaults.frames:4d} frames" in result.stdout


def test_the_default_sph_run_visibly_moves(tmp_path):
    """The fluid column of ``numba-sim run sph`` (its default settings) collapses on screen:
    40 of its 120 default frames already spread the column and move a good part of the GIF."""
    from PIL import Image

    settings = numba_main.DEMO_DEFAULTS["sph"]
    assert settings.extension == "gif" and settings.frames >= 100
    example = sph.Example(**settings.options)
    start = example.positions()
    for _ in range(40):
        example.step()
    end = example.positions()
    assert np.isfinite(end).all()
    width_start, width_end = np.ptp(start[:, 0]), np.ptp(end[:, 0])
    assert width_end > 1.3 * width_start  # the column spreads along the floor ...
    assert end[:, 1].mean() < start[:, 1].mean() - 1.0  # ... as it falls

    out = numba_main.run("sph", "cpu", 40, str(tmp_path / "sph.gif"))
    with Image.open(out) as gif:
        frames = []
        for index in range(gif.n_frames):
            gif.seek(index)
            frames.append(np.asarray(gif.convert("L"), dtype=np.int16))
    assert len(frames) == 41
    changed = np.mean(np.abs(frames[-1] - frames[0]) > 16)
    assert changed > 0.01, changed  # a share of all pixels, the empty background included
