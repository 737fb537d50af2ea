"""warp.sim's cloth example on numba_sim's physics layer: a 64 x 32 sheet pinned along
one edge swings down onto a sphere (warp.sim's bunny: the physics layer has no mesh
shapes yet) and the ground; semi-implicit cloth FEM with bending, 32 substeps a frame.
tests/test_physics_cloth_example.py checks the same sheet against warp.sim 1.9.1.

    numba-sim run cloth [--device cpu|cuda] [--frames N] [--out cloth.png]
"""

import math

import numba_sim as sim
from numba_sim import physics
from numba_sim.examples.physics_demo import PhysicsDemo


class Example(PhysicsDemo):
    title = "cloth (warp.sim's example_cloth) over a sphere"

    def __init__(self, device="cpu", width=64, height=32, substeps=32):
        builder = physics.ModelBuilder(up_axis="y", gravity=-9.80665)
        builder.particle_collision = False  # neighbours are 0.1 apart, radius 0.1
        builder.add_cloth_grid(
            pos=(0.0, 4.0, 0.0), rot=sim.quat_from_axis_angle(sim.vec3(1.0, 0.0, 0.0),
                                                              math.pi * 0.5),
            vel=(0.0, 0.0, 0.0), dim_x=width, dim_y=height, cell_x=0.1, cell_y=0.1, mass=0.1,
            fix_left=True, tri_ke=1.0e3, tri_ka=1.0e3, tri_kd=1.0e1)
        obstacle = physics.ShapeConfig(ke=1.0e2, kd=1.0e2, kf=1.0e1)  # the example's bunny's
        builder.add_shape_sphere(-1, ((1.5, 1.0, 1.6), (0.0, 0.0, 0.0, 1.0)), radius=1.0,
                                 cfg=obstacle)
        builder.add_ground_plane(cfg=obstacle)
        model = builder.finalize(device)
        model.soft_contact_ke = 1.0e4
        model.soft_contact_kd = 1.0e2
        super().__init__(model, physics.SolverSemiImplicit(model), substeps)
