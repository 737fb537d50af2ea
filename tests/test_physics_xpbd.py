"""physics.SolverXPBD, checked by physics: it never gains energy, pinned particles
stay put, unconstrained motion is the discrete predictor, contacts rest at the exact
contact height and hold with friction, soft bodies keep their volume, and every
kernel compiles for CUDA offline."""

import math

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import physics
from numba_sim.physics import xpbd_constraints as xc
from ptx_checks import assert_float32_only

G = 9.81


def rope_model(n=12, ke=1.0e4, kd=0.0):
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    for i in range(n):
        b.add_particle((i * 0.1, 2.0, 0.0), (0, 0, 0), 0.0 if i == 0 else 0.1, radius=0.01)
    for i in range(n - 1):
        b.add_spring(i, i + 1, ke, kd)
    return b.finalize()


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
    return rope_model()


@pytest.mark.parametrize("fuse", [True, False])
def test_xpbd_never_gains_energy_and_pins_hold(rope, fuse):
    solver = physics.SolverXPBD(rope, iterations=2, fuse=fuse)
    assert solver.fused == fuse
    state = rope.state()
    start = state.particle_q.copy()
    energies = [rope_energy(rope, state)]
    lowest = 2.0
    for _ in range(60):
        for _ in range(10):
            solver.step(state, state, None, None, 1.0 / 600.0)
        energies.append(rope_energy(rope, state))
        lowest = min(lowest, float(state.particle_q[-1, 1]))
    energies = np.array(energies)
    # float32 velocities from position differences carry ~1e-4 relative noise; beyond
    # that, the energy only goes down
    assert np.diff(energies).max() <= 5e-4 * energies[0]
    assert energies.max() <= energies[0] * (1.0 + 1e-4)
    assert energies[-1] < energies[0]
    assert state.particle_q[0].tolist() == start[0].tolist()
    q = state.particle_q  # the springs hold: no link stretched by more than 5 mm
    assert np.abs(np.linalg.norm(q[1:] - q[:-1], axis=1) - 0.1).max() < 0.005
    assert lowest < 1.0  # it swung down


def test_gauss_seidel_and_jacobi_hang_a_chain_at_rest_lengths():
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    for i in range(6):
        b.add_particle((0.0, 2.0 - 0.1 * i, 0.0), (0, 0, 0), 0.0 if i == 0 else 0.1)
    for i in range(5):
        b.add_spring(i, i + 1, 1.0e5, 0.0)
    model = b.finalize()
    results = []
    for fuse in (True, False):
        solver = physics.SolverXPBD(model, iterations=4, fuse=fuse)
        state = model.state()
        for _ in range(300):
            solver.step(state, state, None, None, 1.0 / 600.0)
        results.append(state.particle_q.copy())
        np.testing.assert_allclose(state.particle_q[:, [0, 2]], 0.0, atol=1e-6)
        np.testing.assert_allclose(np.diff(state.particle_q[:, 1]), -0.1, atol=2e-3)
        assert np.abs(state.particle_qd).max() < 0.05
    np.testing.assert_allclose(results[0], results[1], atol=2e-3)


def test_unconstrained_motion_is_the_discrete_predictor():
    b = physics.ModelBuilder(up_axis="z", gravity=-G)
    b.add_particle((0.0, 0.0, 10.0), (1.0, 0.0, 0.5), 2.0)
    model = b.finalize()
    solver = physics.SolverXPBD(model)
    state = model.state()
    dt, n = 1.0 / 600.0, 300
    for _ in range(n):
        solver.step(state, state, None, None, dt)
    assert state.particle_q[0, 2] == pytest.approx(10.0 + 0.5 * dt * n - G * dt * dt * n * (n + 1)
                                                   / 2.0, rel=1e-5)
    assert state.particle_q[0, 0] == pytest.approx(dt * n, rel=1e-5)
    assert state.particle_qd[0, 2] == pytest.approx(0.5 - G * dt * n, rel=1e-5)


def test_contacts_rest_at_the_exact_height_and_friction_holds_on_a_slope():
    b = physics.ModelBuilder(up_axis="z", gravity=-G)
    b.particle_collision = False
    radius = 0.05
    b.add_particle((0.0, 0.0, 0.3), (0, 0, 0), 0.1, radius=radius)  # onto the ground
    b.add_particle((3.0, 0.0, 1.2), (0, 0, 0), 0.1, radius=radius)  # onto a 20 degree slope
    b.add_ground_plane()
    tilt = math.radians(20.0)
    slope = (0.0, math.sin(tilt / 2), 0.0, math.cos(tilt / 2))  # about y: the normal leans to +x
    b.add_shape_box(-1, ((3.0, 0.0, 0.5), slope), hx=1.0, hy=1.0, hz=0.5,
                    cfg=physics.ShapeConfig(mu=1.0))
    b.soft_contact_mu = 1.0
    model = b.finalize()
    solver = physics.SolverXPBD(model, iterations=2)
    state = model.state()
    contacts = model.contacts()
    for _ in range(90):
        model.collide(state, contacts)
        for _ in range(10):
            solver.step(state, state, None, contacts, 1.0 / 600.0)
    assert state.particle_q[0, 2] == pytest.approx(radius, abs=1e-5)
    assert np.abs(state.particle_qd[0]).max() < 1e-3
    # mu = (1 + 1) / 2 > tan 20 degrees: it lands and sticks
    assert np.abs(state.particle_qd[1]).max() < 1e-2
    assert state.particle_q[1, 0] == pytest.approx(3.0, abs=0.1)


def test_friction_below_the_slope_angle_slides():
    b = physics.ModelBuilder(up_axis="z", gravity=-G)
    b.particle_collision = False
    tilt = math.radians(30.0)
    slope = (0.0, math.sin(tilt / 2), 0.0, math.cos(tilt / 2))
    b.add_shape_box(-1, ((0.0, 0.0, 0.5), slope), hx=2.0, hy=1.0, hz=0.5,
                    cfg=physics.ShapeConfig(mu=0.0))
    # above the slope (1.077 at x = 0): a particle that starts inside a shape is pushed out
    # within one substep and leaves with that speed, as in every position-based solver
    b.add_particle((0.0, 0.0, 1.2), (0, 0, 0), 0.1, radius=0.05)
    b.soft_contact_mu = 0.0  # frictionless: slides with g sin(30)
    model = b.finalize()
    solver = physics.SolverXPBD(model)
    state = model.state()
    contacts = model.contacts()
    speeds = []
    for _ in range(40):
        model.collide(state, contacts)
        for _ in range(10):
            solver.step(state, state, None, contacts, 1.0 / 600.0)
        speeds.append(np.linalg.norm(state.particle_qd[0]))
    accel = (speeds[-1] - speeds[20]) / (19 * 10 / 600.0)
    assert accel == pytest.approx(G * math.sin(tilt), rel=0.05)


def test_a_soft_cube_rests_on_the_ground_and_keeps_its_volume():
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    radius = 0.01
    b.add_soft_grid((0, 0.05, 0), None, (0, 0, 0), 2, 2, 2, 0.1, 0.1, 0.1, density=100.0,
                    k_mu=1e5, k_lambda=1e6, k_damp=0.0, particle_radius=radius)
    b.add_ground_plane()
    model = b.finalize()
    solver = physics.SolverXPBD(model, iterations=4)
    state = model.state()
    contacts = model.contacts()
    for _ in range(60):
        model.collide(state, contacts)
        for _ in range(16):
            solver.step(state, state, None, contacts, 1.0 / 960.0)
    q = state.particle_q.astype(np.float64)
    assert q[:, 1].min() == pytest.approx(radius, abs=1e-4)
    tets = model.tet_indices
    e = [q[tets[:, k]] - q[tets[:, 0]] for k in (1, 2, 3)]
    volume = (np.einsum("ij,ij->i", np.cross(e[0], e[1]), e[2]) / 6.0).sum()
    assert volume == pytest.approx(model.tet_volumes.sum(), rel=0.02)
    assert np.abs(state.particle_qd).max() < 0.05


def test_particles_stack_through_the_hash_grid():
    b = physics.ModelBuilder(up_axis="z", gravity=-G)
    radius = 0.05
    b.add_particle((0.0, 0.0, 0.0), (0, 0, 0), 0.0, radius=radius)  # pinned
    b.add_particle((0.0, 0.0, 0.2), (0, 0, 0), 0.1, radius=radius)
    model = b.finalize()
    solver = physics.SolverXPBD(model, iterations=2)
    state = model.state()
    for _ in range(600):
        solver.step(state, state, None, None, 1.0 / 600.0)
    assert state.particle_q[1, 2] == pytest.approx(2 * radius, abs=1e-4)


def test_bending_and_cloth_springs_hold_a_sheet():
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    b.add_cloth_grid((0, 1, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 4, 4, 0.1,
                     0.1, mass=0.01, fix_left=True, add_springs=True, spring_ke=1e4,
                     edge_ke=10.0)
    model = b.finalize()
    solver = physics.SolverXPBD(model, iterations=2)
    state = model.state()
    for _ in range(600):
        solver.step(state, state, None, None, 1.0 / 600.0)
    q = state.particle_q
    pairs = model.spring_indices.reshape(-1, 2)
    stretch = np.linalg.norm(q[pairs[:, 0]] - q[pairs[:, 1]], axis=1) / model.spring_rest_length
    assert np.abs(stretch - 1.0).max() < 0.05
    assert np.isfinite(q).all()


@pytest.mark.parametrize("spring_kd", [0.0, 2.0])
def test_batched_jacobi_passes_give_the_same_bits(spring_kd):
    """On one thread the Jacobi springs and bending edges run as batched loops
    (physics/batched.py): the same functions and sums as their kernels, so the same bits."""
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    b.add_cloth_grid((0, 1, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 5, 4, 0.1,
                     0.1, mass=0.1, fix_left=True, add_springs=True, spring_ke=1e3,
                     spring_kd=spring_kd, edge_ke=100.0)
    model = b.finalize()
    states = []
    # the whole substep in one launch, one launch per pass, one thread per constraint
    for batched, one_launch in ((True, True), (True, False), (False, False)):
        solver = physics.SolverXPBD(model, iterations=2, fuse=False)
        solver.batched = batched
        solver.batched_one_launch = one_launch
        state = model.state()
        for _ in range(256):
            solver.step(state, state, None, None, 1.0 / 60.0 / 64)
        states.append(state)
    assert np.isfinite(states[0].particle_q).all()
    assert np.abs(states[0].particle_q - model.particle_q).max() > 0.02
    for other in states[1:]:
        np.testing.assert_array_equal(states[0].particle_q, other.particle_q)
        np.testing.assert_array_equal(states[0].particle_qd, other.particle_qd)


def test_bad_arguments_are_value_errors(rope):
    with pytest.raises(ValueError, match="SolverXPBD: iterations must be an int >= 1, got 0"):
        physics.SolverXPBD(rope, iterations=0)
    solver = physics.SolverXPBD(rope)
    with pytest.raises(ValueError, match=r"SolverXPBD.step: dt must be finite and > 0, got -1"):
        solver.step(rope.state(), rope.state(), None, None, -1.0)


XPBD_KERNELS = ["predict_kernel", "zero_lambdas_kernel", "distance_kernel",
                "bending_constraint_kernel",
                "tetrahedron_constraint_kernel", "shape_contact_constraint_kernel",
                "particle_contact_constraint_kernel", "apply_deltas_kernel", "finish_kernel"]


@pytest.mark.parametrize("name", XPBD_KERNELS)
def test_every_xpbd_kernel_compiles_for_cuda_offline(name, private_device_code_cache):
    b = physics.ModelBuilder()
    b.add_soft_grid((0, 0, 0), None, (0, 0, 0), 1, 1, 1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 0.0)
    b.add_spring(0, 1, 1.0, 0.0)
    b.add_edge(0, 1, 2, 3, rest=0.0)
    m = b.finalize()
    x = m.particle_q
    f = np.zeros_like(x)
    c = m.contacts(soft_contact_max=1)
    lam = np.zeros(4, np.float32)
    inputs = {
        "predict_kernel": [x, x, f, m.particle_inv_mass, m.particle_flags,
                           sim.vec3(0.0, 0.0, -G), 1e-3, f, x, x, f],
        "zero_lambdas_kernel": [lam, lam, np.zeros((m.tet_count, 2), np.float32)],
        "distance_kernel": [x, x, m.particle_inv_mass, m.spring_indices, m.spring_rest_length,
                            m.spring_stiffness, m.spring_damping, 1e-3, lam, lam, f],
        "bending_constraint_kernel": [x, m.particle_inv_mass, m.edge_indices, m.edge_rest_angle,
                                      m.edge_bending_properties, 1e-3, lam, lam, f],
        "tetrahedron_constraint_kernel": [x, m.particle_inv_mass, m.tet_indices, m.tet_poses,
                                          m.tet_activations, m.tet_materials, 1e-3,
                                          np.zeros((m.tet_count, 2), np.float32),
                                          np.zeros((m.tet_count, 2), np.float32), f],
        "shape_contact_constraint_kernel": [x, x, m.particle_inv_mass, m.particle_radius,
                                            m.particle_flags, m.shape_material_mu, 0.5,
                                            c.soft_contact_count, c.soft_contact_particle,
                                            c.soft_contact_shape, c.soft_contact_body_pos,
                                            c.soft_contact_normal, f],
        "particle_contact_constraint_kernel": [0, x, x, m.particle_inv_mass, m.particle_radius,
                                               m.particle_flags, m.particle_world, 0.5, 0.1, f],
        "apply_deltas_kernel": [x, f, True, x],
        "finish_kernel": [x, x, f, m.particle_flags, 1e-3, 1e5, f],
    }[name]
    library = getattr(xc, name).compile("cuda", inputs, cc=(7, 5))
    ptx = library.get_asm_str(cc=(7, 5))
    assert ".entry" in ptx
    assert_float32_only(ptx)
