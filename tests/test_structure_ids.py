"""A uint64 id that reaches a query is checked against the live structures at launch: a freed,
never-built or made-up id (a hang or a segfault in Warp) is a ValueError naming the parameter."""

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numba_sim as sim

POINTS = np.random.default_rng(0).random((64, 3)).astype(np.float32)


@sim.func
def neighbours(grid: sim.uint64, p: sim.vec3):
    count = int(0)
    for _ in sim.hash_grid_query(grid, p, 0.2):
        count += 1
    return count


@sim.kernel
def count_through_a_func(grid: sim.uint64, points: sim.array(dtype=sim.vec3),
                         out: sim.array(dtype=int), label: sim.uint64):
    i = sim.tid()
    out[i] = neighbours(grid, points[i])


@sim.kernel
def count_from_an_id_array(ids: sim.array(dtype=sim.uint64), points: sim.array(dtype=sim.vec3),
                           out: sim.array(dtype=int)):
    i = sim.tid()
    grid = ids[0]
    out[i] = 0
    for _ in sim.hash_grid_query(grid, points[i], 0.2):
        out[i] += 1


@sim.kernel
def closest_face(mesh: sim.uint64, points: sim.array(dtype=sim.vec3), out: sim.array(dtype=int)):
    i = sim.tid()
    q = sim.mesh_query_point(mesh, points[i], 10.0)
    out[i] = q.face


@pytest.fixture(scope="module")
def grid():
    grid = sim.HashGrid(8, 8, 8)
    grid.build(POINTS, 0.2)
    return grid


def test_the_parameters_that_reach_a_query_are_found():
    assert count_through_a_func.structure_ids == [(0, "HashGrid", False)]  # not 'label'
    assert count_from_an_id_array.structure_ids == [(0, "HashGrid", True)]
    assert closest_face.structure_ids == [(0, "Mesh", False)]


def test_live_ids_launch_and_a_uint64_that_reaches_no_query_is_not_checked(grid):
    out = np.zeros(64, np.int32)
    sim.launch(count_through_a_func, dim=64, inputs=[grid.id, POINTS, out, np.uint64(12345)])
    assert out.min() >= 1  # each point finds itself
    ids = np.zeros(64, np.int32)
    sim.launch(count_from_an_id_array, dim=64, inputs=[np.array([grid.id], np.uint64), POINTS,
                                                       ids])
    assert np.array_equal(ids, out)
    sim.launch(count_through_a_func, dim=64, inputs=[0, POINTS, out, 0])  # Warp's null id
    assert not out.any()


def test_made_up_freed_and_wrong_kind_ids_are_refused_before_anything_runs(grid):
    out = np.full(64, -7, np.int32)
    with pytest.raises(ValueError, match=r"count_through_a_func: parameter 'grid' is 0x3039, "
                                         "not the id of a live HashGrid"):
        sim.launch(count_through_a_func, dim=64, inputs=[12345, POINTS, out, 0])
    freed = sim.HashGrid(4, 4, 4)
    freed.build(POINTS, 0.2)
    freed_id = freed.id
    del freed
    gc.collect()
    with pytest.raises(ValueError, match="not the id of a live HashGrid"):
        sim.launch(count_through_a_func, dim=64, inputs=[freed_id, POINTS, out, 0])
    mesh = sim.Mesh(POINTS, np.array([[0, 1, 2]], np.int32))
    with pytest.raises(ValueError, match="the id of a live Mesh, not of a HashGrid"):
        sim.launch(count_through_a_func, dim=64, inputs=[mesh.id, POINTS, out, 0])
    with pytest.raises(ValueError, match="the id of a live HashGrid, not of a Mesh"):
        sim.launch(closest_face, dim=64, inputs=[grid.id, POINTS, out])
    with pytest.raises(ValueError, match="parameter 'ids' holds 0x3e7"):
        sim.launch(count_from_an_id_array, dim=64,
                   inputs=[np.array([grid.id, 999], np.uint64), POINTS, out])
    assert (out == -7).all()
    sim.launch(closest_face, dim=64, inputs=[mesh.id, POINTS, out])
    assert (out == 0).all()


def test_a_made_up_id_ends_in_its_error_not_a_hang_or_a_signal(tmp_path):
    script = tmp_path / "made_up_id.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import numba_sim as sim

        @sim.kernel
        def k(mesh: sim.uint64, out: sim.array(dtype=int)):
            i = sim.tid()
            out[i] = sim.mesh_query_point(mesh, sim.vec3(0.0, 0.0, 0.0), 1.0).face

        try:
            sim.launch(k, dim=4, inputs=[0xDEADBEEF0, np.zeros(4, np.int32)])
        except ValueError as e:
            print("refused:", e)
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=300, env=dict(os.environ))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "refused: k: parameter 'mesh' is 0xdeadbeef0" in result.stdout
