"""SolverXPBD under a sim.Tape (issue 24): the gradient of a loss of the final positions
against central differences of the same (Jacobi) steps, the taped step equal to the plain
one, energy never gained on the taped path, and what cannot be taped refused by name.

float32 throughout (the solver's arrays are float32): central differences of float32
losses carry ~1e-3 relative noise at these step sizes, so gradients are compared to
2-3 % relative error (measured below 1 %, see the asserts' comments)."""

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import physics

STEPS, DT, G = 12, 1.0 / 240.0, 9.81


@sim.kernel
def distance_loss(q: sim.array(dtype=sim.vec3), target: sim.array(dtype=sim.vec3),
                  loss: sim.array(dtype=float)):
    total = float(0.0)
    for i in range(q.shape[0]):
        d = q[i] - target[i]
        total += sim.dot(d, d)
    loss[0] = total


def scene():
    """A 5-particle spring rope (first particle pinned, springs pre-stretched, one damped),
    a 2x2 cloth patch of springs and bending edges folded out of its plane (a flat sheet's
    bending angle has an infinite acos derivative: docs/autodiff.md), and a strained cube
    of 5 tetrahedra sliding on the ground (contacts with friction)."""
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    b.add_particle((0.0, 1.0, 0.0), (0.0, 0.0, 0.0), 0.0)
    for k in range(1, 5):
        b.add_particle((0.25 * k, 1.0, 0.0), (0.3, 0.2 * k, 0.0), 0.5)
        b.add_spring(k - 1, k, 300.0, 2.0 if k == 2 else 0.0)
    first = b.particle_count
    b.add_cloth_grid((1.6, 1.5, 0.0), (0.0, 0.0, 0.0, 1.0), (0.5, -1.0, 0.0), 2, 2, 0.1, 0.1,
                     0.1, add_springs=True, spring_ke=200.0, edge_ke=0.5)
    b.add_soft_grid((2.2, 0.008, 0.0), (0.0, 0.0, 0.0, 1.0), (0.4, -0.2, 0.1), 1, 1, 1, 0.1,
                    0.1, 0.1, 100.0, 200.0, 500.0, 0.0, particle_radius=0.01)
    b.add_ground_plane()
    model = b.finalize(requires_grad=True)
    q = np.array(model.particle_q)
    q[first:first + 9, 2] += np.float32(0.03) * np.array([0, 1, 0, 1, 0, -1, 0, 1, 0],
                                                        dtype=np.float32)
    model.particle_q[...] = q                   # the patch folded 3 cm out of its plane
    model.spring_rest_length = model.spring_rest_length * np.float32(0.9)
    sim.requires_grad(model.spring_rest_length)
    model.tet_poses = model.tet_poses * np.float32(0.9)     # the cube starts strained
    sim.requires_grad(model.tet_poses)
    return model


def jacobi_solver(model):
    """The path a taped step takes (one thread per constraint, Jacobi), also outside a
    tape: central differences must differentiate the same function."""
    solver = physics.SolverXPBD(model, iterations=2, fuse=False)
    solver.batched = False
    return solver


class Scene:
    def __init__(self):
        self.model = model = scene()
        self.solver = jacobi_solver(model)
        self.states = [model.state() for _ in range(STEPS + 1)]
        self.target = np.asarray(model.particle_q) + np.float32(0.1)
        self.loss = sim.zeros(1, dtype=np.float32, requires_grad=True)
        self.contacts = model.collide(self.states[0])
        assert int(self.contacts.soft_contact_count[0]) > 0      # the cube touches the ground

    def forward(self):
        for i in range(STEPS):
            self.solver.step(self.states[i], self.states[i + 1], None, self.contacts, DT)
        sim.launch(distance_loss, 1, inputs=[self.states[-1].particle_q, self.target, self.loss])
        return float(self.loss[0])

    def central(self, array, h, indices=None):
        out = np.zeros(array.shape, dtype=np.float64)
        for idx in (np.ndindex(array.shape) if indices is None else indices):
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
    tape = sim.Tape(check_inputs=True)       # backward raises if a taped input was overwritten
    with tape:
        s.loss_value = s.forward()
    s.final_q = np.array(s.states[-1].particle_q)
    tape.backward(loss=s.loss)
    s.grads = {name: np.array(sim.grad(array)) for name, array in (
        ("qd", s.states[0].particle_qd), ("q", s.states[0].particle_q),
        ("ke", s.model.spring_stiffness), ("rest", s.model.spring_rest_length))}
    return s


def relative_error(analytic, numeric):
    return np.linalg.norm(analytic - numeric) / np.linalg.norm(numeric)


def test_the_taped_step_is_the_plain_jacobi_step(taped):
    plain = Scene()
    plain.forward()
    moved = np.abs(taped.final_q - np.asarray(taped.model.particle_q)).max()
    assert moved > 0.05
    np.testing.assert_allclose(plain.states[-1].particle_q, taped.final_q, atol=2e-6)
    assert abs(float(plain.loss[0]) - taped.loss_value) <= 1e-6 * taped.loss_value


def test_gradient_wrt_initial_velocities_matches_central_differences(taped):
    numeric = taped.central(taped.states[0].particle_qd, 1.0e-2)
    assert np.linalg.norm(numeric) > 1e-2
    assert relative_error(taped.grads["qd"], numeric) < 2e-2


def test_gradient_wrt_initial_positions_matches_central_differences(taped):
    numeric = taped.central(taped.states[0].particle_q, 1.0e-3)
    # except the heights of the cube's particles on the ground: the first iteration puts
    # them on the surface, so their start height reaches the result only through the
    # friction bound mu * depth, and the second iteration's depth is zero give or take
    # rounding (on or off): central differences of 1 mm cross those kinks (the analytic
    # values are approached as the step shrinks: 26 % relative error at 1 mm, 6 % at 0.2 mm)
    grounded = np.asarray(taped.states[0].particle_q)[:, 1] < 0.01
    assert grounded.sum() == 4
    keep = np.ones(numeric.shape, dtype=bool)
    keep[grounded, 1] = False
    assert relative_error(taped.grads["q"][keep], numeric[keep]) < 2e-2


def test_gradient_wrt_spring_parameters_matches_central_differences(taped):
    model = taped.model
    numeric = taped.central(model.spring_stiffness, lambda v: 0.05 * abs(float(v)))
    assert np.abs(numeric).max() > 1e-6
    # (most entries are 1e-7 - 1e-6: the loss differences are a few float32 ulps of the
    # loss; the largest, the rope's first spring, agrees to 1e-4)
    assert relative_error(taped.grads["ke"], numeric) < 5e-2
    numeric = taped.central(model.spring_rest_length, 3.0e-3)
    assert relative_error(taped.grads["rest"], numeric) < 2e-2


def rope_energy(model, state):
    q = state.particle_q.astype(np.float64)
    v = state.particle_qd.astype(np.float64)
    mass = model.particle_mass.astype(np.float64)
    pairs = model.spring_indices.reshape(-1, 2)
    stretch = np.linalg.norm(q[pairs[:, 0]] - q[pairs[:, 1]], axis=1) - model.spring_rest_length
    return (0.5 * (mass[:, None] * v * v).sum() + (mass * G * q[:, 1]).sum()
            + 0.5 * (model.spring_stiffness * stretch * stretch).sum())


def test_the_taped_path_never_gains_energy():
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = False
    for i in range(8):
        b.add_particle((i * 0.1, 2.0, 0.0), (0, 0, 0), 0.0 if i == 0 else 0.1)
    for i in range(7):
        b.add_spring(i, i + 1, 1.0e4, 0.0)
    model = b.finalize(requires_grad=True)
    solver = physics.SolverXPBD(model, iterations=2)
    states = [model.state() for _ in range(301)]
    energies = [rope_energy(model, states[0])]
    with sim.Tape():
        for i in range(300):
            solver.step(states[i], states[i + 1], None, None, 1.0 / 600.0)
            if i % 10 == 9:
                energies.append(rope_energy(model, states[i + 1]))
    energies = np.array(energies)
    assert states[-1].particle_q[-1, 1] < 1.5       # the rope swung down
    assert states[-1].particle_q[0].tolist() == states[0].particle_q[0].tolist()   # pinned
    assert energies[-1] < energies[0]
    # float32 velocities from position differences: ~1e-4 relative noise; otherwise down
    assert np.diff(energies).max() <= 5e-4 * abs(energies[0])


def test_what_a_tape_cannot_replay_is_refused_by_name(taped):
    model = taped.model
    solver = physics.SolverXPBD(model)
    s0, s1 = model.state(), model.state()
    with sim.Tape():
        with pytest.raises(ValueError, match=r"SolverXPBD.step: state_out is also the step's "
                                             r"input"):
            solver.step(s0, s0, None, None, DT)
        solver.step(s0, s1, None, None, DT)
        with pytest.raises(ValueError, match=r"SolverXPBD.step: state_out was already read or "
                                             r"written by a step recorded on this sim.Tape"):
            solver.step(s1, s0, None, None, DT)
        with pytest.raises(ValueError, match=r"SolverXPBD.step_frame: a frame of 2 substeps"):
            solver.step_frame(model.state(), model.state(), None, None, DT, 2)
    b = physics.ModelBuilder()
    b.add_particle((0, 0, 0), (0, 0, 0), 1.0, radius=0.1)
    b.add_particle((0.15, 0, 0), (0, 0, 0), 1.0, radius=0.1)
    grid_model = b.finalize()
    with sim.Tape():
        with pytest.raises(ValueError, match=r"SolverXPBD.step: particle-particle contacts"):
            physics.SolverXPBD(grid_model).step(grid_model.state(), grid_model.state(), None,
                                                None, DT)
    b = physics.ModelBuilder()
    b.add_body(mass=1.0)
    body_model = b.finalize()
    with sim.Tape():
        with pytest.raises(ValueError, match=r"SolverXPBD.step: the model has 1 rigid bodies"):
            physics.SolverXPBD(body_model).step(body_model.state(), body_model.state(), None,
                                                None, DT)
