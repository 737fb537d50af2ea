"""Lowering of ``sim.view``: the same memory, reinterpreted (both targets)."""

from llvmlite import ir
from numba.core import cgutils, types

from numba_sim.registry import lowering_registry
from numba_sim.arrays import view

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
