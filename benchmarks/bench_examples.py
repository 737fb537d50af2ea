"""Demo benchmark (issue 11): seconds per frame of the DEM demo (65,536 particles,
64 substeps) and the SPH demo (Warp's default size), numba_sim vs Warp's own
examples on Warp's CPU backend, in one run; and numba_sim on one thread.

    python benchmarks/bench_examples.py [--frames 2] [--sph-smoothing 0.8]
"""

import argparse
import time

import numba
import numpy as np

import numba_sim as sim
from numba_sim.examples import dem, sph


def seconds_per_frame(step, frames):
    step()  # compile and warm up
    samples = []
    for _ in range(frames):
        start = time.perf_counter()
        step()
        samples.append(time.perf_counter() - start)
    return float(np.median(samples))


def warp_dem_stepper(wp, example):
    from warp.examples.core import example_dem as warp_dem

    grid = wp.HashGrid(128, 128, 128, device="cpu")
    x = wp.array(example.positions(), dtype=wp.vec3, device="cpu")
    v = wp.array(sim.to_numpy(example.v), dtype=wp.vec3, device="cpu")
    f = wp.zeros_like(v)

    def step():
        grid.build(x, example.grid_cell_size)
        for _ in range(example.sim_substeps):
            wp.launch(warp_dem.apply_forces, dim=len(x), device="cpu",
                      inputs=[grid.id, x, v, f, example.point_radius, example.k_contact,
                              example.k_damp, example.k_friction, example.k_mu])
            wp.launch(warp_dem.integrate, dim=len(x), device="cpu",
                      inputs=[x, v, f, (0.0, -9.8, 0.0), example.sim_dt, example.inv_mass])

    return step


def warp_sph_stepper(wp, smoothing_length):
    from warp.examples.core import example_sph as warp_sph

    with wp.ScopedDevice("cpu"):
        example = warp_sph.Example(stage_path=None)
    if example.smoothing_length != smoothing_length:
        raise SystemExit("--sph-smoothing other than Warp's default is not comparable")
    return lambda: _on_cpu(wp, example.step)


def _on_cpu(wp, step):
    with wp.ScopedDevice("cpu"):
        step()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2)
    parser.add_argument("--sph-smoothing", type=float, default=0.8)
    args = parser.parse_args(argv)
    try:
        import warp as wp

        wp.config.quiet = True
        wp.init()
    except ImportError:
        wp = None

    rows = []
    dem_example = dem.Example()
    dem_warp = warp_dem_stepper(wp, dem.Example()) if wp else None
    sph_example = sph.Example(smoothing_length=args.sph_smoothing)
    sph_warp = warp_sph_stepper(wp, args.sph_smoothing) if wp else None
    threads = numba.get_num_threads()
    for name, example, warp_step in (("DEM", dem_example, dem_warp), ("SPH", sph_example, sph_warp)):
        t_sim = seconds_per_frame(example.step, args.frames)
        numba.set_num_threads(1)
        t_single = seconds_per_frame(example.step, args.frames)
        numba.set_num_threads(threads)
        t_warp = seconds_per_frame(warp_step, args.frames) if warp_step else float("nan")
        count = getattr(example, "particle_count", getattr(example, "n", 0))
        rows.append((name, count, t_sim, t_single, t_warp))
    print(f"seconds per frame (median of {args.frames}; numba_sim on {threads} threads)")
    print(f"{'demo':5} {'particles':>9} {'numba_sim':>10} {'1 thread':>9} {'warp cpu':>9} "
          f"{'speed-up':>9} {'1-thread':>9}")
    for name, count, t_sim, t_single, t_warp in rows:
        print(f"{name:5} {count:>9} {t_sim:>10.3f} {t_single:>9.3f} {t_warp:>9.3f} "
              f"{t_warp / t_sim:>8.2f}x {t_warp / t_single:>8.2f}x")


if __name__ == "__main__":
    main()
