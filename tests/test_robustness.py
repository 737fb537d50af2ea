"""Robustness: many Python threads at once, and property tests (hypothesis) of the
value-type algebra and of spatial queries against brute force."""

import threading

import numba
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numba_sim as sim


def make_kernel(scale):
    """A distinct kernel per scale (each compiles separately)."""

    @sim.kernel
    def count_and_scale(grid: sim.HashGrid, points: sim.array(dtype=sim.vec3),
                        counts: sim.array(dtype=sim.int32), out: sim.array(dtype=sim.vec3),
                        radius: float):
        i = sim.tid()
        p = points[i]
        c = int(0)
        for j in sim.hash_grid_query(grid, p, radius):
            if sim.length(points[j] - p) <= radius:
                c += 1
        counts[i] = c
        out[i] = p * scale

    return count_and_scale


def brute_force_counts(points, radius):
    distances = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
    return (distances <= radius).sum(axis=1)


@numba.njit
def bvh_overlaps(bvh, points, radius):
    total = 0
    for i in range(points.shape[0]):
        p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
        for _ in sim.bvh_query_aabb(bvh, p - sim.vec3(radius), p + sim.vec3(radius)):
            total += 1
    return total


def brute_force_counts_box(points, radius):
    """Pairs of boxes of half-size *radius* around the points that overlap (CPU float32)."""
    lo, hi = points - np.float32(radius), points + np.float32(radius)
    return int((np.all(lo[:, None] <= hi[None] + 0, axis=-1)
                & np.all(hi[:, None] >= lo[None], axis=-1)).sum())


@numba.njit
def mesh_closest_faces(mesh, queries):
    faces = np.empty(queries.shape[0], np.int32)
    for i in range(queries.shape[0]):
        q = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        faces[i] = sim.mesh_query_point(mesh, q, 1e6).face
    return faces


def test_eight_threads_launch_kernels_and_build_structures():
    kernels = [make_kernel(float(k + 1)) for k in range(8)]
    errors, results = [], {}
    start = threading.Barrier(8)

    def worker(k):
        try:
            rng = np.random.default_rng(k)
            points = rng.uniform(0, 1, (600 + 50 * k, 3)).astype(np.float32)
            radius = 0.1
            grid = sim.HashGrid(16, 16, 16)
            counts = np.zeros(len(points), np.int32)
            out = np.zeros_like(points)
            start.wait()
            for _ in range(3):
                grid.build(points, radius)
                sim.launch(kernels[k], dim=len(points), inputs=[grid, points, counts, out, radius])
                bvh = sim.Bvh(points - radius, points + radius,
                              constructor=("sah", "median", "lbvh")[k % 3])
                mesh = sim.Mesh(points[: 3 * (len(points) // 3)],
                                np.arange(3 * (len(points) // 3), dtype=np.int32).reshape(-1, 3))
            boxes_ok = bvh_overlaps(bvh, points, radius) == brute_force_counts_box(points, radius)
            closest = mesh_closest_faces(mesh, points[:50])
            results[k] = (np.array_equal(counts, brute_force_counts(points, radius))
                          and np.allclose(out, points * (k + 1)) and boxes_ok
                          and (closest >= 0).all())
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not errors, errors
    assert results == {k: True for k in range(8)}


# --------------------------------------------------------------------------
# The value-type algebra: compiled code equals Python, and the algebra's laws hold


finite = st.floats(-100, 100, allow_nan=False, width=32)
vec3s = st.tuples(finite, finite, finite).map(lambda c: sim.vec3(*c))
mat33s = st.tuples(*[finite] * 9).map(lambda c: sim.mat33(*c))
scalars = st.floats(0.25, 4, width=32)


@numba.njit
def algebra(a, b, m, n, s):
    return (a + b - b, a * s / s, m @ (n @ a), (m @ n) @ a, -(-a), a - a, sim.dot(a, b),
            sim.cross(a, b), m * s)


def _python_algebra(a, b, m, n, s):
    return (a + b - b, a * s / s, m @ (n @ a), (m @ n) @ a, -(-a), a - a, sim.dot(a, b),
            sim.cross(a, b), m * s)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vec3s, vec3s, mat33s, mat33s, scalars)
def test_value_algebra_compiled_equals_python_and_obeys_its_laws(a, b, m, n, s):
    compiled = algebra(a, b, m, n, np.float32(s))
    python = _python_algebra(a, b, m, n, np.float32(s))
    for got, expected in zip(compiled, python):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
    added_back, scaled_back, m_n_a, mn_a, negated, zero, _, cross, _ = compiled
    scale = max(1.0, float(np.abs(np.asarray(a)).max()), float(np.abs(np.asarray(b)).max()))
    np.testing.assert_allclose(np.asarray(added_back), np.asarray(a), atol=1e-5 * scale)
    np.testing.assert_allclose(np.asarray(scaled_back), np.asarray(a), rtol=1e-5, atol=1e-30)
    assert negated == a and zero == sim.vec3()
    magnitude = (np.abs(np.asarray(m)) @ np.abs(np.asarray(n)) @ np.abs(np.asarray(a))).max()
    np.testing.assert_allclose(np.asarray(m_n_a), np.asarray(mn_a), atol=1e-5 * max(magnitude, 1))
    # the cross product is orthogonal to both factors
    length = float(np.linalg.norm(np.asarray(a)) * np.linalg.norm(np.asarray(b)))
    for factor in (a, b):
        assert abs(float(np.dot(np.asarray(cross, np.float64), np.asarray(factor, np.float64)))) \
            <= 1e-5 * max(length, 1) * max(1.0, float(np.linalg.norm(np.asarray(factor))))


# --------------------------------------------------------------------------
# Hash-grid queries against brute force, on generated clouds


@numba.njit
def candidate_sets(grid, points, radius):
    n = points.shape[0]
    hits = np.zeros((n, n), np.bool_)
    for i in range(n):
        p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
        for j in sim.hash_grid_query(grid, p, radius):
            q = sim.vec3(points[j, 0], points[j, 1], points[j, 2])
            if sim.length(q - p) <= radius:
                hits[i, j] = True
    return hits


clouds = hnp.arrays(np.float32, st.tuples(st.integers(1, 60), st.just(3)),
                    elements=st.floats(-3, 3, width=32))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clouds, st.floats(0.05, 2.0), st.sampled_from([(1, 1, 1), (4, 3, 5), (16, 16, 16)]))
def test_hash_grid_neighbours_equal_brute_force(points, radius, dims):
    grid = sim.HashGrid(*dims)
    grid.build(points, radius)
    distances = np.linalg.norm(points.astype(np.float32)[:, None] - points[None], axis=-1)
    got = candidate_sets(grid, points, np.float32(radius))
    expected = np.linalg.norm((points[:, None] - points[None]).astype(np.float32), axis=-1) \
        <= np.float32(radius)
    # the compiled filter and NumPy may round differently right at the radius
    borderline = np.isclose(distances, radius, rtol=1e-5, atol=1e-6)
    assert np.array_equal(got[~borderline], expected[~borderline])


# --------------------------------------------------------------------------
# Bvh and Mesh queries against brute force, on generated inputs


boxes = st.integers(1, 80).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float32, (n, 3), elements=st.floats(-2, 2, width=32)),
    hnp.arrays(np.float32, (n, 3), elements=st.floats(0, 0.5, width=32))))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxes, st.sampled_from(["sah", "median", "lbvh"]), st.integers(0, 2**31 - 1))
def test_bvh_queries_equal_brute_force(centres_and_sizes, constructor, seed):
    from test_bvh import check_aabb, check_rays, random_boxes, random_rays

    centres, sizes = centres_and_sizes
    lowers, uppers = centres - sizes, centres + sizes
    bvh = sim.Bvh(lowers, uppers, constructor=constructor)
    query_lo, query_hi = random_boxes(20, seed=seed % 1000, size=0.6, low=-2.5, high=2.5)
    check_aabb(bvh, lowers, uppers, np.concatenate([lowers, query_lo]),
               np.concatenate([uppers, query_hi]))
    starts, directions = random_rays(20, seed=seed % 1000 + 1, low=-3, high=3)
    check_rays(bvh, lowers, uppers, starts, directions)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 40), st.integers(0, 2**31 - 1))
def test_mesh_queries_equal_brute_force(triangles, seed):
    import test_mesh

    rng = np.random.default_rng(seed)
    points = rng.uniform(-1, 1, (3 * triangles, 3)).astype(np.float32)
    faces = np.arange(3 * triangles, dtype=np.int32).reshape(triangles, 3)
    mesh = sim.Mesh(points, faces)
    queries = rng.uniform(-1.5, 1.5, (30, 3)).astype(np.float32)
    test_mesh.check_closest(mesh, points, faces, queries)
    starts = rng.uniform(-2, 2, (20, 3)).astype(np.float32)
    directions = rng.normal(size=(20, 3)).astype(np.float32)
    test_mesh.check_rays(mesh, points, faces, starts, directions)
