"""Lowering shared by the spatial structures (see numba_sim/typing/spatial_common.py).

* :func:`register_spatial_lowering` - CPU unboxing of a structure argument
  (its ``_cpu_id``, which refuses CUDA structures) and ``obj.id``;
* :func:`handle_pointer` - the descriptor address of a structure or id;
* :func:`vec3_buffer` - a vec3 in a stack buffer, as the entry points take it.

(The CUDA builds call the entry points through the intrinsics of
numba_sim/spatial/build_intrinsics.py, whose ``BYTE_POINTER`` this is.)
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import NativeValue, unbox

from numba_sim import native
from numba_sim.registry import lowering_registry
from numba_sim.spatial.build_intrinsics import BYTE_POINTER
from numba_sim.typing.spatial_common import SpatialType


def handle_pointer(context, builder, handle_type, value):
    """The descriptor address of a structure or integer id, as an ``i8*``."""
    if not isinstance(handle_type, SpatialType):
        value = context.cast(builder, value, handle_type, types.uint64)
    return builder.inttoptr(value, BYTE_POINTER)


def vec3_buffer(builder, vector):
    """A ``float*`` to a stack copy of the vec3 LLVM value ``vector``."""
    return native.alloca_floats(builder, [builder.extract_value(vector, i) for i in range(3)])


def _unbox_structure(typ, obj, c):
    """A structure argument of CPU code: its ``_cpu_id`` (raises for CUDA structures)."""
    address = cgutils.alloca_once_value(c.builder, ir.Constant(ir.IntType(64), 0))
    failed = cgutils.alloca_once_value(c.builder, cgutils.true_bit)
    id_obj = c.pyapi.object_getattr_string(obj, "_cpu_id")
    with c.builder.if_then(cgutils.is_not_null(c.builder, id_obj)):
        c.builder.store(c.pyapi.long_as_ulonglong(id_obj), address)
        c.pyapi.decref(id_obj)
        c.builder.store(cgutils.is_not_null(c.builder, c.pyapi.err_occurred()), failed)
    return NativeValue(c.builder.load(address), is_error=c.builder.load(failed))


def _structure_id(context, builder, typ, value):
    return value


def register_spatial_lowering(cls):
    """Register unboxing and ``.id`` for the SpatialType subclass ``cls``."""
    unbox(cls)(_unbox_structure)
    lowering_registry.lower_getattr(cls, "id")(_structure_id)
