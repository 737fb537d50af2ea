"""Warp's spellings around the spatial structures that port unchanged.

* the output-argument forms of the mesh queries in kernels
  (``hit = mesh_query_ray(mesh, start, dir, max_t, t, u, v, sign, normal, face[, root])``,
  ``mesh_query_point(mesh, point, max_dist, inside, face, u, v)``, ...) give what the struct
  forms give;
* ``__del__`` of HashGrid / Bvh / Mesh (also on an instance never initialized) releases the
  structure: its id stops being live;
* ``is_cubql_available()`` is False and ``constructor="cubql"`` is refused as Warp refuses it;
* a CPU HashGrid build inside ``sim.capture("cpu")`` is replayed from the arrays' contents,
  and a reserve that would allocate during a capture is refused.
"""

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import spatial
from numba_sim.spatial.common import live_structures

CUBE_POINTS = np.array([[0.5, -0.5, 0.5], [-0.5, -0.5, 0.5], [0.5, 0.5, 0.5], [-0.5, 0.5, 0.5],
                        [-0.5, -0.5, -0.5], [0.5, -0.5, -0.5], [-0.5, 0.5, -0.5],
                        [0.5, 0.5, -0.5]], np.float32)
CUBE_INDICES = np.array([0, 4, 1, 0, 5, 4, 2, 1, 3, 2, 0, 1, 6, 2, 3, 6, 7, 2, 7, 0, 2,
                         7, 5, 0, 4, 6, 3, 4, 3, 1, 5, 6, 4, 5, 7, 6], np.int32)


@sim.kernel
def ray_out_arguments(mesh: sim.uint64, starts: sim.array(dtype=sim.vec3),
                      dirs: sim.array(dtype=sim.vec3), out: sim.array2d(dtype=float),
                      faces: sim.array(dtype=int)):
    i = sim.tid()
    t = float(0.0)
    u = float(0.0)
    v = float(0.0)
    sign = float(0.0)
    normal = sim.vec3()
    face = int(-7)
    if sim.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6, t, u, v, sign, normal, face):
        out[i, 0] = 1.0
    hit = sim.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6, t, u, v, sign, normal, face, -1)
    q = sim.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6)
    out[i, 1] = t - q.t
    out[i, 2] = u - q.u + v - q.v + sign - q.sign + sim.length(normal - q.normal)
    out[i, 3] = float(hit == q.result)
    faces[i] = face - q.face


@sim.kernel
def point_out_arguments(mesh: sim.uint64, points: sim.array(dtype=sim.vec3),
                        out: sim.array2d(dtype=float)):
    i = sim.tid()
    inside = float(0.0)
    face = int(0)
    u = float(0.0)
    v = float(0.0)
    sim.mesh_query_point(mesh, points[i], 10.0, inside, face, u, v)
    q = sim.mesh_query_point(mesh, points[i], 10.0)
    out[i, 0] = inside - q.sign + float(face - q.face) + u - q.u + v - q.v
    found = sim.mesh_query_point_no_sign(mesh, points[i], 10.0, face, u, v)
    r = sim.mesh_query_point_no_sign(mesh, points[i], 10.0)
    out[i, 1] = float(face - r.face) + u - r.u + v - r.v + float(found != r.result)
    found = sim.mesh_query_point_sign_normal(mesh, points[i], 10.0, inside, face, u, v, 1.0e-3)
    s = sim.mesh_query_point_sign_normal(mesh, points[i], 10.0, 1.0e-3)
    out[i, 2] = inside - s.sign + float(face - s.face) + float(found != s.result)


def test_ray_output_arguments_equal_the_struct_form():
    mesh = sim.Mesh(CUBE_POINTS, CUBE_INDICES)
    rng = np.random.default_rng(0)
    n = 64
    starts = (rng.random((n, 3)) * 4 - 2).astype(np.float32)
    dirs = (-starts + (rng.random((n, 3)) - 0.5) * 0.5).astype(np.float32)
    out = np.zeros((n, 4), np.float32)
    faces = np.zeros(n, np.int32)
    sim.launch(ray_out_arguments, n, [mesh.id, starts, dirs, out, faces])
    assert out[:, 0].sum() > n // 2  # most rays hit the cube
    np.testing.assert_array_equal(out[:, 1:3], 0.0)
    np.testing.assert_array_equal(out[:, 3], 1.0)
    np.testing.assert_array_equal(faces, 0)


def test_point_output_arguments_equal_the_struct_form():
    mesh = sim.Mesh(CUBE_POINTS, CUBE_INDICES)
    points = (np.random.default_rng(1).random((50, 3)) * 3 - 1.5).astype(np.float32)
    out = np.ones((50, 3), np.float32)
    sim.launch(point_out_arguments, 50, [mesh.id, points, out])
    np.testing.assert_array_equal(out, 0.0)


def test_python_mode_still_names_the_struct_form():
    mesh = sim.Mesh(CUBE_POINTS, CUBE_INDICES)
    with pytest.raises(TypeError, match=r"output-argument form mesh_query_point\("):
        spatial.mesh_query_point(mesh, CUBE_POINTS[0], 1.0, 0.0, 0, 0.0, 0.0)


# --------------------------------------------------------------------------
# __del__ and cuBQL


@pytest.mark.parametrize("make", [
    lambda: sim.HashGrid(4, 4, 4),
    lambda: sim.Bvh(CUBE_POINTS, CUBE_POINTS + 1.0),
    lambda: sim.Mesh(CUBE_POINTS, CUBE_INDICES),
], ids=["HashGrid", "Bvh", "Mesh"])
def test_del_releases_the_structure(make):
    structure = make()
    structure_id = structure.id
    assert live_structures.get(structure_id) is structure
    structure.__del__()
    structure.__del__()  # twice is fine
    assert live_structures.get(structure_id) is None
    cls = type(structure)
    cls.__new__(cls).__del__()  # never initialized


def test_cubql_is_not_available_and_refused_as_in_warp():
    assert sim.is_cubql_available() is False
    lowers, uppers = CUBE_POINTS, CUBE_POINTS + 1.0
    with pytest.raises(RuntimeError, match=r"Grouped BVHs"):
        sim.Bvh(lowers, uppers, constructor="cubql", groups=np.zeros(8, np.int32))
    with pytest.raises(ValueError, match=r"constructor='cubql'.*cuBQL is not available"):
        sim.Bvh(lowers, uppers, constructor="cubql")
    with pytest.raises(ValueError, match=r"bvh_constructor='cubql'"):
        sim.Mesh(CUBE_POINTS, CUBE_INDICES, bvh_constructor="cubql")


def test_cell_count_limit_is_also_warps_runtime_error():
    with pytest.raises(RuntimeError, match=r"cell count exceeds supported limit"):
        sim.HashGrid(1291, 1291, 1291)


# --------------------------------------------------------------------------
# CPU capture of HashGrid builds


@sim.kernel
def count_group(grid: sim.uint64, points: sim.array(dtype=sim.vec3),
                groups: sim.array(dtype=sim.int32), radius: float,
                counts: sim.array(dtype=sim.int32)):
    i = sim.tid()
    count = int(0)
    for j in sim.hash_grid_query(grid, points[i], radius, groups[i]):
        if sim.length(points[i] - points[j]) <= radius:
            count += 1
    counts[i] = count


def test_captured_cpu_build_replays_from_current_contents():
    points = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0, 0], [0.1, 0, 0]], np.float32)
    groups = np.array([0, 0, 1, 1], np.int32)
    counts = np.zeros(4, np.int32)
    grid = sim.HashGrid(16, 16, 16)
    with sim.capture("cpu") as graph:
        grid.build(points, 0.25, groups=groups)
        sim.launch(count_group, 4, [grid.id, points, groups, 0.25, counts])
    assert grid.num_points == 0  # recorded, not run
    graph.launch()
    np.testing.assert_array_equal(counts, [2, 2, 2, 2])
    groups[:] = 3
    graph.launch()
    np.testing.assert_array_equal(counts, [4, 4, 4, 4])
    points[:] = [[0, 0, 0], [2, 0, 0], [4, 0, 0], [6, 0, 0]]
    graph.launch()
    np.testing.assert_array_equal(counts, [1, 1, 1, 1])


def test_captured_build_checks_its_arguments_when_recorded():
    grid = sim.HashGrid(4, 4, 4)
    with pytest.raises(ValueError, match=r"groups has 2 entries"):
        with sim.capture("cpu"):
            grid.build(np.zeros((3, 3), np.float32), 0.5, groups=np.zeros(2, np.int32))


def test_reserve_that_would_allocate_during_a_capture_is_refused():
    grid = sim.HashGrid(4, 4, 4)
    grid.reserve(4)
    with sim.capture("cpu"):
        grid.reserve(4)  # nothing to allocate
        with pytest.raises(NotImplementedError, match=r"reserve before capture"):
            grid.reserve(8)
        with pytest.raises(NotImplementedError, match=r"reserve before capture"):
            grid.reserve(4, with_groups=True)


def test_hash_grid_dtype_is_float32_and_others_are_refused():
    assert sim.HashGrid(2, 2, 2, dtype=sim.float32).dtype == np.float32
    assert sim.HashGrid(2, 2, 2).dtype == np.float32
    for dtype in (sim.float64, sim.float16):
        with pytest.raises(TypeError, match=r"hash grids are float32"):
            sim.HashGrid(2, 2, 2, dtype=dtype)
    with pytest.raises(TypeError, match=r"expected float32"):
        sim.HashGrid(2, 2, 2, dtype=sim.int32)
