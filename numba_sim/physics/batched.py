"""Element loops that LLVM vectorizes: gather, compute, scatter (serial CPU code).

A cloth's bending edge or triangle on one thread is latency-bound scalar code: one
element's chain (loads, cross products, square roots, divisions, ``atan2``) is longer
than the out-of-order window reaches, so elements hardly overlap (34 ns a bending
edge, 27 ns a triangle, one thread).  LLVM's loop vectorizer runs 8 or 16 elements
per instruction instead, but only on a loop whose memory accesses it can analyse:
not through the element's particle indices (indirect loads), and not over many
separately strided rows (it gives up: "too many memory checks").  So each pass runs
in three loops over the elements:

1. gather: each element's inputs (positions, rest state, material) into
   one row of a scratch array of a vector dtype (``vector(16, float)``: one constant
   stride, so all of a row's loads form one access group);
2. compute: the element function of ``forces.py`` / ``xpbd_constraints.py`` on each
   row, its results into a row of another scratch array; this loop is vectorized
   (AVX2 / AVX-512), with the element functions' branches turned into selects;
3. scatter: the results added to the particles in element order.

The functions and the order of every sum are those of the one-loop versions, so the
results are the same bits.  (Measured, one thread: a bending edge 35 -> 24 ns, of which
the vectorized compute 14 ns: LLVM reads and writes the rows with AVX-512 gathers and
scatters; gather and scatter ~5 ns each.  A triangle gathered whole, positions and
velocities (28 floats, two rows), gained nothing (27 -> 30 ns); gathered as its two edges
and their rates, the subtractions ``triangle_force`` makes first (one row, and one of
material), the 21 x 21 cloth's frame went from 2.38 to 2.06 ms: about 20 -> 8 ns a
triangle.)  Used by the fused serial substep of
``SolverSemiImplicit`` (here) and by ``SolverXPBD``'s Jacobi passes on one thread
(``xpbd_constraints.batched_jacobi_kernel``).
"""

import numpy as np

import numba_sim as sim
from numba_sim.physics import forces

VEC3 = sim.array(dtype=sim.vec3)
FLOATS = sim.array(dtype=float)
INTS2 = sim.array(dtype=sim.int32, ndim=2)
FLOATS2 = sim.array(dtype=float, ndim=2)
MAT22S = sim.array(dtype=sim.mat22)

ROW16 = sim.types.vector(16, float)
ROW12 = sim.types.vector(12, float)
ROW9 = sim.types.vector(9, float)
ROW7 = sim.types.vector(7, float)
ROW4 = sim.types.vector(4, float)
# What LLVM 15's vectorizer takes, found by trying: rows of at most 16 floats (a larger
# row is copied through memcpy), no run of zeros stored into a result row (a memset),
# and, for the bending edge, one row of inputs (with a second one for the velocities
# it gave up: "too many SCEV assumptions").


@sim.struct
class Scratch:
    """Rows for the gathered inputs (``*_in``, ``bend_rest``) and the results
    (``*_out``) of each element kind, one row per element (an unused kind gets one)."""

    edge_in: sim.array(dtype=ROW16)
    edge_out: sim.array(dtype=ROW12)
    tri_in: sim.array(dtype=ROW16)
    tri_material: sim.array(dtype=ROW4)
    tri_out: sim.array(dtype=ROW9)
    spring_in: sim.array(dtype=ROW16)
    spring_out: sim.array(dtype=ROW7)
    bend_in: sim.array(dtype=ROW16)
    bend_rest: sim.array(dtype=ROW4)
    bend_out: sim.array(dtype=ROW16)


WIDTHS = {"edge_in": 16, "edge_out": 12, "tri_in": 16, "tri_material": 4, "tri_out": 9,
          "spring_in": 16, "spring_out": 7, "bend_in": 16,
          "bend_rest": 4, "bend_out": 16}


def make_scratch(model, kinds):
    """A ``Scratch`` for *model* (CPU) with rows for the element kinds in *kinds*
    (``"edge"``, ``"tri"``: semi-implicit bending and triangles; ``"spring"``, ``"bend"``:
    XPBD)."""
    counts = {"edge": model.edge_count, "tri": model.tri_count, "spring": model.spring_count,
              "bend": model.edge_count}
    value = Scratch()
    for name, width in WIDTHS.items():
        kind = name.split("_", 1)[0]
        rows = max(counts[kind], 1) if kind in kinds else 1
        setattr(value, name, np.zeros((rows, width), dtype=np.float32))
    return value


# ------------------------------------------------------------ semi-implicit forces

@sim.func(inline=True)
def triangle_forces(q: VEC3, qd: VEC3, indices: INTS2, poses: MAT22S, activation: FLOATS,
                    materials: FLOATS2, s: Scratch, f: VEC3):
    """Every triangle's ``forces.triangle_force`` added into *f*, in triangle order.

    The vectorized loop computes ``forces.membrane_force`` from each triangle's gathered
    edges and their rates (``x1 - x0``, ... are the subtractions ``triangle_force``
    makes); if any triangle has drag or lift (which read the three velocities), a scalar
    loop computes every triangle with ``triangle_force`` instead."""
    count = indices.shape[0]
    aerodynamic = int(0)
    for t in range(count):
        if materials[t, 3] != 0.0 or materials[t, 4] != 0.0:
            aerodynamic = 1
        x0 = q[indices[t, 0]]
        v0 = qd[indices[t, 0]]
        x10 = q[indices[t, 1]] - x0
        x20 = q[indices[t, 2]] - x0
        v10 = qd[indices[t, 1]] - v0
        v20 = qd[indices[t, 2]] - v0
        dm = poses[t]
        s.tri_in[t] = ROW16(x10[0], x10[1], x10[2], x20[0], x20[1], x20[2], v10[0], v10[1],
                            v10[2], v20[0], v20[1], v20[2], dm[0, 0], dm[0, 1], dm[1, 0],
                            dm[1, 1])
        s.tri_material[t] = ROW4(activation[t], materials[t, 0], materials[t, 1],
                                 materials[t, 2])
    if aerodynamic == 0:
        for t in range(s.tri_in.shape[0]):  # (bounded by the rows it reads: vectorized)
            a = s.tri_in[t]
            b = s.tri_material[t]
            fq, fr, n, area = forces.membrane_force(
                sim.vec3(a[0], a[1], a[2]), sim.vec3(a[3], a[4], a[5]),
                sim.vec3(a[6], a[7], a[8]), sim.vec3(a[9], a[10], a[11]),
                sim.mat22(a[12], a[13], a[14], a[15]), b[0], b[1], b[2], b[3])
            fp = fq + fr
            s.tri_out[t] = ROW9(fp[0], fp[1], fp[2], -fq[0], -fq[1], -fq[2], -fr[0], -fr[1],
                                -fr[2])
    else:
        for t in range(count):
            i = indices[t, 0]
            j = indices[t, 1]
            k = indices[t, 2]
            f0, f1, f2 = forces.triangle_force(q[i], q[j], q[k], qd[i], qd[j], qd[k], poses[t],
                                               activation[t], materials[t, 0], materials[t, 1],
                                               materials[t, 2], materials[t, 3],
                                               materials[t, 4])
            s.tri_out[t] = ROW9(f0[0], f0[1], f0[2], f1[0], f1[1], f1[2], f2[0], f2[1], f2[2])
    for t in range(count):
        r = s.tri_out[t]
        i = indices[t, 0]
        j = indices[t, 1]
        k = indices[t, 2]
        f[i] = f[i] + sim.vec3(r[0], r[1], r[2])
        f[j] = f[j] + sim.vec3(r[3], r[4], r[5])
        f[k] = f[k] + sim.vec3(r[6], r[7], r[8])


@sim.func(inline=True)
def bending_forces(q: VEC3, qd: VEC3, indices: INTS2, rest: FLOATS, properties: FLOATS2,
                   s: Scratch, f: VEC3):
    """Every bending edge's ``forces.bending_force`` added into *f*, in edge order.

    The vectorized loop leaves the velocities out (the damping term of an undamped edge,
    ``kd = 0``, warp.sim's default, is zero); if any edge is damped, a scalar loop then
    computes every edge again with them."""
    count = indices.shape[0]
    damped = int(0)
    for e in range(count):
        kd = properties[e, 1]
        if kd != 0.0:
            damped = 1
        x1 = q[indices[e, 0]]
        x2 = q[indices[e, 1]]
        x3 = q[indices[e, 2]]
        x4 = q[indices[e, 3]]
        s.edge_in[e] = ROW16(x1[0], x1[1], x1[2], x2[0], x2[1], x2[2], x3[0], x3[1], x3[2],
                             x4[0], x4[1], x4[2], rest[e], properties[e, 0], kd, 0.0)
    zero = sim.vec3()
    for e in range(s.edge_in.shape[0]):  # (bounded by the rows it reads: vectorized)
        a = s.edge_in[e]
        f1, f2, f3, f4 = forces.bending_force(
            sim.vec3(a[0], a[1], a[2]), sim.vec3(a[3], a[4], a[5]), sim.vec3(a[6], a[7], a[8]),
            sim.vec3(a[9], a[10], a[11]), zero, zero, zero, zero, a[12], a[13], a[14])
        s.edge_out[e] = ROW12(f1[0], f1[1], f1[2], f2[0], f2[1], f2[2], f3[0], f3[1], f3[2],
                              f4[0], f4[1], f4[2])
    if damped != 0:  # again with the velocities (scalar)
        for e in range(count):
            a = s.edge_in[e]
            f1, f2, f3, f4 = forces.bending_force(
                sim.vec3(a[0], a[1], a[2]), sim.vec3(a[3], a[4], a[5]),
                sim.vec3(a[6], a[7], a[8]), sim.vec3(a[9], a[10], a[11]),
                qd[indices[e, 0]], qd[indices[e, 1]], qd[indices[e, 2]], qd[indices[e, 3]],
                a[12], a[13], a[14])
            s.edge_out[e] = ROW12(f1[0], f1[1], f1[2], f2[0], f2[1], f2[2], f3[0], f3[1],
                                  f3[2], f4[0], f4[1], f4[2])
    for e in range(count):
        r = s.edge_out[e]
        i = indices[e, 0]
        j = indices[e, 1]
        k = indices[e, 2]
        l = indices[e, 3]
        f[i] = f[i] + sim.vec3(r[0], r[1], r[2])
        f[j] = f[j] + sim.vec3(r[3], r[4], r[5])
        f[k] = f[k] + sim.vec3(r[6], r[7], r[8])
        f[l] = f[l] + sim.vec3(r[9], r[10], r[11])
