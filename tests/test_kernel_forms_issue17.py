"""Issue 17's kernel-language forms: star arguments (``vec4(*v3, 1.0)``,
``vec2(*arr[0:4:2])``), ``type(x)(...)`` of values and structs, operators overloaded by funcs named like Warp's
builtins (``add``), function-valued parameters
(``g: sim.Function``), builtins called with keyword arguments, ``@sim.overload`` stubs that are nested or shadow their kernel, and
``sim.map`` (lambdas, funcs, builtins, broadcasting, several outputs, Warp's messages).

Kernels are module-level and launched once per module where they can be (Numba's compile
time dominates the suite).
"""

from typing import Any

import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_sim as sim


# --------------------------------------------------------------------------
# Star arguments


@sim.kernel
def unpack_kernel(arr: sim.array(dtype=sim.int32), out: sim.array(dtype=sim.float32)):
    v3 = sim.vec3(1.0, 2.0, 3.0)
    v4 = sim.vec4(*v3, 4.0)
    out[0] = v4[3] + v4[0]
    w = sim.vec2(*v4[-2:])
    out[1] = w[0]
    m = sim.mat22(1.0, 2.0, 3.0, 4.0)
    rows = sim.matrix_from_rows(*m)
    out[2] = rows[1, 0]
    q = sim.quat(*sim.quat_identity())
    out[3] = q[3]
    i = sim.vec3i(*arr[0:6:2])
    out[4] = float(i[2])
    out[5] = sim.max(*sim.vec2(-1.0, 7.0))
    t = (2.0, 5.0)
    out[6] = sim.vec2(*t)[1]


def test_star_arguments_unpack_values_arrays_and_tuples():
    out = sim.zeros(7, dtype=sim.float32)
    sim.launch(unpack_kernel, dim=1, inputs=[np.arange(10, dtype=np.int32), out])
    np.testing.assert_array_equal(out, [5.0, 3.0, 3.0, 1.0, 4.0, 7.0, 5.0])


def test_star_arguments_need_a_length_known_when_compiling():
    @sim.kernel
    def open_ended(arr: sim.array(dtype=sim.int32)):
        sim.vec3i(*arr[2:])

    @sim.kernel
    def of_a_scalar():
        x = 42
        sim.vec3i(*x)

    arr = np.zeros(5, np.int32)
    with pytest.raises(TypingError, match="requires explicit upper bound"):
        sim.launch(open_ended, dim=1, inputs=[arr])
    with pytest.raises(TypingError, match="Starred expressions are only supported for"):
        sim.launch(of_a_scalar, dim=1, inputs=[])


# --------------------------------------------------------------------------
# type(x), sim.Function parameters


@sim.struct
class Pair:
    a: float
    b: float


@sim.func
def add(a: Pair, b: Pair):  # Warp's rule: a func named like the builtin overloads '+'
    return Pair(a.a + b.a, a.b + b.b)


@sim.func
def twice(x: float):
    return x * 2.0


@sim.func
def apply(g: sim.Function, x: float):
    return g(x)


@sim.func
def apply_default(x: float, g: sim.Function = twice):
    return g(x)


@sim.kernel
def generic_forms_kernel(out: sim.array(dtype=sim.float32)):
    v = sim.vec3(1.0, 2.0, 3.0)
    d = type(sim.vec3d(0.0, 0.0, 0.0))(v)  # converts to vec3d
    out[0] = float(d[2])
    p = Pair(1.5, 2.5)
    p2 = type(p)(p.b, p.a)
    out[1] = p2.a
    out[2] = apply(twice, 3.0)
    out[3] = apply(sim.sin, 0.0)
    out[4] = apply_default(4.0)
    out[5] = sim.pow(y=3.0, x=2.0) + sim.pow(2.0, y=1.0)
    s = p + p2
    out[6] = s.a + s.b + (v + v)[0]


def test_type_of_values_and_structs_function_parameters_and_keywords():
    assert sim.Function is type(twice)
    out = sim.zeros(7, dtype=sim.float32)
    sim.launch(generic_forms_kernel, dim=1, inputs=[out])
    np.testing.assert_array_equal(out, [3.0, 2.5, 6.0, 0.0, 8.0, 10.0, 10.0])


def test_an_operator_overload_ignores_later_funcs_of_that_name_for_other_types():
    @sim.func
    def add(x: sim.float32, y: sim.float32) -> sim.int32:  # noqa: F811 (a later 'add')
        return sim.int32(1)

    @sim.kernel
    def sums_pairs(out: sim.array(dtype=sim.float32)):
        p = Pair(1.0, 2.0)
        s = p + p
        out[0] = s.a + s.b

    out = sim.zeros(1, dtype=sim.float32)
    sim.launch(sums_pairs, dim=1, inputs=[out])
    assert out[0] == 6.0


def test_builtins_take_keyword_arguments_by_their_parameter_names():
    assert sim.pow(y=sim.float32(3.0), x=sim.float32(2.0)) == 8.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        sim.pow(sim.float32(2.0), z=sim.float32(1.0))


# --------------------------------------------------------------------------
# @sim.overload stubs


def test_overload_stubs_find_their_kernel_by_qualified_name():
    @sim.kernel(name="custom")
    def nested(x: Any):
        return

    @sim.overload
    def nested(x: float): ...  # noqa: F811 (Warp's stub form)

    assert nested.key == "custom" and len(nested.overloads) == 1

    def factory(x: Any):
        return

    sim.kernel(name="first")(factory)
    sim.kernel(name="second")(factory)
    with pytest.raises(RuntimeError, match="Ambiguous kernel lookup"):
        @sim.overload
        def factory(x: float): ...  # noqa: F811

    @sim.kernel
    def returns(x: Any):
        return

    with pytest.raises(TypeError, match="Return annotations are not allowed"):
        @sim.overload
        def returns(x: float) -> float: ...  # noqa: F811


# --------------------------------------------------------------------------
# sim.map


@sim.func
def scale_and_shift(a: float):
    return a * 2.0, sim.vec3(a, a + 1.0, a + 2.0)


def test_map_lambdas_funcs_and_builtins():
    a = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(sim.map(lambda x: x + 2.0, a), a + 2.0)
    offset = 3.0
    np.testing.assert_array_equal(sim.map(lambda x, y: x * y + offset, a, a), a * a + 3.0)
    clamped = sim.map(sim.clamp, np.array([-3.0, 0.25, 9.0], np.float32), -0.5, 0.5)
    np.testing.assert_array_equal(clamped, [-0.5, 0.25, 0.5])
    doubled, vectors = sim.map(scale_and_shift, a)
    np.testing.assert_array_equal(doubled, 2 * a)
    np.testing.assert_array_equal(vectors[:, 1], a + 1.0)
    out = np.zeros(6, np.float32)
    assert sim.map(sim.sub, a, 1.0, out=out) is out
    np.testing.assert_array_equal(out, a - 1.0)
    kernel = sim.map(lambda x: x + 2.0, a, return_kernel=True)
    b, result = np.zeros(4, np.float32), np.zeros(4, np.float32)
    sim.launch(kernel, dim=4, inputs=[b], outputs=[result])
    np.testing.assert_array_equal(result, 2.0)


def test_map_broadcasts_as_numpy():
    a = np.zeros((1, 3, 1, 4), np.float32)
    b = np.arange(20, dtype=np.float32).reshape(5, 4)
    out = sim.map(sim.add, a, b)
    np.testing.assert_array_equal(out, a + b)
    with pytest.raises(ValueError, match=r"Shapes \(3, 2, 1\) and \(3, 3, 2\) are not broadcastable"):
        sim.map(sim.add, np.zeros((3, 2, 1), np.float32), np.zeros((3, 3, 2), np.float32))


def test_map_rejects_bad_input_with_warps_messages():
    a = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="map requires at least one warp.array input"):
        sim.map(sim.add, 1.0, 2.0)
    with pytest.raises(TypeError, match=r"Number of input arguments \(2\) does not match"):
        sim.map(twice, a, a)
    with pytest.raises(TypeError, match="does not support the provided argument types int32"):
        sim.map(twice, np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="Output array dtype int32 does not match"):
        sim.map(sim.sub, a, a, out=np.zeros(3, np.int32))
    with pytest.raises(TypeError, match=r"Output array shape \(2,\) does not match"):
        sim.map(sim.sub, a, a, out=np.zeros(2, np.float32))
    with pytest.raises(TypeError, match=r"Number of provided output arrays \(3\)"):
        sim.map(lambda x, y: (x, y), a, a, out=[a, a, a])
    with pytest.raises(TypeError, match="func: expected a @sim.func"):
        sim.map(3, a)
