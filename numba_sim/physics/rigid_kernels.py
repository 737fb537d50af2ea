"""Rigid-body kernels of ``SolverSemiImplicit``, and the rigid-body functions both
solvers share.

Conventions (API-physics.md, newton 1.8): ``body_q`` the world transform of the
body origin; ``body_qd`` = (linear velocity of the centre of mass, angular
velocity), world; ``body_f`` = (force at the centre of mass, torque), world,
external: a step applies it and leaves it as it is.

Semi-implicit step: ``rigid_contact_force_kernel`` (one thread per contact)
adds penalty forces (warp.sim's ``eval_rigid_contacts``: ``ke`` on the depth,
``kd`` on the approach speed, friction ``min(kf |v_t|, mu f_n)``; a pair's
``ke, kd, kf, mu`` the mean of its two shapes') into a per-body accumulator, the
opposite force on shape1's body;
``joint_force_kernel`` (one thread per joint) adds the joints' springs (warp.sim's
``eval_body_joints`` model: ``joint_attach_ke/kd`` pull each joint's child frame onto
its parent frame, except along its free axes, where PD drives, limit springs and
``control.joint_f`` act); ``integrate_bodies_kernel`` (one thread per body) applies them with gravity
(symplectic Euler, gyroscopic term, angular damping) and clears the accumulator.
"""

import numba_sim as sim
from numba_sim.physics.builder_rigid import BALL, D6, DISTANCE, FREE, PRISMATIC, REVOLUTE

TRANSFORMS = sim.array(dtype=sim.transform)
SPATIAL = sim.array(dtype=sim.spatial_vector)
VEC3 = sim.array(dtype=sim.vec3)
FLOATS = sim.array(dtype=float)
INTS = sim.array(dtype=sim.int32)
MAT33 = sim.array(dtype=sim.mat33)


@sim.func
def world_inverse_inertia(q: sim.quat, inv_inertia: sim.mat33):
    """The inverse inertia in world axes, R I^-1 R^T."""
    R = sim.quat_to_matrix(q)
    return R * inv_inertia * sim.transpose(R)


@sim.func
def integrate_rotation(q: sim.quat, w: sim.vec3, dt: float):
    """q advanced by the angular velocity w (world) over dt, normalized."""
    return sim.normalize(q + sim.quat(w[0], w[1], w[2], 0.0) * q * (0.5 * dt))


@sim.func
def angular_acceleration(q: sim.quat, w: sim.vec3, torque: sim.vec3, inertia: sim.mat33,
                         inv_inertia: sim.mat33):
    """I_w^-1 (tau - w x I_w w): Euler's equations in world axes."""
    R = sim.quat_to_matrix(q)
    Rt = sim.transpose(R)
    I_w = R * inertia * Rt
    return R * inv_inertia * Rt * (torque - sim.cross(w, I_w * w))


@sim.func
def body_point(b: int, point: sim.vec3, body_q: TRANSFORMS, body_com: VEC3):
    """(world position of *point* of body *b*'s frame, its offset from the centre of
    mass); body -1 (static): *point* is world."""
    p = point
    r = sim.vec3()
    if b >= 0:
        X = body_q[b]
        p = sim.transform_point(X, point)
        r = p - sim.transform_point(X, body_com[b])
    return p, r


@sim.func
def point_velocity(b: int, r: sim.vec3, body_qd: SPATIAL):
    """The world velocity of body *b*'s point at offset *r* from its centre of mass."""
    v = sim.vec3()
    if b >= 0:
        qd = body_qd[b]
        v = sim.spatial_top(qd) + sim.cross(sim.spatial_bottom(qd), r)
    return v


@sim.kernel
def rigid_contact_force_kernel(
        body_q: TRANSFORMS, body_qd: SPATIAL, body_com: VEC3, shape_body: INTS,
        shape_ke: FLOATS, shape_kd: FLOATS, shape_kf: FLOATS, shape_mu: FLOATS,
        contact_count: INTS, contact_shape0: INTS, contact_shape1: INTS, contact_point0: VEC3,
        contact_point1: VEC3, contact_normal: VEC3, contact_thickness0: FLOATS,
        contact_thickness1: FLOATS, body_contact_f: SPATIAL):
    c = sim.tid()
    if c < contact_count[0]:
        s0 = contact_shape0[c]
        s1 = contact_shape1[c]
        b0 = shape_body[s0]
        b1 = shape_body[s1]
        n = contact_normal[c]
        p0, r0 = body_point(b0, contact_point0[c], body_q, body_com)
        p1, r1 = body_point(b1, contact_point1[c], body_q, body_com)
        d = sim.dot(n, p0 - p1) - contact_thickness0[c] - contact_thickness1[c]
        if d < 0.0:
            ke = 0.5 * (shape_ke[s0] + shape_ke[s1])
            kd = 0.5 * (shape_kd[s0] + shape_kd[s1])
            kf = 0.5 * (shape_kf[s0] + shape_kf[s1])
            mu = 0.5 * (shape_mu[s0] + shape_mu[s1])
            v = point_velocity(b0, r0, body_qd) - point_velocity(b1, r1, body_qd)
            vn = sim.dot(n, v)
            vt = v - n * vn
            fn = -ke * d - kd * sim.min(vn, 0.0)
            f = n * fn
            vt_len = sim.length(vt)
            if vt_len > 0.0:
                f = f - vt * (sim.min(kf * vt_len, mu * fn) / vt_len)
            if b0 >= 0:
                body_contact_f[b0] += sim.spatial_vector(f, sim.cross(r0, f))
            if b1 >= 0:
                body_contact_f[b1] += sim.spatial_vector(-f, -sim.cross(r1, f))


ANGULAR_ATTACH_DAMPING_SCALE = 0.01
"""the joints' angular damping is ``joint_attach_kd`` times this (warp.sim's factor: the
full value makes light links unstable)"""


@sim.func
def rotation_vector(q: sim.quat):
    """Axis times angle of the rotation *q*, the short way round."""
    v = sim.vec3(q[0], q[1], q[2])
    s = sim.length(v)
    r = sim.vec3()
    if s > 0.0:
        w = q[3]
        if w < 0.0:
            v = -v
            w = -w
        r = v * (2.0 * sim.atan2(s, w) / s)
    return r


@sim.func
def axis_force(q: float, qd: float, target: float, target_qd: float, ke: float, kd: float,
               lower: float, upper: float, limit_ke: float, limit_kd: float):
    """The generalized force on a joint coordinate *q*: its PD drive, and a spring-damper
    past either limit."""
    f = ke * (target - q) + kd * (target_qd - qd)
    if q < lower:
        f = f + limit_ke * (lower - q) - limit_kd * qd
    elif q > upper:
        f = f + limit_ke * (upper - q) - limit_kd * qd
    return f


@sim.func
def joint_point_motion(b: int, X_w: sim.transform, body_q: TRANSFORMS, body_qd: SPATIAL,
                       body_com: VEC3):
    """(offset of the joint point from body *b*'s centre of mass, its velocity, the body's
    angular velocity); zero for the world (-1)."""
    r = sim.vec3()
    v = sim.vec3()
    w = sim.vec3()
    if b >= 0:
        r = sim.transform_get_translation(X_w) - sim.transform_point(body_q[b], body_com[b])
        qd = body_qd[b]
        w = sim.spatial_bottom(qd)
        v = sim.spatial_top(qd) + sim.cross(w, r)
    return r, v, w


@sim.func
def twist_angle(q_rel: sim.quat, axis: sim.vec3):
    """The angle of the rotation *q_rel* about *axis* (its twist), in (-pi, pi]."""
    q = 2.0 * sim.atan2(sim.dot(sim.vec3(q_rel[0], q_rel[1], q_rel[2]), axis), q_rel[3])
    if q > sim.pi:
        q = q - 2.0 * sim.pi
    elif q < -sim.pi:
        q = q + 2.0 * sim.pi
    return q


@sim.func
def d6_euler_angles(r: sim.quat, axes: VEC3, a: int, angular: int):
    """The angles of a D6 joint's two or three rotations (``r = R(a0, q0) R(a1, q1)
    [R(a2, q2)]``, each about its axis turned by the ones before: SolverFeatherstone's
    coordinates), read from the rotation *r* of the child joint frame in the parent's in
    the basis ``(a0, a1, a0 x a1)``; with two axes the third is the angle about ``a0 x
    a1`` that the joint locks (0 when it holds)."""
    a0 = axes[a]
    a1 = axes[a + 1]
    a2 = sim.cross(a0, a1)
    R = sim.quat_to_matrix(r)
    angles = sim.vec3(sim.atan2(-sim.dot(a1, R * a2), sim.dot(a2, R * a2)),
                      sim.asin(sim.clamp(sim.dot(a0, R * a2), -1.0, 1.0)),
                      sim.atan2(-sim.dot(a0, R * a1), sim.dot(a0, R * a0)))
    if angular == 3:
        angles[2] = sim.sign(sim.dot(axes[a + 2], a2)) * angles[2]
    return angles


@sim.func
def d6_turned_axis(q1: sim.quat, axes: VEC3, a: int, n_ang: int, angles: sim.vec3, k: int):
    """The world direction of a D6's *k*-th angular axis turned by the rotations before
    it (*q1* the parent joint frame's world rotation, *a* the first angular dof; with two
    axes, *k* = 2 is the locked ``a0 x a1``)."""
    r = q1
    for i in range(k):
        r = r * sim.quat_from_axis_angle(axes[a + i], angles[i])
    axis = sim.vec3()
    if k < n_ang:
        axis = axes[a + k]
    else:
        axis = sim.cross(axes[a], axes[a + 1])
    return sim.quat_rotate(r, axis)


@sim.kernel
def joint_force_kernel(
        body_q: TRANSFORMS, body_qd: SPATIAL, body_com: VEC3, joint_type: INTS,
        joint_parent: INTS, joint_child: INTS, joint_X_p: TRANSFORMS, joint_X_c: TRANSFORMS,
        joint_axis: VEC3, joint_qd_start: INTS, joint_linear_dofs: INTS, target_q: FLOATS,
        target_qd: FLOATS, joint_f: FLOATS, target_ke: FLOATS, target_kd: FLOATS,
        limit_lower: FLOATS, limit_upper: FLOATS, limit_ke: FLOATS, limit_kd: FLOATS,
        attach_ke: float, attach_kd: float, body_force: SPATIAL):
    """Thread *j*: joint *j*'s springs.  The child's joint point is pulled onto the
    parent's except along the joint's linear axes (prismatic, D6), where drives, limits
    and ``joint_f`` act; the rotation is welded without angular axes (fixed, prismatic,
    a D6 without any), a hinge about one (revolute, or a D6's), a universal joint about
    two (the parent's first axis kept perpendicular to the child's second), free with
    three (ball, D6); a D6's angular axes get drives, limits and ``joint_f`` on its
    coordinates (one axis: the hinge's twist angle; two or three: the angles of
    ``d6_euler_angles``, SolverFeatherstone's, with their rates ``C^-1 w`` and the torque
    ``C^-T tau`` whose work on the rates is their forces ``tau``, ``C`` the turned axes,
    with two axes the locked third among them, its force 0).  A distance joint pulls
    the joint points' distance back within its bounds."""
    j = sim.tid()
    jtype = joint_type[j]
    if jtype != FREE:
        parent = joint_parent[j]
        child = joint_child[j]
        X_wp = joint_X_p[j]
        if parent >= 0:
            X_wp = body_q[parent] * X_wp
        X_wc = body_q[child] * joint_X_c[j]
        r_p, v_p, w_p = joint_point_motion(parent, X_wp, body_q, body_qd, body_com)
        r_c, v_c, w_c = joint_point_motion(child, X_wc, body_q, body_qd, body_com)
        x_err = sim.transform_get_translation(X_wc) - sim.transform_get_translation(X_wp)
        v_err = v_c - v_p
        w_err = w_c - w_p
        q_p = sim.transform_get_rotation(X_wp)
        q_c = sim.transform_get_rotation(X_wc)
        q_rel = sim.quat_inverse(q_p) * q_c
        angular_kd = attach_kd * ANGULAR_ATTACH_DAMPING_SCALE
        d = joint_qd_start[j]
        f = -(x_err * attach_ke + v_err * attach_kd)      # on the child; the parent: -f
        t = sim.vec3()
        linear = 0
        angular = 0
        if jtype == PRISMATIC:
            linear = 1
        elif jtype == REVOLUTE:
            angular = 1
        elif jtype == BALL:
            angular = 3
        elif jtype == D6:
            linear = joint_linear_dofs[j]
            angular = joint_qd_start[j + 1] - d - linear
        if jtype == DISTANCE:
            f = sim.vec3()
            length = sim.length(x_err)
            stretch = 0.0
            if length > limit_upper[d]:
                stretch = length - limit_upper[d]
            elif length < limit_lower[d]:
                stretch = length - limit_lower[d]
            if stretch != 0.0 and length > 0.0:
                direction = x_err / length
                f = -direction * (stretch * attach_ke + sim.dot(v_err, direction) * attach_kd)
        else:
            for k in range(linear):
                axis_p = sim.quat_rotate(q_p, joint_axis[d + k])
                q = sim.dot(x_err, axis_p)
                qd = sim.dot(v_err, axis_p)
                f = f + axis_p * (q * attach_ke + qd * attach_kd + joint_f[d + k] + axis_force(
                    q, qd, target_q[d + k], target_qd[d + k], target_ke[d + k],
                    target_kd[d + k], limit_lower[d + k], limit_upper[d + k], limit_ke[d + k],
                    limit_kd[d + k]))
            a = d + linear
            if angular == 0:
                # the child frame's rotation from the parent's, as a world rotation vector
                angle_err = sim.quat_rotate(q_p, rotation_vector(q_rel))
                t = -(angle_err * attach_ke + w_err * angular_kd)
            elif angular == 1:
                axis = joint_axis[a]
                axis_p = sim.quat_rotate(q_p, axis)
                axis_c = sim.quat_rotate(q_c, axis)
                q = twist_angle(q_rel, axis)
                qd = sim.dot(w_err, axis_p)
                t = axis_p * (joint_f[a] + axis_force(
                    q, qd, target_q[a], target_qd[a], target_ke[a], target_kd[a],
                    limit_lower[a], limit_upper[a], limit_ke[a], limit_kd[a])) + \
                    sim.cross(axis_c, axis_p) * attach_ke - (w_err - axis_p * qd) * angular_kd
            else:
                if angular == 2:
                    # universal: the parent's first axis perpendicular to the child's second
                    first = sim.quat_rotate(q_p, joint_axis[a])
                    second = sim.quat_rotate(q_c, joint_axis[a + 1])
                    locked = sim.cross(first, second)
                    t = locked * (sim.dot(first, second) * attach_ke)
                    n = sim.length(locked)
                    if n > 0.0:
                        locked = locked / n
                        t = t - locked * (sim.dot(w_err, locked) * angular_kd)
                angles = d6_euler_angles(q_rel, joint_axis, a, angular)
                C = sim.mat33()                   # columns: the turned axes (world)
                for k in range(3):
                    c = d6_turned_axis(q_p, joint_axis, a, angular, angles, k)
                    for i in range(3):
                        C[i, k] = c[i]
                if sim.abs(sim.determinant(C)) > 1.0e-6:    # (not at gimbal lock)
                    rates = sim.inverse(C) * w_err
                    tau = sim.vec3()
                    for k in range(angular):
                        tau[k] = joint_f[a + k] + axis_force(
                            angles[k], rates[k], target_q[a + k], target_qd[a + k],
                            target_ke[a + k], target_kd[a + k], limit_lower[a + k],
                            limit_upper[a + k], limit_ke[a + k], limit_kd[a + k])
                    t = t + sim.inverse(sim.transpose(C)) * tau
        body_force[child] += sim.spatial_vector(f, t + sim.cross(r_c, f))
        if parent >= 0:
            body_force[parent] += sim.spatial_vector(-f, -t - sim.cross(r_p, f))


@sim.kernel
def integrate_bodies_kernel(
        body_q: TRANSFORMS, body_qd: SPATIAL, body_f: SPATIAL, body_contact_f: SPATIAL,
        body_com: VEC3, body_inv_mass: FLOATS, body_inertia: MAT33, body_inv_inertia: MAT33,
        gravity: sim.vec3, angular_damping: float, dt: float, body_q_out: TRANSFORMS,
        body_qd_out: SPATIAL):
    b = sim.tid()
    X = body_q[b]
    qd = body_qd[b]
    f = body_f[b] + body_contact_f[b]
    body_contact_f[b] = sim.spatial_vector()
    inv_m = body_inv_mass[b]
    if inv_m > 0.0:
        q = sim.transform_get_rotation(X)
        com = body_com[b]
        x = sim.transform_point(X, com)
        v = sim.spatial_top(qd) + (sim.spatial_top(f) * inv_m + gravity) * dt
        w = sim.spatial_bottom(qd)
        w = w + angular_acceleration(q, w, sim.spatial_bottom(f), body_inertia[b],
                                     body_inv_inertia[b]) * dt
        w = w * (1.0 - angular_damping * dt)
        x = x + v * dt
        q = integrate_rotation(q, w, dt)
        body_q_out[b] = sim.transform(x - sim.quat_rotate(q, com), q)
        body_qd_out[b] = sim.spatial_vector(v, w)
    else:
        body_q_out[b] = X
        body_qd_out[b] = qd
