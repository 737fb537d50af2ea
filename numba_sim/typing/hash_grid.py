"""Numba types and typing of the hash grid (both targets).

* :data:`hash_grid_type` - a ``sim.HashGrid`` passed to compiled code. Its
  value is the address of the grid's descriptor on its device (the grid's
  ``id``), so it lowers exactly like Warp's ``uint64`` ids; the query builtins
  take either. As for every spatial structure, CPU code unboxes the object
  and CUDA kernels receive ``id`` (numba_sim/typing/spatial_common.py).
* :data:`hash_grid_query_type` - what ``hash_grid_query(grid, p, radius)``
  returns: the query's arguments (grid address, point, radius; the group is
  unused). Iterating it starts a traversal. ``hash_grid_query(grid, p, radius,
  group)`` returns :data:`hash_grid_group_query_type`, whose traversal (other
  entry points) yields the points of that group only: queries without a group
  run exactly the ungrouped code.
* :class:`HashGridQueryIteratorType` - a loop's iterator: a pointer to a
  :data:`hash_grid_query_state_type` on the stack, the state of
  ``sim::HashGridQuery`` (cuda_src/hashgrid.h), one per loop, so nested
  queries on the same or different grids never share state, and pointers to
  private copies of that state's current run (see
  numba_sim/lowering/hash_grid.py).
"""

from numba.core import types
from numba.core.datamodel import models
from numba.core.extending import register_model
from numba.core.typing.templates import AbstractTemplate, signature

from numba_sim.operations import fail
from numba_sim.registry import typing_registry
from numba_sim.spatial.common import HASH_GRID_QUERY_BYTES
from numba_sim.spatial.hash_grid import HashGrid
from numba_sim.spatial.hash_grid_query import (
    QUERY_NEXT_MESSAGE,
    hash_grid_point_id,
    hash_grid_query,
    hash_grid_query_next,
)
from numba_sim.typing.spatial_common import (
    SpatialType,
    check_arity,
    check_number,
    handle_argument,
    opaque_state_members,
    query_signature,
    register_spatial_type,
)
from numba_sim.typing.value_types import value_type_by_name


@register_spatial_type(HashGrid)
class HashGridType(SpatialType):
    """A ``sim.HashGrid`` in compiled code (the address of its descriptor; see
    numba_sim/typing/spatial_common.py, which also gives it ``.id``)."""

    cuda_hint = "build the grid with device='cuda' (sim.HashGrid(..., device='cuda'))"

    def __init__(self):
        super().__init__(name="HashGrid")


class HashGridQueryType(types.SimpleIterableType):
    """The value of ``hash_grid_query(grid, point, radius[, group])`` (``grouped``: with a
    group)."""

    def __init__(self, grouped=False):
        self.grouped = grouped
        suffix = "[group]" if grouped else ""
        super().__init__(f"HashGridQuery{suffix}", HashGridQueryIteratorType(grouped))


class HashGridQueryIteratorType(types.SimpleIteratorType):
    """The iterator of a ``for j in query:`` loop; yields int32 point indices."""

    def __init__(self, grouped=False):
        self.grouped = grouped
        suffix = "[group]" if grouped else ""
        super().__init__(f"HashGridQueryIterator{suffix}", types.int32)


class HashGridQueryStateType(types.Type):
    """``sim::HashGridQuery``: the traversal state of one loop."""

    def __init__(self):
        super().__init__(name="HashGridQueryState")


hash_grid_type = HashGrid._numba_type_
hash_grid_query_type = HashGridQueryType()
hash_grid_group_query_type = HashGridQueryType(grouped=True)
hash_grid_query_state_type = HashGridQueryStateType()


@register_model(HashGridQueryType)
class HashGridQueryModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [
            ("grid", types.uint64),
            ("point", value_type_by_name("vec3")),
            ("radius", types.float32),
            ("group", types.int32),  # grouped queries only
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
        private = opaque_state_members(HASH_GRID_QUERY_BYTES - _QUERY_STATE_HEADER_BYTES)
        super().__init__(dmm, fe_type, [*QUERY_STATE_HEADER, *private])


@register_model(HashGridQueryIteratorType)
class HashGridQueryIteratorModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [
            ("state", types.EphemeralPointer(hash_grid_query_state_type)),
            # the current run, copied out of the state after each call into
            # cuda_src/hashgrid.h: stack slots whose address never escapes, so
            # that LLVM keeps them in registers across the loop over a run
            ("point_ids", types.EphemeralPointer(types.CPointer(types.int32))),
            ("index", types.EphemeralPointer(types.int32)),
            ("end", types.EphemeralPointer(types.int32)),
        ]
        super().__init__(dmm, fe_type, members)


# --------------------------------------------------------------------------
# Typing


@typing_registry.register_global(hash_grid_query)
class HashGridQueryTyping(AbstractTemplate):
    def generic(self, args, kws):
        grouped = not kws and len(args) == 4
        result = hash_grid_group_query_type if grouped else hash_grid_query_type
        return query_signature("hash_grid_query", result, hash_grid_type, args, kws, ("point",),
                               ("radius",), "group")


@typing_registry.register_global(hash_grid_point_id)
class HashGridPointIdTyping(AbstractTemplate):
    def generic(self, args, kws):
        name = "hash_grid_point_id"
        check_arity(name, args, kws, ("grid", "index"))
        grid = handle_argument(name, args, args[0], hash_grid_type)
        check_number(name, args, args[1], "index", kind=types.Integer)
        return signature(types.int32, grid, types.int32)


@typing_registry.register_global(hash_grid_query_next)
class HashGridQueryNextTyping(AbstractTemplate):
    def generic(self, args, kws):
        fail("hash_grid_query_next", args, QUERY_NEXT_MESSAGE)
