"""Element loops that LLVM vectorizes: gather, compute, scatter (serial CPU code).

A cloth's bending edge or triangle on one thread is latency-bound scalar code: one
element's chain (loads, cross products, square roots, divisions, ``atan2``) is longer
than the out-of-order window reaches, so elements hardly overlap (34 ns a bending
edge, 27 ns a triangle, one thread).  LLVM's loop vectorizer runs 8 or 16 elements
per instruction instead, but only on a loop whose memory accesses it can analyse:
not through the element's particle indices (indirect loads), and not over many
separately strided arrays (it gives up: "too many memory checks").  So each pass runs
in three loops over the elements:

1. gather: each element's inputs (positions, rest state, material) into a scratch
   array (``make_scratch``);
2. compute: the element function of ``forces.py`` / ``xpbd_constraints.py`` on each
   element's inputs, its results into another scratch array; this loop is vectorized
   (AVX2 / AVX-512), with the element functions' branches turned into selects;
3. scatter: the results added to the particles in element order.

The scratch arrays are blocked, field-major: elements go in blocks of ``LANES``, and a
block holds each field of its elements in ``LANES`` consecutive floats.  The compute
loop runs over the blocks and, inside, over the lanes, so a field of 8 or 16
consecutive elements is one plain vector load or store, and every access of one array
is at a constant offset from the others (one access group: one memory check per pair of
arrays).  An element-major row (``vector(16)`` per element) made LLVM read and write
each field with AVX-512 gathers and scatters, about half of the compute loop's time.

The functions and the order of every sum are those of the one-loop versions, so the
results are the same bits (tests/test_physics_semi_implicit.py,
tests/test_physics_xpbd.py).  Measured on the 21 x 21 cloth's frame, one thread (64
substeps, 800 triangles, 1160 bending edges; /tmp script timing ``step_frame``): element-
major rows 2.10 ms, blocked 1.67 ms; the XPBD cloth 5.19 -> 4.78 ms.  Of the blocked
frame, the two compute loops take about 0.36 ms and their gathers and scatters 1.15 ms
(scalar: the particle indices are indirect).  Used by the fused serial substep of
``SolverSemiImplicit`` (here) and by ``SolverXPBD``'s Jacobi passes on one thread
(``xpbd_constraints.batched_jacobi_kernel``).
"""

import linecache

import numpy as np

import numba_sim as sim
from numba_sim.physics import forces

VEC3 = sim.array(dtype=sim.vec3)
FLOATS = sim.array(dtype=float)
INTS2 = sim.array(dtype=sim.int32, ndim=2)
FLOATS2 = sim.array(dtype=float, ndim=2)
MAT22S = sim.array(dtype=sim.mat22)

ROW16 = sim.types.vector(16, float)
ROW13 = sim.types.vector(13, float)
ROW12 = sim.types.vector(12, float)
ROW9 = sim.types.vector(9, float)
ROW7 = sim.types.vector(7, float)
ROW4 = sim.types.vector(4, float)
"""One element's fields, gathered or computed."""

WIDTHS = {"edge_in": 16, "edge_out": 12, "tri_in": 16, "tri_material": 4, "tri_out": 9,
          "spring_in": 12, "spring_out": 7, "bend_in": 16, "bend_rest": 4, "bend_out": 13}
"""The fields of an element of each scratch array (a ``ROW{width}``)."""

LANES = 16
"""Elements per block of a scratch array: a block holds each field of its LANES elements
in LANES consecutive floats (field-major), so the vectorized loop reads a field of
consecutive elements with one plain vector load instead of a gather."""

LANE_ROWS = sim.array(dtype=sim.types.vector(LANES, float))
"""A blocked scratch array (``make_scratch``): row ``block * width + field`` holds that
field of the block's LANES elements."""


def _define_lane_functions(widths):
    """``get_lanes{w}(a, block, lane)`` and ``put_lanes{w}(a, block, lane, row)`` for each
    width *w*: element ``block * LANES + lane`` of a blocked array of rows of *w* floats,
    read as / written from a ``vector(w, float)``.  Generated with constant offsets (a
    loop over the fields is not unrolled by LLVM here: 77 ns an element instead of a few);
    the source is registered with ``linecache``, where the kernel language reads it."""
    lines = []
    for w in widths:
        offsets = [f"base + {k}, lane" for k in range(w)]
        lines += [
            "@sim.func(inline=True)",
            f"def get_lanes{w}(a: LANE_ROWS, block: int, lane: int):",
            "    v = sim.view(a, float)",
            f"    base = block * {w}",
            f"    return ROW{w}(" + ", ".join(f"v[{o}]" for o in offsets) + ")",
            "",
            "@sim.func(inline=True)",
            f"def put_lanes{w}(a: LANE_ROWS, block: int, lane: int, row: ROW{w}):",
            "    v = sim.view(a, float)",
            f"    base = block * {w}",
            *(f"    v[{o}] = row[{k}]" for k, o in enumerate(offsets)),
            "",
        ]
    filename = f"<numba_sim.physics.batched lanes {tuple(widths)}>"
    source = "\n".join(lines) + "\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), globals())


_define_lane_functions(sorted(set(WIDTHS.values())))


@sim.struct
class Scratch:
    """The blocked arrays of the gathered inputs (``*_in``, ``tri_material``,
    ``bend_rest``) and the results (``*_out``) of each element kind (``LANE_ROWS``; an
    unused kind gets one block)."""

    edge_in: LANE_ROWS
    edge_out: LANE_ROWS
    tri_in: LANE_ROWS
    tri_material: LANE_ROWS
    tri_out: LANE_ROWS
    spring_in: LANE_ROWS
    spring_out: LANE_ROWS
    bend_in: LANE_ROWS
    bend_rest: LANE_ROWS
    bend_out: LANE_ROWS


def make_scratch(model, kinds):
    """A ``Scratch`` for *model* (CPU) with blocks for the element kinds in *kinds*
    (``"edge"``, ``"tri"``: semi-implicit bending and triangles; ``"spring"``, ``"bend"``:
    XPBD); an unused kind gets one block."""
    counts = {"edge": model.edge_count, "tri": model.tri_count, "spring": model.spring_count,
              "bend": model.edge_count}
    value = Scratch()
    for name, width in WIDTHS.items():
        kind = name.split("_", 1)[0]
        blocks = -(-max(counts[kind], 1) // LANES) if kind in kinds else 1
        setattr(value, name, np.zeros((blocks * width, LANES), dtype=np.float32))
    return value


@sim.func(inline=True)
def blocks(a: LANE_ROWS, width: int):
    """How many blocks the blocked array *a* of rows of *width* floats holds."""
    return a.shape[0] // width


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
        put_lanes16(s.tri_in, t // LANES, t % LANES,
                  ROW16(x10[0], x10[1], x10[2], x20[0], x20[1], x20[2], v10[0], v10[1], v10[2],
                        v20[0], v20[1], v20[2], dm[0, 0], dm[0, 1], dm[1, 0], dm[1, 1]))
        put_lanes4(s.tri_material, t // LANES, t % LANES,
                  ROW4(activation[t], materials[t, 0], materials[t, 1], materials[t, 2]))
    if aerodynamic == 0:
        for block in range(blocks(s.tri_in, 16)):
            for lane in range(LANES):  # vectorized
                a = get_lanes16(s.tri_in, block, lane)
                b = get_lanes4(s.tri_material, block, lane)
                fq, fr, n, area = forces.membrane_force(
                    sim.vec3(a[0], a[1], a[2]), sim.vec3(a[3], a[4], a[5]),
                    sim.vec3(a[6], a[7], a[8]), sim.vec3(a[9], a[10], a[11]),
                    sim.mat22(a[12], a[13], a[14], a[15]), b[0], b[1], b[2], b[3])
                fp = fq + fr
                put_lanes9(s.tri_out, block, lane, ROW9(fp[0], fp[1], fp[2], -fq[0], -fq[1],
                                                       -fq[2], -fr[0], -fr[1], -fr[2]))
    else:
        for t in range(count):
            i = indices[t, 0]
            j = indices[t, 1]
            k = indices[t, 2]
            f0, f1, f2 = forces.triangle_force(q[i], q[j], q[k], qd[i], qd[j], qd[k], poses[t],
                                               activation[t], materials[t, 0], materials[t, 1],
                                               materials[t, 2], materials[t, 3],
                                               materials[t, 4])
            put_lanes9(s.tri_out, t // LANES, t % LANES,
                      ROW9(f0[0], f0[1], f0[2], f1[0], f1[1], f1[2], f2[0], f2[1], f2[2]))
    for t in range(count):
        r = get_lanes9(s.tri_out, t // LANES, t % LANES)
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
        put_lanes16(s.edge_in, e // LANES, e % LANES,
                  ROW16(x1[0], x1[1], x1[2], x2[0], x2[1], x2[2], x3[0], x3[1], x3[2], x4[0],
                        x4[1], x4[2], rest[e], properties[e, 0], kd, 0.0))
    zero = sim.vec3()
    for block in range(blocks(s.edge_in, 16)):
        for lane in range(LANES):  # vectorized
            a = get_lanes16(s.edge_in, block, lane)
            f1, f2, f3, f4 = forces.bending_force(
                sim.vec3(a[0], a[1], a[2]), sim.vec3(a[3], a[4], a[5]),
                sim.vec3(a[6], a[7], a[8]), sim.vec3(a[9], a[10], a[11]), zero, zero, zero,
                zero, a[12], a[13], a[14])
            put_lanes12(s.edge_out, block, lane,
                      ROW12(f1[0], f1[1], f1[2], f2[0], f2[1], f2[2], f3[0], f3[1], f3[2],
                            f4[0], f4[1], f4[2]))
    if damped != 0:  # again with the velocities (scalar)
        for e in range(count):
            a = get_lanes16(s.edge_in, e // LANES, e % LANES)
            f1, f2, f3, f4 = forces.bending_force(
                sim.vec3(a[0], a[1], a[2]), sim.vec3(a[3], a[4], a[5]),
                sim.vec3(a[6], a[7], a[8]), sim.vec3(a[9], a[10], a[11]),
                qd[indices[e, 0]], qd[indices[e, 1]], qd[indices[e, 2]], qd[indices[e, 3]],
                a[12], a[13], a[14])
            put_lanes12(s.edge_out, e // LANES, e % LANES,
                      ROW12(f1[0], f1[1], f1[2], f2[0], f2[1], f2[2], f3[0], f3[1], f3[2],
                            f4[0], f4[1], f4[2]))
    for e in range(count):
        r = get_lanes12(s.edge_out, e // LANES, e % LANES)
        i = indices[e, 0]
        j = indices[e, 1]
        k = indices[e, 2]
        l = indices[e, 3]
        f[i] = f[i] + sim.vec3(r[0], r[1], r[2])
        f[j] = f[j] + sim.vec3(r[3], r[4], r[5])
        f[k] = f[k] + sim.vec3(r[6], r[7], r[8])
        f[l] = f[l] + sim.vec3(r[9], r[10], r[11])
