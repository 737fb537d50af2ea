"""Mesh shapes (issue 19): ``physics.Mesh`` and ``builder.add_shape_mesh`` — mass
properties of the closed volume by signed tetrahedra against a box's closed form and a
sphere's, bad input; contacts of particles and primitive shapes against meshes,
checked by resting heights."""

import math

import numpy as np
import pytest

from numba_sim import physics
from mesh_shapes import cube, icosphere

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
