"""Kernel-side mesh functions, and how they run when called from Python.

``mesh_query_point``, ``mesh_query_ray``, ``mesh_query_aabb`` and
``mesh_eval_position`` (and Warp's ``mesh_query_aabb_next``, which numba_sim
replaces by ``for f in mesh_query_aabb(...)`` loops) are typed and lowered for
compiled code in :mod:`numba_sim.typing.mesh` / :mod:`numba_sim.lowering.mesh`.
Called from Python they run the very same ``cuda_src/mesh.h`` code of the
host library through ctypes, on CPU meshes: the ``sim.Mesh`` itself or its
``id``.
"""

import numpy as np

from numba_sim.spatial.bvh_query import BoxQuery
from numba_sim.spatial.common import (
    MESH_HIT_BYTES,
    address,
    cpu_structure,
    host_functions,
    vec3_argument,
)
from numba_sim.spatial.mesh import Mesh
from numba_sim.types import PUBLIC_NAMES

#: Fields of the query results, in the order of their Numba structs (Warp's names).
POINT_FIELDS = (("result", "bool"), ("sign", "float32"), ("face", "int32"), ("u", "float32"),
                ("v", "float32"))
RAY_FIELDS = (("result", "bool"), ("t", "float32"), ("u", "float32"), ("v", "float32"),
              ("sign", "float32"), ("normal", "vec3"), ("face", "int32"))


class MeshQueryPoint:
    """The result of :func:`mesh_query_point` (Warp's ``MeshQueryPoint``)."""

    __slots__ = tuple(name for name, _ in POINT_FIELDS)

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"MeshQueryPoint({fields})"


class MeshQueryRay:
    """The result of :func:`mesh_query_ray` (Warp's ``MeshQueryRay``)."""

    __slots__ = tuple(name for name, _ in RAY_FIELDS)

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"MeshQueryRay({fields})"


def _vec3(components):
    return PUBLIC_NAMES["vec3"](*components.tolist())


def _mesh(mesh, function):
    return cpu_structure(mesh, Mesh, function)


def _hit_fields(hit):
    """(t, u, v, sign, normal, face) of a MeshHit buffer (8 words)."""
    floats = hit.view(np.float32)
    return (floats[0], floats[1], floats[2], floats[3], floats[4:7].copy(),
            hit.view(np.int32)[7])


def mesh_query_point(mesh, point, max_dist):
    """The point of ``mesh`` closest to ``point`` (vec3), if nearer than ``max_dist``.

    Returns a result with ``.result`` (whether one was found), ``.face`` (-1
    when none), the barycentric ``.u``, ``.v`` of the closest point on that
    face (weights of its vertices 0 and 1; ``mesh_eval_position`` gives the
    point) and ``.sign``: -1 inside, +1 outside, from the angle-weighted
    pseudo-normal at the closest point (exact for closed, consistently wound
    meshes; see cuda_src/mesh.h). ``mesh`` is a ``sim.Mesh`` or its ``id``.
    """
    mesh = _mesh(mesh, "mesh_query_point")
    p = vec3_argument(point, "mesh_query_point", "point")
    hit = np.zeros(MESH_HIT_BYTES // 4, dtype=np.uint32)
    with mesh._lock:
        found = host_functions["sim_mesh_query_point"](mesh.id, address(p), float(max_dist),
                                                       address(hit))
    _, u, v, sign, _, face = _hit_fields(hit)
    out = MeshQueryPoint()
    out.result, out.sign, out.face, out.u, out.v = bool(found), sign, face, u, v
    return out


def mesh_query_ray(mesh, start, dir, max_t):
    """The closest hit of the ray ``start + t * dir`` on ``mesh`` with ``0 <= t < max_t``.

    Returns a result with ``.result``, ``.t``, the barycentric ``.u``, ``.v``
    of the hit on ``.face``, ``.sign`` (+1 on a triangle's front,
    counter-clockwise side, -1 on its back) and ``.normal`` (the face's unit
    normal). The triangle test is watertight: a ray through a shared edge or
    vertex hits one of its triangles.
    """
    mesh = _mesh(mesh, "mesh_query_ray")
    s = vec3_argument(start, "mesh_query_ray", "start")
    d = vec3_argument(dir, "mesh_query_ray", "dir")
    hit = np.zeros(MESH_HIT_BYTES // 4, dtype=np.uint32)
    with mesh._lock:
        found = host_functions["sim_mesh_query_ray"](mesh.id, address(s), address(d),
                                                     float(max_t), address(hit))
    out = MeshQueryRay()
    out.t, out.u, out.v, out.sign, normal, out.face = _hit_fields(hit)
    out.result, out.normal = bool(found), _vec3(normal)
    return out


def mesh_query_aabb(mesh, lower, upper):
    """Start a query of the triangles of ``mesh`` whose boxes overlap the box ``lower``-``upper``.

    ``for f in mesh_query_aabb(mesh, lo, hi):`` yields the index (int32) of
    every face whose bounding box overlaps the query box, each once, in no
    particular order (Warp's rule: boxes, not the triangles themselves).
    """
    return BoxQuery(_mesh(mesh, "mesh_query_aabb"), "sim_mesh_query_aabb_begin",
                    "sim_bvh_query_aabb_next", vec3_argument(lower, "mesh_query_aabb", "lower"),
                    vec3_argument(upper, "mesh_query_aabb", "upper"))


def mesh_eval_position(mesh, face, u, v):
    """The point ``u * p0 + v * p1 + (1 - u - v) * p2`` of ``face`` (vec3; zeros off the mesh)."""
    mesh = _mesh(mesh, "mesh_eval_position")
    out = np.zeros(3, dtype=np.float32)
    with mesh._lock:
        host_functions["sim_mesh_eval_position"](mesh.id, int(face), float(u), float(v),
                                                 address(out))
    return _vec3(out)


QUERY_NEXT_MESSAGE = (
    "Warp's mesh_query_aabb_next(query, index) form is replaced in numba_sim by a loop: "
    "`for face in sim.mesh_query_aabb(mesh, lower, upper):`"
)


def mesh_query_aabb_next(query, index):
    """Warp's output-argument form; numba_sim uses ``for f in mesh_query_aabb(...)``."""
    raise TypeError(QUERY_NEXT_MESSAGE)
