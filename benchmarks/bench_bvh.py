"""Bvh benchmark (issue 9), side by side in one run.

200,000 random boxes (centres uniform in the unit cube, half-sizes uniform in
[0.001, 0.005]), built with SAH and with median splits; on each tree, the
overlap query of every box (each box's own box) and 100,000 rays (starts in
the unit cube, random directions, all boxes met counted). Compared:

* numba_sim: ``sim.Bvh`` (all cores) and ``@njit(parallel=True)`` loops using
  ``sim.bvh_query_aabb`` / ``sim.bvh_query_ray`` (also with one thread);
* Warp's CPU Bvh (warp-lang, one thread): ``wp.Bvh`` and the same loops as
  kernels.

Counts are checked to agree. The contestants take turns, round after round,
and the medians over rounds and their ratios are printed.

    python benchmarks/bench_bvh.py [--boxes 200000] [--rays 100000] [--repeat 5]
"""

import argparse
import importlib
import importlib.util

import numba
import numpy as np

import numba_sim as sim
from bench_hash_grid import interleaved_medians, one_thread

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
    half = rng.uniform(0.001, 0.005, (n, 3)).astype(np.float32)
    return centres - half, centres + half


def random_rays(n, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.uniform(0.0, 1.0, (n, 3)).astype(np.float32),
            rng.normal(size=(n, 3)).astype(np.float32))


def numba_sim_runners(lowers, uppers, starts, directions, constructor):
    trees = {"bvh": sim.Bvh(lowers, uppers, constructor=constructor)}
    overlaps = np.zeros(len(lowers), np.int32)
    hits = np.zeros(len(starts), np.int32)

    def build():
        trees["bvh"] = sim.Bvh(lowers, uppers, constructor=constructor)

    def overlap():
        count_overlaps(trees["bvh"], lowers, uppers, overlaps)

    def rays():
        count_ray_hits(trees["bvh"], starts, directions, hits)

    return {"build": build, "overlap": overlap, "rays": rays}, (overlaps, hits), trees


def cpu_warp():
    """warp-lang, initialized (quietly), or None when it is not installed."""
    wp = importlib.import_module("warp") if importlib.util.find_spec("warp") else None
    if wp is not None:
        wp.config.quiet = True
        wp.init()
    return wp


def warp_runners(lowers, uppers, starts, directions, constructor):
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
    overlaps = wp.zeros(len(lowers), dtype=int, device="cpu")
    hits = wp.zeros(len(starts), dtype=int, device="cpu")
    trees = {"bvh": wp.Bvh(w_lowers, w_uppers, constructor=constructor)}

    def build():
        trees["bvh"] = wp.Bvh(w_lowers, w_uppers, constructor=constructor)

    def overlap():
        wp.launch(warp_overlaps, dim=len(lowers), device="cpu",
                  inputs=[trees["bvh"].id, w_lowers, w_uppers, overlaps])
        wp.synchronize_device("cpu")

    def rays():
        wp.launch(warp_rays, dim=len(starts), device="cpu",
                  inputs=[trees["bvh"].id, w_starts, w_directions, hits])
        wp.synchronize_device("cpu")

    return {"build": build, "overlap": overlap, "rays": rays}, (overlaps, hits)


def print_table(title, times, tasks, warp):
    print(f"\n== {title}")
    for name, seconds in times.items():
        print(f"   {name:34s} {seconds * 1e3:9.2f} ms")
    if warp:
        print("   ratios vs Warp (> 1: numba_sim faster)   all threads   1 thread")
        for task in tasks:
            ours, single = times[f"numba_sim {task}"], times[f"numba_sim {task} (1 thread)"]
            theirs = times[f"warp {task}"]
            print(f"     {task:36s} {theirs / ours:6.2f}x   {theirs / single:8.2f}x")


def run(num_boxes, num_rays, repeat):
    lowers, uppers = random_boxes(num_boxes)
    starts, directions = random_rays(num_rays)
    print(f"{num_boxes:,} boxes, {num_rays:,} rays; numba threads: {numba.get_num_threads()}")
    for constructor in CONSTRUCTORS:
        runners, (overlaps, hits), trees = numba_sim_runners(lowers, uppers, starts, directions,
                                                             constructor)
        timed = {}
        for task, fn in runners.items():
            timed[f"numba_sim {task}"] = fn
            timed[f"numba_sim {task} (1 thread)"] = one_thread(fn)
        warp = warp_runners(lowers, uppers, starts, directions, constructor)
        if warp is not None:
            for task, fn in warp[0].items():
                timed[f"warp {task}"] = fn
        times = interleaved_medians(timed, repeat)
        if warp is not None:
            assert np.array_equal(warp[1][0].numpy(), overlaps), "overlap counts differ"
            assert np.array_equal(warp[1][1].numpy(), hits), "ray hit counts differ"
        stats = trees["bvh"].stats()
        print_table(f"{constructor}: depth {stats.depth}, SAH cost {stats.sah_cost:.1f}; "
                    f"{overlaps.mean():.2f} overlaps per box, {hits.mean():.2f} boxes per ray",
                    times, runners, warp is not None)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boxes", type=int, default=200_000)
    parser.add_argument("--rays", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    run(args.boxes, args.rays, args.repeat)


if __name__ == "__main__":
    main()
