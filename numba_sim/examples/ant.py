"""An ant-like quadruped read from MJCF (``assets/ant.xml``, MuJoCo's ant in shape) dropped
on the ground, its eight hinges driven by sinusoidal position targets in a trotting
pattern (diagonal legs together); ``physics.SolverXPBD`` with 16 substeps a frame.

    numba-sim run ant [--device cpu|cuda] [--frames N] [--out ant.gif|ant.png|ant.usd]

Drawn (and written to USD) by ``physics.viewer``, as every physics demo is.
"""

import math
import os

import numpy as np

import numba_sim as sim
from numba_sim import physics
from numba_sim.examples import get_asset_directory
from numba_sim.examples.physics_demo import PhysicsDemo


def _assign(target, values):
    """Copy host *values* into a NumPy or CuPy array."""
    if hasattr(target, "set"):
        target.set(np.asarray(values, dtype=target.dtype))
    else:
        target[...] = values


class Example(PhysicsDemo):
    title = "an MJCF ant trotting on sinusoidal joint targets (XPBD)"

    def __init__(self, device="cpu", substeps=16, iterations=4, gait_hz=1.5,
                 hip_amplitude=0.4, ankle_bend=0.8, ankle_amplitude=0.3):
        builder = physics.ModelBuilder(up_axis="z")
        self.imported = builder.add_mjcf(os.path.join(get_asset_directory(), "ant.xml"))
        model = builder.finalize(device)
        super().__init__(model, physics.SolverXPBD(model, iterations=iterations), substeps)
        self.control = model.control()
        self.targets = np.array(sim.to_numpy(self.control.joint_target_q), dtype=np.float64)
        # legs 1 and 4 (front left, back right) swing together, 2 and 3 half a cycle later
        self.gait = []
        for actuator in self.imported.actuators:
            leg = int(actuator.name.rsplit("_", 1)[1])
            phase = 0.0 if leg in (1, 4) else math.pi
            if actuator.name.startswith("hip"):
                self.gait.append((actuator.dof, 0.0, hip_amplitude, phase))
            else:
                self.gait.append((actuator.dof, ankle_bend, ankle_amplitude, phase + 0.5 * math.pi))
        self.gait_hz = gait_hz

    def step(self):
        angle = 2.0 * math.pi * self.gait_hz * self.sim_time
        for dof, centre, amplitude, phase in self.gait:
            self.targets[dof] = centre + amplitude * math.sin(angle + phase)
        _assign(self.control.joint_target_q, self.targets)
        super().step()

    def torso(self):
        """The torso's transform (p, q xyzw), NumPy."""
        return np.array(sim.to_numpy(self.states[0].body_q)[self.imported.bodies["torso"]],
                        dtype=np.float64)
