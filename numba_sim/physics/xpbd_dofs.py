"""``SolverXPBD``'s joint coordinates, D6 joints, drives and joint forces (the
corrections themselves are ``xpbd_rigid``'s).

A dof's coordinate is SolverFeatherstone's: a revolute joint's (or one-angular-axis
D6's) hinge angle, a slide along a prismatic joint's or a D6's linear axis, and for a
D6 with two or three angular axes the angles of its rotations ``R(a0, q0) R(a1, q1)
[R(a2, q2)]``, each about its axis turned by the ones before
(``rigid_kernels.d6_euler_angles``).  Changing ``q_k`` alone turns the child about
that turned axis ``c_k`` (world), so a limit or a drive on ``q_k`` is an angular
correction about ``c_k`` (``apply_angular_about``: about the joint point against a
static body, about both centres of mass between two moving ones).
"""

import numba_sim as sim
from numba_sim.physics.builder_rigid import D6, PRISMATIC, REVOLUTE
from numba_sim.physics.rigid_kernels import (
    FLOATS, MAT33, SPATIAL, VEC3, d6_euler_angles, d6_turned_axis,
)
from numba_sim.physics.xpbd_rigid import (
    QUATS, angular_inverse_mass_about, apply_angular_about, apply_point,
    apply_positional, hinge_angle, joint_frame, positional_inverse_mass, solve_hinge,
    solve_weld,
)


@sim.func
def dof_value(jtype: int, q1: sim.quat, a1: sim.vec3, q2: sim.quat, a2: sim.vec3,
              axes: VEC3, d: int, n_lin: int, n_ang: int, k: int):
    """(the coordinate of dof ``d + k``, the world direction it moves the child along or
    about) for the joint frames (*q1*, *a1*) and (*q2*, *a2*)."""
    n = sim.quat_rotate(q1, axes[d + k])
    c = 0.0
    if jtype == PRISMATIC or (jtype == D6 and k < n_lin):
        c = sim.dot(a2 - a1, n)
    elif jtype == REVOLUTE or (jtype == D6 and n_ang == 1):
        c = hinge_angle(q1, q2, axes[d + k])
    elif jtype == D6:
        angles = d6_euler_angles(sim.quat_inverse(q1) * q2, axes, d + n_lin, n_ang)
        c = angles[k - n_lin]
        n = d6_turned_axis(q1, axes, d + n_lin, n_ang, angles, k - n_lin)
    return c, n


@sim.func
def is_angular(jtype: int, n_lin: int, k: int):
    return jtype == REVOLUTE or (jtype == D6 and k >= n_lin)


@sim.func
def dof_coordinate(jtype: int, parent: int, child: int, X_p: sim.transform,
                   X_c: sim.transform, axes: VEC3, d: int, n_lin: int, n_ang: int, k: int,
                   xs: VEC3, qs: QUATS, com: VEC3):
    """Dof ``d + k``'s coordinate at the solver's current poses."""
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    c, n = dof_value(jtype, q1, a1, q2, a2, axes, d, n_lin, n_ang, k)
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
def add_d6_joint_forces(parent: int, child: int, X_p: sim.transform, X_c: sim.transform,
                        axes: VEC3, d: int, n_lin: int, n_ang: int, joint_f: FLOATS,
                        xs: VEC3, qs: QUATS, com: VEC3, wrench: SPATIAL):
    """A D6's ``joint_f``: forces along its linear axes (parent frame), and the torque
    whose work on each angle's rate is that angle's ``joint_f`` (``C^T tau = f`` with
    ``C`` the turned axes, with two axes the locked third among them, its force 0: the
    generalized force of SolverFeatherstone's coordinates), on the child and (opposite)
    the parent, at the centres of mass."""
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    f = sim.vec3()
    for k in range(n_lin):
        f = f + sim.quat_rotate(q1, axes[d + k]) * joint_f[d + k]
    t = sim.vec3()
    a = d + n_lin
    if n_ang == 1:
        t = sim.quat_rotate(q1, axes[a]) * joint_f[a]
    elif n_ang >= 2:
        angles = d6_euler_angles(sim.quat_inverse(q1) * q2, axes, a, n_ang)
        tau = sim.vec3(joint_f[a], joint_f[a + 1], 0.0)
        if n_ang == 3:
            tau[2] = joint_f[a + 2]
        Ct = sim.mat33()            # rows: the turned axes
        for k in range(3):
            c = d6_turned_axis(q1, axes, a, n_ang, angles, k)
            for i in range(3):
                Ct[k, i] = c[i]
        if sim.abs(sim.determinant(Ct)) > 1.0e-6:
            t = sim.inverse(Ct) * tau
    if sim.length(f) > 0.0 or sim.length(t) > 0.0:
        w = sim.spatial_vector(f, t)
        wrench[child] = wrench[child] + w
        if parent >= 0:
            wrench[parent] = wrench[parent] - w


@sim.func
def solve_drive(jtype: int, parent: int, child: int, X_p: sim.transform, X_c: sim.transform,
                axes: VEC3, d: int, n_lin: int, n_ang: int, k: int, lower: float,
                upper: float, target: float, target_velocity: float, ke: float, kd: float,
                start: float, lam: float, dt: float, xs: VEC3, qs: QUATS, com: VEC3,
                inv_mass: FLOATS, inertia: MAT33, inv_inertia: MAT33):
    """Pull dof ``d + k``'s coordinate towards *target* (stiffness *ke*) and its rate
    towards *target_velocity* (damping *kd*): XPBD's compliant constraint ``C =
    coordinate - target`` with compliance ``1 / ke`` and damping ``kd`` (Macklin et al.
    2016, eq. 26), multiplied through by ``ke h^2`` so that ``ke = 0`` leaves a pure
    damper: ``dlambda = -(ke h^2 C + kd h dC + lambda) / (1 + w (ke h^2 + kd h))``, ``dC``
    the coordinate's change in this substep less ``h target_velocity``.  The coordinate
    moves by ``w dlambda``, as an implicit PD drive would, but not past the dof's
    limits.  Returns the new lambda.

    It runs after the joint's own constraints: an angular drive turns the bodies about
    the joint point (against a static body), which leaves the point constraint as it is,
    and it sees what the point constraint turned (gravity's torque arrives that way).
    Run before them, one iteration would hold a weight ``1 + h kd / I`` too far from the
    target."""
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    c, n = dof_value(jtype, q1, a1, q2, a2, axes, d, n_lin, n_ang, k)
    angular = is_angular(jtype, n_lin, k)
    w = 0.0
    if angular:
        w = angular_inverse_mass_about(parent, child, n, a2, xs, qs, inv_mass, inertia)
    else:
        r1 = r1 + n * c                        # the parent's point where the child's is
        w = positional_inverse_mass(parent, child, r1, r2, n, qs, inv_mass, inv_inertia)
    if w > 0.0:
        h2 = ke * dt * dt
        hd = kd * dt
        dlam = -(h2 * (c - target) + hd * (c - start - dt * target_velocity) + lam) / \
            (1.0 + w * (h2 + hd))
        move = sim.clamp(c + w * dlam, lower, upper) - c
        lam = lam + move / w
        if angular:
            apply_angular_about(parent, child, n * move, a2, xs, qs, inv_mass, inertia)
        else:
            apply_positional(parent, child, r1, r2, n * move, xs, qs, inv_mass, inv_inertia)
    return lam


@sim.func
def solve_d6_angles(parent: int, child: int, X_p: sim.transform, X_c: sim.transform, a: int,
                    n_ang: int, axes: VEC3, lower: FLOATS, upper: FLOATS, xs: VEC3,
                    qs: QUATS, com: VEC3, inv_mass: FLOATS, inertia: MAT33):
    """The angles of a D6 with two or three angular axes (first angular dof *a*), one
    after the other: with two, the third (about ``a0 x a1``, turned) is held at 0 (a
    universal joint); each angle with limits is kept within them.  A violated angle
    ``q_k`` is set to its bound by turning the child (and the parent the other way) about
    the turned axis ``c_k``, which leaves the angles before it as they are."""
    for k in range(3):
        lo = 0.0
        hi = 0.0
        if k < n_ang:
            lo = lower[a + k]
            hi = upper[a + k]
        if lo > -1.0e30 or hi < 1.0e30:
            q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
            q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
            angles = d6_euler_angles(sim.quat_inverse(q1) * q2, axes, a, n_ang)
            angle = angles[k]
            target = sim.clamp(angle, lo, hi)
            if target != angle:
                apply_angular_about(
                    parent, child,
                    d6_turned_axis(q1, axes, a, n_ang, angles, k) * (target - angle), a2, xs,
                    qs, inv_mass, inertia)


@sim.func
def solve_d6(parent: int, child: int, X_p: sim.transform, X_c: sim.transform, d: int,
             n_lin: int, n_ang: int, axes: VEC3, lower: FLOATS, upper: FLOATS, xs: VEC3,
             qs: QUATS, com: VEC3, inv_mass: FLOATS, inertia: MAT33, inv_inertia: MAT33):
    """A D6 joint: no angular axis a weld, one a hinge (with its limits), two a universal
    joint (the third angle held at 0), three a ball, with two or three each angle within
    its limits (``solve_d6_angles``); then the attachment points, free (within their
    limits) along the linear axes."""
    a = d + n_lin
    if n_ang == 0:
        solve_weld(parent, child, X_p, X_c, xs, qs, com, inv_inertia)
    elif n_ang == 1:
        solve_hinge(parent, child, X_p, X_c, axes[a], lower[a], upper[a], xs, qs, com,
                    inv_mass, inertia, inv_inertia)
    else:
        solve_d6_angles(parent, child, X_p, X_c, a, n_ang, axes, lower, upper, xs, qs, com,
                        inv_mass, inertia)
    q1, a1, r1 = joint_frame(parent, X_p, xs, qs, com)
    q2, a2, r2 = joint_frame(child, X_c, xs, qs, com)
    corr = a1 - a2
    for i in range(n_lin):
        axis_w = sim.quat_rotate(q1, axes[d + i])
        slide = sim.clamp(-sim.dot(corr, axis_w), lower[d + i], upper[d + i])
        r1 = r1 + axis_w * slide
        corr = corr + axis_w * slide
    apply_point(parent, child, r1, r2, corr, xs, qs, inv_mass, inv_inertia)
