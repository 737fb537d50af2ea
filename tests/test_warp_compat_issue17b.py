"""Issue 17, Warp's kernel language (second round): string annotations that name closure
variables, funcs reached through plain objects, ``sim.static``'s errors and struct values,
float64 of a literal, the truth of an array parameter, ``@sim.func`` return annotations
checked, and ``a.dtype(x)``.

Kernels are module-level (or made once per module by a fixture) and launched once where
they can be: Numba's compile time dominates the suite.
"""

import math

import numpy as np
import pytest
from numba import njit

import numba_sim as sim


# --------------------------------------------------------------------------
# String annotations read with the closure's variables; funcs through plain objects


class Namespace:
    @sim.func
    def bump(x: float):
        return x + 1.0


def make_factory_kernel(dtype, holder):
    def fn(out: "sim.array(dtype=dtype)"):
        i = sim.tid()
        out[i] = dtype(holder.bump(4.5))  # holder: a plain instance; its func is Warp's

    return sim.kernel(fn)


@pytest.fixture(scope="module")
def factory_kernel():
    return make_factory_kernel(sim.float64, Namespace())


def test_string_annotation_names_a_closure_variable(factory_kernel):
    out = np.zeros(2)
    sim.launch(factory_kernel, dim=2, outputs=[out])
    assert out.tolist() == [5.5, 5.5]
    assert factory_kernel.parameters[0].annotation.dtype == np.float64


def test_func_called_through_a_class_attribute():
    @sim.kernel
    def via_class(out: sim.array(dtype=float)):
        out[0] = Namespace.bump(1.0)

    out = np.zeros(1, np.float32)
    sim.launch(via_class, dim=1, outputs=[out])
    assert out[0] == 2.0


# --------------------------------------------------------------------------
# sim.static: Warp's errors, struct values


@sim.struct
class Params:
    scale: sim.float64
    offset: sim.vec2
    enabled: sim.bool


@sim.struct
class Holder:
    inner: Params
    data: sim.array(dtype=float)


PARAMS = Params()
PARAMS.scale = 0.1
PARAMS.offset = sim.vec2(-1.0, 4.0)
PARAMS.enabled = 1  # an int into a bool field: a C bool, as Warp's


@sim.kernel
def static_struct_kernel(scale: sim.array(dtype=sim.float64), offset: sim.array(dtype=sim.vec2),
                         enabled: sim.array(dtype=sim.bool)):
    scale[0] = sim.static(PARAMS).scale
    offset[0] = sim.static(PARAMS).offset
    enabled[0] = sim.static(PARAMS).enabled


def test_static_struct_value_is_a_constant():
    assert PARAMS.enabled == np.True_
    scale, offset, enabled = np.zeros(1), np.zeros((1, 2), np.float32), np.zeros(1, np.bool_)
    sim.launch(static_struct_kernel, dim=1, outputs=[scale, offset, enabled])
    assert scale[0] == 0.1 and offset[0].tolist() == [-1.0, 4.0] and enabled[0]


class Plain:
    pass


def _launch_static(fn, *inputs):
    sim.launch(sim.kernel(fn), dim=1, inputs=list(inputs))


def test_static_expression_errors_are_warps():
    def division():
        sim.static(1.0 / 0.0)

    with pytest.raises(sim.WarpCodegenError, match=r"Error evaluating static expression: "
                                                   r"float division by zero while evaluating"):
        _launch_static(division)

    def reads_parameter(i: int):
        sim.static(i * 2)

    with pytest.raises(sim.WarpCodegenError, match=r"name 'i' is not defined\. Make sure all "
                                                   r"variables used in the static expression"):
        _launch_static(reads_parameter, 3)


@pytest.mark.parametrize("make, message", [
    (lambda: np.zeros(3), "a Warp array cannot be created inside Warp kernels"),
    (lambda: None, "None is returned"),
    (Plain, r"value of type <class '.*Plain'> cannot be constructed inside Warp kernels"),
    (lambda: Holder(), r"the returned Warp struct contains a data type that cannot be "
                       r"constructed inside Warp kernels: None is returned at .*Holder\."),
])
def test_static_refuses_what_no_kernel_can_hold(make, message):
    def kernel():
        sim.static(make())

    with pytest.raises(sim.WarpCodegenError,
                       match="Static expression returns an unsupported value: " + message):
        _launch_static(kernel)


# --------------------------------------------------------------------------
# float64 of a literal or a Python float keeps the double


@sim.kernel
def float64_kernel(out: sim.array(dtype=sim.float64)):
    out[0] = sim.float64(3.141592653589793)
    out[1] = sim.float64(sim.PI)
    out[2] = sim.float64(-0.1)
    x = 0.1
    out[3] = sim.float64(x)  # a local bound once to a literal: Warp's constant, the double
    out[4] = sim.vec3d(sim.PI, sim.E, 0.0)[1]  # Warp's constants: literals
    out[5] = sim.float64(sim.float32(1.0) * sim.PI)  # a float32 in float32 arithmetic


def test_float64_of_a_constant_keeps_its_double():
    out = np.zeros(6)
    sim.launch(float64_kernel, dim=1, outputs=[out])
    assert out[:3].tolist() == [math.pi, math.pi, -0.1]
    assert out[3] == 0.1  # Warp's test_constant_reuse_after_constructor
    assert out[4] == math.e and out[5] == float(np.float32(math.pi))


# --------------------------------------------------------------------------
# The truth of an array parameter: it has elements (None passed for it is empty)


@sim.kernel
def truth_kernel(arr: sim.array(dtype=int), result: sim.array(dtype=int)):
    tid = sim.tid()
    if arr and arr[tid] == 0:  # short-circuits: arr[tid] is not read for None
        result[tid] = -1
    elif not arr:
        result[tid] = 2
    else:
        result[tid] = 1 if arr else 0


def test_array_truth_short_circuits():
    result = np.zeros(3, np.int32)
    sim.launch(truth_kernel, dim=3, inputs=[None, result])
    assert result.tolist() == [2, 2, 2]
    sim.launch(truth_kernel, dim=3, inputs=[np.array([0, 1, 0], np.int32), result])
    assert result.tolist() == [-1, 1, -1]


# --------------------------------------------------------------------------
# @sim.func return annotations, checked as Warp does


@sim.func
def narrow(x: sim.int32) -> sim.int16:
    return sim.int8(x)


@sim.func
def pair(x: int) -> int:
    return x + x, x * x


@sim.func
def triple(x: int) -> tuple[int, int, int]:
    return x + x, x * x


@sim.func
def local_array() -> sim.array2d[int]:
    arr = sim.zeros(shape=(2, 3), dtype=int)
    return arr


@sim.func
def halve(x: float) -> float:
    return x * 0.5


@sim.func
def count(x: int) -> int:
    return 1 if x > 0 else 0


@pytest.mark.parametrize("callee, message", [
    (narrow, "The function `narrow` has its return type annotated as `int16` but the code "
             "returns a value of type `int8`."),
    (pair, "The function `pair` has its return type annotated as `int` but the code returns "
           "2 values."),
    (triple, "The function `triple` has its return type annotated as a tuple of 3 elements but "
             "the code returns 2 values."),
])
def test_return_annotation_mismatch_is_warps_error(callee, message):
    def kernel():
        callee(sim.int32(3))

    with pytest.raises(sim.WarpCodegenError, match=message.replace("(", r"\(").replace(
            ")", r"\)") + "\n"):  # the message ends its line
        _launch_static(kernel)


def test_a_local_array_returned_as_an_array_is_warps_error():
    def kernel():
        local_array()

    with pytest.raises(sim.WarpCodegenError, match=r"The function `local_array` returns a "
                                                   r"fixed-size array whereas it has its return "
                                                   r"type annotated as `Array\[int32\]`\.\n"):
        _launch_static(kernel)


def test_int_and_float_annotations_take_any_width_and_literals():
    @njit
    def from_njit(x):
        return halve(x), count(7)  # float64 and int64 arguments, as plain Numba code has

    assert from_njit(3.0) == (1.5, 1)


# --------------------------------------------------------------------------
# a.dtype(x): an array's dtype called as its element type's class


@sim.kernel
def dtype_call_kernel(a: sim.array(dtype=sim.int32), v: sim.array(dtype=sim.vec3),
                      out: sim.array(dtype=float)):
    copy = a.dtype(a[0]) + a.dtype(2.7)
    w = v.dtype(v[0])
    out[0] = float(copy) + w[2]


def test_array_dtype_is_callable():
    a, v, out = np.array([4], np.int32), np.array([[1, 2, 3]], np.float32), np.zeros(1, np.float32)
    sim.launch(dtype_call_kernel, dim=1, inputs=[a, v, out])
    assert out[0] == 4 + 2 + 3


# --------------------------------------------------------------------------
# if sim.static(...): the branch not taken is dropped unbuilt (Warp's dead-branch elimination)


def make_branch_kernel(flag):
    @sim.kernel
    def branch(a: sim.array(dtype=float)):
        tid = sim.tid()
        if sim.static(flag):
            a[tid] = undefined_helper(a[tid])  # noqa: F821 (never defined: the point)
        elif sim.static(not flag):
            a[tid] = 7.0

    return branch


def test_static_branch_not_taken_is_not_built():
    a = np.zeros(2, np.float32)
    sim.launch(make_branch_kernel(False), dim=2, inputs=[a])
    assert a.tolist() == [7.0, 7.0]
    with pytest.raises(sim.WarpCodegenError, match="undefined_helper"):
        sim.launch(make_branch_kernel(True), dim=2, inputs=[a])


# --------------------------------------------------------------------------
# CUDA: the same forms compile offline (no GPU needed)


@sim.kernel
def cuda_forms_kernel(arr: sim.array(dtype=int), out: sim.array(dtype=sim.float64)):
    i = sim.tid()
    if arr and arr[i] > 0:
        out[i] = sim.static(PARAMS).scale + sim.float64(halve(2.0)) + sim.float64(sim.PI)
    out[i] += sim.float64(arr.dtype(count(3)))


def test_the_forms_compile_for_cuda():
    assert cuda_forms_kernel.compile("cuda", [np.zeros(2, np.int32), np.zeros(2)], cc=(7, 5))
