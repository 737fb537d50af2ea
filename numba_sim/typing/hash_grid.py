"""Numba types and typing of the hash grid (both targets).

* :data:`hash_grid_type` - a ``sim.HashGrid`` passed to compiled code. Its
  value is the address of the grid's descriptor on its device (the grid's
  ``id``), so it lowers exactly like Warp's ``uint64`` ids; the query builtins
  take either. CPU code unboxes the object (numba_sim/lowering/hash_grid.py);
  CUDA kernels receive ``id`` through :func:`prepare_cuda_arg`.
* :data:`hash_grid_query_type` - what ``hash_grid_query(grid, p, radius)``
  returns: the query's arguments (grid address, point, radius). Iterating it
  starts a traversal.
* :class:`HashGridQueryIteratorType` - a loop's iterator: a pointer to a
  :data:`hash_grid_query_state_type` on the stack, the state of
  ``sim::HashGridQuery`` (cuda_src/hashgrid.h), one per loop, so nested
  queries on the same or different grids never share state.
"""

from numba.core import types
from numba.core.datamodel import models
from numba.core.extending import register_model
from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, signature

from numba_sim.operations import fail
from numba_sim.registry import typing_registry
from numba_sim.spatial.hash_grid_query import (
    QUERY_NEXT_MESSAGE,
    QUERY_STATE_BYTES,
    hash_grid_point_id,
    hash_grid_query,
    hash_grid_query_next,
)
from numba_sim.typing.value_types import value_type_by_name


class HashGridType(types.Type):
    """A ``sim.HashGrid`` in compiled code (the address of its descriptor)."""

    def __init__(self):
        super().__init__(name="HashGrid")


class HashGridQueryType(types.SimpleIterableType):
    """The value of ``hash_grid_query(grid, point, radius)``."""

    def __init__(self):
        super().__init__("HashGridQuery", HashGridQueryIteratorType())


class HashGridQueryIteratorType(types.SimpleIteratorType):
    """The iterator of a ``for j in query:`` loop; yields int32 point indices."""

    def __init__(self):
        super().__init__("HashGridQueryIterator", types.int32)


class HashGridQueryStateType(types.Type):
    """``sim::HashGridQuery``: the traversal state of one loop."""

    def __init__(self):
        super().__init__(name="HashGridQueryState")


hash_grid_type = HashGridType()
hash_grid_query_type = HashGridQueryType()
hash_grid_query_state_type = HashGridQueryStateType()


@register_model(HashGridType)
class HashGridModel(models.PrimitiveModel):
    """A 64-bit address, passed to functions and kernels as one ``uint64``."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, dmm.lookup(types.uint64).get_value_type())


@register_model(HashGridQueryType)
class HashGridQueryModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [
            ("grid", types.uint64),
            ("point", value_type_by_name("vec3")),
            ("radius", types.float32),
        ]
        super().__init__(dmm, fe_type, members)


#: Fields of ``sim::HashGridQuery`` read by the compiled iteration, in order;
#: the rest of the struct is private to cuda_src/hashgrid.h.
QUERY_STATE_HEADER = (
    ("point_ids", types.CPointer(types.int32)),  # sorted position -> point index
    ("index", types.int32),  # next position of the current run to yield
    ("end", types.int32),  # end of the current run
)
_QUERY_STATE_HEADER_BYTES = 16


@register_model(HashGridQueryStateType)
class HashGridQueryStateModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        private_words = (QUERY_STATE_BYTES - _QUERY_STATE_HEADER_BYTES) // 8
        members = [*QUERY_STATE_HEADER, ("private", types.UniTuple(types.uint64, private_words))]
        super().__init__(dmm, fe_type, members)


@register_model(HashGridQueryIteratorType)
class HashGridQueryIteratorModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("state", types.EphemeralPointer(hash_grid_query_state_type))]
        super().__init__(dmm, fe_type, members)


# --------------------------------------------------------------------------
# Typing


def is_grid(t):
    """Whether ``t`` designates a grid: a HashGrid, or a 64-bit integer id (Warp's uint64)."""
    return isinstance(t, HashGridType) or (isinstance(t, types.Integer) and t.bitwidth == 64)


def _grid_argument(t):
    """The type a grid argument is converted to: HashGrid stays, ids become uint64."""
    return t if isinstance(t, HashGridType) else types.uint64


@typing_registry.register_global(hash_grid_query)
class HashGridQueryTyping(AbstractTemplate):
    def generic(self, args, kws):
        if kws or len(args) != 3:
            fail("hash_grid_query", args, "takes three positional arguments (grid, point, radius)")
        grid, point, radius = (types.unliteral(a) for a in args)
        vec3 = value_type_by_name("vec3")
        if not is_grid(grid):
            fail("hash_grid_query", args,
                 f"grid must be a sim.HashGrid or its id (a 64-bit integer: uint64), "
                 f"not {grid}")
        if point != vec3:
            fail("hash_grid_query", args, f"point must be a vec3, not {point}")
        if not isinstance(radius, (types.Integer, types.Float)):
            fail("hash_grid_query", args, f"radius must be a number, not {radius}")
        return signature(hash_grid_query_type, _grid_argument(grid), vec3, types.float32)


@typing_registry.register_global(hash_grid_point_id)
class HashGridPointIdTyping(AbstractTemplate):
    def generic(self, args, kws):
        if kws or len(args) != 2:
            fail("hash_grid_point_id", args, "takes two positional arguments (grid, index)")
        grid, index = (types.unliteral(a) for a in args)
        if not is_grid(grid):
            fail("hash_grid_point_id", args,
                 f"grid must be a sim.HashGrid or its id (a 64-bit integer: uint64), "
                 f"not {grid}")
        if not isinstance(index, types.Integer):
            fail("hash_grid_point_id", args, f"index must be an integer, not {index}")
        return signature(types.int32, _grid_argument(grid), types.int32)


@typing_registry.register_global(hash_grid_query_next)
class HashGridQueryNextTyping(AbstractTemplate):
    def generic(self, args, kws):
        fail("hash_grid_query_next", args, QUERY_NEXT_MESSAGE)


@typing_registry.register_attr
class HashGridAttributes(AttributeTemplate):
    key = HashGridType

    def resolve_id(self, grid):
        return types.uint64


# --------------------------------------------------------------------------
# CUDA kernel arguments


def prepare_cuda_arg(ty, val):
    """Convert a HashGrid argument of a CUDA kernel to its ``uint64`` id.

    A hook for numba-cuda's ``prepare_args`` (see numba_sim/cuda_args.py):
    returns ``(ty, val)`` unchanged for other types.
    """
    if not isinstance(ty, HashGridType):
        return ty, val
    device = getattr(val, "device", None)
    if not (isinstance(device, str) and device.startswith("cuda")):
        raise ValueError(
            f"a CUDA kernel received a HashGrid on {device!r}; build the grid with "
            "device='cuda' (sim.HashGrid(..., device='cuda')) to use it on the GPU"
        )
    return types.uint64, val.id


def _register_cuda_converter():
    from numba_sim.cuda_args import register_converter

    register_converter(HashGridType, prepare_cuda_arg)


_register_cuda_converter()
