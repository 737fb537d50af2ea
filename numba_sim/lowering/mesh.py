"""Lowering of the mesh for both targets (see numba_sim/typing/mesh.py).

The point queries (``mesh_query_point`` and Warp's variants) and
``mesh_query_ray`` call one entry point of
``cuda_src/mesh_entry_points.h`` each, which runs the whole traversal and
writes a ``sim::MeshHit`` to a stack buffer; the result struct is built from
it. ``mesh_query_aabb`` is a BVH traversal (numba_sim/lowering/bvh.py) of the
mesh's triangle BVH.
"""

from llvmlite import ir
from numba.core import cgutils, types

from numba_sim import native
from numba_sim.lowering.bvh import lower_box_query, lower_sphere_query
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
    mesh_eval_velocity,
    mesh_get_bvh,
    mesh_get_group_root,
    mesh_query_aabb,
    mesh_query_furthest_point_no_sign,
    mesh_query_point,
    mesh_query_point_no_sign,
    mesh_query_point_sign_normal,
    mesh_query_point_sign_parity,
    mesh_query_point_sign_winding_number,
    mesh_query_ray,
    mesh_query_ray_anyhit,
    mesh_query_ray_count_intersections,
    mesh_query_sphere,
)
from numba_sim.typing.mesh import MeshResultType, MeshType

lower = lowering_registry.lower

_VOID = ir.VoidType()
_I32 = ir.IntType(32)

register_spatial_lowering(MeshType)
lower(mesh_query_aabb, types.Any, types.Any, types.Any)(lower_box_query)
lower(mesh_query_sphere, types.Any, types.Any, types.float32)(lower_sphere_query)


@lower(mesh_get_bvh, types.Any)
def lower_mesh_get_bvh(context, builder, sig, args):
    bvh = native.call_native(context, builder, "sim_mesh_get_bvh", BYTE_POINTER,
                             [handle_pointer(context, builder, sig.args[0], args[0])])
    return builder.ptrtoint(bvh, ir.IntType(64))


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


def _point_query_lowering(entry, defaults=()):
    """The lowering of a point query: ``entry(mesh, point, *scalars, hit)``.

    ``defaults`` are the float32 values of optional trailing scalars the call
    left out.
    """

    def lower_point_query(context, builder, sig, args):
        mesh, point, *scalars = args
        # (mesh, point, distance, then the optional scalars given; the rest default)
        scalars += [context.get_constant(types.float32, d) for d in defaults[len(args) - 3:]]
        hit = _hit_buffer(builder)
        found = native.call_native(
            context, builder, entry, _I32,
            [handle_pointer(context, builder, sig.args[0], mesh), vec3_buffer(builder, point),
             *scalars, builder.bitcast(hit, BYTE_POINTER)],
        )
        return _result(context, builder, sig.return_type, found, hit)

    lower_point_query.__name__ = f"lower_{entry}"
    return lower_point_query


for _key, _entry in ((mesh_query_point, "sim_mesh_query_point"),
                     (mesh_query_point_no_sign, "sim_mesh_query_point_no_sign"),
                     (mesh_query_furthest_point_no_sign, "sim_mesh_query_furthest_point_no_sign")):
    lower(_key, types.Any, types.Any, types.float32)(_point_query_lowering(_entry))
_sign_normal = _point_query_lowering("sim_mesh_query_point_sign_normal", defaults=(1.0e-3,))
lower(mesh_query_point_sign_normal, types.Any, types.Any, types.float32)(_sign_normal)
lower(mesh_query_point_sign_normal, types.Any, types.Any, types.float32, types.float32)(
    _sign_normal)
_winding = _point_query_lowering("sim_mesh_query_point_sign_winding_number",
                                 defaults=(2.0, 0.5))
for _count in range(3):
    lower(mesh_query_point_sign_winding_number, types.Any, types.Any,
          *([types.float32] * (1 + _count)))(_winding)


@lower(mesh_query_point_sign_parity, types.Any, types.Any, types.float32)
@lower(mesh_query_point_sign_parity, types.Any, types.Any, types.float32, types.int32)
@lower(mesh_query_point_sign_parity, types.Any, types.Any, types.float32, types.int32,
       types.float32)
def lower_mesh_query_point_sign_parity(context, builder, sig, args):
    mesh, point, max_dist = args[:3]
    n_sample = args[3] if len(args) > 3 else ir.Constant(_I32, 1)
    scale = args[4] if len(args) > 4 else context.get_constant(types.float32, 0.1)
    hit = _hit_buffer(builder)
    found = native.call_native(
        context, builder, "sim_mesh_query_point_sign_parity", _I32,
        [handle_pointer(context, builder, sig.args[0], mesh), vec3_buffer(builder, point),
         max_dist, n_sample, scale, builder.bitcast(hit, BYTE_POINTER)],
    )
    return _result(context, builder, sig.return_type, found, hit)


def _ray_arguments(context, builder, sig, args, scalars):
    """(mesh, start, dir, *the *scalars* leading arguments, root) of a ray query's call."""
    mesh, start, direction = args[:3]
    root = args[3 + scalars] if len(args) > 3 + scalars else ir.Constant(_I32, -1)
    return [handle_pointer(context, builder, sig.args[0], mesh), vec3_buffer(builder, start),
            vec3_buffer(builder, direction), *args[3:3 + scalars], root]


@lower(mesh_query_ray, types.Any, types.Any, types.Any, types.float32)
@lower(mesh_query_ray, types.Any, types.Any, types.Any, types.float32, types.int32)
def lower_mesh_query_ray(context, builder, sig, args):
    mesh, start, direction, max_t, root = _ray_arguments(context, builder, sig, args, 1)
    hit = _hit_buffer(builder)
    found = native.call_native(
        context, builder, "sim_mesh_query_ray", _I32,
        [mesh, start, direction, max_t, builder.bitcast(hit, BYTE_POINTER), root],
    )
    return _result(context, builder, sig.return_type, found, hit)


@lower(mesh_query_ray_anyhit, types.Any, types.Any, types.Any, types.float32)
@lower(mesh_query_ray_anyhit, types.Any, types.Any, types.Any, types.float32, types.int32)
def lower_mesh_query_ray_anyhit(context, builder, sig, args):
    found = native.call_native(context, builder, "sim_mesh_query_ray_anyhit", _I32,
                               _ray_arguments(context, builder, sig, args, 1))
    return builder.icmp_signed("!=", found, ir.Constant(_I32, 0))


@lower(mesh_query_ray_count_intersections, types.Any, types.Any, types.Any)
@lower(mesh_query_ray_count_intersections, types.Any, types.Any, types.Any, types.int32)
def lower_mesh_query_ray_count_intersections(context, builder, sig, args):
    return native.call_native(context, builder, "sim_mesh_query_ray_count_intersections", _I32,
                              _ray_arguments(context, builder, sig, args, 0))


@lower(mesh_get_group_root, types.Any, types.int32)
def lower_mesh_get_group_root(context, builder, sig, args):
    mesh, group = args
    return native.call_native(context, builder, "sim_mesh_get_group_root", _I32,
                              [handle_pointer(context, builder, sig.args[0], mesh), group])


def _eval_lowering(entry):
    """The lowering of mesh_eval_position / mesh_eval_velocity: ``entry(mesh, face, u, v, out)``."""

    def lower_mesh_eval(context, builder, sig, args):
        mesh, face, u, v = args
        out = native.alloca_floats(builder, 3)
        native.call_native(
            context, builder, entry, _VOID,
            [handle_pointer(context, builder, sig.args[0], mesh), face, u, v, out],
        )
        return _vec3_value(context, builder, sig.return_type, native.load_floats(builder, out, 3))

    lower_mesh_eval.__name__ = f"lower_{entry}"
    return lower_mesh_eval


lower(mesh_eval_position, types.Any, types.int32, types.float32, types.float32)(
    _eval_lowering("sim_mesh_eval_position"))
lower(mesh_eval_velocity, types.Any, types.int32, types.float32, types.float32)(
    _eval_lowering("sim_mesh_eval_velocity"))


@lowering_registry.lower_getattr_generic(MeshResultType)
def mesh_result_field(context, builder, typ, value, attr):
    return getattr(cgutils.create_struct_proxy(typ)(context, builder, value=value), attr)

