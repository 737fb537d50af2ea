"""Boxing and unboxing of value types on the CPU target (Python <-> native).

Unboxing reads the instance's storage array (``_storage``, typed read-only: compiled
code gets a copy of the components, as Warp passes values) and loads its components;
boxing builds a tuple of Python scalars and calls the class's ``_from_components``.
"""

from numba.core import cgutils, types
from numba.core.extending import NativeValue, box, unbox

from numba_sim.typing.value_types import ValueType


@unbox(ValueType)
def unbox_value(value_type, obj, c):
    storage_type = types.Array(value_type.dtype, len(value_type.shape), "C", readonly=True)
    storage_obj = c.pyapi.object_getattr_string(obj, "_storage")
    failed = cgutils.alloca_once_value(c.builder, cgutils.false_bit)
    result = cgutils.alloca_once(c.builder, c.context.get_value_type(value_type))
    with c.builder.if_else(cgutils.is_null(c.builder, storage_obj)) as (is_null, not_null):
        with is_null:
            c.builder.store(cgutils.true_bit, failed)
        with not_null:
            native = c.unbox(storage_type, storage_obj)
            c.pyapi.decref(storage_obj)
            array = c.context.make_array(storage_type)(c.context, c.builder, value=native.value)
            data = c.builder.bitcast(array.data, c.context.get_value_type(value_type).as_pointer())
            c.builder.store(c.builder.load(data), result)
            c.builder.store(native.is_error, failed)
            c.context.nrt.decref(c.builder, storage_type, native.value)
    return NativeValue(c.builder.load(result), is_error=c.builder.load(failed))


def call_class_factory(c, cls, factory_name, items):
    """``cls.factory_name(tuple(items))`` from compiled code; steals the *items* references."""
    packed = c.pyapi.tuple_pack(items)
    for item in items:
        c.pyapi.decref(item)
    class_object = c.pyapi.unserialize(c.pyapi.serialize_object(cls))
    factory = c.pyapi.object_getattr_string(class_object, factory_name)
    result = c.pyapi.call_function_objargs(factory, (packed,))
    for obj in (factory, packed, class_object):
        c.pyapi.decref(obj)
    return result


@box(ValueType)
def box_value(value_type, value, c):
    items = [c.box(value_type.dtype, c.builder.extract_value(value, i))
             for i in range(value_type.size)]
    return call_class_factory(c, value_type.python_class, "_from_components", items)
