"""Issue 17's array features, as Warp has them: ``lower_bound``, the subscript annotation
forms ``sim.array[dtype, ndim]``, Warp's shape limits, ``full``'s element type inferred
from the fill value, and launch argument errors that are also RuntimeErrors (Warp's class)."""

from typing import Any, Literal

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.errors import KernelTypingError


@sim.kernel
def lower_bound_kernel(values: sim.array(dtype=float), arr: sim.array(dtype=float),
                       out: sim.array(dtype=int), ranged: sim.array(dtype=int)):
    i = sim.tid()
    out[i] = sim.lower_bound(arr, values[i])
    ranged[i] = sim.lower_bound(arr, 1, 4, values[i])


@sim.kernel
def lower_bound_int_kernel(arr: sim.array(dtype=sim.int64), out: sim.array(dtype=int)):
    out[0] = sim.lower_bound(arr, 7)


SORTED = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
VALUES = np.array([-0.1, 0.0, 2.5, 4.0, 5.0, 5.5], np.float32)


def test_lower_bound_in_a_kernel_gives_warps_indices():
    out, ranged = np.zeros(6, np.int32), np.zeros(6, np.int32)
    sim.launch(lower_bound_kernel, dim=6, inputs=[VALUES, SORTED, out, ranged])
    np.testing.assert_array_equal(out, [0, 0, 3, 4, 5, 5])  # Warp's test_lower_bound
    # [1, 4): never below the range's start, never past its last index (Warp's search)
    np.testing.assert_array_equal(ranged, [1, 1, 3, 3, 3, 3])
    ints = np.array([1, 3, 7, 7, 9], np.int64)
    sim.launch(lower_bound_int_kernel, dim=1, inputs=[ints, out])
    assert out[0] == 2


def test_lower_bound_in_python_matches_the_kernel():
    assert [int(sim.lower_bound(SORTED, v)) for v in VALUES] == [0, 0, 3, 4, 5, 5]
    assert [int(sim.lower_bound(SORTED, 1, 4, v)) for v in VALUES] == [1, 1, 3, 3, 3, 3]
    assert sim.lower_bound(SORTED, 2.0).dtype == np.int32


@pytest.mark.parametrize("call, words", [
    (lambda: sim.lower_bound(SORTED), r"expected lower_bound\(arr, value\)"),
    (lambda: sim.lower_bound([0.0, 1.0], 0.5), "arr: expected a 1-D NumPy array"),
    (lambda: sim.lower_bound(SORTED.reshape(2, 3), 0.5), "arr: expected a 1-D NumPy array"),
    (lambda: sim.lower_bound(SORTED, "x"), "value: expected a scalar"),
    (lambda: sim.lower_bound(np.arange(3), 1.5), "a float value for an integer array"),
])
def test_lower_bound_bad_python_arguments(call, words):
    with pytest.raises(TypeError, match=words):
        call()


@sim.kernel
def lower_bound_on_2d(arr: sim.array2d(dtype=float), out: sim.array(dtype=int)):
    out[0] = sim.lower_bound(arr, 1.0)


@sim.kernel
def lower_bound_float_for_ints(arr: sim.array(dtype=int), out: sim.array(dtype=int)):
    out[0] = sim.lower_bound(arr, 1.5)


@sim.kernel
def lower_bound_float_bounds(arr: sim.array(dtype=float), out: sim.array(dtype=int)):
    out[0] = sim.lower_bound(arr, 0.5, 2, 1.0)


@pytest.mark.parametrize("kernel, args, words", [
    (lower_bound_on_2d, [np.zeros((2, 2), np.float32)], "1-D array of scalars"),
    (lower_bound_float_for_ints, [np.zeros(2, np.int32)], "convert it with int32"),
    (lower_bound_float_bounds, [np.zeros(2, np.float32)], r"for arr_begin \(an int\)"),
])
def test_lower_bound_bad_kernel_arguments(kernel, args, words):
    with pytest.raises(KernelTypingError, match=words):
        sim.launch(kernel, dim=1, inputs=args + [np.zeros(1, np.int32)])


def test_lower_bound_compiles_for_cuda():
    library = lower_bound_kernel.compile(
        "cuda", [VALUES, SORTED, np.zeros(6, np.int32), np.zeros(6, np.int32)], cc=(7, 5))
    assert library is not None


def test_array_subscript_with_a_dtype_and_an_ndim():
    assert sim.array[sim.float64, Literal[2]] == sim.array(dtype=sim.float64, ndim=2)
    assert sim.array[sim.float32, 3].ndim == 3
    assert sim.array[sim.vec3, np.int64(2)] == sim.array(dtype=sim.vec3, ndim=2)
    assert sim.array[float] == sim.array[sim.float32]
    assert hash(sim.array[float]) == hash(sim.array[sim.float32])
    assert sim.array[float] != sim.array[float, 2]
    assert sim.array2d[sim.vec3] == sim.array(dtype=sim.vec3, ndim=2)


@pytest.mark.parametrize("make, error, words", [
    (lambda: sim.array[float, Literal[1, 2]], TypeError, "Expected a single Literal value"),
    (lambda: sim.array[float, 5], ValueError, "ndim: expected an int from 1 to 4"),
    (lambda: sim.array[float, "2"], TypeError, "ndim: expected an int or typing.Literal"),
    (lambda: sim.array[float, True], TypeError, "ndim: expected an int or typing.Literal"),
    (lambda: sim.array[float, Any], TypeError, "ndim=Any"),
    (lambda: sim.array[float, 1, 2], TypeError, "got 3 parameters"),
    (lambda: sim.array2d[float, 2], TypeError, "single type parameter"),
])
def test_array_subscript_errors(make, error, words):
    with pytest.raises(error, match=words):
        make()


@sim.kernel
def add_one(a: sim.array[float, Literal[2]]):
    i, j = sim.tid()
    a[i, j] = a[i, j] + 1.0


def test_kernel_annotated_with_the_subscript_form():
    a = np.zeros((2, 3), np.float32)
    sim.launch(add_one, dim=(2, 3), inputs=[a])
    np.testing.assert_array_equal(a, np.ones((2, 3)))


@pytest.mark.parametrize("shape", [-1, -(2**32), (10, -1)])
def test_negative_shapes_are_rejected_as_in_warp(shape):
    with pytest.raises(ValueError, match="shape: Array shapes must be non-negative"):
        sim.zeros(shape, dtype=int)


def test_extents_above_int32_are_rejected_before_allocating():
    words = "Array shapes must not exceed the maximum representable value of a signed 32-bit"
    with pytest.raises(ValueError, match=words):
        sim.zeros(2**31, dtype=sim.int8)
    with pytest.raises(ValueError, match=words):
        sim.empty((1, 2**31), dtype=sim.int8)
    huge = np.broadcast_to(np.zeros(1, np.int8), (2**31,))  # no memory behind it
    with pytest.raises(ValueError, match=words):
        sim.array(huge, dtype=sim.int8)
    sim.arrays.check_array_shape((2**31 - 1, 0))  # the limit itself is fine


def test_full_infers_the_element_type_from_the_value():
    assert sim.full(3, 42).dtype == np.int32
    assert sim.full(3, 13.37).dtype == np.float32
    assert sim.full(3, True).dtype == np.bool_
    assert sim.full(2, sim.float64(1.5)).dtype == np.float64
    assert sim.full(2, sim.vec3(1, 2, 3)).shape == (2, 3)
    vector = sim.full(2, [1.0, 2.0])
    assert vector.shape == (2, 2) and vector.dtype == np.float64  # vector(2, float64)
    matrix = sim.full(2, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert matrix.shape == (2, 2, 3)
    np.testing.assert_array_equal(matrix[1], [[1, 2, 3], [4, 5, 6]])


@sim.struct
class Filled:
    x: int
    v: sim.vec3


def test_full_of_a_struct_fills_records():
    value = Filled()
    value.x = 17
    value.v = sim.vec3(1.0, 2.0, 3.0)
    a = sim.full(4, value)
    assert a.dtype == Filled.numpy_dtype
    np.testing.assert_array_equal(a["x"], 17)
    np.testing.assert_array_equal(a["v"], [[1, 2, 3]] * 4)


@pytest.mark.parametrize("value, words", [
    (object(), "value: expected a scalar, a value"),
    ([[[1.0]]], "value: a sequence of 1 or 2 dims"),
])
def test_full_bad_values(value, words):
    with pytest.raises((TypeError, ValueError), match=words):
        sim.full(2, value)


def test_array_data_with_dtype_any_keeps_the_data_dtype():
    a = sim.array(np.arange(6, dtype=np.int16), dtype=Any, shape=(2, 3))
    assert a.dtype == np.int16 and a.shape == (2, 3)


def test_launch_argument_errors_are_also_runtime_errors():
    a = np.zeros(4, np.float32)
    with pytest.raises(RuntimeError, match="parameter 'a'") as info:
        sim.launch(add_one, dim=(1, 1), inputs=[a])  # 1 dim for 2
    assert isinstance(info.value, ValueError)
    with pytest.raises(RuntimeError, match="parameter 'a'") as info:
        sim.launch(add_one, dim=(1, 1), inputs=[np.zeros((1, 1), np.int32)])
    assert isinstance(info.value, TypeError)


# --------------------------------------------------------------------------
# Warp's shape in kernels: a.shape[i] is 0 past the array's dims


@sim.kernel
def shapes_of_slices(arr: sim.array2d(dtype=int), out: sim.array(dtype=int)):
    row = arr[1]
    out[0] = row.shape[0]
    out[1] = row.shape[1]  # past the view's 1 dim: 0, as Warp's shape
    out[2] = row.shape[3]
    block = arr[:2, 1:]
    out[3] = block.shape[1]
    out[4] = block.shape[2]
    out[5] = block.shape[-1]
    out[6] = block[1, 0]


def test_shape_past_the_dims_is_zero_in_a_kernel():
    arr = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = np.full(7, -1, np.int32)
    sim.launch(shapes_of_slices, dim=1, inputs=[arr, out])
    np.testing.assert_array_equal(out, [4, 0, 0, 3, 0, 3, 5])


def test_shape_of_slices_compiles_for_cuda():
    arr = np.zeros((3, 4), np.int32)
    assert shapes_of_slices.compile("cuda", [arr, np.zeros(7, np.int32)], cc=(7, 5)) is not None


@sim.struct
class Sized:
    shape: sim.vec3i


@sim.kernel
def shape_of_other_things(s: Sized, arr: sim.array(dtype=int), out: sim.array(dtype=int)):
    out[0] = s.shape[2]  # a struct field named shape: indexed as it is
    out[1] = arr.shape[-1]


def test_shape_of_a_struct_field_keeps_its_meaning():
    s = Sized()
    s.shape = sim.vec3i(1, 2, 3)
    out = np.zeros(2, np.int32)
    sim.launch(shape_of_other_things, dim=1, inputs=[s, np.zeros(5, np.int32), out])
    np.testing.assert_array_equal(out, [3, 5])


@sim.kernel
def shape_index_below_the_dims(arr: sim.array(dtype=int)):
    arr[0] = arr.shape[-2]


def test_shape_index_before_the_first_dim_is_an_error():
    with pytest.raises(KernelTypingError, match="index -2 is out of range for the 1 dims"):
        sim.launch(shape_index_below_the_dims, dim=1, inputs=[np.zeros(2, np.int32)])


def test_shape_dim_in_python_mode():
    a = np.zeros((2, 3))
    assert sim.arrays.shape_dim(a, 1) == 3 and sim.arrays.shape_dim(a, 2) == 0
    assert sim.arrays.shape_dim(a, -1) == 3


def test_a_literal_zero_slice_step_is_a_compile_error():
    @sim.kernel
    def zero_step(a: sim.array2d(dtype=int)):
        view = a[0:2, 1:2:0]  # noqa: F841

    with pytest.raises(sim.WarpCodegenValueError, match="Slice step cannot be zero"):
        sim.launch(zero_step, dim=1, inputs=[np.zeros((2, 2), np.int32)])


# --------------------------------------------------------------------------
# Arrays over a pointer in a kernel: a.ptr and sim.array(ptr=..., shape=..., dtype=...)


@sim.kernel
def through_a_pointer(orig: sim.array2d(dtype=sim.float32), n: int):
    flat = sim.array(ptr=orig.ptr, shape=(2, n), dtype=sim.float32)
    flat[0, 0] = 1.0
    flat[1, n - 1] = 6.0
    rows = sim.array(ptr=orig.ptr, shape=2, dtype=sim.vec3)
    rows[1] = rows[1] + sim.vec3(1.0, 2.0, 3.0)
    ints = sim.array(ptr=orig.ptr, shape=(1,), dtype=int)  # Python's int: int32
    orig[0, 1] = float(ints.shape[0])


def test_array_over_a_pointer_writes_the_original():
    a = np.zeros((2, 3), np.float32)
    sim.launch(through_a_pointer, dim=1, inputs=[a, 3])
    np.testing.assert_array_equal(a, [[1, 1, 0], [1, 2, 9]])


@sim.struct
class Triple:
    a: sim.float32
    b: sim.float32


@sim.kernel
def structs_through_a_pointer(orig: sim.array(dtype=Triple), out: sim.array(dtype=sim.uint64)):
    view = sim.array(ptr=orig.ptr, shape=(2,), dtype=Triple)
    view[1].b = 5.0
    out[0] = orig.ptr
    out[1] = view.ptr


def test_array_of_structs_over_a_pointer():
    orig = np.zeros(2, Triple.numpy_dtype)
    out = np.zeros(2, np.uint64)
    sim.launch(structs_through_a_pointer, dim=1, inputs=[orig, out])
    assert orig["b"][1] == 5.0 and orig["a"][1] == 0.0
    assert out[0] == out[1] == orig.ctypes.data


def test_array_over_a_pointer_compiles_for_cuda():
    assert through_a_pointer.compile("cuda", [np.zeros((2, 3), np.float32), 3], cc=(7, 5))


@sim.kernel
def pointer_without_dtype(a: sim.array(dtype=float)):
    x = sim.array(ptr=a.ptr, shape=(2,))  # noqa: F841


@sim.kernel
def pointer_not_an_address(a: sim.array(dtype=float)):
    x = sim.array(ptr=1.5, shape=2, dtype=float)  # noqa: F841


@sim.kernel
def pointer_with_five_dims(a: sim.array(dtype=float)):
    x = sim.array(ptr=a.ptr, shape=(1, 1, 1, 1, 1), dtype=float)  # noqa: F841


@sim.kernel
def pointer_with_a_float_shape(a: sim.array(dtype=float)):
    x = sim.array(ptr=a.ptr, shape=2.0, dtype=float)  # noqa: F841


@sim.kernel
def pointer_with_an_array_dtype(a: sim.array(dtype=float)):
    x = sim.array(ptr=a.ptr, shape=2, dtype=a)  # noqa: F841


@pytest.mark.parametrize("kernel, words", [
    (pointer_without_dtype, "sim.array takes ptr, shape, dtype"),
    (pointer_not_an_address, "ptr: expected an address"),
    (pointer_with_five_dims, "shape: expected an int or a tuple of 1 to 4 ints"),
    (pointer_with_a_float_shape, "shape: expected an int or a tuple of 1 to 4 ints"),
    (pointer_with_an_array_dtype, "dtype: expected a scalar type"),
])
def test_array_over_a_pointer_errors(kernel, words):
    with pytest.raises(KernelTypingError, match=words):
        sim.launch(kernel, dim=1, inputs=[np.zeros(2, np.float32)])


# --------------------------------------------------------------------------
# Local arrays: sim.zeros(shape=..., dtype=...) in a kernel or a func (Warp's fixedarray)


@sim.func
def counting(rows: int):
    arr = sim.zeros(shape=(2, 3), dtype=int)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j + rows
    return arr


@sim.struct
class Slot:
    offset: int
    dist: float


@sim.kernel
def local_arrays(out: sim.array(dtype=float)):
    i = sim.tid()
    arr = counting(0)  # returned by a func
    out[i * 8 + 0] = float(arr[1][2])
    out[i * 8 + 1] = float(arr[0].shape[0] + arr[0].shape[1])
    values = sim.zeros(shape=2, dtype=sim.vec3)
    values[1] = sim.vec3(1.0, 2.0, 3.0)
    out[i * 8 + 2] = values[1][2] + values[0][0]
    slots = sim.zeros(shape=(2, 2), dtype=Slot)
    slots[1][0].dist = 2.5
    out[i * 8 + 3] = slots[1][0].dist + float(slots[0][1].offset)
    floats = sim.zeros(shape=3, dtype=sim.float64)
    floats[2] = 1.5
    out[i * 8 + 4] = float(floats[2])
    arr[0, 0] = 9  # each call gives its own array
    out[i * 8 + 5] = float(counting(0)[0, 0])
    out[i * 8 + 6] = float(arr[0, 0])


def test_local_arrays_start_at_zero_and_belong_to_one_thread():
    out = np.zeros(4 * 8, np.float32)
    sim.launch(local_arrays, dim=4, inputs=[out])
    np.testing.assert_array_equal(out.reshape(4, 8), [[5, 3, 3, 2.5, 1.5, 0, 9, 0]] * 4)


def test_fixedarray_annotation():
    ann = sim.fixedarray(shape=(2, 3), dtype=int)
    assert (ann.shape, ann.ndim, ann.dtype) == ((2, 3), 2, np.int32)
    assert ann == sim.fixedarray((2, 3), dtype=sim.int32) and ann != sim.array2d(dtype=int)
    assert hash(ann) == hash(sim.fixedarray((2, 3), dtype=sim.int32))
    assert repr(ann) == "fixedarray(shape=(2, 3), dtype=int32)"
    with pytest.raises(ValueError, match="shape: Array shapes must be non-negative"):
        sim.fixedarray((2, -1))
    with pytest.raises(ValueError, match="shape: expected 1 to 4 extents"):
        sim.fixedarray((1, 1, 1, 1, 1))


@sim.kernel
def runtime_shape():
    n = sim.tid()
    sim.zeros(shape=(n,), dtype=int)


@sim.kernel
def local_without_dtype():
    sim.zeros(shape=2)


@sim.kernel
def local_of_an_array_dtype(a: sim.array(dtype=float)):
    sim.zeros(shape=2, dtype=a)


@sim.kernel
def local_of_five_dims():
    sim.zeros(shape=(1, 1, 1, 1, 1), dtype=int)


@pytest.mark.parametrize("kernel, args, words", [
    (runtime_shape, [], "the `shape` argument must be specified as a constant"),
    (local_without_dtype, [], "sim.zeros takes shape, dtype"),
    (local_of_an_array_dtype, [np.zeros(1, np.float32)], "dtype: expected a scalar type"),
    (local_of_five_dims, [], "shape: expected 1 to 4 extents"),
])
def test_local_array_errors(kernel, args, words):
    with pytest.raises(KernelTypingError, match=words):
        sim.launch(kernel, dim=1, inputs=args)


@sim.kernel
def one_local_array(out: sim.array(dtype=int)):
    arr = sim.zeros(shape=(2, 3), dtype=int)
    out[0] = arr[1, 2]


@sim.kernel
def local_arrays_in_a_loop(out: sim.array(dtype=float)):
    total = float(0.0)
    for k in range(3):
        values = sim.zeros(shape=(2, 2), dtype=sim.vec3)  # zeroed again at each iteration
        values[1, 1] = values[1, 1] + sim.vec3(1.0, 2.0, float(k))
        total = total + sim.length_sq(values[1, 1])
    slots = sim.zeros(shape=2, dtype=Slot)
    slots[1].dist = total
    out[sim.tid()] = slots[1].dist + float(slots[0].offset)


def test_local_arrays_in_a_loop_start_at_zero_each_time():
    out = np.zeros(2, np.float32)
    sim.launch(local_arrays_in_a_loop, dim=2, inputs=[out])
    np.testing.assert_array_equal(out, [20.0, 20.0])  # (1+4+0) + (1+4+1) + (1+4+4)


def test_local_arrays_compile_for_cuda():
    assert one_local_array.compile("cuda", [np.zeros(1, np.int32)], cc=(7, 5))
    assert local_arrays_in_a_loop.compile("cuda", [np.zeros(2, np.float32)], cc=(7, 5))
