"""Reduced-coordinate articulations for ``SolverFeatherstone`` (Featherstone, "Rigid
Body Dynamics Algorithms", 2008), one thread per articulation.

Spatial quantities are in world axes about the articulation's origin ``o`` (the
position of its root joint's parent frame ``X_p``, fixed: moments about the world
origin lose float32 digits for a robot far from it, the 4096th of worlds 1 m apart),
as two vec3s:
a motion ``(w, v)`` (angular velocity, velocity of the body point at the origin), a
force ``(n, f)`` (moment about the origin, force).  A body's spatial inertia is
``(m, h, I)``: its mass, first moment ``h = m c`` (``c`` its centre of mass) and
rotational inertia about ``o`` ``I = R I_c R^T + m [c]x [c]x^T`` (``c`` from ``o``); composites
add componentwise, and it maps a motion to its momentum ``(I w + h x v, m v - h x w)``.

A joint's motion subspace ``S`` (one column per dof): revolute ``(a, p x a)`` (axis
``a`` and pivot ``p`` of the parent's joint frame), prismatic ``(0, a)``, ball three
revolute columns about the parent joint frame's axes (``joint_qd`` is the child's
angular velocity in that frame; ``joint_q`` the child joint frame's rotation in it),
free (world parent only) ``(0, e_i)`` then ``(e_i, c x e_i)``: ``joint_qd`` is the
centre of mass's velocity and the angular velocity (world), as ``body_qd``; distance
(under any body) the child joint frame's position ``p`` and rotation in the parent's,
``joint_qd`` the rate of ``p`` and the angular velocity (parent joint frame): slides along
the parent frame's axes, then a ball about the moved joint point, the distance ``|p|``
kept within the first dof's limits by ``limit_ke/kd`` (implicit, as a limit).

Per articulation and step:

1. forward kinematics and, joint by joint from the root, ``S``, body velocities
   ``v_c = v_p + S qd``, bias accelerations ``a_c = a_p + dS/dt qd`` (the root
   accelerates at ``-g``: gravity), and ``f = I a + v x* I v - f_ext`` (``f_ext``:
   ``body_f`` and the contact forces);
2. from the leaves: the bias ``C_i = S_i . f``, composite inertias and forces passed
   to the parent;
3. the joint-space mass matrix by the composite-rigid-body algorithm, ``H_ij =
   S_i . (I^c S_j)`` along each joint's path to the root, plus armature; the right side
   ``tau - C`` with ``tau = joint_f`` + PD drives + limit springs;
4. a Cholesky solve of ``(H + h kd + h^2 ke) qdd = tau - C`` (the drives' and active
   limits' stiffness and damping taken implicitly, so stiff drives stay stable);
5. ``qd += h qdd`` (angular dofs of ball and free joints damped by
   ``angular_damping``), ``q += h qd`` (quaternions by their rates);
6. forward kinematics of the new ``q`` into ``body_q`` and ``body_qd``.

Each articulation's mass matrix lives at its own offset (``H_start``) with its own
size, so articulations of any sizes mix in one model (warp.sim's batched Cholesky
assumes one size and reads out of bounds otherwise).
"""

import numba_sim as sim
from numba_sim.physics.builder_rigid import BALL, D6, DISTANCE, FREE, PRISMATIC, REVOLUTE
from numba_sim.physics.rigid_kernels import (
    FLOATS, INTS, MAT33, SPATIAL, TRANSFORMS, VEC3, d6_euler_angles, integrate_rotation,
)


@sim.struct
class ArticulationModel:
    """A model's joint tree and mass properties, as the Featherstone kernels read them."""

    articulation_start: INTS    # first joint of each articulation (count + 1 entries)
    H_start: INTS               # offset of each articulation's mass matrix
    joint_type: INTS
    joint_parent: INTS
    joint_child: INTS
    joint_parent_joint: INTS    # the joint of the parent body (-1: none)
    joint_X_p: TRANSFORMS
    joint_X_c: TRANSFORMS
    joint_axis: VEC3
    joint_q_start: INTS
    joint_qd_start: INTS
    joint_linear_dofs: INTS     # a D6 joint's linear axes (its first dofs)
    joint_armature: FLOATS
    joint_target_ke: FLOATS
    joint_target_kd: FLOATS
    joint_limit_lower: FLOATS
    joint_limit_upper: FLOATS
    joint_limit_ke: FLOATS
    joint_limit_kd: FLOATS
    body_com: VEC3
    body_mass: FLOATS
    body_inertia: MAT33


@sim.struct
class ArticulationScratch:
    """Per dof: motion subspace columns, right side, accelerations; per body: pose
    relative to its articulation's origin, spatial velocity, bias acceleration, force and
    composite inertia; the mass matrices."""

    X_l: TRANSFORMS

    S_w: VEC3
    S_v: VEC3
    rhs: FLOATS
    qdd: FLOATS
    v_w: VEC3
    v_v: VEC3
    a_w: VEC3
    a_v: VEC3
    f_n: VEC3
    f_f: VEC3
    I_m: FLOATS
    I_h: VEC3
    I_r: MAT33
    H: FLOATS


@sim.func
def d6_motion(axes: VEC3, d0: int, linear: int, dofs: int, q: FLOATS, qs: int):
    """A D6 joint's X_j(q): the translation along its linear axes, then the rotations
    about its angular axes in order (each about its axis turned by the ones before)."""
    p = sim.vec3()
    r = sim.quat_identity()
    for i in range(dofs):
        if i < linear:
            p = p + axes[d0 + i] * q[qs + i]
        else:
            r = r * sim.quat_from_axis_angle(axes[d0 + i], q[qs + i])
    return sim.transform(p, r)


@sim.func(inline=True)
def joint_motion(jtype: int, axes: VEC3, d0: int, linear: int, dofs: int, q: FLOATS,
                 qs: int):
    """The joint's transform X_j(q) from the parent's joint frame to the child's."""
    X = sim.transform_identity()
    if jtype == D6:
        X = d6_motion(axes, d0, linear, dofs, q, qs)
    elif jtype == REVOLUTE:
        X = sim.transform(sim.vec3(), sim.quat_from_axis_angle(axes[d0], q[qs]))
    elif jtype == PRISMATIC:
        X = sim.transform(axes[d0] * q[qs], sim.quat_identity())
    elif jtype == BALL:
        X = sim.transform(sim.vec3(), sim.normalize(sim.quat(q[qs], q[qs + 1], q[qs + 2],
                                                             q[qs + 3])))
    elif jtype == FREE or jtype == DISTANCE:
        X = sim.transform(sim.vec3(q[qs], q[qs + 1], q[qs + 2]),
                          sim.normalize(sim.quat(q[qs + 3], q[qs + 4], q[qs + 5], q[qs + 6])))
    return X


@sim.func(inline=True)
def parent_joint_frame(parent: int, body_q: TRANSFORMS, X_p: sim.transform):
    """The parent joint frame in the world: ``body_q[parent] * X_p`` (``X_p`` from the
    world)."""
    X = X_p
    if parent >= 0:
        X = body_q[parent] * X_p
    return X


@sim.func(inline=True)
def articulation_origin(m: ArticulationModel, first: int):
    """The origin of the articulation whose root joint is *first*: its parent frame's
    world position (fixed)."""
    return sim.transform_get_translation(m.joint_X_p[first])


@sim.func(inline=True)
def local_joint_frame(parent: int, X_l: TRANSFORMS, X_p: sim.transform, o: sim.vec3):
    """The parent joint frame relative to the articulation's origin *o*: ``X_l[parent]
    * X_p``, or ``X_p`` moved by ``-o`` for the root (from the world)."""
    X = sim.transform(sim.transform_get_translation(X_p) - o, sim.transform_get_rotation(X_p))
    if parent >= 0:
        X = X_l[parent] * X_p
    return X


@sim.func(inline=True)
def forward_kinematics(m: ArticulationModel, first: int, last: int, joint_q: FLOATS,
                       joint_qd: FLOATS, body_q: TRANSFORMS, body_qd: SPATIAL,
                       scratch: ArticulationScratch):
    """Body poses of joints first..last-1 from ``joint_q`` (``body_q``, and relative to
    the articulation's origin in ``scratch.X_l``); with ``joint_qd`` also the motion
    subspaces and body velocities about the origin (scratch) and ``body_qd``."""
    # the struct fields once (each use of a field would count references)
    m_body_com = m.body_com
    m_joint_X_c = m.joint_X_c
    m_joint_X_p = m.joint_X_p
    m_joint_axis = m.joint_axis
    m_joint_child = m.joint_child
    m_joint_parent = m.joint_parent
    m_joint_q_start = m.joint_q_start
    m_joint_qd_start = m.joint_qd_start
    m_joint_type = m.joint_type
    m_joint_linear_dofs = m.joint_linear_dofs
    s_S_v = scratch.S_v
    s_S_w = scratch.S_w
    s_v_v = scratch.v_v
    s_v_w = scratch.v_w
    s_X_l = scratch.X_l
    o = articulation_origin(m, first)
    for k in range(first, last):
        jtype = m_joint_type[k]
        parent = m_joint_parent[k]
        child = m_joint_child[k]
        d0 = m_joint_qd_start[k]
        n = m_joint_qd_start[k + 1] - d0
        linear = m_joint_linear_dofs[k]
        # (relative to the origin o, as everything below: X_wj, X_wc, c, p, centre)
        X_wj = local_joint_frame(parent, s_X_l, m_joint_X_p[k], o)
        X_j = joint_motion(jtype, m_joint_axis, d0, linear, n, joint_q, m_joint_q_start[k])
        X_wc = X_wj * X_j * sim.transform_inverse(m_joint_X_c[k])
        s_X_l[child] = X_wc
        body_q[child] = sim.transform(sim.transform_get_translation(X_wc) + o,
                                      sim.transform_get_rotation(X_wc))
        c = sim.transform_point(X_wc, m_body_com[child])
        q_wj = sim.transform_get_rotation(X_wj)
        p = sim.transform_get_translation(X_wj)
        w = sim.vec3()
        v = sim.vec3()
        if parent >= 0:
            w = s_v_w[parent]
            v = s_v_v[parent]
        # a D6's rotation centre and its angular axes turned by the rotations before them
        centre = p
        if jtype == D6 or jtype == DISTANCE:
            centre = sim.transform_point(X_wj, sim.transform_get_translation(X_j))
        turned = q_wj
        for i in range(n):
            sw = sim.vec3()
            sv = sim.vec3()
            if jtype == D6:
                axis = m_joint_axis[d0 + i]
                if i < linear:
                    sv = sim.quat_rotate(q_wj, axis)
                else:
                    sw = sim.quat_rotate(turned, axis)
                    sv = sim.cross(centre, sw)
                    turned = turned * sim.quat_from_axis_angle(axis, joint_q[
                        m_joint_q_start[k] + i])
            elif jtype == REVOLUTE:
                sw = sim.quat_rotate(q_wj, m_joint_axis[d0])
                sv = sim.cross(p, sw)
            elif jtype == PRISMATIC:
                sv = sim.quat_rotate(q_wj, m_joint_axis[d0])
            elif jtype == BALL:
                e = sim.vec3()
                e[i] = 1.0
                sw = sim.quat_rotate(q_wj, e)
                sv = sim.cross(p, sw)
            elif jtype == DISTANCE:   # slides, then a ball about the moved joint point
                e = sim.vec3()
                e[i % 3] = 1.0
                if i < 3:
                    sv = sim.quat_rotate(q_wj, e)
                else:
                    sw = sim.quat_rotate(q_wj, e)
                    sv = sim.cross(centre, sw)
            else:  # FREE: linear then angular, about the centre of mass
                e = sim.vec3()
                e[i % 3] = 1.0
                if i < 3:
                    sv = e
                else:
                    sw = e
                    sv = sim.cross(c, e)
            s_S_w[d0 + i] = sw
            s_S_v[d0 + i] = sv
            w = w + sw * joint_qd[d0 + i]
            v = v + sv * joint_qd[d0 + i]
        s_v_w[child] = w
        s_v_v[child] = v
        body_qd[child] = sim.spatial_vector(v + sim.cross(w, c), w)


@sim.func(inline=True)
def momentum(mass: float, h: sim.vec3, I: sim.mat33, w: sim.vec3, v: sim.vec3):
    """A spatial inertia (m, h, I) times the motion (w, v): (I w + h x v, m v - h x w)."""
    return I * w + sim.cross(h, v), v * mass - sim.cross(h, w)


@sim.func(inline=True)
def body_inertia_world(m: ArticulationModel, b: int, X: sim.transform):
    # the struct fields once (each use of a field would count references)
    m_body_com = m.body_com
    m_body_inertia = m.body_inertia
    m_body_mass = m.body_mass
    mass = m_body_mass[b]
    c = sim.transform_point(X, m_body_com[b])
    R = sim.quat_to_matrix(sim.transform_get_rotation(X))
    # m [c]x [c]x^T entry by entry (not m (|c|^2 E - c c^T): that cancels in float32 for
    # a body far from the origin, worlds side by side)
    xx = c[0] * c[0]
    yy = c[1] * c[1]
    zz = c[2] * c[2]
    xy = -c[0] * c[1]
    xz = -c[0] * c[2]
    yz = -c[1] * c[2]
    CC = sim.mat33(yy + zz, xy, xz, xy, xx + zz, yz, xz, yz, xx + yy)
    return mass, c * mass, R * m_body_inertia[b] * sim.transpose(R) + CC * mass


@sim.func(inline=True)
def mass_matrix(m: ArticulationModel, scratch: ArticulationScratch, a: int):
    """Articulation *a*'s joint-space mass matrix into ``scratch.H`` at its
    ``H_start``, by the composite-rigid-body algorithm: ``H_ij = S_i . (I^c S_j)`` along
    each joint's path to the root (``I^c`` the composite inertia of the joint's subtree,
    in ``scratch.I_*``; the motion subspaces in ``scratch.S_*``), plus armature on the
    diagonal."""
    # the struct fields once (each use of a field would count references)
    m_H_start = m.H_start
    m_articulation_start = m.articulation_start
    m_joint_armature = m.joint_armature
    m_joint_child = m.joint_child
    m_joint_parent_joint = m.joint_parent_joint
    m_joint_qd_start = m.joint_qd_start
    s_H = scratch.H
    s_I_h = scratch.I_h
    s_I_m = scratch.I_m
    s_I_r = scratch.I_r
    s_S_v = scratch.S_v
    s_S_w = scratch.S_w
    first = m_articulation_start[a]
    last = m_articulation_start[a + 1]
    dof0 = m_joint_qd_start[first]
    dofs = m_joint_qd_start[last] - dof0
    H0 = m_H_start[a]
    for k in range(first, last):
        child = m_joint_child[k]
        d0 = m_joint_qd_start[k]
        n = m_joint_qd_start[k + 1] - d0
        for i in range(n):
            di = d0 + i
            Fn, Ff = momentum(s_I_m[child], s_I_h[child], s_I_r[child],
                              s_S_w[di], s_S_v[di])
            row = di - dof0
            for jj in range(n):
                dj = d0 + jj
                s_H[H0 + row * dofs + dj - dof0] = \
                    sim.dot(s_S_w[dj], Fn) + sim.dot(s_S_v[dj], Ff)
            l = m_joint_parent_joint[k]
            while l >= 0:
                e0 = m_joint_qd_start[l]
                for jj in range(m_joint_qd_start[l + 1] - e0):
                    dj = e0 + jj
                    value = sim.dot(s_S_w[dj], Fn) + sim.dot(s_S_v[dj], Ff)
                    s_H[H0 + row * dofs + dj - dof0] = value
                    s_H[H0 + (dj - dof0) * dofs + row] = value
                l = m_joint_parent_joint[l]
            diag = H0 + row * dofs + row
            s_H[diag] = s_H[diag] + m_joint_armature[di]


@sim.kernel
def featherstone_step_kernel(
        model: ArticulationModel, scratch: ArticulationScratch, body_f: SPATIAL,
        contact_f: SPATIAL, joint_q: FLOATS, joint_qd: FLOATS,
        joint_f: FLOATS, target_q: FLOATS, target_qd: FLOATS, gravity: sim.vec3,
        angular_damping: float, dt: float, substeps: int, joint_q_out: FLOATS,
        joint_qd_out: FLOATS, body_q: TRANSFORMS, body_qd: SPATIAL):
    """*substeps* steps of articulation ``tid()``: the first from ``joint_q/qd``, the
    others from the outputs, in place (``step_frame`` of a frame without contacts: one
    launch instead of one per substep)."""
    a = sim.tid()
    for s in range(substeps):
        q_in = joint_q
        qd_in = joint_qd
        if s > 0:
            q_in = joint_q_out
            qd_in = joint_qd_out
        # (after the first substep, the last one's closing kinematics are of q_in, qd_in)
        articulation_step(model, scratch, a, s > 0, body_f, contact_f, q_in, qd_in, joint_f,
                          target_q, target_qd, gravity, angular_damping, dt, joint_q_out,
                          joint_qd_out, body_q, body_qd)


@sim.func(inline=True)
def distance_limit(m: ArticulationModel, scratch: ArticulationScratch, k: int, row: int,
                   dofs: int, H0: int, joint_q: FLOATS, joint_qd: FLOATS, dt: float):
    """Distance joint *k* (its slides the dofs ``row .. row + 2`` of its articulation):
    outside ``[limit_lower, limit_upper]`` of its first dof, ``|p|`` is pulled back by
    ``limit_ke/kd`` along ``n = p / |p|`` (the generalized force on the slides), its
    stiffness and damping ``(h kd + h^2 ke) n n^T`` added to the mass matrix (implicit)."""
    s_H = scratch.H
    s_rhs = scratch.rhs
    q0 = m.joint_q_start[k]
    d0 = m.joint_qd_start[k]
    p = sim.vec3(joint_q[q0], joint_q[q0 + 1], joint_q[q0 + 2])
    length = sim.length(p)
    stretch = 0.0
    if length > m.joint_limit_upper[d0]:
        stretch = length - m.joint_limit_upper[d0]
    elif length < m.joint_limit_lower[d0]:
        stretch = length - m.joint_limit_lower[d0]
    if stretch != 0.0 and length > 0.0:
        n = p / length
        ke = m.joint_limit_ke[d0]
        kd = m.joint_limit_kd[d0]
        rate = sim.dot(n, sim.vec3(joint_qd[d0], joint_qd[d0 + 1], joint_qd[d0 + 2]))
        force = -(ke * stretch + kd * rate)
        implicit = dt * kd + dt * dt * ke
        for i in range(3):
            s_rhs[d0 + i] = s_rhs[d0 + i] + force * n[i]
            for j in range(3):
                e = H0 + (row + i) * dofs + row + j
                s_H[e] = s_H[e] + implicit * n[i] * n[j]


@sim.func(inline=True)
def articulation_step(
        m: ArticulationModel, scratch: ArticulationScratch, a: int, kinematics_done: bool,
        body_f: SPATIAL,
        contact_f: SPATIAL, joint_q: FLOATS, joint_qd: FLOATS, joint_f: FLOATS,
        target_q: FLOATS, target_qd: FLOATS, gravity: sim.vec3, angular_damping: float,
        dt: float, joint_q_out: FLOATS, joint_qd_out: FLOATS, body_q: TRANSFORMS,
        body_qd: SPATIAL):
    """One step of articulation *a* (the module docstring's 1-6); *kinematics_done*: the
    body poses, motion subspaces and velocities of *joint_q*, *joint_qd* are in place."""
    # the struct fields once (each use of a field would count references)
    m_H_start = m.H_start
    m_articulation_start = m.articulation_start
    m_body_com = m.body_com
    m_joint_X_c = m.joint_X_c
    m_joint_X_p = m.joint_X_p
    m_joint_child = m.joint_child
    m_joint_limit_kd = m.joint_limit_kd
    m_joint_limit_ke = m.joint_limit_ke
    m_joint_limit_lower = m.joint_limit_lower
    m_joint_limit_upper = m.joint_limit_upper
    m_joint_parent = m.joint_parent
    m_joint_q_start = m.joint_q_start
    m_joint_qd_start = m.joint_qd_start
    m_joint_target_kd = m.joint_target_kd
    m_joint_target_ke = m.joint_target_ke
    m_joint_type = m.joint_type
    s_H = scratch.H
    s_I_h = scratch.I_h
    s_I_m = scratch.I_m
    s_I_r = scratch.I_r
    s_S_v = scratch.S_v
    s_S_w = scratch.S_w
    s_a_v = scratch.a_v
    s_a_w = scratch.a_w
    s_f_f = scratch.f_f
    s_f_n = scratch.f_n
    s_qdd = scratch.qdd
    s_rhs = scratch.rhs
    s_v_v = scratch.v_v
    s_v_w = scratch.v_w
    s_X_l = scratch.X_l
    first = m_articulation_start[a]
    last = m_articulation_start[a + 1]
    dof0 = m_joint_qd_start[first]
    dofs = m_joint_qd_start[last] - dof0
    H0 = m_H_start[a]
    # 1. kinematics, velocities, bias accelerations and forces, root to leaves
    if not kinematics_done:
        forward_kinematics(m, first, last, joint_q, joint_qd, body_q, body_qd, scratch)
    for k in range(first, last):
        jtype = m_joint_type[k]
        parent = m_joint_parent[k]
        child = m_joint_child[k]
        d0 = m_joint_qd_start[k]
        aw = sim.vec3()
        av = -gravity
        pw = sim.vec3()
        pv = sim.vec3()
        if parent >= 0:
            aw = s_a_w[parent]
            av = s_a_v[parent]
            pw = s_v_w[parent]
            pv = s_v_v[parent]
        cw = s_v_w[child]
        cv = s_v_v[child]
        X = s_X_l[child]                              # (about the origin)
        c = sim.transform_point(X, m_body_com[child])
        c_dot = cv + sim.cross(cw, c)
        for i in range(m_joint_qd_start[k + 1] - d0):
            sw = s_S_w[d0 + i]
            sv = s_S_v[d0 + i]
            qd = joint_qd[d0 + i]
            if jtype == FREE:
                if i >= 3:   # d/dt (e, c x e) = (0, c' x e)
                    av = av + sim.cross(c_dot, sw) * qd
            else:        # S moves with the parent: dS/dt = v_parent x S
                aw = aw + sim.cross(pw, sw) * qd
                av = av + (sim.cross(pw, sv) + sim.cross(pv, sw)) * qd
                if jtype == D6 or (jtype == DISTANCE and i < 3):
                    # and a D6's axis with the dofs before it (its frame's), a distance
                    # joint's ball centre with its slides
                    pw = pw + sw * qd
                    pv = pv + sv * qd
        s_a_w[child] = aw
        s_a_v[child] = av
        mass, h, I = body_inertia_world(m, child, X)
        s_I_m[child] = mass
        s_I_h[child] = h
        s_I_r[child] = I
        fn, ff = momentum(mass, h, I, aw, av)
        ln, lf = momentum(mass, h, I, cw, cv)
        fn = fn + sim.cross(cw, ln) + sim.cross(cv, lf)
        ff = ff + sim.cross(cw, lf)
        ext = body_f[child] + contact_f[child]
        contact_f[child] = sim.spatial_vector()   # (accumulated anew each step)
        force = sim.spatial_top(ext)
        fn = fn - sim.spatial_bottom(ext) - sim.cross(c, force)
        ff = ff - force
        s_f_n[child] = fn
        s_f_f[child] = ff
    # 2. bias forces and composite inertias, leaves to root
    for kk in range(last - first):
        k = last - 1 - kk
        parent = m_joint_parent[k]
        child = m_joint_child[k]
        d0 = m_joint_qd_start[k]
        fn = s_f_n[child]
        ff = s_f_f[child]
        for i in range(m_joint_qd_start[k + 1] - d0):
            s_rhs[d0 + i] = -(sim.dot(s_S_w[d0 + i], fn) +
                                    sim.dot(s_S_v[d0 + i], ff))
        if parent >= 0:
            s_f_n[parent] = s_f_n[parent] + fn
            s_f_f[parent] = s_f_f[parent] + ff
            s_I_m[parent] = s_I_m[parent] + s_I_m[child]
            s_I_h[parent] = s_I_h[parent] + s_I_h[child]
            s_I_r[parent] = s_I_r[parent] + s_I_r[child]
    # 3. the mass matrix (composite rigid bodies, armature), drives, limits
    mass_matrix(m, scratch, a)
    for k in range(first, last):
        d0 = m_joint_qd_start[k]
        jtype = m_joint_type[k]
        for i in range(m_joint_qd_start[k + 1] - d0):
            di = d0 + i
            row = di - dof0
            diag = H0 + row * dofs + row
            tau = joint_f[di]
            if jtype == REVOLUTE or jtype == PRISMATIC or jtype == D6:
                q = joint_q[m_joint_q_start[k] + i]
                qd = joint_qd[di]
                ke = m_joint_target_ke[di]
                kd = m_joint_target_kd[di]
                tau = tau + ke * (target_q[di] - q) + kd * (target_qd[di] - qd)
                stiff = ke
                damp = kd
                bound = q
                if q < m_joint_limit_lower[di]:
                    bound = m_joint_limit_lower[di]
                elif q > m_joint_limit_upper[di]:
                    bound = m_joint_limit_upper[di]
                if bound != q:
                    tau = tau + m_joint_limit_ke[di] * (bound - q) - m_joint_limit_kd[di] * qd
                    stiff = stiff + m_joint_limit_ke[di]
                    damp = damp + m_joint_limit_kd[di]
                s_H[diag] = s_H[diag] + dt * damp + dt * dt * stiff
            s_rhs[di] = s_rhs[di] + tau
        if jtype == DISTANCE:
            distance_limit(m, scratch, k, d0 - dof0, dofs, H0, joint_q, joint_qd, dt)
    # 4. Cholesky: H = L L^T in place (lower triangle), then L L^T qdd = rhs
    for j in range(dofs):
        s = s_H[H0 + j * dofs + j]
        for k in range(j):
            s = s - s_H[H0 + j * dofs + k] * s_H[H0 + j * dofs + k]
        ljj = sim.sqrt(sim.max(s, 1.0e-20))
        s_H[H0 + j * dofs + j] = ljj
        for i in range(j + 1, dofs):
            s = s_H[H0 + i * dofs + j]
            for k in range(j):
                s = s - s_H[H0 + i * dofs + k] * s_H[H0 + j * dofs + k]
            s_H[H0 + i * dofs + j] = s / ljj
    for i in range(dofs):
        s = s_rhs[dof0 + i]
        for k in range(i):
            s = s - s_H[H0 + i * dofs + k] * s_qdd[dof0 + k]
        s_qdd[dof0 + i] = s / s_H[H0 + i * dofs + i]
    for ii in range(dofs):
        i = dofs - 1 - ii
        s = s_qdd[dof0 + i]
        for k in range(i + 1, dofs):
            s = s - s_H[H0 + k * dofs + i] * s_qdd[dof0 + k]
        s_qdd[dof0 + i] = s / s_H[H0 + i * dofs + i]
    # 5. integrate the joint coordinates
    for k in range(first, last):
        jtype = m_joint_type[k]
        d0 = m_joint_qd_start[k]
        q0 = m_joint_q_start[k]
        n = m_joint_qd_start[k + 1] - d0
        for i in range(n):
            qd = joint_qd[d0 + i] + s_qdd[d0 + i] * dt
            if (jtype == BALL or ((jtype == FREE or jtype == DISTANCE) and i >= 3)) and \
                    angular_damping > 0.0:
                qd = qd * (1.0 - angular_damping * dt)
            joint_qd_out[d0 + i] = qd
        if jtype == REVOLUTE or jtype == PRISMATIC or jtype == D6:
            for i in range(n):
                joint_q_out[q0 + i] = joint_q[q0 + i] + joint_qd_out[d0 + i] * dt
        elif jtype == BALL or jtype == DISTANCE:
            r0 = q0
            w0 = d0
            if jtype == DISTANCE:      # the slides, then the rotation as a ball's
                for i in range(3):
                    joint_q_out[q0 + i] = joint_q[q0 + i] + joint_qd_out[d0 + i] * dt
                r0 = q0 + 3
                w0 = d0 + 3
            q = integrate_rotation(
                sim.quat(joint_q[r0], joint_q[r0 + 1], joint_q[r0 + 2], joint_q[r0 + 3]),
                sim.vec3(joint_qd_out[w0], joint_qd_out[w0 + 1], joint_qd_out[w0 + 2]), dt)
            for i in range(4):
                joint_q_out[r0 + i] = q[i]
        elif jtype == FREE:
            # the child's centre of mass and rotation by their rates, back to (p, q)
            # (relative to the articulation's origin)
            child = m_joint_child[k]
            X = s_X_l[child]
            com = m_body_com[child]
            v = sim.vec3(joint_qd_out[d0], joint_qd_out[d0 + 1], joint_qd_out[d0 + 2])
            w = sim.vec3(joint_qd_out[d0 + 3], joint_qd_out[d0 + 4], joint_qd_out[d0 + 5])
            rot = integrate_rotation(sim.transform_get_rotation(X), w, dt)
            c = sim.transform_point(X, com) + v * dt
            X_wc = sim.transform(c - sim.quat_rotate(rot, com), rot)
            X_j = sim.transform_inverse(local_joint_frame(
                m_joint_parent[k], s_X_l, m_joint_X_p[k], articulation_origin(m, first))) * \
                X_wc * m_joint_X_c[k]
            p = sim.transform_get_translation(X_j)
            r = sim.transform_get_rotation(X_j)
            for i in range(3):
                joint_q_out[q0 + i] = p[i]
            for i in range(4):
                joint_q_out[q0 + 3 + i] = r[i]
    # 6. poses and velocities of the new coordinates
    forward_kinematics(m, first, last, joint_q_out, joint_qd_out, body_q, body_qd, scratch)


@sim.kernel
def eval_fk_kernel(model: ArticulationModel, scratch: ArticulationScratch, joint_q: FLOATS,
                   joint_qd: FLOATS, body_q: TRANSFORMS, body_qd: SPATIAL):
    a = sim.tid()
    forward_kinematics(model, model.articulation_start[a], model.articulation_start[a + 1],
                       joint_q, joint_qd, body_q, body_qd, scratch)


@sim.func
def d6_inverse(axes: VEC3, d0: int, linear: int, dofs: int, q_wj: sim.quat, p: sim.vec3,
               r: sim.quat, v_rel: sim.vec3, w_rel: sim.vec3, joint_q: FLOATS, q0: int,
               joint_qd: FLOATS):
    """A D6 joint's coordinates and velocities from the child joint frame's pose (*p*,
    *r*) in the parent's and the relative velocity of the joint point and angular
    velocity (world): slides along the linear axes; the angles of ``d6_motion``'s
    rotations (one axis: the twist; two or three: the Euler angles about the axes in
    order, read in the basis (a0, a1, a0 x a1)); the angular velocities by solving
    ``w_rel = sum S_w qd`` over the turned axes."""
    for i in range(linear):
        joint_q[q0 + i] = sim.dot(p, axes[d0 + i])
        joint_qd[d0 + i] = sim.dot(v_rel, sim.quat_rotate(q_wj, axes[d0 + i]))
    angular = dofs - linear
    a = d0 + linear
    if angular == 1:
        angle = 2.0 * sim.atan2(sim.dot(sim.vec3(r[0], r[1], r[2]), axes[a]), r[3])
        if angle > sim.pi:
            angle = angle - 2.0 * sim.pi
        elif angle < -sim.pi:
            angle = angle + 2.0 * sim.pi
        joint_q[q0 + linear] = angle
        joint_qd[a] = sim.dot(w_rel, sim.quat_rotate(q_wj, axes[a]))
    elif angular >= 2:
        angles = d6_euler_angles(r, axes, a, angular)
        turned = q_wj
        columns = sim.mat33()
        for k in range(angular):
            c = sim.quat_rotate(turned, axes[a + k])
            for i in range(3):
                columns[i, k] = c[i]
            turned = turned * sim.quat_from_axis_angle(axes[a + k], angles[k])
        rates = sim.vec3()
        if angular == 3:
            rates = sim.inverse(columns) * w_rel
        else:   # two columns: the normal equations
            c0 = sim.vec3(columns[0, 0], columns[1, 0], columns[2, 0])
            c1 = sim.vec3(columns[0, 1], columns[1, 1], columns[2, 1])
            g00 = sim.dot(c0, c0)
            g01 = sim.dot(c0, c1)
            g11 = sim.dot(c1, c1)
            b0 = sim.dot(c0, w_rel)
            b1 = sim.dot(c1, w_rel)
            det = g00 * g11 - g01 * g01
            rates = sim.vec3((g11 * b0 - g01 * b1) / det, (g00 * b1 - g01 * b0) / det, 0.0)
        for k in range(angular):
            joint_q[q0 + linear + k] = angles[k]
            joint_qd[a + k] = rates[k]


@sim.kernel
def eval_ik_kernel(model: ArticulationModel, body_q: TRANSFORMS, body_qd: SPATIAL,
                   joint_q: FLOATS, joint_qd: FLOATS):
    """Thread *j*: joint *j*'s coordinates and velocities from the bodies' poses and
    velocities (the inverse of ``forward_kinematics``: the child joint frame's pose in
    the parent's, read as the joint type's coordinates)."""
    j = sim.tid()
    m = model
    m_body_com = m.body_com
    m_joint_X_c = m.joint_X_c
    m_joint_X_p = m.joint_X_p
    m_joint_axis = m.joint_axis
    m_joint_child = m.joint_child
    m_joint_parent = m.joint_parent
    m_joint_q_start = m.joint_q_start
    m_joint_qd_start = m.joint_qd_start
    m_joint_type = m.joint_type
    jtype = m_joint_type[j]
    parent = m_joint_parent[j]
    child = m_joint_child[j]
    d0 = m_joint_qd_start[j]
    q0 = m_joint_q_start[j]
    X_wj = parent_joint_frame(parent, body_q, m_joint_X_p[j])
    X_wc = body_q[child] * m_joint_X_c[j]
    X = sim.transform_inverse(X_wj) * X_wc
    q_wj = sim.transform_get_rotation(X_wj)
    # world velocities of the child and the parent at the child's joint point
    point = sim.transform_get_translation(X_wc)
    qd_c = body_qd[child]
    w_c = sim.spatial_bottom(qd_c)
    v_c = sim.spatial_top(qd_c) + sim.cross(w_c, point - sim.transform_point(body_q[child],
                                                                            m_body_com[child]))
    w_p = sim.vec3()
    v_p = sim.vec3()
    if parent >= 0:
        qd_p = body_qd[parent]
        w_p = sim.spatial_bottom(qd_p)
        v_p = sim.spatial_top(qd_p) + sim.cross(
            w_p, point - sim.transform_point(body_q[parent], m_body_com[parent]))
    r = sim.transform_get_rotation(X)
    p = sim.transform_get_translation(X)
    if jtype == REVOLUTE:
        axis = m_joint_axis[d0]
        angle = 2.0 * sim.atan2(sim.dot(sim.vec3(r[0], r[1], r[2]), axis), r[3])
        if angle > sim.pi:
            angle = angle - 2.0 * sim.pi
        elif angle < -sim.pi:
            angle = angle + 2.0 * sim.pi
        joint_q[q0] = angle
        joint_qd[d0] = sim.dot(w_c - w_p, sim.quat_rotate(q_wj, axis))
    elif jtype == PRISMATIC:
        axis = m_joint_axis[d0]
        joint_q[q0] = sim.dot(p, axis)
        joint_qd[d0] = sim.dot(v_c - v_p, sim.quat_rotate(q_wj, axis))
    elif jtype == BALL:
        for i in range(4):
            joint_q[q0 + i] = r[i]
        w = sim.quat_rotate_inv(q_wj, w_c - w_p)
        for i in range(3):
            joint_qd[d0 + i] = w[i]
    elif jtype == D6:
        d6_inverse(m_joint_axis, d0, m.joint_linear_dofs[j], m_joint_qd_start[j + 1] - d0,
                   q_wj, p, r, v_c - v_p, w_c - w_p, joint_q, q0, joint_qd)
    elif jtype == DISTANCE:
        v = sim.quat_rotate_inv(q_wj, v_c - v_p)     # the rate of p (parent joint frame)
        w = sim.quat_rotate_inv(q_wj, w_c - w_p)
        for i in range(3):
            joint_q[q0 + i] = p[i]
            joint_qd[d0 + i] = v[i]
            joint_qd[d0 + 3 + i] = w[i]
        for i in range(4):
            joint_q[q0 + 3 + i] = r[i]
    elif jtype == FREE:
        for i in range(3):
            joint_q[q0 + i] = p[i]
        for i in range(4):
            joint_q[q0 + 3 + i] = r[i]
        v = sim.spatial_top(qd_c)
        for i in range(3):
            joint_qd[d0 + i] = v[i]
            joint_qd[d0 + 3 + i] = w_c[i]
