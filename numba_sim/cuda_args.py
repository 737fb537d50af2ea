"""Argument marshalling of numba_sim types for plain ``@cuda.jit`` kernels.

numba-cuda has no global hook for custom argument types, so a kernel that
takes value types is declared ``@cuda.jit(extensions=[sim.cuda_args])``
(``@sim.kernel`` does this itself).  A value type travels as a tuple of its
scalar components, which is exactly how its data model flattens it.
"""

import numpy as np
from numba.core import types

from numba_sim.typing.structs import StructType
from numba_sim.typing.value_types import ValueType


_CONVERTERS = {}
"""Numba type class -> ``converter(ty, val) -> (ty, val)`` (spatial structures register here)."""


def register_converter(type_class, converter):
    """Have CUDA kernel arguments of Numba type *type_class* converted by *converter*."""
    _CONVERTERS[type_class] = converter


class CudaArgs:
    """A numba-cuda kernel extension converting numba_sim arguments."""

    def prepare_args(self, ty, val, **kwargs):
        for type_class, converter in _CONVERTERS.items():
            if isinstance(ty, type_class):
                return converter(ty, val)
        if isinstance(ty, ValueType):
            components = tuple(val._storage.reshape(-1).tolist())
            return types.UniTuple(ty.dtype, ty.size), components
        if isinstance(ty, StructType):
            return _struct_argument(self, ty, val)
        return ty, val

    def __repr__(self):
        return "numba_sim.cuda_args"


def _array_argument(array_type, value):
    """A CUDA array field flattened exactly as the Array data model passes it."""
    interface = value.__cuda_array_interface__
    element = array_type.dtype
    trailing = len(element.shape) if isinstance(element, ValueType) else 0
    shape = tuple(interface["shape"])
    itemsize = np.dtype(interface["typestr"]).itemsize
    strides = interface.get("strides") or tuple(
        int(np.prod(shape[k + 1:], dtype=np.int64)) * itemsize for k in range(len(shape)))
    outer_shape = shape[: len(shape) - trailing]
    element_size = int(np.prod(shape[len(outer_shape):], dtype=np.int64)) * itemsize
    nitems = int(np.prod(outer_shape, dtype=np.int64))
    values = (0, 0, nitems, element_size, interface["data"][0], *outer_shape,
              *strides[: len(outer_shape)])
    return types.UniTuple(types.intp, len(values)), values


def _struct_argument(converter, struct_type, value):
    """(Tuple type, values) of a struct argument: its fields, each converted."""
    field_types, field_values = [], []
    for name, field_type in struct_type.fields:
        item = getattr(value, name)
        if isinstance(field_type, types.Array):
            if item is None or not hasattr(item, "__cuda_array_interface__"):
                raise TypeError(f"{struct_type.python_class.__name__}.{name}: a struct passed "
                                f"to a CUDA kernel needs CUDA arrays, got {type(item).__name__}")
            field_type, item = _array_argument(field_type, item)
        else:
            field_type, item = converter.prepare_args(field_type, item)
        field_types.append(field_type)
        field_values.append(item)
    return types.Tuple(field_types), tuple(field_values)


cuda_args = CudaArgs()
