"""SolverFeatherstone (reduced coordinates), checked by physics: a pendulum's period
against 2 pi sqrt(I_pivot / (m g d)), a 3-link chain keeping its energy and its joints,
free fall of a floating body, a ball joint's swing, a drive reaching its target, a
limit holding, articulations of different sizes in one model moving as they do alone,
contacts carrying a floating box, bad input, and the CUDA compile offline."""

import math

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import physics
from numba_sim.physics import featherstone
from ptx_checks import assert_float32_only

from test_physics_rigid import G, chain_energy_and_gap, pendulum_model, tilt
from test_physics_rigid import chain_builder as chain_model


def start(model, **coordinates):
    """A state with the given joint coordinates (index: value) and its body poses."""
    state = model.state()
    for index, value in coordinates.items():
        state.joint_q[int(index[1:])] = value
    physics.eval_fk(model, state.joint_q, state.joint_qd, state)
    return state


def test_pendulum_period_matches_the_physical_pendulum_within_0_2_percent():
    theta0 = 0.05
    model = pendulum_model(0.0)
    state = start(model, q0=theta0)
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    dt = 1.0 / 600.0
    angles = []
    for _ in range(3000):
        solver.step(state, state, None, None, dt)
        angles.append(float(state.joint_q[0]))
    angles = np.array(angles)
    t = dt * (np.arange(len(angles)) + 1)
    down = [t[k] + angles[k] * dt / (angles[k] - angles[k + 1])
            for k in range(len(angles) - 1) if angles[k] > 0.0 >= angles[k + 1]]
    m, d = float(model.body_mass[0]), 0.5
    inertia_pivot = float(model.body_inertia[0][0, 0]) + m * d * d
    expected = 2.0 * math.pi * math.sqrt(inertia_pivot / (m * G * d)) * (1.0 + theta0 ** 2 / 16)
    assert len(down) >= 3
    assert float(np.mean(np.diff(down))) == pytest.approx(expected, rel=2e-3)
    assert np.abs(angles[-int(expected / dt):]).max() == pytest.approx(theta0, rel=1e-3)
    # the body follows the joint: its top end stays at the pivot
    top = state.body_q[0, :3] + physics.checks.quat_rotate(
        state.body_q[0, 3:].astype(np.float64), np.array([0.0, 0.0, 0.5]))
    np.testing.assert_allclose(top, model.joint_X_p[0, :3], atol=1e-5)


def test_three_link_chain_keeps_its_energy_and_its_joints():
    model = chain_model().finalize()
    state = start(model, q0=-math.pi / 4)
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    energies, gaps = [chain_energy_and_gap(model, state)[0]], []
    for _ in range(120):
        for _ in range(20):
            solver.step(state, state, None, None, 1.0 / 1200.0)
        energy, gap = chain_energy_and_gap(model, state)
        energies.append(energy)
        gaps.append(gap)
    energies = np.array(energies)
    assert energies[0] < -20.0                       # potential zero at the pivot
    assert (energies.max() - energies.min()) < 0.01 * abs(energies[0])
    assert max(gaps) < 1e-5
    assert np.ptp(state.joint_q) > 0.1               # it moved


def test_articulations_of_different_sizes_move_as_they_do_alone():
    """warp.sim's Featherstone reads out of bounds when articulation sizes differ."""
    def run(builder):
        model = builder.finalize()
        state = model.state()
        state.joint_q[:] = -0.3
        physics.eval_fk(model, state.joint_q, state.joint_qd, state)
        solver = physics.SolverFeatherstone(model, angular_damping=0.0)
        for _ in range(300):
            solver.step(state, state, None, None, 1.0 / 600.0)
        return state.body_q.copy(), state.joint_q.copy()

    one = chain_model(1, pivot=(0.0, 0.0, 3.0))
    three = chain_model(3, pivot=(2.0, 0.0, 3.0))
    both = chain_model(3, pivot=(2.0, 0.0, 3.0), builder=chain_model(1, pivot=(0.0, 0.0, 3.0)))
    q1, j1 = run(one)
    q3, j3 = run(three)
    q, j = run(both)
    np.testing.assert_array_equal(q, np.concatenate([q1, q3]))
    np.testing.assert_array_equal(j, np.concatenate([j1, j3]))


def test_replicated_worlds_far_from_the_origin_move_as_the_first():
    """Spatial quantities are about each articulation's origin: a world 4 km away (the
    4096th of worlds 1 m apart) moves exactly as the first (about the world origin, its
    inertia and motion subspace lost their float32 digits: NaN after 10 frames)."""
    b = physics.ModelBuilder(gravity=-G)
    b.replicate(chain_model(1), 2, spacing=(0.0, 4000.0, 0.0))
    model = b.finalize()
    state = start(model, q0=-0.3, q1=-0.3)
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    other = model.state()
    for _ in range(10):
        state = solver.step_frame(state, other, None, None, 1.0 / 600.0, 10)
        other = (other, state)[other is state]
    assert abs(float(state.joint_q[0]) + 0.3) > 0.1                      # it swung
    assert state.joint_q[1] == state.joint_q[0]
    assert state.joint_qd[1] == state.joint_qd[0]
    np.testing.assert_allclose(state.body_q[1] - state.body_q[0], [0, 4000, 0, 0, 0, 0, 0],
                               atol=5e-4)


def floating_box(z=1.0, gravity=-G, ground=False):
    b = physics.ModelBuilder(gravity=gravity)
    body = b.add_body(xform=((0.0, 0.0, z), None))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b.add_joint_free(body)
    if ground:
        b.add_ground_plane()
    return b.finalize()


def test_a_free_body_falls_by_the_symplectic_euler_formula_and_spins_freely():
    model = floating_box()
    state = model.state()
    state.joint_qd[3:6] = (0.0, 0.0, 2.0)             # spin about the vertical
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    dt, n = 1.0 / 600.0, 120
    for _ in range(n):
        solver.step(state, state, None, None, dt)
    assert state.body_q[0, 2] == pytest.approx(1.0 - G * dt * dt * n * (n + 1) / 2, abs=1e-5)
    assert state.body_qd[0, 2] == pytest.approx(-G * dt * n, rel=1e-5)
    np.testing.assert_allclose(state.body_qd[0, 3:], [0.0, 0.0, 2.0], atol=1e-5)
    spin = 2.0 * math.atan2(float(state.body_q[0, 5]), float(state.body_q[0, 6]))
    assert spin == pytest.approx(2.0 * dt * n, abs=1e-4)
    np.testing.assert_allclose(state.joint_q[:3], state.body_q[0, :3], atol=1e-6)


def test_a_floating_box_comes_to_rest_on_the_ground_at_the_penalty_equilibrium():
    model = floating_box(z=0.12, ground=True)
    solver = physics.SolverFeatherstone(model)
    state, contacts = model.state(), model.contacts()
    for _ in range(120):
        model.collide(state, contacts)
        for _ in range(20):
            solver.step(state, state, None, contacts, 1.0 / 1200.0)
    depth = float(model.body_mass[0]) * G / (4 * 1.0e5)
    assert state.body_q[0, 2] == pytest.approx(0.1 - depth, abs=0.02 * depth)
    assert np.abs(state.body_qd[0]).max() < 1e-3
    assert tilt(state.body_q[0, 3:]) < 1e-2


def test_a_ball_joint_swings_through_and_holds():
    model = pendulum_model(0.0, joint="ball")
    state = model.state()
    s = math.sin(0.25)
    state.joint_q[0:4] = (s, 0.0, 0.0, math.cos(0.25))    # 0.5 rad about x
    physics.eval_fk(model, state.joint_q, state.joint_qd, state)
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    lowest = 1.0
    for _ in range(600):
        solver.step(state, state, None, None, 1.0 / 600.0)
        lowest = min(lowest, float(state.joint_q[0]))
    assert lowest < -0.2                               # swung to the other side
    top = state.body_q[0, :3] + physics.checks.quat_rotate(
        state.body_q[0, 3:].astype(np.float64), np.array([0.0, 0.0, 0.5]))
    np.testing.assert_allclose(top, model.joint_X_p[0, :3], atol=1e-5)
    assert np.linalg.norm(state.joint_q[0:4]) == pytest.approx(1.0, abs=1e-6)


def test_a_revolute_drive_reaches_its_target():
    b = physics.ModelBuilder(gravity=0.0)
    body = b.add_body(xform=((0.0, 0.3, 1.0), None))
    b.add_shape_box(body, hx=0.05, hy=0.3, hz=0.05)
    b.add_joint_revolute(-1, body, parent_xform=((0.0, 0.0, 1.0), None),
                         child_xform=((0.0, -0.3, 0.0), None), axis=(1.0, 0.0, 0.0),
                         target_q=0.7, target_ke=2000.0, target_kd=100.0)
    model = b.finalize()
    solver = physics.SolverFeatherstone(model)
    state, control = model.state(), model.control()
    for _ in range(600):
        solver.step(state, state, None, None, 1.0 / 600.0)
    assert state.joint_q[0] == pytest.approx(0.7, abs=1e-4)
    control.joint_target_q[0] = -0.4
    for _ in range(600):
        solver.step(state, state, control, None, 1.0 / 600.0)
    assert state.joint_q[0] == pytest.approx(-0.4, abs=1e-4)
    assert abs(state.joint_qd[0]) < 1e-3


def test_a_stiff_joint_limit_holds_within_a_hundredth_of_a_radian():
    """A bar held out horizontally falls onto a 0.2 rad limit (limit_ke 1e5, taken
    implicitly: stable at 600 Hz); it overshoots by about sqrt(2 E / ke) and rests
    m g d / ke past it."""
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.0, 0.3, 1.0), None))
    b.add_shape_box(body, hx=0.05, hy=0.3, hz=0.05)
    b.add_joint_revolute(-1, body, parent_xform=((0.0, 0.0, 1.0), None),
                         child_xform=((0.0, -0.3, 0.0), None), axis=(1.0, 0.0, 0.0),
                         limit_lower=-0.2, limit_upper=0.2, limit_ke=1.0e5, limit_kd=100.0)
    model = b.finalize()
    solver = physics.SolverFeatherstone(model)
    state = model.state()
    angles = []
    for _ in range(1200):
        solver.step(state, state, None, None, 1.0 / 600.0)
        angles.append(float(state.joint_q[0]))
    assert min(angles) > -0.2 - 1e-2
    m, d = float(model.body_mass[0]), 0.3
    assert angles[-1] == pytest.approx(-0.2 - m * G * d * math.cos(0.2) / 1.0e5, abs=1e-4)
    assert abs(state.joint_qd[0]) < 1e-3


def test_eval_fk_places_the_bodies_of_a_chain():
    model = chain_model().finalize()
    state = start(model, q0=math.pi / 2)                 # straight up from the pivot
    np.testing.assert_allclose(state.body_q[:, 2], [3.25, 3.75, 4.25], atol=1e-6)
    np.testing.assert_allclose(state.body_q[:, 1], 0.0, atol=1e-6)


BAD_INPUT = [
    (lambda: physics.SolverFeatherstone(floating_box(), angular_damping=-1.0),
     r"SolverFeatherstone: angular_damping must be finite and >= 0, got -1.0"),
    (lambda: physics.SolverFeatherstone(floating_box(), update_mass_matrix_interval=0),
     r"SolverFeatherstone: update_mass_matrix_interval must be an int >= 1, got 0"),
    (lambda: physics.SolverFeatherstone("model"),
     r"SolverFeatherstone: model must be a physics Model"),
]


@pytest.mark.parametrize("make, message", BAD_INPUT)
def test_bad_settings_raise_value_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_body_without_a_joint_is_named():
    b = physics.ModelBuilder()
    b.add_body(mass=1.0, inertia=(1, 1, 1))
    body = b.add_body(mass=1.0, inertia=(1, 1, 1))
    b.add_joint_free(body)
    with pytest.raises(ValueError, match=r"SolverFeatherstone: bodies \[0\] have no joint"):
        physics.SolverFeatherstone(b.finalize())


def test_a_free_joint_under_a_body_and_a_misordered_tree_are_rejected():
    b = physics.ModelBuilder()
    a = b.add_body(mass=1.0, inertia=(1, 1, 1))
    c = b.add_body(mass=1.0, inertia=(1, 1, 1))
    b.add_joint_revolute(-1, a)
    b.add_joint_free(c, parent=a)
    with pytest.raises(ValueError, match=r"joint 1 is a FREE joint under body 0"):
        physics.SolverFeatherstone(b.finalize())
    b = physics.ModelBuilder()
    a = b.add_body(mass=1.0, inertia=(1, 1, 1))
    c = b.add_body(mass=1.0, inertia=(1, 1, 1))
    b.add_joint_revolute(a, c)
    b.add_joint_revolute(-1, a)
    with pytest.raises(ValueError, match=r"joint 0 comes before its parent's joint"):
        physics.SolverFeatherstone(b.finalize())


def test_eval_fk_checks_its_arrays():
    model = chain_model().finalize()
    state = model.state()
    with pytest.raises(ValueError, match=r"eval_fk: joint_q must have shape \(3,\), got \(2,\)"):
        physics.eval_fk(model, state.joint_q[:2], state.joint_qd, state)


@pytest.mark.parametrize("name", ["featherstone_step_kernel", "eval_fk_kernel",
                                  "eval_ik_kernel"])
def test_featherstone_kernels_compile_for_cuda_offline(name, private_device_code_cache):
    model = chain_model().finalize()
    solver = physics.SolverFeatherstone(model)
    state = model.state()
    solver.step(state, state, None, None, 1e-3)         # the recorded launch's inputs
    step_inputs = next(v for v in solver._recorded.values()
                       if v[1] is featherstone.featherstone_step_kernel)[2]
    if name == "featherstone_step_kernel":
        kernel, inputs = featherstone.featherstone_step_kernel, list(step_inputs)
    elif name == "eval_fk_kernel":
        kernel = featherstone.eval_fk_kernel
        inputs = [step_inputs[0], step_inputs[1], state.joint_q, state.joint_qd, state.body_q,
                  state.body_qd]
    else:
        kernel = featherstone.eval_ik_kernel
        inputs = [step_inputs[0], state.body_q, state.body_qd, state.joint_q, state.joint_qd]
    library = kernel.compile("cuda", inputs, cc=(7, 5))
    ptx = library.get_asm_str(cc=(7, 5))
    assert ".entry" in ptx
    assert_float32_only(ptx)


def test_the_pendulum_demo_swings_its_chains_without_gaining_energy():
    from numba_sim import examples
    from numba_sim.examples import pendulum

    assert examples.load("pendulum") is pendulum.Example
    example = pendulum.Example()
    model = example.model

    def energy():
        q = example.states[0].body_q.astype(np.float64)
        qd = example.states[0].body_qd.astype(np.float64)
        total = 0.0
        for i in range(model.body_count):
            rot = np.stack([physics.checks.quat_rotate(q[i, 3:], e) for e in np.eye(3)], axis=1)
            inertia = rot @ model.body_inertia[i].astype(np.float64) @ rot.T
            mass = float(model.body_mass[i])
            total += 0.5 * mass * qd[i, :3] @ qd[i, :3] + 0.5 * qd[i, 3:] @ inertia @ qd[i, 3:] \
                + mass * G * (q[i, 1] - 3.0)                # y up
        return total

    start = example.positions().copy()
    e0 = energy()
    for _ in range(30):
        example.step()
    corners = example.positions()
    assert np.isfinite(corners).all() and corners.shape == (8 * model.body_count, 3)
    assert (corners[:, 1] < start[:, 1] - 0.5).any()               # the chains fell
    assert abs(energy() - e0) < 0.01 * abs(model.body_mass.sum() * G * 1.0)
    assert example.triangles().max() == 8 * model.body_count - 1


def test_step_frame_is_one_launch_with_the_results_of_its_steps():
    model = chain_model().finalize()
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    a0, a1 = start(model, q0=-0.5), model.state()
    b0, b1 = start(model, q0=-0.5), model.state()
    for substeps in (4, 5):
        for k in range(substeps):
            solver.step((a0, a1)[k % 2], (a0, a1)[1 - k % 2], None, None, 1.0 / 600.0)
        looped = (a0, a1)[substeps % 2]
        framed = solver.step_frame(b0, b1, None, None, 1.0 / 600.0, substeps)
        assert framed is (b0, b1)[substeps % 2]
        np.testing.assert_array_equal(framed.joint_q, looped.joint_q)
        np.testing.assert_array_equal(framed.body_q, looped.body_q)
        a0, a1, b0, b1 = looped, (a0, a1)[1 - substeps % 2], framed, (b0, b1)[1 - substeps % 2]
    with pytest.raises(ValueError, match="SolverFeatherstone.step_frame: substeps must be an "
                                         "int >= 1, got 0"):
        solver.step_frame(b0, b1, None, None, 1e-3, 0)


def test_step_frame_is_one_launch_when_collide_found_no_contacts():
    """A box high above the ground: its Contacts hold none, so the frame is the one launch
    of a frame without contacts (no contact-force launch), with the same results."""
    from numba_sim.physics import rigid_kernels

    model = floating_box(z=2.0, ground=True)
    solvers = physics.SolverFeatherstone(model), physics.SolverFeatherstone(model)
    contacts = model.contacts()
    states = [(model.state(), model.state()) for _ in solvers]
    model.collide(states[0][0], contacts)
    assert contacts.rigid_contact_max > 0 and int(contacts.rigid_contact_count[0]) == 0
    ends = [solver.step_frame(*pair, None, c, 1.0 / 600.0, 5)
            for solver, pair, c in zip(solvers, states, (contacts, None))]
    assert ends[0] is states[0][1]
    np.testing.assert_array_equal(ends[0].joint_q, ends[1].joint_q)
    np.testing.assert_array_equal(ends[0].body_q, ends[1].body_q)
    assert ends[0].body_q[0, 2] < 2.0                                      # it fell
    assert not any(key[0] == id(rigid_kernels.rigid_contact_force_kernel)
                   for key in solvers[0]._recorded)


def test_eval_ik_inverts_eval_fk_for_every_joint_type():
    b = physics.ModelBuilder(gravity=-G)
    links = []
    for k in range(4):
        links.append(b.add_body(xform=((0.0, 0.5 * k, 1.0), None)))
        b.add_shape_box(links[-1], hx=0.05, hy=0.2, hz=0.05)
    b.add_joint_revolute(-1, links[0], parent_xform=((0.0, 0.0, 1.0), None),
                         axis=(0.3, 0.0, 1.0))
    b.add_joint_prismatic(links[0], links[1], parent_xform=((0.0, 0.5, 0.0), None),
                          axis=(0.0, 1.0, 0.0))
    b.add_joint_ball(links[1], links[2], parent_xform=((0.0, 0.5, 0.0), None))
    b.add_joint_fixed(links[2], links[3], parent_xform=((0.0, 0.5, 0.0), None))
    free = b.add_body(xform=((2.0, 0.0, 1.0), None))
    b.add_shape_sphere(free, radius=0.1)
    b.add_joint_free(free)
    model = b.finalize()
    rng = np.random.default_rng(7)
    q = model.joint_q.copy()
    q[0], q[1] = 0.7, 0.15
    ball = rng.normal(size=4)
    q[2:6] = ball / np.linalg.norm(ball)
    rot = rng.normal(size=4)
    q[6:9], q[9:13] = (2.0, 0.3, 1.2), rot / np.linalg.norm(rot)
    qd = rng.normal(size=model.joint_dof_count).astype(np.float32)
    state = model.state()
    physics.eval_fk(model, q, qd, state)
    q_back, qd_back = np.zeros_like(q), np.zeros_like(qd)
    physics.eval_ik(model, state, q_back, qd_back)
    sign = np.sign(q_back[2:6] @ q[2:6])                # q and -q: one rotation
    q_back[2:6] *= sign
    sign = np.sign(q_back[9:13] @ q[9:13])
    q_back[9:13] *= sign
    np.testing.assert_allclose(q_back, q, atol=2e-6)
    np.testing.assert_allclose(qd_back, qd, atol=2e-5)


def test_eval_ik_reads_the_angle_of_a_maximal_coordinate_pendulum():
    model = pendulum_model(0.3)                         # placed at 0.3 rad, joint_q 0
    state = model.state()
    physics.SolverXPBD(model).step(state, state, None, None, 1.0 / 600.0)
    q, qd = model.joint_q.copy(), model.joint_qd.copy()
    physics.eval_ik(model, state, q, qd)
    body = state.body_q[0, 3:].astype(np.float64)
    assert q[0] == pytest.approx(2.0 * math.atan2(body[0], body[3]), abs=1e-6)
    assert qd[0] == pytest.approx(float(state.body_qd[0, 3]), abs=1e-5)
