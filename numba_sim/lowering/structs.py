"""Lowering of ``@sim.struct`` types: field access, construction and boxing (CPU).

Struct kernel arguments for numba-cuda are flattened in cuda_args.py."""

import operator

from numba.core import cgutils, types
from numba.core.extending import NativeValue, box, unbox
from numba.core.imputils import impl_ret_borrowed

from numba_sim.lowering.arrays import reinterpret
from numba_sim.lowering.hints import has_owned_arrays, without_owners
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


@lowering_registry.lower(operator.setitem, types.Buffer, types.Any, StructType)
def store_struct(context, builder, sig, args):
    """``a[i] = s`` into an array of structs: the element's array fields keep their data,
    shape and strides but not their owner (meminfo and parent null), as the descriptors
    structs.records writes.  An array element does not own the arrays it points to (as
    in Warp), so a compiled store never leaves a reference it cannot release."""
    array, index, value = args
    struct_type = sig.args[2]
    if context.enable_nrt and has_owned_arrays(struct_type):
        value = without_owners(context, builder, struct_type, value)
    if type(context).__module__.startswith("numba.cuda"):
        from numba.cuda.np.arrayobj import setitem_array
    else:
        from numba.np.arrayobj import setitem_array
    return setitem_array(context, builder, sig, (array, index, value))


@lowering_registry.lower_constant(StructType)
def constant_struct(context, builder, struct_type, pyval):
    """A struct instance captured as a constant (``sim.static(make_params())``, a global): its
    fields' values, fixed when the kernel compiles, as Warp's.  An array field must be unset
    (a null array): an array is no constant (Warp: it cannot be created inside kernels)."""
    proxy = cgutils.create_struct_proxy(struct_type)(context, builder)
    for name, field_type in struct_type.fields:
        value = getattr(pyval, name)
        if isinstance(field_type, types.Array):
            if value is not None:
                raise TypeError(f"{struct_type}: a struct constant cannot hold an array (field "
                                f"{name!r}); pass the struct as a kernel argument instead")
            field = context.get_constant_null(field_type)
        else:
            field = context.get_constant_generic(builder, field_type, value)
        setattr(proxy, name, field)
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
                if isinstance(field_type, types.Array):  # None: a null array, as in Warp
                    is_none = c.builder.icmp_unsigned("==", field_obj, c.pyapi.borrow_none())
                    with c.builder.if_else(is_none) as (none, array):
                        with none:
                            setattr(proxy, name, c.context.get_constant_null(field_type))
                        with array:
                            _unbox_field(c, proxy, name, field_type, field_obj, failed)
                else:
                    _unbox_field(c, proxy, name, field_type, field_obj, failed)
                c.pyapi.decref(field_obj)
    return NativeValue(proxy._getvalue(), is_error=c.builder.load(failed))


def _unbox_field(c, proxy, name, field_type, field_obj, failed):
    storage_type = _storage_array_type(field_type) if isinstance(field_type, types.Array) \
        else None
    native = c.unbox(storage_type or field_type, field_obj)
    value = native.value
    if storage_type is not None:
        value = reinterpret(c.context, c.builder, storage_type, field_type, value)
    setattr(proxy, name, value)
    c.builder.store(c.builder.or_(c.builder.load(failed), native.is_error), failed)


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
        if isinstance(field_type, types.Array):
            items.append(_box_array_field(c, field_type, field_value))
        else:
            c.context.nrt.incref(c.builder, field_type, field_value)
            items.append(c.box(field_type, field_value))
    return call_class_factory(c, struct_type.python_class, "_from_fields", items)


def _box_array_field(c, array_type, value):
    """None for a null array (Warp's unset array field), else the boxed array."""
    data = cgutils.create_struct_proxy(array_type)(c.context, c.builder, value=value).data
    result = cgutils.alloca_once(c.builder, c.pyapi.pyobj)
    with c.builder.if_else(cgutils.is_null(c.builder, data)) as (null, array):
        with null:
            c.builder.store(c.pyapi.make_none(), result)
        with array:
            c.context.nrt.incref(c.builder, array_type, value)
            c.builder.store(c.box(array_type, value), result)
    return c.builder.load(result)
