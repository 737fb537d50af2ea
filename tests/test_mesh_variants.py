"""Warp's variants of the mesh point query on the CPU, against brute force:
mesh_query_point_no_sign, mesh_query_point_sign_normal, mesh_query_furthest_point_no_sign,
mesh_query_point_sign_winding_number (and Mesh(support_winding_number=True)).

Closest and farthest points by float64 brute force over all triangles
(tests/mesh_shapes.py), signs by the generalized winding number; Python mode
equals compiled code (the same host function); Warp's output-argument forms
are errors naming the struct form. Warp's own numbers: tests/test_mesh_variants_warp.py.
"""

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_sim as sim
from numba_sim import spatial
from numba_sim.spatial import Mesh
from numba_sim.spatial.common import MESH_EDGE_LENGTH_SUM_OFFSET, address, host_functions

from mesh_shapes import closest_points, cube, icosphere, torus, winding_numbers
from test_mesh import points_near

SHAPES = {"cube": cube, "icosphere": lambda: icosphere(2), "torus": torus}


@numba.njit
def variant_queries(mesh, queries, max_dist, epsilon, min_dist):
    """Per query and variant (no_sign, sign_normal, furthest): found, face, [sign, u, v, dist]."""
    n = queries.shape[0]
    found = np.zeros((3, n), np.bool_)
    faces = np.zeros((3, n), np.int32)
    out = np.zeros((3, n, 4), np.float32)
    for i in range(n):
        p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        for k in range(3):
            if k == 0:
                q = sim.mesh_query_point_no_sign(mesh, p, max_dist)
            elif k == 1:
                q = sim.mesh_query_point_sign_normal(mesh, p, max_dist, epsilon)
            else:
                q = sim.mesh_query_furthest_point_no_sign(mesh, p, min_dist)
            found[k, i] = q.result
            faces[k, i] = q.face
            out[k, i, 0] = q.sign
            out[k, i, 1] = q.u
            out[k, i, 2] = q.v
            if q.result:
                out[k, i, 3] = sim.length(sim.mesh_eval_position(mesh, q.face, q.u, q.v) - p)
    return found, faces, out


@numba.njit
def winding_signs(mesh, queries, max_dist, accuracy, threshold):
    """mesh_query_point_sign_winding_number: (found, face, u, v, sign) per query, and the
    signs of its default-argument forms."""
    n = queries.shape[0]
    found = np.zeros(n, np.bool_)
    faces = np.zeros(n, np.int32)
    out = np.zeros((n, 5), np.float32)
    for i in range(n):
        p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        q = sim.mesh_query_point_sign_winding_number(mesh, p, max_dist, accuracy, threshold)
        found[i] = q.result
        faces[i] = q.face
        out[i, 0] = q.sign
        out[i, 1] = q.u
        out[i, 2] = q.v
        out[i, 3] = sim.mesh_query_point_sign_winding_number(mesh, p, max_dist).sign
        out[i, 4] = sim.mesh_query_point_sign_winding_number(mesh, p, max_dist, accuracy).sign
    return found, faces, out


@numba.njit
def default_epsilon(mesh, queries):
    """mesh_query_point_sign_normal without its epsilon (Warp's default, 1e-3)."""
    out = np.zeros(queries.shape[0], np.float32)
    for i in range(queries.shape[0]):
        p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        out[i] = sim.mesh_query_point_sign_normal(mesh, p, 1.0e6).sign
    return out


def run(mesh, queries, max_dist, epsilon=1e-3, min_dist=0.0):
    return variant_queries(mesh, queries, np.float32(max_dist), np.float32(epsilon),
                           np.float32(min_dist))


def farthest_distances(points, faces, queries):
    corners = points.astype(np.float64)[np.unique(faces)]
    return np.sqrt(((queries[:, None, :] - corners[None]) ** 2).sum(-1).max(axis=1))


@pytest.mark.parametrize("shape", list(SHAPES))
def test_closest_points_signs_and_farthest_points_equal_brute_force(shape):
    points, faces = SHAPES[shape]()
    mesh = Mesh(points, faces)
    queries = points_near(points, 1500, 0.8, seed=40)
    found, got_faces, out = run(mesh, queries, 1e6)
    d2, _ = closest_points(points, faces, queries)
    nearest = np.sqrt(d2)
    for k in (0, 1):  # no_sign, sign_normal: the closest distance
        assert found[k].all()
        assert np.allclose(out[k, :, 3], nearest, rtol=1e-5, atol=1e-6)
    assert np.array_equal(got_faces[0], got_faces[1]) or (got_faces[0] == got_faces[1]).mean() > 0.9
    assert (out[0, :, 0] == 0.0).all()  # no sign
    far = nearest > 1e-3
    inside = winding_numbers(points, faces, queries) > 0.5
    wrong = np.nonzero(far & ((out[1, :, 0] < 0) != inside))[0]
    assert len(wrong) == 0, queries[wrong[:5]]
    assert np.isin(out[1, :, 0], (-1.0, 1.0)).all()
    # furthest: a vertex, as far as the farthest vertex
    assert found[2].all() and (out[2, :, 0] == 0.0).all()
    assert np.allclose(out[2, :, 3], farthest_distances(points, faces, queries), rtol=1e-5)
    assert np.isin(out[2, :, 1:3], (0.0, 1.0)).all()
    # the default epsilon is Warp's
    assert np.array_equal(default_epsilon(mesh, queries), run(mesh, queries, 1e6, 1e-3)[2][1, :, 0])


def winding_number(mesh, p, accuracy=2.0):
    return host_functions["sim_mesh_winding_number"](mesh.id, address(np.ascontiguousarray(p)),
                                                     accuracy)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_winding_numbers_and_signs_equal_brute_force(shape):
    points, faces = SHAPES[shape]()
    mesh = Mesh(points, faces, support_winding_number=True)
    queries = points_near(points, 1000, 0.8, seed=43)
    exact = winding_numbers(points, faces, queries)
    # the fast winding number: within 1e-2 for accuracy 2, and nearly exact for accuracy 1e3
    # (which descends to every leaf)
    approx = np.array([winding_number(mesh, p) for p in queries[:300]])
    assert np.abs(approx - exact[:300]).max() < 1e-2
    precise = np.array([winding_number(mesh, p, 1e3) for p in queries[:100]])
    assert np.abs(precise - exact[:100]).max() < 1e-4
    found, got_faces, out = winding_signs(mesh, queries, np.float32(1e6), np.float32(2.0),
                                          np.float32(0.5))
    assert found.all()
    no_sign = run(mesh, queries, 1e6)
    assert np.array_equal(got_faces, no_sign[1][0])  # the closest point is no_sign's
    assert np.array_equal(out[:, 1:3], no_sign[2][0, :, 1:3])
    clear = np.abs(exact - 0.5) > 0.05
    assert np.array_equal((out[clear, 0] < 0), exact[clear] > 0.5)
    assert np.array_equal(out[:, 0], out[:, 3]) and np.array_equal(out[:, 0], out[:, 4])
    # a threshold above every winding number: all outside
    _, _, high = winding_signs(mesh, queries, np.float32(1e6), np.float32(2.0), np.float32(2.0))
    assert (high[:, 0] == 1.0).all()


def test_winding_number_signs_open_meshes_and_falls_back_to_rays():
    points, faces = cube()
    open_faces = faces[2:]  # one side of the cube missing
    queries = points_near(points, 400, 0.45, seed=44)  # inside the cube
    wound = Mesh(points, open_faces, support_winding_number=True)
    _, _, out = winding_signs(wound, queries, np.float32(1e6), np.float32(2.0), np.float32(0.5))
    exact = winding_numbers(points, open_faces, queries)
    assert (exact > 0.5).mean() > 0.9
    assert np.array_equal(out[:, 0] < 0, exact > 0.5)
    # without support_winding_number: Warp's fallback, three rays, which a closed mesh
    # answers exactly
    closed = Mesh(points, faces)
    outside = points_near(points, 200, 2.0, seed=45)
    outside = outside[np.abs(outside).max(axis=1) > 1.01]
    _, _, out = winding_signs(closed, np.concatenate([queries, outside]), np.float32(1e6),
                              np.float32(2.0), np.float32(0.5))
    assert (out[:len(queries), 0] == -1.0).all() and (out[len(queries):, 0] == 1.0).all()


def test_winding_number_expansions_follow_refits():
    points, faces = torus()
    mesh = Mesh(points, faces, support_winding_number=True)
    assert mesh.support_winding_number and not Mesh(points, faces).support_winding_number
    points *= np.float32(1.5)
    points += np.float32(0.25)
    mesh.refit()
    queries = points_near(points, 200, 0.8, seed=46)
    approx = np.array([winding_number(mesh, p) for p in queries])
    assert np.abs(approx - winding_numbers(points, faces, queries)).max() < 1e-2
    with pytest.raises(TypeError, match=r"Mesh\(support_winding_number=\.\.\.\): expected True"):
        Mesh(points, faces, support_winding_number="yes")


def test_distance_limits():
    points, faces = icosphere(2)
    mesh = Mesh(points, faces)
    queries = points_near(points, 400, 1.5, seed=41)
    nearest = np.sqrt(closest_points(points, faces, queries)[0])
    farthest = farthest_distances(points, faces, queries)
    limit = 0.3
    found, _, out = run(mesh, queries, limit)
    clear = np.abs(nearest - limit) > 1e-5
    assert np.array_equal(found[0][clear], (nearest < limit)[clear])
    assert np.array_equal(found[1][clear], (nearest < limit)[clear])
    assert (out[0, found[0], 3] < limit + 1e-6).all()
    limit = 1.8  # furthest: only points farther than min_dist
    found, faces_found, out = run(mesh, queries, 10.0, min_dist=limit)
    clear = np.abs(farthest - limit) > 1e-5
    assert np.array_equal(found[2][clear], (farthest > limit)[clear])
    assert (faces_found[2][~found[2]] == -1).all()


def test_slivers_are_skipped_as_warp_skips_them():
    # a unit triangle, and a sliver (normal length / sum of squared edges < 1e-6) nearer to p
    points = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0],
                       [0, 0, 1], [1, 0, 1], [0.5, 1e-7, 1]], np.float32)
    faces = np.array([[0, 1, 2], [3, 4, 5]], np.int32)
    mesh = Mesh(points, faces)
    p = sim.vec3(0.5, 0.0, 0.9)
    for query in (sim.mesh_query_point_no_sign, sim.mesh_query_point_sign_normal):
        q = query(mesh, p, 10.0)
        assert q.result and q.face == 0
    assert sim.mesh_query_furthest_point_no_sign(mesh, p, 0.0).face == 0
    assert sim.mesh_query_point(mesh, p, 10.0).face == 1  # the pseudo-normal query keeps it


def test_epsilon_merges_equally_close_faces():
    points, faces = cube()
    mesh = Mesh(points, faces)
    # just outside a cube edge, and just inside near a corner: the pseudo-normal decides
    for point, sign in (((1.0001, 1.0001, 0.3), 1.0), ((0.999, 0.999, 0.999), -1.0),
                        ((1.2, 1.2, 1.2), 1.0), ((-0.5, 0.2, 0.1), -1.0)):
        for epsilon in (1e-3, 0.05):
            q = sim.mesh_query_point_sign_normal(mesh, sim.vec3(*point), 10.0, epsilon)
            assert q.result and q.sign == sign, (point, epsilon)


def test_edge_length_sum_is_warps_average_times_three_m():
    """The descriptor's edge_length_sum: Warp's sequential float32 sum, rebuilt by refits."""
    points, faces = torus()
    mesh = Mesh(points, faces)

    def expected(pts):
        total = np.float32(0.0)
        for a, b, c in pts[faces]:
            total += (np.float32(np.linalg.norm(a - b)) + np.float32(np.linalg.norm(a - c))
                      + np.float32(np.linalg.norm(c - b)))
        return total

    slot = MESH_EDGE_LENGTH_SUM_OFFSET // 4  # the float32 slot of sim::Mesh::edge_length_sum
    mesh._storage.prepare_signs()  # (the first signed query would)
    assert mesh._storage.descriptor.view(np.float32)[slot] == pytest.approx(expected(points), rel=1e-6)
    points *= np.float32(2.0)
    mesh.refit()
    mesh._storage.prepare_signs()
    assert mesh._storage.descriptor.view(np.float32)[slot] == pytest.approx(expected(points), rel=1e-6)


def test_signed_queries_make_the_normals_at_first_use_and_after_refits():
    """A host build leaves edge faces and vertex normals to the first signed query,
    which makes them once; a refit makes the normals stale, the next query remakes them."""
    points, faces = torus()
    mesh = Mesh(points, faces)
    storage = mesh._storage
    assert not storage.vertex_normals.any() and not storage.edge_faces.any()
    query = np.array([0.1, 0.2, 0.3], np.float32)
    first = sim.mesh_query_point(mesh, sim.vec3(*query), 10.0)
    normals = storage.vertex_normals.copy()
    assert np.abs(normals).sum() > 0 and (storage.edge_faces >= 0).all()  # a closed torus
    storage.prepare_signs()  # already up to date: nothing changes
    assert np.array_equal(storage.vertex_normals, normals)

    def turned(v):  # a quarter turn about z
        return np.stack([-v[..., 1], v[..., 0], v[..., 2]], axis=-1).astype(np.float32)

    points[:] = turned(points)
    mesh.refit()
    again = sim.mesh_query_point(mesh, sim.vec3(*turned(query)), 10.0)
    assert np.allclose(storage.vertex_normals, turned(normals), atol=1e-5)
    assert (first.result, first.sign, first.face) == (again.result, again.sign, again.face)


def test_python_mode_equals_compiled_and_takes_the_id():
    points, faces = torus()
    mesh = Mesh(points, faces)
    queries = points_near(points, 40, 0.8, seed=42)
    found, got_faces, out = run(mesh, queries, 10.0, 0.01, 0.5)
    by_id = run(np.uint64(mesh.id), queries, 10.0, 0.01, 0.5)
    assert all(np.array_equal(x, y) for x, y in zip(by_id, (found, got_faces, out)))
    calls = (lambda m, p: spatial.mesh_query_point_no_sign(m, p, 10.0),
             lambda m, p: spatial.mesh_query_point_sign_normal(m, p, 10.0, 0.01),
             lambda m, p: spatial.mesh_query_furthest_point_no_sign(m, p, 0.5))
    for k, call in enumerate(calls):
        for i, p in enumerate(queries):
            for handle, point in ((mesh, sim.vec3(*p.tolist())), (mesh.id, p)):
                q = call(handle, point)
                assert (q.result, q.face, q.sign, q.u, q.v) == (
                    found[k, i], got_faces[k, i], out[k, i, 0], out[k, i, 1], out[k, i, 2])
    assert "MeshQueryPoint(result=" in repr(q)
    wound = Mesh(points, faces, support_winding_number=True)
    found, got_faces, out = winding_signs(wound, queries, np.float32(10.0), np.float32(3.0),
                                          np.float32(0.4))
    for i, p in enumerate(queries):
        q = spatial.mesh_query_point_sign_winding_number(wound, p, 10.0, 3.0, 0.4)
        assert (q.result, q.face, q.sign, q.u, q.v) == (found[i], got_faces[i], out[i, 0],
                                                         out[i, 1], out[i, 2])


def test_empty_and_nan_queries_find_nothing():
    points, faces = cube()
    mesh = Mesh(points, faces)
    empty = Mesh(points, np.zeros((0, 3), np.int32))
    nan = np.full((1, 3), np.nan, np.float32)
    for m, q in ((mesh, nan), (empty, np.zeros((1, 3), np.float32))):
        found, got_faces, _ = run(m, q, 10.0)
        assert not found.any() and (got_faces == -1).all()


def test_warp_output_argument_forms_name_the_struct_form():
    mesh = Mesh(*cube())
    p = sim.vec3(0.0, 0.0, 0.0)
    for name, args in (("mesh_query_point", (0.0, 0, 0.0, 0.0)),
                       ("mesh_query_point_no_sign", (0, 0.0, 0.0)),
                       ("mesh_query_furthest_point_no_sign", (0, 0.0, 0.0)),
                       ("mesh_query_point_sign_normal", (0.0, 0, 0.0, 0.0)),
                       ("mesh_query_point_sign_winding_number", (0.0, 0, 0.0, 0.0))):
        with pytest.raises(TypeError, match=rf"output-argument form {name}\(.*`q = sim.{name}\("):
            getattr(sim, name)(mesh, p, 1.0, *args)

    @numba.njit
    def out_form(mesh):
        face = 0
        u = 0.0
        v = 0.0
        return sim.mesh_query_point_no_sign(mesh, sim.vec3(0.0, 0.0, 0.0), 1.0, face, u, v)

    with pytest.raises(TypingError, match=r"mesh_query_point_no_sign\(.*struct: `q = sim\."):
        out_form(mesh)

    @numba.njit
    def bad_epsilon(mesh):
        return sim.mesh_query_point_sign_normal(mesh, sim.vec3(0.0, 0.0, 0.0), 1.0,
                                                sim.vec3(0.0, 0.0, 0.0)).sign

    with pytest.raises(TypingError, match=r"mesh_query_point_sign_normal\(.*epsilon must be"):
        bad_epsilon(mesh)


def test_public_names():
    for name in ("mesh_query_point_no_sign", "mesh_query_point_sign_normal",
                 "mesh_query_furthest_point_no_sign", "mesh_query_point_sign_winding_number"):
        assert name in spatial.__all__ and getattr(sim, name) is getattr(spatial, name)


@numba.njit
def velocities_at(mesh, faces, bary):
    out = np.zeros((faces.shape[0], 3), np.float32)
    for i in range(faces.shape[0]):
        v = sim.mesh_eval_velocity(mesh, faces[i], bary[i, 0], bary[i, 1])
        out[i, 0], out[i, 1], out[i, 2] = v[0], v[1], v[2]
    return out


def test_velocities_in_warps_argument_order_and_mesh_eval_velocity():
    points, faces = torus()
    rng = np.random.default_rng(47)
    velocities = rng.normal(size=points.shape).astype(np.float32)
    mesh = Mesh(points, faces, velocities)  # Warp's order: points, indices, velocities
    assert mesh.velocities is velocities
    chosen = rng.integers(0, len(faces), 200).astype(np.int32)
    bary = rng.uniform(0, 0.5, (200, 2)).astype(np.float32)
    got = velocities_at(mesh, chosen, bary)
    v = velocities.astype(np.float64)[faces[chosen]]
    u, w = bary[:, :1].astype(np.float64), bary[:, 1:].astype(np.float64)
    expected = u * v[:, 0] + w * v[:, 1] + (1 - u - w) * v[:, 2]
    assert np.allclose(got, expected, atol=1e-5)
    assert np.array_equal(np.asarray(spatial.mesh_eval_velocity(mesh, chosen[0], bary[0, 0],
                                                                bary[0, 1])), got[0])
    # assignable; None (and faces off the mesh) give zeros
    mesh.velocities = (2 * velocities).astype(np.float32)
    assert np.allclose(velocities_at(mesh, chosen, bary), 2 * got, atol=1e-5)
    assert (velocities_at(mesh, np.array([-1, len(faces)], np.int32), bary[:2]) == 0).all()
    mesh.velocities = None
    assert (velocities_at(mesh, chosen, bary) == 0).all()
    with pytest.raises(ValueError, match=r"Mesh\(velocities=\.\.\.\): the mesh has"):
        Mesh(points, faces, velocities[:-1])
    with pytest.raises(TypeError, match=r"Mesh\(velocities=\.\.\.\)"):
        Mesh(points, faces, velocities.astype(np.float64))
    assert "mesh_eval_velocity" in spatial.__all__
