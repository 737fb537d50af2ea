"""Warp's variants of the mesh point query answer as Warp's (warp-lang's CPU Mesh).

mesh_query_point_no_sign, mesh_query_point_sign_normal (default and explicit
epsilon), mesh_query_furthest_point_no_sign and
mesh_query_point_sign_winding_number (with and without
support_winding_number) run on the same meshes and points in both. Each triangle is handled as Warp handles it, so where both
pick the same face, u and v are Warp's bit for bit, and the distances agree
to float32 rounding; faces differ only between equally distant faces (the
BVHs differ, so do their traversal orders). Signs agree wherever the point is
not within 1e-3 of the surface. Skipped when warp-lang is not installed.
"""

import numpy as np
import pytest

from numba_sim.spatial import Mesh

from mesh_shapes import closest_points, cube, icosphere, torus
from test_mesh import points_near
from mesh_shapes import winding_numbers
from test_mesh_variants import run, winding_signs

wp = pytest.importorskip("warp")

SHAPES = {"cube": cube, "icosphere": lambda: icosphere(3), "torus": torus}


@pytest.fixture(scope="module")
def warp_variants():
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def variants_kernel(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3), epsilon: float,
                        min_dist: float, out: wp.array3d(dtype=float),
                        faces: wp.array2d(dtype=int)):
        i = wp.tid()
        p = queries[i]
        for k in range(4):
            if k == 0:
                q = wp.mesh_query_point_no_sign(mesh, p, 1.0e6)
            elif k == 1:
                q = wp.mesh_query_point_sign_normal(mesh, p, 1.0e6, epsilon)
            elif k == 2:
                q = wp.mesh_query_point_sign_normal(mesh, p, 1.0e6)
            else:
                q = wp.mesh_query_furthest_point_no_sign(mesh, p, min_dist)
            faces[k, i] = wp.where(q.result, q.face, -1)
            out[k, i, 0] = q.sign
            out[k, i, 1] = q.u
            out[k, i, 2] = q.v
            if q.result:
                out[k, i, 3] = wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - p)

    def run_warp(points, faces, queries, epsilon, min_dist):
        mesh = wp.Mesh(wp.array(points, dtype=wp.vec3, device="cpu"),
                       wp.array(faces.reshape(-1), dtype=wp.int32, device="cpu"))
        out = wp.zeros((4, len(queries), 4), dtype=float, device="cpu")
        found = wp.zeros((4, len(queries)), dtype=int, device="cpu")
        wp.launch(variants_kernel, dim=len(queries), device="cpu",
                  inputs=[mesh.id, wp.array(queries, dtype=wp.vec3, device="cpu"), epsilon,
                          min_dist, out, found])
        return found.numpy(), out.numpy()

    @wp.kernel
    def winding_kernel(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3),
                       out: wp.array2d(dtype=float), faces: wp.array(dtype=int)):
        i = wp.tid()
        q = wp.mesh_query_point_sign_winding_number(mesh, queries[i], 1.0e6)
        faces[i] = wp.where(q.result, q.face, -1)
        out[i, 0] = q.sign
        out[i, 1] = q.u
        out[i, 2] = q.v

    def run_winding(points, faces, queries, support):
        mesh = wp.Mesh(wp.array(points, dtype=wp.vec3, device="cpu"),
                       wp.array(faces.reshape(-1), dtype=wp.int32, device="cpu"),
                       support_winding_number=support)
        out = wp.zeros((len(queries), 3), dtype=float, device="cpu")
        found = wp.zeros(len(queries), dtype=int, device="cpu")
        wp.launch(winding_kernel, dim=len(queries), device="cpu",
                  inputs=[mesh.id, wp.array(queries, dtype=wp.vec3, device="cpu"), out, found])
        return found.numpy(), out.numpy()

    run_warp.winding = run_winding
    return run_warp


def check_same(ours_found, ours_faces, ours_out, warp_faces, warp_out, min_same=0.5):
    assert np.array_equal(ours_found, warp_faces >= 0)
    assert np.allclose(ours_out[:, 3], warp_out[:, 3], rtol=1e-6, atol=1e-7)
    same = ours_faces == warp_faces
    assert same.mean() >= min_same
    assert np.array_equal(ours_out[same, 1:3], warp_out[same, 1:3])  # u, v bit for bit
    return same


@pytest.mark.parametrize("shape", list(SHAPES))
def test_variants_equal_warps(warp_variants, shape):
    points, faces = SHAPES[shape]()
    queries = points_near(points, 2000, 0.7, seed=50)
    epsilon, min_dist = 0.01, 0.5
    found, got_faces, out = run(Mesh(points, faces), queries, 1e6, epsilon, min_dist)
    _, _, out_default = run(Mesh(points, faces), queries, 1e6, 1e-3, min_dist)
    warp_faces, warp_out = warp_variants(points, faces, queries, epsilon, min_dist)
    far = np.sqrt(closest_points(points, faces, queries)[0]) > 1e-3
    # no_sign
    check_same(found[0], got_faces[0], out[0], warp_faces[0], warp_out[0])
    assert (out[0, :, 0] == 0.0).all() and (warp_out[0, :, 0] == 0.0).all()
    # sign_normal with epsilon 0.01, and with Warp's default
    check_same(found[1], got_faces[1], out[1], warp_faces[1], warp_out[1])
    assert np.array_equal(out[1, far, 0], warp_out[1, far, 0])
    assert np.array_equal(out_default[1, far, 0], warp_out[2, far, 0])
    # furthest: a vertex, which several faces share (each picks its own first one)
    check_same(found[2], got_faces[2], out[2], warp_faces[3], warp_out[3], min_same=0.0)
    assert np.array_equal(out[2, :, 3], warp_out[3, :, 3])  # the same farthest vertex


def test_no_sign_variants_beyond_the_limits(warp_variants):
    points, faces = icosphere(2)
    queries = points_near(points, 500, 1.5, seed=51)
    found, got_faces, out = run(Mesh(points, faces), queries, 1e6, 1e-3, 1.8)
    warp_faces, warp_out = warp_variants(points, faces, queries, 1e-3, 1.8)
    check_same(found[2], got_faces[2], out[2], warp_faces[3], warp_out[3], min_same=0.0)
    assert 0 < found[2].sum() < len(queries)


@pytest.mark.parametrize("support", [True, False], ids=["winding-number", "rays"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_winding_number_signs_equal_warps(warp_variants, shape, support):
    points, faces = SHAPES[shape]()
    queries = points_near(points, 1500, 0.7, seed=52)
    mesh = Mesh(points, faces, support_winding_number=support)
    found, got_faces, out = winding_signs(mesh, queries, np.float32(1e6), np.float32(2.0),
                                          np.float32(0.5))
    warp_faces, warp_out = warp_variants.winding(points, faces, queries, support)
    assert np.array_equal(found, warp_faces >= 0)
    same = got_faces == warp_faces
    assert same.mean() > 0.5 and np.array_equal(out[same, 1:3], warp_out[same, 1:3])
    exact = winding_numbers(points, faces, queries)
    far = np.sqrt(closest_points(points, faces, queries)[0]) > 1e-3
    clear = far & (np.abs(exact - 0.5) > 0.05)
    assert np.array_equal(out[clear, 0], warp_out[clear, 0])
