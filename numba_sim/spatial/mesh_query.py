"""Kernel-side mesh functions, and how they run when called from Python.

``mesh_query_point`` (and Warp's variants ``mesh_query_point_no_sign``,
``mesh_query_point_sign_normal``, ``mesh_query_point_sign_winding_number``,
``mesh_query_point_sign_parity``, ``mesh_query_furthest_point_no_sign``),
``mesh_query_ray`` (and ``mesh_query_ray_anyhit``, ``mesh_query_ray_count_intersections``), ``mesh_query_aabb`` and ``mesh_eval_position`` (and Warp's ``mesh_query_aabb_next``, which numba_sim
replaces by ``for f in mesh_query_aabb(...)`` loops) are typed and lowered for
compiled code in :mod:`numba_sim.typing.mesh` / :mod:`numba_sim.lowering.mesh`.
Called from Python they run the very same ``cuda_src/mesh.h`` code of the
host library through ctypes, on CPU meshes: the ``sim.Mesh`` itself or its
``id``.
"""

import ast
import copy

import numpy as np

from numba_sim.spatial.bvh_query import BoxQuery, root_argument, sphere_radius
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


#: Warp's names of its mesh query types (``mesh_query_aabb`` / ``mesh_query_sphere``), for
#: annotations of ``@sim.func`` parameters: traversals of the mesh's BVH, box queries.
MeshQuery = MeshQueryAABB = BoxQuery


def _mesh(mesh, function):
    return cpu_structure(mesh, Mesh, function)


def _hit_fields(hit):
    """(t, u, v, sign, normal, face) of a MeshHit buffer (8 words)."""
    floats = hit.view(np.float32)
    return (floats[0], floats[1], floats[2], floats[3], floats[4:7].copy(),
            hit.view(np.int32)[7])


def _point_query(function, entry, mesh, point, *scalars):
    """Run the point-query entry point ``entry``: a MeshQueryPoint."""
    mesh = _mesh(mesh, function)
    p = vec3_argument(point, function, "point")
    hit = np.zeros(MESH_HIT_BYTES // 4, dtype=np.uint32)
    with mesh._lock:
        found = host_functions[entry](mesh.id, address(p), *(float(x) for x in scalars),
                                      address(hit))
    _, u, v, sign, _, face = _hit_fields(hit)
    out = MeshQueryPoint()
    out.result, out.sign, out.face, out.u, out.v = bool(found), sign, face, u, v
    return out


def out_argument_message(name, signature, struct_call):
    """The error of Warp's output-argument form of a mesh point query."""
    return (f"Warp's output-argument form {name}({signature}) is replaced in numba_sim by "
            f"the result struct: `q = sim.{struct_call}`, then q.result, q.sign, q.face, "
            f"q.u, q.v")


#: name -> (Warp's output-argument signature, our struct form), for the errors.
OUT_ARGUMENT_FORMS = {
    "mesh_query_point": ("mesh, point, max_dist, inside, face, bary_u, bary_v",
                         "mesh_query_point(mesh, point, max_dist)"),
    "mesh_query_point_no_sign": ("mesh, point, max_dist, face, bary_u, bary_v",
                                 "mesh_query_point_no_sign(mesh, point, max_dist)"),
    "mesh_query_furthest_point_no_sign": (
        "mesh, point, min_dist, face, bary_u, bary_v",
        "mesh_query_furthest_point_no_sign(mesh, point, min_dist)"),
    "mesh_query_point_sign_normal": (
        "mesh, point, max_dist, inside, face, bary_u, bary_v[, epsilon]",
        "mesh_query_point_sign_normal(mesh, point, max_dist[, epsilon])"),
    "mesh_query_point_sign_winding_number": (
        "mesh, point, max_dist, inside, face, bary_u, bary_v[, accuracy, threshold]",
        "mesh_query_point_sign_winding_number(mesh, point, max_dist[, accuracy, threshold])"),
    "mesh_query_point_sign_parity": (
        "mesh, point, max_dist, inside, face, bary_u, bary_v[, n_sample, perturbation_scale]",
        "mesh_query_point_sign_parity(mesh, point, max_dist[, n_sample, perturbation_scale])"),
}


def _refuse_out_arguments(name, extra):
    if extra:
        raise TypeError(out_argument_message(name, *OUT_ARGUMENT_FORMS[name]))


def mesh_query_point(mesh, point, max_dist, *out_arguments):
    """The point of ``mesh`` closest to ``point`` (vec3), if nearer than ``max_dist``.

    Returns a result with ``.result`` (whether one was found), ``.face`` (-1
    when none), the barycentric ``.u``, ``.v`` of the closest point on that
    face (weights of its vertices 0 and 1; ``mesh_eval_position`` gives the
    point) and ``.sign``: -1 inside, +1 outside, from the angle-weighted
    pseudo-normal at the closest point (exact for closed, consistently wound
    meshes; see cuda_src/mesh.h). ``mesh`` is a ``sim.Mesh`` or its ``id``.
    """
    _refuse_out_arguments("mesh_query_point", out_arguments)
    return _point_query("mesh_query_point", "sim_mesh_query_point", mesh, point, max_dist)


def mesh_query_point_no_sign(mesh, point, max_dist, *out_arguments):
    """The point of ``mesh`` closest to ``point``, if nearer than ``max_dist``, without a sign.

    Warp's algorithm, triangle for triangle: slivers (normal length over the
    sum of the squared edge lengths below 1e-6) are skipped. Returns a
    ``MeshQueryPoint`` (``.result .face .u .v``; ``.sign`` is 0).
    """
    _refuse_out_arguments("mesh_query_point_no_sign", out_arguments)
    return _point_query("mesh_query_point_no_sign", "sim_mesh_query_point_no_sign", mesh, point,
                        max_dist)


def mesh_query_furthest_point_no_sign(mesh, point, min_dist, *out_arguments):
    """The point of ``mesh`` farthest from ``point``, if farther than ``min_dist`` (a vertex).

    Warp's algorithm (slivers skipped). Returns a ``MeshQueryPoint``
    (``.result .face .u .v``; ``.sign`` is 0).
    """
    _refuse_out_arguments("mesh_query_furthest_point_no_sign", out_arguments)
    return _point_query("mesh_query_furthest_point_no_sign",
                        "sim_mesh_query_furthest_point_no_sign", mesh, point, min_dist)


def mesh_query_point_sign_normal(mesh, point, max_dist, epsilon=1.0e-3, *out_arguments):
    """The closest point, signed by Warp's angle-weighted pseudo-normal with a tolerance.

    Faces whose closest points are within ``epsilon`` times the mesh's mean
    edge length of the closest distance count as equally close; their
    normals, weighted by the angle of the feature (vertex, edge, interior) the
    point lies on, decide the sign: -1 inside, +1 outside. Warp's algorithm,
    for watertight, non-self-intersecting meshes. Returns a ``MeshQueryPoint``.
    """
    if not isinstance(epsilon, (int, float, np.integer, np.floating)) or out_arguments:
        _refuse_out_arguments("mesh_query_point_sign_normal", True)
    return _point_query("mesh_query_point_sign_normal", "sim_mesh_query_point_sign_normal", mesh,
                        point, max_dist, epsilon)


def mesh_query_point_sign_winding_number(mesh, point, max_dist, accuracy=2.0, threshold=0.5,
                                         *out_arguments):
    """The closest point, signed by the mesh's winding number at ``point``.

    -1 (inside) when the winding number exceeds ``threshold``, else +1: robust
    for meshes that are not watertight. The winding number is Barill et al.'s
    fast approximation (Warp's): leaves near ``point`` sum their triangles'
    exact solid angles, BVH nodes farther than ``accuracy`` times their
    radius their dipole expansion. Needs ``Mesh(..., support_winding_number=True)``;
    without it the sign is Warp's fallback, the majority of three rays (+x,
    +y, +z) whose closest hit is a back face. The closest point is
    ``mesh_query_point_no_sign``'s. Returns a ``MeshQueryPoint``.
    """
    numbers = (int, float, np.integer, np.floating)
    if out_arguments or not isinstance(accuracy, numbers) or not isinstance(threshold, numbers):
        _refuse_out_arguments("mesh_query_point_sign_winding_number", True)
    return _point_query("mesh_query_point_sign_winding_number",
                        "sim_mesh_query_point_sign_winding_number", mesh, point, max_dist,
                        accuracy, threshold)


def mesh_query_ray(mesh, start, dir, max_t, root=-1):
    """The closest hit of the ray ``start + t * dir`` on ``mesh`` with ``0 <= t < max_t``.

    Returns a result with ``.result``, ``.t``, the barycentric ``.u``, ``.v``
    of the hit on ``.face``, ``.sign`` (+1 on a triangle's front,
    counter-clockwise side, -1 on its back) and ``.normal`` (the face's unit
    normal). The triangle test is watertight: a ray through a shared edge or
    vertex hits one of its triangles. ``root`` (Warp's): search the subtree
    of that BVH node only, as a triangle group's root from
    :func:`mesh_get_group_root`; -1 (any negative) searches the whole mesh.
    """
    mesh = _mesh(mesh, "mesh_query_ray")
    s = vec3_argument(start, "mesh_query_ray", "start")
    d = vec3_argument(dir, "mesh_query_ray", "dir")
    root = root_argument(root, "mesh_query_ray")
    hit = np.zeros(MESH_HIT_BYTES // 4, dtype=np.uint32)
    with mesh._lock:
        found = host_functions["sim_mesh_query_ray"](mesh.id, address(s), address(d),
                                                     float(max_t), address(hit), root)
    out = MeshQueryRay()
    out.t, out.u, out.v, out.sign, normal, out.face = _hit_fields(hit)
    out.result, out.normal = bool(found), _vec3(normal)
    return out


def _ray_arguments(mesh, start, dir, root, function):
    mesh = _mesh(mesh, function)
    return (mesh, vec3_argument(start, function, "start"), vec3_argument(dir, function, "dir"),
            root_argument(root, function))


def mesh_query_ray_anyhit(mesh, start, dir, max_t, root=-1):
    """Whether the ray ``start + t * dir`` meets ``mesh`` at some ``0 <= t < max_t``
    (Warp's): :func:`mesh_query_ray`'s test, stopping at the first hit found (cheaper when
    only the answer is needed, as for shadow rays). ``root``: as for ``mesh_query_ray``."""
    mesh, s, d, root = _ray_arguments(mesh, start, dir, root, "mesh_query_ray_anyhit")
    with mesh._lock:
        return bool(host_functions["sim_mesh_query_ray_anyhit"](
            mesh.id, address(s), address(d), float(max_t), root))


def mesh_query_ray_count_intersections(mesh, start, dir, root=-1):
    """How many of ``mesh``'s triangles the ray ``start + t * dir`` (``t >= 0``) meets
    (Warp's), int32. The triangle test is watertight: a ray through a shared edge or vertex
    counts one triangle there, so an odd count means ``start`` is inside a closed mesh."""
    mesh, s, d, root = _ray_arguments(mesh, start, dir, root,
                                      "mesh_query_ray_count_intersections")
    with mesh._lock:
        return np.int32(host_functions["sim_mesh_query_ray_count_intersections"](
            mesh.id, address(s), address(d), root))


def mesh_query_point_sign_parity(mesh, point, max_dist, n_sample=1, perturbation_scale=0.1,
                                 *out_arguments):
    """The closest point (as :func:`mesh_query_point_no_sign`), signed by ray parity (Warp's):
    ``n_sample`` rays from ``point`` along ``(1, 1, 1)`` perturbed per axis by up to
    ``perturbation_scale`` (Warp's fixed seed: the same rays every call) each vote inside
    when they cross the mesh an odd number of times; ``.sign`` is -1 (inside) when at least
    half do (so a non-positive ``n_sample`` means inside). For closed meshes; the sign looks
    at the whole mesh, ``max_dist`` bounds only the closest point. Returns a
    ``MeshQueryPoint``."""
    if out_arguments or isinstance(n_sample, (bool, np.bool_)) or \
            not isinstance(n_sample, (int, np.integer)) or \
            not isinstance(perturbation_scale, (int, float, np.integer, np.floating)):
        _refuse_out_arguments("mesh_query_point_sign_parity", True)
    mesh = _mesh(mesh, "mesh_query_point_sign_parity")
    p = vec3_argument(point, "mesh_query_point_sign_parity", "point")
    hit = np.zeros(MESH_HIT_BYTES // 4, dtype=np.uint32)
    with mesh._lock:
        found = host_functions["sim_mesh_query_point_sign_parity"](
            mesh.id, address(p), float(max_dist), int(n_sample), float(perturbation_scale),
            address(hit))
    _, u, v, sign, _, face = _hit_fields(hit)
    out = MeshQueryPoint()
    out.result, out.sign, out.face, out.u, out.v = bool(found), sign, face, u, v
    return out


def mesh_get_group_root(mesh, group):
    """The BVH node at the root of triangle group ``group`` of ``mesh`` (Warp's), or -1.

    For a ``Mesh(..., groups=...)``; pass it to ``mesh_query_ray`` to search
    that group's triangles only. An ungrouped mesh is one group, 0.
    """
    mesh = _mesh(mesh, "mesh_get_group_root")
    group = root_argument(group, "mesh_get_group_root", "group")
    with mesh._lock:
        return np.int32(host_functions["sim_mesh_get_group_root"](mesh.id, group))


def mesh_query_aabb(mesh, lower, upper):
    """Start a query of the triangles of ``mesh`` whose boxes overlap the box ``lower``-``upper``.

    ``for f in mesh_query_aabb(mesh, lo, hi):`` yields the index (int32) of
    every face whose bounding box overlaps the query box, each once, in no
    particular order (Warp's rule: boxes, not the triangles themselves).
    """
    return BoxQuery(_mesh(mesh, "mesh_query_aabb"), "sim_mesh_query_aabb_begin",
                    "sim_bvh_query_aabb_next", vec3_argument(lower, "mesh_query_aabb", "lower"),
                    vec3_argument(upper, "mesh_query_aabb", "upper"))


def mesh_get_bvh(mesh):
    """The id of ``mesh``'s triangle BVH (Warp's): ``bvh_query_aabb`` / ``_ray`` /
    ``_sphere`` of compiled code take it and yield face indices (broad phase: the
    triangles' boxes). It is not a ``sim.Bvh`` object: Python-mode queries take the
    Mesh's own queries."""
    mesh = _mesh(mesh, "mesh_get_bvh")
    return np.uint64(host_functions["sim_mesh_get_bvh"](mesh.id) or 0)


def mesh_query_sphere(mesh, center, radius):
    """Start a query of the triangles of ``mesh`` within ``radius`` of ``center`` (Warp's).

    ``for f in mesh_query_sphere(mesh, center, radius):`` yields the index
    (int32) of every face whose triangle has a point at most ``radius`` from
    ``center`` (exact: the triangle's closest point, not its box; a zero-area
    face counts as its longest edge), each once, in no particular order. A
    negative radius counts as 0.
    """
    return BoxQuery(_mesh(mesh, "mesh_query_sphere"), "sim_mesh_query_sphere_begin",
                    "sim_mesh_query_sphere_next",
                    vec3_argument(center, "mesh_query_sphere", "center"),
                    sphere_radius(radius, "mesh_query_sphere"))


def mesh_eval_position(mesh, face, u, v):
    """The point ``u * p0 + v * p1 + (1 - u - v) * p2`` of ``face`` (vec3; zeros off the mesh)."""
    mesh = _mesh(mesh, "mesh_eval_position")
    out = np.zeros(3, dtype=np.float32)
    with mesh._lock:
        host_functions["sim_mesh_eval_position"](mesh.id, int(face), float(u), float(v),
                                                 address(out))
    return _vec3(out)


def mesh_eval_velocity(mesh, face, u, v):
    """The velocity ``u * v0 + v * v1 + (1 - u - v) * v2`` of ``face``'s vertices (Warp's).

    Interpolates ``Mesh(velocities=...)``; zeros off the mesh or without velocities.
    """
    mesh = _mesh(mesh, "mesh_eval_velocity")
    out = np.zeros(3, dtype=np.float32)
    with mesh._lock:
        host_functions["sim_mesh_eval_velocity"](mesh.id, int(face), float(u), float(v),
                                                 address(out))
    return _vec3(out)


QUERY_NEXT_MESSAGE = (
    "Warp's mesh_query_aabb_next(query, index) form is replaced in numba_sim by a loop: "
    "`for face in sim.mesh_query_aabb(mesh, lower, upper):`"
)


def mesh_query_aabb_next(query, index):
    """Warp's output-argument form; numba_sim uses ``for f in mesh_query_aabb(...)``."""
    raise TypeError(QUERY_NEXT_MESSAGE)


def mesh_query_next(query, index):
    """Warp's output-argument form for any mesh query (``mesh_query_aabb``,
    ``mesh_query_sphere``); numba_sim uses ``for f in query:``."""
    raise TypeError(QUERY_NEXT_MESSAGE)


# --------------------------------------------------------------------------
# Warp's output-argument forms in kernels

#: Builtin -> (its inputs, the result fields that Warp's output arguments receive, in order,
#: how many trailing optional inputs may follow them).
KERNEL_OUT_FORMS = {
    mesh_query_point: (3, ("sign", "face", "u", "v"), 0),
    mesh_query_point_no_sign: (3, ("face", "u", "v"), 0),
    mesh_query_furthest_point_no_sign: (3, ("face", "u", "v"), 0),
    mesh_query_point_sign_normal: (3, ("sign", "face", "u", "v"), 1),
    mesh_query_point_sign_winding_number: (3, ("sign", "face", "u", "v"), 2),
    mesh_query_point_sign_parity: (3, ("sign", "face", "u", "v"), 2),
    mesh_query_ray: (4, ("t", "u", "v", "sign", "normal", "face"), 1),
}


def expand_out_arguments(statement, resolve, temporary):
    """Warp's output-argument calls in ``statement`` (an ``ast`` statement of a kernel or
    func), as the struct form: ``hit = mesh_query_ray(m, s, d, max_t, t, u, v, sign, n, f)``
    becomes ``tmp = mesh_query_ray(m, s, d, max_t)``, ``t = tmp.t`` ... ``f = tmp.face``,
    ``hit = tmp.result``. Calls in an assignment's value, an ``if`` test or an expression
    statement are rewritten (not in a ``while`` test, evaluated again each iteration).
    Returns the statements that replace ``statement``. ``resolve`` maps an ``ast`` callee to
    its object; ``temporary()`` names a fresh variable."""
    if isinstance(statement, (ast.Assign, ast.Expr)):
        field = "value"
    elif isinstance(statement, ast.If):
        field = "test"
    else:
        return [statement]
    before = []

    class Calls(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            form = KERNEL_OUT_FORMS.get(resolve(node.func)) if not node.keywords else None
            if form is None:
                return node
            inputs, outputs, optional = form
            extra = len(node.args) - inputs - len(outputs)
            if not 0 <= extra <= optional or not all(
                    isinstance(a, (ast.Name, ast.Attribute, ast.Subscript))
                    for a in node.args[inputs:inputs + len(outputs)]):
                return node
            name = temporary()
            call = ast.Call(func=node.func, keywords=[],
                            args=node.args[:inputs] + node.args[inputs + len(outputs):])
            before.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=call))
            for target, attr in zip(node.args[inputs:], outputs):
                target = copy.deepcopy(target)
                target.ctx = ast.Store()
                before.append(ast.Assign(targets=[target], value=ast.Attribute(
                    value=ast.Name(id=name, ctx=ast.Load()), attr=attr, ctx=ast.Load())))
            return ast.Attribute(value=ast.Name(id=name, ctx=ast.Load()), attr="result",
                                 ctx=ast.Load())

    setattr(statement, field, Calls().visit(getattr(statement, field)))
    if not before:
        return [statement]
    for new in before:
        for child in ast.walk(new):
            ast.copy_location(child, statement)
    return before + [statement]

