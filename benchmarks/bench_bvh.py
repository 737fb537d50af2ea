"""Bvh benchmark (issue 9), side by side in one run.

200,000 random boxes of mixed sizes (centres uniform in the unit cube, half-sizes
log-uniform in [0.0005, 0.02], a 40x range, per axis), built with SAH and with median
splits; on each tree, 200,000 independent query boxes drawn the same way (other seed), each
counting the boxes it overlaps, and 100,000 rays (starts in the unit cube, directions
uniform over the sphere, all boxes met counted). Compared:

* numba_sim: ``sim.Bvh`` (all cores) and ``@njit(parallel=True)`` loops using
  ``sim.bvh_query_aabb`` / ``sim.bvh_query_ray`` (also with one thread);
* Warp's CPU Bvh (warp-lang, one thread): ``wp.Bvh`` and the same loops as
  kernels.

Counts are checked to agree. The contestants take turns, round after round,
and the medians over rounds and their ratios are printed, per core (one thread
each) and on all cores.

    python benchmarks/bench_bvh.py [--boxes 200000] [--rays 100000] [--repeat 5] [--json FILE]
"""

import argparse
import os
import sys

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import (cpu_warp, finish, interleaved_medians, load_average,  # noqa: E402
                    timed_both_ways, versus_warp_table)

import numba_sim as sim  # noqa: E402

CONSTRUCTORS = ("sah", "median")


@numba.njit(parallel=True)
def count_overlaps(bvh, lowers, uppers, counts):
    for i in numba.prange(lowers.shape[0]):
        lo = sim.vec3(lowers[i, 0], lowers[i, 1], lowers[i, 2])
        hi = sim.vec3(uppers[i, 0], uppers[i, 1], uppers[i, 2])
        count = 0
        for _ in sim.bvh_query_aabb(bvh, lo, hi):
            count += 1
        counts[i] = count


@numba.njit(parallel=True)
def count_ray_hits(bvh, starts, directions, counts):
    for i in numba.prange(starts.shape[0]):
        start = sim.vec3(starts[i, 0], starts[i, 1], starts[i, 2])
        direction = sim.vec3(directions[i, 0], directions[i, 1], directions[i, 2])
        count = 0
        for _ in sim.bvh_query_ray(bvh, start, direction):
            count += 1
        counts[i] = count


def random_boxes(n, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.0, 1.0, (n, 3)).astype(np.float32)
    half = np.exp(rng.uniform(np.log(0.0005), np.log(0.02), (n, 3))).astype(np.float32)
    return centres - half, centres + half


def random_rays(n, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.uniform(0.0, 1.0, (n, 3)).astype(np.float32),
            rng.normal(size=(n, 3)).astype(np.float32))


def numba_sim_runners(lowers, uppers, queries, starts, directions, constructor):
    trees = {"bvh": sim.Bvh(lowers, uppers, constructor=constructor)}
    overlaps = np.zeros(len(queries[0]), np.int32)
    hits = np.zeros(len(starts), np.int32)

    def build():
        trees["bvh"] = sim.Bvh(lowers, uppers, constructor=constructor)

    def overlap():
        count_overlaps(trees["bvh"], queries[0], queries[1], overlaps)

    def rays():
        count_ray_hits(trees["bvh"], starts, directions, hits)

    return {"build": build, "overlap": overlap, "rays": rays}, (overlaps, hits), trees


def warp_runners(lowers, uppers, queries, starts, directions, constructor):
    """Warp's build and queries on its CPU device, or None without warp-lang."""
    wp = cpu_warp()
    if wp is None:
        return None

    @wp.kernel
    def warp_overlaps(bvh: wp.uint64, lowers: wp.array(dtype=wp.vec3),
                      uppers: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int)):
        i = wp.tid()
        query = wp.bvh_query_aabb(bvh, lowers[i], uppers[i])
        j = int(0)
        count = int(0)
        while wp.bvh_query_next(query, j):
            count += 1
        counts[i] = count

    @wp.kernel
    def warp_rays(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3),
                  directions: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int)):
        i = wp.tid()
        query = wp.bvh_query_ray(bvh, starts[i], directions[i])
        j = int(0)
        count = int(0)
        while wp.bvh_query_next(query, j):
            count += 1
        counts[i] = count

    def array(values):
        return wp.array(values, dtype=wp.vec3, device="cpu")

    w_lowers, w_uppers, w_starts, w_directions = map(array, (lowers, uppers, starts, directions))
    q_lowers, q_uppers = map(array, queries)
    overlaps = wp.zeros(len(queries[0]), dtype=int, device="cpu")
    hits = wp.zeros(len(starts), dtype=int, device="cpu")
    trees = {"bvh": wp.Bvh(w_lowers, w_uppers, constructor=constructor)}

    def build():
        trees["bvh"] = wp.Bvh(w_lowers, w_uppers, constructor=constructor)

    def overlap():
        wp.launch(warp_overlaps, dim=len(queries[0]), device="cpu",
                  inputs=[trees["bvh"].id, q_lowers, q_uppers, overlaps])
        wp.synchronize_device("cpu")

    def rays():
        wp.launch(warp_rays, dim=len(starts), device="cpu",
                  inputs=[trees["bvh"].id, w_starts, w_directions, hits])
        wp.synchronize_device("cpu")

    return {"build": build, "overlap": overlap, "rays": rays}, (overlaps, hits)


def run(num_boxes, num_rays, repeat):
    lowers, uppers = random_boxes(num_boxes)
    queries = random_boxes(num_boxes, seed=2)
    starts, directions = random_rays(num_rays)
    tables = []
    for constructor in CONSTRUCTORS:
        runners, (overlaps, hits), trees = numba_sim_runners(lowers, uppers, queries, starts,
                                                             directions, constructor)
        timed = timed_both_ways(runners)
        warp = warp_runners(lowers, uppers, queries, starts, directions, constructor)
        if warp is not None:
            for task, fn in warp[0].items():
                timed[f"warp {task}"] = fn
        times = interleaved_medians(timed, repeat)
        if warp is not None:
            assert np.array_equal(warp[1][0].numpy(), overlaps), "overlap counts differ"
            assert np.array_equal(warp[1][1].numpy(), hits), "ray hit counts differ"
        stats = trees["bvh"].stats()
        table = versus_warp_table(
            f"Bvh ({constructor}): {num_boxes:,} boxes of mixed sizes, {num_boxes:,} query "
            f"boxes, {num_rays:,} rays", times, runners, warp is not None)
        table.note(f"tree depth {stats.depth}, SAH cost {stats.sah_cost:.1f}; "
                   f"{overlaps.mean():.2f} overlaps per query box, {hits.mean():.2f} boxes per "
                   "ray; counts checked equal to Warp's")
        tables.append(table)
    return tables


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boxes", type=int, default=200_000)
    parser.add_argument("--rays", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="also write the tables to this file (python -m benchmarks)")
    args = parser.parse_args(argv)
    before = load_average()
    finish(run(args.boxes, args.rays, args.repeat), args, before)


if __name__ == "__main__":
    main()
