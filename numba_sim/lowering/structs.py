"""Lowering of ``@sim.struct`` types: field access, construction and boxing (CPU).

Struct kernel arguments for numba-cuda are flattened in cuda_args.py."""

from numba.core import cgutils, types
from numba.core.extending import NativeValue, box, unbox
from numba.core.imputils import impl_ret_borrowed

from numba_sim.lowering.arrays import reinterpret
from numba_sim.lowering.value_boxing import call_class_factory
from numba_sim.registry import lowering_registry
from numba_sim.typing.structs import StructType, construct_struct
from numba_sim.typing.value_types import ValueType


def _storage_array_type(array_type):
    """The scalar array type whose memory an Array(value type) views."""
    element = array_type.dtype
    if isinstance(element, ValueType):
        return types.Array(element.dtype, array_type.ndim + len(element.shape), "C")
    return None


@lowering_registry.lower_getattr_generic(StructType)
def struct_getattr(context, builder, struct_type, value, attr):
    proxy = cgutils.create_struct_proxy(struct_type)(context, builder, value=value)
    field_type = struct_type.field_type(attr)
    return impl_ret_borrowed(context, builder, field_type, getattr(proxy, attr))


@lowering_registry.lower(construct_struct, types.VarArg(types.Any))
def construct(context, builder, sig, args):
    """``MyStruct()`` (zeros) or ``MyStruct(field, ...)``, for every struct class."""
    struct_type = sig.return_type
    proxy = cgutils.create_struct_proxy(struct_type)(context, builder)
    if not args:
        return cgutils.get_null_value(proxy._get_be_type(proxy._datamodel))
    for (name, field_type), value in zip(struct_type.fields, args):
        if context.enable_nrt:
            context.nrt.incref(builder, field_type, value)
        setattr(proxy, name, value)
    return proxy._getvalue()


@lowering_registry.lower_cast(StructType, StructType)
def struct_identity_cast(context, builder, from_type, to_type, value):
    return value


@unbox(StructType)
def unbox_struct(struct_type, obj, c):
    proxy = cgutils.create_struct_proxy(struct_type)(c.context, c.builder)
    failed = cgutils.alloca_once_value(c.builder, cgutils.false_bit)
    for name, field_type in struct_type.fields:
        field_obj = c.pyapi.object_getattr_string(obj, name)
        with c.builder.if_else(cgutils.is_null(c.builder, field_obj)) as (missing, present):
            with missing:
                c.builder.store(cgutils.true_bit, failed)
            with present:
                storage_type = _storage_array_type(field_type) if isinstance(
                    field_type, types.Array) else None
                native = c.unbox(storage_type or field_type, field_obj)
                value = native.value
                if storage_type is not None:
                    value = reinterpret(c.context, c.builder, storage_type, field_type, value)
                setattr(proxy, name, value)
                c.builder.store(c.builder.or_(c.builder.load(failed), native.is_error), failed)
                c.pyapi.decref(field_obj)
    return NativeValue(proxy._getvalue(), is_error=c.builder.load(failed))


@box(StructType)
def box_struct(struct_type, value, c):
    proxy = cgutils.create_struct_proxy(struct_type)(c.context, c.builder, value=value)
    items = []
    for name, field_type in struct_type.fields:
        field_value = getattr(proxy, name)
        storage_type = _storage_array_type(field_type) if isinstance(field_type, types.Array) \
            else None
        if storage_type is not None:
            field_value = reinterpret(c.context, c.builder, field_type, storage_type, field_value)
            field_type = storage_type
        c.context.nrt.incref(c.builder, field_type, field_value)
        items.append(c.box(field_type, field_value))
    return call_class_factory(c, struct_type.python_class, "_from_fields", items)
