"""Warp's kernel-language rules inside @sim.kernel / @sim.func, and plain Numba's
rules outside them."""

import numba
import numpy as np
import pytest

import numba_sim as sim


@sim.kernel
def integer_rules(out: sim.array(dtype=sim.int32)):
    i = sim.tid()
    out[0] = 7 / 2
    out[1] = -7 % 3
    out[2] = -7 // 2
    out[3] = int(3.7)
    x = 5
    x += 2
    out[4] = x
    out[5] = -7 / 2
    out[6] = 7 % -3
    out[7] = (1 << 4) | 3


def test_integer_division_and_remainder_truncate_like_c():
    out = np.zeros(8, np.int32)
    sim.launch(integer_rules, dim=1, inputs=[out])
    assert out.tolist() == [3, -1, -4, 3, 7, -3, 1, 19]


@sim.kernel
def float_rules(x: sim.array(dtype=float), v: sim.array(dtype=sim.vec3), r: float):
    i = sim.tid()
    radius = r * 2.0
    x[i] = radius + float(i) / 3.0 + 7.5 % 2.0 - 2.0 ** 2.0
    v[i] = v[i] * 0.5 + sim.vec3(1.0, 2.0, 3.0) * radius


def _double_lines(llvm):
    """Lines of CPU LLVM using double, apart from Python's argument unboxing."""
    return [line for line in llvm.splitlines() if "double" in line
            and "PyFloat_AsDouble" not in line and "fptrunc double %" not in line]


def test_float_literals_are_float32_everywhere():
    x = np.zeros(4, np.float32)
    v = np.ones((4, 3), np.float32)
    sim.launch(float_rules, dim=4, inputs=[x, v, 1.5])
    expected = np.float32(3.0) + np.arange(4, dtype=np.float32) / np.float32(3) + np.float32(1.5) - 4
    np.testing.assert_allclose(x, expected, rtol=1e-6)
    np.testing.assert_allclose(v, np.broadcast_to(0.5 + np.array([1, 2, 3]) * 3.0, (4, 3)), rtol=1e-6)
    inputs = [x, v, 1.5]
    assert _double_lines(float_rules.inspect("cpu", "llvm", inputs)) == []
    ptx = float_rules.inspect("cuda", "ptx", inputs, cc=(7, 5))
    assert ".f64" not in ptx


@sim.func
def int32_arithmetic(i: int):
    j = i * 3 + 1
    return j, j / 2, -j


def test_int32_stays_int32_and_funcs_run_the_same_in_python():
    @sim.kernel
    def use(out: sim.array(dtype=sim.int64)):
        i = sim.tid()
        j, half, negative = int32_arithmetic(i)
        out[i] = j * 1000000 + half * 10 + negative  # int32 wraps past 2**31, as in Warp

    out = np.zeros(3, np.int64)
    sim.launch(use, dim=3, inputs=[out])
    expected = []
    for i in range(3):
        j, half, negative = int32_arithmetic(np.int32(i))  # as Python
        assert type(j) is np.int32 and type(half) is np.int32
        expected.append(int(np.int32(j * np.int32(1000000) + half * np.int32(10) + negative)))
    assert out.tolist() == expected


@sim.kernel
def component_assignment(a: sim.array(dtype=sim.vec3), mats: sim.array(dtype=sim.mat22),
                         frames: sim.array(dtype=sim.transform)):
    i = sim.tid()
    v = sim.vec3()
    v.x = 1.0
    v[1] = 2.0
    v.z += 3.0
    a[i] = v
    a[i].z = 5.0
    a[i][0] *= 4.0
    m = sim.mat22()
    m[0, 1] = 2.0
    m[1] = sim.vec2(3.0, 4.0)
    m[1][0] += 1.0
    mats[i] = m
    t = sim.transform()
    t.p = sim.vec3(1.0, 2.0, 3.0)
    t.p[2] = 9.0 if False else t.p[2]
    frames[i] = t
    frames[i].q = sim.quat(0.0, 0.0, 1.0, 0.0)


def test_component_assignment_forms():
    a = np.zeros((2, 3), np.float32)
    mats = np.zeros((2, 2, 2), np.float32)
    frames = np.zeros((2, 7), np.float32)
    sim.launch(component_assignment, dim=2, inputs=[a, mats, frames])
    np.testing.assert_array_equal(a, [[4, 2, 5]] * 2)
    np.testing.assert_array_equal(mats, [[[0, 2], [4, 4]]] * 2)
    np.testing.assert_array_equal(frames, [[1, 2, 3, 0, 0, 1, 0]] * 2)


@sim.func
def bump(v: sim.vec3):
    v.y = v.y + 1.0
    v[2] -= 1.0
    return v


def test_component_assignment_in_funcs_runs_as_python_too():
    assert bump(sim.vec3(1, 2, 3)) == sim.vec3(1, 3, 2)

    @numba.njit
    def compiled(v):
        return bump(v)

    assert compiled(sim.vec3(1, 2, 3)) == sim.vec3(1, 3, 2)


def test_plain_numba_keeps_numbas_rules():
    @numba.njit
    def plain(a, b):
        return a / b, 2.5 * a

    half, scaled = plain(7, 2)
    assert half == 3.5 and isinstance(scaled, float)

    @numba.njit
    def assigns(v):
        v.x = 1.0
        return v

    with pytest.raises(numba.core.errors.TypingError, match="immutable in plain Numba code.*vec3"):
        assigns(sim.vec3())


def test_warp_output_argument_form_of_quat_to_axis_angle():
    """Warp's statement form writes its outputs, as ``axis, angle = quat_to_axis_angle(q)``
    (plain Numba code keeps the tuple form only: tests/test_builtins_errors.py)."""
    @sim.kernel
    def warp_form(q: sim.quat, axis: sim.array(dtype=sim.vec3), angle: sim.array(dtype=float)):
        sim.quat_to_axis_angle(q, axis[0], angle[0])

    axis, angle = np.zeros((1, 3), np.float32), np.zeros(1, np.float32)
    q = sim.quat_from_axis_angle(sim.vec3(0.0, 1.0, 0.0), 0.5)
    sim.launch(warp_form, dim=1, inputs=[q, axis, angle])
    np.testing.assert_allclose(axis[0], [0.0, 1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(angle[0], 0.5, rtol=1e-6)


def test_index_expressions_with_side_effects_are_evaluated_once():
    @sim.kernel
    def once(counter: sim.array(dtype=sim.int32), out: sim.array(dtype=sim.vec3)):
        i = sim.tid()
        out[next_index(counter)].y = 7.0

    @sim.func
    def next_index(counter: sim.array(dtype=sim.int32)):
        counter[0] = counter[0] + 1
        return counter[0] - 1

    counter = np.zeros(1, np.int32)
    out = np.zeros((3, 3), np.float32)
    sim.launch(once, dim=1, inputs=[counter, out])
    assert counter[0] == 1 and out[0, 1] == 7.0 and out[1:].sum() == 0


CUDA_KERNELS = [
    (integer_rules, lambda: [np.zeros(8, np.int32)]),
    (float_rules, lambda: [np.zeros(4, np.float32), np.zeros((4, 3), np.float32), 1.5]),
    (component_assignment, lambda: [np.zeros((2, 3), np.float32), np.zeros((2, 2, 2), np.float32),
                                    np.zeros((2, 7), np.float32)]),
]


@pytest.mark.parametrize("kernel, inputs", CUDA_KERNELS, ids=lambda k: getattr(k, "__name__", ""))
def test_kernel_language_compiles_for_cuda_offline(kernel, inputs):
    library = kernel.compile("cuda", inputs(), cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
