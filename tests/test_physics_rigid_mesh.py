"""Mesh shapes (issue 19): ``physics.Mesh`` and ``builder.add_shape_mesh`` — mass
properties of the closed volume by signed tetrahedra against a box's closed form and a
sphere's, bad input; contacts of particles and primitive shapes against meshes,
checked by resting heights."""

import math

import numpy as np
import pytest

from numba_sim import physics
from mesh_shapes import closest_points, cube, icosphere

RHO = 1000.0
G = 9.81


def rotation(axis, angle):
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    return tuple(axis * math.sin(angle / 2.0)) + (math.cos(angle / 2.0),)


# ------------------------------------------------------------------------- mass properties

def test_a_box_mesh_has_the_mass_properties_of_the_box():
    """A unit cube mesh scaled to 0.2 x 0.4 x 0.6, rotated and moved on its body, against
    ``add_shape_box`` with the same transform; and the unit-density figures of the mesh."""
    points, faces = cube(0.5)
    mesh = physics.Mesh(points, faces)
    assert mesh.volume == pytest.approx(1.0)
    np.testing.assert_allclose(mesh.com, 0.0, atol=1e-12)
    np.testing.assert_allclose(mesh.inertia, np.eye(3) / 6.0, atol=1e-12)
    xform = ((0.05, -0.02, 0.3), rotation((1.0, 2.0, 0.5), 0.7))
    b = physics.ModelBuilder()
    body = b.add_body()
    b.add_shape_mesh(body, xform=xform, mesh=mesh, scale=(0.2, 0.4, 0.6))
    box = b.add_body()
    b.add_shape_box(box, xform=xform, hx=0.1, hy=0.2, hz=0.3)
    m = b.finalize()
    assert m.body_mass[body] == pytest.approx(RHO * 0.2 * 0.4 * 0.6, rel=1e-6)
    assert m.body_mass[body] == pytest.approx(m.body_mass[box], rel=1e-6)
    np.testing.assert_allclose(m.body_com[body], m.body_com[box], atol=1e-7)
    np.testing.assert_allclose(m.body_inertia[body], m.body_inertia[box], rtol=1e-5,
                               atol=1e-7 * np.abs(m.body_inertia[box]).max())
    assert m.shape_type[0] == physics.GeoType.MESH
    np.testing.assert_allclose(m.shape_scale[0], (0.2, 0.4, 0.6))


def test_an_off_centre_sphere_mesh_has_the_sphere_mass_properties():
    """An icosphere (1280 triangles) around (0.3, 0, 0) of its own frame: the volume of
    its polyhedron (below the sphere's by the facets), its centroid at the centre, and
    the sphere's inertia 2/5 m r^2 to the facets' accuracy."""
    points, faces = icosphere(3, radius=0.1)
    points = points + np.array([0.3, 0.0, 0.0], dtype=np.float32)
    b = physics.ModelBuilder()
    body = b.add_body()
    b.add_shape_mesh(body, mesh=physics.Mesh(points, faces))
    m = b.finalize()
    exact = RHO * 4.0 / 3.0 * math.pi * 0.1 ** 3
    assert m.body_mass[0] == pytest.approx(exact, rel=1e-2)
    assert m.body_mass[0] < exact                               # inscribed
    np.testing.assert_allclose(m.body_com[0], (0.3, 0.0, 0.0), atol=1e-6)
    np.testing.assert_allclose(m.body_inertia[0], np.eye(3) * 0.4 * exact * 0.01,
                               rtol=2e-2, atol=1e-6 * exact * 0.01)


def test_replicated_mesh_shapes_share_one_query_mesh():
    points, faces = cube(0.1)
    template = physics.ModelBuilder()
    body = template.add_body()
    template.add_shape_mesh(body, mesh=physics.Mesh(points, faces))
    b = physics.ModelBuilder()
    b.replicate(template, 3)
    m = b.finalize()
    assert len(set(m.shape_source_ptr.tolist())) == 1 and m.shape_source_ptr[0] != 0
    assert m.shape_mesh_count.tolist() == [8, 8, 8]
    np.testing.assert_allclose(m.body_mass, RHO * 0.008, rtol=1e-6)


def test_bad_mesh_input_names_the_call_and_the_value():
    points, faces = cube(0.5)
    with pytest.raises(ValueError, match=r"Mesh: vertices\[1\] is not finite"):
        physics.Mesh(np.array([[0, 0, 0], [np.nan, 0, 0], [1, 0, 0], [0, 1, 0]]), faces[:4])
    with pytest.raises(ValueError, match="Mesh: indices holds index 8, out of range for 8"):
        physics.Mesh(points, np.where(faces == 7, 8, faces))
    with pytest.raises(ValueError, match="Mesh: indices must hold a multiple of 3"):
        physics.Mesh(points, faces.ravel()[:-1])
    b = physics.ModelBuilder()
    body = b.add_body()
    with pytest.raises(ValueError, match="add_shape_mesh: mesh must be a physics.Mesh"):
        b.add_shape_mesh(body, mesh=(points, faces))
    with pytest.raises(ValueError, match=r"add_shape_mesh: scale must be > 0 on every axis, "
                                         r"got \[1.0, 0.0, 1.0\]"):
        b.add_shape_mesh(body, mesh=physics.Mesh(points, faces), scale=(1.0, 0.0, 1.0))
    with pytest.raises(ValueError, match="add_shape_mesh: the mesh must be closed and wound "
                                         "counter-clockwise .* volume is -1 "):
        b.add_shape_mesh(body, mesh=physics.Mesh(points, faces[:, ::-1]))
    with pytest.raises(ValueError, match=r"add_shape_mesh: body=3 is out of range"):
        b.add_shape_mesh(3, mesh=physics.Mesh(points, faces))
    # a static mesh, or one without density, needs no volume
    b.add_shape_mesh(-1, mesh=physics.Mesh(points, faces[:, ::-1]))
    assert b.shape_count == 1


# ------------------------------------------------------------------------------ contacts

def settle(model, solver, seconds=1.5, substeps=20):
    state = model.state()
    contacts = model.contacts()
    dt = 1.0 / 60.0 / substeps
    for _ in range(int(seconds * 60)):
        model.collide(state, contacts)
        for _ in range(substeps):
            solver.step(state, state, None, contacts, dt)
    return state, contacts


def test_a_particle_rests_on_a_static_mesh_at_the_penalty_depth():
    """On a static box mesh 0.6 x 0.8 x 0.5 whose top is at 0.75 (the box of the
    semi-implicit particle test): ``top + radius - m g / ke``."""
    b = physics.ModelBuilder(gravity=-G)
    b.particle_collision = False
    radius, mass = 0.05, 0.2
    b.add_particle((0.05, -0.1, 1.0), (0, 0, 0), mass, radius=radius)
    points, faces = cube(0.5)
    b.add_shape_mesh(-1, xform=((0, 0, 0.5), None), mesh=physics.Mesh(points, faces),
                     scale=(0.6, 0.8, 0.5), cfg=physics.ShapeConfig(kd=100.0))
    model = b.finalize()
    solver = physics.SolverSemiImplicit(model)
    state = model.state()
    contacts = model.contacts()
    for _ in range(150):
        model.collide(state, contacts)
        for _ in range(20):
            solver.step(state, state, None, contacts, 1.0 / 1200.0)
    ke = 0.5 * (model.soft_contact_ke + model.shape_material_ke[0])
    assert state.particle_q[0, 2] == pytest.approx(0.75 + radius - mass * G / ke, abs=2e-4)
    assert int(contacts.soft_contact_count[0]) == 1
    assert contacts.soft_contact_normal[0].tolist() == pytest.approx([0.0, 0.0, 1.0], abs=1e-5)


def test_particles_far_from_a_mesh_or_inside_its_margin_only():
    """Contacts within ``soft_contact_margin`` of the surface, none beyond it."""
    b = physics.ModelBuilder()
    for z in (0.05 + 0.15, 0.05 + 0.25):              # gap 0.15 (< margin 0.2) and 0.25
        b.add_particle((0.0, 0.0, 0.5 + z), (0, 0, 0), 1.0, radius=0.05)
    points, faces = cube(0.5)
    b.add_shape_mesh(-1, mesh=physics.Mesh(points, faces))
    model = b.finalize()
    contacts = model.collide(model.state())
    assert int(contacts.soft_contact_count[0]) == 1
    assert contacts.soft_contact_particle[0] == 0
    np.testing.assert_allclose(contacts.soft_contact_body_pos[0], (0.0, 0.0, 0.5), atol=1e-6)


SPHERE_MESH = icosphere(2, radius=0.1)         # 320 triangles, 162 vertices


@pytest.mark.parametrize("case", ["box_on_mesh", "mesh_on_ground", "mesh_on_box",
                                  "sphere_on_mesh", "mesh_on_mesh"])
def test_shapes_rest_on_meshes_and_meshes_on_shapes(case):
    """XPBD, 20 substeps: a body box on a static box mesh (the box's corners against the
    mesh's closest points), a box mesh on the ground (its vertices against the plane), a
    box mesh on a static box (its vertices against the box), a sphere on a static
    icosphere mesh (its centre against the closest point), a box mesh on a static box
    mesh; each at rest at its half height above the support's top."""
    b = physics.ModelBuilder(gravity=-G)
    cube_mesh = physics.Mesh(*cube(0.5))
    support_top = 0.2
    if case == "mesh_on_ground":
        b.add_ground_plane()
        support_top = 0.0
    elif case == "mesh_on_box":
        b.add_shape_box(-1, xform=((0, 0, 0.1), None), hx=0.5, hy=0.5, hz=0.1)
    elif case == "sphere_on_mesh":
        b.add_shape_mesh(-1, mesh=physics.Mesh(*SPHERE_MESH))
        # the icosphere's top vertex is not at the pole: the top is where the contact is
        support_top = None
    else:
        b.add_shape_mesh(-1, xform=((0, 0, 0.1), None), mesh=cube_mesh, scale=(1.0, 1.0, 0.2))
    body = b.add_body(xform=((0.02, -0.01, support_top + 0.06 if support_top is not None
                              else 0.21), None))
    if case in ("box_on_mesh",):
        b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.05)
    elif case == "sphere_on_mesh":
        b.add_shape_sphere(body, radius=0.1)
    else:
        b.add_shape_mesh(body, mesh=cube_mesh, scale=(0.1, 0.1, 0.1))
    model = b.finalize()
    state, contacts = settle(model, physics.SolverXPBD(model), seconds=1.5)
    assert np.abs(state.body_qd[0]).max() < 1e-3
    z = float(state.body_q[0, 2])
    if support_top is None:
        # on the polyhedron (wherever it rolled to): its radius from the closest surface point
        distance = math.sqrt(closest_points(*SPHERE_MESH, state.body_q[:1, :3])[0][0])
        assert distance == pytest.approx(0.1, abs=1e-4)
        assert z > 0.19
    else:
        assert z == pytest.approx(support_top + 0.05, abs=1e-4)
        assert tilt(state.body_q[0, 3:]) < 1e-2


def tilt(q):
    from numba_sim.physics.checks import quat_rotate
    z = quat_rotate(np.asarray(q, dtype=np.float64), np.array([0.0, 0.0, 1.0]))
    return math.acos(min(1.0, float(z[2])))


def test_a_box_rests_on_an_open_two_triangle_floor():
    """A static open mesh (a 2 m quad, wound to face up) is a floor: its closest points
    need no closed volume; the box rests on its corners at its half height."""
    quad = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], dtype=np.float32)
    b = physics.ModelBuilder(gravity=-G)
    b.add_shape_mesh(-1, mesh=physics.Mesh(quad, [[0, 1, 2], [0, 2, 3]]))
    body = b.add_body(xform=((0.1, 0.2, 0.06), None))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.05)
    model = b.finalize()
    state, _ = settle(model, physics.SolverXPBD(model), seconds=1.0)
    assert state.body_q[0, 2] == pytest.approx(0.05, abs=1e-4)
    assert np.abs(state.body_qd[0]).max() < 1e-3
    with pytest.raises(ValueError, match="Mesh: vertices must hold at least 3 points, got 2"):
        physics.Mesh(quad[:2], [[0, 1, 1]])


def test_a_box_mesh_rests_at_the_penalty_equilibrium_semi_implicit():
    """Its 4 lower vertices on the ground (semi-implicit): ``h - m g / (4 ke)``, flat, at
    rest."""
    b = physics.ModelBuilder(gravity=-G)
    b.add_ground_plane()
    body = b.add_body(xform=((0.0, 0.0, 0.06), None))
    b.add_shape_mesh(body, mesh=physics.Mesh(*cube(0.5)), scale=(0.2, 0.2, 0.1))
    model = b.finalize()
    state, contacts = settle(model, physics.SolverSemiImplicit(model), seconds=2.0)
    ke = 1.0e5                                        # the shapes' default material
    depth = float(model.body_mass[0]) * G / (4 * ke)
    assert state.body_q[0, 2] == pytest.approx(0.05 - depth, abs=2e-6)
    assert np.abs(state.body_qd[0]).max() < 1e-3
    assert tilt(state.body_q[0, 3:]) < 1e-3
