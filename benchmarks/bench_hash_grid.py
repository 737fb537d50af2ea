"""HashGrid benchmark (issue 8), side by side in one run.

Uniform random points, 20,000 per unit volume, radius 0.05 (about 10
neighbours each), 128^3 grids; every point counts its neighbours within the
radius. Compared:

* numba_sim: ``HashGrid.build`` (all cores), and an ``@njit(parallel=True)``
  loop over points using ``sim.hash_grid_query`` (also with one thread,
  ``numba.set_num_threads(1)``);
* Warp's CPU HashGrid (warp-lang): ``HashGrid.build`` and a kernel doing the
  same count (Warp's CPU backend runs on one thread);
* ``scipy.spatial.cKDTree(points)`` + ``query_ball_point(points, r,
  return_length=True, workers=-1)``.

Counts are checked to agree. The contestants take turns, round after round,
and the medians over rounds and their ratios are printed (machines here are
noisy; never read a lone absolute time).

    python benchmarks/bench_hash_grid.py [--sizes 100000 1000000] [--repeat 5]
"""

import argparse
import os
import sys

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import (cpu_warp, finish, interleaved_medians, load_average, ms,  # noqa: E402
                    ratio, timed_both_ways, versus_warp_table)

import numba_sim as sim  # noqa: E402
from numba_sim import spatial  # noqa: E402

DENSITY = 20_000.0
RADIUS = 0.05
DIMS = 128


@numba.njit(parallel=True)
def count_neighbours(grid, points, radius, counts):
    radius_sq = radius * radius
    for tid in numba.prange(points.shape[0]):
        i = spatial.hash_grid_point_id(grid, np.int32(tid))  # cell order: neighbours share cache
        p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
        count = 0
        for j in spatial.hash_grid_query(grid, p, radius):
            dx = points[j, 0] - p.x
            dy = points[j, 1] - p.y
            dz = points[j, 2] - p.z
            if dx * dx + dy * dy + dz * dz <= radius_sq:
                count += 1
        counts[i] = count


def uniform_points(n, seed=0):
    side = (n / DENSITY) ** (1.0 / 3.0)
    return np.random.default_rng(seed).uniform(0.0, side, size=(n, 3)).astype(np.float32)


def numba_sim_runners(points):
    grid = spatial.HashGrid(DIMS, DIMS, DIMS)
    counts = np.zeros(len(points), dtype=np.int32)
    radius = np.float32(RADIUS)

    def build():
        grid.build(points, RADIUS)

    def query():
        count_neighbours(grid, points, radius, counts)

    build()
    return build, query, counts


def warp_runners(points):
    """Warp's build and query on its CPU device, or None without warp-lang."""
    wp = cpu_warp()
    if wp is None:
        return None

    @wp.kernel
    def warp_count(grid: wp.uint64, points: wp.array(dtype=wp.vec3), radius: float,
                   counts: wp.array(dtype=int)):
        tid = wp.tid()
        i = wp.hash_grid_point_id(grid, tid)
        p = points[i]
        count = int(0)
        for j in wp.hash_grid_query(grid, p, radius):
            if wp.length_sq(points[j] - p) <= radius * radius:
                count += 1
        counts[i] = count

    device = "cpu"
    grid = wp.HashGrid(DIMS, DIMS, DIMS, device=device)
    wp_points = wp.array(points, dtype=wp.vec3, device=device)
    wp_counts = wp.zeros(len(points), dtype=int, device=device)

    def build():
        grid.build(wp_points, RADIUS)

    def query():
        wp.launch(warp_count, dim=len(points), inputs=[grid.id, wp_points, RADIUS, wp_counts],
                  device=device)
        wp.synchronize_device(device)

    build()
    return build, query, wp_counts


def kdtree_runner(points):
    from scipy.spatial import cKDTree

    result = {}

    def build_and_query():
        tree = cKDTree(points)
        result["counts"] = tree.query_ball_point(points, RADIUS, return_length=True, workers=-1)

    return build_and_query, result


def run_size(n, repeat):
    points = uniform_points(n)
    build, query, counts = numba_sim_runners(points)
    runners = timed_both_ways({"build": build, "query": query})
    warp = warp_runners(points)
    if warp is not None:
        runners["warp build"], runners["warp query"], warp_counts = warp
    kdtree, kd_result = kdtree_runner(points)
    runners["cKDTree build+query"] = kdtree
    times = interleaved_medians(runners, repeat)

    if warp is not None:
        assert np.array_equal(warp_counts.numpy(), counts), "Warp and numba_sim counts differ"
    # float64 distances in cKDTree: points right at the radius may differ
    mismatch = np.count_nonzero(kd_result["counts"] != counts)
    assert mismatch <= n * 1e-4, f"cKDTree and numba_sim counts differ for {mismatch} points"

    table = versus_warp_table(
        f"HashGrid: {n:,} uniform points, side {(n / DENSITY) ** (1 / 3):.3f}, radius {RADIUS}, "
        f"{DIMS}^3 cells, {counts.mean():.2f} neighbours per point", times, ("build", "query"),
        warp is not None)
    ours_total = times["numba_sim build"] + times["numba_sim query"]
    table.note(f"scipy cKDTree build + query_ball_point (workers=-1, all cores): "
               f"{ms(times['cKDTree build+query'])}, numba_sim build + query on all cores "
               f"{ratio(times['cKDTree build+query'], ours_total)} faster")
    table.note("counts checked equal to Warp's (and to cKDTree's but for points at the radius)")
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="also write the tables to this file (python -m benchmarks)")
    args = parser.parse_args(argv)
    before = load_average()
    finish([run_size(n, args.repeat) for n in args.sizes], args, before)


if __name__ == "__main__":
    main()
