"""The frame loop the physics demos share (``cloth``, ``softbody``, ``pendulum``, ``ant``):
collide once a frame, then ``substeps`` steps of the solver (``solver.step_frame``: on the
CPU a small model's frame replays one captured graph)."""

import numpy as np

import numba_sim as sim
from numba_sim.physics.viewer.shapes import particle_surface


class PhysicsDemo:
    """``step()`` advances one frame of ``model`` with ``solver``; ``positions()`` are its
    particles (NumPy)."""

    title = "physics demo"
    fps = 60.0

    def __init__(self, model, solver, substeps):
        self.model, self.solver, self.substeps = model, solver, substeps
        self.frame_dt = 1.0 / self.fps
        self.sim_time = 0.0
        self.states = [model.state(), model.state()]
        self.contacts = model.contacts()
        self.control = None  # a demo that drives its joints sets a model.control()

    def step(self):
        s0, s1 = self.states
        self.model.collide(s0, self.contacts)
        last = self.solver.step_frame(s0, s1, self.control, self.contacts,
                                      self.frame_dt / self.substeps, self.substeps)
        self.states = [s0, s1] if last is s0 else [s1, s0]
        self.sim_time += self.frame_dt

    def positions(self):
        """A copy of the particle positions (a recorded frame must not change with the next
        step)."""
        return np.array(sim.to_numpy(self.states[0].particle_q))

    def triangles(self):
        """The surface to draw: the cloth's triangles and the soft bodies' outer faces, as
        (m, 3) particle indices."""
        return particle_surface(self.model, sim.to_numpy)
