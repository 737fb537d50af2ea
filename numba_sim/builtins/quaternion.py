"""Quaternion builtins (x, y, z, w storage; Warp's formulas from warp/native/quat.h).

``axis, angle = quat_to_axis_angle(q)`` replaces Warp's output-argument form
``quat_to_axis_angle(q, axis, angle)``, which is a typing error naming this one.
``quat_identity(dtype=float32)`` takes a scalar type (``sim.float64``, ...).
``quaternion(x, y, z, w, dtype=None)`` is Warp's constructor of any float type, which
``sim.types.quaternion(...)`` called in a kernel also is.
"""

from numba.core import types
from numba.core.typing import signature

from numba_sim import algebra
from numba_sim.builtins.forms import (
    MAT33_OR_MAT44, QUAT, SCALAR, VEC3, Form, builtin, common_scalar, constant_builtin,
    dtype_only_typer, keyword_builtin, same_type, value_result,
)
from numba_sim.builtins.vector import keyword_dtype, shown
from numba_sim.operations import fail, is_scalar, is_value
from numba_sim.types import KIND_MAT, KIND_QUAT, KIND_VEC
from numba_sim.typing.value_types import value_type_of

_QUAT_RESULT = value_result(KIND_QUAT, (4,))
_VEC3_RESULT = value_result(KIND_VEC, (3,))


quat_identity = constant_builtin(
    "quat_identity", "quat_identity(dtype=float32): the identity rotation (0, 0, 0, 1).",
    dtype_only_typer("quat_identity", KIND_QUAT, (4,), "quaternion"),
    lambda sig: algebra.quat_identity(sig.return_type.spec.scalar_type),
)

quat_from_axis_angle = builtin(
    "quat_from_axis_angle",
    "quat_from_axis_angle(axis, angle): the rotation by angle (radians, right-handed) about\n"
    "the unit vector axis.",
    Form((VEC3, SCALAR), _QUAT_RESULT,
         lambda sig, axis, angle: algebra.quat_from_axis_angle(axis, angle)),
)


def _axis_angle_result(dtype, argtypes):
    return types.Tuple((value_type_of(KIND_VEC, dtype, (3,)), dtype))


quat_to_axis_angle = builtin(
    "quat_to_axis_angle",
    "axis, angle = quat_to_axis_angle(q): the unit axis and the angle in [0, pi] of the\n"
    "rotation q (Warp's output arguments become a returned tuple).",
    Form((QUAT,), _axis_angle_result, lambda sig, q: algebra.quat_to_axis_angle(q)),
    hint="Warp's output-argument form quat_to_axis_angle(q, axis, angle) is written "
         "axis, angle = quat_to_axis_angle(q) here",
)

quat_from_matrix = builtin(
    "quat_from_matrix",
    "quat_from_matrix(m): the unit quaternion of the rotation m (a mat33, or the upper-left\n"
    "3x3 block of a mat44).",
    Form((MAT33_OR_MAT44,), _QUAT_RESULT,
         lambda sig, m: algebra.quat_from_matrix(m, sig.args[0].shape[0])),
)

quat_to_matrix = builtin(
    "quat_to_matrix", "quat_to_matrix(q): the 3x3 rotation matrix of unit quaternion q.",
    Form((QUAT,), value_result(KIND_MAT, (3, 3)), lambda sig, q: algebra.quat_to_matrix(q)),
)

quat_rotate = builtin(
    "quat_rotate", "quat_rotate(q, v): v rotated by unit quaternion q.",
    Form((QUAT, VEC3), _VEC3_RESULT, lambda sig, q, v: algebra.quat_rotate(q, v)),
)

quat_rotate_inv = builtin(
    "quat_rotate_inv", "quat_rotate_inv(q, v): v rotated by the inverse of unit quaternion q.",
    Form((QUAT, VEC3), _VEC3_RESULT, lambda sig, q, v: algebra.quat_rotate_inv(q, v)),
)

quat_inverse = builtin(
    "quat_inverse", "quat_inverse(q): the conjugate (-x, -y, -z, w), the inverse of a unit q.",
    Form((QUAT,), same_type, lambda sig, q: algebra.quat_inverse(q)),
)

quat_slerp = builtin(
    "quat_slerp",
    "quat_slerp(a, b, t): spherical interpolation from a (t = 0) to b (t = 1) along the\n"
    "shortest arc.",
    Form((QUAT, QUAT, SCALAR), same_type, lambda sig, a, b, t: algebra.quat_slerp(a, b, t)),
)

quat_rpy = builtin(
    "quat_rpy",
    "quat_rpy(roll, pitch, yaw): the rotation by roll about x, then pitch about y, then yaw\n"
    "about z (fixed axes).",
    Form((SCALAR, SCALAR, SCALAR), _QUAT_RESULT,
         lambda sig, roll, pitch, yaw: algebra.quat_rpy(roll, pitch, yaw)),
)

# --------------------------------------------------------------------------
# quaternion(...): Warp's constructor of any float type, in kernels


def _quaternion_typer(args, kws):
    name = "quaternion"
    dtype = keyword_dtype(name, args, kws)
    plain = shown(args)
    if not args:
        dtype = dtype or types.float32
        coerced = ()
    elif len(args) == 1 and is_value(plain[0], KIND_QUAT):  # a copy, converted to dtype
        dtype = dtype or plain[0].dtype
        coerced = plain
    elif len(args) == 2 and is_value(plain[0], KIND_VEC) and plain[0].size == 3 \
            and is_scalar(plain[1]):  # (ijk, real)
        dtype = dtype or plain[0].dtype
        coerced = (value_type_of(KIND_VEC, dtype, (3,)), dtype)
    elif len(args) == 4 and all(is_scalar(a) for a in plain):
        dtype = dtype or common_scalar(name, [types.int32 if isinstance(a, types.IntegerLiteral)
                                              else a for a in shown(args)], False)
        coerced = (dtype,) * 4
    else:
        fail(name, plain, "expected quaternion(), quaternion(x, y, z, w), quaternion(ijk: vec3, "
                          "real) or quaternion(q), each with an optional dtype=")
    result = value_type_of(KIND_QUAT, dtype, (4,))
    if result is None:
        fail(name, plain, f"a quaternion's dtype is a float type, not {dtype}")
    return signature(result, *coerced)


def _quaternion_formula(sig, *args):
    scalar_type = sig.return_type.spec.scalar_type
    flat = []
    for arg, argtype in zip(args, sig.args):
        flat.extend(arg if is_value(argtype) else [arg])
    return [algebra.cast(x, scalar_type) for x in flat] if flat else [0.0] * 4


quaternion = keyword_builtin(
    "quaternion",
    "quaternion(*values, dtype=None): Warp's quaternion constructor, in kernels:\n"
    "quaternion(dtype=float32) zeros, quaternion(x, y, z, w), quaternion(ijk, real) from a\n"
    "vec3 and a scalar, quaternion(q) converts. The type itself, for annotations and arrays:\n"
    "sim.types.quaternion(dtype).",
    ("dtype",), _quaternion_typer, _quaternion_formula,
)

__all__ = ["quaternion", "quat_identity", "quat_from_axis_angle", "quat_to_axis_angle", "quat_from_matrix",
           "quat_to_matrix", "quat_rotate", "quat_rotate_inv", "quat_inverse", "quat_slerp",
           "quat_rpy"]
