"""Soft bodies: two neo-Hookean beams dropped across a sphere, a stiff one (stays nearly
straight) beside a soft one (drapes to the ground); semi-implicit tetrahedral FEM, 32
substeps a frame.

    numba-sim run softbody [--device cpu|cuda] [--frames N] [--out softbody.png]
"""

from numba_sim import physics
from numba_sim.examples.physics_demo import PhysicsDemo

BODIES = (
    # lower corner, cells (x, y, z), k_mu (k_lambda = 4 k_mu)
    ((-0.8, 0.8, -0.25), (16, 2, 2), 5.0e4),  # the stiff beam
    ((-0.8, 0.8, 0.05), (16, 2, 2), 1.0e3),  # the soft beam
)


class Example(PhysicsDemo):
    title = "a stiff and a soft beam dropped across a sphere"

    def __init__(self, device="cpu", cell=0.1, substeps=32):
        builder = physics.ModelBuilder(up_axis="y", gravity=-9.81)
        builder.particle_collision = False
        for corner, (nx, ny, nz), k_mu in BODIES:
            builder.add_soft_grid(
                pos=corner, rot=None, vel=(0.0, 0.0, 0.0), dim_x=nx, dim_y=ny, dim_z=nz,
                cell_x=cell, cell_y=cell, cell_z=cell, density=100.0, k_mu=k_mu,
                k_lambda=4.0 * k_mu, k_damp=1.0)
        surface = physics.ShapeConfig(ke=1.0e3, kd=20.0, kf=1.0e1, mu=0.5)
        builder.add_shape_sphere(-1, ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)), radius=0.6,
                                 cfg=surface)
        builder.add_ground_plane(cfg=surface)
        model = builder.finalize(device)
        super().__init__(model, physics.SolverSemiImplicit(model), substeps)
