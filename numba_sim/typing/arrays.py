"""Typing of ``sim.view(a, dtype)``: a scalar array seen as an array of value types.

A C-contiguous ``(..., 3)`` float32 array viewed as ``vec3`` is an
``Array(vec3, ndim - 1, 'C')`` over the same memory (a mat33 view drops two
trailing dims).  Numba's own getitem/setitem/len/shape then work on it, on the
CPU and on CUDA.
"""

from numba.core import types
from numba.core.typing.templates import AbstractTemplate, signature
from numba.np import numpy_support

from numba_sim.arrays import view
from numba_sim.operations import fail
from numba_sim.registry import typing_registry
from numba_sim.types import Value
from numba_sim.typing.structs import struct_class_of, struct_type_of
from numba_sim.typing.value_types import VALUE_TYPES, ValueType


def value_type_of_marker(marker):
    """The element type named by a typed dtype argument (``sim.vec3``, a struct class), or None."""
    if isinstance(marker, types.Function):
        key = marker.typing_key
        if isinstance(key, type) and issubclass(key, Value) and key.spec is not None:
            return VALUE_TYPES[key.spec]  # also the types made on demand (sim.types.vector)
        struct_class = struct_class_of(marker)
        if struct_class is not None:
            return struct_type_of(struct_class)
    return None


def _struct_view_type(array_type, struct_type, name):
    record = numpy_support.from_dtype(struct_type.python_class.numpy_dtype)
    if not isinstance(array_type, types.Array) or array_type.dtype != record \
            or array_type.layout != "C":
        fail(name, (array_type, struct_type),
             f"viewing as {struct_type} needs a C-contiguous array of its numpy_dtype")
    return types.Array(struct_type, array_type.ndim, "C", readonly=not array_type.mutable)


def view_type(array_type, value_type, name="view"):
    """The Array type of *array_type* viewed as *value_type* (TypingError if impossible)."""
    if isinstance(array_type, types.Array) and array_type.dtype == value_type:
        return array_type
    if not isinstance(value_type, ValueType):
        return _struct_view_type(array_type, value_type, name)
    trailing = len(value_type.shape)
    if not isinstance(array_type, types.Array) or array_type.dtype != value_type.dtype \
            or array_type.ndim <= trailing or array_type.layout != "C":
        fail(name, (array_type, value_type),
             f"viewing as {value_type} needs a C-contiguous {value_type.dtype} array with "
             f"trailing shape {value_type.shape}")
    return types.Array(value_type, array_type.ndim - trailing, "C", readonly=not array_type.mutable)


@typing_registry.register_global(view)
class ViewTemplate(AbstractTemplate):
    def generic(self, args, kws):
        if kws or len(args) != 2:
            return None
        value_type = value_type_of_marker(args[1])
        if value_type is None:
            fail("view", args, "the second argument must be a value type such as sim.vec3")
        return signature(view_type(args[0], value_type), *args)
