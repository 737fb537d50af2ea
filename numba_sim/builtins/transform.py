"""Transform builtins: a transform is (p: vec3, q: quat), mapping x to p + q x q^-1
(Warp's formulas from warp/native/spatial.h).

``transform_point`` / ``transform_vector`` also take a mat44 (Warp's forms:
``(m @ (x, 1))[:3]`` and ``(m @ (x, 0))[:3]``, no perspective divide).
``transform_identity(dtype=float32)`` takes a scalar type.
"""

from numba_sim import algebra
from numba_sim.builtins.forms import (
    MAT44, TRANSFORM, VEC3, Form, builtin, constant_builtin, dtype_only_typer, same_type,
    value_result,
)
from numba_sim.types import KIND_QUAT, KIND_TRANSFORM, KIND_VEC

_VEC3_RESULT = value_result(KIND_VEC, (3,))


transform_identity = constant_builtin(
    "transform_identity",
    "transform_identity(dtype=float32): the identity transform (p = 0, q = (0, 0, 0, 1)).",
    dtype_only_typer("transform_identity", KIND_TRANSFORM, (7,), "transform"),
    lambda sig: algebra.transform_identity(sig.return_type.spec.scalar_type),
)

transform_point = builtin(
    "transform_point",
    "transform_point(t, p): the point p moved by t (rotated, then translated);\n"
    "transform_point(m, p): (m @ (p, 1))[:3] for a mat44 m.",
    Form((TRANSFORM, VEC3), _VEC3_RESULT, lambda sig, t, p: algebra.transform_point(t, p)),
    Form((MAT44, VEC3), _VEC3_RESULT,
         lambda sig, m, p: algebra.matrix_transform_point(m, p, algebra.one_like(p[0]))),
)

transform_vector = builtin(
    "transform_vector",
    "transform_vector(t, v): the direction v rotated by t (no translation);\n"
    "transform_vector(m, v): (m @ (v, 0))[:3] for a mat44 m.",
    Form((TRANSFORM, VEC3), _VEC3_RESULT, lambda sig, t, v: algebra.transform_vector(t, v)),
    Form((MAT44, VEC3), _VEC3_RESULT,
         lambda sig, m, v: algebra.matrix_transform_point(m, v, algebra.zero_like(v[0]))),
)

transform_multiply = builtin(
    "transform_multiply",
    "transform_multiply(a, b): the transform applying b, then a (the same as a * b).",
    Form((TRANSFORM, TRANSFORM), same_type, lambda sig, a, b: algebra.transform_mul(a, b)),
)

transform_inverse = builtin(
    "transform_inverse", "transform_inverse(t): the transform undoing t.",
    Form((TRANSFORM,), same_type, lambda sig, t: algebra.transform_inverse(t)),
)

transform_get_translation = builtin(
    "transform_get_translation", "transform_get_translation(t): t.p.",
    Form((TRANSFORM,), _VEC3_RESULT, lambda sig, t: t[0:3]),
)

transform_get_rotation = builtin(
    "transform_get_rotation", "transform_get_rotation(t): t.q, as stored (not normalized).",
    Form((TRANSFORM,), value_result(KIND_QUAT, (4,)), lambda sig, t: t[3:7]),
)

__all__ = ["transform_identity", "transform_point", "transform_vector", "transform_multiply",
           "transform_inverse", "transform_get_translation", "transform_get_rotation"]
