"""Makes tests/data/physics_warp_sim_forces.npz with warp.sim 1.9.1 (the last warp-lang that ships
warp.sim), the reference of tests/test_physics_semi_implicit.py::test_element_forces_match_warp_sim:

    python -m venv /tmp/warp191 && /tmp/warp191/bin/pip install warp-lang==1.9.1
    /tmp/warp191/bin/python tests/data/make_physics_warp_sim_forces.py

A cloth grid (drag, lift, bending, springs) and a soft grid, every particle displaced and given a
random velocity; the forces of each element family, from warp.sim's own kernels.
"""

import os

import numpy as np
import warp as wp
import warp.sim
from warp.sim.integrator_euler import (
    eval_bending_forces, eval_spring_forces, eval_tetrahedral_forces, eval_triangle_forces,
)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "physics_warp_sim_forces.npz")

wp.init()
rng = np.random.default_rng(7)
b = warp.sim.ModelBuilder(up_vector=(0.0, 1.0, 0.0))
b.add_cloth_grid(pos=wp.vec3(0.0, 1.0, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=3,
                 dim_y=2, cell_x=0.1, cell_y=0.1, mass=0.1, tri_ke=1e3, tri_ka=2e3, tri_kd=5.0,
                 tri_drag=0.3, tri_lift=0.4, edge_ke=2.0, edge_kd=0.1, add_springs=True,
                 spring_ke=50.0, spring_kd=0.5)
b.add_soft_grid(pos=wp.vec3(1.0, 0.0, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=1,
                dim_y=1, dim_z=2, cell_x=0.1, cell_y=0.1, cell_z=0.1, density=100.0, k_mu=1e3,
                k_lambda=5e3, k_damp=0.0)
model = b.finalize(device="cpu")
n = model.particle_count
q0 = model.particle_q.numpy().copy()
q = q0 + rng.normal(scale=0.01, size=q0.shape).astype(np.float32)
v = rng.normal(scale=0.5, size=q0.shape).astype(np.float32)
state = model.state()
state.particle_q.assign(q)
state.particle_qd.assign(v)
control = model.control()
out = {}
for name, evaluate, with_control in (("springs", eval_spring_forces, False),
                                     ("triangles", eval_triangle_forces, True),
                                     ("bending", eval_bending_forces, False),
                                     ("tets", eval_tetrahedral_forces, True)):
    f = wp.zeros(n, dtype=wp.vec3, device="cpu")
    if with_control:
        evaluate(model, state, control, f)
    else:
        evaluate(model, state, f)
    out[name] = f.numpy()
np.savez(OUT, q0=q0, q=q, v=v, **out)
