"""Grouped BVHs and meshes (Warp's Bvh(groups=...), Mesh(groups=...)) on the CPU.

A grouped tree has one subtree per group id; bvh_get_group_root(bvh, group)
gives its root, and bvh_query_aabb / bvh_query_ray from that root yield the
boxes of that group (and only those) that a brute force over the group
finds; a missing group gives -1, and a query from -1 covers the whole tree.
For meshes, mesh_get_group_root and mesh_query_ray(..., root) find the
closest hit among the group's triangles. Python mode runs the same host code
as compiled code. Warp's own answers: tests/test_bvh_groups_warp.py.
"""

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_sim as sim
from numba_sim import spatial
from numba_sim.spatial import Bvh, Mesh

from test_bvh import overlapping, random_boxes, random_rays, ray_hits


@numba.njit
def group_queries(bvh, group_ids, a, b, ray):
    """Per (group, query): the items found from the group's root, as CSR; and the roots."""
    offsets = [0]
    items = [np.int32(0)][:0]
    roots = np.zeros(group_ids.shape[0], np.int32)
    for g in range(group_ids.shape[0]):
        root = sim.bvh_get_group_root(bvh, group_ids[g])
        roots[g] = root
        for i in range(a.shape[0]):
            p = sim.vec3(a[i, 0], a[i, 1], a[i, 2])
            q = sim.vec3(b[i, 0], b[i, 1], b[i, 2])
            if ray:
                for j in sim.bvh_query_ray(bvh, p, q, root):
                    items.append(j)
            else:
                for j in sim.bvh_query_aabb(bvh, p, q, root):
                    items.append(j)
            offsets.append(len(items))
    return np.array(offsets), np.array(items, dtype=np.int32), roots


def collect(bvh, group_ids, a, b, ray=False):
    offsets, items, roots = group_queries(bvh, np.asarray(group_ids, np.int32), a, b, ray)
    found = [sorted(items[offsets[k]:offsets[k + 1]].tolist()) for k in range(len(offsets) - 1)]
    n = len(a)
    return [found[g * n:(g + 1) * n] for g in range(len(group_ids))], roots


def check_groups(bvh, lowers, uppers, groups, queried_groups, seed=4):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(-0.1, 0.9, (25, 3)).astype(np.float32)
    hi = (lo + rng.uniform(0.0, 0.4, (25, 3))).astype(np.float32)
    starts, directions = random_rays(25, seed=seed + 1)
    boxes, roots = collect(bvh, queried_groups, lo, hi)
    rays, _ = collect(bvh, queried_groups, starts, directions, ray=True)
    for g, group in enumerate(queried_groups):
        members = groups == group if roots[g] >= 0 else np.ones(len(groups), bool)
        index = np.nonzero(members)[0]
        for k in range(len(lo)):
            expected = index[overlapping(lowers[members], uppers[members], lo[k], hi[k])]
            assert boxes[g][k] == expected.tolist(), (group, k)
            hits, close = ray_hits(lowers[members], uppers[members], starts[k], directions[k])
            hits, close = set(index[list(hits)].tolist()), set(index[list(close)].tolist())
            assert set(rays[g][k]) - close == hits - close, (group, k)
    return roots


@pytest.mark.parametrize("constructor", ["sah", "median"])
@pytest.mark.parametrize("leaf_size", [1, 4])
def test_group_queries_equal_brute_force(constructor, leaf_size):
    lowers, uppers = random_boxes(1500, seed=10)
    rng = np.random.default_rng(11)
    groups = rng.choice(np.array([-7, 0, 3, 4, 100, 2**31 - 1], np.int32), 1500)
    bvh = Bvh(lowers, uppers, constructor=constructor, leaf_size=leaf_size, groups=groups)
    assert bvh.constructor == constructor
    queried = [-7, 0, 3, 4, 100, 2**31 - 1, 5, -2**31]  # the last two: no such group
    roots = check_groups(bvh, lowers, uppers, groups, queried)
    assert (roots[:6] >= 0).all() and len(set(roots[:6].tolist())) == 6
    assert (roots[6:] == -1).all()


def test_default_constructor_of_a_grouped_tree_is_sah_and_lbvh_is_refused():
    lowers, uppers = random_boxes(50)
    groups = np.arange(50, dtype=np.int32) % 3
    assert Bvh(lowers, uppers, groups=groups).constructor == "sah"
    with pytest.raises(ValueError, match=r"Bvh\(constructor='lbvh'\): a grouped tree"):
        Bvh(lowers, uppers, constructor="lbvh", groups=groups)
    bvh = Bvh(lowers, uppers, groups=groups, constructor="median")
    with pytest.raises(ValueError, match=r"Bvh.rebuild\(constructor='lbvh'\)"):
        bvh.rebuild("lbvh")
    bvh.rebuild()
    assert bvh.constructor == "sah"
    check_groups(bvh, lowers, uppers, groups, [0, 1, 2])


def test_single_group_sparse_ids_and_one_box_per_group():
    lowers, uppers = random_boxes(40, seed=12)
    for groups in (np.full(40, 9, np.int32), np.arange(40, dtype=np.int32) * 1000,
                   np.array([2**31 - 1] * 20 + [0] * 20, np.int32)):
        bvh = Bvh(lowers, uppers, groups=groups)
        roots = check_groups(bvh, lowers, uppers, groups, np.unique(groups).tolist() + [1])
        assert roots[-1] == -1
    one = Bvh(lowers[:1], uppers[:1], groups=np.zeros(1, np.int32))
    assert sim.bvh_get_group_root(one, 0) >= 0
    assert [int(j) for j in sim.bvh_query_ray(one, sim.vec3(-1.0, 0.0, 0.0), sim.vec3(1.0, 0.0, 0.0),
                                               sim.bvh_get_group_root(one, 0))] in ([], [0])


def test_ungrouped_tree_is_group_zero_and_empty_trees_have_none():
    lowers, uppers = random_boxes(100, seed=13)
    bvh = Bvh(lowers, uppers)
    assert isinstance(sim.bvh_get_group_root(bvh, 0), np.int32)
    roots = check_groups(bvh, lowers, uppers, np.zeros(100, np.int32), [0, 1])
    assert roots[0] >= 0 and roots[1] == -1
    empty = Bvh(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32),
                groups=np.zeros(0, np.int32))
    assert sim.bvh_get_group_root(empty, 0) == -1
    assert list(sim.bvh_query_aabb(empty, sim.vec3(-1.0), sim.vec3(1.0), 0)) == []


def test_refit_keeps_the_groups():
    lowers, uppers = random_boxes(600, seed=14)
    groups = (np.arange(600) % 5).astype(np.int32)
    bvh = Bvh(lowers, uppers, groups=groups, leaf_size=2)
    lowers[::3] += 0.3
    uppers[::3] += 0.3
    bvh.refit()
    check_groups(bvh, lowers, uppers, groups, [0, 2, 4])


def test_root_argument_bounds_and_python_mode_equal_compiled():
    lowers, uppers = random_boxes(300, seed=15)
    groups = (np.arange(300) % 4).astype(np.int32)
    bvh = Bvh(lowers, uppers, groups=groups)
    lo, hi = np.full((1, 3), 0.2, np.float32), np.full((1, 3), 0.7, np.float32)
    compiled, roots = collect(bvh, [0, 1, 2, 3, 9], lo, hi)
    for g, group in enumerate([0, 1, 2, 3, 9]):
        root = sim.bvh_get_group_root(bvh, group)
        assert root == roots[g] and isinstance(root, np.int32)
        assert sorted(int(j) for j in sim.bvh_query_aabb(bvh.id, lo[0], hi[0], root)) == \
            compiled[g][0]
    # a root past the nodes yields nothing; any negative root is the whole tree
    assert list(sim.bvh_query_aabb(bvh, lo[0], hi[0], 10**6)) == []
    assert sorted(sim.bvh_query_aabb(bvh, lo[0], hi[0], -5)) == \
        sorted(sim.bvh_query_aabb(bvh, lo[0], hi[0]))


@pytest.mark.parametrize("groups, error, message", [
    (np.zeros(49, np.int32), ValueError, r"expected shape \(50,\), one group per item"),
    (np.zeros(50, np.float32), TypeError, r"groups must be integers"),
    (np.full(50, 2**40, np.int64), ValueError, r"group ids must fit in int32"),
    ([0] * 50, TypeError, r"expected a NumPy array"),
])
def test_bad_groups_name_the_argument(groups, error, message):
    lowers, uppers = random_boxes(50)
    with pytest.raises(error, match=r"Bvh\(groups=\.\.\.\): " + message):
        Bvh(lowers, uppers, groups=groups)


def test_int64_groups_are_converted_and_typing_errors_name_the_argument():
    lowers, uppers = random_boxes(30)
    bvh = Bvh(lowers, uppers, groups=np.arange(30, dtype=np.int64) % 2)
    assert sim.bvh_get_group_root(bvh, 1) >= 0
    with pytest.raises(TypeError, match=r"bvh_get_group_root\(group=\.\.\.\): expected an integer"):
        sim.bvh_get_group_root(bvh, 1.5)
    with pytest.raises(TypeError, match=r"bvh_query_aabb\(root=\.\.\.\): expected an integer"):
        sim.bvh_query_aabb(bvh, sim.vec3(), sim.vec3(), 0.5)

    @numba.njit
    def bad_root(bvh):
        for j in sim.bvh_query_ray(bvh, sim.vec3(0.0, 0.0, 0.0), sim.vec3(1.0, 0.0, 0.0), 1.0):
            return j
        return -1

    @numba.njit
    def bad_group(bvh):
        return sim.bvh_get_group_root(bvh, 0.5)

    with pytest.raises(TypingError, match=r"bvh_query_ray\(.*root must be an integer"):
        bad_root(bvh)
    with pytest.raises(TypingError, match=r"bvh_get_group_root\(.*group must be an integer"):
        bad_group(bvh)


def test_public_names():
    assert "bvh_get_group_root" in spatial.__all__
    assert sim.bvh_get_group_root is spatial.bvh_get_group_root


# --------------------------------------------------------------------------
# Grouped meshes: Mesh(groups=...), mesh_get_group_root, mesh_query_ray(..., root)


@numba.njit
def group_rays(mesh, group_ids, starts, directions):
    """Per (group, ray): the face hit from the group's root (-1: none) and its t."""
    faces = np.full((group_ids.shape[0], starts.shape[0]), -1, np.int32)
    ts = np.zeros((group_ids.shape[0], starts.shape[0]), np.float32)
    for g in range(group_ids.shape[0]):
        root = sim.mesh_get_group_root(mesh, group_ids[g])
        for i in range(starts.shape[0]):
            s = sim.vec3(starts[i, 0], starts[i, 1], starts[i, 2])
            d = sim.vec3(directions[i, 0], directions[i, 1], directions[i, 2])
            hit = sim.mesh_query_ray(mesh, s, d, 1.0e6, root)
            if hit.result:
                faces[g, i] = hit.face
                ts[g, i] = hit.t
    return faces, ts


def sparse_group_mesh():
    """Warp's test_grouped_bvh sparse-group mesh: two quads far apart."""
    points = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 0, 0], [2, 1, 0],
                       [100, 0, 0], [101, 0, 0], [100, 1, 0], [101, 1, 0], [103, 0, 0],
                       [102, 1, 0]], np.float32)
    return points, np.arange(12, dtype=np.int32)


@pytest.mark.parametrize("sparse", [2, 2**31 - 1])
@pytest.mark.parametrize("constructor", ["sah", "median"])
@pytest.mark.parametrize("leaf_size", [1, 4])
def test_mesh_group_rays_as_warps_sparse_group_test(sparse, constructor, leaf_size):
    points, indices = sparse_group_mesh()
    groups = np.array([0, 0, sparse, sparse], np.int32)
    mesh = Mesh(points, indices, groups=groups, bvh_constructor=constructor,
                bvh_leaf_size=leaf_size)
    start, direction = np.array([[100.2, 0.2, -1.0]], np.float32), np.array([[0, 0, 1.0]],
                                                                            np.float32)
    faces, _ = group_rays(mesh, np.array([0, sparse], np.int32), start, direction)
    assert faces[:, 0].tolist() == [-1, 2]
    # Python mode, by id
    root = spatial.mesh_get_group_root(mesh.id, sparse)
    assert spatial.mesh_query_ray(mesh, start[0], direction[0], 1e6, root).face == 2
    assert not spatial.mesh_query_ray(mesh, start[0], direction[0], 1e6,
                                      spatial.mesh_get_group_root(mesh, 0)).result


def test_mesh_group_rays_equal_brute_force_per_group():
    from mesh_shapes import icosphere, ray_hits as mesh_ray_hits

    points, faces = icosphere(3)
    groups = (np.arange(len(faces)) % 3).astype(np.int32) * 10
    mesh = Mesh(points, faces, groups=groups, support_winding_number=True)
    assert mesh.bvh_constructor == "sah"
    rng = np.random.default_rng(16)
    starts = rng.uniform(-2.0, 2.0, (60, 3)).astype(np.float32)
    directions = (-starts + rng.normal(0, 0.3, (60, 3))).astype(np.float32)
    hit_faces, ts = group_rays(mesh, np.array([0, 10, 20, 30], np.int32), starts, directions)
    for g, group in enumerate((0, 10, 20)):
        members = np.nonzero(groups == group)[0]
        for i in range(len(starts)):
            t_all, f_all = mesh_ray_hits(points, faces[members], starts[i], directions[i])
            if not len(t_all):
                assert hit_faces[g, i] == -1
                continue
            assert hit_faces[g, i] in members
            assert abs(ts[g, i] - t_all[0]) <= 1e-5 * max(1.0, abs(t_all[0]))
    # group 30 does not exist: root -1, the whole mesh
    whole, _ = group_rays(Mesh(points, faces), np.array([0], np.int32), starts, directions)
    assert np.array_equal(hit_faces[3], whole[0])


def test_grouped_mesh_errors_name_the_argument():
    points, indices = sparse_group_mesh()
    with pytest.raises(ValueError, match=r"Mesh\(groups=\.\.\.\): expected shape \(4,\)"):
        Mesh(points, indices, groups=np.zeros(12, np.int32))
    with pytest.raises(ValueError, match=r"Mesh\(bvh_constructor='lbvh'\): a grouped tree"):
        Mesh(points, indices, groups=np.zeros(4, np.int32), bvh_constructor="lbvh")
    for name in ("mesh_get_group_root",):
        assert name in spatial.__all__ and getattr(sim, name) is getattr(spatial, name)


@pytest.mark.parametrize("threads", [2, 4])
def test_large_grouped_trees_built_on_several_threads(monkeypatch, threads):
    """Groups large enough for the parallel build (its deferred subtrees) answer as brute force,
    and the tree does not depend on the thread count."""
    monkeypatch.setattr(numba, "get_num_threads", lambda: threads)
    lowers, uppers = random_boxes(30000, seed=17, size=0.01)
    rng = np.random.default_rng(18)
    groups = rng.integers(0, 40, 30000).astype(np.int32)
    groups[:12000] = 7  # one large group too
    bvh = Bvh(lowers, uppers, groups=groups, leaf_size=2)
    check_groups(bvh, lowers, uppers, groups, [7, 0, 39, 40], seed=19)
    monkeypatch.setattr(numba, "get_num_threads", lambda: 1)
    one_thread = Bvh(lowers, uppers, groups=groups, leaf_size=2)
    assert np.array_equal(bvh._storage.nodes, one_thread._storage.nodes)
    assert bvh.stats().depth <= 31
