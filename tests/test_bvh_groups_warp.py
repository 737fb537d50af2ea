"""Grouped BVH queries answer as Warp's (warp-lang's CPU Bvh with groups).

The same boxes and group ids in both; from each group's root (Warp's
bvh_get_group_root, ours), box and ray queries yield the same items; a
missing group's root is -1 in both, and a query from it covers the whole tree.
Node indices differ (the trees differ), so roots are compared as found / -1.
Skipped when warp-lang is not installed.
"""

import numpy as np
import pytest

from numba_sim.spatial import Bvh, Mesh

from test_bvh import random_boxes, random_rays, ray_hits
from mesh_shapes import icosphere
from test_bvh_groups import collect, group_rays

wp = pytest.importorskip("warp")


@pytest.fixture(scope="module")
def warp_groups():
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def group_kernel(bvh: wp.uint64, groups: wp.array(dtype=int), a: wp.array(dtype=wp.vec3),
                     b: wp.array(dtype=wp.vec3), ray: int, hits: wp.array3d(dtype=int),
                     roots: wp.array(dtype=int)):
        g, i = wp.tid()
        root = wp.bvh_get_group_root(bvh, groups[g])
        if i == 0:
            roots[g] = root
        item = int(0)
        if ray == 1:
            query = wp.bvh_query_ray(bvh, a[i], b[i], root)
            while wp.bvh_query_next(query, item):
                hits[g, i, item] = 1
        else:
            query = wp.bvh_query_aabb(bvh, a[i], b[i], root)
            while wp.bvh_query_next(query, item):
                hits[g, i, item] = 1

    def run(lowers, uppers, groups, constructor, leaf_size, queried, a, b, ray):
        bvh = wp.Bvh(wp.array(lowers, dtype=wp.vec3, device="cpu"),
                     wp.array(uppers, dtype=wp.vec3, device="cpu"),
                     groups=wp.array(groups, dtype=int, device="cpu"), constructor=constructor,
                     leaf_size=leaf_size)
        hits = wp.zeros((len(queried), len(a), len(lowers)), dtype=int, device="cpu")
        roots = wp.zeros(len(queried), dtype=int, device="cpu")
        wp.launch(group_kernel, dim=(len(queried), len(a)), device="cpu",
                  inputs=[bvh.id, wp.array(np.asarray(queried, np.int32), dtype=int, device="cpu"),
                          wp.array(a, dtype=wp.vec3, device="cpu"),
                          wp.array(b, dtype=wp.vec3, device="cpu"), int(ray), hits, roots])
        found = [[np.nonzero(row)[0].tolist() for row in per_group] for per_group in hits.numpy()]
        return found, roots.numpy()

    @wp.kernel
    def mesh_kernel(mesh: wp.uint64, groups: wp.array(dtype=int), starts: wp.array(dtype=wp.vec3),
                    directions: wp.array(dtype=wp.vec3), faces: wp.array2d(dtype=int),
                    ts: wp.array2d(dtype=float)):
        g, i = wp.tid()
        root = wp.mesh_get_group_root(mesh, groups[g])
        hit = wp.mesh_query_ray(mesh, starts[i], directions[i], 1.0e6, root)
        faces[g, i] = -1
        if hit.result:
            faces[g, i] = hit.face
            ts[g, i] = hit.t

    def run_mesh(points, indices, groups, queried, starts, directions):
        mesh = wp.Mesh(wp.array(points, dtype=wp.vec3, device="cpu"),
                       wp.array(indices.reshape(-1), dtype=wp.int32, device="cpu"),
                       groups=wp.array(groups, dtype=int, device="cpu"))
        faces = wp.zeros((len(queried), len(starts)), dtype=int, device="cpu")
        ts = wp.zeros((len(queried), len(starts)), dtype=float, device="cpu")
        wp.launch(mesh_kernel, dim=(len(queried), len(starts)), device="cpu",
                  inputs=[mesh.id, wp.array(np.asarray(queried, np.int32), dtype=int, device="cpu"),
                          wp.array(starts, dtype=wp.vec3, device="cpu"),
                          wp.array(directions, dtype=wp.vec3, device="cpu"), faces, ts])
        return faces.numpy(), ts.numpy()

    run.mesh = run_mesh
    return run


@pytest.mark.parametrize("constructor", ["sah", "median"])
@pytest.mark.parametrize("leaf_size", [1, 4])
def test_group_queries_equal_warps(warp_groups, constructor, leaf_size):
    lowers, uppers = random_boxes(800, seed=20)
    rng = np.random.default_rng(21)
    groups = rng.choice(np.array([0, 2, 5, 9, 1000], np.int32), 800)
    queried = [0, 2, 5, 9, 1000, 7]  # 7: no such group
    lo = rng.uniform(-0.1, 0.9, (20, 3)).astype(np.float32)
    hi = (lo + rng.uniform(0.0, 0.4, (20, 3))).astype(np.float32)
    bvh = Bvh(lowers, uppers, constructor=constructor, leaf_size=leaf_size, groups=groups)
    ours, roots = collect(bvh, queried, lo, hi)
    warps, warp_roots = warp_groups(lowers, uppers, groups, constructor, leaf_size, queried, lo,
                                    hi, False)
    assert np.array_equal(roots < 0, warp_roots < 0) and (roots[-1] == -1)
    assert ours == warps
    starts, directions = random_rays(20, seed=22)
    ours, _ = collect(bvh, queried, starts, directions, ray=True)
    warps, _ = warp_groups(lowers, uppers, groups, constructor, leaf_size, queried, starts,
                           directions, True)
    for g in range(len(queried)):
        for k in range(len(starts)):
            _, close = ray_hits(lowers, uppers, starts[k], directions[k])
            assert set(ours[g][k]) - close == set(warps[g][k]) - close, (g, k)


def test_mesh_group_rays_equal_warps(warp_groups):
    points, faces = icosphere(3)
    groups = (np.arange(len(faces)) % 4).astype(np.int32) * 7
    queried = np.array([0, 7, 14, 21, 5], np.int32)  # 5: no such group (the whole mesh)
    rng = np.random.default_rng(23)
    starts = rng.uniform(-2.0, 2.0, (80, 3)).astype(np.float32)
    directions = (-starts + rng.normal(0, 0.3, (80, 3))).astype(np.float32)
    ours, our_t = group_rays(Mesh(points, faces, groups=groups), queried, starts, directions)
    warps, warp_t = warp_groups.mesh(points, faces, groups, queried, starts, directions)
    assert np.array_equal(ours >= 0, warps >= 0)
    assert (ours == warps).mean() > 0.99  # else: equally near faces (shared edges)
    hit = ours >= 0
    assert np.allclose(our_t[hit], warp_t[hit], rtol=1e-5, atol=1e-6)
