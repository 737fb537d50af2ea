"""numba_sim's mesh queries answer as Warp's (warp-lang's CPU Mesh).

Skipped when warp-lang is not installed. Closest points: the same distance
(1e-5 relative) and, for the same face, the same u and v; the same sign
for points farther than 1e-3 from the surface (Warp casts rays, numba_sim
uses pseudo-normals: on closed meshes they agree). Rays: the same face, and
for it the same t, u, v, sign and normal bit for bit (the same watertight
test, operation for operation).
"""

import numpy as np
import pytest

from numba_sim.spatial import Mesh

from mesh_shapes import closest_points, cube, icosphere, torus
from test_mesh import point_queries, points_near, random_rays, ray_queries

wp = pytest.importorskip("warp")

SHAPES = {"cube": cube, "icosphere": lambda: icosphere(3), "torus": torus}


@pytest.fixture(scope="module")
def warp_queries():
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def points_kernel(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3),
                      out: wp.array2d(dtype=float), faces: wp.array(dtype=int)):
        i = wp.tid()
        p = queries[i]
        q = wp.mesh_query_point(mesh, p, 1.0e6)
        faces[i] = q.face
        out[i, 0] = q.sign
        out[i, 1] = q.u
        out[i, 2] = q.v
        out[i, 3] = wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - p)

    @wp.kernel
    def rays_kernel(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3),
                    directions: wp.array(dtype=wp.vec3), out: wp.array2d(dtype=float),
                    faces: wp.array(dtype=int)):
        i = wp.tid()
        r = wp.mesh_query_ray(mesh, starts[i], directions[i], 1.0e6)
        faces[i] = wp.where(r.result, r.face, -1)
        out[i, 0] = r.t
        out[i, 1] = r.u
        out[i, 2] = r.v
        out[i, 3] = wp.sign(r.sign)
        out[i, 4] = r.normal[0]
        out[i, 5] = r.normal[1]
        out[i, 6] = r.normal[2]

    def run(points, faces, a, b=None):
        mesh = wp.Mesh(wp.array(points, dtype=wp.vec3, device="cpu"),
                       wp.array(faces.reshape(-1), dtype=wp.int32, device="cpu"))
        out = wp.zeros((len(a), 7), dtype=float, device="cpu")
        found = wp.zeros(len(a), dtype=int, device="cpu")
        vec = [wp.array(x, dtype=wp.vec3, device="cpu") for x in (a, b) if x is not None]
        wp.launch(points_kernel if b is None else rays_kernel, dim=len(a), device="cpu",
                  inputs=[mesh.id, *vec, out, found])
        return found.numpy(), out.numpy()

    return run


@pytest.mark.parametrize("shape", list(SHAPES))
def test_closest_points_and_signs_equal_warps(warp_queries, shape):
    points, faces = SHAPES[shape]()
    queries = points_near(points, 2000, 0.7, seed=30)
    ours = point_queries(Mesh(points, faces), queries, np.float32(1e6))
    warp_faces, warp_out = warp_queries(points, faces, queries)
    assert np.allclose(ours[2][:, 3], warp_out[:, 3], rtol=1e-5, atol=1e-6)
    d2, _ = closest_points(points, faces, queries)
    far = np.sqrt(d2) > 1e-3
    assert np.array_equal(ours[2][far, 0], warp_out[far, 0])
    same = ours[1] == warp_faces  # elsewhere: equally close faces (at edges and vertices)
    assert same.mean() > 0.5
    assert np.allclose(ours[2][same, 1:3], warp_out[same, 1:3], atol=1e-5)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_rays_equal_warps(warp_queries, shape):
    points, faces = SHAPES[shape]()
    starts, directions = random_rays(points, 2000, seed=31)
    found, got_faces, out = ray_queries(Mesh(points, faces), starts, directions, np.float32(1e6))
    warp_faces, warp_out = warp_queries(points, faces, starts, directions)
    assert np.array_equal(found, warp_faces >= 0)
    same = got_faces == warp_faces
    assert same.mean() > 0.99
    assert np.allclose(out[found, 0], warp_out[found, 0], rtol=1e-5, atol=1e-6)
    both = same & found
    # the same watertight test, operation for operation: t, u, v and normal bit for bit
    assert np.array_equal(out[both, 0:3], warp_out[both, 0:3])
    assert np.array_equal(out[both, 3], warp_out[both, 3])  # sign
    assert np.array_equal(out[both, 4:7], warp_out[both, 4:7])  # normal
