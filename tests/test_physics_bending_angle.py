"""The bending edge's dihedral angle (physics/forces.py, issue 24): ``atan2``-based, the
angle of warp.sim's ``acos(cos) * sign(sin)`` formula in forward, with finite gradients
at a flat edge (where ``acos``'s derivative is infinite)."""

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.physics import forces


@sim.kernel
def _atan2_kernel(y: sim.array(dtype=float), x: sim.array(dtype=float),
                  out: sim.array(dtype=float)):
    i = sim.tid()
    out[i] = forces.atan2(y[i], x[i])


@sim.kernel
def _angle_kernel(x: sim.array(dtype=sim.vec3, ndim=2), new: sim.array(dtype=float),
                  old: sim.array(dtype=float)):
    i = sim.tid()
    x1, x2, x3, x4 = x[i, 0], x[i, 1], x[i, 2], x[i, 3]
    valid, angle, e_length, g1, g2, g3, g4 = forces.dihedral_angle(x1, x2, x3, x4)
    new[i] = angle
    # warp.sim 1.9.1's formula (eval_bending), the one forces.py had before
    n1 = sim.cross(x3 - x1, x4 - x1)
    n2 = sim.cross(x4 - x2, x3 - x2)
    cos_theta = sim.clamp(sim.dot(n1, n2) / (sim.length(n1) * sim.length(n2)), -1.0, 1.0)
    old[i] = forces.acos(cos_theta) * sim.sign(sim.dot(sim.cross(n2, n1), x4 - x3))


@sim.kernel
def _bending_loss(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3),
                  w: sim.array(dtype=sim.vec3), loss: sim.array(dtype=float)):
    f1, f2, f3, f4 = forces.bending_force(x[0], x[1], x[2], x[3], v[0], v[1], v[2], v[3],
                                          0.3, 2.0, 0.5)
    loss[0] = sim.dot(f1, w[0]) + sim.dot(f2, w[1]) + sim.dot(f3, w[2]) + sim.dot(f4, w[3])


def exact_angle(x):
    """float64 signed dihedral angles of edges ``x[:, 2]-x[:, 3]`` (wings ``x[:, 0:2]``)."""
    x = x.astype(np.float64)
    x1, x2, x3, x4 = x[:, 0], x[:, 1], x[:, 2], x[:, 3]
    n1 = np.cross(x3 - x1, x4 - x1)
    n2 = np.cross(x4 - x2, x3 - x2)
    e = (x4 - x3) / np.linalg.norm(x4 - x3, axis=1)[:, None]
    return np.arctan2(np.einsum("ij,ij->i", np.cross(n2, n1), e), np.einsum("ij,ij->i", n1, n2))


def edges(rng, count, fold):
    """*count* edges from (0, 0, 0) to (0, 0, 1) with random wings folded by ``fold`` (an
    array of angles): wing 1 at angle 0 about the edge, wing 2 at ``pi - fold``; then a
    random rotation and translation of each edge."""
    edge_t = rng.uniform(0.1, 0.9, (count, 2))
    r = rng.uniform(0.2, 2.0, (count, 2))
    x = np.zeros((count, 4, 3))
    x[:, 0] = np.stack([r[:, 0], np.zeros(count), edge_t[:, 0]], axis=1)
    phi = np.pi - fold
    x[:, 1] = np.stack([r[:, 1] * np.cos(phi), r[:, 1] * np.sin(phi), edge_t[:, 1]], axis=1)
    x[:, 3, 2] = 1.0
    q, _ = np.linalg.qr(rng.normal(size=(count, 3, 3)))
    return np.einsum("nij,nkj->nki", q, x) + rng.uniform(-3, 3, (count, 1, 3))


def test_inline_atan2_is_within_two_and_a_half_ulp_of_the_exact_value():
    """forces.atan2 against float64 atan2 on every quadrant, on the octant boundaries, at
    tiny and huge ratios, on the axes and at (0, 0)."""
    rng = np.random.default_rng(1)
    angle = np.concatenate([rng.uniform(-np.pi, np.pi, 200_000),
                            (np.arange(-8, 9) * (np.pi / 8)
                             + rng.uniform(-1e-4, 1e-4, (4000, 17))).ravel()])
    radius = 10.0 ** rng.uniform(-20, 20, angle.size)
    y = (radius * np.sin(angle)).astype(np.float32)
    x = (radius * np.cos(angle)).astype(np.float32)
    y = np.concatenate([y, np.float32([0, 0, 1, -1, 0, 3e-30, 1, -1e-30]), np.float32([1e-7])])
    x = np.concatenate([x, np.float32([0, 1, 0, 0, -1, 1, 1e30, -1]), np.float32([1])])
    out = np.empty_like(x)
    sim.launch(_atan2_kernel, len(x), [y, x, out])
    exact = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    # Cephes' atanf is within 2.3 ulp here (measured; the largest just above tan(pi/8))
    assert (np.abs(out - exact) / ulp).max() < 2.5
    assert out[-9] == 0.0 and out[-5] == np.float32(np.pi) and out[-1] == np.float32(1e-7)


def test_dihedral_angle_is_the_acos_formulas_angle():
    """Random and flat edges: the atan2 angle is the exact one within a few float32 ulp of
    the positions' rounding; the acos formula's is the same up to its rounding, which near a
    flat edge is the rounding of a cosine near 1 (k ulp of it: sqrt(2k * 2^-24) = 3.5e-4 k^0.5
    rad)."""
    rng = np.random.default_rng(7)
    count = 4000
    fold = np.concatenate([rng.uniform(-3.0, 3.0, count),                 # random
                           np.zeros(count // 4),                          # flat
                           rng.uniform(-1e-3, 1e-3, count // 4)])         # almost flat
    x = edges(rng, fold.size, fold).astype(np.float32)
    new = np.empty(fold.size, np.float32)
    old = np.empty(fold.size, np.float32)
    sim.launch(_angle_kernel, fold.size, [x, new, old])
    exact = exact_angle(x)         # of the float32 positions
    np.testing.assert_allclose(exact, fold, atol=1e-5)
    assert np.abs(new - exact).max() < 2e-6
    random = slice(0, count)
    assert np.abs(old - new)[random].max() < 1e-3
    # away from 0 and pi the acos formula is accurate too: the two agree to float32 rounding
    sin = np.abs(np.sin(fold))
    assert np.abs(old - new)[sin > 0.1].max() < 2e-6
    assert np.abs(old - new)[count:].max() < 1e-3     # acos of a cosine ~1 off by a few ulp
    assert np.abs(old - exact)[count:].max() > 10 * np.abs(new - exact)[count:].max()


def test_bending_force_gradient_at_a_flat_edge_is_finite_and_right():
    """d(loss)/dx and d(loss)/dv of a flat, in-plane deformed, moving bending edge (rest
    angle 0.3, damped) under a Tape against central differences.  The acos angle's
    out-of-plane gradients were wrong here (finite: off by up to 4.4 of at most 5.2),
    its derivative infinite at cos = 1 times a zero or rounded one."""
    x = np.array([[0.5, 0.1, 0.0], [-0.6, 0.4, 0.0], [0.0, 0.0, 0.0], [0.05, 1.1, 0.0]],
                 np.float32)
    v = np.array([[0.1, 0.0, 0.3], [0.0, 0.2, -0.1], [0.1, 0.1, 0.0], [0.0, 0.0, 0.2]],
                 np.float32)
    w = np.array([[0.3, -0.2, 1.0], [0.5, 0.1, -0.7], [-0.4, 0.6, 0.2], [0.2, 0.9, -0.5]],
                 np.float32)
    xs, vs = sim.array(x, requires_grad=True), sim.array(v, requires_grad=True)
    loss = sim.zeros(1, dtype=np.float32, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(_bending_loss, 1, [xs, vs, w, loss])
    tape.backward(loss=loss)
    grads = {"x": np.array(sim.grad(xs)), "v": np.array(sim.grad(vs))}
    assert all(np.isfinite(g).all() for g in grads.values())

    def value(a, b):
        out = np.zeros(1, np.float32)
        sim.launch(_bending_loss, 1, [a, b, w, out])
        return float(out[0])

    h = 1e-3
    for name, base in (("x", x), ("v", v)):
        numeric = np.zeros((4, 3))
        for idx in np.ndindex(4, 3):
            hi, lo = base.copy(), base.copy()
            hi[idx] += h
            lo[idx] -= h
            args_hi = (hi, v) if name == "x" else (x, hi)
            args_lo = (lo, v) if name == "x" else (x, lo)
            numeric[idx] = (value(*args_hi) - value(*args_lo)) / (2 * h)
        assert np.abs(numeric[:, 2]).max() > 0.1      # out of plane: where acos failed
        np.testing.assert_allclose(grads[name], numeric, atol=2e-3 * np.abs(numeric).max(),
                                   err_msg=name)


def test_atan2_of_nonfloat_arguments_is_a_clear_error():
    @sim.kernel
    def bad(out: sim.array(dtype=float)):
        out[0] = forces.atan2(sim.vec3(), 1.0)

    # the typing error names the line of forces.atan2 and the operands
    with pytest.raises(Exception, match=r"in atan2\n(.|\n)*max\(float32, vec3\)"):
        sim.launch(bad, 1, [np.zeros(1, np.float32)])
