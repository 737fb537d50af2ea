"""Numba types and typing of the BVH (both targets).

* :data:`bvh_type` - a ``sim.Bvh`` in compiled code, the address of its
  descriptor (see :mod:`numba_sim.typing.spatial_common`).
* :class:`BoxQueryType` - what ``bvh_query_aabb(bvh, lower, upper)``,
  ``bvh_query_ray(bvh, start, dir)`` (and ``mesh_query_aabb``, which
  traverses a mesh's triangle BVH) return: the structure's address and two
  vec3 (and ``bvh_query_sphere`` / ``mesh_query_sphere``: the centre and
  (radius, 0, 0)). Its ``kind`` names the native entry points that start and
  continue the traversal (:data:`QUERY_KINDS`); queries of different kinds
  unify to the kind-erased ``BoxQuery[any]``, whose value carries its kind's
  code. Iterating it starts a traversal.
* :class:`BoxQueryIteratorType` - a loop's iterator: a pointer to a
  :data:`box_query_state_type` on the stack (``sim::BvhQuery`` of
  cuda_src/bvh.h), one per loop, so two queries in one kernel - nested or
  not, on the same tree or not - never share a traversal stack.
"""

from numba.core import types
from numba.core.typeconv import Conversion
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
    bvh_query_bounded,
    bvh_query_capsule,
    bvh_query_ray,
    bvh_query_sphere,
)
from numba_sim.spatial.common import BVH_QUERY_BYTES
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

#: Query kind -> (entry point that starts it, entry point that yields the next item).
QUERY_KINDS = {
    "aabb": ("sim_bvh_query_aabb_begin", "sim_bvh_query_aabb_next"),
    "ray": ("sim_bvh_query_ray_begin", "sim_bvh_query_ray_next"),
    "mesh_aabb": ("sim_mesh_query_aabb_begin", "sim_bvh_query_aabb_next"),
    # spheres: the state's second vector is (radius, 0, 0)
    "sphere": ("sim_bvh_query_sphere_begin", "sim_bvh_query_sphere_next"),
    "mesh_sphere": ("sim_mesh_query_sphere_begin", "sim_mesh_query_sphere_next"),
    # capsules: begin also takes the radius
    "capsule": ("sim_bvh_query_capsule_begin", "sim_bvh_query_capsule_next"),
    # a variable holding queries of several kinds: begins by the kind its value holds (one
    # more argument, the kind's code), continues by the kind stored in the state
    "any": ("sim_box_query_begin_dynamic", "sim_box_query_next_dynamic"),
}

#: Kind -> the code a query value carries (cuda_src/mesh_entry_points.h's dynamic queries).
QUERY_KIND_CODES = {"aabb": 0, "ray": 1, "sphere": 2, "mesh_aabb": 3, "mesh_sphere": 4,
                    "capsule": 5}

#: Kinds whose traversal Warp's max_dist bounds (``bvh_query_next(query, j, max_dist)``).
BOUNDED_KINDS = ("ray", "capsule", "any")


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

    def unify(self, typingctx, other):
        """Queries of different kinds (``q = bvh_query_ray(...)`` in one branch,
        ``bvh_query_aabb(...)`` in the other) meet at the kind-erased ``BoxQuery[any]``."""
        if isinstance(other, BoxQueryType) and other.kind != self.kind:
            return BoxQueryType("any")
        return None

    def can_convert_to(self, typingctx, other):
        if isinstance(other, BoxQueryType) and other.kind == "any" and self.kind != "any":
            return Conversion.safe
        return None


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
                                        ("root", types.int32), ("kind", types.int32),
                                        ("radius", types.float32),  # capsules
                                        ("max_dist", types.float32)])  # rays and capsules


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
    return query_signature(name, BoxQueryType(kind), spatial_type, args, kws, vector_names,
                           optional="root" if root else None)


def sphere_query_signature(name, kind, spatial_type, args, kws):
    """The signature of a builtin taking (structure, center, radius[, root]) and returning a
    BoxQueryType of ``kind``."""
    return query_signature(name, BoxQueryType(kind), spatial_type, args, kws, ("center",),
                           ("radius",), "root")


@typing_registry.register_global(bvh_query_capsule)
class BvhQueryCapsuleTyping(AbstractTemplate):
    def generic(self, args, kws):
        return query_signature("bvh_query_capsule", BoxQueryType("capsule"), bvh_type, args,
                               kws, ("start", "dir"), ("radius",), "root")


@typing_registry.register_global(bvh_query_bounded)
class BvhQueryBoundedTyping(AbstractTemplate):
    def generic(self, args, kws):
        name = "bvh_query_next"
        if kws or len(args) != 2 or not isinstance(args[0], BoxQueryType):
            fail(name, args, "max_dist bounds a query: bvh_query_next(query, index, max_dist)")
        check_number(name, args, args[1], "max_dist")
        return signature(args[0], args[0], types.float32)


@typing_registry.register_global(bvh_query_sphere)
class BvhQuerySphereTyping(AbstractTemplate):
    def generic(self, args, kws):
        return sphere_query_signature("bvh_query_sphere", "sphere", bvh_type, args, kws)


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
