"""Lowering of the hash grid for both targets (see numba_sim/typing/hash_grid.py).

The traversal is ``cuda_src/hashgrid.h``, reached through the entry points of
``cuda_src/hashgrid_entry_points.h`` (:mod:`numba_sim.native`):

* ``getiter`` puts a ``sim::HashGridQuery`` on the stack (one per loop) and
  calls ``sim_hash_grid_query_begin`` (``..._begin_group`` for a query of one
  group), which also finds the first run;
* ``iternext`` yields ``point_ids[index++]`` while the current run
  ``[index, end)`` of cell-sorted positions lasts, and otherwise calls
  ``sim_hash_grid_query_next_range`` for the next non-empty run (one row of
  touched cells). On the CPU, where a call into the host library is not
  inlined, that is one call per row of cells, never one per candidate; on
  CUDA the device code is LTO-inlined into the kernel.

The loop over a run reads private copies of ``point_ids``, ``index`` and
``end`` (taken after each call), not the state itself: the state's address
escapes into the calls, so LLVM would store and reload ``index`` through
memory for every candidate (a store-to-load chain that was the loop's
critical path), while the copies live in registers.

CPU unboxing of ``sim.HashGrid`` arguments and ``grid.id`` are those of every
spatial structure (numba_sim/lowering/spatial_common.py).
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import RefType, iternext_impl

from numba_sim import native
from numba_sim.lowering.spatial_common import (
    BYTE_POINTER,
    handle_pointer,
    register_spatial_lowering,
    vec3_buffer,
)
from numba_sim.registry import lowering_registry
from numba_sim.spatial.hash_grid_query import hash_grid_point_id, hash_grid_query
from numba_sim.typing.hash_grid import (
    HashGridQueryIteratorType,
    HashGridQueryType,
    HashGridType,
    hash_grid_query_state_type,
)

lower = lowering_registry.lower

_VOID = ir.VoidType()
_I32 = ir.IntType(32)

register_spatial_lowering(HashGridType)


# --------------------------------------------------------------------------
# Queries


@lower(hash_grid_query, types.Any, types.Any, types.float32)
@lower(hash_grid_query, types.Any, types.Any, types.float32, types.int32)
def lower_hash_grid_query(context, builder, sig, args):
    grid_type = sig.args[0]
    grid, point, radius = args[:3]
    query = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    query.grid = builder.ptrtoint(handle_pointer(context, builder, grid_type, grid), ir.IntType(64))
    query.point = point
    query.radius = radius
    query.group = args[3] if len(args) == 4 else ir.Constant(_I32, 0)
    return query._getvalue()


@lower("getiter", HashGridQueryType)
def getiter_hash_grid_query(context, builder, sig, args):
    query = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
    state = cgutils.alloca_once(builder, context.get_data_type(hash_grid_query_state_type))
    arguments = [builder.bitcast(state, BYTE_POINTER), builder.inttoptr(query.grid, BYTE_POINTER),
                 vec3_buffer(builder, query.point), query.radius]
    if sig.args[0].grouped:
        native.call_native(context, builder, "sim_hash_grid_query_begin_group", _VOID,
                           [*arguments, query.group])
    else:
        native.call_native(context, builder, "sim_hash_grid_query_begin", _VOID, arguments)
    iterator = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    iterator.state = state
    iterator.point_ids = cgutils.alloca_once(builder, _I32.as_pointer())
    iterator.index = cgutils.alloca_once(builder, _I32)
    iterator.end = cgutils.alloca_once(builder, _I32)
    _copy_run(builder, iterator)
    return iterator._getvalue()


def _state_slot(builder, state, field):
    """The address of header field ``field`` (0 point_ids, 1 index, 2 end) of a query state."""
    return builder.gep(state, [ir.Constant(_I32, 0), ir.Constant(_I32, field)], inbounds=True)


def _copy_run(builder, iterator):
    """Copies the state's current run into the iterator's private slots."""
    for field, slot in enumerate((iterator.point_ids, iterator.index, iterator.end)):
        builder.store(builder.load(_state_slot(builder, iterator.state, field)), slot)


@lower("iternext", HashGridQueryIteratorType)
@iternext_impl(RefType.UNTRACKED)
def iternext_hash_grid_query(context, builder, sig, args, result):
    iterator = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
    zero = ir.Constant(_I32, 0)

    check = builder.append_basic_block("hash_grid_query.check")
    refill = builder.append_basic_block("hash_grid_query.refill")
    fetch = builder.append_basic_block("hash_grid_query.fetch")
    done = builder.append_basic_block("hash_grid_query.done")
    builder.branch(check)

    builder.position_at_end(check)
    index = builder.load(iterator.index)
    has_candidate = builder.icmp_signed("<", index, builder.load(iterator.end))
    builder.cbranch(has_candidate, fetch, refill)

    builder.position_at_end(refill)  # the current run is used up: ask for the next one
    next_range = ("sim_hash_grid_query_next_group_range" if sig.args[0].grouped
                  else "sim_hash_grid_query_next_range")
    more = native.call_native(context, builder, next_range, _I32,
                              [builder.bitcast(iterator.state, BYTE_POINTER)])
    _copy_run(builder, iterator)
    builder.cbranch(builder.icmp_signed("!=", more, zero), check, done)

    builder.position_at_end(fetch)
    point_ids = builder.load(iterator.point_ids)
    point_id = builder.load(builder.gep(point_ids, [index], inbounds=True))
    builder.store(builder.add(index, ir.Constant(_I32, 1)), iterator.index)
    builder.branch(done)

    builder.position_at_end(done)
    valid = builder.phi(ir.IntType(1))
    valid.add_incoming(cgutils.true_bit, fetch)
    valid.add_incoming(cgutils.false_bit, refill)
    value = builder.phi(_I32)
    value.add_incoming(point_id, fetch)
    value.add_incoming(zero, refill)
    result.set_valid(valid)
    result.yield_(value)


@lower(hash_grid_point_id, types.Any, types.int32)
def lower_hash_grid_point_id(context, builder, sig, args):
    grid, index = args
    return native.call_native(
        context, builder, "sim_hash_grid_point_id", _I32,
        [handle_pointer(context, builder, sig.args[0], grid), index],
    )

