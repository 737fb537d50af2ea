"""SolverXPBD's D6 joints with two or three angular axes: each angle (SolverFeatherstone's
coordinates, read back by eval_ik) held within its limits, driven to its target; the
MJCF humanoid (hips of three hinges, abdomen and shoulders of two) dropped on the
ground keeps every joint within its range."""

from pathlib import Path

import numpy as np
import pytest

from numba_sim import physics
from numba_sim.physics import JointType

G = 9.81
ROBOTS = Path(__file__).parent / "data" / "robots"
X, Y, Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)


def rod_on_d6(axes, gravity=-G):
    """A 1 m box rod (0.1 x 0.1 x 1 m at density 1000: 10 kg) hanging from the
    world at its top by a D6 with *axes* (dicts or 3-vectors)."""
    b = physics.ModelBuilder(gravity=gravity)
    body = b.add_body(xform=((0.0, 0.0, 1.5), None))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.5)
    b.add_joint_d6(-1, body, angular_axes=axes, parent_xform=((0.0, 0.0, 2.0), None),
                   child_xform=((0.0, 0.0, 0.5), None))
    return b.finalize()


def angles(model, state):
    q = np.zeros(model.joint_coord_count, np.float32)
    qd = np.zeros(model.joint_dof_count, np.float32)
    physics.eval_ik(model, state, q, qd)
    return q.astype(np.float64), qd.astype(np.float64)


def push_against_limits(model, torque, steps=1200, dt=1.0 / 600.0, iterations=2):
    """A torque (world) on the rod, first as given, then reversed: the angles at every
    step and the joint point's largest gap."""
    solver = physics.SolverXPBD(model, iterations=iterations)
    state = model.state()
    history, gap = [], 0.0
    for i in range(steps):
        sign = 1.0 if i < steps // 2 else -1.0
        state.body_f[0, 3:] = np.asarray(torque, np.float32) * sign
        solver.step(state, state, None, None, dt)
        history.append(angles(model, state)[0])
        top = physics_point(state.body_q[0], (0.0, 0.0, 0.5))
        gap = max(gap, float(np.linalg.norm(top - (0.0, 0.0, 2.0))))
        assert np.all(np.isfinite(state.body_q))
    return np.array(history), gap


def physics_point(X, p):
    x, y, z, w = (float(v) for v in X[3:])
    u = np.array([x, y, z])
    p = np.asarray(p, np.float64)
    return np.asarray(X[:3], np.float64) + p + 2.0 * np.cross(u, np.cross(u, p) + w * p)


LIMITS = {2: [(-0.3, 0.2), (-0.25, 0.15)], 3: [(-0.3, 0.2), (-0.25, 0.15), (-0.4, 0.35)]}
AXES = {2: [X, Y], 3: [X, Y, Z]}


@pytest.mark.parametrize("n", [2, 3])
def test_xpbd_d6_angular_limits_hold(n):
    """Torques of 30-50 N m (a 10 kg rod's gravity torque at 0.2 rad is 10 N m) push each
    angle onto its upper, then its lower limit: every angle stays within 1e-2 rad of its
    range and reaches both ends."""
    axes = [dict(axis=a, limit_lower=lo, limit_upper=hi) for a, (lo, hi) in
            zip(AXES[n], LIMITS[n])]
    model = rod_on_d6(axes)
    history, gap = push_against_limits(model, (40.0, 30.0, 50.0))
    low = np.array([lo for lo, hi in LIMITS[n]])
    high = np.array([hi for lo, hi in LIMITS[n]])
    assert np.all(history.min(axis=0) > low - 1e-2), history.min(axis=0)
    assert np.all(history.max(axis=0) < high + 1e-2), history.max(axis=0)
    # it got there: against the upper limits at the end of the first half, the lower at
    # the end
    np.testing.assert_allclose(history[599], high, atol=1e-2)
    np.testing.assert_allclose(history[-1], low, atol=1e-2)
    assert gap < 1e-3


def test_xpbd_d6_limits_hold_against_a_third_axis_pointing_the_other_way():
    """Axes x, y, -z (the third against x cross y): the third angle's sign follows it."""
    axes = [dict(axis=a, limit_lower=lo, limit_upper=hi) for a, (lo, hi) in
            zip([X, Y, (0.0, 0.0, -1.0)], LIMITS[3])]
    history, gap = push_against_limits(rod_on_d6(axes), (40.0, 30.0, -50.0), steps=600)
    np.testing.assert_allclose(history[299], [0.2, 0.15, 0.35], atol=1e-2)
    assert history[:, 2].max() < 0.35 + 1e-2 and history[:, 2].min() > -0.4 - 1e-2


@pytest.mark.parametrize("n", [2, 3])
def test_xpbd_d6_angular_drive_reaches_its_target(n):
    """Without gravity, PD drives (ke 2000, kd 100) turn the rod to the model's targets,
    then to the Control's, each within 1e-3 rad after 1 s, at rest."""
    first = [0.3, -0.2, 0.4][:n]
    axes = [dict(axis=a, target_q=t, target_ke=2000.0, target_kd=100.0)
            for a, t in zip(AXES[n], first)]
    model = rod_on_d6(axes, gravity=0.0)
    solver = physics.SolverXPBD(model, iterations=2)
    state = model.state()
    control = None
    for targets in (first, [-0.25, 0.3, -0.35][:n]):
        for _ in range(600):
            solver.step(state, state, control, None, 1.0 / 600.0)
        q, qd = angles(model, state)
        np.testing.assert_allclose(q, targets, atol=1e-3)
        assert np.abs(qd).max() < 1e-2
        control = model.control()
        control.joint_target_q[:] = [-0.25, 0.3, -0.35][:n]


def test_xpbd_d6_linear_drive_reaches_its_target():
    """A D6 sliding along z (and turning about x), its slide driven to 0.2 m (10 kg, ke
    2000, kd 100: the error decays as exp(-5 t); 2 s)."""
    b = physics.ModelBuilder(gravity=0.0)
    body = b.add_body(xform=((0.0, 0.0, 1.5), None))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.5)
    b.add_joint_d6(-1, body, linear_axes=[dict(axis=Z, target_q=0.2, target_ke=2000.0,
                                               target_kd=100.0)],
                   angular_axes=[X], parent_xform=((0.0, 0.0, 2.0), None),
                   child_xform=((0.0, 0.0, 0.5), None))
    model = b.finalize()
    solver = physics.SolverXPBD(model)
    state = model.state()
    for _ in range(1200):
        solver.step(state, state, None, None, 1.0 / 600.0)
    q, qd = angles(model, state)
    assert abs(q[0] - 0.2) < 1e-3 and abs(qd[0]) < 1e-2


@pytest.fixture(scope="module")
def humanoid_drop():
    """The MJCF humanoid dropped from 0.3 m above its standing height onto the ground,
    XPBD, 10 substeps at 60 Hz, 1.5 s: every joint's coordinates after every frame."""
    builder = physics.ModelBuilder()
    builder.add_mjcf(ROBOTS / "humanoid.xml", xform=((0.0, 0.0, 0.3), None))
    model = builder.finalize()
    solver = physics.SolverXPBD(model, iterations=2)
    state = model.state()
    frames, dt = [], 1.0 / 600.0
    finite = True
    for _ in range(90):
        contacts = model.collide(state)
        for _ in range(10):
            solver.step(state, state, None, contacts, dt)
        finite &= bool(np.all(np.isfinite(state.body_q)) and np.all(np.isfinite(state.body_qd)))
        frames.append(angles(model, state)[0])
    return model, state, np.array(frames), finite


def test_xpbd_humanoid_keeps_its_joints_in_their_ranges(humanoid_drop):
    """Within 3e-2 rad of each range (measured: 1.9e-2 at worst, the abdomen between two
    moving bodies, 2 iterations), finite, at most moderate speeds."""
    model, state, frames, finite = humanoid_drop
    assert finite
    types = model.joint_type.tolist()
    assert types.count(JointType.D6) == 3         # abdomen, hip, shoulder
    q_start, qd_start = model.joint_q_start, model.joint_qd_start
    lower, upper = model.joint_limit_lower, model.joint_limit_upper
    checked = 0
    for j, t in enumerate(types):
        if t not in (JointType.D6, JointType.REVOLUTE):
            continue
        for k in range(qd_start[j + 1] - qd_start[j]):
            d, c = qd_start[j] + k, q_start[j] + k
            if lower[d] > -1e30 or upper[d] < 1e30:
                values = frames[:, c]
                assert values.min() > lower[d] - 3e-2 and values.max() < upper[d] + 3e-2, \
                    (j, k, values.min(), values.max(), lower[d], upper[d])
                checked += 1
    assert checked == 9              # 7 D6 angles, the knee and the elbow
    assert np.abs(state.body_qd).max() < 50.0


def test_replicated_boxes_rest_on_the_ground_in_every_world():
    """replicate with a spacing moves the bodies, and their shapes with them (the shapes'
    transforms are in their bodies' frames: moving them too put world k's box k
    spacings away from its body, and it fell through the ground)."""
    t = physics.ModelBuilder()
    body = t.add_body(xform=((0.0, 0.0, 0.11), None))
    t.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b = physics.ModelBuilder()
    b.replicate(t, 3, spacing=(2.0, 0.0, 0.0))
    b.add_ground_plane()
    model = b.finalize()
    np.testing.assert_array_equal(model.shape_transform[:3], [[0, 0, 0, 0, 0, 0, 1]] * 3)
    solver = physics.SolverXPBD(model)
    state = model.state()
    for _ in range(30):
        contacts = model.collide(state)
        for _ in range(10):
            solver.step(state, state, None, contacts, 1.0 / 600.0)
    np.testing.assert_allclose(state.body_q[:, 2], 0.1, atol=1e-4)


@pytest.mark.parametrize("n", [2, 3])
def test_xpbd_d6_joint_forces_turn_each_angle(n):
    """Without gravity, from rest: joint_f of 10 N m on the first angle, then on the
    second, turns that angle by tau t^2 / (2 I_pivot) (0.2 s: 0.0599 rad; I_pivot =
    m (hx^2 + hz^2) / 3 = 3.342 kg m^2) and leaves the others within 5e-4."""
    I_pivot = 10.0 * (0.1 ** 2 + 1.0 ** 2) / 12.0 + 10.0 * 0.5 ** 2
    for k in range(2):
        model = rod_on_d6(AXES[n], gravity=0.0)
        solver = physics.SolverXPBD(model)
        state = model.state()
        control = model.control()
        control.joint_f[k] = 10.0
        steps, dt = 120, 1.0 / 600.0
        for _ in range(steps):
            solver.step(state, state, control, None, dt)
        q, _ = angles(model, state)
        t = steps * dt
        expected = 10.0 * t * t / (2.0 * I_pivot)
        assert abs(q[k] - expected) < 0.02 * expected, (k, q, expected)
        others = np.delete(q, k)
        assert np.abs(others).max() < 5e-4
