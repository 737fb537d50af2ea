"""Argument checks shared by the physics layer: every bad value raises a
``ValueError`` that names the call and the value (API-physics.md)."""

import math
import numbers

import numpy as np

UP_AXES = {"x": 0, "y": 1, "z": 2}


def up_axis_index(call, value):
    """The index (0, 1, 2) of an up axis given as "x" | "y" | "z" (or 0 | 1 | 2)."""
    if isinstance(value, str) and value.lower() in UP_AXES:
        return UP_AXES[value.lower()]
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= value <= 2:
        return int(value)
    raise ValueError(f"{call}: up_axis must be 'x', 'y' or 'z', got {value!r}")


def finite(call, name, value):
    """*value* as a finite Python float."""
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{call}: {name} must be a number, got {value!r}") from None
    if not math.isfinite(result):
        raise ValueError(f"{call}: {name} must be finite, got {value!r}")
    return result


def nonnegative(call, name, value):
    result = finite(call, name, value)
    if result < 0.0:
        raise ValueError(f"{call}: {name} must be >= 0, got {value!r}")
    return result


def positive(call, name, value):
    result = finite(call, name, value)
    if result <= 0.0:
        raise ValueError(f"{call}: {name} must be > 0, got {value!r}")
    return result


def count(call, name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{call}: {name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def vector(call, name, value, size=3):
    """A finite float64 vector of *size* components (a sim vector, tuple, list or array)."""
    try:
        result = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{call}: {name} must be a sequence of {size} numbers, got {value!r}") \
            from None
    if result.shape != (size,):
        raise ValueError(f"{call}: {name} must have {size} components, got {value!r}")
    if not np.all(np.isfinite(result)):
        raise ValueError(f"{call}: {name} must be finite, got {value!r}")
    return result


def quaternion(call, name, value):
    """A unit quaternion (x, y, z, w), normalized; a zero or non-finite one is an error."""
    if value is None:
        return np.array([0.0, 0.0, 0.0, 1.0])
    q = vector(call, name, value, 4)
    norm = np.linalg.norm(q)
    if norm < 1e-12:
        raise ValueError(f"{call}: {name} must be a non-zero quaternion (x, y, z, w), got {value!r}")
    return q / norm


def transform(call, name, value):
    """(p, q) from a sim.transform, a 7-sequence or a pair (p, q); None is the identity."""
    if value is None:
        return np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0])
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return vector(call, f"{name}[0]", value[0]), quaternion(call, f"{name}[1]", value[1])
    flat = vector(call, name, value, 7)
    return flat[:3].copy(), quaternion(call, name, flat[3:])


def points(call, name, value):
    """An (n, 3) finite float64 array."""
    try:
        result = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{call}: {name} must be an array of 3-vectors, got {value!r}") from None
    result = result.reshape(-1, 3) if result.size % 3 == 0 and result.ndim <= 2 else None
    if result is None:
        raise ValueError(f"{call}: {name} must have shape (n, 3), got {np.shape(value)}")
    bad = np.argwhere(~np.isfinite(result))
    if len(bad):
        raise ValueError(f"{call}: {name}[{bad[0][0]}] is not finite: {result[bad[0][0]].tolist()}")
    return result


def indices(call, name, value, width, limit):
    """An (n, width) int array of indices in [0, limit)."""
    try:
        result = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{call}: {name} must be an array of ints, got {value!r}") from None
    if result.size and not np.issubdtype(result.dtype, np.integer):
        raise ValueError(f"{call}: {name} must hold ints, got dtype {result.dtype}")
    if result.size % width:
        raise ValueError(f"{call}: {name} must hold a multiple of {width} indices, "
                         f"got {result.size}")
    result = result.astype(np.int64).reshape(-1, width)
    bad = np.argwhere((result < 0) | (result >= limit))
    if len(bad):
        value = result[bad[0][0], bad[0][1]]
        raise ValueError(f"{call}: {name} holds index {value}, out of range for {limit} "
                         "vertices")
    return result


def index(call, name, value, limit, what="particles"):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{call}: {name} must be an int index, got {value!r}")
    if not 0 <= value < limit:
        raise ValueError(f"{call}: {name}={value} is out of range ({limit} {what})")
    return int(value)


def quat_rotate(q, v):
    """Rotate the vectors *v* (..., 3) by the unit quaternion q = (x, y, z, w)."""
    u = q[:3]
    w = q[3]
    v = np.asarray(v, dtype=np.float64)
    return v * (2.0 * w * w - 1.0) + np.cross(u, v) * (2.0 * w) + np.outer(v @ u, u).reshape(
        v.shape) * 2.0


def quat_multiply(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + bw * ax + ay * bz - az * by,
                     aw * by + bw * ay + az * bx - ax * bz,
                     aw * bz + bw * az + ax * by - ay * bx,
                     aw * bw - ax * bx - ay * by - az * bz])
