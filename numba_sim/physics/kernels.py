"""The semi-implicit solver's kernels, built from the per-element functions of
``numba_sim/physics/forces.py``.

Two shapes of the same work:

* one thread per element (``*_kernel``): CUDA, and CPU models large enough
  for every core.  Each element writes its vertices' forces into slots of its own
  (no atomics: a float atomic add is a compare-and-swap loop on the CPU, which
  cost more than the element's arithmetic), laid out particle by particle, and
  ``integrate_kernel`` sums each particle's run of slots (physics/slots.py);
* ``fused_substep_kernel``: a whole substep (every force, then the
  integration) on one thread, in one launch.  A 20-particle rope then costs one
  launch per substep instead of one per kernel per substep.  Its bending edges run as
  gather / vectorized compute / scatter loops (physics/batched.py).
"""

import numba_sim as sim
from numba_sim.physics import batched
from numba_sim.physics import forces

VEC3 = sim.array(dtype=sim.vec3)
FLOATS = sim.array(dtype=float)
INTS = sim.array(dtype=sim.int32)
INTS2 = sim.array(dtype=sim.int32, ndim=2)
FLOATS2 = sim.array(dtype=float, ndim=2)
FLAGS = sim.array(dtype=sim.uint32)


@sim.kernel
def spring_kernel(q: VEC3, qd: VEC3, indices: INTS, rest: FLOATS, stiffness: FLOATS,
                  damping: FLOATS, base: int, dest: INTS, slots: VEC3):
    s = sim.tid()
    i = indices[s * 2]
    j = indices[s * 2 + 1]
    fs = forces.spring_force(q[i], q[j], qd[i], qd[j], rest[s], stiffness[s], damping[s])
    slots[dest[base + s * 2]] = fs
    slots[dest[base + s * 2 + 1]] = -fs


@sim.kernel
def triangle_kernel(q: VEC3, qd: VEC3, indices: INTS2, poses: sim.array(dtype=sim.mat22),
                    activation: FLOATS, materials: FLOATS2, base: int, dest: INTS,
                    slots: VEC3):
    t = sim.tid()
    i = indices[t, 0]
    j = indices[t, 1]
    k = indices[t, 2]
    f0, f1, f2 = forces.triangle_force(q[i], q[j], q[k], qd[i], qd[j], qd[k], poses[t],
                                       activation[t], materials[t, 0], materials[t, 1],
                                       materials[t, 2], materials[t, 3], materials[t, 4])
    slots[dest[base + t * 3]] = f0
    slots[dest[base + t * 3 + 1]] = f1
    slots[dest[base + t * 3 + 2]] = f2


@sim.kernel
def bending_kernel(q: VEC3, qd: VEC3, indices: INTS2, rest: FLOATS, properties: FLOATS2,
                   base: int, dest: INTS, slots: VEC3):
    e = sim.tid()
    i = indices[e, 0]
    j = indices[e, 1]
    k = indices[e, 2]
    l = indices[e, 3]
    f0, f1, f2, f3 = forces.bending_force(q[i], q[j], q[k], q[l], qd[i], qd[j], qd[k], qd[l],
                                          rest[e], properties[e, 0], properties[e, 1])
    slots[dest[base + e * 4]] = f0
    slots[dest[base + e * 4 + 1]] = f1
    slots[dest[base + e * 4 + 2]] = f2
    slots[dest[base + e * 4 + 3]] = f3


@sim.kernel
def tetrahedron_kernel(q: VEC3, qd: VEC3, indices: INTS2, poses: sim.array(dtype=sim.mat33),
                       activation: FLOATS, materials: FLOATS2, base: int, dest: INTS,
                       slots: VEC3):
    t = sim.tid()
    i = indices[t, 0]
    j = indices[t, 1]
    k = indices[t, 2]
    l = indices[t, 3]
    f0, f1, f2, f3 = forces.tetrahedron_force(q[i], q[j], q[k], q[l], qd[i], qd[j], qd[k],
                                              qd[l], poses[t], activation[t], materials[t, 0],
                                              materials[t, 1], materials[t, 2])
    slots[dest[base + t * 4]] = f0
    slots[dest[base + t * 4 + 1]] = f1
    slots[dest[base + t * 4 + 2]] = f2
    slots[dest[base + t * 4 + 3]] = f3


@sim.kernel
def particle_contact_kernel(grid: sim.uint64, q: VEC3, qd: VEC3, radius: FLOATS, flags: FLAGS,
                            world: INTS, ke: float, kd: float, kf: float, mu: float,
                            cohesion: float, max_radius: float, f: VEC3):
    forces.particle_particle_force(sim.tid(), grid, q, qd, radius, flags, world, ke, kd, kf, mu,
                                   cohesion, max_radius, f)


@sim.kernel
def soft_contact_kernel(q: VEC3, qd: VEC3, radius: FLOATS, flags: FLAGS, shape_ke: FLOATS,
                        shape_kd: FLOATS, shape_kf: FLOATS, shape_mu: FLOATS, soft_ke: float,
                        soft_kd: float, soft_kf: float, soft_mu: float, contact_count: INTS,
                        contact_particle: INTS, contact_shape: INTS, contact_body_pos: VEC3,
                        contact_normal: VEC3, f: VEC3):
    c = sim.tid()
    if c < contact_count[0]:
        p = contact_particle[c]
        if (flags[p] & sim.uint32(1)) != sim.uint32(0):
            s = contact_shape[c]
            f[p] += forces.soft_contact_force(
                q[p], qd[p], radius[p], contact_normal[c], contact_body_pos[c],
                0.5 * (soft_ke + shape_ke[s]), 0.5 * (soft_kd + shape_kd[s]),
                0.5 * (soft_kf + shape_kf[s]), 0.5 * (soft_mu + shape_mu[s]))


@sim.kernel
def integrate_kernel(q: VEC3, qd: VEC3, f_ext: VEC3, f: VEC3, slots: VEC3, slot_start: INTS,
                     inv_mass: FLOATS, flags: FLAGS, gravity: sim.vec3, dt: float, v_max: float,
                     q_out: VEC3, qd_out: VEC3):
    """Sums the particle's element forces (``slots[slot_start[i]:slot_start[i + 1]]``), adds
    the external and contact forces, integrates, and clears the contact force
    accumulator ``f``."""
    i = sim.tid()
    total = f_ext[i] + f[i]
    for k in range(slot_start[i], slot_start[i + 1]):
        total = total + slots[k]
    x, v = forces.integrate_particle(q[i], qd[i], total, inv_mass[i],
                                     (flags[i] & sim.uint32(1)) != sim.uint32(0), gravity, dt,
                                     v_max)
    q_out[i] = x
    qd_out[i] = v
    f[i] = sim.vec3()


@sim.struct
class FusedModel:
    """Everything constant of a model that a fused substep reads, in one struct (one
    argument to bind per launch)."""

    inv_mass: FLOATS
    flags: FLAGS
    radius: FLOATS
    world: INTS
    spring_indices: INTS
    spring_rest: FLOATS
    spring_stiffness: FLOATS
    spring_damping: FLOATS
    tri_indices: INTS2
    tri_poses: sim.array(dtype=sim.mat22)
    tri_materials: FLOATS2
    edge_indices: INTS2
    edge_rest: FLOATS
    edge_properties: FLOATS2
    tet_indices: INTS2
    tet_poses: sim.array(dtype=sim.mat33)
    tet_materials: FLOATS2
    shape_ke: FLOATS
    shape_kd: FLOATS
    shape_kf: FLOATS
    shape_mu: FLOATS
    soft_ke: float
    soft_kd: float
    soft_kf: float
    soft_mu: float
    particle_ke: float
    particle_kd: float
    particle_kf: float
    particle_mu: float
    cohesion: float
    max_radius: float
    gravity: sim.vec3
    v_max: float


@sim.struct
class ContactArrays:
    """A ``Contacts``' particle-shape contacts."""

    count: INTS
    particle: INTS
    shape: INTS
    body_pos: VEC3
    normal: VEC3


@sim.kernel
def fused_substep_kernel(q: VEC3, qd: VEC3, f_ext: VEC3, f: VEC3, m: FusedModel,
                         tri_activation: FLOATS, tet_activation: FLOATS, grid_count: int,
                         grid: sim.uint64, contacts: ContactArrays, scratch: batched.Scratch,
                         dt: float, q_out: VEC3, qd_out: VEC3):
    """One whole substep on one thread: every force, then the integration.  (The
    constant arrays come in one struct: binding one argument is cheaper than binding
    thirty, and a Python call of more than about 30 arguments compiles to
    ``CALL_FUNCTION_EX``, which Numba cannot inline into the launcher.)"""
    # one thread: plain (not atomic) accumulation
    for s in range(m.spring_rest.shape[0]):
        i = m.spring_indices[s * 2]
        j = m.spring_indices[s * 2 + 1]
        fs = forces.spring_force(q[i], q[j], qd[i], qd[j], m.spring_rest[s],
                                 m.spring_stiffness[s], m.spring_damping[s])
        f[i] = f[i] + fs
        f[j] = f[j] - fs
    # triangles and bending edges: gathered, computed in loops LLVM vectorizes, scattered
    # (batched.py)
    batched.triangle_forces(q, qd, m.tri_indices, m.tri_poses, tri_activation, m.tri_materials,
                            scratch, f)
    batched.bending_forces(q, qd, m.edge_indices, m.edge_rest, m.edge_properties, scratch, f)
    for t in range(m.tet_indices.shape[0]):
        i = m.tet_indices[t, 0]
        j = m.tet_indices[t, 1]
        k = m.tet_indices[t, 2]
        l = m.tet_indices[t, 3]
        f0, f1, f2, f3 = forces.tetrahedron_force(q[i], q[j], q[k], q[l], qd[i], qd[j], qd[k],
                                                  qd[l], m.tet_poses[t], tet_activation[t],
                                                  m.tet_materials[t, 0], m.tet_materials[t, 1],
                                                  m.tet_materials[t, 2])
        f[i] = f[i] + f0
        f[j] = f[j] + f1
        f[k] = f[k] + f2
        f[l] = f[l] + f3
    for p in range(grid_count):
        forces.particle_particle_force(p, grid, q, qd, m.radius, m.flags, m.world,
                                       m.particle_ke, m.particle_kd, m.particle_kf,
                                       m.particle_mu, m.cohesion, m.max_radius, f)
    for c in range(contacts.count[0]):
        p = contacts.particle[c]
        if (m.flags[p] & sim.uint32(1)) != sim.uint32(0):
            s = contacts.shape[c]
            f[p] = f[p] + forces.soft_contact_force(
                q[p], qd[p], m.radius[p], contacts.normal[c], contacts.body_pos[c],
                0.5 * (m.soft_ke + m.shape_ke[s]), 0.5 * (m.soft_kd + m.shape_kd[s]),
                0.5 * (m.soft_kf + m.shape_kf[s]), 0.5 * (m.soft_mu + m.shape_mu[s]))
    for i in range(q.shape[0]):
        x, v = forces.integrate_particle(q[i], qd[i], f_ext[i] + f[i], m.inv_mass[i],
                                         (m.flags[i] & sim.uint32(1)) != sim.uint32(0),
                                         m.gravity, dt, m.v_max)
        q_out[i] = x
        qd_out[i] = v
        f[i] = sim.vec3()


def make_struct(cls, **fields):
    """An instance of the struct *cls* with *fields* set."""
    value = cls()
    for name, field in fields.items():
        setattr(value, name, field)
    return value
