"""Differentiable rigid bodies (issue 24): SolverSemiImplicit steps of bodies under a
sim.Tape -- a free box sliding and spinning on the ground (penalty contacts with Coulomb
friction, gravity, an external body_f) and a pendulum on a revolute joint with a PD drive
-- against central differences (float32: the models are float32), the taped forward
against the untaped one, and what stays refused by name."""

import math

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import physics

STEPS, DT = 40, 1.0e-3


@sim.kernel
def pose_loss(q: sim.array(dtype=sim.transform), start: sim.array(dtype=sim.transform),
              weights: sim.array(dtype=float), loss: sim.array(dtype=float)):
    # one thread: the loss is written once (an atomic accumulation would update it in place);
    # of the poses' change, so that float32 rounding of the loss stays far below the
    # differences central differences take
    total = float(0.0)
    for b in range(q.shape[0]):
        X = q[b]
        X0 = start[b]
        p = sim.transform_get_translation(X) - sim.transform_get_translation(X0)
        r = sim.transform_get_rotation(X) - sim.transform_get_rotation(X0)
        for k in range(3):
            total += p[k] * weights[7 * b + k] + r[k] * weights[7 * b + 3 + k]
        total += r[3] * weights[7 * b + 6]
    loss[0] = total


def scene():
    """Body 0: a flat 0.4 x 0.1 x 0.4 m box (16 kg) on the ground at its penalty depth,
    thrown sideways (1 m/s along x, 0.3 along z) and down (0.1 m/s: it sinks once and
    rises; at rest the approach speed would hover about 0, the kink of the damping's
    min(vn, 0), which central differences average) and spinning about the up axis, so
    that it slides under Coulomb friction (kf |v_t| > mu f_n at every corner), pushed by
    an external force and torque; flat, so that friction barely tips it and its corners
    never leave the ground (a corner crossing d = 0 is a jump of the damping force).
    Body 1: a 1 kg pendulum hanging 0.3 m below a revolute joint to the world (in the
    air, no shape; near the origin, where float32 positions are fine enough for central
    differences), swinging, its drive pulling it towards 0.3 rad."""
    b = physics.ModelBuilder(up_axis="y")
    cfg = physics.ShapeConfig(ke=1.0e4, kd=100.0, kf=100.0, mu=0.5)
    depth = 16.0 * 9.81 / (4.0 * cfg.ke)                # each corner's share of the weight
    box = b.add_body(xform=((0.0, 0.05 - depth, 0.0), (0.0, 0.0, 0.0, 1.0)))
    b.add_shape_box(box, hx=0.2, hy=0.05, hz=0.2, cfg=cfg)
    pendulum = b.add_body(xform=((0.5, 0.3, 0.0), (0.0, 0.0, 0.0, 1.0)), mass=1.0,
                          inertia=(0.01, 0.01, 0.01))
    b.add_joint_revolute(-1, pendulum, parent_xform=((0.5, 0.6, 0.0), (0.0, 0.0, 0.0, 1.0)),
                         child_xform=((0.0, 0.3, 0.0), (0.0, 0.0, 0.0, 1.0)),
                         axis=(0.0, 0.0, 1.0), target_q=0.3, target_ke=20.0, target_kd=1.0)
    b.add_ground_plane(cfg=cfg)
    model = b.finalize(requires_grad=True)
    w = 2.0                                             # the pendulum's swing, rad/s
    model.body_qd[:] = np.array([[1.0, -0.1, 0.3, 0.0, 0.5, 0.0],
                                 [0.3 * w, 0.0, 0.0, 0.0, 0.0, w]], np.float32)
    return model


class Scene:
    def __init__(self):
        self.model = model = scene()
        self.solver = physics.SolverSemiImplicit(model)
        self.states = [model.state() for _ in range(STEPS + 1)]
        self.states[0].body_f[0] = np.array([5.0, 0.0, -3.0, 0.0, 0.2, 0.0], np.float32)
        self.weights = np.array([1.0, 3.0, -0.5, 0.4, 0.7, -0.3, 0.0,
                                 -0.8, 0.6, 0.0, 0.0, 0.0, 0.5, 0.0], np.float32)
        self.start = np.array(model.body_q)
        self.loss = sim.zeros(1, dtype=np.float32, requires_grad=True)
        self.contacts = model.collide(self.states[0])
        assert int(self.contacts.rigid_contact_count[0]) >= 4     # (the top corners too: margin)

    def forward(self):
        for i in range(STEPS):
            self.solver.step(self.states[i], self.states[i + 1], None, self.contacts, DT)
        sim.launch(pose_loss, 1, inputs=[self.states[-1].body_q, self.start, self.weights,
                                          self.loss])
        return float(self.loss[0])

    def central(self, array, h, indices):
        out = np.zeros(array.shape, dtype=np.float64)
        for idx in indices:
            old = array[idx].copy()
            step = h if np.isscalar(h) else h(old)
            array[idx] = old + step
            hi = self.forward()
            array[idx] = old - step
            lo = self.forward()
            array[idx] = old
            out[idx] = (hi - lo) / (2.0 * step)
        return out


@pytest.fixture(scope="module")
def taped():
    s = Scene()
    tape = sim.Tape(check_inputs=True)      # backward raises if a taped input was overwritten
    with tape:
        s.loss_value = s.forward()
    tape.backward(loss=s.loss)
    s.grads = {name: np.array(sim.grad(array)) for name, array in (
        ("qd", s.states[0].body_qd), ("f", s.states[0].body_f),
        ("ke", s.model.shape_material_ke), ("mu", s.model.shape_material_mu),
        ("drive", s.model.joint_target_ke))}
    return s


def relative_error(analytic, numeric):
    return np.linalg.norm(analytic - numeric) / np.linalg.norm(numeric)


def test_the_taped_forward_is_the_untaped_one(taped):
    model = taped.model
    solver = physics.SolverSemiImplicit(model)
    state = model.state(requires_grad=False)
    state.body_f[...] = taped.states[0].body_f    # external: in the first step only
    for _ in range(STEPS):                          # in place: the fast path's scratch
        solver.step(state, state, None, taped.contacts, DT)
        state.body_f[...] = 0.0
    end = np.asarray(taped.states[-1].body_q)
    np.testing.assert_allclose(state.body_q, end, atol=2e-6)
    np.testing.assert_allclose(state.body_qd, taped.states[-1].body_qd, atol=2e-4)
    start = np.asarray(taped.states[0].body_q)
    # the physics happened: the box slid (decelerated by friction), turned, stayed on
    # the ground; the pendulum swung about its pivot, 0.3 m away
    assert end[0, 0] - start[0, 0] > 0.03
    assert abs(end[0, 1] - start[0, 1]) < 2e-3          # within its 3.9 mm rest depth
    assert abs(end[0, 4]) > 0.005
    assert np.linalg.norm(state.body_qd[0, :3]) < np.linalg.norm(model.body_qd[0, :3])
    # (the joint holds it by its attachment spring, ke 1e3: 9.8 mm under the weight at rest)
    assert abs(np.linalg.norm(end[1, :2] - (0.5, 0.6)) - 0.3) < 1e-2
    assert end[1, 0] - start[1, 0] > 0.01


def test_gradient_wrt_initial_velocity_and_body_force_matches_central_differences(taped):
    numeric = taped.central(taped.states[0].body_qd, 3.0e-3, list(np.ndindex(2, 6)))
    assert np.abs(numeric).max() > 1e-2
    assert relative_error(taped.grads["qd"], numeric) < 1e-2
    for b in range(2):
        assert relative_error(taped.grads["qd"][b], numeric[b]) < 2e-2
    numeric = taped.central(taped.states[0].body_f, 0.1, [(0, k) for k in range(6)])
    assert relative_error(taped.grads["f"][0], numeric[0]) < 2e-2


def test_gradient_wrt_contact_and_drive_parameters_matches_central_differences(taped):
    model = taped.model
    # the box's shape and the ground: a pair takes the mean of its two shapes' values
    for name, array, h in (("mu", model.shape_material_mu, 0.05),
                           ("ke", model.shape_material_ke, 500.0)):
        numeric = taped.central(array, h, [(0,), (1,)])
        assert np.abs(numeric).max() > 1e-8, name
        np.testing.assert_allclose(taped.grads[name][:2], numeric[:2], rtol=2e-2, err_msg=name)
    numeric = taped.central(model.joint_target_ke, 1.0, [(0,)])
    assert abs(numeric[0]) > 1e-4
    np.testing.assert_allclose(taped.grads["drive"], numeric, rtol=2e-2)


def test_what_stays_refused_is_refused_by_name(taped):
    model = taped.model
    with sim.Tape():
        with pytest.raises(ValueError, match=r"SolverSemiImplicit.step: state_out is also the "
                                             r"step's input"):
            taped.solver.step(taped.states[0], taped.states[0], None, None, DT)
        with pytest.raises(ValueError, match=r"SolverXPBD.step: the model has 2 rigid bodies; "
                                             r"its rigid substep"):
            physics.SolverXPBD(model).step(model.state(), model.state(), None, None, DT)
    b = physics.ModelBuilder(up_axis="y")
    link = b.add_body(mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_joint_revolute(-1, link, axis=(0.0, 0.0, 1.0))
    chain = b.finalize(requires_grad=True)
    with sim.Tape():
        with pytest.raises(RuntimeError, match=r"SolverFeatherstone.step: cannot run under a "
                                               r"sim.Tape"):
            physics.SolverFeatherstone(chain).step(chain.state(), chain.state(), None, None,
                                                   DT)
