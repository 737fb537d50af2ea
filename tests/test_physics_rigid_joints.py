"""D6 and distance joints outside XPBD (issue 19): SolverSemiImplicit's joint springs for
both, SolverFeatherstone's D6 (its axes as dofs); checked by twins (a D6 that spells a
revolute, prismatic or ball joint moves as that joint), kept axes and joint points,
energy, a rope's free fall and rest, drives, and FK/IK round trips."""

import math

import numpy as np
import pytest

from numba_sim import physics
from numba_sim.physics.checks import quat_rotate
from test_physics_rigid import D6_TWINS, G, hanging_rod


def run(model, solver, steps, dt, state=None):
    state = state or model.state()
    for _ in range(steps):
        solver.step(state, state, None, None, dt)
    return state


# ------------------------------------------------------------------------ semi-implicit

@pytest.mark.parametrize("twin", sorted(D6_TWINS))
def test_semi_implicit_d6_joints_move_as_the_joints_they_spell(twin):
    runs = []
    for add in D6_TWINS[twin]:
        model = hanging_rod(add)
        runs.append(run(model, physics.SolverSemiImplicit(model), 600, 1.0 / 1200.0).body_q)
    np.testing.assert_allclose(runs[0], runs[1], atol=1e-6)
    assert np.abs(runs[0] - hanging_rod(D6_TWINS[twin][0]).body_q).max() > 1e-2   # it moved


def test_semi_implicit_universal_d6_keeps_its_axes_perpendicular():
    """Angular axes x (parent) and y (child), stiff joint springs: the child's y stays
    perpendicular to the parent's x and the rod's top at the pivot (within what the
    springs give: m g / ke = 5e-4 m, and the swing's load), while it swings about both."""
    model = hanging_rod(lambda b, c, p, x: b.add_joint_d6(
        -1, c, angular_axes=[(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)], parent_xform=p, child_xform=x))
    model.joint_attach_ke, model.joint_attach_kd = 1.0e5, 1.0e2
    solver = physics.SolverSemiImplicit(model, angular_damping=0.0)
    state = model.state()
    w = np.array([0.0, 2.0, 1.0])                       # a kick about y (and z: held)
    q = state.body_q[0, 3:].astype(np.float64)
    state.body_qd[0, 3:] = w
    state.body_qd[0, :3] = np.cross(w, -quat_rotate(q, np.array([0.0, 0.0, 0.5])))  # top still
    worst, gap = 0.0, 0.0
    for _ in range(2400):
        solver.step(state, state, None, None, 1.0 / 2400.0)
        q = state.body_q[0, 3:].astype(np.float64)
        worst = max(worst, abs(float(quat_rotate(q, np.array([0.0, 1.0, 0.0]))[0])))
        top = state.body_q[0, :3] + quat_rotate(q, np.array([0.0, 0.0, 0.5]))
        gap = max(gap, float(np.linalg.norm(top - (0.0, 0.0, 2.0))))
    assert worst < 1e-3 and gap < 3e-3            # measured 3.3e-5, 2.1e-3 m
    assert abs(float(state.body_qd[0, 4])) > 0.1         # it swings about y


@pytest.mark.parametrize("targets", [(0.4, 0.5, -0.3), (0.4, 0.5)])
def test_semi_implicit_d6_drives_reach_featherstone_angles(targets):
    """Drives on a D6's two or three angular axes act on SolverFeatherstone's coordinates
    (the Euler angles about the turned axes, as eval_ik reads them): the rod settles at
    the targets (drives on the rotation vector's components along the parent's axes, as
    before, left them 0.18 rad off with three axes, 0.009 rad with two)."""
    # (the twist about the rod's own axis, z, gently: its inertia is 1/200 of the swings')
    axes = [{"axis": a, "target_q": q, "target_ke": ke, "target_kd": kd} for a, q, ke, kd in zip(
        [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)], targets, (200.0, 200.0, 5.0),
        (50.0, 50.0, 0.5))]
    model = hanging_rod(lambda b, c, p, x: b.add_joint_d6(
        -1, c, angular_axes=axes, parent_xform=p, child_xform=x))
    model.gravity[:] = 0.0
    state = run(model, physics.SolverSemiImplicit(model, angular_damping=0.0), 2400,
                1.0 / 1200.0)
    q = np.zeros(model.joint_coord_count, np.float32)
    qd = np.zeros(model.joint_dof_count, np.float32)
    physics.eval_ik(model, state, q, qd)
    np.testing.assert_allclose(q, targets, atol=2e-3)
    np.testing.assert_allclose(qd, 0.0, atol=1e-2)


def test_semi_implicit_distance_joint_falls_slack_then_hangs_at_its_stretch():
    """A 1 kg box 0.5 m below the pivot on a 1 m rope: it falls freely (symplectic Euler:
    ``z0 - g h^2 n (n + 1) / 2``) until the rope is taut, then hangs at
    ``1 + m g / joint_attach_ke`` below the pivot."""
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.0, 0.0, 1.5), None))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.05)
    b.add_joint_distance(-1, body, parent_xform=((0.0, 0.0, 2.0), None), max_distance=1.0)
    model = b.finalize()
    solver = physics.SolverSemiImplicit(model)
    state = model.state()
    dt = 1.0 / 1200.0
    for n in range(1, 241):                          # 0.2 s: 0.196 m of free fall
        solver.step(state, state, None, None, dt)
    assert state.body_q[0, 2] == pytest.approx(1.5 - G * dt * dt * n * (n + 1) / 2, abs=1e-6)
    run(model, solver, 2400, dt, state)
    m = float(model.body_mass[0])
    assert 2.0 - state.body_q[0, 2] == pytest.approx(1.0 + m * G / model.joint_attach_ke,
                                                     abs=1e-4)
    assert np.abs(state.body_qd[0]).max() < 1e-3


# -------------------------------------------------------------------------- Featherstone

def featherstone_run(model, q, qd, steps, dt=1.0 / 1200.0):
    state = model.state()
    state.joint_q[:] = q
    state.joint_qd[:] = qd
    physics.eval_fk(model, state.joint_q, state.joint_qd, state)
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    return run(model, solver, steps, dt, state)


FEATHERSTONE_TWINS = {   # (q, qd) of the D6, of its twin
    "revolute": ((0.5,), (0.0,), (0.5,), (0.0,)),
    "prismatic": ((0.1,), (0.3,), (0.1,), (0.3,)),
    "ball": ((0.0, 0.0, 0.0), (1.0, 0.5, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 0.5, 0.0)),
}


@pytest.mark.parametrize("twin", sorted(FEATHERSTONE_TWINS))
def test_featherstone_d6_joints_move_as_the_joints_they_spell(twin):
    """Reduced coordinates: a D6's axes as its dofs (one angular axis a hinge, one linear
    a slider: the same motion from the same start, 0.5 s; three angular axes a ball, whose
    Euler angles integrate differently from the ball's quaternion: the two agree at first
    order in the step, the difference halving with it)."""
    q6, qd6, q, qd = FEATHERSTONE_TWINS[twin]
    differences = []
    for steps in ((600, 1200) if twin == "ball" else (600,)):
        d6, other = (hanging_rod(add) for add in D6_TWINS[twin])
        a = featherstone_run(d6, q6, qd6, steps, 0.5 / steps)
        b = featherstone_run(other, q, qd, steps, 0.5 / steps)
        differences.append((np.abs(a.body_q - b.body_q).max(),
                            np.abs(a.body_qd - b.body_qd).max()))
    if twin == "ball":
        assert differences[0][0] < 2e-4 and differences[0][1] < 1e-3
        assert 0.4 < differences[1][0] / differences[0][0] < 0.6
        assert 0.4 < differences[1][1] / differences[0][1] < 0.6
    else:
        assert differences[0][0] < 2e-5 and differences[0][1] < 2e-4


def cart_pendulum():
    """A rod hung from a D6 at (0, 0, 2): sliding along y and turning about x then y."""
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.0, 0.0, 1.5), None))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.5)
    b.add_joint_d6(-1, body, linear_axes=[(0.0, 1.0, 0.0)],
                   angular_axes=[(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)],
                   parent_xform=((0.0, 0.0, 2.0), None), child_xform=((0.0, 0.0, 0.5), None))
    return b.finalize()


def energy(model, state):
    q = state.body_q.astype(np.float64)
    qd = state.body_qd.astype(np.float64)
    total = 0.0
    for i in range(model.body_count):
        rot = np.stack([quat_rotate(q[i, 3:], e) for e in np.eye(3)], axis=1)
        inertia = rot @ model.body_inertia[i].astype(np.float64) @ rot.T
        mass = float(model.body_mass[i])
        com = q[i, :3] + quat_rotate(q[i, 3:], model.body_com[i].astype(np.float64))
        total += 0.5 * mass * qd[i, :3] @ qd[i, :3] + 0.5 * qd[i, 3:] @ inertia @ qd[i, 3:] \
            + mass * G * (com[2] - 2.0)
    return total


def test_featherstone_d6_keeps_its_energy_and_its_joint_point_on_the_slide():
    model = cart_pendulum()
    state = model.state()
    state.joint_q[:] = (0.0, 0.6, -0.4)
    state.joint_qd[:] = (0.5, 0.0, 1.0)
    physics.eval_fk(model, state.joint_q, state.joint_qd, state)
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    energies, off_slide = [energy(model, state)], 0.0
    for _ in range(60):
        run(model, solver, 20, 1.0 / 1200.0, state)
        energies.append(energy(model, state))
        q = state.body_q[0].astype(np.float64)
        top = q[:3] + quat_rotate(q[3:], np.array([0.0, 0.0, 0.5]))
        off_slide = max(off_slide, abs(top[0]), abs(top[2] - 2.0))
    energies = np.array(energies)
    assert np.ptp(energies) < 5e-3 * abs(energies[0])
    assert off_slide < 1e-5
    assert np.ptp(state.joint_q) > 0.1


def test_featherstone_d6_drive_reaches_its_target():
    b = physics.ModelBuilder(gravity=0.0)
    body = b.add_body()
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.5)
    b.add_joint_d6(-1, body, angular_axes=[
        {"axis": (1.0, 0.0, 0.0), "target_q": 0.7, "target_ke": 2000.0, "target_kd": 100.0},
        (0.0, 1.0, 0.0)], child_xform=((0.0, 0.0, 0.5), None))
    model = b.finalize()
    state = featherstone_run(model, (0.0, 0.0), (0.0, 0.0), 1200)
    assert state.joint_q[0] == pytest.approx(0.7, abs=1e-3)
    assert abs(state.joint_q[1]) < 1e-6 and abs(state.joint_qd[0]) < 1e-2


def test_featherstone_distance_joint_falls_slack_then_hangs_at_its_stretch():
    """The semi-implicit rope's box under SolverFeatherstone (the distance joint as slides
    and a ball, its length kept by limit_ke/kd): free fall by the symplectic-Euler formula
    while slack, then rest at ``1 + m g / limit_ke``; eval_ik reads the coordinates back."""
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.0, 0.0, 1.5), None))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.05)
    b.add_joint_distance(-1, body, parent_xform=((0.0, 0.0, 2.0), None), max_distance=1.0)
    model = b.finalize()
    model.joint_limit_ke[:] = 1.0e4
    model.joint_limit_kd[:] = 100.0
    q = np.array(model.joint_q)
    assert q[:3].tolist() == [0.0, 0.0, -0.5] and model.joint_dof_count == 6
    dt = 1.0 / 1200.0
    state = featherstone_run(model, q, np.zeros(6), 240, dt)      # 0.2 s: 0.196 m of fall
    n = 240
    assert state.body_q[0, 2] == pytest.approx(1.5 - G * dt * dt * n * (n + 1) / 2, abs=1e-5)
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    run(model, solver, 2400, dt, state)
    m = float(model.body_mass[0])
    assert 2.0 - state.body_q[0, 2] == pytest.approx(1.0 + m * G / 1.0e4, abs=1e-5)
    assert np.abs(state.body_qd[0]).max() < 1e-3
    np.testing.assert_allclose(state.body_q[0, 3:], [0.0, 0.0, 0.0, 1.0], atol=1e-6)
    q, qd = np.zeros(7, np.float32), np.zeros(6, np.float32)
    physics.eval_ik(model, state, q, qd)
    np.testing.assert_allclose(q, state.joint_q, atol=2e-6)
    np.testing.assert_allclose(qd, state.joint_qd, atol=1e-5)


def test_featherstone_distance_joint_swings_as_a_rope_under_a_body():
    """A box on a 0.6 m distance joint from the end of a hinged rod, released slack and
    sideways: it falls, the rope goes taut and never stretches past 0.6 m by more than
    the limit spring gives, and the rod is pulled round by it."""
    b = physics.ModelBuilder(gravity=-G)
    rod = b.add_body(xform=((0.25, 0.0, 2.0), None))
    b.add_shape_box(rod, hx=0.25, hy=0.03, hz=0.03)
    b.add_joint_revolute(-1, rod, parent_xform=((0.0, 0.0, 2.0), None),
                         child_xform=((-0.25, 0.0, 0.0), None), axis=(0.0, 1.0, 0.0))
    box = b.add_body(xform=((0.5, 0.3, 1.8), None))
    b.add_shape_box(box, hx=0.05, hy=0.05, hz=0.05)
    b.add_joint_distance(rod, box, parent_xform=((0.25, 0.0, 0.0), None), max_distance=0.6)
    model = b.finalize()
    model.joint_limit_ke[:] = 1.0e5
    model.joint_limit_kd[:] = 10.0
    state = featherstone_run(model, model.joint_q, np.zeros(model.joint_dof_count), 0)
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    lengths = []
    for _ in range(1200):
        solver.step(state, state, None, None, 1.0 / 1200.0)
        end = state.body_q[0, :3] + quat_rotate(state.body_q[0, 3:].astype(np.float64),
                                                np.array([0.25, 0.0, 0.0]))
        lengths.append(float(np.linalg.norm(state.body_q[1, :3] - end)))
    assert np.isfinite(state.body_q).all()
    # (the jerk when it goes taut at ~3 m/s stretches the spring by ~v sqrt(m / ke): 1e-2)
    assert lengths[0] < 0.4 and 0.6 < max(lengths) < 0.6 + 2e-2
    assert abs(float(state.joint_q[0])) > 0.1                  # the rod was pulled round


def test_eval_ik_inverts_eval_fk_for_d6_joints():
    """Two D6 joints: two slides and three angular axes (the last against the right-hand
    rule), and one slide with two angular axes; random coordinates and rates back to
    2e-5."""
    b = physics.ModelBuilder(gravity=-G)
    first = b.add_body(xform=((0.0, 0.0, 1.0), None))
    b.add_shape_box(first, hx=0.05, hy=0.2, hz=0.05)
    second = b.add_body(xform=((0.0, 0.5, 1.0), None))
    b.add_shape_box(second, hx=0.05, hy=0.2, hz=0.05)
    s = math.sqrt(0.5)
    b.add_joint_d6(-1, first, linear_axes=[(1.0, 0.0, 0.0), (0.0, 0.0, 1.0)],
                   angular_axes=[(s, s, 0.0), (-s, s, 0.0), (0.0, 0.0, -1.0)],
                   parent_xform=((0.0, 0.0, 1.0), None))
    b.add_joint_d6(first, second, linear_axes=[(0.0, 1.0, 0.0)],
                   angular_axes=[(0.0, 0.0, 1.0), (1.0, 0.0, 0.0)],
                   parent_xform=((0.0, 0.5, 0.0), None))
    model = b.finalize()
    rng = np.random.default_rng(3)
    q = np.array([0.2, -0.1, 0.4, -0.6, 0.9, 0.3, 0.5, -0.7], dtype=np.float32)
    qd = rng.normal(size=model.joint_dof_count).astype(np.float32)
    state = model.state()
    physics.eval_fk(model, q, qd, state)
    q_back, qd_back = np.zeros_like(q), np.zeros_like(qd)
    physics.eval_ik(model, state, q_back, qd_back)
    np.testing.assert_allclose(q_back, q, atol=2e-5)
    np.testing.assert_allclose(qd_back, qd, atol=2e-5)
