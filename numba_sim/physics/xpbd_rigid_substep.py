"""``SolverXPBD``'s rigid substep kernel and the structs it reads (the algorithm:
``xpbd_rigid``'s docstring)."""

import numba_sim as sim
from numba_sim.physics.builder_rigid import D6, DISTANCE, PRISMATIC, REVOLUTE
from numba_sim.physics.rigid_kernels import (
    FLOATS, INTS, MAT33, SPATIAL, TRANSFORMS, VEC3, angular_acceleration, body_point,
    integrate_rotation, point_velocity,
)
from numba_sim.physics.xpbd_dofs import (
    add_d6_joint_forces, add_joint_force, dof_coordinate, solve_d6, solve_drive,
)
from numba_sim.physics.xpbd_rigid import (
    QUATS, VELOCITY_SWEEPS, apply_positional, apply_velocity_change, positional_inverse_mass,
    solve_distance, solve_joint, solving_point,
)


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
    body_world: INTS
    world_group: INTS         # each world's group (thread)
    group_count: int          # threads: 1 (everything), one per world or block of worlds
    group_body_start: INTS    # group g's bodies: [start[g], start[g + 1])
    group_joint_start: INTS   # likewise its joints


@sim.struct
class RigidContacts:
    """A ``Contacts``' rigid contacts, with the solver's per-contact scratch and, for one
    thread per world, the contacts of each world in slot order."""

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
    group_start: INTS         # group g's contacts: order[start[g] .. start[g + 1]]
    order: INTS               # (with more than one group; group_contacts_kernel)


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


@sim.func
def contact_group(c: int, contacts: RigidContacts, shape_body: INTS, body_world: INTS,
                  world_group: INTS):
    """The group of contact *c*'s world (shape0's body's, else shape1's: one is a
    body's)."""
    b = shape_body[contacts.shape0[c]]
    if b < 0:
        b = shape_body[contacts.shape1[c]]
    return world_group[body_world[b]]


@sim.kernel
def group_contacts_kernel(contacts: RigidContacts, shape_body: INTS, body_world: INTS,
                          world_group: INTS, group_count: int):
    """One thread: a counting sort of the contacts by group, stable (each group's
    contacts in slot order, as the serial kernel meets them)."""
    start = contacts.group_start
    order = contacts.order
    n = contacts.count[0]
    for g in range(group_count + 1):
        start[g] = 0
    for c in range(n):
        g = contact_group(c, contacts, shape_body, body_world, world_group)
        start[g + 1] = start[g + 1] + 1
    for g in range(group_count):
        start[g + 1] = start[g + 1] + start[g]
    for c in range(n):      # start[g] as group g's cursor
        g = contact_group(c, contacts, shape_body, body_world, world_group)
        order[start[g]] = c
        start[g] = start[g] + 1
    for i in range(group_count):    # the cursors ended at the next group's start
        g = group_count - i
        start[g] = start[g - 1]
    start[0] = 0


@sim.func
def nth_contact(i: int, grouped: bool, order: INTS):
    """The *i*-th contact a thread meets: slot *i*, or *order*'s *i*-th with groups."""
    c = i
    if grouped:
        c = int(order[i])
    return c


@sim.kernel
def xpbd_rigid_substep_kernel(
        body_q: TRANSFORMS, body_qd: SPATIAL, body_f: SPATIAL, model: RigidModel,
        contacts: RigidContacts, scratch: RigidScratch, target_q: FLOATS, target_qd: FLOATS,
        joint_f: FLOATS, gravity: sim.vec3, angular_damping: float, iterations: int, dt: float,
        body_q_out: TRANSFORMS, body_qd_out: SPATIAL):
    com = model.com
    inv_mass = model.inv_mass
    inertia = model.inertia
    inv_inertia = model.inv_inertia
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
    # this thread's world (or everything): its bodies, joints and contacts
    group = sim.tid()
    b_first = model.group_body_start[group]
    b_last = model.group_body_start[group + 1]
    j_first = model.group_joint_start[group]
    j_last = model.group_joint_start[group + 1]
    grouped = model.group_count > 1
    c_first = 0
    c_last = contacts.count[0]
    if grouped:
        c_first = contacts.group_start[group]
        c_last = contacts.group_start[group + 1]
    order = contacts.order
    # 1. normal velocities before the step
    for i in range(c_first, c_last):
        c = nth_contact(i, grouped, order)
        b0 = shape_body[contact_shape0[c]]
        b1 = shape_body[contact_shape1[c]]
        p0, r0 = body_point(b0, contact_point0[c], body_q, com)
        p1, r1 = body_point(b1, contact_point1[c], body_q, com)
        contact_vn[c] = sim.dot(contact_normal[c], point_velocity(b0, r0, body_qd) -
                                point_velocity(b1, r1, body_qd))
        contact_lambda[c] = 0.0
    # drives: each driven coordinate at the start of the substep (its rate's reference);
    # external wrenches: body_f and the joints' forces (control.joint_f)
    for b in range(b_first, b_last):
        X = body_q[b]
        xs[b] = sim.transform_point(X, com[b])
        qs[b] = sim.transform_get_rotation(X)
        wrench[b] = body_f[b]
    for j in range(j_first, j_last):
        d = joint_qd_start[j]
        jtype = joint_type[j]
        if jtype == REVOLUTE or jtype == PRISMATIC:
            add_joint_force(jtype, joint_parent[j], joint_child[j], joint_X_p[j],
                            joint_axis[d], joint_f[d], qs, wrench)
        elif jtype == D6:
            n_lin = joint_linear_dofs[j]
            add_d6_joint_forces(joint_parent[j], joint_child[j], joint_X_p[j], joint_X_c[j],
                                joint_axis, d, n_lin, joint_qd_start[j + 1] - d - n_lin,
                                joint_f, xs, qs, com, wrench)
        if jtype == REVOLUTE or jtype == PRISMATIC or jtype == D6:
            n_lin = joint_linear_dofs[j]
            dofs = joint_qd_start[j + 1] - d
            for k in range(dofs):
                drive_lambda[d + k] = 0.0
                if joint_target_ke[d + k] > 0.0 or joint_target_kd[d + k] > 0.0:
                    drive_start[d + k] = dof_coordinate(
                        jtype, joint_parent[j], joint_child[j], joint_X_p[j], joint_X_c[j],
                        joint_axis, d, n_lin, dofs - n_lin, k, xs, qs, com)
    # 2. predict
    for b in range(b_first, b_last):
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
        for j in range(j_first, j_last):
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
            jtype = joint_type[j]
            if jtype == REVOLUTE or jtype == PRISMATIC or jtype == D6:
                n_lin = joint_linear_dofs[j]
                dofs = joint_qd_start[j + 1] - d
                for k in range(dofs):
                    e = d + k
                    if joint_target_ke[e] > 0.0 or joint_target_kd[e] > 0.0:
                        drive_lambda[e] = solve_drive(
                            jtype, joint_parent[j], joint_child[j], joint_X_p[j],
                            joint_X_c[j], joint_axis, d, n_lin, dofs - n_lin, k,
                            joint_lower[e], joint_upper[e], target_q[e], target_qd[e],
                            joint_target_ke[e], joint_target_kd[e], drive_start[e],
                            drive_lambda[e], dt, xs, qs, com, inv_mass, inertia, inv_inertia)
        for i in range(c_first, c_last):
            c = nth_contact(i, grouped, order)
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
    for b in range(b_first, b_last):
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
        for i in range(c_first, c_last):
            c = nth_contact(i, grouped, order)
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
    for b in range(b_first, b_last):
        q = qs[b]
        body_q_out[b] = sim.transform(xs[b] - sim.quat_rotate(q, com[b]), q)
