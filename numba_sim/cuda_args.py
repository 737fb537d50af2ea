"""Argument marshalling of numba_sim types for plain ``@cuda.jit`` kernels.

numba-cuda has no global hook for custom argument types, so a kernel that
takes value types is declared ``@cuda.jit(extensions=[sim.cuda_args])``
(``@sim.kernel`` does this itself).  A value type travels as a tuple of its
scalar components, which is exactly how its data model flattens it.
"""

from numba.core import types

from numba_sim import structs
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
    """A CUDA array field (None: a null array) flattened exactly as the Array data model
    passes it: the descriptor a struct array's record holds (structs.array_descriptor)."""
    meminfo, parent, nitems, itemsize, data, shape, strides = \
        structs.array_descriptor(array_type, value)
    values = (meminfo, parent, nitems, itemsize, data, *shape, *strides)
    return types.UniTuple(types.intp, len(values)), values


def _struct_argument(converter, struct_type, value):
    """(Tuple type, values) of a struct argument: its fields, each converted."""
    field_types, field_values = [], []
    for name, field_type in struct_type.fields:
        item = getattr(value, name)
        if isinstance(field_type, types.Array):
            if item is not None and not hasattr(item, "__cuda_array_interface__"):
                raise TypeError(f"{struct_type.python_class.__name__}.{name}: a struct passed "
                                f"to a CUDA kernel needs CUDA arrays, got {type(item).__name__}")
            field_type, item = _array_argument(field_type, item)
        else:
            field_type, item = converter.prepare_args(field_type, item)
        field_types.append(field_type)
        field_values.append(item)
    return types.Tuple(field_types), tuple(field_values)


cuda_args = CudaArgs()
