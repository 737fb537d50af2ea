"""Lowering of types as values in kernels (typing/type_attributes.py): a class carries no
data (a dummy value); a length or a shape is a constant."""

from numba.core import types

from numba_sim.registry import lowering_registry
from numba_sim.typing import type_attributes
from numba_sim.typing.type_attributes import ArrayClass
from numba_sim.typing.value_types import ValueType


def _constant_or_dummy(context, builder, typ):
    if isinstance(typ, types.IntegerLiteral):
        return context.get_constant(typ, typ.literal_value)
    if isinstance(typ, types.BaseTuple):
        return context.make_tuple(builder, typ, [_constant_or_dummy(context, builder, t)
                                                 for t in typ])
    return context.get_dummy_value()


@lowering_registry.lower_getattr(types.Array, "__class__")
def lower_array_class(context, builder, typ, value):
    return context.get_dummy_value()


@lowering_registry.lower_getattr_generic(ArrayClass)
def lower_array_class_attribute(context, builder, typ, value, attr):
    result = context.typing_context.resolve_getattr(typ, attr)
    return _constant_or_dummy(context, builder, result)


@lowering_registry.lower_getattr_generic(types.Function)
def lower_value_class_attribute(context, builder, typ, value, attr):
    return _constant_or_dummy(context, builder, type_attributes.class_attribute(
        type_attributes.value_class_spec(typ), attr))


def _lower_value_attribute(attr):
    @lowering_registry.lower_getattr(ValueType, attr)
    def lower_value_attribute(context, builder, typ, value):
        return _constant_or_dummy(context, builder, type_attributes.class_attribute(typ.spec,
                                                                                    attr))


for _attr in ("dtype", "length"):
    _lower_value_attribute(_attr)


@lowering_registry.lower_getattr_generic(types.DType)
def lower_dtype_attribute(context, builder, typ, value, attr):
    return _constant_or_dummy(context, builder, type_attributes.class_attribute(
        typ.dtype.spec, attr))
