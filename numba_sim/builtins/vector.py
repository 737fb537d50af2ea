"""Vector builtins: dot, cross, length, length_sq, normalize, cw_mul, cw_div.

Quaternions take dot, length, length_sq and normalize (floating-point only, as
in Warp); ``normalize`` of a zero quaternion is the identity quaternion, of a
zero vector the zero vector (Warp's rules).
"""

from numba_sim import algebra
from numba_sim.builtins.forms import (
    MATRIX, QUAT, VEC3, VECTOR, Form, builtin, same_type, scalar_result,
)

dot = builtin(
    "dot", "dot(a, b): the dot product of two vectors (or quaternions) of one type.",
    Form((VECTOR, VECTOR), scalar_result, lambda sig, a, b: algebra.dot(a, b),
         floats_only=False, same_values=True),
    Form((QUAT, QUAT), scalar_result, lambda sig, a, b: algebra.dot(a, b), same_values=True),
)

cross = builtin(
    "cross", "cross(a, b): the cross product of two 3-vectors.",
    Form((VEC3, VEC3), same_type, lambda sig, a, b: algebra.cross(a, b),
         floats_only=False, same_values=True),
    hint="cross is defined for 3-vectors only",
)

length = builtin(
    "length", "length(v): the Euclidean length of a floating-point vector or quaternion.",
    Form((VECTOR,), scalar_result, lambda sig, a: algebra.length(a)),
    Form((QUAT,), scalar_result, lambda sig, a: algebra.length(a)),
)

length_sq = builtin(
    "length_sq", "length_sq(v): the squared length, dot(v, v).",
    Form((VECTOR,), scalar_result, lambda sig, a: algebra.length_sq(a), floats_only=False),
    Form((QUAT,), scalar_result, lambda sig, a: algebra.length_sq(a)),
)

normalize = builtin(
    "normalize",
    "normalize(v): v / length(v); the zero vector when the length is 0 (Warp).\n\n"
    "For a quaternion: q * (1 / length(q)), or the identity quaternion when the length is 0.",
    Form((VECTOR,), same_type, lambda sig, a: algebra.normalize(a)),
    Form((QUAT,), same_type, lambda sig, a: algebra.quat_normalize(a)),
)

cw_mul = builtin(
    "cw_mul", "cw_mul(a, b): the componentwise product of two vectors or matrices of one type.",
    Form((VECTOR, VECTOR), same_type, lambda sig, a, b: algebra.cw_mul(a, b),
         floats_only=False, same_values=True),
    Form((MATRIX, MATRIX), same_type, lambda sig, a, b: algebra.cw_mul(a, b),
         floats_only=False, same_values=True),
)

cw_div = builtin(
    "cw_div",
    "cw_div(a, b): the componentwise quotient of two vectors or matrices of one type\n"
    "(integer components divide as in C, truncating toward zero).",
    Form((VECTOR, VECTOR), same_type, lambda sig, a, b: algebra.cw_div(a, b),
         floats_only=False, same_values=True),
    Form((MATRIX, MATRIX), same_type, lambda sig, a, b: algebra.cw_div(a, b),
         floats_only=False, same_values=True),
)

__all__ = ["dot", "cross", "length", "length_sq", "normalize", "cw_mul", "cw_div"]
