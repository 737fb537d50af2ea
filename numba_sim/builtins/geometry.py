"""Geometry builtins computed by the native code of ``cuda_src/geometry.h``.

Each algorithm lives once in C++ (Warp's, operation for operation) and reaches
Python (ctypes), the CPU target (the host library) and CUDA (LTO-IR linked
into the kernel) through :func:`numba_sim.native.native_formula`, so the three
compute the same numbers, and on the CPU Warp's numbers bit for bit.
"""

import numpy as np
from numba.core import types
from numba.core.typing import signature

from numba_sim.native import native_formula
from numba_sim.operations import Variant, define, fail, is_scalar, is_value, make_builtin
from numba_sim.types import KIND_VEC
from numba_sim.typing.value_types import value_type_by_name

closest_point_on_segment = make_builtin(
    "closest_point_on_segment",
    "closest_point_on_segment(a, b, p): the point of segment a-b closest to p (vec3).\n\n"
    "The parameter along the segment is clamped to [0, 1]; a degenerate segment (a == b)\n"
    "returns a.",
)

closest_point_edge_edge = make_builtin(
    "closest_point_edge_edge",
    "closest_point_edge_edge(p1, q1, p2, q2, epsilon): the closest points of the edges\n"
    "[p1, q1] and [p2, q2] (vec3 each), as Warp's.\n\n"
    "Returns a vec3 (s, t, d): the closest points are p1 + s * (q1 - p1) and\n"
    "p2 + t * (q2 - p2), s and t in [0, 1], and d is their distance. An edge whose\n"
    "squared length is <= epsilon is treated as a point (its parameter is 0).",
)

triangle_closest_point = make_builtin(
    "triangle_closest_point",
    "triangle_closest_point(a, b, c, p): the barycentric weights (u, v) (a vec2) of a and b\n"
    "of the point of triangle abc closest to p (c weighs 1 - u - v).\n\n"
    "Ericson's Voronoi-region test, the one Warp's mesh queries use (Warp 1.19 has it\n"
    "natively as closest_point_to_triangle, not as a builtin: its tests define it as a\n"
    "@wp.func named triangle_closest_point, whose numbers this gives bit for bit; on\n"
    "edge bc, u is exactly 0).",
)

intersect_tri_tri = make_builtin(
    "intersect_tri_tri",
    "intersect_tri_tri(v0, v1, v2, u0, u1, u2): 1 if triangle (v0, v1, v2) intersects\n"
    "triangle (u0, u1, u2), else 0 (an int32), by Moeller's method, as Warp's.\n\n"
    "Coplanar triangles intersect when they overlap in their plane. vec3 arguments\n"
    "compute in float32, vec3d ones in float64 (more robust near degenerate cases).",
)


def _vec3_args(name, args, count, what, dtype_suffixes=("vec3",)):
    """The vec type shared by the first *count* arguments (one of *dtype_suffixes*)."""
    allowed = [value_type_by_name(n) for n in dtype_suffixes]
    head = args[:count]
    if len(head) != count or not all(is_value(a, KIND_VEC) for a in head):
        fail(name, args, what)
    if head[0] not in allowed or any(a != head[0] for a in head):
        fail(name, args, what)
    return head[0]


def _segment_typer(*args):
    vec3 = value_type_by_name("vec3")
    if len(args) != 3 or not all(is_value(a, KIND_VEC) and a == vec3 for a in args):
        fail("closest_point_on_segment", args, "takes three vec3 values (a, b, p)")
    return signature(vec3, *args)


def _edge_edge_typer(*args):
    what = "takes four vec3 values and a float epsilon (p1, q1, p2, q2, epsilon)"
    if len(args) != 5 or not is_scalar(args[4]):
        fail("closest_point_edge_edge", args, what)
    vec3 = _vec3_args("closest_point_edge_edge", args, 4, what)
    return signature(vec3, vec3, vec3, vec3, vec3, types.float32)


def _triangle_typer(*args):
    what = "takes four vec3 values (a, b, c, p)"
    if len(args) != 4:
        fail("triangle_closest_point", args, what)
    vec3 = _vec3_args("triangle_closest_point", args, 4, what)
    return signature(value_type_by_name("vec2"), *args)


def _tri_tri_typer(suffix):
    def typer(*args):
        what = "takes six vec3 values or six vec3d values (v0, v1, v2, u0, u1, u2)"
        if len(args) != 6:
            fail("intersect_tri_tri", args, what)
        vec = _vec3_args("intersect_tri_tri", args, 6, what, ("vec3", "vec3d"))
        if vec != value_type_by_name(suffix):
            return None
        return signature(types.int32, *args)

    return typer


define(closest_point_on_segment,
       Variant(_segment_typer, native_formula("sim_closest_point_on_segment", 3)),
       name="closest_point_on_segment")
define(closest_point_edge_edge,
       Variant(_edge_edge_typer, native_formula("sim_closest_point_edge_edge", 3)),
       name="closest_point_edge_edge")
define(triangle_closest_point,
       Variant(_triangle_typer, native_formula("sim_triangle_closest_point", 2)),
       name="triangle_closest_point")
define(intersect_tri_tri,
       Variant(_tri_tri_typer("vec3"),
               native_formula("sim_intersect_tri_tri", 1, result_dtype=np.int32,
                              scalar_result=True)),
       Variant(_tri_tri_typer("vec3d"),
               native_formula("sim_intersect_tri_tri_d", 1, dtype=np.float64,
                              result_dtype=np.int32, scalar_result=True)),
       name="intersect_tri_tri")

__all__ = ["closest_point_edge_edge", "closest_point_on_segment", "intersect_tri_tri",
           "triangle_closest_point"]
