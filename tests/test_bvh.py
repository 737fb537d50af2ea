"""sim.Bvh on the CPU: builds, queries in compiled code and in Python, refit, errors.

Every query is checked against brute force over all boxes: an AABB query
must yield exactly the boxes that overlap the query box (closed boxes, float32
comparisons: exact), a ray query exactly the boxes the ray meets (float64
slab test; rays within a relative 1e-5 of grazing a box are left out of the
comparison), and no box twice. The compiled helpers are module-level and
always called with the same argument types, so each compiles once.
"""

import concurrent.futures
import threading

import numba
import numpy as np
import pytest
from numba.core import types
from numba.core.errors import TypingError

import numba_sim as sim
from numba_sim import spatial
from numba_sim.spatial import Bvh, bvh_query_aabb, bvh_query_ray

CONSTRUCTORS = ["sah", "median", "lbvh"]


# --------------------------------------------------------------------------
# Compiled helpers (shared by all tests)


@numba.njit
def query_lists(bvh, a, b, ray):
    """Items of every query (box a[i]-b[i], or ray start a[i], dir b[i]) as CSR (offsets, items).

    Each query runs twice: once to count, once (stored in a variable first) to fill.
    """
    n = a.shape[0]
    offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        p = sim.vec3(a[i, 0], a[i, 1], a[i, 2])
        q = sim.vec3(b[i, 0], b[i, 1], b[i, 2])
        count = 0
        if ray:
            for _ in spatial.bvh_query_ray(bvh, p, q):
                count += 1
        else:
            for _ in spatial.bvh_query_aabb(bvh, p, q):
                count += 1
        offsets[i + 1] = offsets[i] + count
    items = np.empty(offsets[n], dtype=np.int32)
    for i in range(n):
        p = sim.vec3(a[i, 0], a[i, 1], a[i, 2])
        q = sim.vec3(b[i, 0], b[i, 1], b[i, 2])
        k = offsets[i]
        if ray:
            ray_query = spatial.bvh_query_ray(bvh, p, q)
            for j in ray_query:
                items[k] = j
                k += 1
        else:
            box_query = spatial.bvh_query_aabb(bvh, p, q)
            for j in box_query:
                items[k] = j
                k += 1
    return offsets, items


@numba.njit
def nested_counts(bvh_a, bvh_b, lowers, uppers):
    """For each box i of A: sum over its A-overlaps j of the A- and B-overlaps of box j."""
    same = 0
    other = 0
    for i in range(lowers.shape[0]):
        lo = sim.vec3(lowers[i, 0], lowers[i, 1], lowers[i, 2])
        hi = sim.vec3(uppers[i, 0], uppers[i, 1], uppers[i, 2])
        for j in spatial.bvh_query_aabb(bvh_a, lo, hi):
            lo_j = sim.vec3(lowers[j, 0], lowers[j, 1], lowers[j, 2])
            hi_j = sim.vec3(uppers[j, 0], uppers[j, 1], uppers[j, 2])
            for _ in spatial.bvh_query_aabb(bvh_a, lo_j, hi_j):
                same += 1
            for _ in spatial.bvh_query_ray(bvh_b, lo_j, hi_j - lo_j):
                other += 1
    return same, other


@numba.njit
def bvh_id_in_compiled_code(bvh):
    return bvh.id


def collect(bvh, a, b, ray=False):
    """Per query, the sorted list of items."""
    offsets, items = query_lists(bvh, np.ascontiguousarray(a, dtype=np.float32),
                                 np.ascontiguousarray(b, dtype=np.float32), ray)
    lists = [items[offsets[i]:offsets[i + 1]] for i in range(len(a))]
    for found in lists:
        assert len(set(found.tolist())) == len(found), "a box came out twice"
    return [sorted(found.tolist()) for found in lists]


# --------------------------------------------------------------------------
# Brute force


def overlapping(lowers, uppers, lo, hi):
    return np.nonzero(np.all(lowers <= hi, axis=1) & np.all(uppers >= lo, axis=1))[0].tolist()


def ray_hits(lowers, uppers, start, direction, tolerance=1e-5):
    """(boxes the ray meets, boxes too close to call) in float64."""
    lowers = lowers.astype(np.float64)
    uppers = uppers.astype(np.float64)
    start = np.asarray(start, dtype=np.float64)
    direction = np.asarray(direction, dtype=np.float64)
    t_min = np.zeros(len(lowers))
    t_max = np.full(len(lowers), np.inf)
    parallel_ok = np.ones(len(lowers), dtype=bool)
    scale = 1.0 + max(np.abs(start).max(), np.abs(lowers).max(initial=0),
                      np.abs(uppers).max(initial=0))
    for k in range(3):
        if direction[k] == 0.0:
            parallel_ok &= (lowers[:, k] <= start[k]) & (start[k] <= uppers[:, k])
            continue
        t0 = (lowers[:, k] - start[k]) / direction[k]
        t1 = (uppers[:, k] - start[k]) / direction[k]
        t_min = np.maximum(t_min, np.minimum(t0, t1))
        t_max = np.minimum(t_max, np.maximum(t0, t1))
    if not direction.any():  # a point: the boxes that contain it
        return set(np.nonzero(parallel_ok)[0].tolist()), set()
    margin = (t_max - t_min) * np.linalg.norm(direction) / scale
    hit = parallel_ok & (margin >= 0)
    close = parallel_ok & (np.abs(margin) < tolerance)
    return set(np.nonzero(hit)[0].tolist()), set(np.nonzero(close)[0].tolist())


def check_aabb(bvh, lowers, uppers, query_lo, query_hi):
    found = collect(bvh, query_lo, query_hi)
    for lo, hi, items in zip(query_lo, query_hi, found):
        assert items == overlapping(lowers, uppers, lo, hi)
    return found


def check_rays(bvh, lowers, uppers, starts, directions):
    found = collect(bvh, starts, directions, ray=True)
    for start, direction, items in zip(starts, directions, found):
        expected, close = ray_hits(lowers, uppers, start, direction)
        assert set(items) - close == expected - close
    return found


def random_boxes(n, seed=0, size=0.03, low=0.0, high=1.0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(low, high, (n, 3))
    half = rng.uniform(0.0, size, (n, 3))
    return (centres - half).astype(np.float32), (centres + half).astype(np.float32)


def random_rays(n, seed=1, low=0.0, high=1.0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(low, high, (n, 3)).astype(np.float32),
            rng.normal(size=(n, 3)).astype(np.float32))


def check_tree(bvh, lowers, uppers, num_queries=150, seed=2):
    """AABB queries (each box, and random boxes) and rays against brute force."""
    q_lo, q_hi = random_boxes(num_queries, seed=seed, size=0.1, low=-0.1, high=1.1)
    check_aabb(bvh, lowers, uppers, np.concatenate([lowers[:num_queries], q_lo]),
               np.concatenate([uppers[:num_queries], q_hi]))
    starts, directions = random_rays(num_queries, seed=seed + 1, low=-0.2, high=1.2)
    check_rays(bvh, lowers, uppers, starts, directions)


# --------------------------------------------------------------------------
# Queries against brute force


@pytest.mark.parametrize("leaf_size", [1, 4])
@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_queries_equal_brute_force(constructor, leaf_size):
    lowers, uppers = random_boxes(2000)
    bvh = Bvh(lowers, uppers, constructor=constructor, leaf_size=leaf_size)
    assert bvh.constructor == constructor and bvh.num_items == 2000
    check_tree(bvh, lowers, uppers)
    stats = bvh.stats()
    assert stats.leaves * leaf_size >= 2000 and stats.nodes == 2 * stats.leaves - 1


def test_default_constructor_is_sah_on_the_cpu():
    lowers, uppers = random_boxes(100)
    assert Bvh(lowers, uppers).constructor == "sah"


def clustered_boxes(seed=3):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 10, (12, 3))
    picks = rng.integers(0, 12, 4000)
    points = centres[picks] + rng.normal(0, 0.05, (4000, 3)) * rng.uniform(0.1, 3.0, (4000, 1))
    return (points - 0.01).astype(np.float32), (points + 0.01).astype(np.float32)


def test_sah_costs_less_than_median_on_clustered_input_and_trees_differ():
    lowers, uppers = clustered_boxes()
    trees = {c: Bvh(lowers, uppers, constructor=c) for c in CONSTRUCTORS}
    stats = {c: t.stats() for c, t in trees.items()}
    assert stats["sah"].sah_cost < stats["median"].sah_cost
    assert stats["sah"].sah_cost < stats["lbvh"].sah_cost
    nodes = {c: t._storage.nodes[:stats[c].nodes].tobytes() for c, t in trees.items()}
    assert len(set(nodes.values())) == 3, "the three constructors gave the same tree"
    assert len({s.depth for s in stats.values()}) > 1
    check_tree(trees["sah"], lowers, uppers, num_queries=60)


def deep_input(constructor):
    """Boxes whose SAH or LBVH tree would be far deeper than 32 without the depth limit.

    SAH: cubes [c, 1.5 c] for c = 2^k, k = -60..59, where splitting off the
    largest cube is always cheapest, so each level peels off one. LBVH: box
    centres with a single Morton bit each (plus 64 copies of the origin), a
    Karras chain of 30 levels with a balanced subtree of the copies under it.
    """
    if constructor == "sah":
        corners = 2.0 ** np.arange(-60, 60)[:, None] * np.ones(3)
        return corners.astype(np.float32), (corners * 1.5).astype(np.float32)
    bits = []
    for axis in range(3):
        for j in range(10):
            point = np.zeros(3)
            point[axis] = (2**j + 0.5) / 1024.0
            bits.append(point)
    centres = np.array(bits + [np.ones(3)] + [np.zeros(3)] * 64) * 1000.0 + 2000.0
    return (centres - 1e-3).astype(np.float32), (centres + 1e-3).astype(np.float32)


@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_degenerate_input_deeper_than_the_stack_still_answers(constructor):
    lowers, uppers = deep_input(constructor)
    bvh = Bvh(lowers, uppers, constructor=constructor)
    stats = bvh.stats()
    assert stats.depth <= 31
    if constructor != "median":
        assert stats.depth == 31  # the limit was reached: deeper nodes became leaves
    everything = np.array([[-np.inf] * 3], np.float32), np.array([[np.inf] * 3], np.float32)
    assert collect(bvh, *everything) == [list(range(len(lowers)))]
    check_aabb(bvh, lowers, uppers, lowers, uppers)
    starts = np.concatenate([lowers * 0.5, uppers * 2.0]).astype(np.float32)
    directions = np.concatenate([np.ones_like(lowers), -np.ones_like(lowers)]).astype(np.float32)
    check_rays(bvh, lowers, uppers, starts, directions)


# --------------------------------------------------------------------------
# Edge cases


@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_one_box(constructor):
    lowers = np.array([[0.0, 0.0, 0.0]], np.float32)
    uppers = np.array([[1.0, 2.0, 3.0]], np.float32)
    bvh = Bvh(lowers, uppers, constructor=constructor)
    assert bvh.stats() == (0, 1, 1, 1.0)
    assert collect(bvh, [[0.5, 0.5, 0.5], [1.0, 2.0, 3.0], [1.1, 0, 0]],
                   [[0.6, 0.6, 0.6], [4, 4, 4], [2, 1, 1]]) == [[0], [0], []]
    assert collect(bvh, [[-1, 1, 1], [-1, 1, 1]], [[1, 0, 0], [-1, 0, 0]], ray=True) == [[0], []]


@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_empty_tree_yields_nothing(constructor):
    empty = np.zeros((0, 3), np.float32)
    bvh = Bvh(empty, empty.copy(), constructor=constructor)
    assert bvh.num_items == 0 and bvh.stats() == (0, 0, 0, 0.0)
    assert collect(bvh, [[-1, -1, -1]], [[1, 1, 1]]) == [[]]
    assert collect(bvh, [[0, 0, 0]], [[1, 0, 0]], ray=True) == [[]]
    assert list(bvh_query_aabb(bvh, sim.vec3(-1.0), sim.vec3(1.0))) == []
    bvh.refit()
    bvh.rebuild("median")


@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_degenerate_boxes_points_and_flat_boxes(constructor):
    rng = np.random.default_rng(4)
    points = rng.uniform(0, 1, (500, 3)).astype(np.float32)
    flat = random_boxes(500, seed=5)
    flat[1][:, 2] = flat[0][:, 2]  # zero thickness in z
    lowers = np.concatenate([points, flat[0]])
    uppers = np.concatenate([points, flat[1]])
    bvh = Bvh(lowers, uppers, constructor=constructor)
    # a query box equal to a point finds it; a query of zero size inside a flat box too
    check_aabb(bvh, lowers, uppers, lowers, uppers)
    check_tree(bvh, lowers, uppers, num_queries=80)


@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_rays_parallel_to_faces_and_starting_inside(constructor):
    # a 4 x 4 x 4 lattice of unit boxes with gaps
    grid = np.stack(np.meshgrid(*[np.arange(4)] * 3, indexing="ij"), -1).reshape(-1, 3) * 2.0
    lowers = grid.astype(np.float32)
    uppers = (grid + 1.0).astype(np.float32)
    bvh = Bvh(lowers, uppers, constructor=constructor)
    starts, directions = [], []
    for axis in range(3):
        for offset in (0.0, 0.5, 1.0, 1.5):  # on a face plane, inside, on the far face, in a gap
            start = np.full(3, offset + 2.0)
            start[axis] = -3.0
            direction = np.zeros(3)
            direction[axis] = 1.0
            starts.append(start)
            directions.append(direction)
            starts.append(start + direction * 20.0)
            directions.append(-direction)
    starts.append([0.5, 0.5, 0.5])  # inside box 0, along the diagonal
    directions.append([1.0, 1.0, 1.0])
    starts.append([0.5, 0.5, 0.5])  # inside box 0, away from everything
    directions.append([-1.0, -0.5, -0.25])
    starts.append([2.5, 2.5, 2.5])  # inside, zero direction: boxes containing the start
    directions.append([0.0, 0.0, 0.0])
    starts, directions = np.array(starts, np.float32), np.array(directions, np.float32)
    found = check_rays(bvh, lowers, uppers, starts, directions)
    assert found[0] == found[1] and len(found[0]) == 4  # face plane: touching counts
    assert found[2] == found[0] and found[6] == []  # inside; the gap between boxes
    assert found[-3] == list(range(0, 64, 21)) and found[-2] == [0] and found[-1] == [21]


@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_identical_boxes_come_out_once_each(constructor):
    lowers = np.tile(np.array([[0.2, 0.3, 0.4]], np.float32), (500, 1))
    uppers = lowers + 0.1
    bvh = Bvh(lowers, uppers, constructor=constructor, leaf_size=3)
    assert bvh.stats().depth <= 31
    assert collect(bvh, [[0.25, 0.35, 0.45]], [[0.26, 0.36, 0.46]]) == [list(range(500))]
    assert collect(bvh, [[0, 0, 0]], [[0.25, 0.35, 0.45]], ray=True) == [list(range(500))]


def test_nan_queries_yield_nothing_and_infinite_boxes_everything():
    lowers, uppers = random_boxes(300, seed=6)
    bvh = Bvh(lowers, uppers)
    nan = np.float32(np.nan)
    assert collect(bvh, [[nan, 0, 0], [0, 0, 0]], [[1, 1, 1], [1, nan, 1]]) == [[], []]
    assert collect(bvh, [[nan, 0, 0], [0, 0, 0], [np.inf, 0, 0]],
                   [[1, 1, 1], [nan, 1, 1], [1, 0, 0]], ray=True) == [[], [], []]
    assert collect(bvh, [[-np.inf] * 3], [[np.inf] * 3]) == [list(range(300))]


# --------------------------------------------------------------------------
# Refit and rebuild


@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_refit_and_rebuild_after_the_boxes_move(constructor):
    lowers, uppers = random_boxes(1500, seed=7)
    bvh = Bvh(lowers, uppers, constructor=constructor, leaf_size=2)
    before = bvh.stats()
    rng = np.random.default_rng(8)
    shift = rng.normal(0, 0.2, (1500, 3)).astype(np.float32)
    lowers += shift  # in place: the tree reads the same arrays
    uppers += shift
    bvh.refit()
    assert (bvh.stats().nodes, bvh.stats().leaves) == (before.nodes, before.leaves)
    check_tree(bvh, lowers, uppers, num_queries=80)
    refit_cost = bvh.stats().sah_cost
    other = "median" if constructor != "median" else "sah"
    bvh.rebuild(other)
    assert bvh.constructor == other
    check_tree(bvh, lowers, uppers, num_queries=80)
    bvh.rebuild()
    assert bvh.constructor == "sah" and bvh.stats().sah_cost <= refit_cost


# --------------------------------------------------------------------------
# Ids, nesting, Python mode, kernels


def test_uint64_id_and_object_agree():
    lowers, uppers = random_boxes(400, seed=9)
    bvh = Bvh(lowers, uppers)
    by_object = collect(bvh, lowers[:50], uppers[:50])
    by_id = collect(np.uint64(bvh.id), lowers[:50], uppers[:50])
    assert by_object == by_id
    assert bvh_id_in_compiled_code(bvh) == bvh.id


def test_nested_queries_have_their_own_stacks():
    lowers, uppers = random_boxes(300, seed=10, size=0.08)
    other_lowers, other_uppers = random_boxes(400, seed=11)
    bvh_a = Bvh(lowers, uppers, constructor="median")
    bvh_b = Bvh(other_lowers, other_uppers, constructor="lbvh")
    same, other = nested_counts(bvh_a, bvh_b, lowers, uppers)
    first = collect(bvh_a, lowers, uppers)
    expected_same = sum(len(overlapping(lowers, uppers, lowers[j], uppers[j]))
                        for found in first for j in found)
    expected_other = sum(len(check_rays(bvh_b, other_lowers, other_uppers, lowers[found],
                                        uppers[found] - lowers[found])[k])
                         for found in first for k in range(len(found)))
    assert (same, other) == (expected_same, expected_other)


def test_python_mode_runs_the_same_traversal():
    lowers, uppers = random_boxes(600, seed=12)
    bvh = Bvh(lowers, uppers)
    compiled = collect(bvh, lowers[:20], uppers[:20])
    for lo, hi, expected in zip(lowers[:20], uppers[:20], compiled):
        got = list(bvh_query_aabb(bvh, sim.vec3(*lo.tolist()), sim.vec3(*hi.tolist())))
        assert sorted(got) == expected and all(type(j) is np.int32 for j in got)
        assert list(bvh_query_aabb(bvh.id, lo, hi)) == got  # by id, vectors as arrays
    starts, directions = random_rays(10, seed=13)
    rays = collect(bvh, starts, directions, ray=True)
    assert [sorted(bvh_query_ray(bvh, s, d)) for s, d in zip(starts, directions)] == rays
    stored = bvh_query_aabb(bvh, lowers[0], uppers[0])
    assert list(stored) == list(stored)


def test_python_mode_refuses_what_is_not_a_cpu_bvh():
    with pytest.raises(ValueError, match="not the id of a live CPU Bvh"):
        bvh_query_aabb(12345, sim.vec3(), sim.vec3())
    with pytest.raises(TypeError, match="bvh must be a sim.Bvh or its id"):
        bvh_query_ray("bvh", sim.vec3(), sim.vec3())
    with pytest.raises(TypeError, match=r"lower must be a vec3"):
        bvh_query_aabb(Bvh(*random_boxes(3)), "lower", sim.vec3())


def test_warp_query_next_form_names_the_loop():
    with pytest.raises(TypeError, match=r"for index in sim.bvh_query_aabb"):
        spatial.bvh_query_next(None, 0)

    @numba.njit
    def warp_style(bvh, p):
        q = spatial.bvh_query_aabb(bvh, p, p)
        index = 0
        while spatial.bvh_query_next(q, index):
            pass

    with pytest.raises(TypingError, match=r"for index in sim.bvh_query_aabb"):
        warp_style(Bvh(*random_boxes(3)), sim.vec3())


def test_query_typing_errors_name_the_builtin():
    @numba.njit
    def bad_vector(bvh):
        for j in spatial.bvh_query_ray(bvh, sim.vec3d(), sim.vec3()):
            pass

    @numba.njit
    def bad_tree(bvh):
        for j in spatial.bvh_query_aabb(bvh, sim.vec3(), sim.vec3()):
            pass

    bvh = Bvh(*random_boxes(3))
    with pytest.raises(TypingError, match=r"bvh_query_ray\(.*start must be a vec3, not vec3d"):
        bad_vector(bvh)
    for not_a_tree in (1.5, np.int32(7)):
        with pytest.raises(TypingError, match=r"bvh must be a sim.Bvh or its id \(a 64-bit"):
            bad_tree(not_a_tree)


@sim.kernel
def count_overlaps_kernel(bvh: sim.Bvh, lowers: sim.array(dtype=sim.vec3),
                          uppers: sim.array(dtype=sim.vec3), counts: sim.array(dtype=int)):
    i = sim.tid()
    count = int(0)
    for j in sim.bvh_query_aabb(bvh, lowers[i], uppers[i]):
        count += 1
    counts[i] = count


def test_sim_kernel_takes_the_tree_or_its_id():
    lowers, uppers = random_boxes(1000, seed=14)
    bvh = Bvh(lowers, uppers)
    expected = [len(overlapping(lowers, uppers, lo, hi)) for lo, hi in zip(lowers, uppers)]
    for tree in (bvh, bvh.id):
        counts = np.zeros(len(lowers), np.int32)
        sim.launch(count_overlaps_kernel, dim=len(lowers), inputs=[tree, lowers, uppers, counts])
        assert counts.tolist() == expected


def test_trees_built_from_four_threads_at_once():
    collect(Bvh(*random_boxes(3)), *random_boxes(1))  # compile before the threads start
    start = threading.Barrier(4)

    def build_and_check(seed):
        lowers, uppers = random_boxes(30_000, seed=100 + seed)
        start.wait()
        bvh = Bvh(lowers, uppers, constructor=CONSTRUCTORS[seed % 3])
        check_aabb(bvh, lowers, uppers, lowers[:30], uppers[:30])
        return seed

    with concurrent.futures.ThreadPoolExecutor(4) as pool:  # a worker's error is raised here
        assert sorted(pool.map(build_and_check, range(4))) == [0, 1, 2, 3]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_trees_do_not_depend_on_the_thread_count(monkeypatch, constructor, threads):
    from numba_sim.spatial import bvh as bvh_module

    lowers, uppers = random_boxes(40_000, seed=15)
    reference = Bvh(lowers, uppers, constructor=constructor)
    monkeypatch.setattr(bvh_module.numba, "get_num_threads", lambda: threads)
    again = Bvh(lowers, uppers, constructor=constructor)
    assert np.array_equal(reference._storage.nodes, again._storage.nodes)
    assert np.array_equal(reference._storage.primitive_indices, again._storage.primitive_indices)


# --------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("argument, value, error, message", [
    ("lowers", np.zeros((4, 3), np.float64), TypeError, r"lowers must be float32.*not float64"),
    ("uppers", np.zeros((4, 3), np.int32), TypeError, r"uppers must be float32"),
    ("lowers", np.zeros((4, 2), np.float32), ValueError, r"shape \(n, 3\), not \(4, 2\)"),
    ("uppers", np.zeros(12, np.float32), ValueError, r"shape \(n, 3\), not \(12,\)"),
    ("lowers", [[0.0, 0.0, 0.0]] * 4, TypeError, r"expected a NumPy array .* not list"),
    ("uppers", np.zeros((5, 3), np.float32), ValueError, r"uppers has 5 rows but lowers has 4"),
    ("lowers", np.zeros((3, 4), np.float32)[:, :3], ValueError, r"must be C-contiguous"),
])
def test_bad_arrays_name_the_argument(argument, value, error, message):
    arrays = {"lowers": np.zeros((4, 3), np.float32), "uppers": np.ones((4, 3), np.float32)}
    arrays[argument] = value
    with pytest.raises(error, match=rf"Bvh\({argument}=\.\.\.\): .*{message}"):
        Bvh(arrays["lowers"], arrays["uppers"])


@pytest.mark.parametrize("row, value", [(2, np.nan), (0, np.inf), (3, -np.inf)])
@pytest.mark.parametrize("argument", ["lowers", "uppers"])
def test_non_finite_bounds_name_the_argument_and_row(argument, row, value):
    arrays = {"lowers": np.zeros((4, 3), np.float32), "uppers": np.ones((4, 3), np.float32)}
    arrays[argument][row, 1] = value
    with pytest.raises(ValueError, match=rf"Bvh\({argument}=\.\.\.\): {argument}\[{row}\] = "):
        Bvh(arrays["lowers"], arrays["uppers"])


def test_inverted_boxes_and_bad_refits_are_refused_leaving_the_tree_intact():
    lowers, uppers = random_boxes(50, seed=16)
    bad = uppers.copy()
    bad[7, 0] = lowers[7, 0] - 1.0
    with pytest.raises(ValueError, match=r"Bvh\(lowers=\.\.\., uppers=\.\.\.\): box 7 has "):
        Bvh(lowers, bad)
    bvh = Bvh(lowers, uppers)
    before = collect(bvh, lowers, uppers)
    uppers[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"Bvh.refit\(uppers=\.\.\.\): uppers\[3\]"):
        bvh.refit()
    with pytest.raises(ValueError, match=r"Bvh.rebuild\(uppers=\.\.\.\): uppers\[3\]"):
        bvh.rebuild()
    uppers[3, 2] = lowers[3, 2] + 0.01
    assert collect(bvh, lowers, uppers) == before  # the tree was not touched


def test_bad_constructor_and_leaf_size_name_the_argument():
    lowers, uppers = random_boxes(5)
    with pytest.raises(ValueError, match=r"Bvh\(constructor='cubql'\): cuBQL is not available"):
        Bvh(lowers, uppers, constructor="cubql")
    with pytest.raises(ValueError, match=r"Bvh.rebuild\(constructor=3\)"):
        Bvh(lowers, uppers).rebuild(3)
    with pytest.raises(ValueError, match=r"Bvh\(leaf_size=0\) must be at least 1"):
        Bvh(lowers, uppers, leaf_size=0)
    with pytest.raises(TypeError, match=r"Bvh\(leaf_size=\.\.\.\) must be an int"):
        Bvh(lowers, uppers, leaf_size=2.5)


def test_cuda_tree_passed_to_cpu_code_is_refused():
    fake = object.__new__(Bvh)
    fake.device = "cuda:0"
    with pytest.raises(ValueError, match=r"a Bvh on cuda:0 was passed to CPU code"):
        bvh_id_in_compiled_code(fake)


def test_native_layouts_match_the_numba_models():
    from numba.core.registry import cpu_target

    from numba_sim.spatial.common import BVH_QUERY_BYTES, BVH_WORDS, host_functions
    from numba_sim.typing.bvh import box_query_state_type

    sizes = np.zeros(3, np.int32)
    host_functions["sim_bvh_layout"](sizes.ctypes.data)
    context = cpu_target.target_context
    state_bytes = context.get_abi_sizeof(context.get_data_type(box_query_state_type))
    assert sizes.tolist() == [32, 8 * BVH_WORDS, BVH_QUERY_BYTES]
    assert state_bytes == BVH_QUERY_BYTES


def test_public_names():
    for name in ("Bvh", "bvh_query_aabb", "bvh_query_ray", "bvh_query_next"):
        assert name in spatial.__all__ and getattr(sim, name) is getattr(spatial, name)
    assert isinstance(Bvh(*random_boxes(2))._numba_type_, types.Type)
