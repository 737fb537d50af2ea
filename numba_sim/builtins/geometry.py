"""Geometry builtins computed by the native code of ``cuda_src/``.

``closest_point_on_segment(a, b, p)`` is the first algorithm that lives once
in C++ (cuda_src/geometry.h) and reaches Python (ctypes), the CPU target
(the host library) and CUDA (LTO-IR linked into the kernel).
"""

from numba.core.typing import signature

from numba_sim.native import native_formula
from numba_sim.operations import Variant, define, fail, is_value, make_builtin
from numba_sim.types import KIND_VEC
from numba_sim.typing.value_types import value_type_by_name

closest_point_on_segment = make_builtin(
    "closest_point_on_segment",
    "closest_point_on_segment(a, b, p): the point of segment a-b closest to p (vec3).\n\n"
    "The parameter along the segment is clamped to [0, 1]; a degenerate segment (a == b)\n"
    "returns a.",
)


def _segment_typer(*args):
    vec3 = value_type_by_name("vec3")
    if len(args) != 3 or not all(is_value(a, KIND_VEC) and a == vec3 for a in args):
        fail("closest_point_on_segment", args, "takes three vec3 values (a, b, p)")
    return signature(vec3, *args)


define(closest_point_on_segment,
       Variant(_segment_typer, native_formula("sim_closest_point_on_segment", 3)),
       name="closest_point_on_segment")

__all__ = ["closest_point_on_segment"]
