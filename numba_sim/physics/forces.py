"""The per-element physics of the particle solvers, written once as ``@sim.func``s.

Each element function takes the values it needs (positions, velocities, rest
pose, material) and returns its forces on its particles; the caller loads the
values and adds the forces: atomically in the one-thread-per-element kernels,
plainly in the fused serial substep.  (Values rather than arrays: a ``@sim.func``
too large to inline that takes arrays pays about 10 ns per call and array on the
CPU, several times the arithmetic of a spring.)  They are ``inline=True``: LLVM
would call these large functions, passing some 30 floats through the stack and the
forces back through memory, a quarter of a cloth triangle's or bending edge's time
(measured: 61 -> 46 ns a triangle, 72 -> 55 ns an edge, one thread).  The models are
warp.sim 1.9.1's (``warp/sim/integrator_euler.py``): Hooke springs with damping
along the spring, the triangle membrane of ``eval_triangles`` (shear ``k_mu``,
area ``k_lambda``, damping, drag and lift), Bridson's dihedral bending,
the stable neo-Hookean tetrahedron of ``eval_tetrahedra``, penalty contacts
against shapes and between particles (normal ``ke * depth`` plus damping,
friction capped by Coulomb), and symplectic Euler.

The same functions are called by one-thread-per-element kernels
(``numba_sim/physics/kernels.py``: CUDA and large CPU models) and by the fused
serial substep kernels that loop over every element on one thread (small CPU
models, where a launch per kernel would dominate).
"""

import numba_sim as sim

HALF_PI = 1.5707963267948966
PI = 3.141592653589793
QUARTER_PI = 0.7853981633974483
QUARTER_PI_LO = -2.1855695e-08    # pi/4 - float32(pi/4): atan2 adds it before pi/4
TAN_PI_8 = 0.41421356237309503
TINY = 1.0e-37


@sim.func(inline=True)
def acos(x: float):
    """``acos(x)`` for float32 *x* in [-1, 1], inline (``sim.acos`` calls libm's ``acosf``):
    within 1.3 ulp of the exact value (tests/test_physics_semi_implicit.py checks < 2).
    Cephes' ``asinf`` polynomial on ``z = x^2`` (|x| <= 1/2) or ``z = (1 - |x|) / 2``
    (``acos |x| = 2 asin(sqrt(z))``): a square root and a few multiplies, no call in the
    middle of a triangle's lift (measured alone: about as fast as ``acosf``)."""
    a = sim.abs(x)
    big = a > 0.5
    z = sim.where(big, 0.5 * (1.0 - a), a * a)
    s = sim.where(big, sim.sqrt(z), a)
    p = ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z
          + 7.4953002686e-2) * z + 1.6666752422e-1) * z
    asin_s = s + s * p
    r = sim.where(big, 2.0 * asin_s, HALF_PI - asin_s)
    return sim.where(x < 0.0, PI - r, r)


@sim.func(inline=True)
def atan2(y: float, x: float):
    """``atan2(y, x)`` for float32 *y*, *x*, in [-pi, pi], inline (a call to libm's
    ``atan2f`` would keep LLVM from vectorizing the bending loop of ``batched.py``); 0 at
    (0, 0).  Cephes' ``atanf`` polynomial on ``u = lo / hi`` (``lo, hi`` the smaller and
    larger of ``|x|, |y|``), or ``u = (lo - hi) / (lo + hi)`` (``atan = pi/4 + atan u``)
    when ``lo > tan(pi/8) hi``: one division, no branch, finite derivatives everywhere but
    (0, 0); within 2.3 ulp of the exact value (tests/test_physics_bending_angle.py)."""
    ax = sim.abs(x)
    ay = sim.abs(y)
    hi = sim.max(ax, ay)
    lo = sim.min(ax, ay)
    big = lo > TAN_PI_8 * hi
    u = sim.where(big, lo - hi, lo) / sim.max(sim.where(big, lo + hi, hi), TINY)
    z = u * u
    p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z
         - 3.33329491539e-1) * z * u + u
    r = sim.where(big, QUARTER_PI + (p + QUARTER_PI_LO), p)
    r = sim.where(ay > ax, HALF_PI - r, r)
    r = sim.where(x < 0.0, PI - r, r)
    return sim.where(y < 0.0, -r, r)


@sim.func(inline=True)
def spring_force(xi: sim.vec3, xj: sim.vec3, vi: sim.vec3, vj: sim.vec3, rest: float, ke: float,
                 kd: float):
    """The force of a spring on its first particle (the second gets its opposite)."""
    xij = xi - xj
    length = sim.length(xij)
    fs = sim.vec3()
    if length > 0.0:
        direction = xij / length
        c = length - rest
        dcdt = sim.dot(direction, vi - vj)
        fs = direction * (-(ke * c + kd * dcdt))
    return fs


@sim.func(inline=True)
def triangle_force(x0: sim.vec3, x1: sim.vec3, x2: sim.vec3, v0: sim.vec3, v1: sim.vec3,
                   v2: sim.vec3, dm: sim.mat22, act: float, k_mu: float, k_lambda: float,
                   k_damp: float, k_drag: float, k_lift: float):
    """The forces of a membrane triangle on its three particles: its membrane forces
    (:func:`membrane_force`), then warp.sim's aerodynamic drag and lift."""
    fq, fr, n, area = membrane_force(x1 - x0, x2 - x0, v1 - v0, v2 - v0, dm, act, k_mu,
                                     k_lambda, k_damp)
    fp = fq + fr
    if k_drag != 0.0 or k_lift != 0.0:
        vmid = (v0 + v1 + v2) * (1.0 / 3.0)
        speed = sim.length(vmid)
        if speed > 0.0:
            vdir = vmid / speed
            f_drag = vmid * (k_drag * area * sim.abs(sim.dot(n, vmid)))
            f_lift = n * (k_lift * area * (HALF_PI - acos(sim.clamp(sim.dot(n, vdir),
                                                                  -1.0, 1.0)))) \
                * sim.dot(vmid, vmid)
            fp = fp - f_drag - f_lift
            fq = fq + f_drag + f_lift
            fr = fr + f_drag + f_lift
    return fp, -fq, -fr


@sim.func(inline=True)
def membrane_force(x10: sim.vec3, x20: sim.vec3, v10: sim.vec3, v20: sim.vec3, dm: sim.mat22,
                   act: float, k_mu: float, k_lambda: float, k_damp: float):
    """(fq, fr, n, area): a triangle's shear, damping and area forces, from its edges
    ``x1 - x0``, ``x2 - x0`` and their rates; the forces on x1 and x2 are ``-fq`` and
    ``-fr``, on x0 ``fq + fr``; ``n`` is the unit normal (zero if degenerate).

    warp.sim's ``eval_triangles`` with its products regrouped (the same values up to
    float32 rounding, about half the multiplies): its shear and damping force
    ``(k_mu F + k_damp dF/dt) Dm^T`` with ``F = Xs Dm`` is ``(k_mu Xs + k_damp Vs) M``
    for the 2 x 2 ``M = Dm Dm^T``, and the area constraint's rate
    ``dcdq.v1 + dcdr.v2 - (dcdq + dcdr).v0`` is ``dcdq.v10 + dcdr.v20``."""
    inv_rest_area = sim.determinant(dm) * 2.0
    rest_area = 1.0 / inv_rest_area
    alpha = 1.0 + k_mu / k_lambda
    k_mu = k_mu * rest_area
    k_lambda = k_lambda * rest_area
    k_damp = k_damp * rest_area
    m00 = dm[0, 0] * dm[0, 0] + dm[0, 1] * dm[0, 1]
    m01 = dm[0, 0] * dm[1, 0] + dm[0, 1] * dm[1, 1]
    m11 = dm[1, 0] * dm[1, 0] + dm[1, 1] * dm[1, 1]
    y1 = x10 * k_mu + v10 * k_damp
    y2 = x20 * k_mu + v20 * k_damp
    fq = y1 * m00 + y2 * m01
    fr = y1 * m01 + y2 * m11
    # area preservation
    n = sim.cross(x10, x20)
    n_length = sim.length(n)
    area = n_length * 0.5
    c = area * inv_rest_area - alpha + act
    n = n * sim.where(n_length > 0.0, 1.0 / n_length, 0.0)
    half_inv_rest_area = inv_rest_area * 0.5
    dcdq = sim.cross(x20, n) * half_inv_rest_area
    dcdr = sim.cross(n, x10) * half_inv_rest_area
    f_total = k_lambda * c + k_damp * (sim.dot(dcdq, v10) + sim.dot(dcdr, v20))
    return fq + dcdq * f_total, fr + dcdr * f_total, n, area


@sim.func(inline=True)
def dihedral_angle(x1: sim.vec3, x2: sim.vec3, x3: sim.vec3, x4: sim.vec3):
    """(valid, angle, |e|, g1, g2, g3, g4): the signed dihedral angle across the edge
    x3-x4 (wings x1 and x2) and its gradients ``g_k = d(angle)/dx_k`` (Bridson et al.
    2003; warp.sim's bending force is ``-ke |e| (angle - rest) g_k``); not valid (zero
    angle and gradients) when a face or the edge is degenerate.  Used by the
    semi-implicit bending force and the XPBD bending constraint.

    warp.sim's ``eval_bending`` with fewer operations, the same values up to float32
    rounding: the ``g_k`` sum to zero (the angle does not change under translation),
    so ``g4 = -(g1 + g2 + g3)``; dot products with the unit edge are taken with the
    edge and scaled once.  The angle is ``atan2((n2 x n1).e, (n1.n2) |e|)`` (both times
    ``|n1| |n2| |e|``, which atan2 ignores), warp.sim's ``acos(n1^.n2^) * sign((n2 x n1).e)``
    in forward (the same up to float32 rounding, and closer to the exact angle near 0,
    where ``acos`` of a float32 cosine is off by up to 3e-4 rad) but differentiable at a
    flat edge: ``acos``'s derivative is infinite at cos = 1, which made the gradients of a
    flat cloth's bending NaN or arbitrary under a ``sim.Tape`` (docs/autodiff.md)."""
    n1 = sim.cross(x3 - x1, x4 - x1)
    n2 = sim.cross(x4 - x2, x3 - x2)
    n1_length = sim.length(n1)
    n2_length = sim.length(n2)
    e_vec = x4 - x3
    e_length = sim.length(e_vec)
    valid = n1_length >= 1.0e-6 and n2_length >= 1.0e-6 and e_length > 0.0
    angle = 0.0
    g1 = sim.vec3()
    g2 = sim.vec3()
    g3 = sim.vec3()
    g4 = sim.vec3()
    if valid:
        rcp_n1 = 1.0 / n1_length
        rcp_n2 = 1.0 / n2_length
        rcp_e = 1.0 / e_length
        # sin and cos of the angle times |n1| |n2| |e| (n2 x n1 is parallel to e)
        angle = atan2(sim.dot(sim.cross(n2, n1), e_vec), sim.dot(n1, n2) * e_length)
        c1 = rcp_n1 * rcp_n1
        c2 = rcp_n2 * rcp_n2
        g1 = n1 * (c1 * e_length)
        g2 = n2 * (c2 * e_length)
        g3 = n1 * (c1 * rcp_e * sim.dot(x1 - x4, e_vec)) \
            + n2 * (c2 * rcp_e * sim.dot(x2 - x4, e_vec))
        g4 = -(g1 + g2 + g3)
    return valid, angle, e_length, g1, g2, g3, g4


@sim.func(inline=True)
def bending_force(x1: sim.vec3, x2: sim.vec3, x3: sim.vec3, x4: sim.vec3, v1: sim.vec3,
                  v2: sim.vec3, v3: sim.vec3, v4: sim.vec3, rest: float, ke: float, kd: float):
    """The forces of a bending edge (across x3-x4, wings x1 and x2) on its particles."""
    valid, angle, e_length, d1, d2, d3, d4 = dihedral_angle(x1, x2, x3, x4)
    f1 = sim.vec3()
    f2 = sim.vec3()
    f3 = sim.vec3()
    f4 = sim.vec3()
    if valid:
        f_elastic = ke * (angle - rest)
        f_damp = kd * (sim.dot(d1, v1) + sim.dot(d2, v2) + sim.dot(d3, v3) + sim.dot(d4, v4))
        f_total = -e_length * (f_elastic + f_damp)
        f1 = d1 * f_total
        f2 = d2 * f_total
        f3 = d3 * f_total
        f4 = d4 * f_total
    return f1, f2, f3, f4


@sim.func(inline=True)
def tetrahedron_force(x0: sim.vec3, x1: sim.vec3, x2: sim.vec3, x3: sim.vec3, v0: sim.vec3,
                      v1: sim.vec3, v2: sim.vec3, v3: sim.vec3, dm: sim.mat33, act: float,
                      k_mu: float, k_lambda: float, k_damp: float):
    """The forces of a neo-Hookean tetrahedron on its four particles."""
    x10 = x1 - x0
    x20 = x2 - x0
    x30 = x3 - x0
    inv_rest_volume = sim.determinant(dm) * 6.0
    rest_volume = 1.0 / inv_rest_volume
    alpha = 1.0 + k_mu / k_lambda - k_mu / (4.0 * k_lambda)
    k_mu = k_mu * rest_volume
    k_lambda = k_lambda * rest_volume
    k_damp = k_damp * rest_volume
    F = sim.matrix_from_cols(x10, x20, x30) * dm
    dFdt = sim.matrix_from_cols(v1 - v0, v2 - v0, v3 - v0) * dm
    ic = sim.dot(F[0], F[0]) + sim.dot(F[1], F[1]) + sim.dot(F[2], F[2])
    P = F * (k_mu * (1.0 - 1.0 / (ic + 1.0))) + dFdt * k_damp
    H = P * sim.transpose(dm)
    f1 = sim.vec3(H[0, 0], H[1, 0], H[2, 0])
    f2 = sim.vec3(H[0, 1], H[1, 1], H[2, 1])
    f3 = sim.vec3(H[0, 2], H[1, 2], H[2, 2])
    J = sim.determinant(F)
    s = inv_rest_volume / 6.0
    djdx1 = sim.cross(x20, x30) * s
    djdx2 = sim.cross(x30, x10) * s
    djdx3 = sim.cross(x10, x20) * s
    f_volume = (J - alpha + act) * k_lambda
    f_damp = (sim.dot(djdx1, v1 - v0) + sim.dot(djdx2, v2 - v0) + sim.dot(djdx3, v3 - v0)) \
        * k_damp
    f_total = f_volume + f_damp
    f1 = f1 + djdx1 * f_total
    f2 = f2 + djdx2 * f_total
    f3 = f3 + djdx3 * f_total
    return f1 + f2 + f3, -f1, -f2, -f3


@sim.func(inline=True)
def penalty_force(n: sim.vec3, v: sim.vec3, c: float, ke: float, kd: float, kf: float,
                  mu: float):
    """Force on a particle with penetration ``c`` (< 0 in contact) along normal ``n``
    (pointing out of the other side) and relative velocity ``v``."""
    vn = sim.dot(n, v)
    fn = c * ke + sim.min(vn, 0.0) * kd
    vt = v - n * vn
    vs = sim.length(vt)
    if vs > 0.0:
        vt = vt / vs
    ft = sim.min(vs * kf, mu * sim.abs(fn))
    return -n * fn - vt * ft


@sim.func
def particle_particle_force(tid: int, grid: sim.uint64, q: sim.array(dtype=sim.vec3),
                            qd: sim.array(dtype=sim.vec3), radius: sim.array(dtype=float),
                            flags: sim.array(dtype=sim.uint32),
                            world: sim.array(dtype=sim.int32), ke: float, kd: float, kf: float,
                            mu: float, cohesion: float, max_radius: float,
                            f: sim.array(dtype=sim.vec3)):
    i = sim.hash_grid_point_id(grid, tid)
    if i >= 0:
        if (flags[i] & sim.uint32(1)) != sim.uint32(0):
            x = q[i]
            v = qd[i]
            r = radius[i]
            total = sim.vec3()
            for index in sim.hash_grid_query(grid, x, r + max_radius + cohesion):
                if index != i and world[index] == world[i] and \
                        (flags[index] & sim.uint32(1)) != sim.uint32(0):
                    n = x - q[index]
                    d = sim.length(n)
                    err = d - r - radius[index]
                    if err <= cohesion and d > 0.0:
                        total = total + penalty_force(n / d, v - qd[index], err, ke, kd, kf, mu)
            f[i] += total


@sim.func(inline=True)
def soft_contact_force(x: sim.vec3, v: sim.vec3, radius: float, n: sim.vec3, point: sim.vec3,
                       ke: float, kd: float, kf: float, mu: float):
    """A particle against a static shape (body -1: the contact point is in world space);
    the depth is recomputed from the current position, so one collide per frame is enough."""
    depth = sim.dot(n, x - point) - radius
    f = sim.vec3()
    if depth < 0.0:
        f = penalty_force(n, v, depth, ke, kd, kf, mu)
    return f


@sim.func(inline=True)
def integrate_particle(x0: sim.vec3, v0: sim.vec3, f: sim.vec3, w: float, active: bool,
                       gravity: sim.vec3, dt: float, v_max: float):
    """Symplectic Euler: ``v += (f / m + g) dt; x += v dt``; pinned (inverse mass 0)
    particles keep their velocity and get no gravity; inactive ones stop.  Returns
    (x, v)."""
    x1 = x0
    v1 = sim.vec3()
    if active:
        v1 = v0
        if w > 0.0:
            v1 = v0 + (f * w + gravity) * dt
        speed = sim.length(v1)
        if speed > v_max:
            v1 = v1 * (v_max / speed)
        x1 = x0 + v1 * dt
    return x1, v1
