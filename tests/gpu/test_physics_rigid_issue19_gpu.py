"""Issue 19's later pieces on a real GPU against their CPU runs: mesh shapes (a box mesh
on the ground, a sphere on a static mesh, a particle on a mesh), box edges against box
edges, cones as cores, the Bvh broad phase (the same contact set as all pairs), D6 and
distance joints in SolverSemiImplicit, a D6 in SolverFeatherstone, and eval_jacobian /
eval_mass_matrix (float tolerances: FMA contraction and atomic order differ)."""

import math

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import physics

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")

G = 9.81


def cube(half):
    points = np.array([[x, y, z] for x in (-half, half) for y in (-half, half)
                       for z in (-half, half)], dtype=np.float32)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return points, np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))],
                            dtype=np.int32)


def contact_scene():
    """A box mesh on the ground, a sphere on a static box mesh, two crossed boxes, a box on
    an upturned cone, and a particle on the static mesh."""
    b = physics.ModelBuilder(gravity=-G)
    b.add_ground_plane()
    mesh = physics.Mesh(*cube(0.5))
    body = b.add_body(xform=((0.0, 0.0, 0.07), None))
    b.add_shape_mesh(body, mesh=mesh, scale=(0.1, 0.1, 0.1))
    b.add_shape_mesh(-1, xform=((2.0, 0.0, 0.1), None), mesh=mesh, scale=(1.0, 1.0, 0.2))
    ball = b.add_body(xform=((2.0, 0.0, 0.31), None))
    b.add_shape_sphere(ball, radius=0.1)
    ridge = 0.5 - 0.2 * math.sqrt(2.0)
    b.add_shape_box(-1, xform=((4.0, 0.0, ridge), (math.sin(math.pi / 8), 0.0, 0.0,
                                                   math.cos(math.pi / 8))),
                    hx=0.2, hy=0.2, hz=0.2)
    top = b.add_body(xform=((4.0, 0.0, 0.51 + 0.1 * math.sqrt(2.0)),
                            (0.0, math.sin(math.pi / 8), 0.0, math.cos(math.pi / 8))))
    b.add_shape_box(top, hx=0.1, hy=0.1, hz=0.1)
    b.add_shape_cone(-1, xform=((6.0, 0.0, 0.2), (1.0, 0.0, 0.0, 0.0)), radius=0.4,
                     half_height=0.2, axis="z")
    on_cone = b.add_body(xform=((6.0, 0.0, 0.47), None))
    b.add_shape_box(on_cone, hx=0.05, hy=0.05, hz=0.05)
    return b


def run_contacts(device, seconds=0.5):
    model = contact_scene().finalize(device=device)
    solver = physics.SolverXPBD(model)
    state, contacts = model.state(), model.contacts()
    for _ in range(int(seconds * 60)):
        model.collide(state, contacts)
        for _ in range(20):
            solver.step(state, state, None, contacts, 1.0 / 1200.0)
    return sim.to_numpy(state.body_q)


def test_mesh_edge_and_cone_contacts_rest_alike_on_gpu_and_cpu():
    gpu, cpu = run_contacts("cuda"), run_contacts("cpu")
    assert np.isfinite(gpu).all()
    np.testing.assert_allclose(gpu[:, 2], cpu[:, 2], atol=1e-3)
    np.testing.assert_allclose(cpu[:, 2], [0.05, 0.3, 0.5 + 0.1 * math.sqrt(2.0), 0.45],
                               atol=2e-3)


def test_a_particle_rests_on_a_mesh_on_gpu():
    def run(device):
        b = physics.ModelBuilder(gravity=-G)
        b.particle_collision = False
        b.add_particle((0.05, -0.1, 1.0), (0, 0, 0), 0.2, radius=0.05)
        b.add_shape_mesh(-1, xform=((0, 0, 0.5), None), mesh=physics.Mesh(*cube(0.5)),
                         scale=(0.6, 0.8, 0.5), cfg=physics.ShapeConfig(kd=100.0))
        model = b.finalize(device=device)
        solver = physics.SolverSemiImplicit(model)
        state, contacts = model.state(), model.contacts()
        for _ in range(150):
            model.collide(state, contacts)
            for _ in range(20):
                solver.step(state, state, None, contacts, 1.0 / 1200.0)
        return sim.to_numpy(state.particle_q)

    np.testing.assert_allclose(run("cuda"), run("cpu"), atol=1e-4)


def test_the_bvh_broad_phase_finds_the_cpu_contacts_on_gpu():
    def contact_set(device, broad_phase):
        rng = np.random.default_rng(2)
        b = physics.ModelBuilder()
        b.add_ground_plane()
        for k in range(60):
            body = b.add_body(xform=(rng.uniform(0.0, 0.8, 3), None))
            if k % 2:
                b.add_shape_sphere(body, radius=0.05)
            else:
                b.add_shape_box(body, hx=0.05, hy=0.04, hz=0.06)
        model = b.finalize(device=device)
        model.rigid_broad_phase = broad_phase
        contacts = model.collide(model.state())
        n = int(sim.to_numpy(contacts.rigid_contact_count)[0])
        return sorted(zip(sim.to_numpy(contacts.rigid_contact_shape0)[:n].tolist(),
                          sim.to_numpy(contacts.rigid_contact_shape1)[:n].tolist()))

    cpu = contact_set("cpu", "pairs")
    assert contact_set("cuda", "bvh") == cpu and contact_set("cuda", "pairs") == cpu
    assert len(cpu) > 50


def joint_scene(device):
    """A universal D6 rod, a box on a distance joint and a D6 slider (semi-implicit)."""
    b = physics.ModelBuilder(gravity=-G)
    rod = b.add_body(xform=((0.0, 0.0, 1.5), (math.sin(0.2), 0.0, 0.0, math.cos(0.2))))
    b.add_shape_box(rod, hx=0.05, hy=0.05, hz=0.5)
    b.add_joint_d6(-1, rod, angular_axes=[(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)],
                   parent_xform=((0.0, 0.0, 2.0), None), child_xform=((0.0, 0.0, 0.5), None))
    weight = b.add_body(xform=((2.0, 0.3, 1.5), None))
    b.add_shape_box(weight, hx=0.05, hy=0.05, hz=0.05)
    b.add_joint_distance(-1, weight, parent_xform=((2.0, 0.0, 2.0), None), max_distance=1.0)
    slider = b.add_body(xform=((4.0, 0.0, 1.0), None))
    b.add_shape_box(slider, hx=0.1, hy=0.1, hz=0.1)
    b.add_joint_d6(-1, slider, linear_axes=[{"axis": (0.0, 0.0, 1.0), "limit_lower": -0.3}],
                   parent_xform=((4.0, 0.0, 1.0), None))
    model = b.finalize(device=device)
    model.joint_attach_ke, model.joint_attach_kd = 1.0e4, 1.0e2
    return model


def test_semi_implicit_d6_and_distance_joints_on_gpu_match_cpu():
    def run(device):
        model = joint_scene(device)
        solver = physics.SolverSemiImplicit(model)
        state = model.state()
        for _ in range(1200):
            solver.step(state, state, None, None, 1.0 / 2400.0)
        return sim.to_numpy(state.body_q)

    gpu, cpu = run("cuda"), run("cpu")
    np.testing.assert_allclose(gpu, cpu, atol=2e-3)


def d6_articulation(device):
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.0, 0.0, 1.5), None))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.5)
    b.add_joint_d6(-1, body, linear_axes=[(0.0, 1.0, 0.0)],
                   angular_axes=[(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)],
                   parent_xform=((0.0, 0.0, 2.0), None), child_xform=((0.0, 0.0, 0.5), None))
    second = b.add_body(xform=((0.0, 0.0, 0.5), None))
    b.add_shape_box(second, hx=0.05, hy=0.05, hz=0.5)
    b.add_joint_revolute(body, second, parent_xform=((0.0, 0.0, -0.5), None),
                         child_xform=((0.0, 0.0, 0.5), None), axis=(1.0, 0.0, 0.0))
    return b.finalize(device=device)


def test_featherstone_d6_and_the_articulation_matrices_on_gpu_match_cpu():
    def run(device):
        model = d6_articulation(device)
        state = model.state()
        q = np.array([0.1, 0.6, -0.4, 0.3], dtype=np.float32)
        state.joint_q[:] = model._xp.asarray(q)
        state.joint_qd[:] = model._xp.asarray(np.array([0.5, 0.0, 1.0, -0.2], np.float32))
        physics.eval_fk(model, state.joint_q, state.joint_qd, state)
        J = sim.to_numpy(physics.eval_jacobian(model, state))
        H = sim.to_numpy(physics.eval_mass_matrix(model, state))
        solver = physics.SolverFeatherstone(model, angular_damping=0.0)
        for _ in range(600):
            solver.step(state, state, None, None, 1.0 / 1200.0)
        return J, H, sim.to_numpy(state.joint_q), sim.to_numpy(state.body_q)

    gpu, cpu = run("cuda"), run("cpu")
    np.testing.assert_allclose(gpu[0], cpu[0], atol=1e-5)
    np.testing.assert_allclose(gpu[1], cpu[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gpu[2], cpu[2], atol=1e-3)
    np.testing.assert_allclose(gpu[3], cpu[3], atol=1e-3)
