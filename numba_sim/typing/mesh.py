"""Numba types and typing of the mesh (both targets).

* :data:`mesh_type` - a ``sim.Mesh`` in compiled code, the address of its
  descriptor (see :mod:`numba_sim.typing.spatial_common`).
* :data:`mesh_query_point_type` / :data:`mesh_query_ray_type` - the results
  of ``mesh_query_point`` and ``mesh_query_ray``: plain structs with Warp's
  fields (``.result .sign .face .u .v``; ``.result .t .u .v .sign .normal
  .face``).
* ``mesh_query_aabb`` returns the BVH's :class:`~numba_sim.typing.bvh.BoxQueryType`
  of kind ``"mesh_aabb"``: a traversal of the mesh's triangle BVH.
"""

from numba.core import types
from numba.core.datamodel import models
from numba.core.extending import register_model
from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, signature

from numba_sim.operations import fail
from numba_sim.registry import typing_registry
from numba_sim.spatial.mesh import Mesh
from numba_sim.spatial.mesh_query import (
    OUT_ARGUMENT_FORMS,
    POINT_FIELDS,
    QUERY_NEXT_MESSAGE,
    RAY_FIELDS,
    mesh_eval_position,
    mesh_eval_velocity,
    mesh_get_bvh,
    mesh_get_group_root,
    mesh_query_aabb,
    mesh_query_aabb_next,
    mesh_query_next,
    mesh_query_sphere,
    mesh_query_furthest_point_no_sign,
    mesh_query_point,
    mesh_query_point_no_sign,
    mesh_query_point_sign_normal,
    mesh_query_point_sign_parity,
    mesh_query_point_sign_winding_number,
    mesh_query_ray,
    mesh_query_ray_anyhit,
    mesh_query_ray_count_intersections,
    out_argument_message,
)
from numba_sim.typing.bvh import box_query_signature, sphere_query_signature
from numba_sim.typing.spatial_common import (
    SpatialType,
    check_arity,
    check_number,
    check_vec3,
    handle_argument,
    register_spatial_type,
)
from numba_sim.typing.value_types import value_type_by_name


@register_spatial_type(Mesh)
class MeshType(SpatialType):
    """A ``sim.Mesh`` in compiled code (the address of its descriptor)."""

    cuda_hint = "build the Mesh from CUDA arrays"

    def __init__(self):
        super().__init__(name="Mesh")


class MeshResultType(types.Type):
    """The result of a mesh query: a struct of ``fields`` ({name: Numba type})."""

    def __init__(self, name, fields):
        self.fields = fields
        super().__init__(name=name)


def _field_types(fields):
    names = {"bool": types.boolean, "float32": types.float32, "int32": types.int32}
    return {name: names.get(kind) or value_type_by_name(kind) for name, kind in fields}


mesh_type = Mesh._numba_type_
mesh_query_point_type = MeshResultType("MeshQueryPoint", _field_types(POINT_FIELDS))
mesh_query_ray_type = MeshResultType("MeshQueryRay", _field_types(RAY_FIELDS))


@register_model(MeshResultType)
class MeshResultModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, list(fe_type.fields.items()))


@typing_registry.register_attr
class MeshResultAttributes(AttributeTemplate):
    key = MeshResultType

    def generic_resolve(self, value, attr):
        return value.fields.get(attr)


def _float32(name, args, value, what):
    check_number(name, args, value, what)
    return types.float32


def point_query_signature(name, args, kws, distance="max_dist", optional=()):
    """The typing of the point queries: (mesh, point, distance[, *optional]) -> MeshQueryPoint.

    Warp's output-argument forms (more arguments) are typing errors that
    name the struct form.
    """
    names = ("mesh", "point", distance)
    if not kws and len(args) > len(names) + len(optional):
        fail(name, args, out_argument_message(name, *OUT_ARGUMENT_FORMS[name]))
    if not kws and len(names) < len(args) <= len(names) + len(optional):
        names = names + optional[:len(args) - len(names)]
    check_arity(name, args, kws, names)
    handle = handle_argument(name, args, args[0], mesh_type)
    check_vec3(name, args, args[1], "point")
    scalars = [_float32(name, args, value, what) for value, what in zip(args[2:], names[2:])]
    return signature(mesh_query_point_type, handle, value_type_by_name("vec3"), *scalars)


@typing_registry.register_global(mesh_query_point)
class MeshQueryPointTyping(AbstractTemplate):
    def generic(self, args, kws):
        return point_query_signature("mesh_query_point", args, kws)


@typing_registry.register_global(mesh_query_point_no_sign)
class MeshQueryPointNoSignTyping(AbstractTemplate):
    def generic(self, args, kws):
        return point_query_signature("mesh_query_point_no_sign", args, kws)


@typing_registry.register_global(mesh_query_furthest_point_no_sign)
class MeshQueryFurthestPointNoSignTyping(AbstractTemplate):
    def generic(self, args, kws):
        return point_query_signature("mesh_query_furthest_point_no_sign", args, kws,
                                     distance="min_dist")


@typing_registry.register_global(mesh_query_point_sign_normal)
class MeshQueryPointSignNormalTyping(AbstractTemplate):
    def generic(self, args, kws):
        return point_query_signature("mesh_query_point_sign_normal", args, kws,
                                     optional=("epsilon",))


@typing_registry.register_global(mesh_query_point_sign_winding_number)
class MeshQueryPointSignWindingNumberTyping(AbstractTemplate):
    def generic(self, args, kws):
        return point_query_signature("mesh_query_point_sign_winding_number", args, kws,
                                     optional=("accuracy", "threshold"))


@typing_registry.register_global(mesh_query_point_sign_parity)
class MeshQueryPointSignParityTyping(AbstractTemplate):
    def generic(self, args, kws):
        name = "mesh_query_point_sign_parity"
        if not kws and len(args) > 5:
            fail(name, args, out_argument_message(name, *OUT_ARGUMENT_FORMS[name]))
        names = ("mesh", "point", "max_dist", "n_sample", "perturbation_scale")
        check_arity(name, args, kws, names[:max(3, len(args))] if not kws else names[:3])
        handle = handle_argument(name, args, args[0], mesh_type)
        check_vec3(name, args, args[1], "point")
        scalars = [_float32(name, args, args[2], "max_dist")]
        if len(args) > 3:
            check_number(name, args, args[3], "n_sample", kind=types.Integer)
            scalars.append(types.int32)
        if len(args) > 4:
            scalars.append(_float32(name, args, args[4], "perturbation_scale"))
        return signature(mesh_query_point_type, handle, value_type_by_name("vec3"), *scalars)


def ray_query_signature(name, result, args, kws, max_t=True):
    """The typing of the ray queries: (mesh, start, dir[, max_t][, root]) -> *result*."""
    names = ("mesh", "start", "dir") + (("max_t",) if max_t else ())
    if not kws and len(args) == len(names) + 1:
        names += ("root",)
    check_arity(name, args, kws, names)
    handle = handle_argument(name, args, args[0], mesh_type)
    check_vec3(name, args, args[1], "start")
    check_vec3(name, args, args[2], "dir")
    vec3 = value_type_by_name("vec3")
    argtypes = [handle, vec3, vec3]
    if max_t:
        argtypes.append(_float32(name, args, args[3], "max_t"))
    if names[-1] == "root":
        check_number(name, args, args[-1], "root", kind=types.Integer)
        argtypes.append(types.int32)
    return signature(result, *argtypes)


@typing_registry.register_global(mesh_query_ray)
class MeshQueryRayTyping(AbstractTemplate):
    def generic(self, args, kws):
        return ray_query_signature("mesh_query_ray", mesh_query_ray_type, args, kws)


@typing_registry.register_global(mesh_query_ray_anyhit)
class MeshQueryRayAnyhitTyping(AbstractTemplate):
    def generic(self, args, kws):
        return ray_query_signature("mesh_query_ray_anyhit", types.boolean, args, kws)


@typing_registry.register_global(mesh_query_ray_count_intersections)
class MeshQueryRayCountIntersectionsTyping(AbstractTemplate):
    def generic(self, args, kws):
        return ray_query_signature("mesh_query_ray_count_intersections", types.int32, args, kws,
                                   max_t=False)


@typing_registry.register_global(mesh_get_group_root)
class MeshGetGroupRootTyping(AbstractTemplate):
    def generic(self, args, kws):
        name = "mesh_get_group_root"
        check_arity(name, args, kws, ("mesh", "group"))
        handle = handle_argument(name, args, args[0], mesh_type)
        check_number(name, args, args[1], "group", kind=types.Integer)
        return signature(types.int32, handle, types.int32)


@typing_registry.register_global(mesh_get_bvh)
class MeshGetBvhTyping(AbstractTemplate):
    def generic(self, args, kws):
        check_arity("mesh_get_bvh", args, kws, ("mesh",))
        handle = handle_argument("mesh_get_bvh", args, args[0], mesh_type)
        return signature(types.uint64, handle)


@typing_registry.register_global(mesh_query_sphere)
class MeshQuerySphereTyping(AbstractTemplate):
    def generic(self, args, kws):
        return sphere_query_signature("mesh_query_sphere", "mesh_sphere", mesh_type, args, kws)


@typing_registry.register_global(mesh_query_aabb)
class MeshQueryAabbTyping(AbstractTemplate):
    def generic(self, args, kws):
        return box_query_signature("mesh_query_aabb", "mesh_aabb", mesh_type, args, kws,
                                   ("lower", "upper"))


def eval_signature(name, args, kws):
    """(mesh, face, u, v) -> vec3: mesh_eval_position and mesh_eval_velocity."""
    check_arity(name, args, kws, ("mesh", "face", "u", "v"))
    handle = handle_argument(name, args, args[0], mesh_type)
    check_number(name, args, args[1], "face", kind=types.Integer)
    u = _float32(name, args, args[2], "u")
    v = _float32(name, args, args[3], "v")
    return signature(value_type_by_name("vec3"), handle, types.int32, u, v)


@typing_registry.register_global(mesh_eval_position)
class MeshEvalPositionTyping(AbstractTemplate):
    def generic(self, args, kws):
        return eval_signature("mesh_eval_position", args, kws)


@typing_registry.register_global(mesh_eval_velocity)
class MeshEvalVelocityTyping(AbstractTemplate):
    def generic(self, args, kws):
        return eval_signature("mesh_eval_velocity", args, kws)


@typing_registry.register_global(mesh_query_aabb_next)
class MeshQueryAabbNextTyping(AbstractTemplate):
    def generic(self, args, kws):
        fail("mesh_query_aabb_next", args, QUERY_NEXT_MESSAGE)


@typing_registry.register_global(mesh_query_next)
class MeshQueryNextTyping(AbstractTemplate):
    def generic(self, args, kws):
        fail("mesh_query_next", args, QUERY_NEXT_MESSAGE)
