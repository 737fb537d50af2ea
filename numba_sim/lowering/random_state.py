"""Lowering of the random state (both targets) and its boxing (CPU).

See :mod:`numba_sim.typing.random_state` for the design: a state is an
``i32*`` to a stack slot; :func:`~numba_sim.typing.random_state.advance`
loads, hashes and stores through it.
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import NativeValue, box, unbox
from numba.core.typing import signature

from numba_sim.registry import lowering_registry
from numba_sim.typing.random_state import (
    RandomState, RandomStateType, advance, new_slot, new_state, pcg_hash, state_of,
)

_u32 = ir.IntType(32)
_PCG_SIGNATURE = signature(types.uint32, types.uint32)


@lowering_registry.lower(advance, RandomStateType)
def lower_advance(context, builder, sig, args):
    (slot,) = args
    value = context.compile_internal(builder, pcg_hash, _PCG_SIGNATURE, [builder.load(slot)])
    builder.store(value, slot)
    return value


@lowering_registry.lower(new_state, types.uint32)
def lower_new_state(context, builder, sig, args):
    return new_slot(builder, args[0])


@lowering_registry.lower(state_of, RandomStateType)
def lower_state_of_state(context, builder, sig, args):
    return args[0]


@lowering_registry.lower(state_of, types.uint32)
def lower_state_of_integer(context, builder, sig, args):
    return new_slot(builder, args[0])


@lowering_registry.lower_cast(RandomStateType, types.Integer)
def cast_state_to_integer(context, builder, fromty, toty, value):
    """A state used as an integer is its current value (Warp's state is a uint32)."""
    return context.cast(builder, builder.load(value), types.uint32, toty)


@unbox(RandomStateType)
def unbox_random_state(typ, obj, c):
    """A Python RandomState passed to compiled code: a slot holding its value,
    written back to the object after the call (the callee's draws advance it)."""
    value_obj = c.pyapi.object_getattr_string(obj, "value")
    slot = cgutils.alloca_once(c.builder, _u32, name="random_state")
    failed = cgutils.alloca_once_value(c.builder, cgutils.true_bit)
    with c.builder.if_then(cgutils.is_not_null(c.builder, value_obj)):
        native = c.unbox(types.uint32, value_obj)
        c.pyapi.decref(value_obj)
        c.builder.store(native.value, slot)
        c.builder.store(native.is_error, failed)

    def write_back():
        current = c.pyapi.from_native_value(types.uint32, c.builder.load(slot))
        with c.builder.if_then(cgutils.is_not_null(c.builder, current)):
            c.pyapi.object_setattr_string(obj, "value", current)
            c.pyapi.decref(current)

    return NativeValue(slot, is_error=c.builder.load(failed), cleanup=write_back)


@box(RandomStateType)
def box_random_state(typ, slot, c):
    value_obj = c.box(types.uint32, c.builder.load(slot))
    cls = c.pyapi.unserialize(c.pyapi.serialize_object(RandomState))
    result = c.pyapi.call_function_objargs(cls, (value_obj,))
    c.pyapi.decref(value_obj)
    c.pyapi.decref(cls)
    return result
