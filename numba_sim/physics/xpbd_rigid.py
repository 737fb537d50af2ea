"""Rigid bodies, joints and rigid contacts of ``SolverXPBD``: Müller, Macklin,
Chentanez, Jeschke, Kim 2020, "Detailed rigid body simulation with extended
position based dynamics" (Algorithm 2), one substep per ``step``.

1. Record each contact's normal velocity before the step (restitution needs it).
2. Predict: ``v += h (f / m + g)``, ``w += h I^-1 (tau - w x I w)``, ``x += h v``,
   ``q += h/2 [w, 0] q`` (normalized), for bodies of positive mass.
3. ``iterations`` passes, Gauss-Seidel: joints (angular part first, then the
   positional part), then contacts.  Every correction is the paper's: for a
   positional violation ``c n`` between points at ``r1``, ``r2`` from the centres,
   ``w_i = 1/m_i + (r_i x n)^T I_i^-1 (r_i x n)`` (world ``I^-1``),
   ``dlambda = -c / (w_1 + w_2)``, ``p = dlambda n``, ``x_1 += p / m_1``,
   ``q_1 += 1/2 [I_1^-1 (r_1 x p), 0] q_1`` and the opposite on body 2; an angular
   violation ``theta n`` likewise with ``w_i = n^T I_i^-1 n``.  Joints and contacts
   are hard (zero compliance); a revolute or prismatic joint's PD drive
   (``target_ke/kd`` towards ``control.joint_target_q/qd``) is a compliant constraint
   solved after its joint (``solve_drive``).
4. Velocities from positions: ``v = (x - x_prev) / h``, ``w = 2 vec(q q_prev^-1) / h``
   (as ``v* + (x - x*) / h``, without float32 cancellation).
5. Velocity pass over contacts that pushed: dynamic friction, an impulse against the
   tangential velocity of at most ``mu lambda_n / h`` (``h mu f_n`` with ``f_n =
   lambda_n / h^2``: the paper writes this cap on the velocity change itself; as an
   impulse it is Coulomb's law), then restitution of the normal velocity to
   ``max(-e v_n_before, 0)`` (``e = 0`` when ``|v_n| <= 2 |g| h``).

Violation directions: ``corr = a_1 - a_2`` (``a`` the attachment points) and, for
angles, the rotation that takes body 2's joint frame onto body 1's (``2 vec(q_1
q_2^-1)`` for a weld, ``a_2 x a_1`` for hinge axes).  Body index -1 is the static
world.  The kernel runs on one thread (the paper's serial Gauss-Seidel): a model's
bodies, joints and contacts in one launch per substep.
"""

import numba_sim as sim
from numba_sim.physics.builder_rigid import BALL, D6, DISTANCE, FIXED, PRISMATIC, REVOLUTE
from numba_sim.physics.rigid_kernels import (
    FLOATS, INTS, MAT33, SPATIAL, TRANSFORMS, VEC3, angular_acceleration, body_point,
    integrate_rotation, point_velocity, world_inverse_inertia,
)

QUATS = sim.array(dtype=sim.quat)


VELOCITY_SWEEPS = 4
"""sweeps over the contacts' normal velocities (friction in the first only)"""


@sim.func
def inverse_inertia_of(b: int, qs: QUATS, inv_inertia: MAT33):
    I = sim.mat33()
    if b >= 0:
        I = world_inverse_inertia(qs[b], inv_inertia[b])
    return I


@sim.func
def inverse_mass_of(b: int, inv_mass: FLOATS):
    m = 0.0
    if b >= 0:
        m = inv_mass[b]
    return m


@sim.func
def positional_inverse_mass(b1: int, b2: int, r1: sim.vec3, r2: sim.vec3, n: sim.vec3,
                            qs: QUATS, inv_mass: FLOATS, inv_inertia: MAT33):
    """The paper's generalized inverse mass of a positional correction along *n* at the
    offsets *r1*, *r2*: ``w_1 + w_2``, ``w_i = 1/m_i + (r_i x n)^T I_i^-1 (r_i x n)``."""
    I1 = inverse_inertia_of(b1, qs, inv_inertia)
    I2 = inverse_inertia_of(b2, qs, inv_inertia)
    rn1 = sim.cross(r1, n)
    rn2 = sim.cross(r2, n)
    return inverse_mass_of(b1, inv_mass) + sim.dot(rn1, I1 * rn1) + \
        inverse_mass_of(b2, inv_mass) + sim.dot(rn2, I2 * rn2)


@sim.func
def apply_positional(b1: int, b2: int, r1: sim.vec3, r2: sim.vec3, corr: sim.vec3, xs: VEC3,
                     qs: QUATS, inv_mass: FLOATS, inv_inertia: MAT33):
    """Close the violation ``corr = a_1 - a_2``; returns dlambda (<= 0)."""
    dlam = 0.0
    c = sim.length(corr)
    if c > 0.0:
        n = corr / c
        I1 = inverse_inertia_of(b1, qs, inv_inertia)
        I2 = inverse_inertia_of(b2, qs, inv_inertia)
        m1 = inverse_mass_of(b1, inv_mass)
        m2 = inverse_mass_of(b2, inv_mass)
        w = positional_inverse_mass(b1, b2, r1, r2, n, qs, inv_mass, inv_inertia)
        if w > 0.0:
            dlam = -c / w
            p = n * dlam
            if b1 >= 0:
                xs[b1] = xs[b1] + p * m1
                qs[b1] = integrate_rotation(qs[b1], I1 * sim.cross(r1, p), 1.0)
            if b2 >= 0:
                xs[b2] = xs[b2] - p * m2
                qs[b2] = integrate_rotation(qs[b2], I2 * sim.cross(r2, p), -1.0)
    return dlam


@sim.func
def solving_point(b: int, point: sim.vec3, xs: VEC3, qs: QUATS, com: VEC3):
    """(world position of *point* of body *b*'s frame at the solver's current pose, its
    offset from the centre of mass); body -1 (static): *point* is world."""
    p = point
    r = sim.vec3()
    if b >= 0:
        r = sim.quat_rotate(qs[b], point - com[b])
        p = xs[b] + r
    return p, r


@sim.func
def point_response(b: int, r: sim.vec3, I: sim.mat33, inv_mass: FLOATS):
    """How a point at offset *r* of body *b* moves per unit impulse: 1/m + [r]^T I^-1 [r]."""
    K = sim.mat33()
    if b >= 0:
        S = sim.skew(r)
        K = sim.identity(n=3, dtype=float) * inv_mass[b] + sim.transpose(S) * I * S
    return K


@sim.func
def apply_point(b1: int, b2: int, r1: sim.vec3, r2: sim.vec3, corr: sim.vec3, xs: VEC3,
                qs: QUATS, inv_mass: FLOATS, inv_inertia: MAT33):
    """Close the 3-D violation ``corr = a_1 - a_2`` of a joint's attachment points at
    once: the impulse solves ``(K_1 + K_2) p = -corr`` (the scalar form along
    ``corr / |corr|`` leaves a sideways error whenever ``K`` is anisotropic)."""
    if sim.length(corr) > 0.0:
        I1 = inverse_inertia_of(b1, qs, inv_inertia)
        I2 = inverse_inertia_of(b2, qs, inv_inertia)
        K = point_response(b1, r1, I1, inv_mass) + point_response(b2, r2, I2, inv_mass)
        if sim.determinant(K) > 0.0:
            p = -(sim.inverse(K) * corr)
            if b1 >= 0:
                xs[b1] = xs[b1] + p * inv_mass[b1]
                qs[b1] = integrate_rotation(qs[b1], I1 * sim.cross(r1, p), 1.0)
            if b2 >= 0:
                xs[b2] = xs[b2] - p * inv_mass[b2]
                qs[b2] = integrate_rotation(qs[b2], I2 * sim.cross(r2, p), -1.0)


@sim.func
def apply_angular(b1: int, b2: int, dphi: sim.vec3, qs: QUATS, inv_inertia: MAT33):
    """Close the rotation ``dphi`` that takes body 2's frame onto body 1's: the angular
    impulse solves ``(I_1^-1 + I_2^-1) p = -dphi``."""
    if sim.length(dphi) > 0.0:
        I1 = inverse_inertia_of(b1, qs, inv_inertia)
        I2 = inverse_inertia_of(b2, qs, inv_inertia)
        K = I1 + I2
        if sim.determinant(K) > 0.0:
            p = -(sim.inverse(K) * dphi)
            if b1 >= 0:
                qs[b1] = integrate_rotation(qs[b1], I1 * p, 1.0)
            if b2 >= 0:
                qs[b2] = integrate_rotation(qs[b2], I2 * p, -1.0)


@sim.func
def is_dynamic(b: int, inv_mass: FLOATS):
    return b >= 0 and inv_mass[b] > 0.0


@sim.func
def pivot_inverse_inertia(b: int, other: int, a: sim.vec3, xs: VEC3, qs: QUATS,
                          inv_mass: FLOATS, inertia: MAT33):
    """Body *b*'s inverse inertia for a rotation that ``apply_angular_about`` makes (world
    axes): about the world point *a* when the *other* body cannot move (the joint point
    stays), about its own centre of mass when both can (momentum is kept: turning two free
    bodies about the joint point would push their centre of mass); zero for the world and
    static bodies."""
    I = sim.mat33()
    if is_dynamic(b, inv_mass):
        R = sim.quat_to_matrix(qs[b])
        J = R * inertia[b] * sim.transpose(R)
        if not is_dynamic(other, inv_mass):
            S = sim.skew(a - xs[b])
            J = J + sim.transpose(S) * S * (1.0 / inv_mass[b])
        if sim.determinant(J) > 0.0:
            I = sim.inverse(J)
    return I


@sim.func
def angular_inverse_mass_about(b1: int, b2: int, n: sim.vec3, a: sim.vec3, xs: VEC3,
                               qs: QUATS, inv_mass: FLOATS, inertia: MAT33):
    """The generalized inverse mass of a rotation about the unit axis *n* as
    ``apply_angular_about`` makes it: ``1 / (n^T K^-1 n)``, ``K`` the sum of the bodies'
    inverse inertias (``pivot_inverse_inertia``; 0 when neither body can turn)."""
    K = pivot_inverse_inertia(b1, b2, a, xs, qs, inv_mass, inertia) + \
        pivot_inverse_inertia(b2, b1, a, xs, qs, inv_mass, inertia)
    w = 0.0
    if sim.determinant(K) > 0.0:
        w = 1.0 / sim.dot(n, sim.inverse(K) * n)
    return w


@sim.func
def apply_angular_about(b1: int, b2: int, dphi: sim.vec3, a: sim.vec3, xs: VEC3, qs: QUATS,
                        inv_mass: FLOATS, inertia: MAT33):
    """Close the rotation *dphi* (as ``apply_angular``).  Against a static body the moving
    one turns about the joint point *a* with its inertia about *a*, so that a joint limit's
    or drive's correction leaves the joint's point constraint as it was; two moving bodies
    turn about their centres of mass (linear and angular momentum kept; the point
    constraint's next pass closes what the turn opened)."""
    if sim.length(dphi) > 0.0:
        I1 = pivot_inverse_inertia(b1, b2, a, xs, qs, inv_mass, inertia)
        I2 = pivot_inverse_inertia(b2, b1, a, xs, qs, inv_mass, inertia)
        K = I1 + I2
        if sim.determinant(K) > 0.0:
            p = -(sim.inverse(K) * dphi)
            pivot = not (is_dynamic(b1, inv_mass) and is_dynamic(b2, inv_mass))
            if b1 >= 0:
                w1 = I1 * p
                if pivot:
                    xs[b1] = xs[b1] + sim.cross(w1, xs[b1] - a)
                qs[b1] = integrate_rotation(qs[b1], w1, 1.0)
            if b2 >= 0:
                w2 = -(I2 * p)
                if pivot:
                    xs[b2] = xs[b2] + sim.cross(w2, xs[b2] - a)
                qs[b2] = integrate_rotation(qs[b2], w2, 1.0)


@sim.func
def apply_velocity_change(b1: int, b2: int, r1: sim.vec3, r2: sim.vec3, dv: sim.vec3,
                          qs: QUATS, qd: SPATIAL, inv_mass: FLOATS, inv_inertia: MAT33):
    """Change the relative velocity (body 2 against body 1) at the contact by *dv*."""
    c = sim.length(dv)
    if c > 0.0:
        n = dv / c
        I1 = inverse_inertia_of(b1, qs, inv_inertia)
        I2 = inverse_inertia_of(b2, qs, inv_inertia)
        m1 = inverse_mass_of(b1, inv_mass)
        m2 = inverse_mass_of(b2, inv_mass)
        rn1 = sim.cross(r1, n)
        rn2 = sim.cross(r2, n)
        w = m1 + sim.dot(rn1, I1 * rn1) + m2 + sim.dot(rn2, I2 * rn2)
        if w > 0.0:
            p = n * (c / w)
            if b1 >= 0:
                v1 = qd[b1]
                qd[b1] = sim.spatial_vector(sim.spatial_top(v1) - p * m1,
                                            sim.spatial_bottom(v1) - I1 * sim.cross(r1, p))
            if b2 >= 0:
                v2 = qd[b2]
                qd[b2] = sim.spatial_vector(sim.spatial_top(v2) + p * m2,
                                            sim.spatial_bottom(v2) + I2 * sim.cross(r2, p))


@sim.func
def joint_frame(b: int, X: sim.transform, xs: VEC3, qs: QUATS, com: VEC3):
    """(world rotation of the joint frame, its world origin, the origin's offset from
    the body's centre of mass) for body *b* (-1: the world)."""
    q = sim.transform_get_rotation(X)
    a = sim.transform_get_translation(X)
    r = sim.vec3()
    if b >= 0:
        qb = qs[b]
        q = qb * q
        r = sim.quat_rotate(qb, a - com[b])
        a = xs[b] + r
    return q, a, r


@sim.func
def hinge_angle(q1: sim.quat, q2: sim.quat, axis: sim.vec3):
    """The child's rotation about the hinge axis (joint frame) relative to the parent."""
    ref = sim.vec3(1.0, 0.0, 0.0)
    if sim.abs(axis[0]) > 0.9:
        ref = sim.vec3(0.0, 1.0, 0.0)
    ref = sim.normalize(ref - axis * sim.dot(ref, axis))
    a1 = sim.quat_rotate(q1, axis)
    b1 = sim.quat_rotate(q1, ref)
    b2 = sim.quat_rotate(q2, ref)
    return sim.atan2(sim.dot(sim.cross(b1, b2), a1), sim.dot(b1, b2))


@sim.func
def joint_coordinate(jtype: int, parent: int, child: int, X_p: sim.transform,
                     X_c: sim.transform, axis: sim.vec3, xs: VEC3, qs: QUATS, com: VEC3):
    """A revolute joint's angle or a prismatic joint's slide (0 for other types)."""
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    c = 0.0
    if jtype == REVOLUTE:
        c = hinge_angle(q1, q2, axis)
    elif jtype == PRISMATIC:
        c = sim.dot(a2 - a1, sim.quat_rotate(q1, axis))
    return c


@sim.func
def add_joint_force(jtype: int, parent: int, child: int, X_p: sim.transform, axis: sim.vec3,
                    f: float, qs: QUATS, wrench: SPATIAL):
    """A hinge's torque *f* about its axis (a slider's force along it) on the child, the
    opposite on the parent (at the centres of mass)."""
    if f != 0.0:
        q = sim.transform_get_rotation(X_p)
        if parent >= 0:
            q = qs[parent] * q
        a = sim.quat_rotate(q, axis) * f
        w = sim.spatial_vector(a, sim.vec3())
        if jtype == REVOLUTE:
            w = sim.spatial_vector(sim.vec3(), a)
        wrench[child] = wrench[child] + w
        if parent >= 0:
            wrench[parent] = wrench[parent] - w


@sim.func
def solve_drive(jtype: int, parent: int, child: int, X_p: sim.transform, X_c: sim.transform,
                axis: sim.vec3, lower: float, upper: float, target: float,
                target_velocity: float, ke: float, kd: float, start: float, lam: float,
                dt: float, xs: VEC3, qs: QUATS, com: VEC3, inv_mass: FLOATS, inertia: MAT33,
                inv_inertia: MAT33):
    """Pull a revolute or prismatic joint's coordinate towards *target* (stiffness *ke*)
    and its rate towards *target_velocity* (damping *kd*): XPBD's compliant constraint
    ``C = coordinate - target`` with compliance ``1 / ke`` and damping ``kd`` (Macklin et
    al. 2016, eq. 26), multiplied through by ``ke h^2`` so that ``ke = 0`` leaves a pure
    damper: ``dlambda = -(ke h^2 C + kd h dC + lambda) / (1 + w (ke h^2 + kd h))``, ``dC``
    the coordinate's change in this substep less ``h target_velocity``.  The coordinate
    moves by ``w dlambda``, as an implicit PD drive would, but not past the joint's
    limits.  Returns the new lambda.

    It runs after the joint's own constraints: a revolute drive turns the bodies about
    the joint point, which leaves the point constraint as it is, and it sees what the
    point constraint turned (gravity's torque arrives that way).  Run before them, one
    iteration would hold a weight ``1 + h kd / I`` too far from the target."""
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    n = sim.quat_rotate(q1, axis)
    w = 0.0
    c = 0.0
    if jtype == REVOLUTE:
        c = hinge_angle(q1, q2, axis)
        w = angular_inverse_mass_about(parent, child, n, a2, xs, qs, inv_mass, inertia)
    else:
        c = sim.dot(a2 - a1, n)
        r1 = r1 + n * c                        # the parent's point where the child's is
        w = positional_inverse_mass(parent, child, r1, r2, n, qs, inv_mass, inv_inertia)
    if w > 0.0:
        h2 = ke * dt * dt
        hd = kd * dt
        dlam = -(h2 * (c - target) + hd * (c - start - dt * target_velocity) + lam) / \
            (1.0 + w * (h2 + hd))
        move = sim.clamp(c + w * dlam, lower, upper) - c
        lam = lam + move / w
        if jtype == REVOLUTE:
            apply_angular_about(parent, child, n * move, a2, xs, qs, inv_mass, inertia)
        else:
            apply_positional(parent, child, r1, r2, n * move, xs, qs, inv_mass, inv_inertia)
    return lam


@sim.func
def solve_hinge(parent: int, child: int, X_p: sim.transform, X_c: sim.transform,
                axis: sim.vec3, lower: float, upper: float, xs: VEC3, qs: QUATS, com: VEC3,
                inv_mass: FLOATS, inertia: MAT33, inv_inertia: MAT33):
    """A hinge's angular part: the child's axis onto the parent's, then its limits (turning
    the bodies about the joint point)."""
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    apply_angular(parent, child,
                  sim.cross(sim.quat_rotate(q2, axis), sim.quat_rotate(q1, axis)), qs,
                  inv_inertia)
    if lower > -1.0e30 or upper < 1.0e30:
        q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
        q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
        angle = hinge_angle(q1, q2, axis)
        target = sim.clamp(angle, lower, upper)
        if target != angle:
            apply_angular_about(parent, child, sim.quat_rotate(q1, axis) * (target - angle),
                                a2, xs, qs, inv_mass, inertia)


@sim.func
def solve_weld(parent: int, child: int, X_p: sim.transform, X_c: sim.transform, xs: VEC3,
               qs: QUATS, com: VEC3, inv_inertia: MAT33):
    """A weld's angular part: the child's joint frame onto the parent's."""
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    dq = q1 * sim.quat_inverse(q2)
    dphi = sim.vec3(dq[0], dq[1], dq[2]) * 2.0
    if dq[3] < 0.0:
        dphi = -dphi
    apply_angular(parent, child, dphi, qs, inv_inertia)


@sim.func
def solve_d6(parent: int, child: int, X_p: sim.transform, X_c: sim.transform, d: int,
             n_lin: int, n_ang: int, axes: VEC3, lower: FLOATS, upper: FLOATS, xs: VEC3,
             qs: QUATS, com: VEC3, inv_mass: FLOATS, inertia: MAT33, inv_inertia: MAT33):
    """A D6 joint: no angular axis a weld, one a hinge (with its limits), two a universal
    joint (the parent's first axis kept perpendicular to the child's second), three a
    ball; then the attachment points, free (within their limits) along the linear axes."""
    if n_ang == 0:
        solve_weld(parent, child, X_p, X_c, xs, qs, com, inv_inertia)
    elif n_ang == 1:
        solve_hinge(parent, child, X_p, X_c, axes[d + n_lin], lower[d + n_lin],
                    upper[d + n_lin], xs, qs, com, inv_mass, inertia, inv_inertia)
    elif n_ang == 2:
        q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
        q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
        u = sim.quat_rotate(q1, axes[d + n_lin])
        v = sim.quat_rotate(q2, axes[d + n_lin + 1])
        # turning the child about u x v by dot(u, v) / |u x v| makes them perpendicular
        n = sim.cross(u, v)
        s = sim.length(n)
        if s > 1.0e-6:
            apply_angular(parent, child, n * (sim.dot(u, v) / (s * s)), qs, inv_inertia)
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    corr = a1 - a2
    for i in range(n_lin):
        axis_w = sim.quat_rotate(q1, axes[d + i])
        slide = sim.clamp(-sim.dot(corr, axis_w), lower[d + i], upper[d + i])
        r1 = r1 + axis_w * slide
        corr = corr + axis_w * slide
    apply_point(parent, child, r1, r2, corr, xs, qs, inv_mass, inv_inertia)


@sim.func
def solve_distance(parent: int, child: int, X_p: sim.transform, X_c: sim.transform,
                   lower: float, upper: float, xs: VEC3, qs: QUATS, com: VEC3,
                   inv_mass: FLOATS, inv_inertia: MAT33):
    """A distance joint: the joint points' distance into [lower, upper]."""
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    gap = a1 - a2
    length = sim.length(gap)
    if length > 0.0:
        target = sim.clamp(length, lower, upper)
        if target != length:
            apply_positional(parent, child, r1, r2, gap * ((length - target) / length), xs,
                             qs, inv_mass, inv_inertia)


@sim.func
def solve_joint(jtype: int, parent: int, child: int, X_p: sim.transform, X_c: sim.transform,
                axis: sim.vec3, lower: float, upper: float, xs: VEC3, qs: QUATS, com: VEC3,
                inv_mass: FLOATS, inertia: MAT33, inv_inertia: MAT33):
    # angular part
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    if jtype == FIXED or jtype == PRISMATIC:
        solve_weld(parent, child, X_p, X_c, xs, qs, com, inv_inertia)
    elif jtype == REVOLUTE:
        solve_hinge(parent, child, X_p, X_c, axis, lower, upper, xs, qs, com, inv_mass,
                    inertia, inv_inertia)
    # positional part
    if jtype == FIXED or jtype == PRISMATIC or jtype == REVOLUTE or jtype == BALL:
        q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
        q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
        corr = a1 - a2
        if jtype == PRISMATIC:
            axis_w = sim.quat_rotate(q1, axis)
            slide = sim.clamp(-sim.dot(corr, axis_w), lower, upper)
            r1 = r1 + axis_w * slide
            corr = corr + axis_w * slide
        apply_point(parent, child, r1, r2, corr, xs, qs, inv_mass, inv_inertia)


@sim.struct
class RigidModel:
    """A model's constant body, joint and shape arrays for the XPBD kernel (one struct
    binds faster than 18 arguments; and a CPU launcher cannot call a kernel body of 30 or
    more parameters at present: CPython passes such a call as ``*args``, which Numba's
    inliner rejects)."""

    body_count: int
    com: VEC3
    inv_mass: FLOATS
    inertia: MAT33
    inv_inertia: MAT33
    joint_count: int
    joint_type: INTS
    joint_parent: INTS
    joint_child: INTS
    joint_X_p: TRANSFORMS
    joint_X_c: TRANSFORMS
    joint_axis: VEC3
    joint_qd_start: INTS
    joint_linear_dofs: INTS
    joint_lower: FLOATS
    joint_upper: FLOATS
    joint_target_ke: FLOATS
    joint_target_kd: FLOATS
    shape_body: INTS
    shape_mu: FLOATS
    shape_restitution: FLOATS


@sim.struct
class RigidContacts:
    """A ``Contacts``' rigid contacts, with the solver's per-contact scratch."""

    count: INTS
    shape0: INTS
    shape1: INTS
    point0: VEC3
    point1: VEC3
    normal: VEC3
    thickness0: FLOATS
    thickness1: FLOATS
    lambda_n: FLOATS
    vn: FLOATS


@sim.struct
class RigidScratch:
    """Centre-of-mass positions and rotations while solving, and their predictions; per
    dof, a drive's multiplier and its joint's coordinate at the start of the substep; per
    body, the external force and torque of the substep (``body_f`` plus joint forces)."""

    xs: VEC3
    qs: QUATS
    x_pred: VEC3
    q_pred: QUATS
    drive_lambda: FLOATS
    drive_start: FLOATS
    wrench: SPATIAL


@sim.kernel
def xpbd_rigid_substep_kernel(
        body_q: TRANSFORMS, body_qd: SPATIAL, body_f: SPATIAL, model: RigidModel,
        contacts: RigidContacts, scratch: RigidScratch, target_q: FLOATS, target_qd: FLOATS,
        joint_f: FLOATS, gravity: sim.vec3, angular_damping: float, iterations: int, dt: float,
        body_q_out: TRANSFORMS, body_qd_out: SPATIAL):
    body_count = model.body_count
    com = model.com
    inv_mass = model.inv_mass
    inertia = model.inertia
    inv_inertia = model.inv_inertia
    joint_count = model.joint_count
    joint_type = model.joint_type
    joint_parent = model.joint_parent
    joint_child = model.joint_child
    joint_X_p = model.joint_X_p
    joint_X_c = model.joint_X_c
    joint_axis = model.joint_axis
    joint_qd_start = model.joint_qd_start
    joint_linear_dofs = model.joint_linear_dofs
    joint_lower = model.joint_lower
    joint_upper = model.joint_upper
    joint_target_ke = model.joint_target_ke
    joint_target_kd = model.joint_target_kd
    shape_body = model.shape_body
    shape_mu = model.shape_mu
    shape_restitution = model.shape_restitution
    contact_shape0 = contacts.shape0
    contact_shape1 = contacts.shape1
    contact_point0 = contacts.point0
    contact_point1 = contacts.point1
    contact_normal = contacts.normal
    contact_thickness0 = contacts.thickness0
    contact_thickness1 = contacts.thickness1
    contact_lambda = contacts.lambda_n
    contact_vn = contacts.vn
    xs = scratch.xs
    qs = scratch.qs
    x_pred = scratch.x_pred
    q_pred = scratch.q_pred
    drive_lambda = scratch.drive_lambda
    drive_start = scratch.drive_start
    wrench = scratch.wrench
    n_contacts = contacts.count[0]
    # 1. normal velocities before the step
    for c in range(n_contacts):
        b0 = shape_body[contact_shape0[c]]
        b1 = shape_body[contact_shape1[c]]
        p0, r0 = body_point(b0, contact_point0[c], body_q, com)
        p1, r1 = body_point(b1, contact_point1[c], body_q, com)
        contact_vn[c] = sim.dot(contact_normal[c], point_velocity(b0, r0, body_qd) -
                                point_velocity(b1, r1, body_qd))
        contact_lambda[c] = 0.0
    # drives: each driven coordinate at the start of the substep (its rate's reference);
    # external wrenches: body_f and the joints' forces (control.joint_f)
    for b in range(body_count):
        X = body_q[b]
        xs[b] = sim.transform_point(X, com[b])
        qs[b] = sim.transform_get_rotation(X)
        wrench[b] = body_f[b]
    for j in range(joint_count):
        d = joint_qd_start[j]
        if joint_type[j] == REVOLUTE or joint_type[j] == PRISMATIC:
            add_joint_force(joint_type[j], joint_parent[j], joint_child[j], joint_X_p[j],
                            joint_axis[d], joint_f[d], qs, wrench)
            drive_lambda[d] = 0.0
            if joint_target_ke[d] > 0.0 or joint_target_kd[d] > 0.0:
                drive_start[d] = joint_coordinate(joint_type[j], joint_parent[j],
                                                  joint_child[j], joint_X_p[j], joint_X_c[j],
                                                  joint_axis[d], xs, qs, com)
    # 2. predict
    for b in range(body_count):
        X = body_q[b]
        q = sim.transform_get_rotation(X)
        x = sim.transform_point(X, com[b])
        qd = body_qd[b]
        v = sim.spatial_top(qd)
        w = sim.spatial_bottom(qd)
        if inv_mass[b] > 0.0:
            f = wrench[b]
            v = v + (sim.spatial_top(f) * inv_mass[b] + gravity) * dt
            w = w + angular_acceleration(q, w, sim.spatial_bottom(f), inertia[b],
                                         inv_inertia[b]) * dt
            w = w * (1.0 - angular_damping * dt)
            x = x + v * dt
            q = integrate_rotation(q, w, dt)
        xs[b] = x
        qs[b] = q
        x_pred[b] = x
        q_pred[b] = q
        body_qd_out[b] = sim.spatial_vector(v, w)
    # 3. constraints, Gauss-Seidel
    for it in range(iterations):
        for j in range(joint_count):
            d = joint_qd_start[j]
            axis = sim.vec3()
            lower = -1.0e38
            upper = 1.0e38
            if joint_type[j] == REVOLUTE or joint_type[j] == PRISMATIC:
                axis = joint_axis[d]
                lower = joint_lower[d]
                upper = joint_upper[d]
            if joint_type[j] == D6:
                n_lin = joint_linear_dofs[j]
                solve_d6(joint_parent[j], joint_child[j], joint_X_p[j], joint_X_c[j], d, n_lin,
                         joint_qd_start[j + 1] - d - n_lin, joint_axis, joint_lower,
                         joint_upper, xs, qs, com, inv_mass, inertia, inv_inertia)
            elif joint_type[j] == DISTANCE:
                solve_distance(joint_parent[j], joint_child[j], joint_X_p[j], joint_X_c[j],
                               joint_lower[d], joint_upper[d], xs, qs, com, inv_mass,
                               inv_inertia)
            else:
                solve_joint(joint_type[j], joint_parent[j], joint_child[j], joint_X_p[j],
                            joint_X_c[j], axis, lower, upper, xs, qs, com, inv_mass, inertia,
                            inv_inertia)
            if joint_type[j] == REVOLUTE or joint_type[j] == PRISMATIC:
                if joint_target_ke[d] > 0.0 or joint_target_kd[d] > 0.0:
                    drive_lambda[d] = solve_drive(
                        joint_type[j], joint_parent[j], joint_child[j], joint_X_p[j],
                        joint_X_c[j], axis, lower, upper, target_q[d], target_qd[d],
                        joint_target_ke[d], joint_target_kd[d], drive_start[d],
                        drive_lambda[d], dt, xs, qs, com, inv_mass, inertia, inv_inertia)
        for c in range(n_contacts):
            b0 = shape_body[contact_shape0[c]]
            b1 = shape_body[contact_shape1[c]]
            n = contact_normal[c]
            p0, r0 = solving_point(b0, contact_point0[c], xs, qs, com)
            p1, r1 = solving_point(b1, contact_point1[c], xs, qs, com)
            depth = sim.dot(n, p0 - p1) - contact_thickness0[c] - contact_thickness1[c]
            if depth < 0.0:
                contact_lambda[c] = contact_lambda[c] + apply_positional(
                    b1, b0, r1, r0, n * (-depth), xs, qs, inv_mass, inv_inertia)
    # 4. velocities from positions
    for b in range(body_count):
        if inv_mass[b] > 0.0:
            qd = body_qd_out[b]
            dq = qs[b] * sim.quat_inverse(q_pred[b])
            dw = sim.vec3(dq[0], dq[1], dq[2]) * (2.0 / dt)
            if dq[3] < 0.0:
                dw = -dw
            body_qd_out[b] = sim.spatial_vector(sim.spatial_top(qd) + (xs[b] - x_pred[b]) / dt,
                                                sim.spatial_bottom(qd) + dw)
    # 5. contact velocities: friction and restitution; the normal velocities again
    #    (the corners of a face are coupled through the rotation: one Gauss-Seidel
    #    sweep leaves part of their approach speed, which adds to the next step's
    #    normal impulse and so to the friction)
    g = sim.length(gravity)
    for sweep in range(VELOCITY_SWEEPS):
        for c in range(n_contacts):
            lam = contact_lambda[c]
            if lam < 0.0:
                s0 = contact_shape0[c]
                s1 = contact_shape1[c]
                b0 = shape_body[s0]
                b1 = shape_body[s1]
                n = contact_normal[c]
                p0, r0 = solving_point(b0, contact_point0[c], xs, qs, com)
                p1, r1 = solving_point(b1, contact_point1[c], xs, qs, com)
                v = point_velocity(b0, r0, body_qd_out) - point_velocity(b1, r1, body_qd_out)
                vn = sim.dot(n, v)
                vt = v - n * vn
                vt_len = sim.length(vt)
                if vt_len > 0.0 and sweep == 0:
                    # Coulomb: the friction impulse is at most mu times the normal impulse
                    # (lambda_n / h); as a velocity change, times the tangent's inverse mass
                    t = vt / vt_len
                    w_t = positional_inverse_mass(b1, b0, r1, r0, t, qs, inv_mass, inv_inertia)
                    mu = 0.5 * (shape_mu[s0] + shape_mu[s1])
                    apply_velocity_change(b1, b0, r1, r0,
                                          t * (-sim.min(mu * (-lam / dt) * w_t, vt_len)), qs,
                                          body_qd_out, inv_mass, inv_inertia)
                e = 0.5 * (shape_restitution[s0] + shape_restitution[s1])
                if sim.abs(vn) <= 2.0 * g * dt:
                    e = 0.0
                dv_n = n * (sim.max(-e * contact_vn[c], 0.0) - vn)
                apply_velocity_change(b1, b0, r1, r0, dv_n, qs, body_qd_out, inv_mass,
                                      inv_inertia)
    # 6. poses of the body origins
    for b in range(body_count):
        q = qs[b]
        body_q_out[b] = sim.transform(xs[b] - sim.quat_rotate(q, com[b]), q)
