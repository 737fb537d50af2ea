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
(:func:`sqrt`, :func:`select`, :func:`branch`, :func:`call` for the math
library, :func:`zero_like`, :func:`cast`, ...).
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


def branch(cond, then, otherwise):
    """``then() if cond else otherwise()`` for functions returning component lists.

    Unlike :func:`select`, only the taken side is computed (a real branch when
    lowering): for results that are costly and rarely discarded.
    """
    if _is_symbolic(cond):
        return cond.branch(then, otherwise)
    return then() if cond else otherwise()


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
    if not a:  # two empty values (a slice past the end) are equal
        return np.bool_(True)
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


def muladd(a, b, c):
    """``a * b + c`` with a single rounding (fused multiply-add), as Warp's ``muladd``."""
    if _is_symbolic(a):
        return a.fma(b, c)
    from fractions import Fraction

    if is_integer(a):
        return a * b + c
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    return type(a)(float(exact)) if np.isfinite([a, b, c]).all() else type(a)(a * b + c)


def mat_mat(a, b, n, k, m):
    """(n x k) times (k x m), row-major; Warp accumulates with fused multiply-adds."""
    result = []
    for i in range(n):
        for j in range(m):
            accumulated = muladd(a[i * k], b[j], zero_like(a[0]))
            for r in range(1, k):
                accumulated = muladd(a[i * k + r], b[r * m + j], accumulated)
            result.append(accumulated)
    return result


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
    return _rotate(q, v, inverse=False)


def quat_rotate_inv(q, v):
    """Rotate v by the inverse of unit quaternion q (Warp's formula)."""
    return _rotate(q, v, inverse=True)


def _rotate(q, v, inverse):
    """Warp's v*(2w^2 - 1) + q.xyz*2(q.xyz . v) +- cross(q.xyz, v)*2w."""
    qx, qy, qz, qw = q
    two = one_like(qw) + one_like(qw)
    c = two * qw * qw - one_like(qw)
    d = two * (qx * v[0] + qy * v[1] + qz * v[2])
    qv = [qx, qy, qz]
    cr = cross(qv, v)
    if inverse:
        return [v[i] * c + qv[i] * d - cr[i] * qw * two for i in range(3)]
    return [v[i] * c + qv[i] * d + cr[i] * qw * two for i in range(3)]


def transform_mul(a, b):
    """Warp's transform_multiply: (p_a + q_a * p_b, q_a * q_b)."""
    p = add(quat_rotate(a[3:], b[:3]), a[:3])
    return p + quat_mul(a[3:], b[3:])


# --------------------------------------------------------------------------
# Math functions: the target's libm / libdevice when lowering, NumPy in Python

MATH_FUNCTIONS = {  # the functions of :mod:`math` that :func:`call` takes, with NumPy's versions
    math.sqrt: np.sqrt, math.exp: np.exp, math.log: np.log, math.pow: np.power,
    math.sin: np.sin, math.cos: np.cos, math.tan: np.tan,
    math.asin: np.arcsin, math.acos: np.arccos, math.atan: np.arctan, math.atan2: np.arctan2,
    math.sinh: np.sinh, math.cosh: np.cosh, math.tanh: np.tanh,
    math.floor: np.floor, math.ceil: np.ceil, math.trunc: np.trunc,
    math.fabs: np.fabs, math.copysign: np.copysign,
}


def call(pyfunc, x, *others):
    """``pyfunc(x, *others)`` for a function of :mod:`math`, in the floating type of *x*.

    Lowered through the target's own implementation (libm on the CPU, libdevice
    on CUDA).  In Python through NumPy's function in double precision, rounded
    to the type of *x*: NumPy's own float32 kernels can be 1 ulp further from
    the exact result than libm's float functions, which are correctly rounded
    or nearly so.
    """
    if _is_symbolic(x):
        return x.emit_call(pyfunc, *others)
    return _in_double(MATH_FUNCTIONS[pyfunc], x, *others)


def _in_double(numpy_function, x, *others):
    with np.errstate(all="ignore"):
        return type(x)(numpy_function(np.float64(x), *[np.float64(o) for o in others]))


def cbrt(x):
    """The cube root (C's ``cbrtf`` / ``cbrt``; Numba has no lowering of ``math.cbrt``)."""
    if _is_symbolic(x):
        return x.emit_libm("cbrt")
    return _in_double(np.cbrt, x)


def scalar_type_of(x):
    """The NumPy scalar type of a formula scalar (np.float32, np.int32, ...)."""
    return x.np_dtype.type if _is_symbolic(x) else type(x)


def widen(x):
    """*x* as float64 (Warp's C++ mixes double intermediates into some float formulas)."""
    return cast(x, np.float64)


def absolute(x):
    """Warp's ``abs``: ``fabs`` for floats, ``x < 0 ? -x : x`` for integers."""
    if is_integer(x):
        return select(x < zero_like(x), -x, x)
    return call(math.fabs, x)


def minimum(a, b):
    """Warp's scalar ``min``: C ``fmin`` semantics (a NaN operand counts as missing).

    Warp's own host form ``a <= b ? a : (b == b ? b : a)``; for integers it is
    ``a < b ? a : b``.
    """
    return select(a <= b, a, select(b == b, b, a))


def maximum(a, b):
    """Warp's scalar ``max``: C ``fmax`` semantics, ``a >= b ? a : (b == b ? b : a)``."""
    return select(a >= b, a, select(b == b, b, a))


def clamp(x, low, high):
    """Warp's ``clamp``: ``min(max(low, x), high)``."""
    return minimum(maximum(low, x), high)


def sign(x):
    """Warp's ``sign``: -1 if x < 0 else 1 (so +1 for -0.0 and NaN)."""
    return select(x < zero_like(x), -one_like(x), one_like(x))


def step(x):
    """Warp's ``step``: 1 if x < 0 else 0."""
    return select(x < zero_like(x), one_like(x), zero_like(x))


def round_half_away(x):
    """C's ``round``: the nearest integer, halfway cases away from zero.

    ``x - trunc(x)`` is exact, so the comparison with 0.5 decides exactly; NaN
    and infinities come back unchanged.
    """
    whole = call(math.trunc, x)
    away = whole + call(math.copysign, one_like(x), x)
    return select(absolute(x - whole) >= 0.5, away, whole)


def is_nan(x):
    return x != x


def is_inf(x):
    return absolute(x) == math.inf


def is_finite(x):
    return absolute(x) < math.inf


def any_of(conditions):
    result = conditions[0]
    for c in conditions[1:]:
        result = result | c
    return result


def all_of(conditions):
    result = conditions[0]
    for c in conditions[1:]:
        result = result & c
    return result


RAD_TO_DEG = 57.29577951308232087679
DEG_TO_RAD = 0.01745329251994329577


def scale_in_double(x, factor):
    """``x * factor`` with *factor* a C double literal, as Warp's ``degrees``/``radians``:
    the product is computed in double and rounded back to x's type."""
    return cast(widen(x) * factor, scalar_type_of(x))


def lerp(a, b, t):
    """Warp's ``lerp``: ``a*(1-t) + b*t`` componentwise (a, b: component lists)."""
    s = one_like(t) - t
    return [x * s + y * t for x, y in zip(a, b)]


def smoothstep(edge0, edge1, x):
    """Warp's ``smoothstep``: clamp((x - e0) / (e1 - e0), 0, 1), then x*x*(3 - 2x)."""
    x = clamp((x - edge0) / (edge1 - edge0), zero_like(x), one_like(x))
    return x * x * (3 - 2 * x)


# --------------------------------------------------------------------------
# Matrices (row-major component lists of square n x n matrices)


def transpose(a, n, m):
    """(n x m) -> (m x n)."""
    return [a[j * m + i] for i in range(m) for j in range(n)]


def outer(a, b):
    return [x * y for x in a for y in b]


def diagonal_matrix(d):
    n = len(d)
    return [d[i] if i == j else zero_like(d[i]) for i in range(n) for j in range(n)]


def identity_matrix(n, scalar_type):
    return [scalar_type(1 if i == j else 0) for i in range(n) for j in range(n)]


def trace(a, n):
    return total([a[i * n + i] for i in range(n)])


def skew(v):
    zero = zero_like(v[0])
    return [zero, -v[2], v[1],
            v[2], zero, -v[0],
            -v[1], v[0], zero]


def matrix_from_rows(vectors):
    return [x for v in vectors for x in v]


def matrix_from_cols(vectors):
    return [vectors[j][i] for i in range(len(vectors[0])) for j in range(len(vectors))]


def determinant(a, n):
    """Warp's determinant formulas for 2x2, 3x3 and 4x4 matrices."""
    if n == 2:
        return a[0] * a[3] - a[2] * a[1]
    if n == 3:
        return dot(a[0:3], cross(a[3:6], a[6:9]))
    return _mat44_cofactors(a)[1]


def inverse(a, n):
    """Warp's ``inverse`` (the zero matrix where Warp's determinant test fails)."""
    return {2: _inverse22, 3: _inverse33, 4: _inverse44}[n](a)


def _unless_singular(invertible, inverse, m):
    """Warp: the inverse, or the zero matrix where its determinant test fails."""
    return branch(invertible, inverse, lambda: [zero_like(x) for x in m])


def _inverse22(a):
    det = determinant(a, 2)
    invertible = (det > zero_like(det)) | (det < -zero_like(det))
    return _unless_singular(
        invertible, lambda: scale([a[3], -a[1], -a[2], a[0]], one_like(det) / det), a)


def _inverse33(m):
    det = determinant(m, 3)
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = m[0:3], m[3:6], m[6:9]

    def inverse():
        b = [
            m11 * m22 - m12 * m21, m02 * m21 - m01 * m22, m01 * m12 - m02 * m11,
            m12 * m20 - m10 * m22, m00 * m22 - m02 * m20, m02 * m10 - m00 * m12,
            m10 * m21 - m11 * m20, m01 * m20 - m00 * m21, m00 * m11 - m01 * m10,
        ]
        return scale(b, one_like(det) / det)

    return _unless_singular(det != zero_like(det), inverse, m)


def _two_by_two_minors(c0, c1):
    """Warp's six 2x2 determinants of two columns, computed in the matrix type and held
    in double (its ``y01 .. y23``)."""
    pairs = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
    return {f"{i}{j}": widen(c0[i] * c1[j] - c0[j] * c1[i]) for i, j in pairs}


def _mat44_cofactors(m):
    """Warp's (USD's) 4x4 cofactors and determinant, with its mix of precisions.

    Returns (cofactors, det): ``cofactors[r][c]`` is Warp's ``z{r}{c}``; those of
    the first two columns are rounded to the matrix type, those of the last two
    stay double; ``det`` is in the matrix type.
    """
    narrow = scalar_type_of(m[0])
    x = [[m[4 * i + j] for j in range(4)] for i in range(4)]
    col = [[x[i][j] for i in range(4)] for j in range(4)]
    xd = [[widen(v) for v in row] for row in x]

    y = _two_by_two_minors(col[0], col[1])
    z = {}
    z["33"] = xd[0][2] * y["12"] - xd[1][2] * y["02"] + xd[2][2] * y["01"]
    z["23"] = xd[1][2] * y["03"] - xd[3][2] * y["01"] - xd[0][2] * y["13"]
    z["13"] = xd[0][2] * y["23"] - xd[2][2] * y["03"] + xd[3][2] * y["02"]
    z["03"] = xd[2][2] * y["13"] - xd[3][2] * y["12"] - xd[1][2] * y["23"]
    z["32"] = xd[1][3] * y["02"] - xd[2][3] * y["01"] - xd[0][3] * y["12"]
    z["22"] = xd[0][3] * y["13"] - xd[1][3] * y["03"] + xd[3][3] * y["01"]
    z["12"] = xd[2][3] * y["03"] - xd[3][3] * y["02"] - xd[0][3] * y["23"]
    z["02"] = xd[1][3] * y["23"] - xd[2][3] * y["13"] + xd[3][3] * y["12"]

    y = _two_by_two_minors(col[2], col[3])
    first_columns = {
        "30": xd[1][1] * y["02"] - xd[2][1] * y["01"] - xd[0][1] * y["12"],
        "20": xd[0][1] * y["13"] - xd[1][1] * y["03"] + xd[3][1] * y["01"],
        "10": xd[2][1] * y["03"] - xd[3][1] * y["02"] - xd[0][1] * y["23"],
        "00": xd[1][1] * y["23"] - xd[2][1] * y["13"] + xd[3][1] * y["12"],
        "31": xd[0][0] * y["12"] - xd[1][0] * y["02"] + xd[2][0] * y["01"],
        "21": xd[1][0] * y["03"] - xd[3][0] * y["01"] - xd[0][0] * y["13"],
        "11": xd[0][0] * y["23"] - xd[2][0] * y["03"] + xd[3][0] * y["02"],
        "01": xd[2][0] * y["13"] - xd[3][0] * y["12"] - xd[1][0] * y["23"],
    }
    z.update({key: cast(value, narrow) for key, value in first_columns.items()})
    det = x[3][0] * z["30"] + x[2][0] * z["20"] + x[1][0] * z["10"] + x[0][0] * z["00"]
    cofactors = [[z[f"{r}{c}"] for c in range(4)] for r in range(4)]
    return cofactors, det


def _inverse44(m):
    cofactors, det = _mat44_cofactors(m)
    narrow = scalar_type_of(m[0])

    def inverse():
        det_d = widen(det)
        rcp = one_like(det_d) / det_d
        return [cast(widen(cofactors[j][i]) * rcp, narrow) for i in range(4) for j in range(4)]

    return _unless_singular(absolute(det) > zero_like(det), inverse, m)


# --------------------------------------------------------------------------
# Quaternions (x, y, z, w) and transforms (p, q), following Warp's quat.h and spatial.h


def quat_identity(scalar_type):
    return [scalar_type(0), scalar_type(0), scalar_type(0), scalar_type(1)]


def quat_normalize(q):
    """Warp: q * (1 / length(q)), or the identity quaternion when the length is 0."""
    l = length(q)
    inv = one_like(l) / l
    positive = l > zero_like(l)
    identity = [zero_like(l), zero_like(l), zero_like(l), one_like(l)]
    return [select(positive, x * inv, i) for x, i in zip(q, identity)]


def quat_inverse(q):
    return [-q[0], -q[1], -q[2], q[3]]


def quat_from_axis_angle(axis, angle):
    half = angle * 0.5
    w = call(math.cos, half)
    s = call(math.sin, half)
    return scale(axis, s) + [w]


def quat_to_axis_angle(q):
    """(axis, angle) of unit quaternion q; the angle is in [0, pi] (Warp's formula)."""
    v = q[0:3]
    n = normalize(v)
    negative = q[3] < zero_like(q[3])
    axis = [select(negative, -x, x) for x in n]
    angle = 2 * call(math.atan2, length(v), absolute(q[3]))
    return axis, angle


def quat_slerp(q0, q1, t):
    axis, angle = quat_to_axis_angle(quat_mul(quat_inverse(q0), q1))
    return quat_mul(q0, quat_from_axis_angle(axis, t * angle))


def quat_to_matrix(q):
    """The rotation matrix of q: the rotated unit axes as columns (Warp's formula)."""
    axes = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])
    return matrix_from_cols([quat_rotate(q, e) for e in axes])


def quat_from_matrix(m, n):
    """Warp's quat_from_matrix on the upper-left 3x3 block of an n x n matrix: from the
    trace when it is >= 0, else from the largest diagonal element (Warp's branches)."""
    def at(i, j):
        return m[i * n + j]

    def from_pivot(pivot_index, pivot_term, others):
        """Warp's h = sqrt(pivot_term + 1); pivot = h / 2; the others scaled by 0.5 / h."""
        h = sqrt(pivot_term + 1)
        pivot, h = 0.5 * h, 0.5 / h
        q = [o * h for o in others]
        return q[:pivot_index] + [pivot] + q[pivot_index:]

    def by_trace():
        return from_pivot(3, tr, [at(2, 1) - at(1, 2), at(0, 2) - at(2, 0), at(1, 0) - at(0, 1)])

    def by_x():
        return from_pivot(0, at(0, 0) - (at(1, 1) + at(2, 2)),
                          [at(0, 1) + at(1, 0), at(2, 0) + at(0, 2), at(2, 1) - at(1, 2)])

    def by_y():
        return from_pivot(1, at(1, 1) - (at(2, 2) + at(0, 0)),
                          [at(0, 1) + at(1, 0), at(1, 2) + at(2, 1), at(0, 2) - at(2, 0)])

    def by_z():
        return from_pivot(2, at(2, 2) - (at(0, 0) + at(1, 1)),
                          [at(2, 0) + at(0, 2), at(1, 2) + at(2, 1), at(1, 0) - at(0, 1)])

    def by_diagonal():
        y_largest = at(1, 1) > at(0, 0)
        z_largest = at(2, 2) > select(y_largest, at(1, 1), at(0, 0))
        return branch(z_largest, by_z, lambda: branch(y_largest, by_y, by_x))

    tr = at(0, 0) + at(1, 1) + at(2, 2)
    return quat_normalize(branch(tr >= zero_like(tr), by_trace, by_diagonal))


def quat_rpy(roll, pitch, yaw):
    cy, sy = call(math.cos, yaw * 0.5), call(math.sin, yaw * 0.5)
    cr, sr = call(math.cos, roll * 0.5), call(math.sin, roll * 0.5)
    cp, sp = call(math.cos, pitch * 0.5), call(math.sin, pitch * 0.5)
    w = cy * cr * cp + sy * sr * sp
    x = cy * sr * cp - sy * cr * sp
    y = cy * cr * sp + sy * sr * cp
    z = sy * cr * cp - cy * sr * sp
    return [x, y, z, w]


def transform_identity(scalar_type):
    return [scalar_type(0)] * 3 + quat_identity(scalar_type)


def transform_point(t, p):
    """Warp: t.p + quat_rotate(t.q, p)."""
    return add(t[0:3], quat_rotate(t[3:7], p))


def transform_vector(t, v):
    return quat_rotate(t[3:7], v)


def transform_inverse(t):
    q_inv = quat_inverse(t[3:7])
    return neg(quat_rotate(q_inv, t[0:3])) + q_inv


def matrix_transform_point(m, p, w):
    """Warp's transform_point / transform_vector by a 4x4 matrix: (m @ (p, w))[:3]."""
    return mat_vec(m, list(p) + [w], 4, 4)[0:3]


# --------------------------------------------------------------------------
# Scalar builtins of issue 17: div, mod, nonzero, rint, log2, log10, where, bitwise
# (Warp's warp/native/builtin.h; appended in a section of their own)

MATH_FUNCTIONS.update({math.log2: np.log2, math.log10: np.log10})


def truncated_div(a, b):
    """Warp's ``div(a, b)``: ``a / b`` in the operands' type (C truncation for ints; an
    integer division by zero raises ZeroDivisionError in Python, undefined compiled)."""
    if _is_symbolic(a) or not is_integer(a):
        return div(a, b)
    x, y = int(a), int(b)
    if y == 0:
        raise ZeroDivisionError("integer division by zero (undefined in Warp's kernels)")
    quotient = abs(x) // abs(y)
    return _wrap_int(quotient if (x < 0) == (y < 0) else -quotient, type(a))


def _wrap_int(value, scalar_type):
    """The Python int *value* in the integer type *scalar_type*, wrapping as C does."""
    return np.uint64(value & 0xFFFFFFFFFFFFFFFF).astype(scalar_type)


def remainder(a, b):
    """Warp's ``mod(a, b)``: C's ``a % b`` for ints (the sign of *a*), ``fmod`` for floats."""
    if _is_symbolic(a):
        return a % b  # srem / urem / frem
    if not is_integer(a):
        with np.errstate(all="ignore"):
            return np.fmod(a, b)
    x, y = int(a), int(b)
    if y == 0:
        raise ZeroDivisionError("integer remainder by zero (undefined in Warp's kernels)")
    quotient = abs(x) // abs(y)
    quotient = quotient if (x < 0) == (y < 0) else -quotient
    return _wrap_int(x - quotient * y, type(a))


def nonzero(x):
    """Warp's ``nonzero``: ``x == 0 ? 0 : 1`` in x's type (NaN counts as nonzero)."""
    return select(x == zero_like(x), zero_like(x), one_like(x))


def rint(x):
    """C's ``rint``: the nearest integer (as a float), halfway cases to even."""
    if _is_symbolic(x):
        return x.emit_libm("rint")
    return type(x)(np.rint(x))


def where(cond, a, b):
    """``a if cond else b`` componentwise (*a*, *b* scalars or component lists)."""
    if isinstance(a, list):
        return [select(cond, x, y) for x, y in zip(a, b)]
    return select(cond, a, b)


def truth(x):
    """*x* as a condition: itself for a boolean, ``x != 0`` for a number (C's rule)."""
    if _is_symbolic(x):
        return x if x.np_dtype == np.bool_ else x != zero_like(x)
    return bool(x)


def _bitwise_instruction(name, a, b=None):
    builder = a.builder
    if name == "invert":
        value = builder.not_(a.value)
    else:
        b = a._coerce(b)
        value = {"and": builder.and_, "or": builder.or_, "xor": builder.xor}[name](a.value,
                                                                                    b.value)
    return type(a)(a.context, builder, a.type, value)


def bit_and(a, b):
    return _bitwise_instruction("and", a, b) if _is_symbolic(a) else a & b


def bit_or(a, b):
    return _bitwise_instruction("or", a, b) if _is_symbolic(a) else a | b


def bit_xor(a, b):
    return _bitwise_instruction("xor", a, b) if _is_symbolic(a) else a ^ b


def bit_invert(a):
    return _bitwise_instruction("invert", a) if _is_symbolic(a) else ~a


# ==========================================================================
# Spatial algebra and the transform helpers (Warp's warp/native/spatial.h and the
# @wp.func helpers of warp/_src/math.py).  Spatial vectors are (w, v): angular part in
# components 0-2, linear part in 3-5; transforms are (p, q); matrices row-major.


def spatial_cross(a, b):
    """Warp's spatial_cross (twist x twist): (w_a x w_b, v_a x w_b + w_a x v_b)."""
    w = cross(a[0:3], b[0:3])
    v = add(cross(a[3:6], b[0:3]), cross(a[0:3], b[3:6]))
    return w + v


def spatial_cross_dual(a, b):
    """Warp's spatial_cross_dual (twist x wrench): (w_a x w_b + v_a x v_b, w_a x v_b)."""
    w = add(cross(a[0:3], b[0:3]), cross(a[3:6], b[3:6]))
    v = cross(a[0:3], b[3:6])
    return w + v


def spatial_adjoint(r, s):
    """Warp's spatial_adjoint: the 6x6 matrix [[r, 0], [s, r]] of two 3x3 blocks."""
    zero = zero_like(r[0])
    out = []
    for i in range(6):
        for j in range(6):
            if (i < 3) == (j < 3):
                out.append(r[(i % 3) * 3 + j % 3])
            elif i >= 3:
                out.append(s[(i - 3) * 3 + j])
            else:
                out.append(zero)
    return out


def transform_twist(t, x):
    """Warp's transform_twist: w' = q w, v' = q v + p x w'."""
    p, q = t[0:3], t[3:7]
    w = quat_rotate(q, x[0:3])
    v = add(quat_rotate(q, x[3:6]), cross(p, w))
    return w + v


def transform_wrench(t, x):
    """Warp's transform_wrench: f' = q f, tau' = q tau + p x f'."""
    p, q = t[0:3], t[3:7]
    f = quat_rotate(q, x[3:6])
    tau = add(quat_rotate(q, x[0:3]), cross(p, f))
    return tau + f


def velocity_at_point(qd, r):
    """Warp's velocity_at_point: v + w x r for the twist qd = (w, v)."""
    return add(qd[3:6], cross(qd[0:3], r))


def transform_to_matrix(t):
    """Warp's transform_to_matrix: [[R(q), p], [0, 0, 0, 1]]."""
    rot = quat_to_matrix(t[3:7])
    zero, one = zero_like(t[0]), one_like(t[0])
    out = []
    for i in range(3):
        out += rot[3 * i:3 * i + 3] + [t[i]]
    return out + [zero, zero, zero, one]


def transform_from_matrix(m):
    """Warp's transform_from_matrix: p from the last column, q = quat_from_matrix(m)."""
    return [m[3], m[7], m[11]] + quat_from_matrix(m, 4)


def transform_compose(position, rotation, scale_xyz):
    """Warp's transform_compose: [[R(q) diag(s), p], [0, 0, 0, 1]]."""
    rot = quat_to_matrix(rotation)
    zero, one = zero_like(position[0]), one_like(position[0])
    out = []
    for i in range(3):
        out += [scale_xyz[j] * rot[3 * i + j] for j in range(3)] + [position[i]]
    return out + [zero, zero, zero, one]


def transform_decompose(m):
    """Warp's transform_decompose: (position, rotation, scale) of a 4x4 matrix; the scale
    is the length of each column of the 3x3 block, and the rotation that of the block with
    its columns divided by their (nonzero) lengths."""
    position = [m[3], m[7], m[11]]
    block = [m[4 * i + j] for i in range(3) for j in range(3)]
    scales = [sqrt(block[j] * block[j] + block[3 + j] * block[3 + j] + block[6 + j] * block[6 + j])
              for j in range(3)]
    zero = zero_like(m[0])
    unscaled = [select(scales[k % 3] != zero, div(x, scales[k % 3]), x)
                for k, x in enumerate(block)]
    return position, quat_from_matrix(unscaled, 3), scales


# --------------------------------------------------------------------------
# Small dense linear algebra of issue 17: svd3, svd2, qr3, eig3
# (Warp's warp/native/svd.h, after Eric Jang's svd3; appended in a section of their own)
#
# Matrices are row-major component lists; the scalar type is the components'.
# ``_recip_sqrt`` is Warp's host ``1 / sqrt(x)`` (Warp's CUDA code uses the
# approximate ``rsqrt``: there the results may differ in the last bits).

_SVD_EPSILON = {np.float32: 1.0e-6, np.float64: 1.0e-12}
_JACOBI_ITERATIONS = {np.float32: 4, np.float64: 8}
_GAMMA = 5.82842712474619  # sqrt(8) + 3
_CSTAR = 0.9238795325112867  # cos(pi / 8)
_SSTAR = 0.3826834323650898  # sin(pi / 8)


def _recip_sqrt(x):
    return one_like(x) / sqrt(x)


def _mult_ab(a, b):
    """``A * B`` of 3x3 matrices, Warp's multAB."""
    return [a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j]
            for i in range(3) for j in range(3)]


def _mult_atb(a, b):
    """``transpose(A) * B``, Warp's multAtB."""
    return [a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j]
            for i in range(3) for j in range(3)]


def _quat_to_mat3(q):
    x, y, z, w = q
    qxx, qyy, qzz = x * x, y * y, z * z
    qxz, qxy, qyz = x * z, x * y, y * z
    qwx, qwy, qwz = w * x, w * y, w * z
    return [1 - 2 * (qyy + qzz), 2 * (qxy - qwz), 2 * (qxz + qwy),
            2 * (qxy + qwz), 1 - 2 * (qxx + qzz), 2 * (qyz - qwx),
            2 * (qxz - qwy), 2 * (qyz + qwx), 1 - 2 * (qxx + qyy)]


def _approximate_givens_quaternion(a11, a12, a22):
    ch = 2 * (a11 - a22)
    sh = a12
    b = _GAMMA * sh * sh < ch * ch
    w = _recip_sqrt(ch * ch + sh * sh)
    return select(b, w * ch, _CSTAR + zero_like(ch)), select(b, w * sh, _SSTAR + zero_like(sh))


def _jacobi_conjugation(x, y, z, s, q):
    """One Jacobi rotation of the symmetric S = (s11, s21, s22, s31, s32, s33), with the
    cumulative rotation q (x, y, z, w); returns both, S re-arranged for the next one."""
    s11, s21, s22, s31, s32, s33 = s
    ch, sh = _approximate_givens_quaternion(s11, s21, s22)
    scale = ch * ch + sh * sh
    a = (ch * ch - sh * sh) / scale
    b = (2 * sh * ch) / scale
    n11 = a * (a * s11 + b * s21) + b * (a * s21 + b * s22)
    n21 = a * (-b * s11 + a * s21) + b * (-b * s21 + a * s22)
    n22 = -b * (-b * s11 + a * s21) + a * (-b * s21 + a * s22)
    n31 = a * s31 + b * s32
    n32 = -b * s31 + a * s32
    n33 = s33
    tmp = [q[0] * sh, q[1] * sh, q[2] * sh]
    sh = sh * q[3]
    q = [c * ch for c in q]
    q[z] = q[z] + sh
    q[3] = q[3] - tmp[z]
    q[x] = q[x] + tmp[y]
    q[y] = q[y] - tmp[x]
    return (n22, n32, n33, n21, n31, n11), q


def _jacobi_eigenanalysis(s):
    """Warp's jacobiEigenanlysis: the quaternion of V (and the rotated S)."""
    zero = zero_like(s[0])
    q = [zero, zero, zero, one_like(s[0])]
    for _ in range(_JACOBI_ITERATIONS[scalar_type_of(s[0])]):
        s, q = _jacobi_conjugation(0, 1, 2, s, q)
        s, q = _jacobi_conjugation(1, 2, 0, s, q)
        s, q = _jacobi_conjugation(2, 0, 1, s, q)
    return q


def _cond_swap(c, x, y):
    return select(c, y, x), select(c, x, y)


def _cond_neg_swap(c, x, y):
    return select(c, y, x), select(c, -x, y)


def _sort_singular_values(b, v):
    b, v = list(b), list(v)

    def dist2(column):
        return b[column] * b[column] + b[3 + column] * b[3 + column] + \
            b[6 + column] * b[6 + column]

    rho = [dist2(0), dist2(1), dist2(2)]
    for i, j in ((0, 1), (0, 2), (1, 2)):
        c = rho[i] < rho[j]
        for row in range(3):
            b[3 * row + i], b[3 * row + j] = _cond_neg_swap(c, b[3 * row + i], b[3 * row + j])
            v[3 * row + i], v[3 * row + j] = _cond_neg_swap(c, v[3 * row + i], v[3 * row + j])
        if (i, j) != (1, 2):
            rho[i], rho[j] = _cond_swap(c, rho[i], rho[j])
    return b, v


def _qr_givens_quaternion(a1, a2):
    epsilon = _SVD_EPSILON[scalar_type_of(a1)] + zero_like(a1)
    rho = sqrt(a1 * a1 + a2 * a2)
    sh = select(rho > epsilon, a2, zero_like(a2))
    ch = absolute(a1) + maximum(rho, epsilon)
    sh, ch = _cond_swap(a1 < zero_like(a1), sh, ch)
    w = _recip_sqrt(ch * ch + sh * sh)
    return ch * w, sh * w


def qr_decomposition(m):
    """Warp's QRDecomposition of a 3x3 matrix by three Givens rotations: (Q, R)."""
    b11, b12, b13, b21, b22, b23, b31, b32, b33 = m
    ch1, sh1 = _qr_givens_quaternion(b11, b21)
    a = 1 - 2 * sh1 * sh1
    b = 2 * ch1 * sh1
    r11, r12, r13 = a * b11 + b * b21, a * b12 + b * b22, a * b13 + b * b23
    r21, r22, r23 = -b * b11 + a * b21, -b * b12 + a * b22, -b * b13 + a * b23
    r31, r32, r33 = b31, b32, b33

    ch2, sh2 = _qr_givens_quaternion(r11, r31)
    a = 1 - 2 * sh2 * sh2
    b = 2 * ch2 * sh2
    b11, b12, b13 = a * r11 + b * r31, a * r12 + b * r32, a * r13 + b * r33
    b21, b22, b23 = r21, r22, r23
    b31, b32, b33 = -b * r11 + a * r31, -b * r12 + a * r32, -b * r13 + a * r33

    ch3, sh3 = _qr_givens_quaternion(b22, b32)
    a = 1 - 2 * sh3 * sh3
    b = 2 * ch3 * sh3
    r = [b11, b12, b13,
         a * b21 + b * b31, a * b22 + b * b32, a * b23 + b * b33,
         -b * b21 + a * b31, -b * b22 + a * b32, -b * b23 + a * b33]

    sh12, sh22, sh32 = sh1 * sh1, sh2 * sh2, sh3 * sh3
    q = [
        (-1 + 2 * sh12) * (-1 + 2 * sh22),
        4 * ch2 * ch3 * (-1 + 2 * sh12) * sh2 * sh3 + 2 * ch1 * sh1 * (-1 + 2 * sh32),
        4 * ch1 * ch3 * sh1 * sh3 - 2 * ch2 * (-1 + 2 * sh12) * sh2 * (-1 + 2 * sh32),
        2 * ch1 * sh1 * (1 - 2 * sh22),
        -8 * ch1 * ch2 * ch3 * sh1 * sh2 * sh3 + (-1 + 2 * sh12) * (-1 + 2 * sh32),
        -2 * ch3 * sh3 + 4 * sh1 * (ch3 * sh1 * sh3 + ch1 * ch2 * sh2 * (-1 + 2 * sh32)),
        2 * ch2 * sh2,
        2 * ch3 * (1 - 2 * sh22) * sh3,
        (-1 + 2 * sh22) * (-1 + 2 * sh32),
    ]
    return q, r


def svd3(a):
    """Warp's svd3: (U, sigma, V) with A = U diag(sigma) V^T, sigma sorted descending."""
    ata = _mult_atb(a, a)
    q = _jacobi_eigenanalysis((ata[0], ata[3], ata[4], ata[6], ata[7], ata[8]))
    v = _quat_to_mat3(q)
    b, v = _sort_singular_values(_mult_ab(a, v), v)
    u, s = qr_decomposition(b)
    return u, [s[0], s[4], s[8]], v


def svd2(a):
    """Warp's svd2 (closed form): (U, sigma, V) of a 2x2 matrix."""
    a11, a12, a21, a22 = a
    one, zero = one_like(a11), zero_like(a11)
    ata11 = a11 * a11 + a21 * a21
    ata12 = a11 * a12 + a21 * a22
    ata22 = a12 * a12 + a22 * a22
    trace = ata11 + ata22
    diff = ata11 - ata22
    discriminant = diff * diff + 4 * ata12 * ata12
    sqrt_term = sqrt(discriminant)
    lambda1 = (trace + sqrt_term) * 0.5
    lambda2 = (trace - sqrt_term) * 0.5
    inv_sigma1 = _recip_sqrt(lambda1)
    sigma1 = one / inv_sigma1
    sigma2 = sqrt(lambda2)
    v1y = diff - sqrt_term + 2 * ata12
    v1x = diff + sqrt_term - 2 * ata12
    len1_sq = v1x * v1x + v1y * v1y
    degenerate = len1_sq == zero
    inv_len1 = _recip_sqrt(len1_sq)
    v11 = select(degenerate, 0.707106781186547524401 + zero, v1x * inv_len1)
    v21 = select(degenerate, 0.707106781186547524401 + zero, v1y * inv_len1)
    v12, v22 = -v21, v11
    u11 = (a11 * v11 + a12 * v21) * inv_sigma1
    u21 = (a21 * v11 + a22 * v21) * inv_sigma1
    det_sign = sign(a11 * a22 - a12 * a21)
    u12, u22 = -u21 * det_sign, u11 * det_sign
    general = ([u11, u12, u21, u22], [sigma1, sigma2], [v11, v12, v21, v22])
    repeated = sqrt(0.5 * trace)
    duplicate = ([one, zero, zero, one], [repeated, repeated], [one, zero, zero, one])
    same = discriminant == zero
    return tuple([select(same, d, g) for d, g in zip(dup, gen)]
                 for dup, gen in zip(duplicate, general))


def eig3(a):
    """Warp's eig3 of a symmetric 3x3 matrix (its lower triangle is read): (Q, d) with the
    eigenvectors as Q's columns and d = diag(Q^T A Q)."""
    q = _quat_to_mat3(_jacobi_eigenanalysis((a[0], a[3], a[4], a[6], a[7], a[8])))
    u = _mult_ab(_mult_atb(q, a), q)
    return q, [u[0], u[4], u[8]]
