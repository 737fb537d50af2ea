"""Component formulas shared by Python execution and compiled code.

Every operation on value types is written once here, over *lists of scalar
components* (row-major storage order).  The same formula runs

* in Python, where the components are NumPy scalars (so float32 stays float32,
  exactly as in compiled code), and
* inside Numba lowering, where the components are
  :class:`numba_sim.lowering.symbolic.Sym` objects that emit LLVM IR for each
  arithmetic operator.

So a `@sim.func` run as Python and the compiled kernel compute the same
numbers, and each formula has exactly one definition.  Formulas may only use
``+ - * /``, unary ``-``, comparisons and the polymorphic helpers below
(:func:`sqrt`, :func:`select`, :func:`zero_like`, :func:`cast`, ...).
Operation order follows Warp's C++ (left-to-right sums).
"""

import math

import numpy as np


# --------------------------------------------------------------------------
# Polymorphic scalar helpers: NumPy scalars in Python, Sym objects when lowering


def _is_symbolic(x):
    return hasattr(x, "emit_call")


def sqrt(x):
    return x.emit_call(math.sqrt) if _is_symbolic(x) else np.sqrt(x)


def select(cond, a, b):
    """``a if cond else b`` without branching (both sides are evaluated)."""
    if _is_symbolic(cond):
        return cond.select(a, b)
    return a if cond else b


def zero_like(x):
    return x.constant(0) if _is_symbolic(x) else type(x)(0)


def one_like(x):
    return x.constant(1) if _is_symbolic(x) else type(x)(1)


def cast(x, scalar_type):
    """Convert *x* to the NumPy scalar type *scalar_type* (e.g. np.float32)."""
    if _is_symbolic(x):
        return x.cast(scalar_type)
    with np.errstate(all="ignore"):
        return scalar_type(x)


def is_integer(x):
    dtype = x.np_dtype if _is_symbolic(x) else np.asarray(x).dtype
    return np.issubdtype(dtype, np.integer)


def _int_divide(a, b, scalar_type):
    a, b = int(a), int(b)
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    quotient = abs(a) // abs(b)
    return scalar_type(quotient if (a < 0) == (b < 0) else -quotient)


def div(a, b):
    """Warp's scalar ``/``: true division for floats, C truncation for ints."""
    if _is_symbolic(a):
        return a / b
    if is_integer(a):
        return _int_divide(a, b, type(a))
    with np.errstate(all="ignore"):
        return a / b


def total(items):
    """Left-to-right sum, as Warp's C++ loops accumulate."""
    result = items[0]
    for item in items[1:]:
        result = result + item
    return result


# --------------------------------------------------------------------------
# Elementwise and linear-algebra formulas (components in, components out)


def add(a, b):
    return [x + y for x, y in zip(a, b)]


def sub(a, b):
    return [x - y for x, y in zip(a, b)]


def neg(a):
    return [-x for x in a]


def scale(a, s):
    return [x * s for x in a]


def scale_div(a, s):
    return [div(x, s) for x in a]


def rdiv(s, a):
    return [div(s, x) for x in a]


def cw_mul(a, b):
    return [x * y for x, y in zip(a, b)]


def cw_div(a, b):
    return [div(x, y) for x, y in zip(a, b)]


def dot(a, b):
    return total([x * y for x, y in zip(a, b)])


def cross(a, b):
    return [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]


def length(a):
    return sqrt(dot(a, a))


def length_sq(a):
    return dot(a, a)


def normalize(a):
    """Warp: ``a / length(a)`` when the length is > 0, else the zero vector."""
    l = length(a)
    positive = l > zero_like(l)
    return [select(positive, div(x, l), zero_like(x)) for x in a]


def equal(a, b):
    result = a[0] == b[0]
    for x, y in zip(a[1:], b[1:]):
        result = result & (x == y)
    return result


def rows(a, n, m):
    return [a[i * m:(i + 1) * m] for i in range(n)]


def mat_vec(a, v, n, m):
    """(n x m) matrix times an m-vector."""
    return [dot(row, v) for row in rows(a, n, m)]


def vec_mat(v, a, n, m):
    """n-vector (as a row) times an (n x m) matrix."""
    return [total([v[k] * a[k * m + j] for k in range(n)]) for j in range(m)]


def mat_mat(a, b, n, k, m):
    """(n x k) times (k x m), row-major."""
    return [total([a[i * k + r] * b[r * m + j] for r in range(k)])
            for i in range(n) for j in range(m)]


def quat_mul(a, b):
    """Hamilton product with Warp's (x, y, z, w) storage and formula."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [
        aw * bx + bw * ax + ay * bz - by * az,
        aw * by + bw * ay + az * bx - bz * ax,
        aw * bz + bw * az + ax * by - bx * ay,
        aw * bw - ax * bx - ay * by - az * bz,
    ]


def quat_rotate(q, v):
    """Rotate v by unit quaternion q (Warp's formula)."""
    qx, qy, qz, qw = q
    two = one_like(qw) + one_like(qw)
    c = two * qw * qw - one_like(qw)
    d = two * (qx * v[0] + qy * v[1] + qz * v[2])
    qv = [qx, qy, qz]
    cr = cross(qv, v)
    return [v[i] * c + qv[i] * d + cr[i] * qw * two for i in range(3)]


def transform_mul(a, b):
    """Warp's transform_multiply: (p_a + q_a * p_b, q_a * q_b)."""
    p = add(quat_rotate(a[3:], b[:3]), a[:3])
    return p + quat_mul(a[3:], b[3:])
