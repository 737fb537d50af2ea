"""Issue 17's kernel-language forms: ``reversed(range(...))``, ``None`` for an array
parameter, ``sim.static(expr)`` and Python floats from the globals and closure typed float32,
as Warp does."""

import math

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.kernel_language import KernelSourceError

C = 0.1
D64 = sim.float64(0.1)
SIZE = 3


def make_forms_kernel():
    scale = 0.2  # a closure float
    table = (1.0, 2.0, 4.0)

    @sim.func
    def twice(x: float):
        return x * 2.0

    @sim.kernel
    def forms(floats: sim.array(dtype=sim.float64), ints: sim.array(dtype=sim.int32),
              optional: sim.array(dtype=sim.vec3), grid: sim.array(dtype=float, ndim=2)):
        i = sim.tid()
        floats[0] = C  # float32(0.1), widened on the store
        floats[1] = scale
        floats[2] = D64  # a float64 scalar keeps its type
        floats[3] = math.pi
        floats[4] = sim.static(C * 3.0)  # evaluated in Python (double), then a float32 literal
        f = sim.static(twice)
        floats[5] = f(1.25)
        floats[6] = sim.static(table[SIZE - 1])
        floats[7] = float(optional.shape[0] + grid.shape[1])
        n = 0
        for j in reversed(range(SIZE)):
            ints[n] = j
            n += 1
        for j in reversed(range(2, 11, 3)):
            ints[n] = j
            n += 1
        for j in reversed(range(10, 0, -4)):
            ints[n] = j
            n += 1
        for j in reversed(range(4, 4)):
            ints[n] = 100
        for j in reversed(range(sim.static(SIZE * 2 - 5), 3)):
            ints[n] = j + 1000
            n += 1
        ints[15] = n

    return forms


@pytest.fixture(scope="module")
def forms():
    return make_forms_kernel()


def forms_inputs(optional=None, grid=None):
    return [np.zeros(8), np.full(16, -1, np.int32), optional, grid]


def test_forms_run_as_warp_runs_them(forms):
    floats, ints, optional, grid = args = forms_inputs()
    sim.launch(forms, dim=1, inputs=args)
    assert floats[0] == float(np.float32(0.1)) and floats[0] != 0.1
    assert floats[1] == np.float32(0.2)
    assert floats[2] == 0.1
    assert floats[3] == np.float32(math.pi)
    assert floats[4] == np.float32(0.1 * 3.0)
    assert floats[5] == 2.5 and floats[6] == 4.0 and floats[7] == 0.0
    assert ints[:12].tolist() == [2, 1, 0, 8, 5, 2, 2, 6, 10, 1002, 1001, -1]
    assert ints[15] == 11


def test_none_for_an_array_parameter_is_an_empty_array(forms):
    args = forms_inputs(np.ones((5, 3), np.float32), np.ones((2, 4), np.float32))
    sim.launch(forms, dim=1, inputs=args)
    assert args[0][7] == 9.0
    signatures = len(forms.inspect("cpu", "llvm"))
    args = forms_inputs(None, np.ones((2, 4), np.float32))  # the same signature
    sim.launch(forms, dim=1, inputs=args)
    assert args[0][7] == 4.0
    assert len(forms.inspect("cpu", "llvm")) == signatures


def test_forms_compile_and_link_for_cuda(forms):
    library = forms.compile("cuda", forms_inputs(np.ones((5, 3), np.float32),
                                                 np.ones((2, 4), np.float32)), cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


def test_a_local_name_shadows_a_global_float():
    @sim.kernel
    def shadow(out: sim.array(dtype=sim.float64)):
        C = sim.float64(1) / sim.float64(3)  # noqa: N806 (a local shadowing the module's C)
        out[0] = C

    out = np.zeros(1)
    sim.launch(shadow, dim=1, inputs=[out])
    assert out[0] == 1 / 3


def test_static_errors_name_the_expression_and_the_line():
    # a static expression is evaluated when the kernel is declared, as Warp's (the other
    # source errors are raised when it is built, its first launch, as Warp's)
    with pytest.raises(KernelSourceError, match=r"Error evaluating static expression: division "
                                                r"by zero while evaluating .*\n1 / 0 "
                                                r"\(test_kernel_forms.py, line \d+\)"):
        @sim.kernel
        def bad(out: sim.array(dtype=float)):
            out[0] = sim.static(1 / 0)

    @sim.kernel
    def bad2(out: sim.array(dtype=float)):
        out[0] = sim.static(1, 2)

    with pytest.raises(KernelSourceError, match="sim.static takes one expression"):
        bad2.compile("cpu", [np.zeros(1, np.float32)])


def test_static_outside_a_kernel_is_the_value():
    assert sim.static(3) == 3


def test_none_for_a_generic_array_is_an_error():
    @sim.kernel
    def generic(a: sim.array(dtype=sim.float32), out: sim.array(dtype=float)):
        out[0] = float(a.shape[0])

    out = np.zeros(1, np.float32)
    sim.launch(generic, dim=1, inputs=[None, out])
    assert out[0] == 0.0


def test_warps_constants_are_float32_in_kernels(capfd):
    @sim.kernel
    def constants(out: sim.array(dtype=sim.float64)):
        out[0] = sim.pi
        out[1] = sim.tau - 2.0 * sim.pi
        out[2] = sim.e
        sim.print(sim.half_pi > 1.5)

    out = np.zeros(3)
    sim.launch(constants, dim=1, inputs=[out])
    assert out.tolist() == [float(np.float32(math.pi)), 0.0, float(np.float32(math.e))]
    assert capfd.readouterr().out == "True\n"
    assert sim.pi == math.pi and math.isinf(sim.inf) and math.isnan(sim.nan)


# --------------------------------------------------------------------------
# Warp's query loops: while *_query_next(query, index)


@sim.kernel
def count_neighbours_warp_style(grid: sim.uint64, points: sim.array(dtype=sim.vec3),
                                radius: float, out: sim.array(dtype=int)):
    i = sim.tid()
    p = points[i]
    query = sim.hash_grid_query(grid, p, radius)
    index = int(0)
    n = int(0)
    while sim.hash_grid_query_next(query, index):
        if sim.length(points[index] - p) < radius:
            n += 1
    out[i] = n


@sim.kernel
def count_boxes_warp_style(bvh: sim.uint64, points: sim.array(dtype=sim.vec3),
                           out: sim.array(dtype=int)):
    i = sim.tid()
    query = sim.bvh_query_aabb(bvh, points[i], points[i])
    box = int(0)
    n = int(0)
    while sim.bvh_query_next(query, box):
        n += 1
    out[i] = n


def test_warps_while_query_next_loops_are_for_loops():
    rng = np.random.default_rng(3)
    points = rng.random((300, 3)).astype(np.float32)
    grid = sim.HashGrid(8, 8, 8)
    grid.build(points, 0.2)
    counts = np.zeros(300, np.int32)
    sim.launch(count_neighbours_warp_style, dim=300, inputs=[grid.id, points, 0.2, counts])
    distances = np.linalg.norm(points[:, None] - points[None], axis=2)
    np.testing.assert_array_equal(counts, (distances < 0.2).sum(axis=1))

    lowers = rng.random((50, 3)).astype(np.float32) * 0.8
    uppers = lowers + 0.2
    bvh = sim.Bvh(lowers, uppers)
    sim.launch(count_boxes_warp_style, dim=300, inputs=[bvh.id, points, counts])
    inside = ((points[:, None] >= lowers[None]) & (points[:, None] <= uppers[None])).all(axis=2)
    np.testing.assert_array_equal(counts, inside.sum(axis=1))
    count_neighbours_warp_style.compile("cuda", [grid.id, points, 0.2, counts], cc=(7, 5))
