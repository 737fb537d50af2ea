"""Grouped hash grids (Warp's ``build(points, radius, groups=...)``) against brute force.

A query given a group returns the points of that group in every touched cell (a superset
of the group's neighbours, filtered by distance by the caller); without a group, or on an
ungrouped grid, every point. Results are compared with a brute-force count.
"""

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.spatial import HashGrid, hash_grid_query

INT32_MIN, INT32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max


@sim.kernel
def count_same_group(grid: sim.uint64, points: sim.array(dtype=sim.vec3),
                     groups: sim.array(dtype=sim.int32), radius: float,
                     counts: sim.array(dtype=sim.int32), foreign: sim.array(dtype=sim.int32)):
    i = sim.tid()
    p = points[i]
    count = int(0)
    wrong = int(0)
    for j in sim.hash_grid_query(grid, p, radius, groups[i]):
        if groups[j] != groups[i]:
            wrong += 1
        if sim.length(p - points[j]) <= radius:
            count += 1
    counts[i] = count
    foreign[i] = wrong


@sim.kernel
def count_all(grid: sim.HashGrid, points: sim.array(dtype=sim.vec3), radius: float,
              counts: sim.array(dtype=sim.int32)):
    i = sim.tid()
    p = points[i]
    count = int(0)
    for j in sim.hash_grid_query(grid, p, radius):
        if sim.length(p - points[j]) <= radius:
            count += 1
    counts[i] = count


def brute_force(points, groups, radius):
    p = points.astype(np.float64)
    near = np.linalg.norm(p[:, None] - p[None], axis=-1) <= radius
    same = near if groups is None else near & (groups[:, None] == groups[None])
    return same.sum(axis=1)


def sample(n, seed, group_values):
    rng = np.random.default_rng(seed)
    points = (rng.random((n, 3)) * 6.0 - 1.0).astype(np.float32)
    groups = rng.choice(np.asarray(group_values, dtype=np.int32), size=n).astype(np.int32)
    return points, groups


def run_grouped(grid, points, groups, radius):
    n = len(points)
    counts, foreign = np.zeros(n, np.int32), np.zeros(n, np.int32)
    sim.launch(count_same_group, n, [grid.id, points, groups, radius, counts, foreign])
    return counts, foreign


@pytest.mark.parametrize("dims", [(8, 8, 8), (3, 5, 7), (1, 1, 1)])
@pytest.mark.parametrize("group_values", [[0, 1, 2], [INT32_MIN, -1, 0, 7, INT32_MAX]])
def test_grouped_counts_equal_brute_force(dims, group_values):
    points, groups = sample(1500, 3, group_values)
    radius = 0.6
    grid = HashGrid(*dims)
    grid.build(points, radius, groups=groups)
    counts, foreign = run_grouped(grid, points, groups, radius)
    np.testing.assert_array_equal(counts, brute_force(points, groups, radius))
    np.testing.assert_array_equal(foreign, 0)  # no candidate of another group
    # without a group, the grouped grid returns every point
    all_counts = np.zeros(len(points), np.int32)
    sim.launch(count_all, len(points), [grid, points, radius, all_counts])
    np.testing.assert_array_equal(all_counts, brute_force(points, None, radius))


def test_group_query_on_an_ungrouped_grid_returns_every_group():
    points, groups = sample(500, 4, [0, 1])
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.5)
    counts, _ = run_grouped(grid, points, groups, 0.5)
    np.testing.assert_array_equal(counts, brute_force(points, None, 0.5))


def test_a_later_ungrouped_build_drops_the_groups():
    points, groups = sample(400, 5, [0, 1, 2])
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.5, groups=groups)
    grid.build(points, 0.5)
    counts, _ = run_grouped(grid, points, groups, 0.5)
    np.testing.assert_array_equal(counts, brute_force(points, None, 0.5))


def test_rebuild_after_groups_change_in_place():
    points, groups = sample(400, 6, [0, 1])
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.5, groups=groups)
    groups[:] = np.where(groups == 0, 5, -5)
    grid.build(points, 0.5, groups=groups)
    counts, foreign = run_grouped(grid, points, groups, 0.5)
    np.testing.assert_array_equal(counts, brute_force(points, groups, 0.5))
    np.testing.assert_array_equal(foreign, 0)


def test_many_groups_in_one_cell():
    n = 2000
    points = np.zeros((n, 3), np.float32)
    groups = np.arange(n, dtype=np.int32)[::-1].copy()
    grid = HashGrid(4, 4, 4)
    grid.build(points, 1.0, groups=groups)
    counts, foreign = run_grouped(grid, points, groups, 1.0)
    np.testing.assert_array_equal(counts, 1)
    np.testing.assert_array_equal(foreign, 0)


def test_growing_capacity_keeps_the_groups_queryable():
    points, groups = sample(300, 7, [1, 2, 3])
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.5, groups=groups)
    grid.reserve(5000)  # new buffers: the descriptor must follow
    counts, foreign = run_grouped(grid, points, groups, 0.5)
    np.testing.assert_array_equal(counts, brute_force(points, groups, 0.5))
    np.testing.assert_array_equal(foreign, 0)


def test_reserve_with_groups_then_grouped_build():
    points, groups = sample(300, 8, [1, 2])
    grid = HashGrid(8, 8, 8)
    grid.reserve(len(points), with_groups=True)
    capacity = grid.capacity
    grid.build(points, 0.5, groups=groups)
    assert grid.capacity == capacity
    counts, _ = run_grouped(grid, points, groups, 0.5)
    np.testing.assert_array_equal(counts, brute_force(points, groups, 0.5))


def test_multidimensional_points_and_groups_are_flattened():
    points, groups = sample(400, 9, [0, 1])
    grid = HashGrid(8, 8, 8)
    grid.build(points.reshape(20, 20, 3), 0.5, groups=groups.reshape(20, 20))
    counts, _ = run_grouped(grid, points, groups, 0.5)
    np.testing.assert_array_equal(counts, brute_force(points, groups, 0.5))


def test_strided_groups_are_read_in_place():
    points, groups = sample(300, 10, [0, 1, 2])
    wide = np.zeros((len(groups), 2), np.int32)
    wide[:, 0] = groups
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.5, groups=wide[:, 0])
    counts, _ = run_grouped(grid, points, groups, 0.5)
    np.testing.assert_array_equal(counts, brute_force(points, groups, 0.5))


def test_python_mode_grouped_query():
    points, groups = sample(300, 11, [INT32_MIN, 3, INT32_MAX])
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.5, groups=groups)
    for i in range(0, 300, 17):
        found = list(hash_grid_query(grid, points[i], 0.5, int(groups[i])))
        assert set(groups[found].tolist()) <= {int(groups[i])}
        near = [j for j in found if np.linalg.norm(points[j] - points[i]) <= 0.5]
        assert len(near) == brute_force(points, groups, 0.5)[i]


@pytest.mark.parametrize("groups, error, message", [
    (np.zeros(10, np.int64), TypeError, r"groups must be an int32 array"),
    (np.zeros(9, np.int32), ValueError, r"groups has 9 entries \(shape \(9,\)\) for 10 points"),
    ([0] * 10, TypeError, r"so groups must be a NumPy array, not list"),
])
def test_bad_groups_name_the_argument(groups, error, message):
    with pytest.raises(error, match=r"HashGrid.build\(groups=\.\.\.\): .*" + message):
        HashGrid(2, 2, 2).build(np.zeros((10, 3), np.float32), 0.5, groups=groups)


def test_groups_on_another_device_are_a_runtime_error_as_in_warp():
    class FakeCudaArray:
        __cuda_array_interface__ = {"shape": (1,), "typestr": "<i4", "data": (0, False),
                                    "version": 3}

    with pytest.raises(RuntimeError, match=r"groups must live on the same device"):
        HashGrid(2, 2, 2).build(np.zeros((1, 3), np.float32), 0.5, groups=FakeCudaArray())
