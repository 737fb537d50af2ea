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
    QUERY_NEXT_MESSAGE,
    RAY_FIELDS,
    POINT_FIELDS,
    mesh_eval_position,
    mesh_query_aabb,
    mesh_query_aabb_next,
    mesh_query_point,
    mesh_query_ray,
)
from numba_sim.typing.bvh import box_query_signature
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


@typing_registry.register_global(mesh_query_point)
class MeshQueryPointTyping(AbstractTemplate):
    def generic(self, args, kws):
        name = "mesh_query_point"
        check_arity(name, args, kws, ("mesh", "point", "max_dist"))
        handle = handle_argument(name, args, args[0], mesh_type)
        check_vec3(name, args, args[1], "point")
        max_dist = _float32(name, args, args[2], "max_dist")
        return signature(mesh_query_point_type, handle, value_type_by_name("vec3"), max_dist)


@typing_registry.register_global(mesh_query_ray)
class MeshQueryRayTyping(AbstractTemplate):
    def generic(self, args, kws):
        name = "mesh_query_ray"
        check_arity(name, args, kws, ("mesh", "start", "dir", "max_t"))
        handle = handle_argument(name, args, args[0], mesh_type)
        check_vec3(name, args, args[1], "start")
        check_vec3(name, args, args[2], "dir")
        max_t = _float32(name, args, args[3], "max_t")
        vec3 = value_type_by_name("vec3")
        return signature(mesh_query_ray_type, handle, vec3, vec3, max_t)


@typing_registry.register_global(mesh_query_aabb)
class MeshQueryAabbTyping(AbstractTemplate):
    def generic(self, args, kws):
        return box_query_signature("mesh_query_aabb", "mesh_aabb", mesh_type, args, kws,
                                   ("lower", "upper"))


@typing_registry.register_global(mesh_eval_position)
class MeshEvalPositionTyping(AbstractTemplate):
    def generic(self, args, kws):
        name = "mesh_eval_position"
        check_arity(name, args, kws, ("mesh", "face", "u", "v"))
        handle = handle_argument(name, args, args[0], mesh_type)
        check_number(name, args, args[1], "face", kind=types.Integer)
        u = _float32(name, args, args[2], "u")
        v = _float32(name, args, args[3], "v")
        return signature(value_type_by_name("vec3"), handle, types.int32, u, v)


@typing_registry.register_global(mesh_query_aabb_next)
class MeshQueryAabbNextTyping(AbstractTemplate):
    def generic(self, args, kws):
        fail("mesh_query_aabb_next", args, QUERY_NEXT_MESSAGE)
