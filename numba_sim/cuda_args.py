"""Argument marshalling of numba_sim types for plain ``@cuda.jit`` kernels.

numba-cuda has no global hook for custom argument types, so a kernel that
takes value types is declared ``@cuda.jit(extensions=[sim.cuda_args])``
(``@sim.kernel`` does this itself).  A value type travels as a tuple of its
scalar components, which is exactly how its data model flattens it.
"""

from numba.core import types

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
        from numba_sim.typing.structs import StructType

        if isinstance(ty, StructType):
            from numba_sim.lowering.structs import prepare_cuda_struct

            return prepare_cuda_struct(ty, val)
        return ty, val

    def __repr__(self):
        return "numba_sim.cuda_args"


cuda_args = CudaArgs()
