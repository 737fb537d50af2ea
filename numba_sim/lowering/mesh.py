"""Lowering of the mesh for both targets (see numba_sim/typing/mesh.py).

``mesh_query_point`` and ``mesh_query_ray`` call one entry point of
``cuda_src/mesh_entry_points.h`` each, which runs the whole traversal and
writes a ``sim::MeshHit`` to a stack buffer; the result struct is built from
it. ``mesh_query_aabb`` is a BVH traversal (numba_sim/lowering/bvh.py) of the
mesh's triangle BVH.
"""

from llvmlite import ir
from numba.core import cgutils, types

from numba_sim import native
from numba_sim.lowering.bvh import lower_box_query
from numba_sim.lowering.spatial_common import (
    BYTE_POINTER,
    handle_pointer,
    register_spatial_lowering,
    vec3_buffer,
)
from numba_sim.registry import lowering_registry
from numba_sim.spatial.common import MESH_HIT_BYTES
from numba_sim.spatial.mesh_query import (
    mesh_eval_position,
    mesh_query_aabb,
    mesh_query_point,
    mesh_query_ray,
)
from numba_sim.typing.mesh import MeshResultType, MeshType

lower = lowering_registry.lower

_VOID = ir.VoidType()
_I32 = ir.IntType(32)

register_spatial_lowering(MeshType)
lower(mesh_query_aabb, types.Any, types.Any, types.Any)(lower_box_query)


def _vec3_value(context, builder, vec3_type, floats):
    value = cgutils.get_null_value(context.get_value_type(vec3_type))
    for i, component in enumerate(floats):
        value = builder.insert_value(value, component, i)
    return value


def _result(context, builder, result_type, found, hit):
    """The result struct from the entry point's return value and its MeshHit buffer."""
    t, u, v, sign, nx, ny, nz = native.load_floats(builder, hit, 7)
    face_slot = builder.bitcast(builder.gep(hit, [ir.Constant(_I32, 7)], inbounds=True),
                                _I32.as_pointer())
    values = {
        "result": builder.icmp_signed("!=", found, ir.Constant(_I32, 0)),
        "t": t, "u": u, "v": v, "sign": sign, "face": builder.load(face_slot),
    }
    if "normal" in result_type.fields:
        values["normal"] = _vec3_value(context, builder, result_type.fields["normal"],
                                       [nx, ny, nz])
    out = cgutils.create_struct_proxy(result_type)(context, builder)
    for name in result_type.fields:
        setattr(out, name, values[name])
    return out._getvalue()


def _hit_buffer(builder):
    return native.alloca_floats(builder, MESH_HIT_BYTES // 4)


@lower(mesh_query_point, types.Any, types.Any, types.float32)
def lower_mesh_query_point(context, builder, sig, args):
    mesh, point, max_dist = args
    hit = _hit_buffer(builder)
    found = native.call_native(
        context, builder, "sim_mesh_query_point", _I32,
        [handle_pointer(context, builder, sig.args[0], mesh), vec3_buffer(builder, point),
         max_dist, builder.bitcast(hit, BYTE_POINTER)],
    )
    return _result(context, builder, sig.return_type, found, hit)


@lower(mesh_query_ray, types.Any, types.Any, types.Any, types.float32)
def lower_mesh_query_ray(context, builder, sig, args):
    mesh, start, direction, max_t = args
    hit = _hit_buffer(builder)
    found = native.call_native(
        context, builder, "sim_mesh_query_ray", _I32,
        [handle_pointer(context, builder, sig.args[0], mesh), vec3_buffer(builder, start),
         vec3_buffer(builder, direction), max_t, builder.bitcast(hit, BYTE_POINTER)],
    )
    return _result(context, builder, sig.return_type, found, hit)


@lower(mesh_eval_position, types.Any, types.int32, types.float32, types.float32)
def lower_mesh_eval_position(context, builder, sig, args):
    mesh, face, u, v = args
    out = native.alloca_floats(builder, 3)
    native.call_native(
        context, builder, "sim_mesh_eval_position", _VOID,
        [handle_pointer(context, builder, sig.args[0], mesh), face, u, v, out],
    )
    return _vec3_value(context, builder, sig.return_type, native.load_floats(builder, out, 3))


@lowering_registry.lower_getattr_generic(MeshResultType)
def mesh_result_field(context, builder, typ, value, attr):
    return getattr(cgutils.create_struct_proxy(typ)(context, builder, value=value), attr)

