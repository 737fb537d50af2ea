"""physics.SolverSemiImplicit, checked by physics rather than snapshots.

* pinned particles move exactly zero; free fall equals the discrete
  symplectic-Euler formula;
* an undamped spring rope keeps its energy within a few percent, with no trend;
* cloth and soft bodies at rest without gravity stay at rest (the membrane and
  the neo-Hookean rest states are equilibria); bending pulls toward the rest
  angle; drag slows a falling sheet;
* a soft cube resting on the ground carries its weight (sum of contact forces =
  M g within 2%) and keeps its volume; a particle rests on a sphere, a box, a
  capsule and on another particle (HashGrid) at the penalty depth ``m g / ke``;
* the fused one-launch substep and the one-kernel-per-phase path agree;
* every kernel compiles for CUDA offline.

Models are tiny, so the fused kernel and the serial launchers compile once for the
whole module.
"""

import math
import os

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import physics
from numba_sim.physics import batched, collide, forces, kernels
from numba_sim.physics.slots import ElementSlots
from ptx_checks import assert_float32_only

G = 9.81


def rope_builder(n=20, spacing=0.1, ke=1.0e4, kd=0.0):
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    for i in range(n):
        b.add_particle((i * spacing, 2.0, 0.0), (0, 0, 0), 0.0 if i == 0 else 0.1, radius=0.01)
    for i in range(n - 1):
        b.add_spring(i, i + 1, ke, kd)
    return b


def rope_energy(model, state):
    q = state.particle_q.astype(np.float64)
    v = state.particle_qd.astype(np.float64)
    mass = model.particle_mass.astype(np.float64)
    pairs = model.spring_indices.reshape(-1, 2)
    stretch = np.linalg.norm(q[pairs[:, 0]] - q[pairs[:, 1]], axis=1) - model.spring_rest_length
    return (0.5 * (mass[:, None] * v * v).sum() + (mass * G * q[:, 1]).sum()
            + 0.5 * (model.spring_stiffness * stretch * stretch).sum())


@pytest.fixture(scope="module")
def rope():
    model = rope_builder().finalize()
    return model, physics.SolverSemiImplicit(model)


def test_the_rope_steps_in_one_launch_per_substep(rope):
    _, solver = rope
    assert solver.fused


def test_free_fall_follows_the_discrete_symplectic_euler_formula():
    b = physics.ModelBuilder(up_axis="z", gravity=-G)
    b.add_particle((0.0, 0.0, 10.0), (1.0, 0.0, 0.5), 2.0)
    b.add_particle((5.0, 0.0, 10.0), (0.0, 0.0, 0.0), 0.0)  # pinned, far away
    b.add_ground_plane()
    model = b.finalize()
    solver = physics.SolverSemiImplicit(model)
    state = model.state()
    contacts = model.collide(state)
    assert int(contacts.soft_contact_count[0]) == 0  # 10 m up: no contact within the margin
    dt, n = 1.0 / 600.0, 300
    for _ in range(n):
        solver.step(state, state, None, contacts, dt)
    z = 10.0 + 0.5 * dt * n - G * dt * dt * n * (n + 1) / 2.0
    assert state.particle_q[0, 2] == pytest.approx(z, rel=1e-5)
    assert state.particle_q[0, 0] == pytest.approx(dt * n, rel=1e-5)
    assert state.particle_qd[0, 2] == pytest.approx(0.5 - G * dt * n, rel=1e-5)
    assert state.particle_q[1].tolist() == [5.0, 0.0, 10.0]


def test_pinned_particles_move_exactly_zero_and_external_forces_act(rope):
    model, solver = rope
    state_0, state_1 = model.state(), model.state()
    start = state_0.particle_q.copy()
    state_0.particle_f[5] = (0.0, 0.0, 3.0)  # an external force, kept by the step
    for _ in range(200):
        solver.step(state_0, state_1, None, None, 1.0 / 1200.0)
        state_0, state_1 = state_1, state_0
        state_0.particle_f[5] = (0.0, 0.0, 3.0)
    assert state_0.particle_q[0].tolist() == start[0].tolist()
    assert state_0.particle_qd[0].tolist() == [0.0, 0.0, 0.0]
    assert state_0.particle_q[5, 2] > 1e-3  # pushed along +z


def test_an_undamped_spring_rope_keeps_its_energy_without_trend(rope):
    model, solver = rope
    state = model.state()
    dt = 1.0 / 60.0 / 20.0
    energies = []
    e0 = rope_energy(model, state)
    for _ in range(120):  # 2 s, 20 substeps a frame
        for _ in range(20):
            solver.step(state, state, None, None, dt)
        energies.append(rope_energy(model, state))
    energies = np.array(energies)
    scale = abs(e0 - (model.particle_mass * G * (state.particle_q[:, 1])).sum()) + 1.0
    drift = (energies - e0) / scale
    assert np.abs(drift).max() < 0.03, drift
    slope = np.polyfit(np.arange(len(drift)), drift, 1)[0] * len(drift)
    assert abs(slope) < 0.01, slope
    # and it really swung: the free end fell by more than a metre
    assert state.particle_q[-1, 1] < 1.0 or state.particle_q[-1, 0] < 1.0


def test_damping_removes_energy():
    model = rope_builder(n=6, kd=5.0).finalize()
    solver = physics.SolverSemiImplicit(model)
    state = model.state()
    state.particle_qd[1:, 2] = 1.0
    e0 = rope_energy(model, state)
    for _ in range(400):
        solver.step(state, state, None, None, 1e-3)
    model_g0 = rope_energy(model, state)
    assert model_g0 < e0


@pytest.fixture(scope="module")
def cloth_and_block():
    """A flat cloth and a soft block, no gravity."""
    b = physics.ModelBuilder(up_axis="y", gravity=0.0)
    b.particle_collision = False
    b.add_cloth_grid((0, 1, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 4, 4, 0.1, 0.1,
                     mass=0.01, tri_ke=1e3, tri_ka=1e3, tri_kd=1.0, edge_ke=1.0)
    b.add_soft_grid((1.0, 0.0, 0.0), None, (0, 0, 0), 2, 2, 2, 0.1, 0.1, 0.1, density=100.0,
                    k_mu=1e4, k_lambda=1e4, k_damp=0.0)
    return b.finalize()


def test_rest_states_are_equilibria(cloth_and_block):
    model = cloth_and_block
    solver = physics.SolverSemiImplicit(model)
    state = model.state()
    for _ in range(200):
        solver.step(state, state, None, None, 1e-3)
    np.testing.assert_allclose(state.particle_q, model.particle_q, atol=2e-5)


def test_stretched_cloth_and_squeezed_block_spring_back(cloth_and_block):
    model = cloth_and_block
    solver = physics.SolverSemiImplicit(model)
    state = model.state()
    cloth = np.arange(25)
    block = np.arange(25, model.particle_count)
    state.particle_q[cloth, 0] *= 1.1  # stretch the cloth along x
    center = model.particle_q[block].mean(axis=0)
    state.particle_q[block] = center + (state.particle_q[block] - center) * 0.9
    stretched = state.particle_q.copy()
    solver.step(state, state, None, None, 1e-4)
    dv = state.particle_qd
    # the cloth's right column is pulled back toward -x, the block pushes outward
    right = cloth[model.particle_q[cloth, 0] > 0.35]
    assert (dv[right, 0] < 0).all()
    outward = np.einsum("ij,ij->i", dv[block], stretched[block] - center)
    corners = np.linalg.norm(stretched[block] - center, axis=1) > 0.15
    assert (outward[corners] > 0).all()


def test_bending_pulls_toward_the_rest_angle():
    def hinge(edge_ke):
        b = physics.ModelBuilder(up_axis="y", gravity=0.0)
        b.particle_collision = False
        for p in ((0.5, -1.0, 0.0), (0.5, 1.0, 0.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0)):
            b.add_particle(p, (0, 0, 0), 1.0)
        b.add_edge(0, 1, 2, 3, rest=0.0, edge_ke=edge_ke)
        model = b.finalize()
        state = model.state()
        state.particle_q[1] = (0.5, 0.8, 0.6)  # fold the second wing up
        solver = physics.SolverSemiImplicit(model)
        for _ in range(50):
            solver.step(state, state, None, None, 1e-3)
        return state.particle_q[1, 2]

    assert hinge(edge_ke=10.0) < hinge(edge_ke=0.0) - 1e-3


def test_drag_slows_a_falling_sheet():
    def fall(drag):
        b = physics.ModelBuilder(up_axis="z", gravity=-G)
        b.particle_collision = False
        b.add_cloth_grid((0, 0, 0), None, (0, 0, 0), 2, 2, 0.5, 0.5, mass=0.1, tri_drag=drag)
        model = b.finalize()
        state = model.state()
        solver = physics.SolverSemiImplicit(model)
        for _ in range(300):
            solver.step(state, state, None, None, 1e-3)
        return state.particle_qd[:, 2].mean()

    free, dragged = fall(0.0), fall(5.0)
    assert free == pytest.approx(-G * 0.3, rel=1e-3)
    assert free < dragged < 0.0


def test_a_soft_cube_on_the_ground_carries_its_weight_and_keeps_its_volume():
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    b.add_soft_grid((0, 0.01, 0), None, (0, 0, 0), 3, 3, 3, 0.1, 0.1, 0.1, density=100.0,
                    k_mu=5e4, k_lambda=2e5, k_damp=5.0, particle_radius=0.01)
    # explicit damping is stable while kd dt / m < 2: warp.sim's shape kd of 1000 is not,
    # for 0.1 kg particles at 32 substeps
    b.add_ground_plane(cfg=physics.ShapeConfig(kd=100.0))
    b.soft_contact_ke = 1e4
    model = b.finalize()
    solver = physics.SolverSemiImplicit(model)
    state = model.state()
    contacts = model.contacts()
    dt = 1.0 / 60.0 / 32.0
    ke = 0.5 * (model.soft_contact_ke + model.shape_material_ke[0])
    support = []
    for frame in range(90):
        model.collide(state, contacts)
        for _ in range(32):
            solver.step(state, state, None, contacts, dt)
            if frame >= 60:  # the last half second: sum of normal contact forces
                depth = np.maximum(0.0, model.particle_radius - state.particle_q[:, 1])
                support.append(ke * depth.astype(np.float64).sum())
    q = state.particle_q.astype(np.float64)
    weight = model.particle_mass.sum() * G
    assert np.mean(support) == pytest.approx(weight, rel=0.02)
    assert support[-1] == pytest.approx(weight, rel=0.02)
    assert np.abs(state.particle_qd).max() < 0.05  # at rest
    tets = model.tet_indices
    e = [q[tets[:, k]] - q[tets[:, 0]] for k in (1, 2, 3)]
    volume = (np.einsum("ij,ij->i", np.cross(e[0], e[1]), e[2]) / 6.0).sum()
    assert volume == pytest.approx(model.tet_volumes.sum(), rel=0.02)


@pytest.mark.parametrize("shape", ["sphere", "box", "capsule", "plane"])
def test_a_particle_rests_on_a_shape_at_the_penalty_depth(shape):
    b = physics.ModelBuilder(up_axis="z", gravity=-G)
    b.particle_collision = False
    radius, mass = 0.05, 0.2
    b.add_particle((0.0, 0.0, 1.3), (0, 0, 0), mass, radius=radius)  # on top: no rolling off
    cfg = physics.ShapeConfig(kd=100.0)
    top = {"sphere": 1.0, "box": 0.75, "capsule": 0.4 + 0.3, "plane": 0.5}[shape]
    if shape == "sphere":
        b.add_shape_sphere(-1, ((0, 0, 0.5), (0, 0, 0, 1)), radius=0.5, cfg=cfg)
    elif shape == "box":
        b.add_shape_box(-1, ((0, 0, 0.5), (0, 0, 0, 1)), hx=0.3, hy=0.4, hz=0.25, cfg=cfg)
    elif shape == "capsule":
        b.add_shape_capsule(-1, ((0, 0, 0.4), (0, 0, 0, 1)), radius=0.3, half_height=0.5,
                            axis="x", cfg=cfg)
    else:
        b.add_shape_plane(-1, ((0, 0, 0.5), (0, 0, 0, 1)), cfg=cfg)
    model = b.finalize()
    solver = physics.SolverSemiImplicit(model)
    state = model.state()
    contacts = model.contacts()
    for frame in range(150):
        model.collide(state, contacts)
        for _ in range(20):
            solver.step(state, state, None, contacts, 1.0 / 1200.0)
    ke = 0.5 * (model.soft_contact_ke + model.shape_material_ke[0])
    expected = top + radius - mass * G / ke
    assert state.particle_q[0, 2] == pytest.approx(expected, abs=2e-4)
    assert int(contacts.soft_contact_count[0]) == 1
    assert contacts.soft_contact_normal[0].tolist() == pytest.approx([0.0, 0.0, 1.0], abs=0.05)


def test_worlds_do_not_collide_with_each_others_shapes():
    template = physics.ModelBuilder(up_axis="z")
    template.add_particle((0, 0, 0.5), (0, 0, 0), 1.0, radius=0.05)
    template.add_shape_sphere(-1, ((0, 0, 0.0), (0, 0, 0, 1)), radius=0.3)
    b = physics.ModelBuilder(up_axis="z")
    b.replicate(template, 2, spacing=(0.0, 0.0, 0.0))  # both worlds in the same place
    model = b.finalize()
    contacts = model.collide(model.state())
    assert int(contacts.soft_contact_count[0]) == 2
    pairs = sorted(zip(contacts.soft_contact_particle[:2].tolist(),
                       contacts.soft_contact_shape[:2].tolist()))
    assert pairs == [(0, 0), (1, 1)]


def test_particles_collide_through_the_hash_grid():
    b = physics.ModelBuilder(up_axis="z", gravity=-G)
    radius, mass = 0.05, 0.1
    b.add_particle((0.0, 0.0, 0.0), (0, 0, 0), 0.0, radius=radius)  # pinned
    b.add_particle((0.0, 0.0, 0.2), (0, 0, 0), mass, radius=radius)
    b.add_particle((3.0, 0.0, 0.2), (0, 0, 0), mass, radius=radius)  # free, far away
    b.particle_kd = 5.0
    model = b.finalize()
    assert model.particle_collision
    solver = physics.SolverSemiImplicit(model)
    state = model.state()
    for _ in range(2000):
        solver.step(state, state, None, None, 1e-3)
    expected = 2 * radius - mass * G / model.particle_ke
    assert state.particle_q[1, 2] == pytest.approx(expected, abs=1e-4)
    assert state.particle_q[2, 2] < -10.0


def test_the_fused_substep_matches_one_kernel_per_phase():
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.add_cloth_grid((0, 0.3, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 3, 3, 0.1,
                     0.1, mass=0.01, fix_left=True, tri_drag=0.5, tri_lift=0.5,
                     particle_radius=0.02, add_springs=True, spring_ke=1e3, tri_kd=1.0)
    b.add_soft_grid((1.0, 0.05, 0), None, (0, 0, 0), 1, 1, 1, 0.1, 0.1, 0.1, density=100.0,
                    k_mu=1e4, k_lambda=1e4, k_damp=1.0, particle_radius=0.02)
    b.add_particle((1.03, 0.5, 0.03), (0, 0, 0), 0.01, radius=0.02)
    # stiffness and damping explicit Euler keeps stable for 0.01 kg particles at dt = 1e-3
    # (with warp.sim's default tri_kd = 10 the sheet explodes, and two float32 summation
    # orders then diverge)
    b.add_ground_plane(cfg=physics.ShapeConfig(ke=1e3, kd=10.0))
    b.add_shape_sphere(-1, ((0.2, 0.0, 0.2), (0, 0, 0, 1)), radius=0.2,
                       cfg=physics.ShapeConfig(ke=1e3, kd=10.0))
    model = b.finalize()
    fused = physics.SolverSemiImplicit(model)
    phased = physics.SolverSemiImplicit(model, fuse=False)
    assert fused.fused and not phased.fused
    a, c = model.state(), model.state()
    contacts = model.contacts()
    for frame in range(5):
        model.collide(a, contacts)
        for _ in range(10):
            fused.step(a, a, None, contacts, 1e-3)
            phased.step(c, c, None, contacts, 1e-3)
        np.testing.assert_allclose(a.particle_q, c.particle_q, atol=1e-5)
    assert np.isfinite(a.particle_q).all()
    assert np.abs(a.particle_q - model.particle_q).max() > 1e-3
    assert np.abs(a.particle_q).max() < 2.0  # a stable scene: float32 orders stay together


def test_the_vectorized_cloth_loops_give_the_bits_of_one_kernel_per_phase():
    """Without drag, lift or bending damping the fused substep computes the triangles and
    bending edges in blocks of batched.LANES (70 and 93 here: partial last blocks); the
    same functions and sums as the per-element kernels, so the same bits."""
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    b.add_cloth_grid((0, 0.3, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 7, 5,
                     0.1, 0.1, mass=0.01, fix_left=True, tri_ke=1e3, tri_ka=1e3, tri_kd=1.0,
                     edge_ke=1.0)
    model = b.finalize()
    assert (model.tri_count, model.edge_count) == (70, 93)
    fused = physics.SolverSemiImplicit(model)
    phased = physics.SolverSemiImplicit(model, fuse=False)
    a, c = model.state(), model.state()
    for _ in range(50):
        fused.step(a, a, None, None, 1e-3)
        phased.step(c, c, None, None, 1e-3)
    np.testing.assert_array_equal(a.particle_q, c.particle_q)
    np.testing.assert_array_equal(a.particle_qd, c.particle_qd)
    assert np.abs(a.particle_q - model.particle_q).max() > 1e-3


def test_control_activations_are_used():
    b = physics.ModelBuilder(up_axis="y", gravity=0.0)
    b.particle_collision = False
    b.add_soft_grid((0, 0, 0), None, (0, 0, 0), 1, 1, 1, 0.1, 0.1, 0.1, density=100.0,
                    k_mu=1e3, k_lambda=1e4, k_damp=0.0)
    model = b.finalize()
    solver = physics.SolverSemiImplicit(model)
    control = model.control()
    control.tet_activations[:] = 0.2  # a positive activation inflates (J - alpha + act)
    state = model.state()
    for _ in range(20):
        solver.step(state, state, control, None, 1e-3)
    center = model.particle_q.mean(axis=0)
    grown = np.linalg.norm(state.particle_q - center, axis=1).mean()
    assert grown < np.linalg.norm(model.particle_q - center, axis=1).mean()


@pytest.mark.parametrize("bad, match", [
    (dict(dt=0.0), r"SolverSemiImplicit.step: dt must be finite and > 0, got 0.0"),
    (dict(dt=float("nan")), r"SolverSemiImplicit.step: dt must be finite and > 0, got nan"),
    (dict(state_in="x"), r"SolverSemiImplicit.step: state_in must be a physics State"),
    (dict(control=3), r"SolverSemiImplicit.step: control must be a physics Control or None"),
    (dict(contacts=3), r"SolverSemiImplicit.step: contacts must be physics Contacts or None"),
    (dict(other_state=True), r"SolverSemiImplicit.step: state_out has 3 particles, the model 20"),
    (dict(other_contacts=True), r"SolverSemiImplicit.step: contacts were made by another model"),
    (dict(other_control=True), r"SolverSemiImplicit.step: control.tri_activations has shape"),
])
def test_bad_step_arguments_are_value_errors(rope, bad, match):
    model, solver = rope
    args = dict(state_in=model.state(), state_out=model.state(), control=None, contacts=None,
                dt=1e-3)
    other = physics.ModelBuilder()
    for p in ((0, 0, 0), (1, 0, 0), (0, 1, 0)):
        other.add_particle(p, (0, 0, 0), 1.0)
    other.add_triangle(0, 1, 2)
    other = other.finalize()
    if bad.pop("other_state", False):
        args["state_out"] = other.state()
    if bad.pop("other_contacts", False):
        args["contacts"] = other.contacts()
    if bad.pop("other_control", False):
        args["control"] = other.control()
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        solver.step(**args)


def test_bad_solver_construction_is_a_value_error(rope):
    with pytest.raises(ValueError, match="SolverSemiImplicit: model must be a physics Model"):
        physics.SolverSemiImplicit("model")
    with pytest.raises(ValueError, match="SolverSemiImplicit: angular_damping must be finite"):
        physics.SolverSemiImplicit(rope[0], angular_damping=-1.0)


# ------------------------------------------------------------------------- CUDA, offline

CUDA_KERNELS = ["spring_kernel", "triangle_kernel", "bending_kernel", "tetrahedron_kernel",
                "particle_contact_kernel", "soft_contact_kernel", "integrate_kernel"]


def _kernel_inputs(model, state, contacts, name):
    f = np.zeros_like(state.particle_q)
    q, qd = state.particle_q, state.particle_qd
    m = model
    slots = ElementSlots(m)
    return {
        "spring_kernel": [q, qd, m.spring_indices, m.spring_rest_length, m.spring_stiffness,
                          m.spring_damping, 0, slots.dest, slots.slots],
        "triangle_kernel": [q, qd, m.tri_indices, m.tri_poses, m.tri_activations,
                            m.tri_materials, 0, slots.dest, slots.slots],
        "bending_kernel": [q, qd, m.edge_indices, m.edge_rest_angle, m.edge_bending_properties,
                           0, slots.dest, slots.slots],
        "tetrahedron_kernel": [q, qd, m.tet_indices, m.tet_poses, m.tet_activations,
                               m.tet_materials, 0, slots.dest, slots.slots],
        "particle_contact_kernel": [0, q, qd, m.particle_radius, m.particle_flags,
                                    m.particle_world, 1.0, 1.0, 1.0, 1.0, 0.0, 0.1, f],
        "soft_contact_kernel": [q, qd, m.particle_radius, m.particle_flags, m.shape_material_ke,
                                m.shape_material_kd, m.shape_material_kf, m.shape_material_mu,
                                1.0, 1.0, 1.0, 1.0, contacts.soft_contact_count,
                                contacts.soft_contact_particle, contacts.soft_contact_shape,
                                contacts.soft_contact_body_pos, contacts.soft_contact_normal, f],
        "integrate_kernel": [q, qd, f, f, slots.slots, slots.start, m.particle_inv_mass,
                             m.particle_flags, sim.vec3(0.0, -9.8, 0.0), 1e-3, 1e5, q, qd],
    }[name]


@pytest.mark.parametrize("name", CUDA_KERNELS + ["particle_shape_contacts_kernel"])
def test_every_solver_kernel_compiles_for_cuda_offline(cloth_and_block, name,
                                                      private_device_code_cache):
    model = cloth_and_block
    state = model.state()
    contacts = model.contacts()
    if name == "particle_shape_contacts_kernel":
        kernel = collide.particle_shape_contacts_kernel
        inputs = [state.particle_q, model.particle_radius, model.particle_flags,
                  model.particle_world, model.shape_count, model.shape_type,
                  model.shape_transform, model.shape_scale, model.shape_thickness,
                  model.shape_world, model.shape_particle_collision,
                  model.shape_source_ptr, 0.2, 1,
                  contacts.soft_contact_count, contacts.soft_contact_particle,
                  contacts.soft_contact_shape, contacts.soft_contact_body_pos,
                  contacts.soft_contact_normal]
    else:
        kernel = getattr(kernels, name)
        inputs = _kernel_inputs(model, state, contacts, name)
    library = kernel.compile("cuda", inputs, cc=(7, 5))  # compiles and links a cubin
    ptx = library.get_asm_str(cc=(7, 5))
    assert ".entry" in ptx
    assert_float32_only(ptx)  # float32 throughout, as warp.sim


def test_every_core_agrees_with_one_thread_on_a_large_cloth():
    """Above 2048 elements a phase runs on every core (atomic force accumulation)."""
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    b.add_cloth_grid((0, 1, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 40, 30, 0.02,
                     0.02, mass=0.001, fix_left=True, tri_ke=1e3, tri_ka=1e3, tri_kd=1.0,
                     edge_ke=0.1, add_springs=True, spring_ke=100.0)
    model = b.finalize()
    assert model.tri_count > 2048 and model.edge_count > 2048 and model.spring_count > 2048
    parallel = physics.SolverSemiImplicit(model)
    serial = physics.SolverSemiImplicit(model, fuse=True)
    assert not parallel.fused
    a, c = model.state(), model.state()
    for _ in range(20):
        parallel.step(a, a, None, None, 2e-4)
        serial.step(c, c, None, None, 2e-4)
    np.testing.assert_allclose(a.particle_q, c.particle_q, atol=1e-5)
    np.testing.assert_allclose(a.particle_qd, c.particle_qd, atol=1e-3)
    assert np.abs(a.particle_qd).max() > 1e-2


@pytest.mark.parametrize("edge_kd", [0.0, 0.5])
def test_fused_batched_bending_agrees_with_the_phases(edge_kd):
    """The fused substep computes bending edges in a vectorized loop (physics/batched.py),
    damped edges again with their velocities; both agree with the element kernels."""
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    b.add_cloth_grid((0, 1, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 6, 5, 0.1,
                     0.1, mass=0.1, fix_left=True, tri_ke=1e3, tri_ka=1e3, tri_kd=1.0,
                     edge_ke=5.0, edge_kd=edge_kd)
    model = b.finalize()
    fused = physics.SolverSemiImplicit(model, fuse=True)
    phased = physics.SolverSemiImplicit(model, fuse=False)
    a, c = model.state(), model.state()
    for _ in range(200):
        fused.step(a, a, None, None, 1e-3)
        phased.step(c, c, None, None, 1e-3)
    assert np.abs(a.particle_q - model.particle_q).max() > 0.05
    np.testing.assert_allclose(a.particle_q, c.particle_q, atol=1e-5)
    np.testing.assert_allclose(a.particle_qd, c.particle_qd, atol=1e-3)


def test_collide_rejects_foreign_states_and_contacts(rope):
    model = rope[0]
    other = rope_builder(n=3).finalize()
    with pytest.raises(ValueError, match="collide: contacts were made by another model"):
        model.collide(model.state(), other.contacts())
    with pytest.raises(ValueError, match="collide: state has 3 particles, the model 20"):
        model.collide(other.state())
    with pytest.raises(ValueError, match="collide: state must be a physics State"):
        model.collide(None)


@pytest.mark.parametrize("fuse", [True, False])
def test_model_parameters_changed_after_the_solver_is_made_take_effect(fuse):
    b = physics.ModelBuilder(up_axis="z", gravity=-G)
    b.add_particle((0.0, 0.0, 0.06), (0, 0, 0), 0.1, radius=0.05)
    b.add_ground_plane(cfg=physics.ShapeConfig(ke=1e3, kd=10.0))
    model = b.finalize()
    solver = physics.SolverSemiImplicit(model, fuse=fuse)
    model.soft_contact_ke = 3e3  # after the solver: the pair's ke is (3e3 + 1e3) / 2
    model.gravity[2] = -2.0 * G  # in place
    model.particle_collision = False
    state = model.state()
    contacts = model.collide(state)
    for _ in range(3000):
        solver.step(state, state, None, contacts, 1e-3)
    assert state.particle_q[0, 2] == pytest.approx(0.05 - 0.1 * 2.0 * G / 2e3, abs=2e-5)
    assert solver.particle_grid is None


def test_element_forces_match_warp_sim():
    """Springs, triangles (with drag and lift), bending and tetrahedra give warp.sim 1.9.1's
    forces on a deformed, moving cloth and soft block (tests/data/make_physics_warp_sim_forces.py
    made the reference with warp.sim's own kernels)."""
    ref = np.load(os.path.join(os.path.dirname(__file__), "data", "physics_warp_sim_forces.npz"))
    b = physics.ModelBuilder(up_axis="y")
    b.add_cloth_grid((0, 1, 0), None, (0, 0, 0), 3, 2, 0.1, 0.1, mass=0.1, tri_ke=1e3, tri_ka=2e3,
                     tri_kd=5.0, tri_drag=0.3, tri_lift=0.4, edge_ke=2.0, edge_kd=0.1,
                     add_springs=True, spring_ke=50.0, spring_kd=0.5)
    b.add_soft_grid((1, 0, 0), None, (0, 0, 0), 1, 1, 2, 0.1, 0.1, 0.1, density=100.0, k_mu=1e3,
                    k_lambda=5e3, k_damp=0.0)
    m = b.finalize()
    np.testing.assert_array_equal(m.particle_q, ref["q0"])
    q, v = ref["q"], ref["v"]

    e = ElementSlots(m)

    def forces(kernel, kind, count, *arrays):
        """The element forces in their slots, summed per particle as integrate_kernel does."""
        e.slots[...] = 0.0
        sim.launch(kernel, count, [q, v, *arrays, e.base[kind], e.dest, e.slots])
        return np.array([e.slots[e.start[i]:e.start[i + 1]].sum(axis=0)
                         for i in range(m.particle_count)])

    ours = {
        "springs": forces(kernels.spring_kernel, "spring", m.spring_count, m.spring_indices,
                          m.spring_rest_length, m.spring_stiffness, m.spring_damping),
        "triangles": forces(kernels.triangle_kernel, "tri", m.tri_count, m.tri_indices,
                            m.tri_poses, m.tri_activations, m.tri_materials),
        "bending": forces(kernels.bending_kernel, "edge", m.edge_count, m.edge_indices,
                          m.edge_rest_angle, m.edge_bending_properties),
        "tets": forces(kernels.tetrahedron_kernel, "tet", m.tet_count, m.tet_indices,
                       m.tet_poses, m.tet_activations, m.tet_materials),
    }
    for family, f in ours.items():
        scale = np.abs(ref[family]).max()
        assert scale > 0.1, family
        np.testing.assert_allclose(f, ref[family], atol=1e-5 * scale, err_msg=family)  # float32


@sim.kernel
def _acos_kernel(x: sim.array(dtype=float), out: sim.array(dtype=float)):
    i = sim.tid()
    out[i] = forces.acos(x[i])


def test_inline_acos_is_within_two_ulp_of_the_exact_value():
    """forces.acos (inline, for the bending angle) against float64 acos: every 1009th float32
    in [-1, 1], every one within 2^18 of 0.5 (where its two formulas meet) and of 1."""
    bits = np.concatenate([np.arange(0, 0x3F800001, 1009, dtype=np.uint32),
                           np.arange(0x3F000000 - 2 ** 18, 0x3F000000 + 2 ** 18, dtype=np.uint32),
                           np.arange(0x3F800001 - 2 ** 18, 0x3F800001, dtype=np.uint32)])
    magnitude = bits.view(np.float32)
    x = np.concatenate([magnitude, -magnitude])
    out = np.empty_like(x)
    sim.launch(_acos_kernel, len(x), [x, out])
    exact = np.arccos(x.astype(np.float64))
    ulp = np.spacing(exact.astype(np.float32)).astype(np.float64)
    assert (np.abs(out - exact) / ulp).max() < 2.0
    assert out[np.argmax(x)] == 0.0 and out[np.argmin(x)] == np.float32(np.pi)


@sim.kernel
def _triangles_one_loop(q: sim.array(dtype=sim.vec3), qd: sim.array(dtype=sim.vec3),
                        indices: sim.array(dtype=sim.int32, ndim=2),
                        poses: sim.array(dtype=sim.mat22), act: sim.array(dtype=float),
                        materials: sim.array(dtype=float, ndim=2), f: sim.array(dtype=sim.vec3)):
    for t in range(indices.shape[0]):
        i = indices[t, 0]
        j = indices[t, 1]
        k = indices[t, 2]
        f0, f1, f2 = forces.triangle_force(q[i], q[j], q[k], qd[i], qd[j], qd[k], poses[t], act[t],
                                           materials[t, 0], materials[t, 1], materials[t, 2],
                                           materials[t, 3], materials[t, 4])
        f[i] = f[i] + f0
        f[j] = f[j] + f1
        f[k] = f[k] + f2


@sim.kernel
def _triangles_batched(q: sim.array(dtype=sim.vec3), qd: sim.array(dtype=sim.vec3),
                       indices: sim.array(dtype=sim.int32, ndim=2),
                       poses: sim.array(dtype=sim.mat22), act: sim.array(dtype=float),
                       materials: sim.array(dtype=float, ndim=2), s: batched.Scratch,
                       f: sim.array(dtype=sim.vec3)):
    batched.triangle_forces(q, qd, indices, poses, act, materials, s, f)


@pytest.mark.parametrize("aerodynamic", [False, True])
def test_batched_triangles_are_the_one_loop_bits(aerodynamic):
    """The fused substep's triangles (gathered, the membrane forces in a vectorized loop,
    scattered in triangle order: physics/batched.py) give exactly the forces of one loop
    over ``forces.triangle_force``; with drag or lift, its scalar loop does."""
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.add_cloth_grid((0, 1, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 7, 5, 0.1,
                     0.1, mass=0.1, tri_ke=1e3, tri_ka=1e3, tri_kd=1.0,
                     tri_drag=0.5 if aerodynamic else 0.0, tri_lift=0.3 if aerodynamic else 0.0)
    model = b.finalize()
    rng = np.random.default_rng(3)
    q = (model.particle_q + rng.normal(scale=0.02, size=model.particle_q.shape)).astype(np.float32)
    qd = rng.normal(size=q.shape).astype(np.float32)
    act = rng.uniform(-0.1, 0.1, model.tri_count).astype(np.float32)
    args = [q, qd, model.tri_indices, model.tri_poses, act, model.tri_materials]
    expected, ours = np.zeros_like(q), np.zeros_like(q)
    sim.launch(_triangles_one_loop, 1, args + [expected])
    sim.launch(_triangles_batched, 1, args + [batched.make_scratch(model, ("tri",)), ours])
    assert np.abs(expected).max() > 1.0
    np.testing.assert_array_equal(ours, expected)
