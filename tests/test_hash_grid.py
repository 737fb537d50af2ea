"""sim.HashGrid on the CPU: builds, queries in compiled code and in Python, errors.

Candidates are checked two ways: after distance filtering they must equal the
brute-force neighbour sets, and before it they must be exactly the points of
the cells a query touches, per an independent NumPy model of Warp's cell rules
(floor(p / cell_width) per axis in float32, saturating, NaN -> 0, wrapped
modulo the dims, at most dim cells per axis). So a grid that returns every
point, or a point twice, fails.

The compiled functions are module-level and always called with the same
argument types, so each compiles once per session.
"""

import threading

import numba
import numpy as np
import pytest
from numba.core import types
from numba.core.errors import TypingError

import numba_sim as sim
from numba_sim import spatial
from numba_sim.spatial import HashGrid, hash_grid_point_id, hash_grid_query

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


# --------------------------------------------------------------------------
# Compiled helpers (shared by all tests)


@numba.njit
def candidate_lists(grid, queries, radius):
    """Candidates of every query as CSR ``(offsets, indices)``; each stored query runs twice."""
    n = queries.shape[0]
    offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        query = spatial.hash_grid_query(grid, sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2]),
                                        radius)
        count = 0
        for _ in query:
            count += 1
        offsets[i + 1] = offsets[i] + count
    indices = np.empty(offsets[n], dtype=np.int32)
    for i in range(n):
        query = spatial.hash_grid_query(grid, sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2]),
                                        radius)
        k = offsets[i]
        for j in query:
            indices[k] = j
            k += 1
    return offsets, indices


@numba.njit
def candidate_lists_by_id(grid_id, queries, radius):
    """Same as candidate_lists, with Warp's uint64 id instead of the grid object."""
    out = []
    for i in range(queries.shape[0]):
        p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        for j in spatial.hash_grid_query(grid_id, p, radius):
            out.append((i, j))
    return out


@numba.njit
def nested_pair_count(grid_a, grid_b, points_a, radius):
    """Counts of (i, j, k): j a candidate of point i, k one of point j in grid_a / grid_b."""
    same = 0
    other = 0
    for i in range(points_a.shape[0]):
        p = sim.vec3(points_a[i, 0], points_a[i, 1], points_a[i, 2])
        for j in spatial.hash_grid_query(grid_a, p, radius):
            q = sim.vec3(points_a[j, 0], points_a[j, 1], points_a[j, 2])
            for _ in spatial.hash_grid_query(grid_a, q, radius):
                same += 1
            for _ in spatial.hash_grid_query(grid_b, q, radius):
                other += 1
    return same, other


@numba.njit
def sorted_order(grid, n):
    out = np.empty(n, dtype=np.int32)
    for i in range(n):
        out[i] = spatial.hash_grid_point_id(grid, i)
    return out


@numba.njit
def grid_id_in_compiled_code(grid):
    return grid.id


def collect(grid, queries, radius):
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    offsets, indices = candidate_lists(grid, queries, np.float32(radius))
    return [indices[offsets[i]:offsets[i + 1]] for i in range(len(queries))]


# --------------------------------------------------------------------------
# Independent model of the cells


def cell_coords(values, width):
    """Warp's virtual cell coordinates of float32 ``values`` (float32 arithmetic)."""
    with np.errstate(invalid="ignore", over="ignore"):
        inverse = np.float32(1) / np.float32(width)
        scaled = np.floor(np.asarray(values, dtype=np.float32) * inverse)
    scaled = scaled.astype(np.float64)
    coords = np.where(np.isnan(scaled), 0.0, np.clip(scaled, INT32_MIN, INT32_MAX - 1))
    return coords.astype(np.int64)


def touched_cells(point, radius, width, dims):
    """Per axis, the physical cells a query touches."""
    point = np.asarray(point, dtype=np.float32)
    radius = np.float32(radius)
    with np.errstate(invalid="ignore", over="ignore"):
        first = cell_coords(point - radius, width)
        last = cell_coords(point + radius, width)
    axes = []
    for a in range(3):
        count = int(min(max(last[a] - first[a] + 1, 0), dims[a]))
        axes.append({(int(first[a]) + k) % dims[a] for k in range(count)})
    return axes


def expected_candidates(points, point, radius, width, dims):
    cells = cell_coords(points, width) % np.asarray(dims) if len(points) else np.zeros((0, 3), int)
    axes = touched_cells(point, radius, width, dims)
    mask = np.ones(len(points), dtype=bool)
    for a in range(3):
        mask &= np.isin(cells[:, a], sorted(axes[a]))
    return set(np.nonzero(mask)[0].tolist())


def brute_force(points, point, radius):
    if not radius >= 0:
        return set()
    with np.errstate(invalid="ignore", over="ignore"):
        d2 = ((points.astype(np.float64) - np.asarray(point, dtype=np.float64)) ** 2).sum(axis=1)
        return set(np.nonzero(d2 <= np.float64(np.float32(radius)) ** 2)[0].tolist())


def check_grid(points, dims, width, queries, radius):
    """Build, query and compare with both references; returns the candidate lists."""
    points = np.ascontiguousarray(points, dtype=np.float32)
    grid = HashGrid(*dims)
    grid.build(points, width)
    assert grid.num_points == len(points)
    found = collect(grid, queries, radius)
    for q, candidates in zip(np.asarray(queries, dtype=np.float32), found):
        assert len(set(candidates.tolist())) == len(candidates), "a point came out twice"
        assert set(candidates.tolist()) == expected_candidates(points, q, radius, width, dims)
        assert brute_force(points, q, radius) <= set(candidates.tolist())
    return found


def uniform(n, low, high, seed=0):
    return np.random.default_rng(seed).uniform(low, high, size=(n, 3)).astype(np.float32)


# --------------------------------------------------------------------------
# Neighbour sets


def test_uniform_cloud():
    points = uniform(3000, 0.0, 1.0)
    queries = np.concatenate([points[:300], uniform(100, -0.1, 1.1, seed=1)])
    found = check_grid(points, (16, 16, 16), 0.07, queries, 0.07)
    assert all(i in c for i, c in enumerate(found[:300]))  # each point finds itself


def test_clustered_cloud():
    rng = np.random.default_rng(2)
    centres = rng.uniform(0, 1, size=(5, 3))
    points = (centres[rng.integers(0, 5, 2000)] + rng.normal(0, 0.01, (2000, 3))).astype(np.float32)
    check_grid(points, (8, 8, 8), 0.05, points[::7], 0.05)


def test_negative_coordinates():
    points = uniform(2000, -1.0, 1.0, seed=3)
    points[:500] -= 3.0  # some far in the negative octant
    check_grid(points, (12, 10, 9), 0.1, np.concatenate([points[::10], -points[:50]]), 0.1)


def test_points_outside_the_span_wrap_around():
    # span is 4 * 0.1 = 0.4 per axis; points spread over 10 units share cells
    points = uniform(2000, -5.0, 5.0, seed=4)
    found = check_grid(points, (4, 4, 4), 0.1, points[::10], 0.1)
    assert max(len(c) for c in found) > 20  # far points do share cells


def test_queries_wrapping_the_grid_end_in_every_axis():
    points = uniform(1500, 0.0, 1.0, seed=5)
    corners = np.array([[0.01, 0.01, 0.01], [0.99, 0.99, 0.99], [0.01, 0.99, 0.5],
                        [0.5, 0.01, 0.99]], dtype=np.float32)
    check_grid(points, (5, 3, 4), 0.2, corners, 0.3)


def test_query_radius_other_than_the_cell_width():
    points = uniform(1000, 0.0, 1.0, seed=6)
    for radius in (0.01, 0.05, 0.23):
        check_grid(points, (10, 10, 10), 0.1, points[::25], radius)


def test_radius_covering_the_whole_grid_yields_every_point_once():
    points = uniform(500, -2.0, 2.0, seed=7)
    (candidates,) = check_grid(points, (3, 4, 5), 0.1, points[:1], 50.0)
    assert sorted(candidates.tolist()) == list(range(500))


def test_one_point_finds_itself():
    point = np.array([[0.3, -0.2, 7.5]], dtype=np.float32)
    (candidates,) = check_grid(point, (8, 8, 8), 0.5, point, 0.5)
    assert candidates.tolist() == [0]


def test_empty_point_set():
    grid = HashGrid(8, 8, 8)
    grid.build(np.zeros((0, 3), dtype=np.float32), 0.1)
    assert grid.num_points == 0
    assert [c.tolist() for c in collect(grid, uniform(10, 0, 1), 0.5)] == [[]] * 10
    assert hash_grid_point_id(grid, 0) == -1


def test_unbuilt_grid_yields_nothing():
    grid = HashGrid(4, 4, 4)
    assert [c.tolist() for c in collect(grid, uniform(3, 0, 1), 0.5)] == [[]] * 3
    assert sorted_order(grid, 1).tolist() == [-1]


def test_coincident_points():
    points = np.concatenate([np.full((100, 3), 0.25, dtype=np.float32), uniform(100, 0, 1, seed=8)])
    found = check_grid(points, (8, 8, 8), 0.1, points[:3], 0.1)
    assert all(set(range(100)) <= set(c.tolist()) for c in found)


def test_negative_radius_query_yields_nothing():
    points = uniform(100, 0, 1, seed=9)
    (candidates,) = check_grid(points, (4, 4, 4), 0.25, points[:1], -0.1)
    assert candidates.tolist() == []


def test_candidates_do_not_exceed_the_touched_cells():
    """Per query, no more candidates than points in the (at most 27) touched cells."""
    points = uniform(4000, 0.0, 1.0, seed=10)
    width = 0.05
    grid = HashGrid(20, 20, 20)
    grid.build(points, width)
    cells = cell_coords(points, width) % 20
    cell_sizes = {}
    for c in map(tuple, cells.tolist()):
        cell_sizes[c] = cell_sizes.get(c, 0) + 1
    for q, candidates in zip(points[:200], collect(grid, points[:200], width)):
        xs, ys, zs = touched_cells(q, width, width, (20, 20, 20))
        assert len(xs) * len(ys) * len(zs) <= 27
        bound = sum(cell_sizes.get((x, y, z), 0) for x in xs for y in ys for z in zs)
        assert len(candidates) <= bound < len(points) // 10


# --------------------------------------------------------------------------
# Non-finite input


def test_nan_and_inf_points_neither_crash_nor_hang():
    points = uniform(600, -1.0, 1.0, seed=11)
    points[::50, 0] = np.nan
    points[1::50, 1] = np.inf
    points[2::50, 2] = -np.inf
    points[3::50] = 1e30
    points[4::50] = np.nan
    finite = np.isfinite(points).all(axis=1)
    queries = np.concatenate([points[finite][:60], [[0.0, 0.0, 0.0], [0.01, 0.02, 0.03]],
                              points[~finite][:8]]).astype(np.float32)
    found = check_grid(points, (8, 8, 8), 0.1, queries, 0.1)
    # A NaN coordinate counts as cell 0: queries at the origin see the all-NaN points
    origin = set(found[60].tolist())
    assert set(np.nonzero(np.isnan(points).all(axis=1))[0].tolist()) <= origin
    # ...and a distance test rejects them
    assert not brute_force(points, queries[60], 0.1) & set(np.nonzero(~finite)[0].tolist())


def test_nan_query_visits_cell_zero():
    points = uniform(300, 0.0, 0.4, seed=12)
    query = np.array([[np.nan, np.nan, np.nan]], dtype=np.float32)
    (candidates,) = check_grid(points, (4, 4, 4), 0.1, query, 0.1)
    in_cell_zero = (cell_coords(points, 0.1) % 4 == 0).all(axis=1)
    assert set(candidates.tolist()) == set(np.nonzero(in_cell_zero)[0].tolist()) != set()


def test_nan_radius_query_visits_one_cell_per_axis():
    points = uniform(300, 0.0, 0.4, seed=13)
    check_grid(points, (4, 4, 4), 0.1, points[:5], np.nan)


# --------------------------------------------------------------------------
# Sorted order, builds, reserve


def cell_linear_index(points, width, dims):
    cells = cell_coords(points, width) % np.asarray(dims)
    return (cells[:, 2] * dims[1] + cells[:, 1]) * dims[0] + cells[:, 0]


def stable_cell_order(points, width, dims):
    return np.argsort(cell_linear_index(points, width, dims), kind="stable")


@pytest.mark.parametrize("dims", [(8, 8, 8), (128, 128, 128), (256, 256, 128), (1, 1, 1)],
                         ids=["512-cells", "2M-cells", "8M-cells", "one-cell"])
@pytest.mark.parametrize("n", [5000, 150_000], ids=["one-thread", "threads"])
def test_point_ids_are_the_stable_cell_order(dims, n):
    points = uniform(n, -3.0, 3.0, seed=14)
    grid = HashGrid(*dims)
    grid.build(points, 0.05)
    expected = stable_cell_order(points, 0.05, dims)
    assert np.array_equal(sorted_order(grid, len(points)), expected)
    assert grid._storage.final_row == 0  # the row the bucket sort ends in
    offsets = grid._storage.cell_offsets
    cells = np.sort(cell_linear_index(points, 0.05, dims))
    assert np.array_equal(offsets, np.searchsorted(cells, np.arange(offsets.size)))


def test_build_is_deterministic_across_thread_counts():
    points = uniform(200_000, 0.0, 2.0, seed=15)
    threads = numba.get_num_threads()
    results = []
    for count in sorted({1, threads}):
        numba.set_num_threads(count)
        try:
            grid = HashGrid(32, 32, 32)
            grid.build(points, 0.05)
            results.append((grid._point_ids.copy(), grid._storage.cell_offsets.copy()))
        finally:
            numba.set_num_threads(threads)
    for ids, offsets in results[1:]:
        assert np.array_equal(ids, results[0][0]) and np.array_equal(offsets, results[0][1])


def test_build_with_more_threads_than_cores(monkeypatch):
    """Seven chunks (an odd count, more threads than this machine's cores)."""
    from numba_sim.spatial import hash_grid

    monkeypatch.setattr(hash_grid.numba, "get_num_threads", lambda: 7)
    points = uniform(7 * 32768 + 5, -1.0, 1.0, seed=24)
    grid = HashGrid(64, 64, 64)
    grid.build(points, 0.03)
    assert np.array_equal(grid._point_ids, stable_cell_order(points, 0.03, (64, 64, 64)))


def test_point_id_out_of_range_is_minus_one():
    grid = HashGrid(4, 4, 4)
    grid.build(uniform(10, 0, 1), 0.25)
    assert sorted(sorted_order(grid, 10).tolist()) == list(range(10))
    assert hash_grid_point_id(grid, 10) == -1
    assert hash_grid_point_id(grid, -1) == -1


def test_rebuild_with_fewer_points_forgets_the_old_ones():
    grid = HashGrid(8, 8, 8)
    grid.build(uniform(1000, 0, 1), 0.125)
    small = uniform(10, 0, 1, seed=1)
    grid.build(small, 0.125)
    everything = collect(grid, small[:1], 10.0)[0]
    assert sorted(everything.tolist()) == list(range(10))


def test_reserve_keeps_contents_and_builds_within_capacity_reuse_buffers():
    points = uniform(100, 0, 1, seed=16)
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.125)
    before = collect(grid, points[:20], 0.125)
    grid.reserve(5000)
    assert grid.capacity == 5000
    after = collect(grid, points[:20], 0.125)
    assert [a.tolist() for a in after] == [b.tolist() for b in before]
    buffers = (grid._storage.keys, grid._storage.values, grid._storage.cell_offsets)
    grid.build(uniform(4000, 0, 1, seed=17), 0.125)
    assert all(a is b for a, b in zip(buffers, (grid._storage.keys, grid._storage.values,
                                                grid._storage.cell_offsets)))
    grid.reserve(10)  # never shrinks
    assert grid.capacity == 5000


def test_uint64_id_and_grid_object_agree():
    points = uniform(500, 0, 1, seed=18)
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.125)
    by_object = collect(grid, points[:30], 0.125)
    by_id = candidate_lists_by_id(np.uint64(grid.id), points[:30], np.float32(0.125))
    assert [(i, j) for i, c in enumerate(by_object) for j in c.tolist()] == list(by_id)
    assert grid_id_in_compiled_code(grid) == grid.id


def test_nested_queries_on_the_same_and_another_grid():
    points_a = uniform(300, 0, 1, seed=19)
    points_b = uniform(400, 0, 1, seed=20)
    grid_a, grid_b = HashGrid(8, 8, 8), HashGrid(6, 7, 5)
    grid_a.build(points_a, 0.125)
    grid_b.build(points_b, 0.2)
    same, other = nested_pair_count(grid_a, grid_b, points_a, np.float32(0.125))
    first = collect(grid_a, points_a, 0.125)
    expected_same = sum(len(first_j) for c in first for first_j in
                        (collect(grid_a, points_a[c], 0.125)))
    expected_other = sum(len(x) for c in first for x in collect(grid_b, points_a[c], 0.125))
    assert (same, other) == (expected_same, expected_other)


# --------------------------------------------------------------------------
# Python mode


def test_python_mode_runs_the_same_traversal():
    points = uniform(800, 0, 1, seed=21)
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.125)
    compiled = collect(grid, points[:20], 0.125)
    for q, expected in zip(points[:20], compiled):
        got = list(hash_grid_query(grid, sim.vec3(*q.tolist()), 0.125))
        assert got == expected.tolist()
        assert all(type(j) is np.int32 for j in got)
        assert list(hash_grid_query(grid.id, q, 0.125)) == got  # by id, point as an array
    stored = hash_grid_query(grid, sim.vec3(*points[0].tolist()), 0.125)
    assert list(stored) == list(stored) == compiled[0].tolist()
    assert [hash_grid_point_id(grid, i) for i in range(800)] == sorted_order(grid, 800).tolist()


def test_python_mode_refuses_what_is_not_a_cpu_grid():
    with pytest.raises(ValueError, match="not the id of a live CPU HashGrid"):
        hash_grid_query(12345, sim.vec3(), 1.0)
    with pytest.raises(TypeError, match="must be a sim.HashGrid or its id"):
        hash_grid_point_id("grid", 0)
    fake_cuda_grid = object.__new__(HashGrid)
    fake_cuda_grid.device = "cuda:0"
    fake_cuda_grid._storage = None
    with pytest.raises(ValueError, match="is on cuda:0"):
        hash_grid_point_id(fake_cuda_grid, 0)


def test_warp_query_next_form_names_the_loop():
    with pytest.raises(TypeError, match=r"for index in sim.hash_grid_query"):
        spatial.hash_grid_query_next(None, 0)

    @numba.njit
    def warp_style(grid, p):
        q = spatial.hash_grid_query(grid, p, 1.0)
        index = 0
        while spatial.hash_grid_query_next(q, index):
            pass

    with pytest.raises(TypingError, match=r"for index in sim.hash_grid_query"):
        warp_style(HashGrid(2, 2, 2), sim.vec3())


# --------------------------------------------------------------------------
# Threads


def test_grids_built_from_four_threads_at_once_are_correct():
    collect(HashGrid(2, 2, 2), uniform(1, 0, 1), 0.1)  # compile before the threads start
    errors = []
    barrier = threading.Barrier(4)

    def worker(seed):
        try:
            grid = HashGrid(16, 16, 16)
            barrier.wait()
            for round_ in range(3):
                points = uniform(70_000 + 1000 * seed, -1.0, 1.0, seed=100 * seed + round_)
                grid.build(points, 0.08)
                order = stable_cell_order(points, 0.08, (16, 16, 16))
                assert np.array_equal(grid._point_ids, order)
                for q, c in zip(points[:20], collect(grid, points[:20], 0.08)):
                    assert set(c.tolist()) == expected_candidates(points, q, 0.08, 0.08,
                                                                  (16, 16, 16))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_one_grid_shared_by_threads_stays_consistent():
    grid = HashGrid(8, 8, 8)
    point_sets = [uniform(2000 + 100 * k, 0, 1, seed=200 + k) for k in range(4)]

    def worker(points):
        for _ in range(3):
            grid.build(points, 0.125)

    threads = [threading.Thread(target=worker, args=(p,)) for p in point_sets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # whichever build came last, the grid is exactly that build's
    winner = next(p for p in point_sets if len(p) == grid.num_points)
    assert np.array_equal(grid._point_ids, stable_cell_order(winner, 0.125, (8, 8, 8)))


# --------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("radius", [0.0, -1.0, np.nan, np.inf, -np.inf, 1e-50, 1e39])
def test_bad_radius_is_a_value_error(radius):
    with pytest.raises(ValueError, match=r"HashGrid.build\(radius="):
        HashGrid(2, 2, 2).build(uniform(3, 0, 1), radius)


def test_non_number_radius_is_a_type_error():
    for radius in ("0.1", None, True):
        with pytest.raises(TypeError, match=r"HashGrid.build\(radius=\.\.\.\) must be a number"):
            HashGrid(2, 2, 2).build(uniform(3, 0, 1), radius)


@pytest.mark.parametrize("dims, name", [((0, 1, 1), "dim_x"), ((1, -2, 1), "dim_y"),
                                        ((1, 1, 0), "dim_z")])
def test_non_positive_dims_name_the_argument(dims, name):
    message = rf"HashGrid\({name}=-?\d+\): grid dimensions must be positive"
    with pytest.raises(ValueError, match=message):
        HashGrid(*dims)


def test_non_integer_dims_are_type_errors():
    with pytest.raises(TypeError, match=r"HashGrid\(dim_y=\.\.\.\) must be an int, not float"):
        HashGrid(2, 2.0, 2)


def test_too_many_cells():
    with pytest.raises(ValueError, match=r"2147483648 cells exceed the limit of 2147483647"):
        HashGrid(2**11, 2**10, 2**10)
    HashGrid(2**31 - 1, 1, 1)  # the limit itself is fine (nothing is allocated before a build)


@pytest.mark.parametrize("points, error, message", [
    (np.zeros((4, 3), dtype=np.float64), TypeError, r"points must be float32.*not float64"),
    (np.zeros((4, 3), dtype=np.int32), TypeError, r"points must be float32"),
    (np.zeros((4, 2), dtype=np.float32), ValueError, r"shape \(n, 3\), not \(4, 2\)"),
    (np.zeros(12, dtype=np.float32), ValueError, r"shape \(n, 3\), not \(12,\)"),
    ([[0.0, 0.0, 0.0]], TypeError, r"must be a NumPy array, not list"),
])
def test_bad_points_name_the_argument(points, error, message):
    with pytest.raises(error, match=r"HashGrid.build\(points=\.\.\.\): .*" + message):
        HashGrid(2, 2, 2).build(points, 0.1)


def test_points_on_another_device_are_refused():
    class FakeCudaArray:
        __cuda_array_interface__ = {"shape": (4, 3), "typestr": "<f4", "data": (0, False),
                                    "version": 3}

    with pytest.raises(TypeError, match=r"grid is on cpu, so points must be a NumPy array, "
                                        r"not a CUDA array"):
        HashGrid(2, 2, 2).build(FakeCudaArray(), 0.1)


def test_non_contiguous_points_are_accepted():
    points = uniform(200, 0, 1, seed=22)
    strided = np.asfortranarray(points)
    grid = HashGrid(4, 4, 4)
    grid.build(strided, 0.25)
    assert np.array_equal(grid._point_ids, stable_cell_order(points, 0.25, (4, 4, 4)))


def test_bad_device_and_reserve_arguments():
    with pytest.raises(ValueError, match=r"HashGrid\(device='gpu'\): expected 'cpu', 'cuda'"):
        HashGrid(2, 2, 2, device="gpu")
    with pytest.raises(ValueError, match=r"HashGrid.reserve\(num_points=-1\)"):
        HashGrid(2, 2, 2).reserve(-1)
    with pytest.raises(TypeError, match=r"HashGrid.reserve\(num_points=\.\.\.\) must be an int"):
        HashGrid(2, 2, 2).reserve(1.5)


def test_cuda_device_without_a_gpu_is_a_clear_error():
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match=r"HashGrid\(device='cuda'\): no CUDA GPU"):
        HashGrid(2, 2, 2, device="cuda")


def test_cuda_grid_passed_to_cpu_code_is_refused():
    fake_cuda_grid = object.__new__(HashGrid)
    fake_cuda_grid.device = "cuda:0"
    with pytest.raises(ValueError, match=r"HashGrid on cuda:0 was passed to CPU code"):
        grid_id_in_compiled_code(fake_cuda_grid)


def test_query_typing_errors_name_the_builtin():
    @numba.njit
    def bad_point(grid):
        for j in spatial.hash_grid_query(grid, sim.vec3d(), 1.0):
            pass

    @numba.njit
    def bad_grid(grid):
        for j in spatial.hash_grid_query(grid, sim.vec3(), 1.0):
            pass

    with pytest.raises(TypingError, match=r"hash_grid_query\(.*point must be a vec3, not vec3d"):
        bad_point(HashGrid(2, 2, 2))
    for not_a_grid in (1.5, np.int32(7)):
        with pytest.raises(TypingError, match=r"grid must be a sim.HashGrid or its id \(a 64-bit"):
            bad_grid(not_a_grid)


def test_native_layouts_match_the_numba_models():
    from numba.core.registry import cpu_target

    from numba_sim.spatial.common import HASH_GRID_QUERY_BYTES, HASH_GRID_WORDS, host_functions
    from numba_sim.typing.hash_grid import hash_grid_query_state_type

    sizes = np.zeros(2, np.int32)
    host_functions["sim_hash_grid_layout"](sizes.ctypes.data)
    context = cpu_target.target_context
    state_bytes = context.get_abi_sizeof(context.get_data_type(hash_grid_query_state_type))
    assert sizes.tolist() == [8 * HASH_GRID_WORDS, HASH_GRID_QUERY_BYTES] == [48, state_bytes]


def test_public_names():
    assert spatial.__all__[:4] == ["HashGrid", "hash_grid_query", "hash_grid_point_id",
                                   "hash_grid_query_next"]
    assert isinstance(HashGrid(2, 2, 2)._numba_type_, types.Type)


# --------------------------------------------------------------------------
# In the kernel language


@sim.kernel
def count_neighbours_kernel(grid, points: sim.array(dtype=sim.vec3), radius: float,
                            counts: sim.array(dtype=int)):
    tid = sim.tid()
    i = spatial.hash_grid_point_id(grid, tid)
    p = points[i]
    count = int(0)
    for j in spatial.hash_grid_query(grid, p, radius):
        if sim.length(points[j] - p) <= radius:
            count += 1
    counts[i] = count


def test_sim_kernel_takes_the_grid_or_its_id():
    points = uniform(1500, 0, 1, seed=23)
    grid = HashGrid(8, 8, 8)
    grid.build(points, 0.125)
    expected = [len(brute_force(points, p, 0.125)) for p in points]
    for grid_argument in (grid, grid.id):
        counts = np.zeros(len(points), dtype=np.int32)
        sim.launch(count_neighbours_kernel, dim=len(points),
                   inputs=[grid_argument, points, 0.125, counts])
        assert counts.tolist() == expected
