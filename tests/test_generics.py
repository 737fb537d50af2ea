"""Generic kernels (``typing.Any``), ``sim.overload`` and overloaded ``@sim.func``s, as in Warp."""

from typing import Any

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

import numba_sim as sim


@sim.kernel
def add_value(a: sim.array(dtype=Any), value: Any):
    i = sim.tid()
    a[i] = a[i] + value


@sim.kernel
def fill(a: sim.array(dtype=Any), value: Any):
    i = sim.tid()
    a[i] = value


fill_int = sim.overload(fill, [sim.array(dtype=int), int])
fill_vec3 = sim.overload(fill, {"a": sim.array(dtype=sim.vec3), "value": sim.vec3})


@sim.overload
def fill(a: sim.array(dtype=float), value: float):  # noqa: F811 - Warp's decorator form
    ...


@sim.kernel
def not_generic(a: sim.array(dtype=float)):
    a[sim.tid()] = 1.0


def test_a_generic_kernel_is_typed_from_each_launch():
    for dtype, value in ((np.int32, 3), (np.float32, 1.5), (np.float64, 0.25), (np.int64, 7)):
        a = np.arange(4, dtype=dtype)
        sim.launch(add_value, dim=4, inputs=[a, value])
        assert a.dtype == dtype
        np.testing.assert_array_equal(a, np.arange(4, dtype=dtype) + dtype(value))


def test_a_generic_array_needs_the_annotated_dims():
    with pytest.raises(ValueError, match=r"add_value: parameter 'a': expected array\(dtype=Any, "
                                         r"ndim=1\): an array with 1 dims"):
        sim.launch(add_value, dim=4, inputs=[np.zeros((4, 3), np.float32), 1.0])
    with pytest.raises(TypeError, match="parameter 'a'"):
        sim.launch(add_value, dim=4, inputs=[[1.0, 2.0], 1.0])


def test_the_launch_picks_the_overload_the_arguments_fit():
    assert fill.overloads == [fill_int, fill_vec3, fill.overloads[2]]
    ints = np.zeros(3, np.int32)
    sim.launch(fill, dim=3, inputs=[ints, 7])
    np.testing.assert_array_equal(ints, [7, 7, 7])
    vectors = np.zeros((3, 3), np.float32)
    sim.launch(fill, dim=3, inputs=[vectors, sim.vec3(1.0, 2.0, 3.0)])
    np.testing.assert_array_equal(vectors, [[1, 2, 3]] * 3)
    floats = np.zeros(3, np.float32)
    sim.launch(fill, dim=3, inputs=[floats, 2.5])  # the float overload, not int's conversion
    np.testing.assert_array_equal(floats, [2.5] * 3)
    assert fill_int.launchers and fill_vec3.launchers and fill.overloads[2].launchers


def test_an_overload_is_a_kernel_of_its_own_and_made_once():
    assert sim.overload(fill, [sim.array(dtype=int), int]) is fill_int
    assert [p.annotation for p in fill_vec3.parameters] == [sim.array(dtype=sim.vec3), sim.vec3]
    out = np.zeros(2, np.int32)
    sim.launch(fill_int, dim=2, inputs=[out, 4])
    np.testing.assert_array_equal(out, [4, 4])
    fill_int.compile("cuda", [out, 4], cc=(7, 5))  # links


def test_overload_errors_name_the_problem():
    with pytest.raises(TypeError, match=r"expected 2 types \(a, value\), got 1"):
        sim.overload(fill, [int])
    with pytest.raises(TypeError, match=r"'size' is not a parameter \(the parameters are a, value\)"):
        sim.overload(fill, {"size": int})
    with pytest.raises(TypeError, match="a list of types or a dict"):
        sim.overload(fill, int)
    with pytest.raises(TypeError, match="only generic kernels .* not_generic is not"):
        sim.overload(not_generic, [sim.array(dtype=int)])
    with pytest.raises(TypeError, match="expected a @sim.kernel"):
        sim.overload(len, [int])


def test_the_decorator_needs_a_kernel_of_that_name():
    with pytest.raises(TypeError, match="named like a @sim.kernel of its module"):
        @sim.overload
        def no_such_kernel(a: sim.array(dtype=int)):
            ...


# --------------------------------------------------------------------------
# overloaded @sim.func


@sim.func
def custom(x: int):
    return x + 1


@sim.func
def custom(x: float):  # noqa: F811 - an overload, as in Warp
    return x + 1.0


@sim.func
def custom(x: sim.vec3):  # noqa: F811
    return x + sim.vec3(1.0, 0.0, 0.0)


@sim.kernel
def call_custom(out_i: sim.array(dtype=int), out_f: sim.array(dtype=float),
                out_v: sim.array(dtype=sim.vec3)):
    out_i[0] = custom(1)
    out_f[0] = custom(1.0)
    out_v[0] = custom(sim.vec3(1.0, 0.0, 0.0))


@njit
def custom_from_njit(x):
    return custom(x)


def test_a_call_picks_the_overload_of_its_argument_types():
    out_i, out_f, out_v = np.zeros(1, np.int32), np.zeros(1, np.float32), np.zeros((1, 3), np.float32)
    sim.launch(call_custom, dim=1, inputs=[out_i, out_f, out_v])
    assert (out_i[0], out_f[0], tuple(out_v[0])) == (2, 2.0, (2.0, 0.0, 0.0))
    call_custom.compile("cuda", [out_i, out_f, out_v], cc=(7, 5))  # links


def test_overloads_run_as_python_and_from_njit():
    assert custom(1) == 2 and isinstance(custom(1), np.int32)  # Warp's int literal
    assert custom(1.0) == 2.0
    assert custom(sim.vec3(1.0, 0.0, 0.0)) == sim.vec3(2.0, 0.0, 0.0)
    assert custom_from_njit(2.5) == 3.5 and custom_from_njit(3) == 4


def test_no_overload_is_an_error_listing_them():
    listed = r"the overloads are custom\(int\); custom\(float\); custom\(vec3\)"
    with pytest.raises(TypeError, match=r"custom\(str\): no overload accepts these arguments; "
                                        + listed):
        custom("a")
    with pytest.raises(TypingError, match=r"custom\(vec2\): no overload accepts these types; "
                                          + listed):
        custom_from_njit(sim.vec2(1.0, 2.0))


def test_a_definition_with_the_same_annotations_replaces_that_overload():
    namespace = {"sim": sim}
    source = ("@sim.func\ndef twice(x: int):\n    return 2 * x\n"
              "@sim.func\ndef twice(x: float):\n    return 2.0 * x\n"
              "@sim.func\ndef twice(x: int):\n    return 3 * x\n")
    path = "<generics-test>"
    import linecache

    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    exec(compile(source, path, "exec"), namespace)
    twice = namespace["twice"]
    assert len(twice.members) == 2
    assert twice(2) == 6 and twice(2.0) == 4.0


def test_warps_kernel_options_and_module_are_readable():
    """Warp code reads ``kernel.options`` and ``kernel.module.options`` (Warp's own tests do)."""
    @sim.kernel(enable_backward=False)
    def k(a: sim.array(dtype=float)):
        a[sim.tid()] = 1.0

    assert k.options == {"enable_backward": False} and k.enable_backward is False
    assert add_value.options == {}
    assert add_value.module.name == __name__
    assert add_value.module.options["enable_backward"] is True
    assert fill_int.options == fill.options
