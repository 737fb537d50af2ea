"""Numba types of ``@sim.struct`` classes: one StructType per class, a C-layout
data model (the layout of the class's aligned NumPy dtype), attribute typing
and constructor typing.  Lowering is in lowering/structs.py."""

from numba.core import types
from numba.core.datamodel import models
from numba.core.extending import register_model, typeof_impl
from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, signature
from numba.np import numpy_support

from numba_sim import arrays, registry
from numba_sim.operations import fail
from numba_sim.registry import typing_registry
from numba_sim.structs import FIELD_ARRAY, FIELD_SCALAR, FIELD_STRUCT, FIELD_VALUE, Struct
from numba_sim.typing.value_types import VALUE_TYPES, ValueType

_STRUCT_TYPES = {}


class StructType(types.Type):
    """The Numba type of one ``@sim.struct`` class."""

    def __init__(self, cls):
        self.python_class = cls
        self.fields = tuple((f.name, field_numba_type(f)) for f in cls._fields)
        super().__init__(name=f"struct({cls.__module__}.{cls.__qualname__})")

    @property
    def key(self):
        return self.python_class

    def field_type(self, name):
        return dict(self.fields).get(name)

    def __reduce__(self):
        return struct_type_of, (self.python_class,)


@register_model(StructType)
class StructModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, list(fe_type.fields))


def element_numba_type(dtype):
    """The Numba type of an element dtype (value class, struct class or NumPy dtype)."""
    dtype = arrays.element_dtype(dtype)
    if isinstance(dtype, type) and issubclass(dtype, Struct):
        return struct_type_of(dtype)
    if isinstance(dtype, type):
        return VALUE_TYPES[dtype.spec]
    return numpy_support.from_dtype(dtype)


def array_numba_type(annotation):
    """The Numba array type a ``sim.array`` annotation has inside compiled code."""
    element = element_numba_type(annotation.dtype)
    layout = "C" if isinstance(element, (ValueType, StructType)) else "A"
    return types.Array(element, annotation.ndim, layout)


def construct_struct(*fields):
    """The typing and lowering key of every struct class's constructor in compiled code
    (the class itself is what a kernel calls: see :func:`register_struct`)."""
    raise TypeError("construct_struct is a compile-time key; call the struct class")


def struct_class_of(function_type):
    """The struct class a ``types.Function`` constructs, or None."""
    return getattr(function_type.templates[0], "struct_class", None) \
        if isinstance(function_type, types.Function) else None


def field_numba_type(field):
    if field.kind == FIELD_SCALAR:
        return numpy_support.from_dtype(__import__("numpy").dtype(field.scalar_type))
    if field.kind == FIELD_VALUE:
        return VALUE_TYPES[field.annotation.spec]
    if field.kind == FIELD_STRUCT:
        return struct_type_of(field.annotation)
    assert field.kind == FIELD_ARRAY
    return array_numba_type(field.annotation)


def struct_type_of(cls):
    struct_type = _STRUCT_TYPES.get(cls)
    if struct_type is None:
        struct_type = _STRUCT_TYPES.setdefault(cls, StructType(cls))
    return struct_type


@typeof_impl.register(Struct)
def _typeof_struct(val, c):
    return struct_type_of(type(val))


@typing_registry.register_attr
class StructAttributes(AttributeTemplate):
    key = StructType

    def generic_resolve(self, struct_type, attr):
        return struct_type.field_type(attr)


def _constructor_template(struct_type):
    cls = struct_type.python_class

    class StructConstructor(AbstractTemplate):
        key = construct_struct
        struct_class = cls

        def generic(self, args, kws):
            if kws:
                fail(cls.__name__, args, "in compiled code a struct is built from no argument "
                                         "(zeros) or from all its fields positionally")
            if not args:
                return signature(struct_type)
            if len(args) != len(struct_type.fields):
                names = ", ".join(name for name, _ in struct_type.fields)
                fail(cls.__name__, args, f"takes no argument or all {len(struct_type.fields)} "
                                         f"fields ({names}), {len(args)} given")
            return signature(struct_type, *(t for _, t in struct_type.fields))

    StructConstructor.__name__ = f"Construct_{cls.__name__}"
    return StructConstructor


def register_struct(cls):
    """Declare the typing of a new struct class on both targets (its constructor's lowering
    is :func:`construct_struct`'s, shared by every struct)."""
    struct_type = struct_type_of(cls)
    # the functional form: a struct class need not be reachable as a module global
    typing_registry.register_global(cls, types.Function(_constructor_template(struct_type)))
    registry.install()
    return struct_type
