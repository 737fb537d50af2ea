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
world.  The kernel (``xpbd_rigid_substep``) runs on one thread (the paper's serial
Gauss-Seidel): a model's bodies, joints and contacts in one launch per substep.
Coordinates, D6 joints, drives and joint forces: ``xpbd_dofs``.
"""

import numba_sim as sim
from numba_sim.physics.builder_rigid import BALL, FIXED, PRISMATIC, REVOLUTE
from numba_sim.physics.rigid_kernels import (
    FLOATS, MAT33, SPATIAL, VEC3, integrate_rotation, world_inverse_inertia,
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
