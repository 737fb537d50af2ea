"""Lowering of ``sim.view`` (the same memory, reinterpreted), of `shape_dim` (Warp's
``a.shape[i]`` in a kernel) and of Warp's arrays over a pointer (``a.ptr``,
``sim.array(ptr=..., shape=..., dtype=...)``), on both targets; and of the local arrays of
``sim.zeros(shape=..., dtype=...)`` in a kernel (CPU: an NRT allocation, so that a func may
return one; CUDA: the function's local memory)."""

import operator

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing import signature
from numba.np import numpy_support

from numba_sim.registry import lowering_registry
from numba_sim.arrays import array, shape_dim, view, zeros
from numba_sim.native import is_cuda_context
from numba_sim.typing.arrays import constant_shape, dtype_class_type
from numba_sim.typing.value_types import ValueType

_intp = ir.IntType(64)


def reinterpret(context, builder, from_type, to_type, value):
    """The array *value* of *from_type* seen as *to_type*, over the same memory.

    Scalar storage -> value elements drops the trailing storage dims
    (``(n, 3)`` float32 -> ``(n,)`` vec3); the reverse appends them.
    """
    if from_type == to_type:
        return value
    source = cgutils.create_struct_proxy(from_type)(context, builder, value=value)
    result = cgutils.create_struct_proxy(to_type)(context, builder)
    shapes = cgutils.unpack_tuple(builder, source.shape, from_type.ndim)
    strides = cgutils.unpack_tuple(builder, source.strides, from_type.ndim)
    element_bytes = context.get_abi_sizeof(context.get_data_type(to_type.dtype))
    if to_type.ndim <= from_type.ndim:
        shapes, strides = shapes[: to_type.ndim], strides[: to_type.ndim]
    else:  # append the storage dims of from_type's elements, C order
        trailing = from_type.dtype.shape
        extra_strides, step = [], element_bytes
        for extent in reversed(trailing):
            extra_strides.insert(0, context.get_constant(types.intp, step))
            step *= extent
        shapes = shapes + [context.get_constant(types.intp, e) for e in trailing]
        strides = strides + extra_strides
    nitems = context.get_constant(types.intp, 1)
    for extent in shapes:
        nitems = builder.mul(nitems, extent)
    result.meminfo = source.meminfo
    result.parent = source.parent
    result.nitems = nitems
    result.itemsize = context.get_constant(types.intp, element_bytes)
    result.data = builder.bitcast(source.data, result.data.type)
    result.shape = cgutils.pack_array(builder, shapes)
    result.strides = cgutils.pack_array(builder, strides)
    return result._getvalue()


@lowering_registry.lower(view, types.Array, types.Any)
def lower_view(context, builder, sig, args):
    result = reinterpret(context, builder, sig.args[0], sig.return_type, args[0])
    if context.enable_nrt:
        context.nrt.incref(builder, sig.return_type, result)
    return result


@lowering_registry.lower(shape_dim, types.Any, types.IntegerLiteral)
def lower_shape_dim(context, builder, sig, args):
    container, index_type = sig.args
    index = index_type.literal_value
    if isinstance(container, types.Array):
        index = index + container.ndim if index < 0 else index
        if index >= container.ndim:  # Warp's shape has 4 entries, zeros past ndim
            return context.get_constant(sig.return_type, 0)
        shape = cgutils.create_struct_proxy(container)(context, builder, value=args[0]).shape
        return builder.extract_value(shape, index)
    shape_type = context.typing_context.resolve_getattr(container, "shape")
    shape = context.get_getattr(container, "shape")(context, builder, container, args[0], "shape")
    if isinstance(shape_type, types.BaseTuple):
        return builder.extract_value(shape, index + len(shape_type) if index < 0 else index)
    getitem = signature(sig.return_type, shape_type, types.intp)
    return context.get_function(operator.getitem, getitem)(
        builder, [shape, context.get_constant(types.intp, index)])


@lowering_registry.lower_getattr(types.Array, "ptr")
def lower_array_ptr(context, builder, array_type, value):
    data = cgutils.create_struct_proxy(array_type)(context, builder, value=value).data
    return builder.ptrtoint(data, context.get_value_type(types.uint64))


@lowering_registry.lower(array, types.Integer, types.Any, types.Any)
def lower_array_from_pointer(context, builder, sig, args):
    """A C-contiguous array over the memory at the address: no meminfo, no parent (it owns
    nothing, as Warp's array made from a pointer)."""
    result_type, (_, shape_type, _) = sig.return_type, sig.args
    if isinstance(shape_type, types.Integer):
        extents = [context.cast(builder, args[1], shape_type, types.intp)]
    else:
        extents = [context.cast(builder, builder.extract_value(args[1], k), t, types.intp)
                   for k, t in enumerate(shape_type)]
    element_bytes = context.get_abi_sizeof(context.get_data_type(result_type.dtype))
    strides, step = [], context.get_constant(types.intp, element_bytes)
    for extent in reversed(extents):
        strides.insert(0, step)
        step = builder.mul(step, extent)
    nitems = context.get_constant(types.intp, 1)
    for extent in extents:
        nitems = builder.mul(nitems, extent)
    result = cgutils.create_struct_proxy(result_type)(context, builder)
    address = context.cast(builder, args[0], sig.args[0], types.uint64)
    result.data = builder.inttoptr(address, result.data.type)
    result.shape = cgutils.pack_array(builder, extents)
    result.strides = cgutils.pack_array(builder, strides)
    result.nitems = nitems
    result.itemsize = context.get_constant(types.intp, element_bytes)
    result.meminfo = cgutils.get_null_value(result.meminfo.type)
    result.parent = cgutils.get_null_value(result.parent.type)
    return result._getvalue()


def _storage_of(element):
    """(NumPy dtype, trailing dims) of the scalar storage of an array of *element*."""
    if isinstance(element, ValueType):
        return numpy_support.as_dtype(element.dtype), tuple(element.shape)
    struct_class = getattr(element, "python_class", None)
    if struct_class is not None:
        return struct_class.numpy_dtype, ()
    return numpy_support.as_dtype(element), ()


def _stack_array(context, builder, array_type, shape):
    """A zero-filled C-contiguous array of *shape* in the function's frame (CUDA's local
    memory): numba-cuda lets a device function return only arrays it was given, so the
    array never outlives the frame.  Zeroed at each call (a call in a loop starts again)."""
    element = context.get_data_type(array_type.dtype)
    element_bytes = context.get_abi_sizeof(element)
    count = 1
    for extent in shape:
        count *= extent
    storage = cgutils.alloca_once(builder, element, size=max(count, 1))
    cgutils.memset(builder, storage, context.get_constant(types.intp, count * element_bytes), 0)
    strides, step = [], element_bytes
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    result = cgutils.create_struct_proxy(array_type)(context, builder)
    context.populate_array(
        result, data=builder.bitcast(storage, result.data.type),
        shape=[context.get_constant(types.intp, e) for e in shape],
        strides=[context.get_constant(types.intp, s) for s in strides],
        itemsize=context.get_constant(types.intp, element_bytes), meminfo=None)
    return result._getvalue()


@lowering_registry.lower(zeros, types.Any, types.Any)
def lower_local_zeros(context, builder, sig, args):
    """A zero-filled array of the constant shape: on the CPU NumPy's ``zeros`` of the
    element's scalar storage, reinterpreted as the element type (the same memory); on CUDA
    `_stack_array`."""
    result_type = sig.return_type
    if is_cuda_context(context):
        return _stack_array(context, builder, result_type, constant_shape(sig.args[0]))
    dtype, trailing = _storage_of(result_type.dtype)
    shape = constant_shape(sig.args[0]) + trailing
    storage_type = types.Array(numpy_support.from_dtype(dtype), len(shape), "C")

    def allocate():
        return np.zeros(shape, dtype)

    storage = context.compile_internal(builder, allocate, signature(storage_type), [])
    return reinterpret(context, builder, storage_type, result_type, storage)


@lowering_registry.lower(types.DType, types.DType, types.VarArg(types.Any))
def call_dtype(context, builder, sig, args):
    """``a.dtype(x)``: the call of the element type's class (typing/arrays.py)."""
    class_type = dtype_class_type(context.typing_context, sig.args[0].dtype)
    inner = signature(sig.return_type, *sig.args[1:])
    class_type.get_call_type(context.typing_context, inner.args, {})  # registers the template
    return context.get_function(class_type, inner)(builder, args[1:])
