"""The hand-written adjoints: only where the derived one is wrong or differs from Warp.

Each is a formula ``adjoint(sig, *args, adj_ret) -> [adjoint per argument]`` over
component lists, like the derived ones, and follows Warp's own adjoint
(warp/native/vec.h, mat.h, builtin.h):

* ``normalize`` of a vector or quaternion: ``(g - r (r . g)) / |a|`` with ``r`` the
  result, and 0 where ``|a| = 0`` (the derived one divides 0 by 0 there: NaN);
* ``inverse`` / ``inverse_approx``: ``-A^-T g A^-T`` from the result (cheaper than the
  derived adjoint of the cofactor formulas, and 0 for a singular matrix, whose inverse
  Warp gives as 0);
* ``min`` / ``max`` of two scalars or two vectors (componentwise) and ``clamp``: Warp routes
  the adjoint of a tie to the second operand (``a < b ? a : b`` for min), and a NaN
  operand's to the other one; the formulas' selects would route a tie to the first.
  ``clamp(x, lo, hi)`` is Warp's ``min(max(lo, x), hi)`` with those rules;
* ``quat_to_axis_angle``: Warp's, zero for a quaternion without a vector part (the derived
  one is NaN there);
* ``eig3``: Warp's spectral formula (the derived adjoint of its Jacobi sweeps is NaN at
  repeated eigenvalues);
* ``closest_point_on_segment``, ``closest_point_edge_edge``, ``triangle_closest_point``,
  which native code computes: derived from formulas of the same algorithms
  (:mod:`numba_sim.autodiff.op_geometry`).
"""

from numba.core import types

from numba_sim import algebra
from numba_sim.autodiff.derivation import derive
from numba_sim.typing.value_types import ValueType


def _zero(x):
    return algebra.zero_like(x)


def _normalize(sig, a, g):
    length = algebra.length(a)
    positive = length > _zero(length)
    inv = algebra.div(algebra.one_like(length), length)
    result = [algebra.div(x, length) for x in a]
    projection = algebra.dot(result, g)
    return [[algebra.select(positive, gi * inv - ri * projection * inv, _zero(gi))
             for gi, ri in zip(g, result)]]


def _inverse(sig, m, g):
    n = sig.args[0].shape[0]
    inverse_t = algebra.transpose(algebra.inverse(m, n), n, n)
    product = algebra.mat_mat(algebra.mat_mat(inverse_t, g, n, n, n), inverse_t, n, n, n)
    return [algebra.neg(product)]


def _is_nan(x):
    return x != x


def _routes_to_first(smaller):
    """Warp's adj_min (smaller) / adj_max: whether the adjoint goes to the first operand."""
    def routes(a, b):
        wins = (a < b) if smaller else (a > b)
        return ~_is_nan(a) & (_is_nan(b) | wins)

    return routes


def _split_adjoint(to_first, g):
    zero = _zero(g)
    return algebra.select(to_first, g, zero), algebra.select(to_first, zero, g)


def _extremum(smaller):
    routes = _routes_to_first(smaller)

    def adjoint(sig, a, b, g):
        if isinstance(a, list):
            pairs = [_split_adjoint(routes(x, y), gi) for x, y, gi in zip(a, b, g)]
            return [[p[0] for p in pairs], [p[1] for p in pairs]]
        return list(_split_adjoint(routes(a, b), g))

    return adjoint


def _clamp(sig, x, low, high, g):
    """Warp's adj_clamp: m = max(low, x); adj_min(m, high); adj_max(low, x)."""
    m = algebra.maximum(low, x)
    adj_m, adj_high = _split_adjoint(_routes_to_first(True)(m, high), g)
    adj_low, adj_x = _split_adjoint(_routes_to_first(False)(low, x), adj_m)
    return [adj_x, adj_low, adj_high]


def _eig3(sig, a, g):
    """Warp's adj_eig3 (svd.h, after Giles 2008, p. 10): ``Q (D_bar + F o (Q^T adj_Q)) Q^T``
    with ``F_ij = 1 / (d_j - d_i)`` (differences nearer 0 than 1e-6 widened to 1e-6, as
    Warp), and ``Q D_bar Q^T`` alone when ``adj_Q`` is zero: a loss of the eigenvalues has
    its exact gradient at repeated eigenvalues too, where the derived adjoint of the
    Jacobi sweeps divides by zero."""
    q, d = algebra.eig3(a)
    adj_q, adj_d = g
    zero = _zero(d[0])
    qt = algebra.transpose(q, 3, 3)
    d_bar = algebra.diagonal_matrix(adj_d)

    def gap(x):
        small = 1.0e-6 + zero
        x = algebra.select((x < zero) & (x > -small), -small, x)
        return algebra.select((x > zero) & (x < small), small, x)

    f01, f02, f12 = (algebra.div(algebra.one_like(zero), gap(d[j] - d[i]))
                     for i, j in ((0, 1), (0, 2), (1, 2)))
    f = [zero, f01, f02, -f01, zero, f12, -f02, -f12, zero]
    inner = algebra.add(d_bar, algebra.cw_mul(f, algebra.mat_mat(qt, adj_q, 3, 3, 3)))
    values_only = algebra.all_of([x == zero for x in adj_q])
    return [[algebra.select(values_only, v, w) for v, w in zip(
        algebra.mat_mat(q, algebra.mat_mat(d_bar, qt, 3, 3, 3), 3, 3, 3),
        algebra.mat_mat(q, algebra.mat_mat(inner, qt, 3, 3, 3), 3, 3, 3))]]


def _quat_to_axis_angle(sig, q, g):
    """Warp's adj_quat_to_axis_angle (quat.h): the derivatives of the normalized (and, for
    w < 0, flipped) axis and of ``2 atan2(|v|, |w|)``, and zero for a quaternion whose
    vector part is zero (the derived adjoint divides by |v| there: NaN)."""
    (x, y, z, w), (adj_axis, adj_angle) = q, g
    zero = _zero(w)
    one = algebra.one_like(w)
    l = algebra.length([x, y, z])
    positive = l > zero
    flip = algebra.select(w < zero, -one, one)
    l_inv = algebra.div(one, l)
    c = flip * l_inv * l_inv * l_inv
    jacobian = [[c * (y * y + z * z), -c * x * y, -c * x * z],
                [-c * y * x, c * (x * x + z * z), -c * y * z],
                [-c * z * x, -c * z * y, c * (x * x + y * y)]]  # d axis_i / d q_j
    d = algebra.div(2.0 + zero, l * l + w * w) * flip
    angle = [d * l_inv * x * w, d * l_inv * y * w, d * l_inv * z * w, -d * l]
    adj_q = [sum((jacobian[i][j] * adj_axis[i] for i in range(1, 3)), jacobian[0][j] * adj_axis[0])
             + angle[j] * adj_angle for j in range(3)] + [angle[3] * adj_angle]
    return [[algebra.select(positive, a, zero) for a in adj_q]]


def _derived_from(formula):
    """The adjoint derived from *formula*, a formula of the builtin's own algorithm."""
    def adjoint(sig, *args_and_adjoint):
        return derive(sig, formula, args_and_adjoint[:-1], args_and_adjoint[-1])

    return adjoint


def _binary_forms(sig):
    """min / max: the two-operand forms (two scalars, two vectors), not the reductions."""
    return len(sig.args) == 2


def _table():
    import numba_sim as sim
    from numba_sim.autodiff import op_geometry

    def always(sig):
        return True

    return {
        **{getattr(sim, name): (always, _derived_from(getattr(op_geometry, name)))
           for name in ("closest_point_on_segment", "closest_point_edge_edge",
                        "triangle_closest_point")},
        sim.normalize: (lambda sig: True, _normalize),
        sim.eig3: (always, _eig3),
        sim.quat_to_axis_angle: (always, _quat_to_axis_angle),
        sim.inverse: (lambda sig: isinstance(sig.args[0], ValueType), _inverse),
        sim.inverse_approx: (lambda sig: isinstance(sig.args[0], ValueType), _inverse),
        sim.min: (_binary_forms, _extremum(True)),
        sim.max: (_binary_forms, _extremum(False)),
        sim.clamp: (lambda sig: isinstance(sig.args[0], (types.Float, types.Integer)), _clamp),
    }


_overrides = None


def overridden_keys():
    global _overrides
    if _overrides is None:
        _overrides = _table()
    return _overrides


def find(key, sig):
    """The hand-written adjoint of *key*'s variant for *sig*, or None (derive it)."""
    entry = overridden_keys().get(key)
    if entry is None or not entry[0](sig):
        return None
    return entry[1]
