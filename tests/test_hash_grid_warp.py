"""numba_sim's hash grid returns exactly Warp's candidates (warp-lang's CPU HashGrid).

Skipped when warp-lang is not installed (it is the benchmark's baseline, not a
dependency). Per query, the number of candidates and the sum of their squared
indices must equal Warp's, for clouds with wrap-around, negative, huge, NaN
and infinite coordinates, query radii other than the cell width and grids
smaller than the query.
"""

import numpy as np
import pytest

from numba_sim.spatial import HashGrid

from test_hash_grid import collect

wp = pytest.importorskip("warp")


@pytest.fixture(scope="module")
def warp_candidates():
    """``(points, dims, width, queries, radius) -> (counts, sums of squares)`` by Warp."""
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def candidates(grid: wp.uint64, queries: wp.array(dtype=wp.vec3), radius: float,
                   counts: wp.array(dtype=int), sums: wp.array(dtype=wp.int64)):
        i = wp.tid()
        count = int(0)
        total = wp.int64(0)
        for j in wp.hash_grid_query(grid, queries[i], radius):
            count += 1
            total += wp.int64(j) * wp.int64(j)
        counts[i] = count
        sums[i] = total

    def run(points, dims, width, queries, radius):
        grid = wp.HashGrid(*dims, device="cpu")
        grid.build(wp.array(points, dtype=wp.vec3, device="cpu"), width)
        counts = wp.zeros(len(queries), dtype=int, device="cpu")
        sums = wp.zeros(len(queries), dtype=wp.int64, device="cpu")
        wp.launch(candidates, dim=len(queries), device="cpu",
                  inputs=[grid.id, wp.array(queries, dtype=wp.vec3, device="cpu"), radius,
                          counts, sums])
        return counts.numpy(), sums.numpy()

    return run


def awkward_cloud():
    rng = np.random.default_rng(0)
    points = rng.uniform(-5.0, 5.0, size=(3000, 3)).astype(np.float32)
    points[::37, 0] = np.nan
    points[1::37] = np.inf
    points[2::37, 1] = -1e30
    points[3::37, 2] = 3e9
    queries = np.concatenate([points[:300], rng.uniform(-6.0, 6.0, size=(100, 3)),
                              [[0.0, 0.0, 0.0]]]).astype(np.float32)
    return points, queries


@pytest.mark.parametrize("dims, width, radius", [
    ((4, 4, 4), 0.1, 0.1),
    ((5, 3, 2), 0.3, 0.7),
    ((16, 16, 16), 0.05, 0.2),
    ((1, 1, 1), 1.0, 0.5),
    ((7, 9, 11), 0.2, 5.0),
])
def test_candidates_equal_warps(warp_candidates, dims, width, radius):
    points, queries = awkward_cloud()
    grid = HashGrid(*dims)
    grid.build(points, width)
    ours = collect(grid, queries, radius)
    counts, sums = warp_candidates(points, dims, width, queries, radius)
    assert [len(c) for c in ours] == counts.tolist()
    assert [int((c.astype(np.int64) ** 2).sum()) for c in ours] == sums.tolist()
