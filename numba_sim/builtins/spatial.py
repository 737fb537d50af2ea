"""Spatial algebra builtins (Warp's "Spatial Math" group, warp/native/spatial.h and the
helpers of warp/_src/math.py).

A spatial vector (``spatial_vector``, ``spatial_vectord``: 6 floats) is a twist
(angular velocity w, linear velocity v) or a wrench (torque, force): the angular part in
components 0-2 (``spatial_top``), the linear part in 3-5 (``spatial_bottom``), as in
Warp; ``spatial_vector(w, v)`` builds one from two vec3.  A spatial matrix is a 6x6
matrix (``spatial_matrix``), a spatial transform a transform (``spatial_transform`` is
an alias of ``transform``).  Each builtin takes one scalar type (float32 or float64).

``spatial_jacobian`` and ``spatial_mass`` are Warp 1.9's array builtins of its
Featherstone integrator (warp.sim): they write an articulation's Jacobian and its
block-diagonal mass matrix into flat float arrays, as Warp's C++ does.
"""

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing import signature

from numba_sim import algebra
from numba_sim.builtins.forms import (
    MAT33, SPATIAL_VECTOR, TRANSFORM, VEC3, Form, builtin, intrinsic_builtin, same_type,
    scalar_result, value_result,
)
from numba_sim.lowering.intrinsics import compiled
from numba_sim.types import KIND_MAT, KIND_VEC
from numba_sim.typing.value_types import ValueType

_VEC3_RESULT = value_result(KIND_VEC, (3,))

spatial_dot = builtin(
    "spatial_dot",
    "spatial_dot(a, b): the dot product of two spatial vectors (a wrench dotted with a twist\n"
    "is a power).",
    Form((SPATIAL_VECTOR, SPATIAL_VECTOR), scalar_result, lambda sig, a, b: algebra.dot(a, b),
         same_values=True),
)

spatial_cross = builtin(
    "spatial_cross",
    "spatial_cross(a, b): the spatial cross product of two twists,\n"
    "(w_a x w_b, v_a x w_b + w_a x v_b).",
    Form((SPATIAL_VECTOR, SPATIAL_VECTOR), same_type,
         lambda sig, a, b: algebra.spatial_cross(a, b), same_values=True),
)

spatial_cross_dual = builtin(
    "spatial_cross_dual",
    "spatial_cross_dual(a, b): the spatial force cross product of twist a and wrench b,\n"
    "(w_a x w_b + v_a x v_b, w_a x v_b).",
    Form((SPATIAL_VECTOR, SPATIAL_VECTOR), same_type,
         lambda sig, a, b: algebra.spatial_cross_dual(a, b), same_values=True),
)

spatial_top = builtin(
    "spatial_top", "spatial_top(a): the angular part of a spatial vector, components 0-2 (a vec3).",
    Form((SPATIAL_VECTOR,), _VEC3_RESULT, lambda sig, a: a[0:3]),
)

spatial_bottom = builtin(
    "spatial_bottom",
    "spatial_bottom(a): the linear part of a spatial vector, components 3-5 (a vec3).",
    Form((SPATIAL_VECTOR,), _VEC3_RESULT, lambda sig, a: a[3:6]),
)

spatial_adjoint = builtin(
    "spatial_adjoint",
    "spatial_adjoint(r, s): the 6x6 spatial matrix [[r, 0], [s, r]] of two 3x3 blocks; for a\n"
    "rigid transform (R, p), r = R and s = skew(p) @ R map twists between frames.",
    Form((MAT33, MAT33), value_result(KIND_MAT, (6, 6)),
         lambda sig, r, s: algebra.spatial_adjoint(r, s)),
)

transform_twist = builtin(
    "transform_twist",
    "transform_twist(t, x): the twist x = (w, v) expressed in the frame t maps to:\n"
    "(q w, q v + p x (q w)) for t = (p, q).",
    Form((TRANSFORM, SPATIAL_VECTOR), lambda dtype, argtypes: argtypes[1],
         lambda sig, t, x: algebra.transform_twist(t, x)),
)

transform_wrench = builtin(
    "transform_wrench",
    "transform_wrench(t, x): the wrench x = (tau, f) expressed in the frame t maps to:\n"
    "(q tau + p x (q f), q f) for t = (p, q).",
    Form((TRANSFORM, SPATIAL_VECTOR), lambda dtype, argtypes: argtypes[1],
         lambda sig, t, x: algebra.transform_wrench(t, x)),
)

velocity_at_point = builtin(
    "velocity_at_point",
    "velocity_at_point(qd, r): the linear velocity v + w x r of the point at offset r on a body\n"
    "moving with the twist qd = (w, v).",
    Form((SPATIAL_VECTOR, VEC3), _VEC3_RESULT, lambda sig, qd, r: algebra.velocity_at_point(qd, r)),
)



# --------------------------------------------------------------------------
# Warp 1.9's array builtins of articulated bodies (warp/native/spatial.h)


def _jacobian(S, joint_parents, joint_qd_start, joint_start, joint_count, J_start, J_out):
    """Warp's spatial_jacobian: for each joint i of the articulation, rows 6i..6i+5 of the
    (6 joint_count) x (dof count) row-major matrix at J_out[J_start:] get the motion
    subspaces S of the degrees of freedom of joint i and of each of its ancestors."""
    dof_start = joint_qd_start[joint_start]
    dof_count = joint_qd_start[joint_start + joint_count] - dof_start
    for i in range(joint_count):
        row_start = i * 6
        j = joint_start + i
        while j != -1:
            joint_dof_start = joint_qd_start[j]
            for dof in range(joint_qd_start[j + 1] - joint_dof_start):
                col = joint_dof_start - dof_start + dof
                s = S[dof_start + col]
                for k in range(6):
                    J_out[J_start + (row_start + k) * dof_count + col] = s[k]
            j = joint_parents[j]


def _mass(I_s, joint_start, joint_count, M_start, M):
    """Warp's spatial_mass: the 6x6 inertias of the articulation's joints on the diagonal of
    the (6 joint_count) square row-major matrix at M[M_start:]."""
    stride = joint_count * 6
    for body in range(joint_count):
        inertia = I_s[joint_start + body]
        for i in range(6):
            for j in range(6):
                M[M_start + (body * 6 + i) * stride + body * 6 + j] = inertia[i, j]


_JACOBIAN_USAGE = ("spatial_jacobian(S: array of spatial vectors, joint_parents: int array, "
                   "joint_qd_start: int array, joint_start: int, joint_count: int, J_start: int, "
                   "J_out: float array)")
_MASS_USAGE = ("spatial_mass(I_s: array of spatial matrices, joint_start: int, joint_count: int, "
               "M_start: int, M: float array)")


def _check_types(usage, args, kinds):
    """Raise a TypingError naming the first argument of *args* that is not of its kind."""
    if len(args) != len(kinds):
        raise TypingError(f"{usage}: got {len(args)} arguments")
    scalar = None
    for position, (arg, (describe, accepts)) in enumerate(zip(args, kinds)):
        if not accepts(arg):
            raise TypingError(f"{usage}: argument {position + 1} must be {describe}, got {arg}")
        if isinstance(arg, types.Array) and isinstance(arg.dtype, ValueType):
            scalar = arg.dtype.dtype
    out = args[-1]
    if not out.mutable or out.dtype != scalar:
        raise TypingError(f"{usage}: the output must be a writable 1-D array of {scalar} (the "
                          f"scalar type of the spatial values), got {out}")
    return signature(types.none, *args)


def _value_array(shape):
    def accepts(t):
        return (isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, ValueType)
                and t.dtype.shape == shape and isinstance(t.dtype.dtype, types.Float))

    return accepts


def _int_array(t):
    return isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, types.Integer)


def _int(t):
    return isinstance(t, types.Integer)


def _float_array(t):
    return isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, types.Float)


_JACOBIAN_KINDS = [("a 1-D array of spatial_vector or spatial_vectord", _value_array((6,))),
                   ("a 1-D int array", _int_array), ("a 1-D int array", _int_array),
                   ("an int", _int), ("an int", _int), ("an int", _int),
                   ("a 1-D float array", _float_array)]
_MASS_KINDS = [("a 1-D array of spatial_matrix or spatial_matrixd", _value_array((6, 6))),
               ("an int", _int), ("an int", _int), ("an int", _int),
               ("a 1-D float array", _float_array)]


def _python_checks(usage, arrays):
    """Python mode: (argument, trailing storage shape or None for 1-D) pairs to check."""
    for position, (value, trailing) in arrays:
        array = np.asarray(value) if not isinstance(value, np.ndarray) else value
        expected = 1 + (len(trailing) if trailing else 0)
        if array.ndim != expected or (trailing and array.shape[1:] != trailing):
            raise TypeError(f"{usage}: argument {position + 1} must have shape "
                            f"(n{''.join(f', {d}' for d in trailing or ())}), got {array.shape}")


def _jacobian_python(*args):
    if len(args) != 7:
        raise TypeError(f"{_JACOBIAN_USAGE}: got {len(args)} arguments")
    _python_checks(_JACOBIAN_USAGE, [(0, (args[0], (6,))), (1, (args[1], None)),
                                     (2, (args[2], None)), (6, (args[6], None))])
    _jacobian(*args)


def _mass_python(*args):
    if len(args) != 5:
        raise TypeError(f"{_MASS_USAGE}: got {len(args)} arguments")
    _python_checks(_MASS_USAGE, [(0, (args[0], (6, 6))), (4, (args[4], None))])
    _mass(*args)


spatial_jacobian = intrinsic_builtin(
    "spatial_jacobian",
    "spatial_jacobian(S, joint_parents, joint_qd_start, joint_start, joint_count, J_start,\n"
    "J_out): Warp 1.9's articulation Jacobian: for each joint i of the articulation starting at\n"
    "joint_start, rows 6i..6i+5 of the (6 joint_count) x (dof count) row-major matrix at\n"
    "J_out[J_start:] get the motion subspaces S of the dofs of joint i and of its ancestors\n"
    "(joint_parents, -1 at the root); other entries are left as they are.",
    typer=lambda *args: _check_types(_JACOBIAN_USAGE, args, _JACOBIAN_KINDS),
    python=_jacobian_python, lower=compiled(_jacobian),
)

spatial_mass = intrinsic_builtin(
    "spatial_mass",
    "spatial_mass(I_s, joint_start, joint_count, M_start, M): Warp 1.9's articulation mass\n"
    "matrix: the 6x6 inertias I_s of the joint_count bodies from joint_start on the diagonal\n"
    "blocks of the (6 joint_count) square row-major matrix at M[M_start:]; other entries are\n"
    "left as they are.",
    typer=lambda *args: _check_types(_MASS_USAGE, args, _MASS_KINDS),
    python=_mass_python, lower=compiled(_mass),
)

__all__ = ["spatial_dot", "spatial_cross", "spatial_cross_dual", "spatial_top", "spatial_bottom",
           "spatial_adjoint", "transform_twist", "transform_wrench", "velocity_at_point",
           "spatial_jacobian", "spatial_mass"]
