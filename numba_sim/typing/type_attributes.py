"""Types as values in kernels (Warp's generic code): Warp's type attributes of value types
and the class of an array.

* A value type's ``.dtype`` (its scalar type's class, ``float32``) and ``.length`` (its
  number of components, Warp's ``type_size``), read from a value (``v.length``) or from its
  class (``vec2.dtype``, ``type(v).length``), as Warp's ``Adjoint.resolve_type_attribute``:
  compile-time constants (``identity(n=v.length, dtype=v.dtype)``).  ``a.dtype.dtype`` of
  an array of value types likewise (``a.dtype`` is Numba's dtype of the elements).
* ``type(a)`` of an array ``a``: Warp's array type, whose ``.dtype`` is the element type's
  class (``vec3``, ``float32``, a struct class) and ``.ndim`` its dims.

Lowering: lowering/type_attributes.py (classes carry no data; lengths are constants).
"""

from numba.core import types
from numba.core.datamodel import models
from numba.core.extending import register_model
from numba.core.typing.templates import AttributeTemplate
from numba.np import numpy_support

from numba_sim.registry import typing_registry
from numba_sim.types import Value
from numba_sim.typing.arrays import dtype_class_type
from numba_sim.typing.value_types import ValueType


class ArrayClass(types.Dummy):
    """``type(a)`` of an array ``a``: Warp's array type, whose ``dtype`` is the element
    type's class."""

    def __init__(self, array_type):
        self.array_type = array_type
        super().__init__(name=f"class({array_type})")

    @property
    def key(self):
        return self.array_type


register_model(ArrayClass)(models.OpaqueModel)


@typing_registry.register_attr
class ArrayClassOf(AttributeTemplate):
    key = types.Array

    def resolve___class__(self, array_type):
        return ArrayClass(array_type)


@typing_registry.register_attr
class ArrayClassAttributes(AttributeTemplate):
    key = ArrayClass

    def resolve_dtype(self, cls):
        return dtype_class_type(self.context, cls.array_type.dtype)

    def resolve_ndim(self, cls):
        return types.IntegerLiteral(cls.array_type.ndim)


def _scalar_class(spec):
    return types.NumberClass(numpy_support.from_dtype(spec.dtype))


def class_attribute(spec, attr):
    """The Numba type of Warp's type attribute *attr* of value type *spec*, or None."""
    if attr == "dtype":
        return _scalar_class(spec)
    if attr == "length":
        return types.IntegerLiteral(spec.size)
    return None


def value_class_spec(function_type):
    """The spec of the value type whose class *function_type* (a Numba Function type) is."""
    key = getattr(function_type, "typing_key", None)
    return key.spec if isinstance(key, type) and issubclass(key, Value) else None


@typing_registry.register_attr
class ValueClassAttributes(AttributeTemplate):
    key = types.Function

    def generic_resolve(self, function_type, attr):
        spec = value_class_spec(function_type)
        return None if spec is None else class_attribute(spec, attr)


@typing_registry.register_attr
class ValueTypeAttributes(AttributeTemplate):
    """``v.dtype``, ``v.length`` of a value (Warp reads its type's attributes)."""

    key = ValueType

    def resolve_dtype(self, value_type):
        return class_attribute(value_type.spec, "dtype")

    def resolve_length(self, value_type):
        return class_attribute(value_type.spec, "length")


@typing_registry.register_attr
class DTypeScalarAttributes(AttributeTemplate):
    """``a.dtype.dtype`` and friends, for an array of value types."""

    key = types.DType

    def generic_resolve(self, dtype_type, attr):
        if not isinstance(dtype_type.dtype, ValueType):
            return None
        return class_attribute(dtype_type.dtype.spec, attr)
