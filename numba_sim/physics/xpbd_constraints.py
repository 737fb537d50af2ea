"""The XPBD solver's constraints (Macklin, Müller, Chentanez 2016), once, as
``@sim.func``s, and the kernels that run them.

Every constraint function takes the values it reads (positions, inverse
masses, rest state, its multiplier) and returns its position corrections and
the change of its multiplier.  The fused serial substep of small CPU models
applies each correction at once, in the order of the constraint arrays
(Gauss-Seidel); the one-thread-per-constraint kernels (CUDA, large CPU models)
add them atomically into ``delta``, applied after each pass (Jacobi).

* distance (springs): compliance ``1 / ke``, damping ``kd`` as in XPBD's
  section 3.5 (``gamma = kd / (ke dt)``);
* bending edges: the dihedral angle toward its rest value, compliance ``1 / edge_ke``;
* tetrahedra: stable neo-Hookean as two constraints (Macklin & Müller 2021, "A
  constraint-based formulation of stable neo-Hookean materials"): deviatoric
  ``C_D = |F|_F`` with compliance ``1 / (k_mu V0)`` and hydrostatic
  ``C_H = det F - (1 + k_mu / k_lambda)`` with compliance ``1 / (k_lambda V0)``
  (warp.sim's XPBD ignored ``k_mu`` and ``k_lambda``);
* contacts with shapes and between particles: non-penetration, and positional
  Coulomb friction (Müller et al. 2020): the tangential displacement of the
  substep is cancelled up to ``mu`` times the normal correction.
"""

import numba_sim as sim
from numba_sim.physics import batched
from numba_sim.physics import forces
from numba_sim.physics.batched import LANES, ROW4, ROW7, ROW12, ROW13, ROW16
from numba_sim.physics.kernels import VEC3, FLOATS, INTS, INTS2, FLOATS2, FLAGS


@sim.func(inline=True)
def predict_particle(x0: sim.vec3, v0: sim.vec3, f: sim.vec3, w: float, active: bool,
                     gravity: sim.vec3, dt: float):
    """The unconstrained velocity ``v* = v + (f / m + g) dt`` and position
    ``x* = x + v* dt`` of a particle, as (x*, v*)."""
    v = sim.vec3()
    if active:
        v = v0
        if w > 0.0:
            v = v0 + (f * w + gravity) * dt
    return x0 + v * dt, v


@sim.func(inline=True)
def finish_particle(x: sim.vec3, x_pred: sim.vec3, v_pred: sim.vec3, active: bool, dt: float,
                    v_max: float):
    """The velocity of the substep, ``(x - x0) / dt`` written as ``v* + (x - x*) / dt``
    (exact for unconstrained particles in float32, where ``(x - x0) / dt`` loses digits),
    clamped to v_max."""
    v = sim.vec3()
    if active:
        v = v_pred + (x - x_pred) / dt
        speed = sim.length(v)
        if speed > v_max:
            v = v * (v_max / speed)
    return v


@sim.func(inline=True)
def distance_correction(xi: sim.vec3, xj: sim.vec3, x0i: sim.vec3, x0j: sim.vec3, wi: float,
                        wj: float, rest: float, ke: float, kd: float, dt: float, lam: float):
    """(dx_i, dx_j, dlambda) of a compliant distance constraint (compliance 1 / ke), with
    XPBD damping ``gamma = kd / (ke dt)`` on the displacement of the substep so far.

    ``dlambda = -(c + alpha lam + gamma moved) / ((1 + gamma)(wi + wj) + alpha)`` with
    ``alpha = 1 / (ke dt^2)``, its numerator and denominator multiplied by ``ke dt^2``
    (one division instead of three: Gauss-Seidel waits for each correction)."""
    xij = xi - xj
    length = sim.length(xij)
    dxi = sim.vec3()
    dxj = sim.vec3()
    dlambda = 0.0
    if length > 0.0 and wi + wj > 0.0 and ke > 0.0:
        n = xij * (1.0 / length)
        c = length - rest
        k_dt2 = ke * dt * dt
        kd_dt = kd * dt
        numerator = k_dt2 * c + lam
        if kd_dt != 0.0:  # (often 0: the motion of the substep is not needed)
            numerator = numerator + kd_dt * sim.dot(n, (xi - x0i) - (xj - x0j))
        dlambda = -numerator / ((k_dt2 + kd_dt) * (wi + wj) + 1.0)
        dxi = n * (wi * dlambda)
        dxj = n * (-wj * dlambda)
    return dxi, dxj, dlambda


@sim.func(inline=True)
def bending_correction(x1: sim.vec3, x2: sim.vec3, x3: sim.vec3, x4: sim.vec3, w1: float,
                       w2: float, w3: float, w4: float, rest: float, ke: float, dt: float,
                       lam: float):
    """(dx1, dx2, dx3, dx4, dlambda) of a bending edge: the signed dihedral angle across
    x3-x4 toward *rest*, compliance 1 / ke (``alpha = 1 / (ke dt^2)``; ``dlambda``'s
    numerator and denominator multiplied by ``ke dt^2``, one division fewer)."""
    d1 = sim.vec3()
    d2 = sim.vec3()
    d3 = sim.vec3()
    d4 = sim.vec3()
    dlambda = 0.0
    valid, angle, e_length, g1, g2, g3, g4 = forces.dihedral_angle(x1, x2, x3, x4)
    if valid and ke > 0.0:
        denominator = w1 * sim.dot(g1, g1) + w2 * sim.dot(g2, g2) + w3 * sim.dot(g3, g3) \
            + w4 * sim.dot(g4, g4)
        if denominator > 0.0:
            k_dt2 = ke * dt * dt
            dlambda = -(k_dt2 * (angle - rest) + lam) / (k_dt2 * denominator + 1.0)
            d1 = g1 * (w1 * dlambda)
            d2 = g2 * (w2 * dlambda)
            d3 = g3 * (w3 * dlambda)
            d4 = g4 * (w4 * dlambda)
    return d1, d2, d3, d4, dlambda


@sim.func(inline=True)
def tet_correction(dm: sim.mat33, c: float, dcdf: sim.mat33, w0: float, w1: float, w2: float,
                   w3: float, alpha: float, lam: float):
    """(dx0, dx1, dx2, dx3, dlambda) of one constraint of a tetrahedron, its gradient
    given with respect to F = Ds Dm."""
    dp = dcdf * sim.transpose(dm)
    g1 = sim.vec3(dp[0, 0], dp[1, 0], dp[2, 0])
    g2 = sim.vec3(dp[0, 1], dp[1, 1], dp[2, 1])
    g3 = sim.vec3(dp[0, 2], dp[1, 2], dp[2, 2])
    g0 = -(g1 + g2 + g3)
    w = w0 * sim.dot(g0, g0) + w1 * sim.dot(g1, g1) + w2 * sim.dot(g2, g2) + w3 * sim.dot(g3, g3)
    dlambda = 0.0
    if w > 0.0:
        dlambda = -(c + alpha * lam) / (w + alpha)
    return g0 * (w0 * dlambda), g1 * (w1 * dlambda), g2 * (w2 * dlambda), g3 * (w3 * dlambda), \
        dlambda


@sim.func(inline=True)
def tet_deviatoric(x0: sim.vec3, x1: sim.vec3, x2: sim.vec3, x3: sim.vec3, w0: float, w1: float,
                   w2: float, w3: float, dm: sim.mat33, k_mu: float, dt: float, lam: float):
    """The deviatoric constraint ``C_D = |F|`` (compliance 1 / (k_mu V0))."""
    F = sim.matrix_from_cols(x1 - x0, x2 - x0, x3 - x0) * dm
    norm = sim.sqrt(sim.dot(F[0], F[0]) + sim.dot(F[1], F[1]) + sim.dot(F[2], F[2]))
    d0 = sim.vec3()
    d1 = sim.vec3()
    d2 = sim.vec3()
    d3 = sim.vec3()
    dlambda = 0.0
    if k_mu > 0.0 and norm > 0.0:
        rest_volume = 1.0 / (sim.determinant(dm) * 6.0)
        alpha = 1.0 / (k_mu * rest_volume * dt * dt)
        d0, d1, d2, d3, dlambda = tet_correction(dm, norm, F * (1.0 / norm), w0, w1, w2, w3,
                                                 alpha, lam)
    return d0, d1, d2, d3, dlambda


@sim.func(inline=True)
def tet_hydrostatic(x0: sim.vec3, x1: sim.vec3, x2: sim.vec3, x3: sim.vec3, w0: float,
                    w1: float, w2: float, w3: float, dm: sim.mat33, k_mu: float, k_lambda: float,
                    act: float, dt: float, lam: float):
    """The hydrostatic constraint ``C_H = det F - (1 + k_mu / k_lambda - act)`` (compliance
    1 / (k_lambda V0))."""
    F = sim.matrix_from_cols(x1 - x0, x2 - x0, x3 - x0) * dm
    f1 = sim.vec3(F[0, 0], F[1, 0], F[2, 0])
    f2 = sim.vec3(F[0, 1], F[1, 1], F[2, 1])
    f3 = sim.vec3(F[0, 2], F[1, 2], F[2, 2])
    c = sim.determinant(F) - (1.0 + k_mu / k_lambda - act)
    dcdf = sim.matrix_from_cols(sim.cross(f2, f3), sim.cross(f3, f1), sim.cross(f1, f2))
    rest_volume = 1.0 / (sim.determinant(dm) * 6.0)
    alpha = 1.0 / (k_lambda * rest_volume * dt * dt)
    return tet_correction(dm, c, dcdf, w0, w1, w2, w3, alpha, lam)


@sim.func(inline=True)
def contact_correction(n: sim.vec3, c: float, moved: sim.vec3, mu: float):
    """Correction of a particle with penetration c < 0 along n: out of the surface, and
    friction cancelling the tangential motion *moved* up to ``mu |c|``."""
    tangential = moved - n * sim.dot(n, moved)
    slide = sim.length(tangential)
    correction = -n * c
    if slide > 0.0:
        correction = correction - tangential * (sim.min(mu * (-c), slide) / slide)
    return correction


@sim.func
def solve_particle_contacts(tid: int, grid: sim.uint64, x: sim.array(dtype=sim.vec3),
                            x0: sim.array(dtype=sim.vec3), inv_mass: sim.array(dtype=float),
                            radius: sim.array(dtype=float), flags: sim.array(dtype=sim.uint32),
                            world: sim.array(dtype=sim.int32), mu: float, max_radius: float,
                            delta: sim.array(dtype=sim.vec3)):
    i = sim.hash_grid_point_id(grid, tid)
    if i >= 0:
        w1 = inv_mass[i]
        if (flags[i] & sim.uint32(1)) != sim.uint32(0) and w1 > 0.0:
            xi = x[i]
            r = radius[i]
            total = sim.vec3()
            for j in sim.hash_grid_query(grid, xi, r + max_radius):
                if j != i and world[j] == world[i] and (flags[j] & sim.uint32(1)) != sim.uint32(0):
                    d_vec = xi - x[j]
                    d = sim.length(d_vec)
                    depth = d - r - radius[j]
                    if depth < 0.0 and d > 0.0:
                        # each particle of the pair takes its share w_i / (w_i + w_j)
                        share = w1 / (w1 + inv_mass[j])
                        moved = (xi - x0[i]) - (x[j] - x0[j])
                        total = total + contact_correction(d_vec / d, depth, moved, mu) * share
            delta[i] += total


# ---------------------------------------------------------------------------- kernels

@sim.kernel
def predict_kernel(q: VEC3, qd: VEC3, f_ext: VEC3, inv_mass: FLOATS, flags: FLAGS,
                   gravity: sim.vec3, dt: float, x0_out: VEC3, x_out: VEC3, x_pred: VEC3,
                   qd_out: VEC3):
    """``q`` into ``x0_out``, x* into ``x_out`` and ``x_pred``, v* into ``qd_out`` (``q``
    may be ``x_out``: each thread reads its particle before writing it)."""
    i = sim.tid()
    q0 = q[i]
    x, v = predict_particle(q0, qd[i], f_ext[i], inv_mass[i],
                            (flags[i] & sim.uint32(1)) != sim.uint32(0), gravity, dt)
    x0_out[i] = q0
    x_out[i] = x
    x_pred[i] = x
    qd_out[i] = v


@sim.kernel
def zero_lambdas_kernel(spring_lambdas: FLOATS, edge_lambdas: FLOATS, tet_lambdas: FLOATS2):
    """The multipliers start each substep at zero (one thread per index of the longest)."""
    i = sim.tid()
    if i < spring_lambdas.shape[0]:
        spring_lambdas[i] = 0.0
    if i < edge_lambdas.shape[0]:
        edge_lambdas[i] = 0.0
    if i < tet_lambdas.shape[0]:
        tet_lambdas[i, 0] = 0.0
        tet_lambdas[i, 1] = 0.0


@sim.kernel
def distance_kernel(x: VEC3, x0: VEC3, inv_mass: FLOATS, indices: INTS, rest: FLOATS,
                    stiffness: FLOATS, damping: FLOATS, dt: float, lambdas: FLOATS,
                    lambdas_out: FLOATS, delta: VEC3):
    """``lambdas_out`` may be ``lambdas`` (updated in place; a fresh array under a tape)."""
    s = sim.tid()
    i = indices[s * 2]
    j = indices[s * 2 + 1]
    dxi, dxj, dl = distance_correction(x[i], x[j], x0[i], x0[j], inv_mass[i], inv_mass[j],
                                       rest[s], stiffness[s], damping[s], dt, lambdas[s])
    lambdas_out[s] = lambdas[s] + dl
    delta[i] += dxi
    delta[j] += dxj


@sim.kernel
def bending_constraint_kernel(x: VEC3, inv_mass: FLOATS, indices: INTS2, rest: FLOATS,
                              properties: FLOATS2, dt: float, lambdas: FLOATS,
                              lambdas_out: FLOATS, delta: VEC3):
    """``lambdas_out`` may be ``lambdas`` (as distance_kernel)."""
    e = sim.tid()
    i = indices[e, 0]
    j = indices[e, 1]
    k = indices[e, 2]
    l = indices[e, 3]
    d1, d2, d3, d4, dl = bending_correction(x[i], x[j], x[k], x[l], inv_mass[i], inv_mass[j],
                                            inv_mass[k], inv_mass[l], rest[e], properties[e, 0],
                                            dt, lambdas[e])
    lambdas_out[e] = lambdas[e] + dl
    delta[i] += d1
    delta[j] += d2
    delta[k] += d3
    delta[l] += d4


@sim.func(inline=True)
def batched_jacobi(x: VEC3, x0: VEC3, inv_mass: FLOATS, spring_indices: INTS,
                   spring_rest: FLOATS, spring_stiffness: FLOATS, spring_damping: FLOATS,
                   edge_indices: INTS2, edge_rest: FLOATS, edge_properties: FLOATS2, dt: float,
                   spring_lambdas: FLOATS, edge_lambdas: FLOATS, s: batched.Scratch,
                   delta: VEC3):
    """``distance_kernel`` and then ``bending_constraint_kernel`` on one thread, each as
    gather, a compute loop LLVM vectorizes, and scatter (batched.py): the same functions
    and the same sums in the same order as those kernels run serially."""
    springs = spring_indices.shape[0] // 2
    damped = int(0)
    for k in range(springs):
        i = spring_indices[k * 2]
        j = spring_indices[k * 2 + 1]
        if spring_damping[k] != 0.0:
            damped = 1
        xi = x[i]
        xj = x[j]
        batched.put_lanes12(s.spring_in, k // LANES, k % LANES,
                            ROW12(xi[0], xi[1], xi[2], xj[0], xj[1], xj[2], inv_mass[i],
                                  inv_mass[j], spring_rest[k], spring_stiffness[k],
                                  spring_lambdas[k], 0.0))
    zero = sim.vec3()
    for block in range(batched.blocks(s.spring_in, 12)):
        for lane in range(LANES):  # undamped (kd = 0: x0 not read); vectorized
            a = batched.get_lanes12(s.spring_in, block, lane)
            dxi, dxj, dl = distance_correction(sim.vec3(a[0], a[1], a[2]),
                                               sim.vec3(a[3], a[4], a[5]), zero, zero, a[6],
                                               a[7], a[8], a[9], 0.0, dt, a[10])
            batched.put_lanes7(s.spring_out, block, lane,
                               ROW7(dxi[0], dxi[1], dxi[2], dxj[0], dxj[1], dxj[2], dl))
    if damped != 0:  # again with the damping (scalar)
        for k in range(springs):
            a = batched.get_lanes12(s.spring_in, k // LANES, k % LANES)
            i = spring_indices[k * 2]
            j = spring_indices[k * 2 + 1]
            dxi, dxj, dl = distance_correction(sim.vec3(a[0], a[1], a[2]),
                                               sim.vec3(a[3], a[4], a[5]), x0[i], x0[j], a[6],
                                               a[7], a[8], a[9], spring_damping[k], dt, a[10])
            batched.put_lanes7(s.spring_out, k // LANES, k % LANES,
                               ROW7(dxi[0], dxi[1], dxi[2], dxj[0], dxj[1], dxj[2], dl))
    for k in range(springs):
        r = batched.get_lanes7(s.spring_out, k // LANES, k % LANES)
        i = spring_indices[k * 2]
        j = spring_indices[k * 2 + 1]
        spring_lambdas[k] = spring_lambdas[k] + r[6]
        delta[i] = delta[i] + sim.vec3(r[0], r[1], r[2])
        delta[j] = delta[j] + sim.vec3(r[3], r[4], r[5])
    edges = edge_indices.shape[0]
    for e in range(edges):
        x1 = x[edge_indices[e, 0]]
        x2 = x[edge_indices[e, 1]]
        x3 = x[edge_indices[e, 2]]
        x4 = x[edge_indices[e, 3]]
        batched.put_lanes16(s.bend_in, e // LANES, e % LANES,
                            ROW16(x1[0], x1[1], x1[2], x2[0], x2[1], x2[2], x3[0], x3[1],
                                  x3[2], x4[0], x4[1], x4[2], inv_mass[edge_indices[e, 0]],
                                  inv_mass[edge_indices[e, 1]], inv_mass[edge_indices[e, 2]],
                                  inv_mass[edge_indices[e, 3]]))
        batched.put_lanes4(s.bend_rest, e // LANES, e % LANES,
                           ROW4(edge_rest[e], edge_properties[e, 0], edge_lambdas[e], 0.0))
    for block in range(batched.blocks(s.bend_in, 16)):
        for lane in range(LANES):  # vectorized
            a = batched.get_lanes16(s.bend_in, block, lane)
            b = batched.get_lanes4(s.bend_rest, block, lane)
            d1, d2, d3, d4, dl = bending_correction(
                sim.vec3(a[0], a[1], a[2]), sim.vec3(a[3], a[4], a[5]),
                sim.vec3(a[6], a[7], a[8]), sim.vec3(a[9], a[10], a[11]), a[12], a[13], a[14],
                a[15], b[0], b[1], dt, b[2])
            batched.put_lanes13(s.bend_out, block, lane,
                                ROW13(d1[0], d1[1], d1[2], d2[0], d2[1], d2[2], d3[0], d3[1],
                                      d3[2], d4[0], d4[1], d4[2], dl))
    for e in range(edges):
        r = batched.get_lanes13(s.bend_out, e // LANES, e % LANES)
        edge_lambdas[e] = edge_lambdas[e] + r[12]
        i = edge_indices[e, 0]
        j = edge_indices[e, 1]
        k = edge_indices[e, 2]
        l = edge_indices[e, 3]
        delta[i] = delta[i] + sim.vec3(r[0], r[1], r[2])
        delta[j] = delta[j] + sim.vec3(r[3], r[4], r[5])
        delta[k] = delta[k] + sim.vec3(r[6], r[7], r[8])
        delta[l] = delta[l] + sim.vec3(r[9], r[10], r[11])


@sim.kernel
def batched_jacobi_kernel(x: VEC3, x0: VEC3, inv_mass: FLOATS, spring_indices: INTS,
                          spring_rest: FLOATS, spring_stiffness: FLOATS, spring_damping: FLOATS,
                          edge_indices: INTS2, edge_rest: FLOATS, edge_properties: FLOATS2,
                          dt: float, spring_lambdas: FLOATS, edge_lambdas: FLOATS,
                          s: batched.Scratch, delta: VEC3):
    """One Jacobi pass of the springs and bending edges (``batched_jacobi``)."""
    batched_jacobi(x, x0, inv_mass, spring_indices, spring_rest, spring_stiffness,
                   spring_damping, edge_indices, edge_rest, edge_properties, dt, spring_lambdas,
                   edge_lambdas, s, delta)


@sim.kernel
def batched_substep_kernel(q: VEC3, qd: VEC3, f_ext: VEC3, inv_mass: FLOATS, flags: FLAGS,
                           gravity: sim.vec3, dt: float, spring_indices: INTS,
                           spring_rest: FLOATS, spring_stiffness: FLOATS,
                           spring_damping: FLOATS, edge_indices: INTS2, edge_rest: FLOATS,
                           edge_properties: FLOATS2, iterations: int, v_max: float,
                           x0: VEC3, x_pred: VEC3, spring_lambdas: FLOATS,
                           edge_lambdas: FLOATS, s: batched.Scratch, delta: VEC3, x: VEC3,
                           qd_out: VEC3):
    """A whole Jacobi substep of a model of springs and bending edges on one thread, one
    launch: the loops of predict_kernel, zero_lambdas_kernel, ``iterations`` x
    (batched_jacobi, apply_deltas_kernel) and finish_kernel, in their order (the same bits
    as those launches; a substep of the 21 x 21 XPBD cloth spent ~20% of its time in the
    six small launches' per-thread overheads)."""
    n = q.shape[0]
    for i in range(n):
        q0 = q[i]
        xp, vp = predict_particle(q0, qd[i], f_ext[i], inv_mass[i],
                                  (flags[i] & sim.uint32(1)) != sim.uint32(0), gravity, dt)
        x0[i] = q0
        x[i] = xp
        x_pred[i] = xp
        qd_out[i] = vp
    for k in range(spring_lambdas.shape[0]):
        spring_lambdas[k] = 0.0
    for k in range(edge_lambdas.shape[0]):
        edge_lambdas[k] = 0.0
    for it in range(iterations):
        batched_jacobi(x, x0, inv_mass, spring_indices, spring_rest, spring_stiffness,
                       spring_damping, edge_indices, edge_rest, edge_properties, dt,
                       spring_lambdas, edge_lambdas, s, delta)
        for i in range(n):
            x[i] = x[i] + delta[i]
            delta[i] = sim.vec3()
    for i in range(n):
        qd_out[i] = finish_particle(x[i], x_pred[i], qd_out[i],
                                    (flags[i] & sim.uint32(1)) != sim.uint32(0), dt, v_max)


@sim.kernel
def tetrahedron_constraint_kernel(x: VEC3, inv_mass: FLOATS, indices: INTS2,
                                  poses: sim.array(dtype=sim.mat33), activation: FLOATS,
                                  materials: FLOATS2, dt: float, lambdas: FLOATS2,
                                  lambdas_out: FLOATS2, delta: VEC3):
    """Both constraints from the same positions (Jacobi); ``lambdas_out`` may be
    ``lambdas``."""
    t = sim.tid()
    i = indices[t, 0]
    j = indices[t, 1]
    k = indices[t, 2]
    l = indices[t, 3]
    w0 = inv_mass[i]
    w1 = inv_mass[j]
    w2 = inv_mass[k]
    w3 = inv_mass[l]
    x0 = x[i]
    x1 = x[j]
    x2 = x[k]
    x3 = x[l]
    d0, d1, d2, d3, dl = tet_deviatoric(x0, x1, x2, x3, w0, w1, w2, w3, poses[t],
                                        materials[t, 0], dt, lambdas[t, 0])
    e0, e1, e2, e3, el = tet_hydrostatic(x0, x1, x2, x3, w0, w1, w2, w3, poses[t],
                                         materials[t, 0], materials[t, 1], activation[t], dt,
                                         lambdas[t, 1])
    lambdas_out[t, 0] = lambdas[t, 0] + dl
    lambdas_out[t, 1] = lambdas[t, 1] + el
    delta[i] += d0 + e0
    delta[j] += d1 + e1
    delta[k] += d2 + e2
    delta[l] += d3 + e3


@sim.kernel
def shape_contact_constraint_kernel(x: VEC3, x0: VEC3, inv_mass: FLOATS, radius: FLOATS,
                                    flags: FLAGS, shape_mu: FLOATS, soft_mu: float,
                                    contact_count: INTS, contact_particle: INTS,
                                    contact_shape: INTS, contact_body_pos: VEC3,
                                    contact_normal: VEC3, delta: VEC3):
    c = sim.tid()
    if c < contact_count[0]:
        p = contact_particle[c]
        if (flags[p] & sim.uint32(1)) != sim.uint32(0) and inv_mass[p] > 0.0:
            n = contact_normal[c]
            xp = x[p]
            depth = sim.dot(n, xp - contact_body_pos[c]) - radius[p]
            if depth < 0.0:
                mu = 0.5 * (soft_mu + shape_mu[contact_shape[c]])
                delta[p] += contact_correction(n, depth, xp - x0[p], mu)


@sim.kernel
def particle_contact_constraint_kernel(grid: sim.uint64, x: VEC3, x0: VEC3, inv_mass: FLOATS,
                                       radius: FLOATS, flags: FLAGS, world: INTS, mu: float,
                                       max_radius: float, delta: VEC3):
    solve_particle_contacts(sim.tid(), grid, x, x0, inv_mass, radius, flags, world, mu,
                            max_radius, delta)


@sim.kernel
def apply_deltas_kernel(x: VEC3, delta: VEC3, clear: bool, x_out: VEC3):
    """``x_out = x + delta`` (``x_out`` may be ``x``), then ``delta`` zeroed if *clear*
    (under a tape each iteration has fresh arrays, and nothing is cleared)."""
    i = sim.tid()
    x_out[i] = x[i] + delta[i]
    if clear:
        delta[i] = sim.vec3()


@sim.kernel
def finish_kernel(x: VEC3, x_pred: VEC3, v_pred: VEC3, flags: FLAGS, dt: float, v_max: float,
                  qd_out: VEC3):
    """The velocity of the substep from v* (``v_pred``, which may be ``qd_out``)."""
    i = sim.tid()
    qd_out[i] = finish_particle(x[i], x_pred[i], v_pred[i],
                                (flags[i] & sim.uint32(1)) != sim.uint32(0), dt, v_max)


@sim.struct
class XpbdModel:
    """Everything constant of a model that a fused XPBD substep reads."""

    inv_mass: FLOATS
    flags: FLAGS
    radius: FLOATS
    world: INTS
    spring_indices: INTS
    spring_rest: FLOATS
    spring_stiffness: FLOATS
    spring_damping: FLOATS
    edge_indices: INTS2
    edge_rest: FLOATS
    edge_properties: FLOATS2
    tet_indices: INTS2
    tet_poses: sim.array(dtype=sim.mat33)
    tet_materials: FLOATS2
    shape_mu: FLOATS
    soft_mu: float
    particle_mu: float
    max_radius: float
    gravity: sim.vec3
    v_max: float


@sim.struct
class XpbdScratch:
    """The solver's per-substep arrays: the start and predicted positions and the
    multipliers."""

    x0: VEC3
    x_pred: VEC3
    spring_lambdas: FLOATS
    edge_lambdas: FLOATS
    tet_lambdas: FLOATS2


@sim.kernel
def fused_xpbd_substep_kernel(q: VEC3, qd: VEC3, f_ext: VEC3, m: XpbdModel, s: XpbdScratch,
                              tet_activation: FLOATS, iterations: int, grid_count: int,
                              grid: sim.uint64, contacts_count: INTS, contact_particle: INTS,
                              contact_shape: INTS, contact_body_pos: VEC3, contact_normal: VEC3,
                              dt: float, x: VEC3, qd_out: VEC3):
    """A whole XPBD substep on one thread, each correction applied at once (Gauss-Seidel)."""
    n = q.shape[0]
    for i in range(n):
        x0 = q[i]
        s.x0[i] = x0
        xp, vp = predict_particle(x0, qd[i], f_ext[i], m.inv_mass[i],
                                  (m.flags[i] & sim.uint32(1)) != sim.uint32(0), m.gravity, dt)
        x[i] = xp
        s.x_pred[i] = xp
        qd_out[i] = vp
    for k in range(m.spring_rest.shape[0]):
        s.spring_lambdas[k] = 0.0
    for k in range(m.edge_rest.shape[0]):
        s.edge_lambdas[k] = 0.0
    for k in range(m.tet_indices.shape[0]):
        s.tet_lambdas[k, 0] = 0.0
        s.tet_lambdas[k, 1] = 0.0
    for it in range(iterations):
        for p in range(grid_count):
            solve_particle_contacts(p, grid, x, s.x0, m.inv_mass, m.radius, m.flags, m.world,
                                    m.particle_mu, m.max_radius, x)
        for c in range(contacts_count[0]):
            p = contact_particle[c]
            if (m.flags[p] & sim.uint32(1)) != sim.uint32(0) and m.inv_mass[p] > 0.0:
                nrm = contact_normal[c]
                xp = x[p]
                depth = sim.dot(nrm, xp - contact_body_pos[c]) - m.radius[p]
                if depth < 0.0:
                    mu = 0.5 * (m.soft_mu + m.shape_mu[contact_shape[c]])
                    x[p] = xp + contact_correction(nrm, depth, xp - s.x0[p], mu)
        for k in range(m.spring_rest.shape[0]):
            i = m.spring_indices[k * 2]
            j = m.spring_indices[k * 2 + 1]
            dxi, dxj, dl = distance_correction(x[i], x[j], s.x0[i], s.x0[j], m.inv_mass[i],
                                               m.inv_mass[j], m.spring_rest[k],
                                               m.spring_stiffness[k], m.spring_damping[k], dt,
                                               s.spring_lambdas[k])
            s.spring_lambdas[k] = s.spring_lambdas[k] + dl
            x[i] = x[i] + dxi
            x[j] = x[j] + dxj
        for e in range(m.edge_rest.shape[0]):
            i = m.edge_indices[e, 0]
            j = m.edge_indices[e, 1]
            k = m.edge_indices[e, 2]
            l = m.edge_indices[e, 3]
            d1, d2, d3, d4, dl = bending_correction(x[i], x[j], x[k], x[l], m.inv_mass[i],
                                                    m.inv_mass[j], m.inv_mass[k], m.inv_mass[l],
                                                    m.edge_rest[e], m.edge_properties[e, 0], dt,
                                                    s.edge_lambdas[e])
            s.edge_lambdas[e] = s.edge_lambdas[e] + dl
            x[i] = x[i] + d1
            x[j] = x[j] + d2
            x[k] = x[k] + d3
            x[l] = x[l] + d4
        for t in range(m.tet_indices.shape[0]):
            i = m.tet_indices[t, 0]
            j = m.tet_indices[t, 1]
            k = m.tet_indices[t, 2]
            l = m.tet_indices[t, 3]
            w0 = m.inv_mass[i]
            w1 = m.inv_mass[j]
            w2 = m.inv_mass[k]
            w3 = m.inv_mass[l]
            d0, d1, d2, d3, dl = tet_deviatoric(x[i], x[j], x[k], x[l], w0, w1, w2, w3,
                                                m.tet_poses[t], m.tet_materials[t, 0], dt,
                                                s.tet_lambdas[t, 0])
            s.tet_lambdas[t, 0] = s.tet_lambdas[t, 0] + dl
            x[i] = x[i] + d0
            x[j] = x[j] + d1
            x[k] = x[k] + d2
            x[l] = x[l] + d3
            d0, d1, d2, d3, dl = tet_hydrostatic(x[i], x[j], x[k], x[l], w0, w1, w2, w3,
                                                 m.tet_poses[t], m.tet_materials[t, 0],
                                                 m.tet_materials[t, 1], tet_activation[t], dt,
                                                 s.tet_lambdas[t, 1])
            s.tet_lambdas[t, 1] = s.tet_lambdas[t, 1] + dl
            x[i] = x[i] + d0
            x[j] = x[j] + d1
            x[k] = x[k] + d2
            x[l] = x[l] + d3
    for i in range(n):
        qd_out[i] = finish_particle(x[i], s.x_pred[i], qd_out[i],
                                    (m.flags[i] & sim.uint32(1)) != sim.uint32(0), dt, m.v_max)
