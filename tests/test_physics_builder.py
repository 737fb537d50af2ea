"""physics.ModelBuilder / Model / State / Control / Contacts: layouts, counts, masses,
rest poses, composition and bad input (API-physics.md).  No solver runs here."""

import math

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import physics


def rope(n=5, spacing=0.1, up_axis="y"):
    b = physics.ModelBuilder(up_axis=up_axis)
    for i in range(n):
        b.add_particle((i * spacing, 1.0, 0.0), (0.0, 0.0, 0.0), 0.0 if i == 0 else 1.0,
                       radius=0.01)
    for i in range(n - 1):
        b.add_spring(i, i + 1, 100.0, 0.5)
    return b


# ----------------------------------------------------------------------------- conventions

@pytest.mark.parametrize("axis, index", [("x", 0), ("y", 1), ("z", 2), ("Y", 1)])
def test_scalar_gravity_acts_along_the_up_axis(axis, index):
    model = physics.ModelBuilder(up_axis=axis, gravity=-9.81).finalize()
    expected = np.zeros(3, dtype=np.float32)
    expected[index] = -9.81
    np.testing.assert_array_equal(model.gravity, expected)
    assert model.up_axis == index


def test_default_up_axis_is_z_and_a_gravity_vector_is_taken_as_is():
    assert physics.ModelBuilder().finalize().gravity.tolist() == pytest.approx([0, 0, -9.81])
    model = physics.ModelBuilder(up_axis="y", gravity=(1.0, 2.0, 3.0)).finalize()
    assert model.gravity.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("bad", ["w", "up", 3, -1, None, 1.5])
def test_an_unknown_up_axis_is_a_value_error_naming_it(bad):
    with pytest.raises(ValueError, match=r"ModelBuilder: up_axis .*" + str(bad)[:2]):
        physics.ModelBuilder(up_axis=bad)


def test_state_and_model_arrays_have_the_documented_layouts():
    b = rope(4)
    b.add_particle((0.0, 0.0, 1.0), (0, 0, 0), 1.0)
    b.add_triangle(0, 1, 4)
    b.add_particle((0.0, 1.0, 1.0), (0, 0, 0), 1.0)
    b.add_tetrahedron(0, 1, 5, 4)
    model = b.finalize()
    state = model.state()
    n = model.particle_count
    assert n == 6
    assert state.particle_q.shape == (n, 3) and state.particle_q.dtype == np.float32
    assert state.particle_qd.shape == (n, 3) and state.particle_f.shape == (n, 3)
    assert state.body_q.shape == (0, 7) and state.body_qd.shape == (0, 6)
    assert state.joint_q.shape == (0,) and state.joint_qd.shape == (0,)
    assert model.spring_indices.shape == (2 * model.spring_count,)
    assert model.spring_indices.dtype == np.int32
    assert model.tri_indices.shape == (1, 3) and model.tri_poses.shape == (1, 2, 2)
    assert model.tri_materials.shape == (1, 5)
    assert model.tet_indices.shape == (1, 4) and model.tet_poses.shape == (1, 3, 3)
    assert model.tet_materials.shape == (1, 3)
    assert model.particle_mass.shape == (n,) and model.particle_inv_mass[0] == 0.0
    control = model.control()
    assert control.tri_activations.shape == (1,) and control.tet_activations.shape == (1,)
    assert control.joint_target_q.shape == (model.joint_dof_count,)
    assert model.body_count == 0 and model.joint_count == 0


def test_state_clear_forces_and_assign():
    model = rope().finalize()
    a, b = model.state(), model.state()
    a.particle_f[:] = 3.0
    a.particle_q[:, 1] = 7.0
    b.assign(a)
    assert (b.particle_q[:, 1] == 7.0).all() and (b.particle_f == 3.0).all()
    a.clear_forces()
    assert not a.particle_f.any() and (b.particle_f == 3.0).all()
    other = rope(3).finalize().state()
    with pytest.raises(ValueError, match="State.assign: particle_q has shape"):
        b.assign(other)


# ------------------------------------------------------------------------ element rest poses

def test_spring_rest_length_is_the_distance_when_added():
    model = rope(3, spacing=0.25).finalize()
    np.testing.assert_allclose(model.spring_rest_length, [0.25, 0.25], rtol=1e-6)
    assert model.spring_indices.tolist() == [0, 1, 1, 2]


def test_triangle_rest_pose_is_the_inverse_edge_matrix_in_its_plane():
    b = physics.ModelBuilder()
    for p in ((0, 0, 0), (2, 0, 0), (0, 1, 0)):
        b.add_particle(p, (0, 0, 0), 1.0)
    area = b.add_triangle(0, 1, 2)
    assert area == pytest.approx(1.0)
    model = b.finalize()
    # edge matrix in the plane: columns (2, 0) and (0, 1)
    np.testing.assert_allclose(model.tri_poses[0], [[0.5, 0.0], [0.0, 1.0]], atol=1e-7)
    assert model.tri_areas[0] == pytest.approx(1.0)
    assert model.tri_materials[0].tolist() == [100.0, 100.0, 10.0, 0.0, 0.0]  # warp.sim's


def test_tetrahedron_rest_pose_and_volume():
    b = physics.ModelBuilder()
    for p in ((0, 0, 0), (1, 0, 0), (0, 2, 0), (0, 0, 3)):
        b.add_particle(p, (0, 0, 0), 1.0)
    assert b.add_tetrahedron(0, 1, 2, 3) == pytest.approx(1.0)
    model = b.finalize()
    np.testing.assert_allclose(model.tet_poses[0], np.diag([1.0, 0.5, 1.0 / 3.0]), atol=1e-7)


def test_bending_edge_rest_angle_is_the_signed_dihedral_angle():
    b = physics.ModelBuilder()
    # hinge along k-l (the x axis); i above the -y side, j folded up by 90 degrees
    for p in ((0.5, -1.0, 0.0), (0.5, 0.0, 1.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0)):
        b.add_particle(p, (0, 0, 0), 1.0)
    b.add_edge(0, 1, 2, 3)
    b.add_edge(0, 1, 2, 3, rest=0.25)
    flat = physics.ModelBuilder()
    for p in ((0.5, -1.0, 0.0), (0.5, 1.0, 0.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0)):
        flat.add_particle(p, (0, 0, 0), 1.0)
    flat.add_edge(0, 1, 2, 3)
    model = b.finalize()
    assert abs(model.edge_rest_angle[0]) == pytest.approx(math.pi / 2, rel=1e-6)
    assert model.edge_rest_angle[1] == pytest.approx(0.25)
    assert flat.finalize().edge_rest_angle[0] == pytest.approx(0.0, abs=1e-7)


# ------------------------------------------------------------------------------- generators

def test_particle_grid_positions_and_masses():
    b = physics.ModelBuilder()
    ids = b.add_particle_grid((1, 2, 3), None, (0, 0, 0), 2, 3, 4, 0.1, 0.2, 0.3, mass=0.5)
    model = b.finalize()
    assert list(ids) == list(range(24)) and model.particle_count == 24
    q = model.particle_q
    assert q[:, 0].min() == pytest.approx(1.0) and q[:, 0].max() == pytest.approx(1.1)
    assert q[:, 2].max() == pytest.approx(3.9)
    assert (model.particle_mass == 0.5).all()
    assert (q[1] - q[0]).tolist() == pytest.approx([0.1, 0.0, 0.0])  # x fastest


@pytest.mark.parametrize("dim_x, dim_y", [(1, 1), (4, 3)])
def test_cloth_grid_counts_pins_and_flat_rest_angles(dim_x, dim_y):
    b = physics.ModelBuilder(up_axis="y")
    b.add_cloth_grid((0, 1, 0), None, (0, 0, 0), dim_x, dim_y, 0.1, 0.1, mass=0.2, fix_left=True,
                     add_springs=True)
    model = b.finalize()
    assert model.particle_count == (dim_x + 1) * (dim_y + 1)
    assert model.tri_count == 2 * dim_x * dim_y
    assert model.edge_count == 3 * dim_x * dim_y - dim_x - dim_y  # interior edges
    assert model.spring_count > 0
    np.testing.assert_allclose(model.edge_rest_angle, 0.0, atol=1e-6)
    pinned = np.flatnonzero(model.particle_inv_mass == 0.0)
    assert len(pinned) == dim_y + 1
    np.testing.assert_allclose(model.particle_q[pinned, 0], 0.0)
    np.testing.assert_allclose(model.tri_areas, 0.005, rtol=1e-5)


def test_cloth_mesh_mass_is_density_times_area():
    vertices = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    b = physics.ModelBuilder()
    b.add_cloth_mesh((0, 0, 1), None, 2.0, (0, 0, 0), vertices, [0, 1, 2, 0, 2, 3], density=3.0)
    model = b.finalize()
    assert model.particle_mass.sum() == pytest.approx(3.0 * 4.0)
    assert model.tri_count == 2 and model.edge_count == 1
    assert model.particle_q[:, 2].tolist() == [1.0] * 4


def test_soft_grid_five_tetrahedra_per_cell_fill_the_block():
    b = physics.ModelBuilder()
    b.add_soft_grid((0, 0, 0), None, (0, 0, 0), 2, 3, 4, 0.1, 0.2, 0.3, density=10.0,
                    k_mu=100.0, k_lambda=100.0, k_damp=0.0)
    model = b.finalize()
    assert model.tet_count == 5 * 2 * 3 * 4
    assert model.tet_volumes.sum() == pytest.approx(0.2 * 0.6 * 1.2, rel=1e-5)
    assert model.particle_count == 3 * 4 * 5
    np.testing.assert_allclose(model.particle_mass, 0.1 * 0.2 * 0.3 * 10.0, rtol=1e-6)
    # surface triangles: two per boundary cell face
    assert model.tri_count == 2 * 2 * (2 * 3 + 3 * 4 + 2 * 4)


def test_soft_mesh_mass_is_density_times_volume():
    vertices = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)]
    b = physics.ModelBuilder()
    b.add_soft_mesh((0, 0, 0), None, 1.0, (0, 0, 0), vertices, [0, 1, 2, 3, 1, 4, 2, 3],
                    density=6.0, k_mu=1.0, k_lambda=1.0, k_damp=0.0)
    model = b.finalize()
    volume = model.tet_volumes.sum()
    assert model.particle_mass.sum() == pytest.approx(6.0 * volume, rel=1e-6)
    assert model.tet_count == 2 and model.tri_count == 6


# ------------------------------------------------------------------------------ composition

def test_replicate_is_world_major_with_offsets():
    template = rope(3)
    b = physics.ModelBuilder(up_axis="y")
    b.replicate(template, 4, spacing=(0.0, 0.0, 2.0))
    b.add_ground_plane()
    model = b.finalize()
    assert model.num_worlds == 4 and model.particle_count == 12 and model.spring_count == 8
    assert model.particle_world.tolist() == [0] * 3 + [1] * 3 + [2] * 3 + [3] * 3
    assert model.spring_indices.reshape(-1, 2)[2:4].tolist() == [[3, 4], [4, 5]]
    view = model.world_view(model.particle_q)
    assert view.shape == (4, 3, 3) and np.shares_memory(view, model.particle_q)
    np.testing.assert_allclose(view[:, 0, 2], [0.0, 2.0, 4.0, 6.0])
    assert model.shape_world.tolist() == [-1]  # the ground belongs to every world


def test_add_builder_moves_and_rotates():
    template = rope(2, spacing=1.0)
    b = physics.ModelBuilder()
    quarter = (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))  # +90 degrees about z
    b.add_builder(template, xform=((10.0, 0.0, 0.0), quarter))
    q = b.finalize().particle_q
    np.testing.assert_allclose(q, [[9.0, 0.0, 0.0], [9.0, 1.0, 0.0]], atol=1e-6)


def test_entities_out_of_world_order_are_rejected():
    b = physics.ModelBuilder()
    b.add_builder(rope(2), world=1)
    b.add_builder(rope(2), world=0)
    with pytest.raises(ValueError, match="finalize: particle_world is not world-major"):
        b.finalize()


# ------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, match", [
    (lambda b: b.add_particle((0, 0, 0), (0, 0, 0), -1.0), r"add_particle: mass must be >= 0, got -1"),
    (lambda b: b.add_particle((0, 0, 0), (0, 0, 0), 1.0, radius=-0.1),
     r"add_particle: radius must be >= 0, got -0.1"),
    (lambda b: b.add_particle((0, float("nan"), 0), (0, 0, 0), 1.0),
     r"add_particle: pos must be finite, got \(0, nan, 0\)"),
    (lambda b: b.add_particle((0, 0), (0, 0, 0), 1.0), r"add_particle: pos must have 3 components"),
    (lambda b: b.add_particles([(0, 0, 0), (1, 1, 1)], [(0, 0, 0)] * 2, [1.0, -2.0]),
     r"add_particles: mass\[1\] must be finite and >= 0, got -2"),
    (lambda b: b.add_particles([(0, 0, 0), (1, np.inf, 1)], [(0, 0, 0)] * 2, 1.0),
     r"add_particles: pos\[1\] is not finite: \[1.0, inf, 1.0\]"),
    (lambda b: b.add_spring(0, 7, 1.0, 0.0), r"add_spring: j=7 is out of range \(3 particles\)"),
    (lambda b: b.add_spring(1, 1, 1.0, 0.0), r"add_spring: a spring needs two different"),
    (lambda b: b.add_spring(0, 1, -5.0, 0.0), r"add_spring: ke must be >= 0, got -5"),
    (lambda b: b.add_triangle(0, 1, -1), r"add_triangle: k=-1 is out of range"),
    (lambda b: b.add_triangle(0, 1, 1), r"add_triangle: triangle \(0, 1, 1\) is degenerate"),
    (lambda b: b.add_tetrahedron(0, 1, 2, 3), r"add_tetrahedron: l=3 is out of range"),
    (lambda b: b.add_edge(0, 1, 2, 9), r"add_edge: l=9 is out of range"),
    (lambda b: b.add_cloth_mesh((0, 0, 0), None, 1.0, (0, 0, 0), [(0, 0, 0), (1, 0, 0), (0, 1, 0)],
                                [0, 1, 5], 1.0),
     r"add_cloth_mesh: indices holds index 5, out of range for 3 vertices"),
    (lambda b: b.add_soft_grid((0, 0, 0), None, (0, 0, 0), 0, 1, 1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0,
                               0.0), r"add_soft_grid: dim_x must be an int >= 1, got 0"),
    (lambda b: b.add_cloth_grid((0, 0, 0), (0, 0, 0, 0), (0, 0, 0), 1, 1, 0.1, 0.1, 1.0),
     r"add_cloth_grid: rot must be a non-zero quaternion"),
    (lambda b: b.add_shape_sphere(0, radius=1.0), r"add_shape_sphere: body=0 is out of range"),
    (lambda b: b.add_shape_box(-1, hx=-1.0), r"add_shape_box: hx must be > 0, got -1"),
    (lambda b: b.add_shape_capsule(-1, axis="w"), r"add_shape_capsule: up_axis must be"),
    (lambda b: b.finalize(device="gpu"), r"finalize: device must be"),
    (lambda b: b.replicate(rope(), 0), r"replicate: num_worlds must be an int >= 1, got 0"),
    (lambda b: physics.ShapeConfig(mu=-0.5), r"ShapeConfig: mu must be >= 0, got -0.5"),
])
def test_bad_input_is_a_value_error_naming_the_call_and_the_value(call, match):
    b = physics.ModelBuilder()
    for p in ((0, 0, 0), (1, 0, 0), (0, 1, 0)):
        b.add_particle(p, (0, 0, 0), 1.0)
    with pytest.raises(ValueError, match=match):
        call(b)


def test_an_inverted_tetrahedron_is_rejected():
    b = physics.ModelBuilder()
    for p in ((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)):
        b.add_particle(p, (0, 0, 0), 1.0)
    with pytest.raises(ValueError, match=r"add_tetrahedron: tetrahedron \(0, 2, 1, 3\) is "
                                         r"inverted or degenerate \(volume -0.166"):
        b.add_tetrahedron(0, 2, 1, 3)


def test_transforms_and_vectors_accept_sim_values_and_tuples():
    b = physics.ModelBuilder()
    b.add_particle(sim.vec3(1.0, 2.0, 3.0), sim.vec3(), 1.0)
    b.add_shape_sphere(-1, xform=sim.transform(sim.vec3(0.0, 0.0, 1.0), sim.quat_identity()),
                       radius=0.5)
    b.add_shape_box(-1, xform=((0, 0, 2), (0, 0, 0, 1)))
    model = b.finalize()
    assert model.particle_q[0].tolist() == [1.0, 2.0, 3.0]
    assert model.shape_transform[:, 2].tolist() == [1.0, 2.0]
    assert model.shape_type.tolist() == [physics.GeoType.SPHERE, physics.GeoType.BOX]
