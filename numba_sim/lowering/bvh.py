"""Lowering of the BVH for both targets (see numba_sim/typing/bvh.py).

The traversal is ``cuda_src/bvh.h``, reached through the entry points of
``cuda_src/bvh_entry_points.h`` (:mod:`numba_sim.native`):

* ``getiter`` puts a ``sim::BvhQuery`` on the stack (one per loop) and calls
  the kind's ``..._begin`` entry point;
* ``iternext`` calls the kind's ``..._next``, which returns the next item
  whose box passes the test, or -1. On CUDA the device code is LTO-inlined
  into the kernel; on the CPU it is one call per item.

Also here: the intrinsics that the CUDA build (numba_sim/spatial/bvh_build_cuda.py)
uses to run the build steps of the same header, one element per thread.
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic
from numba.core.imputils import RefType, iternext_impl

from numba_sim import native
from numba_sim.lowering.spatial_common import (
    BYTE_POINTER,
    array_pointer,
    handle_pointer,
    register_spatial_lowering,
    vec3_buffer,
)
from numba_sim.registry import lowering_registry
from numba_sim.spatial.bvh_query import bvh_query_aabb, bvh_query_ray
from numba_sim.typing.bvh import (
    QUERY_KINDS,
    BoxQueryIteratorType,
    BoxQueryType,
    BvhType,
    box_query_state_type,
)

lower = lowering_registry.lower

_VOID = ir.VoidType()
_I32 = ir.IntType(32)

register_spatial_lowering(BvhType)


# --------------------------------------------------------------------------
# Queries


def lower_box_query(context, builder, sig, args):
    """A BoxQueryType value from (structure or id, vec3, vec3)."""
    handle, a, b = args
    query = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    query.handle = builder.ptrtoint(handle_pointer(context, builder, sig.args[0], handle),
                                    ir.IntType(64))
    query.a = a
    query.b = b
    return query._getvalue()


for _builtin in (bvh_query_aabb, bvh_query_ray):
    lower(_builtin, types.Any, types.Any, types.Any)(lower_box_query)


@lower("getiter", BoxQueryType)
def getiter_box_query(context, builder, sig, args):
    query_type = sig.args[0]
    query = cgutils.create_struct_proxy(query_type)(context, builder, value=args[0])
    state = cgutils.alloca_once(builder, context.get_data_type(box_query_state_type))
    begin = QUERY_KINDS[query_type.kind][0]
    native.call_native(
        context, builder, begin, _VOID,
        [builder.bitcast(state, BYTE_POINTER), builder.inttoptr(query.handle, BYTE_POINTER),
         vec3_buffer(builder, query.a), vec3_buffer(builder, query.b)],
    )
    iterator = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    iterator.state = state
    return iterator._getvalue()


@lower("iternext", BoxQueryIteratorType)
@iternext_impl(RefType.UNTRACKED)
def iternext_box_query(context, builder, sig, args, result):
    iterator = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
    next_item = QUERY_KINDS[sig.args[0].kind][1]
    item = native.call_native(context, builder, next_item, _I32,
                              [builder.bitcast(iterator.state, BYTE_POINTER)])
    result.set_valid(builder.icmp_signed(">=", item, ir.Constant(_I32, 0)))
    result.yield_(item)


# --------------------------------------------------------------------------
# Intrinsics for the CUDA build (numba_sim/spatial/bvh_build_cuda.py)


def _pointer_args(context, builder, signature, args, elements):
    """Array arguments as data pointers (``elements[i]`` None: keep the value)."""
    out = []
    for array_type, value, element in zip(signature.args, args, elements):
        if element is None:
            out.append(value)
        elif element == "handle":
            out.append(builder.inttoptr(value, BYTE_POINTER))
        else:
            out.append(array_pointer(context, builder, array_type, value, element))
    return out


def _native_intrinsic(name, return_type, argument_types, elements):
    """An intrinsic calling entry point ``name`` with arrays passed as pointers.

    ``argument_types``: Numba types (None: any array); ``elements``: per argument
    the pointee LLVM type of an array, ``"handle"`` for a uint64 address, or
    None for a scalar passed as is.
    """

    def typer(typingctx, *args):
        sig_args = [a if t is None else t for a, t in zip(args, argument_types)]
        sig = return_type(*sig_args)

        def codegen(context, builder, signature, llargs):
            llvm_return = _I32 if return_type == types.int32 else _VOID
            call = native.call_native(context, builder, name, llvm_return,
                                      _pointer_args(context, builder, signature, llargs, elements))
            return call if return_type == types.int32 else context.get_dummy_value()

        return sig, codegen

    return typer


_F, _I = ir.FloatType(), _I32


@intrinsic
def native_morton_code(typingctx, lowers, uppers, i, origin, inv_extent):
    """Morton code of item i's box centre (``sim_bvh_morton_code``)."""
    return _native_intrinsic("sim_bvh_morton_code", types.int32,
                             [None, None, types.int32, None, None],
                             [_F, _F, None, _F, _F])(typingctx, lowers, uppers, i, origin,
                                                    inv_extent)


@intrinsic
def native_lbvh_build_node(typingctx, codes, n, i, nodes, parents, ranges):
    """Karras slot i (``sim_lbvh_build_node``); nodes is an int32 array of 8 per node."""
    return _native_intrinsic("sim_lbvh_build_node", types.void,
                             [None, types.int32, types.int32, None, None, None],
                             [_I, None, None, _I, _I, _I])(typingctx, codes, n, i, nodes, parents,
                                                          ranges)


@intrinsic
def native_lbvh_finish_node(typingctx, nodes, parents, ranges, n, leaf_size, s, is_leaf):
    """Finish slot s (``sim_lbvh_finish_node``): its refit group or -1; is_leaf[0] set."""
    return _native_intrinsic("sim_lbvh_finish_node", types.int32,
                             [None, None, None, types.int32, types.int32, types.int32, None],
                             [_I, _I, _I, None, None, None, _I])(
        typingctx, nodes, parents, ranges, n, leaf_size, s, is_leaf)


@intrinsic
def native_refit_level_node(typingctx, bvh_id, k, i):
    """Refit node i of refit group k of the tree at bvh_id (``sim_bvh_refit_level_node``)."""
    return _native_intrinsic("sim_bvh_refit_level_node", types.void,
                             [types.uint64, types.int32, types.int32],
                             ["handle", None, None])(typingctx, bvh_id, k, i)


@intrinsic
def native_set_bvh(typingctx, bvh_id, nodes, primitive_indices, refit_order, level_offsets,
                   lowers, uppers, counts):
    """Fill the descriptor at bvh_id (``sim_bvh_set``)."""
    return _native_intrinsic("sim_bvh_set", types.void,
                             [types.uint64, None, None, None, None, None, None, None],
                             ["handle", _I, _I, _I, _I, _F, _F, _I])(
        typingctx, bvh_id, nodes, primitive_indices, refit_order, level_offsets, lowers, uppers,
        counts)
