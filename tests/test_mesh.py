"""sim.Mesh on the CPU: closest points, signs, rays and box queries against brute force.

References (tests/mesh_shapes.py, float64, over all triangles): closest
points by Ericson's test, ray hits by Möller-Trumbore, inside/outside by the
generalized winding number. The compiled helpers are module-level and always
called with the same argument types, so each compiles once.
"""

import numba
import numpy as np
import pytest
from numba.core import types
from numba.core.errors import TypingError

import numba_sim as sim
from numba_sim import spatial
from numba_sim.spatial import Mesh, mesh_eval_position, mesh_query_aabb, mesh_query_point
from numba_sim.spatial import mesh_query_ray
from numba_sim.spatial.mesh import DEFAULT_LEAF_SIZES

from mesh_shapes import closest_points, cube, icosphere, ray_hits, torus, winding_numbers


# --------------------------------------------------------------------------
# Compiled helpers


@numba.njit
def point_queries(mesh, queries, max_dist):
    """Per query: (found, sign, face, u, v, distance to mesh_eval_position(face, u, v))."""
    n = queries.shape[0]
    found = np.zeros(n, np.bool_)
    out = np.zeros((n, 4), np.float32)
    faces = np.zeros(n, np.int32)
    for i in range(n):
        p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        q = sim.mesh_query_point(mesh, p, max_dist)
        found[i] = q.result
        faces[i] = q.face
        out[i, 0] = q.sign
        out[i, 1] = q.u
        out[i, 2] = q.v
        if q.result:
            out[i, 3] = sim.length(sim.mesh_eval_position(mesh, q.face, q.u, q.v) - p)
    return found, faces, out


@numba.njit
def ray_queries(mesh, starts, directions, max_t):
    """Per ray: (found, face, [t, u, v, sign, normal x 3, |hit - eval_position|])."""
    n = starts.shape[0]
    found = np.zeros(n, np.bool_)
    faces = np.zeros(n, np.int32)
    out = np.zeros((n, 8), np.float32)
    for i in range(n):
        start = sim.vec3(starts[i, 0], starts[i, 1], starts[i, 2])
        direction = sim.vec3(directions[i, 0], directions[i, 1], directions[i, 2])
        r = sim.mesh_query_ray(mesh, start, direction, max_t)
        found[i] = r.result
        faces[i] = r.face
        out[i, 0] = r.t
        out[i, 1] = r.u
        out[i, 2] = r.v
        out[i, 3] = r.sign
        out[i, 4] = r.normal.x
        out[i, 5] = r.normal.y
        out[i, 6] = r.normal.z
        if r.result:
            hit = start + direction * r.t
            out[i, 7] = sim.length(sim.mesh_eval_position(mesh, r.face, r.u, r.v) - hit)
    return found, faces, out


@numba.njit
def ray_counts_and_parity_signs(mesh, starts, directions, max_t):
    """Per ray: (any hit below max_t, the count of triangles met, the parity sign at start)."""
    n = starts.shape[0]
    anyhit = np.zeros(n, np.bool_)
    counts = np.zeros(n, np.int32)
    signs = np.zeros(n, np.float32)
    for i in range(n):
        start = sim.vec3(starts[i, 0], starts[i, 1], starts[i, 2])
        direction = sim.vec3(directions[i, 0], directions[i, 1], directions[i, 2])
        anyhit[i] = sim.mesh_query_ray_anyhit(mesh, start, direction, max_t)
        counts[i] = sim.mesh_query_ray_count_intersections(mesh, start, direction)
        signs[i] = sim.mesh_query_point_sign_parity(mesh, start, np.float32(1e6)).sign
    return anyhit, counts, signs


@numba.njit
def box_queries(mesh, lowers, uppers):
    """Faces of each box query as CSR (offsets, faces)."""
    n = lowers.shape[0]
    offsets = np.zeros(n + 1, np.int64)
    faces = []
    for i in range(n):
        lo = sim.vec3(lowers[i, 0], lowers[i, 1], lowers[i, 2])
        hi = sim.vec3(uppers[i, 0], uppers[i, 1], uppers[i, 2])
        for f in sim.mesh_query_aabb(mesh, lo, hi):
            faces.append(f)
        offsets[i + 1] = len(faces)
    return offsets, np.array(faces, dtype=np.int32) if faces else np.zeros(0, np.int32)


def points_near(points, n, scale, seed=0):
    rng = np.random.default_rng(seed)
    centre = (points.max(axis=0) + points.min(axis=0)) / 2
    size = points.max(axis=0) - points.min(axis=0)
    return (centre + rng.uniform(-scale, scale, (n, 3)) * size).astype(np.float32)


# --------------------------------------------------------------------------
# Checks against brute force


def check_closest(mesh, points, faces, queries, max_dist=1e6):
    found, got_faces, out = point_queries(mesh, queries, np.float32(max_dist))
    d2, _ = closest_points(points, faces, queries)
    expected = np.sqrt(d2)
    assert found.all() == (expected < max_dist).all()
    distance = out[:, 3]
    assert np.allclose(distance[found], expected[found], rtol=1e-5,
                       atol=1e-6 * (1 + expected.max()))
    # the face found is a closest one (ties allowed)
    a, b, c = (points.astype(np.float64)[faces[got_faces[found]]][:, k] for k in range(3))
    u, v = out[found, 1:2].astype(np.float64), out[found, 2:3].astype(np.float64)
    on_face = u * a + v * b + (1 - u - v) * c
    assert np.allclose(np.linalg.norm(on_face - queries[found], axis=1), expected[found],
                       rtol=1e-5, atol=1e-6)
    return found, got_faces, out


def check_signs(mesh, points, faces, queries, margin=1e-4):
    """Every sample farther than ``margin`` from the surface gets the winding number's sign."""
    d2, _ = closest_points(points, faces, queries)
    far = np.sqrt(d2) > margin
    inside = winding_numbers(points, faces, queries) > 0.5
    found, _, out = point_queries(mesh, queries, np.float32(1e6))
    assert found.all()
    assert far.sum() > 0.9 * len(queries)
    wrong = np.nonzero(far & ((out[:, 0] < 0) != inside))[0]
    assert len(wrong) == 0, f"{len(wrong)} wrong signs, e.g. {queries[wrong[:5]]}"
    return inside


def check_rays(mesh, points, faces, starts, directions, max_t=1e6):
    found, got_faces, out = ray_queries(mesh, starts, directions, np.float32(max_t))
    for i in range(len(starts)):
        ts, hit_faces = ray_hits(points, faces, starts[i], directions[i])
        keep = ts < max_t
        ts, hit_faces = ts[keep], hit_faces[keep]
        if not len(ts):
            assert not found[i], (i, out[i])
            continue
        assert found[i], (i, ts[:3])
        t = out[i, 0]
        assert abs(t - ts[0]) <= 1e-5 * max(1.0, abs(ts[0])), (i, t, ts[0])
        ties = hit_faces[np.abs(ts - ts[0]) <= 1e-5 * max(1.0, abs(ts[0]))]
        assert got_faces[i] in ties, (i, got_faces[i], ties)
        assert out[i, 7] <= 1e-4 * max(1.0, abs(t) * np.linalg.norm(directions[i]))
        a, b, c = triangles_normal(points, faces, got_faces[i])
        normal = np.cross(b - a, c - a)
        normal /= np.linalg.norm(normal)
        assert np.allclose(out[i, 4:7], normal, atol=1e-5)
        assert out[i, 3] == (-1.0 if np.dot(normal, directions[i]) > 0 else 1.0)
    return found, got_faces, out


def triangles_normal(points, faces, face):
    return (points.astype(np.float64)[faces[face, k]] for k in range(3))


# --------------------------------------------------------------------------
# Closest points and signs


SHAPES = {"cube": cube, "icosphere": lambda: icosphere(2), "torus": torus}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_closest_points_equal_brute_force(shape):
    points, faces = SHAPES[shape]()
    mesh = Mesh(points, faces)
    queries = np.concatenate([points_near(points, 1500, 0.8, seed=1), points[::3] * 1.01,
                              points[:20]])  # near and on vertices too
    found, got_faces, out = check_closest(mesh, points, faces, queries)
    assert found.all()


@pytest.mark.parametrize("shape", list(SHAPES))
def test_signs_of_ten_thousand_samples(shape):
    points, faces = SHAPES[shape]()
    mesh = Mesh(points, faces)
    queries = points_near(points, 10_000, 0.7, seed=2)
    inside = check_signs(mesh, points, faces, queries)
    assert 0.05 < inside.mean() < 0.95


def test_signs_near_edges_and_corners_of_a_cube():
    points, faces = cube()
    mesh = Mesh(points, faces)
    rng = np.random.default_rng(3)
    # points along the cube's edges and at its corners, just inside and just outside
    corners = points[rng.integers(0, 8, 3000)].astype(np.float64)
    along = corners * rng.uniform(0.0, 1.0, (3000, 1)) ** 0.1
    offsets = rng.normal(0, 1, (3000, 3)) * rng.uniform(2e-4, 0.05, (3000, 1))
    queries = (along + offsets).astype(np.float32)
    check_signs(mesh, points, faces, queries)


def test_max_dist_limits_the_search():
    points, faces = icosphere(2)
    mesh = Mesh(points, faces)
    queries = np.array([[0, 0, 0], [0, 0, 1.2], [0, 0, 3.0]], np.float32)
    found, faces_found, out = point_queries(mesh, queries, np.float32(0.5))
    assert found.tolist() == [False, True, False]  # the centre is about 0.95 away
    assert faces_found[0] == -1 and out[0, 0] == 0.0


# --------------------------------------------------------------------------
# Rays


def random_rays(points, n, seed):
    rng = np.random.default_rng(seed)
    starts = points_near(points, n, 1.5, seed=seed)
    targets = points_near(points, n, 0.4, seed=seed + 1)
    directions = (targets - starts) * rng.uniform(0.5, 2.0, (n, 1))
    return starts, directions.astype(np.float32)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_rays_equal_brute_force(shape):
    points, faces = SHAPES[shape]()
    mesh = Mesh(points, faces)
    starts, directions = random_rays(points, 600, seed=4)
    found, _, out = check_rays(mesh, points, faces, starts, directions)
    assert found.mean() > 0.3
    found, _, _ = check_rays(mesh, points, faces, starts[:100], directions[:100], max_t=0.7)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_anyhit_counts_and_parity_signs_equal_brute_force(shape):
    """Warp's mesh_query_ray_anyhit, mesh_query_ray_count_intersections and
    mesh_query_point_sign_parity: against all Möller-Trumbore hits and winding numbers;
    Python mode runs the same native code."""
    points, faces = SHAPES[shape]()
    mesh = Mesh(points, faces)
    starts, directions = random_rays(points, 400, seed=7)
    anyhit, counts, signs = ray_counts_and_parity_signs(mesh, starts, directions,
                                                        np.float32(0.7))
    expected = np.array([len(ray_hits(points, faces, s, d)[0]) for s, d in zip(starts, directions)])
    np.testing.assert_array_equal(counts, expected)
    assert (counts > 1).any()
    np.testing.assert_array_equal(anyhit, [
        (ray_hits(points, faces, s, d)[0] < 0.7).any() for s, d in zip(starts, directions)])
    inside = winding_numbers(points, faces, starts) > 0.5
    np.testing.assert_array_equal(signs < 0, inside)
    for i in range(0, 400, 37):
        start, direction = sim.vec3(*starts[i]), sim.vec3(*directions[i])
        assert sim.mesh_query_ray_anyhit(mesh, start, direction, 0.7) == anyhit[i]
        assert sim.mesh_query_ray_count_intersections(mesh, start, direction) == counts[i]
        q = sim.mesh_query_point_sign_parity(mesh.id, start, 1e6, 3, 0.05)
        assert q.result and q.sign == signs[i]  # three rays vote the same way here
        r = sim.mesh_query_point_no_sign(mesh, start, 1e6)
        assert (q.face, q.u, q.v) == (r.face, r.u, r.v)
    assert sim.mesh_query_point_sign_parity(mesh, sim.vec3(*starts[0]), 1e6, 0).sign == -1.0
    assert not sim.mesh_query_ray_anyhit(mesh, sim.vec3(*starts[0]), sim.vec3(), 10.0)
    assert sim.mesh_query_ray_count_intersections(mesh, sim.vec3(), sim.vec3(np.nan, 0, 0)) == 0


def test_default_leaf_size_is_the_constructors_and_answers_the_same():
    points, faces = icosphere(3)
    default = Mesh(points, faces)
    assert default.bvh_leaf_size == DEFAULT_LEAF_SIZES["sah"] == 8
    assert Mesh(points, faces, bvh_constructor="median").bvh_leaf_size == 8
    assert Mesh(points, faces, bvh_constructor="lbvh").bvh_leaf_size == 4
    fours = Mesh(points, faces, bvh_leaf_size=4)
    # the same answers; a point closest to an edge or vertex may name either face there
    queries = points_near(points, 500, 0.8, seed=5)
    (found, _, out), (found4, _, out4) = (point_queries(m, queries, np.float32(1e6))
                                          for m in (default, fours))
    assert found.all() and found4.all()
    np.testing.assert_array_equal(out[:, 0], out4[:, 0])  # signs
    np.testing.assert_allclose(out[:, 3], out4[:, 3], atol=1e-6)  # distances
    starts, directions = random_rays(points, 500, seed=6)
    (found, _, out), (found4, _, out4) = (ray_queries(m, starts, directions, np.float32(1e6))
                                          for m in (default, fours))
    np.testing.assert_array_equal(found, found4)
    np.testing.assert_allclose(out[:, 0], out4[:, 0], rtol=1e-6)  # t
    np.testing.assert_array_equal(out[:, 3], out4[:, 3])  # sides
    assert found.mean() > 0.3


def test_rays_through_shared_edges_and_vertices_hit_once():
    points, faces = cube()
    mesh = Mesh(points, faces)
    # each face's diagonal is an edge shared by its two triangles; rays hit its middle and
    # points along it, and the cube's corners
    targets, normals = [], []
    for a, b, c in faces[::2]:
        normal = np.cross(points[b] - points[a], points[c] - points[a])
        for s in (0.5, 0.25, 0.8):
            targets.append(points[a] + s * (points[c] - points[a]))
            normals.append(normal)
    for corner in points:
        targets.append(corner)
        normals.append(corner)
    targets, normals = np.array(targets), np.array(normals, np.float64)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    starts = (targets + 2.0 * normals).astype(np.float32)
    directions = (targets - starts).astype(np.float32)
    found, got_faces, out = ray_queries(mesh, starts, directions, np.float32(10.0))
    assert found.all()
    assert np.allclose(out[:, 0], 1.0, atol=1e-6)  # hit at the target
    assert (out[:, 3] == 1.0).all()  # from outside: the front side
    for target, face in zip(targets, got_faces):  # the face hit holds the target
        a, b, c = points[faces[face]].astype(np.float64)
        weights = np.linalg.lstsq(np.stack([a - c, b - c], 1), target - c, rcond=None)[0]
        assert (weights >= -1e-6).all() and weights.sum() <= 1 + 1e-6
        assert np.allclose(weights[0] * a + weights[1] * b + (1 - weights.sum()) * c, target)
    inside = ray_queries(mesh, np.zeros_like(starts), directions * -1.0, np.float32(10.0))
    assert inside[0].all() and (inside[2][:, 3] == -1.0).all()  # from inside: the back side


def test_rays_parallel_to_faces():
    points, faces = cube()
    mesh = Mesh(points, faces)
    starts = np.array([[-3, 0.5, 0.3], [-3, 1.0, 0.3], [-3, 1.5, 0.3], [0.2, -3, 1.0],
                       [0.0, 0.0, 0.0]], np.float32)
    directions = np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)
    found, got_faces, out = ray_queries(mesh, starts, directions, np.float32(10.0))
    assert found[0] and abs(out[0, 0] - 2.0) < 1e-6  # parallel to four faces, hits x = -1
    assert not found[2]  # above the cube
    assert found[4] and abs(out[4, 0] - 1.0) < 1e-6
    # grazing along a face plane (y = 1 / z = 1): a hit on the far side's edge is allowed,
    # nothing crashes and no NaN comes out
    assert np.isfinite(out).all()


def test_zero_area_triangles_are_skipped():
    points, faces = icosphere(2)
    extra_points = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.0, 0.0, 0.0]], np.float32)
    all_points = np.concatenate([points, extra_points])
    n = len(points)
    # collinear points, repeated indices
    degenerate = np.array([[n, n + 1, n + 2], [0, 0, 1], [5, 5, 5]], np.int32)
    all_faces = np.concatenate([faces, degenerate])
    mesh = Mesh(all_points, all_faces)
    queries = np.concatenate([points_near(points, 500, 0.7, seed=5),
                              np.array([[0.5, 0.01, 0.0], [0.1, 0.0, 0.0]], np.float32)])
    found, got_faces, out = check_closest(mesh, all_points, all_faces, queries)
    assert (got_faces < len(faces)).all()  # never a degenerate face
    starts, directions = random_rays(points, 200, seed=6)
    directions[0] = [1.0, 0.0, 0.0]  # along the collinear triangle
    starts[0] = [-0.5, 0.0, 0.0]
    found, got_faces, out = check_rays(mesh, all_points, all_faces, starts, directions)
    assert (got_faces[found] < len(faces)).all()
    assert set(np.nonzero([len(list(mesh_query_aabb(mesh, p, p))) for p in extra_points])[0]) \
        == {0, 1, 2}  # box queries still list them


def test_one_triangle():
    points = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    mesh = Mesh(points, np.array([0, 1, 2], np.int32))  # flat indices
    found, face, out = point_queries(mesh, np.array([[0.2, 0.2, 1.0], [0.2, 0.2, -1.0],
                                                     [2.0, 2.0, 0.0]], np.float32),
                                     np.float32(10.0))
    assert found.all() and (face == 0).all()
    assert out[:, 0].tolist() == [1.0, -1.0, 1.0]  # above: front; below: back (open mesh)
    assert np.allclose(out[:2, 1:3], [[0.6, 0.2], [0.6, 0.2]], atol=1e-6)
    assert np.allclose(out[:, 3], [1.0, 1.0, np.sqrt(2) * 1.5], atol=1e-6)
    found, face, out = ray_queries(mesh, np.array([[0.25, 0.25, 2.0]], np.float32),
                                   np.array([[0, 0, -1]], np.float32), np.float32(10.0))
    assert found[0] and np.allclose(out[0, :4], [2.0, 0.5, 0.25, 1.0]) and out[0, 6] == 1.0


def test_empty_mesh():
    mesh = Mesh(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.int32))
    found, faces, _ = point_queries(mesh, np.zeros((2, 3), np.float32), np.float32(10.0))
    assert not found.any() and (faces == -1).all()
    assert not ray_queries(mesh, np.zeros((1, 3), np.float32), np.ones((1, 3), np.float32),
                           np.float32(10.0))[0].any()
    assert list(mesh_query_aabb(mesh, sim.vec3(-1.0), sim.vec3(1.0))) == []
    mesh.refit()


def test_nan_queries_find_nothing():
    points, faces = cube()
    mesh = Mesh(points, faces)
    nan = np.float32(np.nan)
    found, _, _ = point_queries(mesh, np.array([[nan, 0, 0]], np.float32), np.float32(10.0))
    assert not found[0]
    found, _, out = ray_queries(mesh, np.array([[0, 0, 0], [-3, 0, 0], [0, 0, 0]], np.float32),
                                np.array([[nan, 1, 0], [0, 0, 0], [1, 0, 0]], np.float32),
                                np.float32(nan))
    assert not found.any()


# --------------------------------------------------------------------------
# Box queries, eval_position


def test_box_queries_equal_the_overlapping_triangle_boxes():
    points, faces = torus()
    mesh = Mesh(points, faces, bvh_leaf_size=3)
    rng = np.random.default_rng(7)
    lowers = points_near(points, 300, 0.6, seed=8)
    uppers = (lowers + rng.uniform(0, 0.3, (300, 3))).astype(np.float32)
    offsets, found = box_queries(mesh, lowers, uppers)
    tri = points[faces]
    tri_lo, tri_hi = tri.min(axis=1), tri.max(axis=1)
    for i in range(300):
        got = found[offsets[i]:offsets[i + 1]].tolist()
        expected = np.nonzero(np.all(tri_lo <= uppers[i], 1) & np.all(tri_hi >= lowers[i], 1))[0]
        assert sorted(got) == expected.tolist() and len(set(got)) == len(got)


def test_eval_position():
    points, faces = icosphere(1)
    mesh = Mesh(points, faces)
    for face, u, v in ((0, 1.0, 0.0), (7, 0.2, 0.3), (19, 0.0, 0.0)):
        expected = u * points[faces[face, 0]] + v * points[faces[face, 1]] + \
            (1 - u - v) * points[faces[face, 2]]
        assert np.allclose(np.asarray(mesh_eval_position(mesh, face, u, v)), expected, atol=1e-6)
    assert np.asarray(mesh_eval_position(mesh, 10_000, 0.5, 0.5)).tolist() == [0.0, 0.0, 0.0]


# --------------------------------------------------------------------------
# Refit, constructors, ids, Python mode, kernels


@pytest.mark.parametrize("constructor", ["sah", "median", "lbvh"])
def test_refit_after_points_move(constructor):
    points, faces = torus()
    mesh = Mesh(points, faces, bvh_constructor=constructor)
    assert mesh.bvh_constructor == constructor
    points *= np.array([1.5, 0.7, 2.0], np.float32)  # in place
    points += 0.3
    mesh.refit()
    queries = points_near(points, 600, 0.7, seed=9)
    check_closest(mesh, points, faces, queries)
    check_signs(mesh, points, faces, queries)
    starts, directions = random_rays(points, 150, seed=10)
    check_rays(mesh, points, faces, starts, directions)
    moved = (points * 0.5).astype(np.float32)
    mesh.points = moved  # assigning refits
    assert mesh.points is moved
    check_closest(mesh, moved, faces, queries[:200])


def test_uint64_id_python_mode_and_compiled_agree():
    points, faces = icosphere(2)
    mesh = Mesh(points, faces)
    queries = points_near(points, 30, 0.8, seed=11)
    found, got_faces, out = point_queries(mesh, queries, np.float32(10.0))
    by_id = point_queries(np.uint64(mesh.id), queries, np.float32(10.0))
    assert np.array_equal(by_id[1], got_faces) and np.array_equal(by_id[2], out)
    for i, p in enumerate(queries):
        q = mesh_query_point(mesh, sim.vec3(*p.tolist()), 10.0)
        assert (q.result, q.face, q.sign, q.u, q.v) == (found[i], got_faces[i], out[i, 0],
                                                         out[i, 1], out[i, 2])
        assert mesh_query_point(mesh.id, p, 10.0).face == q.face  # by id, point as an array
    starts, directions = random_rays(points, 20, seed=12)
    found, got_faces, out = ray_queries(mesh, starts, directions, np.float32(100.0))
    for i in range(20):
        r = mesh_query_ray(mesh, starts[i], directions[i], 100.0)
        assert (r.result, r.face, r.t, r.u, r.v, r.sign) == (
            found[i], got_faces[i], out[i, 0], out[i, 1], out[i, 2], out[i, 3])
        assert np.asarray(r.normal).tolist() == out[i, 4:7].tolist()
    assert "MeshQueryRay(result=" in repr(r) and "face=" in repr(q)


@sim.kernel
def signed_distance_kernel(mesh: sim.Mesh, queries: sim.array(dtype=sim.vec3),
                           out: sim.array(dtype=float)):
    i = sim.tid()
    p = queries[i]
    q = sim.mesh_query_point(mesh, p, 100.0)
    if q.result:
        out[i] = q.sign * sim.length(sim.mesh_eval_position(mesh, q.face, q.u, q.v) - p)


def test_sim_kernel_takes_the_mesh_or_its_id():
    points, faces = cube()
    mesh = Mesh(points, faces)
    queries = points_near(points, 500, 0.8, seed=13)
    expected = np.max(np.abs(queries), axis=1) - 1.0  # inside: exact; outside: a lower bound
    for mesh_argument in (mesh, mesh.id):
        out = np.zeros(len(queries), np.float32)
        sim.launch(signed_distance_kernel, dim=len(queries), inputs=[mesh_argument, queries, out])
        inside = expected < 0
        assert np.allclose(out[inside], expected[inside], atol=1e-6)
        assert (out[~inside] >= expected[~inside] - 1e-6).all() and (out[~inside] > 0).all()


def test_warp_query_next_form_and_typing_errors_name_the_builtin():
    with pytest.raises(TypeError, match=r"for face in sim.mesh_query_aabb"):
        spatial.mesh_query_aabb_next(None, 0)

    @numba.njit
    def bad_point(mesh):
        return sim.mesh_query_point(mesh, sim.vec3d(), 1.0).result

    @numba.njit
    def bad_mesh(mesh):
        return sim.mesh_query_ray(mesh, sim.vec3(), sim.vec3(), 1.0).result

    @numba.njit
    def bad_face(mesh):
        return sim.mesh_eval_position(mesh, 1.5, 0.0, 0.0)

    mesh = Mesh(*cube())
    with pytest.raises(TypingError, match=r"mesh_query_point\(.*point must be a vec3, not vec3d"):
        bad_point(mesh)
    with pytest.raises(TypingError, match=r"mesh must be a sim.Mesh or its id \(a 64-bit"):
        bad_mesh(np.float32(1.0))
    with pytest.raises(TypingError, match=r"mesh_eval_position\(.*face must be an integer"):
        bad_face(mesh)

    @numba.njit
    def bad_samples(mesh):
        return sim.mesh_query_point_sign_parity(mesh, sim.vec3(), 1.0, 1.5).sign

    @numba.njit
    def bad_root(mesh):
        return sim.mesh_query_ray_count_intersections(mesh, sim.vec3(), sim.vec3(), 0.5)

    with pytest.raises(TypingError, match=r"sign_parity\(.*n_sample must be an integer"):
        bad_samples(mesh)
    with pytest.raises(TypingError, match=r"count_intersections\(.*root must be an integer"):
        bad_root(mesh)
    with pytest.raises(TypeError, match=r"root=...\): expected an integer node index"):
        sim.mesh_query_ray_anyhit(mesh, sim.vec3(), sim.vec3(1, 0, 0), 1.0, 0.5)
    with pytest.raises(TypeError, match=r"q = sim.mesh_query_point_sign_parity"):
        sim.mesh_query_point_sign_parity(mesh, sim.vec3(), 1.0, 0.0, 1, 0.0, 0.0)


# --------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("indices, error, message", [
    (np.array([[0, 1, 8]], np.int32), ValueError, r"index 8 of triangle 0 is out of range"),
    (np.array([[0, 1, 2], [0, -1, 2]], np.int32), ValueError, r"index -1 of triangle 1"),
    (np.array([[0.0, 1.0, 2.0]]), TypeError, r"indices must be integers \(int32\), not float64"),
    (np.array([[0, 1, 2, 3]], np.int32), ValueError, r"shape \(m, 3\) or \(3 m,\), not \(1, 4\)"),
    (np.array([0, 1, 2, 3], np.int32), ValueError, r"not \(4,\)"),
    ([[0, 1, 2]], TypeError, r"expected a NumPy array .* not list"),
])
def test_bad_indices_name_the_argument(indices, error, message):
    points, _ = cube()
    with pytest.raises(error, match=r"Mesh\(indices=\.\.\.\): .*" + message):
        Mesh(points, indices)


def test_int64_indices_are_converted():
    points, faces = cube()
    mesh = Mesh(points, faces.astype(np.int64))
    assert mesh.indices.dtype == np.int32 and mesh.indices.tolist() == faces.reshape(-1).tolist()


@pytest.mark.parametrize("points, error, message", [
    (np.zeros((8, 3), np.float64), TypeError, r"points must be float32"),
    (np.zeros((8, 2), np.float32), ValueError, r"shape \(n, 3\)"),
    (np.full((8, 3), np.nan, np.float32), ValueError, r"points\[0\] = .* is not finite"),
])
def test_bad_points_name_the_argument(points, error, message):
    with pytest.raises(error, match=r"Mesh\(points=\.\.\.\): .*" + message):
        Mesh(points, cube()[1])


def test_bad_refits_and_options_name_the_argument():
    points, faces = cube()
    mesh = Mesh(points, faces)
    with pytest.raises(ValueError, match=r"Mesh.points\(points=\.\.\.\): the mesh has 8 points"):
        mesh.points = np.zeros((9, 3), np.float32)
    points[3, 0] = np.inf
    with pytest.raises(ValueError, match=r"Mesh.refit\(points=\.\.\.\): points\[3\]"):
        mesh.refit()
    with pytest.raises(ValueError, match=r"Mesh\(bvh_constructor='fast'\)"):
        Mesh(*cube(), bvh_constructor="fast")
    with pytest.raises(ValueError, match=r"Mesh\(bvh_leaf_size=0\)"):
        Mesh(*cube(), bvh_leaf_size=0)


def test_cuda_mesh_passed_to_cpu_code_is_refused():
    fake = object.__new__(Mesh)
    fake.device = "cuda:0"
    with pytest.raises(ValueError, match=r"a Mesh on cuda:0 was passed to CPU code"):
        point_queries(fake, np.zeros((1, 3), np.float32), np.float32(1.0))


def test_native_layouts_match():
    from numba_sim.spatial.common import (
        MESH_BVH_OFFSET,
        MESH_EDGE_LENGTH_SUM_OFFSET,
        MESH_HIT_BYTES,
        MESH_SOLID_ANGLE_OFFSET,
        MESH_VELOCITIES_OFFSET,
        MESH_WORDS,
        SOLID_ANGLE_PROPS_FLOATS,
        host_functions,
    )

    sizes = np.zeros(7, np.int32)
    host_functions["sim_mesh_layout"](sizes.ctypes.data)
    assert sizes.tolist() == [8 * MESH_WORDS, MESH_HIT_BYTES, MESH_BVH_OFFSET,
                              MESH_EDGE_LENGTH_SUM_OFFSET, MESH_SOLID_ANGLE_OFFSET,
                              4 * SOLID_ANGLE_PROPS_FLOATS, MESH_VELOCITIES_OFFSET]


def test_public_names():
    for name in ("Mesh", "mesh_query_point", "mesh_query_ray", "mesh_query_aabb",
                 "mesh_eval_position", "mesh_query_aabb_next", "mesh_query_ray_anyhit",
                 "mesh_query_ray_count_intersections", "mesh_query_point_sign_parity"):
        assert name in spatial.__all__ and getattr(sim, name) is getattr(spatial, name)
    assert isinstance(Mesh(*cube())._numba_type_, types.Type)
