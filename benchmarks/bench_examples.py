"""Demo benchmark (issue 11): seconds per frame of the DEM demo (65,536 particles,
64 substeps) and the SPH demo (Warp's default size), numba_sim vs Warp's own
examples on Warp's CPU backend, in one run; numba_sim on all cores and on one
thread. The contenders take turns frame after frame (medians of ``--frames``);
each advances its own simulation, so the results are not compared (the demos'
own tests check them). ``--json FILE`` also writes the table
(``python -m benchmarks``).

    python benchmarks/bench_examples.py [--frames 2] [--sph-smoothing 0.8] [--json FILE]
"""

import argparse
import os
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import (cpu_warp, finish, interleaved_medians, load_average,  # noqa: E402
                    timed_both_ways, versus_warp_table)

import numba_sim as sim  # noqa: E402
from numba_sim.examples import dem, sph  # noqa: E402


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
    parser.add_argument("--json", help="also write the tables to this file (python -m benchmarks)")
    args = parser.parse_args(argv)
    args.repeat = args.frames
    before = load_average()
    wp = cpu_warp()

    dem_example = dem.Example()
    sph_example = sph.Example(smoothing_length=args.sph_smoothing)
    runners = timed_both_ways({"DEM": dem_example.step, "SPH": sph_example.step})
    if wp is not None:
        runners["warp DEM"] = warp_dem_stepper(wp, dem.Example())
        runners["warp SPH"] = warp_sph_stepper(wp, args.sph_smoothing)
    times = interleaved_medians(runners, args.frames)
    counts = [getattr(e, "particle_count", getattr(e, "n", 0)) for e in (dem_example, sph_example)]
    table = versus_warp_table(
        f"seconds per frame: DEM demo ({counts[0]:,} particles, {dem_example.sim_substeps} "
        f"substeps) and SPH demo ({counts[1]:,} particles)", times, ("DEM", "SPH"),
        wp is not None)
    table.note("each contender advances its own simulation: results not compared here")
    finish([table], args, before)


if __name__ == "__main__":
    main()
