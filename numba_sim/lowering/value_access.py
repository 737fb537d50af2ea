"""Lowering of component access on value types (see typing/value_access.py).

Constant indices become ``extractvalue``; a variable index spills the value
to a stack slot and loads through a GEP (LLVM promotes it back to registers
once the index is known after unrolling).
"""

import operator

from llvmlite import ir
from numba.core import cgutils, types

from numba_sim.registry import lowering_registry
from numba_sim.types import KIND_MAT, attribute_slice
from numba_sim.typing.value_access import slice_positions
from numba_sim.typing.value_types import VALUE_TYPES, ValueType

lower = lowering_registry.lower


def index_value(context, builder, index, index_type, length=None):
    """A Python int for constant indices, else an intp LLVM value; with the axis *length*,
    a negative index counts from the end, as in Warp (``v[-1]`` is the last component)."""
    if isinstance(index_type, types.IntegerLiteral):
        index = index_type.literal_value
    elif isinstance(index, ir.Constant) and isinstance(index.constant, int):
        index = index.constant
    else:
        index = context.cast(builder, index, index_type, types.intp)
        if length is None or (isinstance(index_type, types.Integer) and not index_type.signed):
            return index
        wrapped = builder.add(index, ir.Constant(index.type, length))
        return builder.select(builder.icmp_signed("<", index, ir.Constant(index.type, 0)),
                              wrapped, index)
    return index + length if length is not None and index < 0 else index


def component(builder, value, position):
    """Component *position* (Python int or LLVM integer) of an aggregate value."""
    if isinstance(position, int):
        return builder.extract_value(value, position)
    slot = cgutils.alloca_once_value(builder, value)
    zero = ir.Constant(position.type, 0)
    return builder.load(builder.gep(slot, [zero, position], inbounds=True))


def flat_index(builder, row, column, columns):
    """``row * columns + column`` for Python ints or LLVM integers."""
    if isinstance(row, int) and isinstance(column, int):
        return row * columns + column
    intp = (column if isinstance(row, int) else row).type
    row = ir.Constant(intp, row) if isinstance(row, int) else row
    column = ir.Constant(intp, column) if isinstance(column, int) else column
    return builder.add(builder.mul(row, ir.Constant(intp, columns)), column)


def _gather(context, builder, value, indices, result_type):
    out = cgutils.get_null_value(context.get_value_type(result_type))
    for i, index in enumerate(indices):
        out = builder.insert_value(out, component(builder, value, index), i)
    return out


@lower(operator.getitem, ValueType, types.Integer)
def getitem_single(context, builder, sig, args):
    value_type, index_type = sig.args
    value, index = args
    index = index_value(context, builder, index, index_type, value_type.shape[0])
    if value_type.kind != KIND_MAT:
        return component(builder, value, index)
    columns = value_type.shape[1]
    indices = [flat_index(builder, index, j, columns) for j in range(columns)]
    return _gather(context, builder, value, indices, sig.return_type)


@lower(operator.getitem, ValueType, types.BaseTuple)
def getitem_pair(context, builder, sig, args):
    value_type, index_type = sig.args
    value, index = args
    row, column = [
        index_value(context, builder, builder.extract_value(index, k), index_type.types[k],
                    value_type.shape[k])
        for k in range(2)
    ]
    return component(builder, value, flat_index(builder, row, column, value_type.shape[1]))


@lower("static_getitem", ValueType, types.SliceLiteral)
@lower("static_getitem", ValueType, types.Omitted)
def static_slice(context, builder, sig, args):
    """``v[1:]``, ``m[0, :2]``...: a constant slice gathers its components."""
    positions = slice_positions(sig.args[0], args[1])
    if positions is None:
        raise NotImplementedError  # not a slice: Numba falls back on getitem
    return _gather(context, builder, args[0], positions.reshape(-1).tolist(), sig.return_type)


@lowering_registry.lower_getattr_generic(ValueType)
def getattr_component(context, builder, value_type, value, attr):
    start, stop, result_spec = attribute_slice(value_type.spec, attr)
    if result_spec is None:
        return builder.extract_value(value, start)
    return _gather(context, builder, value, range(start, stop), VALUE_TYPES[result_spec])


@lower(len, ValueType)
def value_len(context, builder, sig, args):
    return context.get_constant(types.intp, sig.args[0].spec.length)


@lowering_registry.lower_cast(ValueType, ValueType)
def cast_value(context, builder, from_type, to_type, value):
    """Componentwise conversion between value types of one shape (vec3d -> vec3)."""
    out = cgutils.get_null_value(context.get_value_type(to_type))
    for i in range(to_type.size):
        item = context.cast(builder, builder.extract_value(value, i), from_type.dtype, to_type.dtype)
        out = builder.insert_value(out, item, i)
    return out


@lowering_registry.lower_constant(ValueType)
def constant_value(context, builder, value_type, pyval):
    """A value captured as a global or closure constant (``GRAVITY = vec3(...)``)."""
    items = [context.get_constant(value_type.dtype, x) for x in pyval._components()]
    return ir.Constant.literal_array(items) if items else ir.Constant(
        context.get_value_type(value_type), None)


@lowering_registry.lower_setattr_generic(ValueType)
def refuse_setattr(context, builder, sig, args, attr):
    """``v.x = ...`` in plain Numba code: values are immutable there."""
    value_type = sig.args[0]
    from numba.core.errors import TypingError

    raise TypingError(f"{value_type} values are immutable in plain Numba code: build a new value "
                    f"(e.g. {value_type}(...) with the changed component); component assignment "
                    f"such as v.{attr} = ... works inside @sim.kernel and @sim.func")
