"""Chains of 1, 2, 3 and 5 links released from the horizontal, in reduced coordinates
(``physics.SolverFeatherstone``, one thread per articulation; 20 substeps a frame).
Drawn as the links' boxes.

    numba-sim run pendulum [--device cpu|cuda] [--frames N] [--out pendulum.gif]
"""

import numpy as np

import numba_sim as sim
from numba_sim import physics
from numba_sim.examples.physics_demo import PhysicsDemo

# the 12 triangles of a box over its corners numbered as bits (x: 1, y: 2, z: 4)
BOX_TRIANGLES = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                          [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
CORNERS = np.array([[(k & 1) * 2 - 1, (k >> 1 & 1) * 2 - 1, (k >> 2 & 1) * 2 - 1]
                    for k in range(8)], dtype=np.float64)


class Example(PhysicsDemo):
    title = "pendulum chains (Featherstone)"

    def __init__(self, device="cpu", chains=(1, 2, 3, 5), link_length=0.5, substeps=20):
        builder = physics.ModelBuilder(up_axis="y", gravity=-9.81)
        half = 0.5 * link_length
        self.half_extents = []
        for row, links in enumerate(chains):
            pivot = np.array([0.0, 3.0, 0.6 * row])
            parent = -1
            for k in range(links):
                body = builder.add_body(
                    xform=(pivot + np.array([half * (2 * k + 1), 0.0, 0.0]), None))
                builder.add_shape_box(body, hx=half, hy=0.04, hz=0.04)
                self.half_extents.append((half, 0.04, 0.04))
                builder.add_joint_revolute(
                    parent, body, parent_xform=(pivot if parent < 0 else (half, 0.0, 0.0), None),
                    child_xform=((-half, 0.0, 0.0), None), axis=(0.0, 0.0, 1.0))
                parent = body
        model = builder.finalize(device)
        self.corners = CORNERS[None, :, :] * np.asarray(self.half_extents)[:, None, :]
        super().__init__(model, physics.SolverFeatherstone(model, angular_damping=0.0),
                         substeps)

    def positions(self):
        """The corners of every link's box (8 per body), world."""
        q = np.asarray(sim.to_numpy(self.states[0].body_q), dtype=np.float64)
        p, r = q[:, None, :3], q[:, None, 3:]
        t = 2.0 * np.cross(r[..., :3], self.corners)
        return (p + self.corners + r[..., 3:] * t + np.cross(r[..., :3], t)).reshape(-1, 3)

    def triangles(self):
        return (BOX_TRIANGLES[None, :, :] + 8 * np.arange(self.model.body_count)[:, None, None]
                ).reshape(-1, 3)
