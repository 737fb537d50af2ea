"""numba_sim's BVH queries yield exactly Warp's items (warp-lang's CPU Bvh).

Skipped when warp-lang is not installed (it is the benchmark's baseline, not a
dependency). Per query, the number of items and the sum of their squared
indices must equal Warp's, for AABB and ray queries over random, clustered
and degenerate boxes, whichever constructor either side uses.
"""

import numpy as np
import pytest

from numba_sim.spatial import Bvh

from test_bvh import clustered_boxes, collect, random_boxes, random_rays

wp = pytest.importorskip("warp")


@pytest.fixture(scope="module")
def warp_items():
    """``(lowers, uppers, a, b, ray, constructor) -> (counts, sums of squares)`` by Warp."""
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def items(bvh: wp.uint64, a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3),
              ray: int, counts: wp.array(dtype=int), sums: wp.array(dtype=wp.int64)):
        i = wp.tid()
        query = wp.bvh_query_aabb(bvh, a[i], b[i])
        if ray:  # Warp's kind-erased query then dispatches at run time
            query = wp.bvh_query_ray(bvh, a[i], b[i])
        count = int(0)
        total = wp.int64(0)
        j = int(0)
        while wp.bvh_query_next(query, j):
            count += 1
            total += wp.int64(j) * wp.int64(j)
        counts[i] = count
        sums[i] = total

    def run(lowers, uppers, a, b, ray, constructor):
        def array(values):
            return wp.array(values, dtype=wp.vec3, device="cpu")

        bvh = wp.Bvh(array(lowers), array(uppers), constructor=constructor)
        counts = wp.zeros(len(a), dtype=int, device="cpu")
        sums = wp.zeros(len(a), dtype=wp.int64, device="cpu")
        wp.launch(items, dim=len(a), device="cpu",
                  inputs=[bvh.id, array(a), array(b), int(ray), counts, sums])
        return counts.numpy(), sums.numpy()

    return run


def inputs(kind):
    if kind == "random":
        return random_boxes(3000, seed=20)
    if kind == "clustered":
        return clustered_boxes(seed=21)
    lowers = np.tile(np.array([[0.5, 0.5, 0.5]], np.float32), (300, 1))  # identical points
    return lowers, lowers.copy()


@pytest.mark.parametrize("kind", ["random", "clustered", "identical"])
@pytest.mark.parametrize("ours, theirs", [("sah", "sah"), ("lbvh", "median"), ("median", "sah")])
def test_items_equal_warps(warp_items, kind, ours, theirs):
    lowers, uppers = inputs(kind)
    scale = float(uppers.max() - lowers.min()) or 1.0
    q_lo, q_hi = random_boxes(300, seed=22, size=0.05)
    starts, directions = random_rays(300, seed=23)
    offset = lowers.min(axis=0)
    queries = [
        (np.concatenate([lowers[:300], q_lo * scale + offset]),
         np.concatenate([uppers[:300], q_hi * scale + offset]), False),
        ((starts * scale + offset).astype(np.float32), directions, True),
    ]
    bvh = Bvh(lowers, uppers, constructor=ours)
    for a, b, ray in queries:
        a, b = a.astype(np.float32), b.astype(np.float32)
        found = collect(bvh, a, b, ray=ray)
        counts, sums = warp_items(lowers, uppers, a, b, ray, theirs)
        assert [len(f) for f in found] == counts.tolist()
        assert [sum(j * j for j in f) for f in found] == sums.tolist()
