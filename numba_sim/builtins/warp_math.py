"""Warp's math helpers (``warp/_src/math.py``: norms, ``smooth_normalize``, the
quaternion twist and Euler-angle conversions), as ``@sim.func`` s ported from Warp's own
``@wp.func`` bodies (Apache-2.0, NVIDIA): kernels call them as compiled functions, Python
calls them as Python.

Not a family of :mod:`numba_sim.builtins` (its bodies are kernel language, so it needs
:mod:`numba_sim.kernel`): ``numba_sim/__init__.py`` imports it last and re-exports
:data:`__all__`.
"""

from typing import Any

from numba_sim.builtins.constants import HALF_PI, pi
from numba_sim.builtins.scalar_math import abs, acos, asin, atan2, clamp, cos, sin, sqrt
from numba_sim.builtins.vector import dot, length, normalize
from numba_sim.kernel import func
from numba_sim.scalars import float32
from numba_sim.types import PUBLIC_NAMES

vec3 = PUBLIC_NAMES["vec3"]
quat = PUBLIC_NAMES["quat"]


@func
def norm_l1(v: Any) -> float:
    """Compute the L1 norm of a vector v."""
    n = float(0.0)
    for i in range(len(v)):
        n += abs(v[i])
    return n


@func
def norm_l2(v: Any) -> float:
    """Compute the L2 norm of a vector v."""
    return length(v)


@func
def norm_huber(v: Any, delta: float = float32(1.0)) -> float:
    """Compute the Huber norm of a vector v with a given delta."""
    a = dot(v, v)
    if a <= delta * delta:
        return 0.5 * a
    return delta * (sqrt(a) - 0.5 * delta)


@func
def norm_pseudo_huber(v: Any, delta: float = float32(1.0)) -> float:
    """Compute the "pseudo" Huber norm of a vector v with a given delta."""
    a = dot(v, v)
    return delta * sqrt(1.0 + a / (delta * delta))


@func
def smooth_normalize(v: Any, delta: float = float32(1.0)) -> Any:
    """Normalize a vector using the pseudo-Huber norm."""
    return v / norm_pseudo_huber(v, delta)


@func
def quat_twist(axis: vec3, q: quat) -> quat:
    """Return the twist component of ``q`` about ``axis``."""
    a = vec3(q[0], q[1], q[2])
    proj = dot(a, axis)
    a = proj * axis
    return normalize(quat(a[0], a[1], a[2], q[3]))


@func
def quat_twist_angle(axis: vec3, q: quat) -> float:
    """Return the unsigned twist magnitude in radians of ``q`` around ``axis``."""
    vector = vec3(q[0], q[1], q[2])
    sin_half = abs(dot(axis, vector))
    return 2.0 * atan2(sin_half, q[3])


@func
def quat_twist_angle_signed(axis: vec3, q: quat) -> float:
    """Return the signed twist angle in radians of ``q`` around ``axis``."""
    vector = vec3(q[0], q[1], q[2])
    sin_half = dot(axis, vector)
    return 2.0 * atan2(sin_half, q[3])


@func
def quat_to_rpy(q: quat) -> vec3:
    """Return the roll, pitch, and yaw angles in radians of the rotation ``q``."""

    x = q[0]
    y = q[1]
    z = q[2]
    w = q[3]
    t0 = 2.0 * (w * x + y * z)
    t1 = 1.0 - 2.0 * (x * x + y * y)
    roll_x = atan2(t0, t1)

    t2 = 2.0 * (w * y - z * x)
    t2 = clamp(t2, -1.0, 1.0)
    pitch_y = asin(t2)

    t3 = 2.0 * (w * z + x * y)
    t4 = 1.0 - 2.0 * (y * y + z * z)
    yaw_z = atan2(t3, t4)

    return vec3(roll_x, pitch_y, yaw_z)


@func
def quat_to_euler(q: quat, i: int, j: int, k: int) -> vec3:
    """Return the Euler angles in radians of the rotation ``q`` for an axis sequence."""
    # Warp's formula (for scalar-first quaternions, 1-based axes), with the vector part
    # indexed by the 0-based axes: the same operations on the same numbers.
    w = q[3]
    v = vec3(q[0], q[1], q[2])
    not_proper = True
    if i == k:
        not_proper = False
        k = 3 - i - j  # because i + j + k = 0 + 1 + 2 = 3
    e = float((i - j) * (j - k) * (k - i)) / 2.0  # Levi-Civita symbol
    a = w
    b = v[i]
    c = v[j]
    d = v[k] * e
    if not_proper:
        a -= v[j]
        b += v[k] * e
        c += w
        d -= v[i]
    t2 = acos(2.0 * (a * a + b * b) / (a * a + b * b + c * c + d * d) - 1.0)
    tp = atan2(b, a)
    tm = atan2(d, c)
    t1 = 0.0
    t3 = 0.0
    if abs(t2) < 1e-6:
        t3 = 2.0 * tp - t1
    elif abs(t2 - pi) < 1e-6:
        t3 = 2.0 * tm + t1
    else:
        t1 = tp - tm
        t3 = tp + tm
    if not_proper:
        t2 -= HALF_PI
        t3 *= e
    # the solved angles by axis index (round-trips stable for Tait-Bryan orders)
    angles = vec3(0.0, 0.0, 0.0)
    angles[i] = t1
    angles[j] = t2
    angles[k] = t3
    return angles


@func
def _axis_rotation(axis: int, half_angle: float) -> quat:
    """The rotation about coordinate axis *axis* (0, 1, 2) by twice *half_angle*."""
    s = sin(half_angle)
    c = cos(half_angle)
    if axis == 0:
        return quat(s, 0.0, 0.0, c)
    if axis == 1:
        return quat(0.0, s, 0.0, c)
    return quat(0.0, 0.0, s, c)


@func
def quat_from_euler(e: vec3, i: int, j: int, k: int) -> quat:
    """Return the rotation quaternion for Euler angles in radians and an axis sequence."""
    qi = _axis_rotation(i, 0.5 * e[i])
    qj = _axis_rotation(j, 0.5 * e[j])
    qk = _axis_rotation(k, 0.5 * e[k])
    # For extrinsic rotations about fixed axes i -> j -> k, quaternion
    # composition is q = q_k * q_j * q_i.
    return qk * (qj * qi)


__all__ = [
    "norm_l1",
    "norm_l2",
    "norm_huber",
    "norm_pseudo_huber",
    "smooth_normalize",
    "quat_twist",
    "quat_twist_angle",
    "quat_twist_angle_signed",
    "quat_to_rpy",
    "quat_to_euler",
    "quat_from_euler",
]
