"""Sphere and capsule queries (Warp's bvh_query_sphere, mesh_query_sphere, bvh_query_capsule,
max_dist), kind-erased query variables and mesh_get_bvh, against brute force, compiled, in Python mode and compiled for CUDA offline.

* ``bvh_query_sphere`` yields every box whose closest point to the centre is within the radius
  (exact sphere-box test), each once;
* ``mesh_query_sphere`` yields every face whose triangle is within the radius (exact; a
  zero-area face counts as its longest edge);
* a variable assigned queries of different kinds (``q = bvh_query_ray(...)`` in one branch,
  ``bvh_query_aabb(...)`` in the other) iterates the kind it holds;
* ``mesh_get_bvh(mesh)`` is the id of the mesh's triangle BVH for the ``bvh_query_*``;
* ``bvh_query_capsule`` with ``while bvh_query_next(q, j, 1.0)`` yields the boxes that the
  segment meets once grown by the radius; ``max_dist`` bounds rays (half-open) too.
"""

import numpy as np
import pytest
from numba import cuda
from numba.core import types

import numba_sim as sim
from numba_sim import spatial
from numba_sim.typing.bvh import bvh_type
from numba_sim.typing.mesh import mesh_type

pytestmark = pytest.mark.usefixtures("private_device_code_cache")

BOXES = types.float32[:, ::1]
INDICES = types.int32[::1]


def random_boxes(n, seed):
    rng = np.random.default_rng(seed)
    lowers = (rng.random((n, 3)) * 8.0).astype(np.float32)
    uppers = lowers + (rng.random((n, 3)) * 0.6).astype(np.float32)
    return lowers, uppers


def random_triangles(n, seed, degenerate=0):
    """Small independent triangles; the first ``degenerate`` are segments or points."""
    rng = np.random.default_rng(seed)
    centers = rng.random((n, 3)).astype(np.float32) * 8.0
    tris = centers[:, None, :] + (rng.random((n, 3, 3)) - 0.5).astype(np.float32) * 0.6
    for k in range(degenerate):
        tris[k, 2] = tris[k, 0] if k % 2 else 0.5 * (tris[k, 0] + tris[k, 1])
    points = tris.reshape(-1, 3).astype(np.float32)
    indices = np.arange(3 * n, dtype=np.int32)
    return points, indices, tris


def sphere_box_reference(center, radius, lowers, uppers):
    closest = np.clip(center, lowers, uppers).astype(np.float64)
    return ((closest - center) ** 2).sum(axis=1) <= max(radius, 0.0) ** 2


def point_segment_distance_sq(p, a, b):
    ab = b - a
    denominator = (ab * ab).sum(-1)
    t = np.where(denominator > 0, ((p - a) * ab).sum(-1) / np.where(denominator > 0,
                                                                      denominator, 1), 0)
    closest = a + np.clip(t, 0, 1)[..., None] * ab
    return ((closest - p) ** 2).sum(-1)


def point_triangle_distance_sq(p, tris):
    """Exact squared distance from p to each triangle (float64): the face's plane when the
    projection is inside, else the nearest edge; zero-area faces as their edges."""
    tris = tris.astype(np.float64)
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    edges = np.minimum(np.minimum(point_segment_distance_sq(p, a, b),
                                  point_segment_distance_sq(p, b, c)),
                       point_segment_distance_sq(p, c, a))
    n = np.cross(b - a, c - a)
    nn = (n * n).sum(-1)
    safe = np.where(nn > 0, nn, 1.0)
    distance = ((p - a) * n).sum(-1) / np.sqrt(safe)
    projection = p - (distance / np.sqrt(safe))[:, None] * n
    inside = np.ones(len(tris), dtype=bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= (np.cross(v - u, projection - u) * n).sum(-1) >= 0
    return np.where((nn > 0) & inside, distance ** 2, edges)


@sim.kernel
def bvh_sphere_hits(bvh: sim.uint64, center: sim.vec3, radius: float, hits: sim.array(dtype=int)):
    for j in sim.bvh_query_sphere(bvh, center, radius):
        hits[j] += 1


@sim.kernel
def mesh_sphere_hits(mesh: sim.Mesh, center: sim.vec3, radius: float,
                     hits: sim.array(dtype=int)):
    for f in sim.mesh_query_sphere(mesh, center, radius):
        hits[f] += 1


@sim.kernel
def mesh_bvh_sphere_hits(mesh: sim.uint64, center: sim.vec3, radius: float,
                         hits: sim.array(dtype=int)):
    bvh = sim.mesh_get_bvh(mesh)
    for f in sim.bvh_query_sphere(bvh, center, radius):
        hits[f] += 1


@sim.kernel
def bvh_runtime_kind(bvh: sim.uint64, kind: int, lo: sim.vec3, hi: sim.vec3, center: sim.vec3,
                     radius: float, hits: sim.array(dtype=int)):
    if kind == 0:
        query = sim.bvh_query_aabb(bvh, lo, hi)
    elif kind == 1:
        query = sim.bvh_query_ray(bvh, lo, hi - lo)
    else:
        query = sim.bvh_query_sphere(bvh, center, radius)
    for j in query:
        hits[j] += 1


@sim.kernel
def mesh_runtime_kind(mesh: sim.uint64, use_sphere: bool, lo: sim.vec3, hi: sim.vec3,
                      center: sim.vec3, radius: float, hits: sim.array(dtype=int)):
    if use_sphere:
        query = sim.mesh_query_sphere(mesh, center, radius)
    else:
        query = sim.mesh_query_aabb(mesh, lo, hi)
    for f in query:
        hits[f] += 1


def launch_hits(kernel, n, *inputs):
    hits = np.zeros(n, np.int32)
    sim.launch(kernel, 1, [*inputs, hits])
    return hits


@pytest.mark.parametrize("constructor", ["sah", "median", "lbvh"])
def test_bvh_sphere_equals_brute_force(constructor):
    lowers, uppers = random_boxes(1500, 1)
    bvh = sim.Bvh(lowers, uppers, constructor=constructor)
    rng = np.random.default_rng(2)
    for _ in range(8):
        center = (rng.random(3) * 8.0).astype(np.float32)
        radius = float(rng.random() * 1.5)
        hits = launch_hits(bvh_sphere_hits, len(lowers), bvh.id, sim.vec3(*center), radius)
        assert hits.max() <= 1  # each box once
        expected = sphere_box_reference(center, radius, lowers, uppers)
        np.testing.assert_array_equal(hits.astype(bool), expected)
        python_mode = sorted(spatial.bvh_query_sphere(bvh, center, radius))
        assert python_mode == np.flatnonzero(expected).tolist()


def test_bvh_sphere_touching_negative_and_nan():
    lowers = np.array([[0, 0, 0], [2, 0, 0]], np.float32)
    uppers = np.array([[1, 1, 1], [3, 1, 1]], np.float32)
    bvh = sim.Bvh(lowers, uppers)
    touching = launch_hits(bvh_sphere_hits, 2, bvh.id, sim.vec3(1.5, 0.5, 0.5), 0.5)
    np.testing.assert_array_equal(touching, [1, 1])  # tangent contact counts
    inside = launch_hits(bvh_sphere_hits, 2, bvh.id, sim.vec3(0.5, 0.5, 0.5), -1.0)
    np.testing.assert_array_equal(inside, [1, 0])  # a negative radius is 0: the centre's box
    nan = launch_hits(bvh_sphere_hits, 2, bvh.id, sim.vec3(np.nan, 0.5, 0.5), 10.0)
    np.testing.assert_array_equal(nan, [0, 0])


def test_bvh_sphere_from_a_group_root():
    lowers, uppers = random_boxes(400, 3)
    groups = (np.arange(400) % 3).astype(np.int32)
    bvh = sim.Bvh(lowers, uppers, groups=groups)
    center = np.array([4, 4, 4], np.float32)
    expected = sphere_box_reference(center, 2.0, lowers, uppers) & (groups == 1)
    root = int(spatial.bvh_get_group_root(bvh, 1))
    got = sorted(spatial.bvh_query_sphere(bvh, center, 2.0, root))
    assert got == np.flatnonzero(expected).tolist()


@pytest.mark.parametrize("constructor", ["sah", "median", "lbvh"])
def test_mesh_sphere_equals_brute_force(constructor):
    points, indices, tris = random_triangles(1500, 4, degenerate=40)
    mesh = sim.Mesh(points, indices, bvh_constructor=constructor)
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(10):
        center = (rng.random(3) * 8.0).astype(np.float32)
        radius = float(rng.random() * 0.8 + 0.1)
        hits = launch_hits(mesh_sphere_hits, len(tris), mesh, sim.vec3(*center), radius)
        assert hits.max() <= 1
        distance_sq = point_triangle_distance_sq(center.astype(np.float64), tris)
        clear = np.abs(np.sqrt(distance_sq) - radius) > 1e-4  # away from float32 rounding
        np.testing.assert_array_equal(hits.astype(bool)[clear], (distance_sq <= radius ** 2)[clear])
        checked += int((distance_sq <= radius ** 2).sum())
        python_mode = sorted(spatial.mesh_query_sphere(mesh, center, radius))
        assert python_mode == np.flatnonzero(hits).tolist()
    assert checked > 0


def test_mesh_sphere_is_exact_not_the_box():
    points = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    mesh = sim.Mesh(points, np.array([0, 1, 2], np.int32))
    on = launch_hits(mesh_sphere_hits, 1, mesh, sim.vec3(0.25, 0.25, 0.0), 0.0)
    off = launch_hits(mesh_sphere_hits, 1, mesh, sim.vec3(0.9, 0.9, 0.0), 0.0)  # in the box
    np.testing.assert_array_equal([on[0], off[0]], [1, 0])


def test_mesh_get_bvh_queries_the_triangle_boxes():
    points, indices, tris = random_triangles(1000, 6)
    mesh = sim.Mesh(points, indices)
    lowers, uppers = tris.min(axis=1), tris.max(axis=1)
    center = np.array([4.0, 4.0, 4.0], np.float32)
    hits = launch_hits(mesh_bvh_sphere_hits, len(tris), mesh.id, sim.vec3(*center), 1.5)
    np.testing.assert_array_equal(hits.astype(bool),
                                  sphere_box_reference(center, 1.5, lowers, uppers))
    assert int(spatial.mesh_get_bvh(mesh)) != 0


def test_runtime_kind_equals_the_static_queries():
    lowers, uppers = random_boxes(800, 7)
    bvh = sim.Bvh(lowers, uppers)
    lo, hi, center = sim.vec3(2, 2, 2), sim.vec3(5, 6, 5), sim.vec3(4, 4, 4)
    expected = [sorted(spatial.bvh_query_aabb(bvh, lo, hi)),
                sorted(spatial.bvh_query_ray(bvh, lo, hi - lo)),
                sorted(spatial.bvh_query_sphere(bvh, center, 1.5))]
    assert all(expected)
    for kind in range(3):
        hits = launch_hits(bvh_runtime_kind, len(lowers), bvh.id, kind, lo, hi, center, 1.5)
        assert np.flatnonzero(hits).tolist() == expected[kind]
        assert hits.max() == 1

    points, indices, tris = random_triangles(800, 8)
    mesh = sim.Mesh(points, indices)
    for use_sphere, reference in ((True, spatial.mesh_query_sphere(mesh, center, 1.0)),
                                  (False, spatial.mesh_query_aabb(mesh, lo, hi))):
        hits = launch_hits(mesh_runtime_kind, len(tris), mesh.id, use_sphere, lo, hi, center, 1.0)
        assert np.flatnonzero(hits).tolist() == sorted(reference)


def capsule_reference(p0, p1, radius, lowers, uppers, max_dist):
    """Segment p0 + t (p1 - p0), t in [0, max_dist], against the boxes grown by radius
    (slab test in float64)."""
    lo, hi = lowers - radius, uppers + radius
    d = (p1 - p0).astype(np.float64)
    t_min = np.zeros(len(lo))
    t_max = np.full(len(lo), float(max_dist))
    for k in range(3):
        if d[k] == 0.0:
            outside = (p0[k] < lo[:, k]) | (p0[k] > hi[:, k])
            t_max = np.where(outside, -1.0, t_max)
        else:
            t1, t2 = (lo[:, k] - p0[k]) / d[k], (hi[:, k] - p0[k]) / d[k]
            t_min = np.maximum(t_min, np.minimum(t1, t2))
            t_max = np.minimum(t_max, np.maximum(t1, t2))
    return t_min <= t_max


@sim.kernel
def capsule_hits(bvh: sim.uint64, p0: sim.vec3, p1: sim.vec3, radius: float,
                 hits: sim.array(dtype=int)):
    query = sim.bvh_query_capsule(bvh, p0, p1 - p0, radius)
    j = int(0)
    while sim.bvh_query_next(query, j, 1.0):
        hits[j] += 1


@sim.kernel
def ray_hits_bounded(bvh: sim.uint64, start: sim.vec3, dir: sim.vec3, max_dist: float,
                     hits: sim.array(dtype=int)):
    query = sim.bvh_query_ray(bvh, start, dir)
    j = int(0)
    while sim.bvh_query_next(query, j, max_dist):
        hits[j] += 1


def test_capsule_sweep_equals_brute_force():
    lowers, uppers = random_boxes(2000, 9)
    bvh = sim.Bvh(lowers, uppers)
    rng = np.random.default_rng(10)
    for _ in range(8):
        p0, p1 = (rng.random((2, 3)) * 8.0).astype(np.float32)
        radius = float(rng.random() * 0.5)
        hits = launch_hits(capsule_hits, len(lowers), bvh.id, sim.vec3(*p0), sim.vec3(*p1),
                           radius)
        assert hits.max() <= 1
        expected = capsule_reference(p0, p1, radius, lowers, uppers, 1.0)
        np.testing.assert_array_equal(hits.astype(bool), expected)
        unbounded = sorted(spatial.bvh_query_capsule(bvh, p0, p1 - p0, radius))
        assert set(np.flatnonzero(expected)) <= set(unbounded)  # no bound: the whole line
        assert unbounded == np.flatnonzero(
            capsule_reference(p0, p1, radius, lowers, uppers, np.inf)).tolist()


def test_ray_max_dist_bounds_the_ray():
    lowers = np.array([[1, 0, 0], [3, 0, 0], [5, 0, 0]], np.float32)
    bvh = sim.Bvh(lowers, lowers + 1.0)
    start, direction = sim.vec3(0.0, 0.5, 0.5), sim.vec3(1.0, 0.0, 0.0)
    for max_dist, expected in ((0.5, [0, 0, 0]), (2.0, [1, 0, 0]), (3.0, [1, 0, 0]),
                               (3.5, [1, 1, 0]), (np.inf, [1, 1, 1])):
        hits = launch_hits(ray_hits_bounded, 3, bvh.id, start, direction, max_dist)
        np.testing.assert_array_equal(hits, expected)  # half-open: entering at 3.0 is out


# --------------------------------------------------------------------------
# CUDA, offline


def sphere_queries_kernel(bvh, mesh, centers, counts):
    i = cuda.grid(1)
    if i < centers.shape[0]:
        c = sim.vec3(centers[i, 0], centers[i, 1], centers[i, 2])
        count = 0
        for j in spatial.bvh_query_sphere(bvh, c, 0.5):
            count += j
        for f in spatial.mesh_query_sphere(mesh, c, 0.5):
            count += f
        for f in spatial.bvh_query_sphere(spatial.mesh_get_bvh(mesh), c, 0.5, -1):
            count += f
        for j in spatial.bvh_query_capsule(bvh, c, c, 0.25):
            count += j
        counts[i] = count


def runtime_kind_kernel(bvh, mesh, centers, counts):
    i = cuda.grid(1)
    if i < centers.shape[0]:
        c = sim.vec3(centers[i, 0], centers[i, 1], centers[i, 2])
        if i % 4 == 0:
            query = spatial.bvh_query_aabb(bvh, c, c)
        elif i % 4 == 1:
            query = spatial.bvh_query_ray(bvh, c, c)
        elif i % 4 == 2:
            query = spatial.bvh_query_capsule(bvh, c, c, 0.5)
        else:
            query = spatial.bvh_query_sphere(bvh, c, 1.0)
        count = 0
        for j in query:
            count += j
        if i % 2 == 0:
            mesh_query = spatial.mesh_query_sphere(mesh, c, 1.0)
        else:
            mesh_query = spatial.mesh_query_aabb(mesh, c, c)
        for f in mesh_query:
            count += f
        counts[i] = count


@pytest.mark.parametrize("handles", [(bvh_type, mesh_type), (types.uint64, types.uint64)],
                         ids=["objects", "uint64"])
@pytest.mark.parametrize("body", [sphere_queries_kernel, runtime_kind_kernel],
                         ids=lambda f: f.__name__)
def test_sphere_and_runtime_kind_kernels_link_offline(offline_cuda, handles, body):
    argtypes = (*handles, BOXES, INDICES)
    assert offline_cuda.cubin(body, argtypes, cc=(7, 5), lto=True)[:4] == b"\x7fELF"
