"""Substeps without per-launch binding (numba_sim/physics/stepping.py): recorded launches
in ``solver.step``, a frame as one CPU graph in ``solver.step_frame``, and a user's own
``sim.capture("cpu")`` of solver steps all give exactly the numbers of plain
``sim.launch``es (``solver.replay_launches = False``).

Models are tiny (every launch below 2048 threads runs serially, so results are
deterministic and compared bit for bit); the rope and the cloth-and-block are the ones
of test_physics_semi_implicit.py, so their kernels are compiled once for the session.
"""

import math

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import physics

G = 9.81
DT = 1.0 / 60.0 / 8


def cloth_and_block(collision=False):
    """A pinned cloth with springs and a soft block above the ground, with contacts."""
    b = physics.ModelBuilder(up_axis="y", gravity=-G)
    b.particle_collision = collision
    b.add_cloth_grid((0, 0.3, 0), (math.sqrt(0.5), 0, 0, math.sqrt(0.5)), (0, 0, 0), 3, 3, 0.1,
                     0.1, mass=0.05, fix_left=True, particle_radius=0.02, add_springs=True,
                     spring_ke=1e3, tri_kd=1.0)  # stable for explicit Euler at DT
    b.add_soft_grid((1.0, 0.05, 0), None, (0, 0, 0), 1, 1, 1, 0.1, 0.1, 0.1, density=100.0,
                    k_mu=1e4, k_lambda=1e4, k_damp=1.0, particle_radius=0.02)
    b.add_ground_plane(cfg=physics.ShapeConfig(ke=1e3, kd=10.0))
    return b.finalize()


@pytest.fixture(scope="module")
def model():
    return cloth_and_block()


SOLVERS = {
    "semi_implicit": lambda m: physics.SolverSemiImplicit(m),
    "semi_implicit_phased": lambda m: physics.SolverSemiImplicit(m, fuse=False),
    "xpbd": lambda m: physics.SolverXPBD(m),
    "xpbd_phased": lambda m: physics.SolverXPBD(m, fuse=False),
}


def plain_frames(model, make_solver, frames, substeps):
    """The reference: every launch a plain sim.launch, states swapped each substep."""
    solver = make_solver(model)
    solver.replay_launches = False
    states = [model.state(), model.state()]
    contacts = model.contacts()
    for _ in range(frames):
        model.collide(states[0], contacts)
        for _ in range(substeps):
            solver.step(states[0], states[1], None, contacts, DT)
            states.reverse()
    return states[0]


@pytest.mark.parametrize("kind", SOLVERS)
def test_step_frame_and_recorded_steps_equal_plain_launches(model, kind):
    expected = plain_frames(model, SOLVERS[kind], frames=3, substeps=8)
    assert np.abs(expected.particle_q - model.particle_q).max() > 1e-3  # it moved ...
    assert np.abs(expected.particle_q).max() < 2.0  # ... and stayed stable

    framed = SOLVERS[kind](model)
    assert framed.replay_launches
    s0, s1 = model.state(), model.state()
    contacts = model.contacts()
    for _ in range(3):
        model.collide(s0, contacts)
        assert framed.step_frame(s0, s1, None, contacts, DT, 8) is s0  # even: back in s0
    assert len(framed._graphs) == 1  # captured once, replayed twice
    np.testing.assert_array_equal(s0.particle_q, expected.particle_q)
    np.testing.assert_array_equal(s0.particle_qd, expected.particle_qd)

    stepped = SOLVERS[kind](model)
    states = [model.state(), model.state()]
    for _ in range(3):
        model.collide(states[0], contacts)
        for _ in range(8):
            stepped.step(states[0], states[1], None, contacts, DT)
            states.reverse()
    assert stepped._recorded  # the steps replayed recorded launches
    np.testing.assert_array_equal(states[0].particle_q, expected.particle_q)


def test_an_odd_frame_ends_in_state_1_and_a_users_capture_replays_the_same(model):
    expected = plain_frames(model, SOLVERS["semi_implicit"], frames=1, substeps=8)
    solver = physics.SolverSemiImplicit(model)
    s0, s1 = model.state(), model.state()
    contacts = model.collide(s0, model.contacts())
    assert solver.step_frame(s0, s1, None, contacts, DT, 5) is s1
    assert solver.step_frame(s1, s0, None, contacts, DT, 3) is s0
    np.testing.assert_array_equal(s0.particle_q, expected.particle_q)

    a, b = model.state(), model.state()
    with sim.capture("cpu") as graph:
        for _ in range(4):
            solver.step(a, b, None, contacts, DT)
            solver.step(b, a, None, contacts, DT)
    np.testing.assert_array_equal(a.particle_q, model.particle_q)  # recorded, not run
    graph.launch()
    np.testing.assert_array_equal(a.particle_q, expected.particle_q)


def test_a_frame_graph_follows_model_changes(model):
    solver = physics.SolverSemiImplicit(model)
    s0, s1 = model.state(), model.state()
    solver.step_frame(s0, s1, None, None, DT, 2)
    before = s0.particle_q.copy()
    gravity = model.gravity.copy()
    try:
        model.gravity[1] = -2.0 * G  # in place: no attribute assignment
        s0.assign(model.state())
        solver.step_frame(s0, s1, None, None, DT, 2)
    finally:
        model.gravity[:] = gravity
    assert len(solver._graphs) == 2
    free = model.particle_inv_mass > 0
    fell = model.particle_q[free, 1] - s0.particle_q[free, 1]
    assert (fell > 1.5 * (model.particle_q[free, 1] - before[free, 1])).all()


def test_particle_contacts_cannot_be_captured_and_step_frame_steps_them():
    collision = cloth_and_block(collision=True)
    solver = physics.SolverSemiImplicit(collision)
    a, b = collision.state(), collision.state()
    with pytest.raises(RuntimeError, match=r"SolverSemiImplicit.step: particle-particle "
                                           r"contacts rebuild a HashGrid .*particle_collision"):
        with sim.capture("cpu"):
            solver.step(a, b, None, None, DT)
    assert solver.step_frame(a, b, None, None, DT, 2) is a
    assert not solver._graphs and np.isfinite(a.particle_q).all()


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "8"])
def test_bad_substeps_are_value_errors(model, bad):
    solver = physics.SolverXPBD(model)
    with pytest.raises(ValueError, match=r"SolverXPBD.step_frame: substeps must be an int >= 1"):
        solver.step_frame(model.state(), model.state(), None, None, DT, bad)
