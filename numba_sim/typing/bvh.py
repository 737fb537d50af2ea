"""Numba types and typing of the BVH (both targets).

* :data:`bvh_type` - a ``sim.Bvh`` in compiled code, the address of its
  descriptor (see :mod:`numba_sim.typing.spatial_common`).
* :class:`BoxQueryType` - what ``bvh_query_aabb(bvh, lower, upper)``,
  ``bvh_query_ray(bvh, start, dir)`` (and ``mesh_query_aabb``, which
  traverses a mesh's triangle BVH) return: the structure's address and two
  vec3. Its ``kind`` names the native entry points that start and continue
  the traversal (:data:`QUERY_KINDS`). Iterating it starts a traversal.
* :class:`BoxQueryIteratorType` - a loop's iterator: a pointer to a
  :data:`box_query_state_type` on the stack (``sim::BvhQuery`` of
  cuda_src/bvh.h), one per loop, so two queries in one kernel - nested or
  not, on the same tree or not - never share a traversal stack.
"""

from numba.core import types
from numba.core.datamodel import models
from numba.core.extending import register_model
from numba.core.typing.templates import AbstractTemplate, signature

from numba_sim.operations import fail
from numba_sim.registry import typing_registry
from numba_sim.spatial.bvh import Bvh
from numba_sim.spatial.bvh_query import (
    QUERY_NEXT_MESSAGE,
    bvh_get_group_root,
    bvh_query_aabb,
    bvh_query_next,
    bvh_query_ray,
)
from numba_sim.spatial.common import BVH_QUERY_BYTES
from numba_sim.typing.spatial_common import (
    SpatialType,
    check_arity,
    check_number,
    check_vec3,
    handle_argument,
    opaque_state_members,
    register_spatial_type,
)
from numba_sim.typing.value_types import value_type_by_name

#: Query kind -> (entry point that starts it, entry point that yields the next item).
QUERY_KINDS = {
    "aabb": ("sim_bvh_query_aabb_begin", "sim_bvh_query_aabb_next"),
    "ray": ("sim_bvh_query_ray_begin", "sim_bvh_query_ray_next"),
    "mesh_aabb": ("sim_mesh_query_aabb_begin", "sim_bvh_query_aabb_next"),
}


@register_spatial_type(Bvh)
class BvhType(SpatialType):
    """A ``sim.Bvh`` in compiled code (the address of its descriptor)."""

    cuda_hint = "build the Bvh from CUDA arrays"

    def __init__(self):
        super().__init__(name="Bvh")


class BoxQueryType(types.SimpleIterableType):
    """The value of a BVH traversal builtin (``kind`` in :data:`QUERY_KINDS`)."""

    def __init__(self, kind):
        self.kind = kind
        super().__init__(f"BoxQuery[{kind}]", BoxQueryIteratorType(kind))


class BoxQueryIteratorType(types.SimpleIteratorType):
    """The iterator of a ``for j in query:`` loop; yields int32 item indices."""

    def __init__(self, kind):
        self.kind = kind
        super().__init__(f"BoxQueryIterator[{kind}]", types.int32)


class BoxQueryStateType(types.Type):
    """``sim::BvhQuery``: the traversal state of one loop."""

    def __init__(self):
        super().__init__(name="BoxQueryState")


bvh_type = Bvh._numba_type_
box_query_state_type = BoxQueryStateType()


@register_model(BoxQueryType)
class BoxQueryModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        vec3 = value_type_by_name("vec3")
        super().__init__(dmm, fe_type, [("handle", types.uint64), ("a", vec3), ("b", vec3),
                                        ("root", types.int32)])


@register_model(BoxQueryStateType)
class BoxQueryStateModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, opaque_state_members(BVH_QUERY_BYTES))


@register_model(BoxQueryIteratorType)
class BoxQueryIteratorModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("state", types.EphemeralPointer(box_query_state_type))])


def box_query_signature(name, kind, spatial_type, args, kws, vector_names, root=False):
    """The signature of a builtin taking (structure, vec3, vec3[, root]) and returning a
    BoxQueryType (``root``: whether the optional int root node is accepted)."""
    names = (spatial_type.argument, *vector_names)
    if root and not kws and len(args) == 4:
        names += ("root",)
    check_arity(name, args, kws, names)
    handle = handle_argument(name, args, args[0], spatial_type)
    for value, what in zip(args[1:], vector_names):
        check_vec3(name, args, value, what)
    vec3 = value_type_by_name("vec3")
    if len(args) == 4:
        check_number(name, args, args[3], "root", kind=types.Integer)
        return signature(BoxQueryType(kind), handle, vec3, vec3, types.int32)
    return signature(BoxQueryType(kind), handle, vec3, vec3)


@typing_registry.register_global(bvh_query_aabb)
class BvhQueryAabbTyping(AbstractTemplate):
    def generic(self, args, kws):
        return box_query_signature("bvh_query_aabb", "aabb", bvh_type, args, kws,
                                   ("lower", "upper"), root=True)


@typing_registry.register_global(bvh_query_ray)
class BvhQueryRayTyping(AbstractTemplate):
    def generic(self, args, kws):
        return box_query_signature("bvh_query_ray", "ray", bvh_type, args, kws, ("start", "dir"),
                                   root=True)


@typing_registry.register_global(bvh_get_group_root)
class BvhGetGroupRootTyping(AbstractTemplate):
    def generic(self, args, kws):
        name = "bvh_get_group_root"
        check_arity(name, args, kws, ("bvh", "group"))
        handle = handle_argument(name, args, args[0], bvh_type)
        check_number(name, args, args[1], "group", kind=types.Integer)
        return signature(types.int32, handle, types.int32)


@typing_registry.register_global(bvh_query_next)
class BvhQueryNextTyping(AbstractTemplate):
    def generic(self, args, kws):
        fail("bvh_query_next", args, QUERY_NEXT_MESSAGE)
