"""The geometry builtins that native code computes (cuda_src/geometry.h), as formulas for
their adjoints.

``closest_point_on_segment``, ``closest_point_edge_edge`` and ``triangle_closest_point``
run Warp's algorithms in cuda_src (one definition for the host library and the device),
which a trace cannot see into.  Their adjoints are derived (:func:`op_derived.derive`) from
the formulas below: the same algorithms, operation for operation, with each ``if`` of the
C++ a real branch (:func:`numba_sim.algebra.branch`), so that only the region the point
falls in is differentiated (a select would differentiate the other regions' divisions
too, 0 / 0 where they degenerate).  ``intersect_tri_tri`` is an int32 result: its
adjoint is zero without a formula.
"""

from numba_sim import algebra


def _sub(a, b):
    return algebra.sub(a, b)


def _clamp01(x):
    """Warp's clamp(x, 0, 1): ``m = x > 0 ? x : 0; m < 1 ? m : 1``."""
    zero, one = algebra.zero_like(x), algebra.one_like(x)
    m = algebra.select(x > zero, x, zero)
    return algebra.select(m < one, m, one)


def closest_point_on_segment(sig, a, b, p):
    ab = _sub(b, a)
    denom = algebra.dot(ab, ab)

    def on_segment():
        t = _clamp01(algebra.div(algebra.dot(_sub(p, a), ab), denom))
        return algebra.add(a, algebra.scale(ab, t))

    return algebra.branch(denom <= algebra.zero_like(denom), lambda: list(a), on_segment)


def _diff_product(a, b, c, d):
    """Warp's diff_product: a * b - c * d with Kahan's compensation (two fmas)."""
    cd = c * d
    return algebra.muladd(a, b, -cd) + algebra.muladd(-c, d, cd)


def closest_point_edge_edge(sig, p1, q1, p2, q2, epsilon):
    d1, d2, r = _sub(q1, p1), _sub(q2, p2), _sub(p1, p2)
    a, e, f = algebra.dot(d1, d1), algebra.dot(d2, d2), algebra.dot(d2, r)
    zero, one = algebra.zero_like(a), algebra.one_like(a)
    degenerate1, degenerate2 = a <= epsilon, e <= epsilon

    def general():
        c, b = algebra.dot(d1, r), algebra.dot(d1, d2)
        denom = _diff_product(a, e, b, b)
        s_init = algebra.branch(denom > zero,
                                lambda: [_clamp01(algebra.div(_diff_product(b, f, c, e), denom))],
                                lambda: [zero])[0]
        t_init = algebra.div(b * s_init + f, e)
        return algebra.branch(
            t_init < zero, lambda: [_clamp01(algebra.div(-c, a)), zero],
            lambda: algebra.branch(t_init > one,
                                   lambda: [_clamp01(algebra.div(b - c, a)), one],
                                   lambda: [s_init, t_init]))

    def not_both():
        return algebra.branch(
            degenerate1, lambda: [zero, _clamp01(algebra.div(f, e))],
            lambda: algebra.branch(
                degenerate2, lambda: [_clamp01(algebra.div(-algebra.dot(d1, r), a)), zero],
                general))

    s, t = algebra.branch(degenerate1 & degenerate2, lambda: [zero, zero], not_both)
    c1 = algebra.add(p1, algebra.scale(d1, s))
    c2 = algebra.add(p2, algebra.scale(d2, t))
    return [s, t, algebra.length(_sub(c2, c1))]


def triangle_closest_point(sig, a, b, c, p):
    """Ericson's Voronoi-region test (u exactly 0 on edge bc: the builtin's form)."""
    ab, ac, ap = _sub(b, a), _sub(c, a), _sub(p, a)
    d1, d2 = algebra.dot(ab, ap), algebra.dot(ac, ap)
    zero, one = algebra.zero_like(d1), algebra.one_like(d1)

    def weights(v, w):
        return [one - v - w, v]

    def past_a():
        bp = _sub(p, b)
        d3, d4 = algebra.dot(ab, bp), algebra.dot(ac, bp)

        def past_b():
            vc = d1 * d4 - d3 * d2

            def past_ab():
                cp = _sub(p, c)
                d5, d6 = algebra.dot(ab, cp), algebra.dot(ac, cp)

                def past_c():
                    vb = d5 * d2 - d1 * d6

                    def past_ac():
                        va = d3 * d6 - d5 * d4

                        def inside():
                            denom = algebra.div(one, va + vb + vc)
                            return weights(vb * denom, vc * denom)

                        def on_bc():
                            w = algebra.div(d4 - d3, (d4 - d3) + (d5 - d6))
                            return [zero, one - w]

                        return algebra.branch(
                            (va <= zero) & (d4 - d3 >= zero) & (d5 - d6 >= zero), on_bc, inside)

                    return algebra.branch(
                        (vb <= zero) & (d2 >= zero) & (d6 <= zero),
                        lambda: weights(zero, algebra.div(d2, d2 - d6)), past_ac)

                return algebra.branch((d6 >= zero) & (d5 <= d6),
                                      lambda: weights(zero, one), past_c)

            return algebra.branch((vc <= zero) & (d1 >= zero) & (d3 <= zero),
                                  lambda: weights(algebra.div(d1, d1 - d3), zero), past_ab)

        return algebra.branch((d3 >= zero) & (d4 <= d3), lambda: weights(one, zero), past_b)

    return algebra.branch((d1 <= zero) & (d2 <= zero), lambda: weights(zero, zero), past_a)
