"""Lowering of the BVH for both targets (see numba_sim/typing/bvh.py).

The traversal is ``cuda_src/bvh.h``, reached through the entry points of
``cuda_src/bvh_entry_points.h`` (:mod:`numba_sim.native`):

* ``getiter`` puts a ``sim::BvhQuery`` on the stack (one per loop) and calls
  the kind's ``..._begin`` entry point;
* ``iternext`` calls the kind's ``..._next``, which returns the next item
  whose box passes the test, or -1. On CUDA the device code is LTO-inlined
  into the kernel; on the CPU it is one call per item.
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
from numba_sim.spatial.bvh_query import (
    bvh_get_group_root,
    bvh_query_aabb,
    bvh_query_bounded,
    bvh_query_capsule,
    bvh_query_ray,
    bvh_query_sphere,
)
from numba_sim.typing.bvh import (
    BOUNDED_KINDS,
    QUERY_KIND_CODES,
    QUERY_KINDS,
    BoxQueryIteratorType,
    BoxQueryType,
    BvhType,
    box_query_state_type,
)

lower = lowering_registry.lower

_VOID = ir.VoidType()
_I32 = ir.IntType(32)
_F32 = ir.FloatType()

register_spatial_lowering(BvhType)


# --------------------------------------------------------------------------
# Queries


def lower_box_query(context, builder, sig, args):
    """A BoxQueryType value from (structure or id, vec3, vec3[, root node])."""
    handle, a, b = args[:3]
    query = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    query.handle = builder.ptrtoint(handle_pointer(context, builder, sig.args[0], handle),
                                    ir.IntType(64))
    query.a = a
    query.b = b
    query.root = args[3] if len(args) == 4 else ir.Constant(_I32, -1)
    query.kind = ir.Constant(_I32, QUERY_KIND_CODES[sig.return_type.kind])
    query.radius = ir.Constant(_F32, 0.0)
    query.max_dist = ir.Constant(_F32, float("inf"))
    return query._getvalue()


@lowering_registry.lower_cast(BoxQueryType, BoxQueryType)
def cast_box_query(context, builder, fromty, toty, value):
    """To the kind-erased ``BoxQuery[any]``: the same value (it carries its kind's code)."""
    return value


for _builtin in (bvh_query_aabb, bvh_query_ray):
    lower(_builtin, types.Any, types.Any, types.Any)(lower_box_query)
    lower(_builtin, types.Any, types.Any, types.Any, types.int32)(lower_box_query)


def lower_sphere_query(context, builder, sig, args):
    """A BoxQueryType value from (structure or id, center, radius[, root]): the state's
    second vector is (radius, 0, 0)."""
    zero = ir.Constant(ir.FloatType(), 0.0)
    radius_vector = cgutils.get_null_value(context.get_value_type(sig.args[1]))
    for i, component in enumerate((args[2], zero, zero)):
        radius_vector = builder.insert_value(radius_vector, component, i)
    vec3 = sig.args[1]
    box_sig = sig.return_type(sig.args[0], vec3, vec3, *sig.args[3:])
    return lower_box_query(context, builder, box_sig, [args[0], args[1], radius_vector, *args[3:]])


lower(bvh_query_sphere, types.Any, types.Any, types.float32)(lower_sphere_query)


def lower_capsule_query(context, builder, sig, args):
    """A BoxQueryType value from (bvh or id, start, dir, radius[, root])."""
    vec3 = sig.args[1]
    box_sig = sig.return_type(sig.args[0], vec3, vec3, *sig.args[4:])
    value = lower_box_query(context, builder, box_sig, [args[0], args[1], args[2], *args[4:]])
    query = cgutils.create_struct_proxy(sig.return_type)(context, builder, value=value)
    query.radius = args[3]
    return query._getvalue()


lower(bvh_query_capsule, types.Any, types.Any, types.Any, types.float32)(lower_capsule_query)
lower(bvh_query_capsule, types.Any, types.Any, types.Any, types.float32, types.int32)(
    lower_capsule_query)


@lower(bvh_query_bounded, BoxQueryType, types.float32)
def lower_bvh_query_bounded(context, builder, sig, args):
    """The query with Warp's max_dist (``bvh_query_next(query, index, max_dist)`` loops)."""
    query = cgutils.create_struct_proxy(sig.return_type)(context, builder, value=args[0])
    query.max_dist = args[1]
    return query._getvalue()
lower(bvh_query_sphere, types.Any, types.Any, types.float32, types.int32)(lower_sphere_query)


@lower(bvh_get_group_root, types.Any, types.int32)
def lower_bvh_get_group_root(context, builder, sig, args):
    handle, group = args
    return native.call_native(
        context, builder, "sim_bvh_group_root", _I32,
        [handle_pointer(context, builder, sig.args[0], handle), group])


@lower("getiter", BoxQueryType)
def getiter_box_query(context, builder, sig, args):
    query_type = sig.args[0]
    query = cgutils.create_struct_proxy(query_type)(context, builder, value=args[0])
    state = cgutils.alloca_once(builder, context.get_data_type(box_query_state_type))
    begin = QUERY_KINDS[query_type.kind][0]
    arguments = [builder.bitcast(state, BYTE_POINTER), builder.inttoptr(query.handle, BYTE_POINTER),
                 vec3_buffer(builder, query.a), vec3_buffer(builder, query.b)]
    if query_type.kind in ("capsule", "any"):
        arguments.append(native.alloca_floats(builder, [query.radius]))
    arguments.append(query.root)
    if query_type.kind == "any":
        arguments.append(query.kind)
    native.call_native(context, builder, begin, _VOID, arguments)
    if query_type.kind in BOUNDED_KINDS:  # Warp's max_dist, when a loop gave one
        bounded = builder.fcmp_ordered("!=", query.max_dist, ir.Constant(_F32, float("inf")))
        with builder.if_then(bounded, likely=False):
            native.call_native(context, builder, "sim_bvh_query_set_max_dist", _VOID,
                               [builder.bitcast(state, BYTE_POINTER), query.max_dist])
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

