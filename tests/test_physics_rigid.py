"""Rigid bodies, shapes, joints and ground contacts (issue 19, first slice), checked by
physics: mass properties against closed forms and voxel integration, bodies resting on
the ground at their half height (XPBD) or at the penalty equilibrium r - m g / (n ke)
(semi-implicit), a pendulum's period against 2 pi sqrt(I_pivot / (m g d)), joints and
limits that hold, restitution and Coulomb friction against their closed forms, bad input,
and every rigid kernel compiling for CUDA offline."""

import math

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import physics
from numba_sim.physics import rigid_contacts, rigid_kernels, xpbd_rigid_substep
from numba_sim.physics.checks import quat_rotate
from ptx_checks import assert_float32_only

G = 9.81
RHO = 1000.0


def tilt(q):
    """Angle between the body's z axis and the world's."""
    z = quat_rotate(np.asarray(q, dtype=np.float64), np.array([0.0, 0.0, 1.0]))
    return math.acos(min(1.0, float(z[2])))


# ------------------------------------------------------------------------- mass properties

def test_shapes_bring_the_mass_and_inertia_of_their_solids():
    b = physics.ModelBuilder()
    sphere = b.add_body()
    b.add_shape_sphere(sphere, radius=0.2)
    box = b.add_body()
    b.add_shape_box(box, hx=0.1, hy=0.2, hz=0.3)
    m = b.finalize()
    ms = RHO * 4.0 / 3.0 * math.pi * 0.2 ** 3
    assert m.body_mass[sphere] == pytest.approx(ms, rel=1e-6)
    np.testing.assert_allclose(m.body_inertia[sphere], np.eye(3) * 0.4 * ms * 0.04, rtol=1e-6)
    mb = RHO * 0.2 * 0.4 * 0.6
    assert m.body_mass[box] == pytest.approx(mb, rel=1e-6)
    np.testing.assert_allclose(np.diag(m.body_inertia[box]),
                               [mb / 12 * (0.4 ** 2 + 0.6 ** 2), mb / 12 * (0.2 ** 2 + 0.6 ** 2),
                                mb / 12 * (0.2 ** 2 + 0.4 ** 2)], rtol=1e-6)
    np.testing.assert_allclose(m.body_inv_inertia[box] @ m.body_inertia[box], np.eye(3),
                               atol=1e-5)
    assert m.body_inv_mass[box] == pytest.approx(1.0 / mb)


def voxel_mass_properties(inside, extent, n=120):
    """Mass, com and inertia about the com of the solid ``inside(points)`` in a cube of
    half side *extent*, by the midpoint rule on an n^3 grid."""
    h = 2.0 * extent / n
    axis = -extent + h * (np.arange(n) + 0.5)
    x, y, z = np.meshgrid(axis, axis, axis, indexing="ij")
    p = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    p = p[inside(p)]
    dm = RHO * h ** 3
    mass = dm * len(p)
    com = p.mean(axis=0)
    d = p - com
    inertia = dm * ((d * d).sum(axis=1).sum() * np.eye(3) - d.T @ d)
    return mass, com, inertia


def test_a_capsule_rotated_and_moved_on_its_body_matches_voxel_integration():
    r, h = 0.1, 0.15
    angle = 0.4
    q = (0.0, math.sin(angle / 2), 0.0, math.cos(angle / 2))   # about y
    offset = np.array([0.05, -0.02, 0.03])
    b = physics.ModelBuilder()
    body = b.add_body()
    b.add_shape_capsule(body, xform=(offset, q), radius=r, half_height=h, axis="z")
    m = b.finalize()
    axis = quat_rotate(np.array(q), np.array([0.0, 0.0, 1.0]))

    def inside(p):
        d = p - offset
        t = np.clip(d @ axis, -h, h)
        return np.linalg.norm(d - t[:, None] * axis, axis=1) <= r

    mass, com, inertia = voxel_mass_properties(inside, 0.3)
    assert m.body_mass[0] == pytest.approx(mass, rel=5e-3)
    np.testing.assert_allclose(m.body_com[0], com, atol=1e-4)
    np.testing.assert_allclose(m.body_inertia[0], inertia, atol=5e-3 * np.abs(inertia).max())


@pytest.mark.parametrize("geo", ["cylinder", "cone"])
def test_cylinders_and_cones_match_voxel_integration(geo):
    """Along x (rotated onto it from the stored y axis), moved on their body; the cone's
    apex at +half_height, its base at -half_height."""
    r, h = 0.12, 0.15
    offset = np.array([0.0, 0.03, -0.01])     # the flat ends on voxel faces (0.004 m)
    b = physics.ModelBuilder()
    body = b.add_body()
    getattr(b, f"add_shape_{geo}")(body, xform=(offset, None), radius=r, half_height=h, axis="x")
    m = b.finalize()

    def inside(p):
        d = p - offset
        radial = np.hypot(d[:, 1], d[:, 2])
        if geo == "cylinder":
            return (np.abs(d[:, 0]) <= h) & (radial <= r)
        t = (h - d[:, 0]) / (2.0 * h)                  # 0 at the apex, 1 at the base
        return (t >= 0.0) & (t <= 1.0) & (radial <= r * t)

    mass, com, inertia = voxel_mass_properties(inside, 0.25, n=125)
    assert m.body_mass[0] == pytest.approx(mass, rel=5e-3)
    np.testing.assert_allclose(m.body_com[0], com, atol=2e-4)
    np.testing.assert_allclose(m.body_inertia[0], inertia, atol=5e-3 * np.abs(inertia).max())


@pytest.mark.parametrize("geo, axis, height", [("cylinder", "z", 0.15), ("cylinder", "x", 0.1),
                                               ("cone", "z", 0.15)])
def test_cylinders_and_cones_rest_on_the_ground(geo, axis, height):
    """Upright on a cap (or a cone on its base) at its half height; a cylinder on its side
    at its radius (on each rim's lowest point: 8 rim samples alone would tip it onto a
    side of their octagon, 7.6 mm lower)."""
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.0, 0.0, height + 0.02), None))
    getattr(b, f"add_shape_{geo}")(body, radius=0.1, half_height=0.15, axis=axis)
    b.add_ground_plane()
    model = b.finalize()
    state = settle(model, physics.SolverXPBD(model), seconds=2.0)
    assert state.body_q[0, 2] == pytest.approx(height, abs=1e-4)
    v, w = state.body_qd[0, :3], state.body_qd[0, 3:]
    assert abs(v[2]) < 1e-3
    if axis == "x":     # a round body on its side is free to roll: if it does, it rolls
        assert v[1] == pytest.approx(-w[0] * 0.1, abs=1e-4)     # without slipping
        assert abs(w[0]) < 0.2 and abs(v[0]) < 1e-3
    else:
        assert np.abs(state.body_qd[0]).max() < 1e-3


@pytest.mark.parametrize("static", [False, True])
def test_a_sphere_and_a_box_rest_on_a_cylinder(static):
    """On an upright puck (a body on the ground, or static): the sphere at the puck's top
    plus its radius, the box (on its corners) at the top plus its half height."""
    b = physics.ModelBuilder(gravity=-G)
    puck = -1 if static else b.add_body(xform=((0.0, 0.0, 0.1), None))
    b.add_shape_cylinder(puck, xform=((0.0, 0.0, 0.1), None) if static else None, radius=0.4,
                         half_height=0.1, axis="z")
    ball = b.add_body(xform=((0.15, 0.0, 0.33), None))
    b.add_shape_sphere(ball, radius=0.1)
    box = b.add_body(xform=((-0.15, 0.0, 0.28), None))
    b.add_shape_box(box, hx=0.05, hy=0.05, hz=0.05)
    b.add_ground_plane()
    model = b.finalize()
    state = settle(model, physics.SolverXPBD(model), seconds=2.0)
    np.testing.assert_allclose(state.body_q[-2:, 2], [0.3, 0.25], atol=1e-4)
    assert np.abs(state.body_qd).max() < 1e-3


def test_given_mass_and_shapes_add_by_the_parallel_axis_theorem():
    b = physics.ModelBuilder()
    body = b.add_body(mass=2.0, com=(0.0, 0.0, 1.0), inertia=(0.1, 0.2, 0.3), armature=0.01)
    b.add_shape_sphere(body, xform=((0.0, 0.0, -1.0), None), radius=0.1,
                       cfg=physics.ShapeConfig(density=2.0 / (4.0 / 3.0 * math.pi * 1e-3)))
    m = b.finalize()
    assert m.body_mass[0] == pytest.approx(4.0, rel=1e-6)
    np.testing.assert_allclose(m.body_com[0], [0.0, 0.0, 0.0], atol=1e-6)
    sphere = 0.4 * 2.0 * 0.01
    # two 2 kg masses 1 m from the com: + 2 * 2 * 1^2 about x and y
    expected = np.diag([0.1 + sphere + 4.0, 0.2 + sphere + 4.0, 0.3 + sphere]) + np.eye(3) * 0.01
    np.testing.assert_allclose(m.body_inertia[0], expected, rtol=1e-5)


def test_a_massless_body_is_static():
    b = physics.ModelBuilder()
    b.add_body(xform=((0, 0, 1), None))
    m = b.finalize()
    assert m.body_inv_mass[0] == 0.0
    assert not m.body_inv_inertia[0].any()


# ------------------------------------------------------------------------------ joints

def test_joint_arrays_follow_newtons_layout():
    b = physics.ModelBuilder()
    bodies = [b.add_body(xform=((i, 0, 1), None), mass=1.0, inertia=(1, 1, 1)) for i in range(5)]
    b.add_joint_revolute(-1, bodies[0], axis=(0, 2, 0), limit_lower=-1.0, limit_upper=0.5,
                         target_pos=0.25)
    b.add_joint_ball(bodies[0], bodies[1])
    b.add_joint_fixed(bodies[1], bodies[2])
    b.add_joint_prismatic(bodies[2], bodies[3], axis=(1, 0, 0))
    b.add_joint_free(bodies[4])
    m = b.finalize()
    J = physics.JointType
    assert m.joint_type.tolist() == [J.REVOLUTE, J.BALL, J.FIXED, J.PRISMATIC, J.FREE]
    assert m.joint_parent.tolist() == [-1, 0, 1, 2, -1]
    assert m.joint_child.tolist() == [0, 1, 2, 3, 4]
    assert m.joint_q_start.tolist() == [0, 1, 5, 5, 6, 13]
    assert m.joint_qd_start.tolist() == [0, 1, 4, 4, 5, 11]
    assert (m.joint_count, m.joint_coord_count, m.joint_dof_count) == (5, 13, 11)
    assert m.joint_dof_dim.tolist() == [[0, 1], [0, 3], [0, 0], [1, 0], [3, 3]]
    np.testing.assert_allclose(m.joint_axis[0], [0, 1, 0])          # normalized
    assert m.joint_limit_lower[0] == -1.0 and m.joint_limit_upper[0] == 0.5
    assert math.isinf(m.joint_limit_lower[1])
    assert m.joint_target_q[0] == 0.25                              # warp.sim's spelling
    np.testing.assert_allclose(m.joint_q[1:5], [0, 0, 0, 1])        # ball: identity
    np.testing.assert_allclose(m.joint_q[6:13], [4, 0, 1, 0, 0, 0, 1])  # free: the pose
    state = m.state()
    np.testing.assert_array_equal(state.joint_q, m.joint_q)
    assert state.body_q.shape == (5, 7) and state.body_qd.shape == (5, 6)
    assert state.body_f.shape == (5, 6)
    assert m.control().joint_target_q.tolist() == m.joint_target_q.tolist()


def test_replicate_offsets_bodies_joints_and_shapes():
    template = physics.ModelBuilder()
    body = template.add_body(xform=((0, 0, 1), None))
    template.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    template.add_joint_revolute(-1, body, parent_xform=((0, 0, 2), None))
    b = physics.ModelBuilder()
    b.replicate(template, 3, spacing=(1.0, 0.0, 0.0))
    b.add_ground_plane()
    m = b.finalize()
    assert m.body_count == 3 and m.joint_count == 3 and m.num_worlds == 3
    np.testing.assert_allclose(m.body_q[:, 0], [0, 1, 2])
    np.testing.assert_allclose(m.joint_X_p[:, 0], [0, 1, 2])
    assert m.joint_child.tolist() == [0, 1, 2]
    assert m.shape_body.tolist() == [0, 1, 2, -1]
    assert m.body_world.tolist() == [0, 1, 2]
    np.testing.assert_allclose(m.body_mass, [8.0, 8.0, 8.0], rtol=1e-6)


BAD_INPUT = [
    (lambda b: b.add_body(mass=-1.0), r"add_body: mass must be >= 0, got -1.0"),
    (lambda b: b.add_body(inertia=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]),
     r"add_body: inertia must be symmetric"),
    (lambda b: b.add_body(xform=((0, math.nan, 0), None)), r"add_body: xform\[0\] must be finite"),
    (lambda b: b.add_joint_revolute(-1, 5), r"add_joint_revolute: child=5 is out of range "
                                            r"\(2 bodies\)"),
    (lambda b: b.add_joint_ball(7, 0), r"add_joint_ball: parent=7 is out of range \(2 bodies; "
                                       r"-1 is the world\)"),
    (lambda b: b.add_joint_fixed(-1, -1), r"add_joint_fixed: child=-1 is out of range"),
    (lambda b: b.add_joint_fixed(1, 1), r"add_joint_fixed: parent and child are the same body"),
    (lambda b: (b.add_joint_fixed(-1, 1), b.add_joint_ball(0, 1)),
     r"add_joint_ball: body 1 already has a parent joint \(joint 0\)"),
    (lambda b: b.add_joint_revolute(-1, 0, axis=(0, 0, 0)), r"add_joint_revolute: axis must be "
                                                            r"non-zero"),
    (lambda b: b.add_joint_revolute(-1, 0, limit_lower=1.0, limit_upper=-1.0),
     r"add_joint_revolute: limits must satisfy limit_lower <= limit_upper"),
    (lambda b: b.add_shape_box(2, hx=0.1), r"add_shape_box: body=2 is out of range \(this model "
                                           r"has 2 bodies"),
    (lambda b: b.add_shape_sphere(0, radius=-0.1), r"add_shape_sphere: radius must be > 0"),
    (lambda b: b.add_shape_plane(0), r"add_shape_plane: planes are static \(body=-1\); got "
                                     r"body=0"),
]


@pytest.mark.parametrize("make, message", BAD_INPUT)
def test_bad_input_raises_value_errors_naming_the_call_and_value(make, message):
    b = physics.ModelBuilder()
    b.add_body(mass=1.0)
    b.add_body(mass=1.0)
    with pytest.raises(ValueError, match=message):
        make(b)


# ---------------------------------------------------------------------------- contacts

def resting_model(shape, z=None, cfg=None, rot=None):
    """One body of *shape* above the ground; returns (model, half height, contact points
    on the ground)."""
    b = physics.ModelBuilder(gravity=-G)
    half, points = {"box": (0.1, 4), "sphere": (0.1, 1), "capsule": (0.05, 2)}[shape]
    body = b.add_body(xform=((0.0, 0.0, half + 0.02 if z is None else z), rot))
    if shape == "box":
        b.add_shape_box(body, hx=0.15, hy=0.1, hz=0.1, cfg=cfg)
    elif shape == "sphere":
        b.add_shape_sphere(body, radius=0.1, cfg=cfg)
    else:
        b.add_shape_capsule(body, radius=0.05, half_height=0.1, axis="x", cfg=cfg)
    b.add_ground_plane(cfg=cfg)
    return b.finalize(), half, points


@pytest.mark.parametrize("shape", ["box", "sphere", "capsule"])
def test_collide_finds_the_contact_points_within_the_margin(shape):
    model, half, points = resting_model(shape)
    contacts = model.collide(model.state())
    assert int(contacts.rigid_contact_count[0]) == points
    count = points
    n = contacts.rigid_contact_normal[:count]
    np.testing.assert_allclose(n, np.tile([0.0, 0.0, 1.0], (count, 1)))
    assert (contacts.rigid_contact_shape0[:count] == 0).all()
    assert (contacts.rigid_contact_shape1[:count] == 1).all()
    lowest = contacts.rigid_contact_point0[:count, 2] - contacts.rigid_contact_thickness0[:count]
    np.testing.assert_allclose(lowest, -half, atol=1e-6)
    state = model.state()
    state.body_q[0, 2] = 1.0                                   # far above: no contacts
    assert int(model.collide(state, contacts).rigid_contact_count[0]) == 0


def settle(model, solver, seconds=1.5, substeps=20):
    state = model.state()
    contacts = model.contacts()
    dt = 1.0 / 60.0 / substeps
    for _ in range(int(seconds * 60)):
        model.collide(state, contacts)
        for _ in range(substeps):
            solver.step(state, state, None, contacts, dt)
    return state


@pytest.mark.parametrize("shape", ["box", "sphere", "capsule"])
def test_xpbd_bodies_rest_on_the_ground_at_their_half_height(shape):
    model, half, _ = resting_model(shape)
    state = settle(model, physics.SolverXPBD(model, iterations=1))
    assert state.body_q[0, 2] == pytest.approx(half, abs=2e-5)
    assert np.abs(state.body_qd[0]).max() < 1e-3
    assert tilt(state.body_q[0, 3:]) < 1e-2


@pytest.mark.parametrize("shape", ["box", "sphere", "capsule"])
def test_semi_implicit_bodies_rest_at_the_penalty_equilibrium(shape):
    model, half, points = resting_model(shape)
    state = settle(model, physics.SolverSemiImplicit(model), seconds=2.0)
    ke = 1.0e5                                        # the shapes' default material
    depth = float(model.body_mass[0]) * G / (points * ke)
    assert state.body_q[0, 2] == pytest.approx(half - depth, abs=0.02 * depth)
    assert np.abs(state.body_qd[0]).max() < 1e-3
    assert tilt(state.body_q[0, 3:]) < 1e-2


def box_stack(boxes=3, h=0.1, gap=0.01):
    """*boxes* cubes of half side *h* stacked *gap* apart above the ground."""
    b = physics.ModelBuilder(gravity=-G)
    for k in range(boxes):
        body = b.add_body(xform=((0.0, 0.0, h + k * (2.0 * h + gap) + gap), None))
        b.add_shape_box(body, hx=h, hy=h, hz=h)
    b.add_ground_plane()
    return b.finalize()


def test_xpbd_stack_of_three_boxes_rests_flat_at_its_heights():
    """warp.sim's box stack sinks (XPBD) or slides off (semi-implicit): ours rests."""
    model = box_stack()
    state = settle(model, physics.SolverXPBD(model), seconds=3.0)
    np.testing.assert_allclose(state.body_q[:, 2], [0.1, 0.3, 0.5], atol=1e-4)
    np.testing.assert_allclose(state.body_q[:, :2], 0.0, atol=1e-3)
    assert np.abs(state.body_qd).max() < 1e-3
    assert max(tilt(q) for q in state.body_q[:, 3:]) < 1e-2


def test_semi_implicit_stack_rests_at_the_penalty_equilibrium():
    """Each interface carries the weight above it: 4 ground contacts under 3 m g, and 8
    contacts (4 corners of each box) between boxes, under 2 m g and m g."""
    model = box_stack()
    state = settle(model, physics.SolverSemiImplicit(model), seconds=2.0)
    ke, mg = 1.0e5, float(model.body_mass[0]) * G
    z0 = 0.1 - 3.0 * mg / (4.0 * ke)
    z1 = z0 + 0.2 - 2.0 * mg / (8.0 * ke)
    z2 = z1 + 0.2 - mg / (8.0 * ke)
    np.testing.assert_allclose(state.body_q[:, 2], [z0, z1, z2], atol=5e-6)   # depths ~2e-4
    assert np.abs(state.body_q[:, :2]).max() < 1e-5
    assert np.abs(state.body_qd).max() < 1e-3


@pytest.mark.parametrize("static", [False, True])
def test_a_sphere_rests_on_a_box(static):
    """On a box body resting on the ground, and on a static box (body -1)."""
    b = physics.ModelBuilder(gravity=-G)
    if static:
        b.add_shape_box(-1, xform=((0.0, 0.0, 0.1), None), hx=0.2, hy=0.2, hz=0.1)
    else:
        box = b.add_body(xform=((0.0, 0.0, 0.1), None))
        b.add_shape_box(box, hx=0.2, hy=0.2, hz=0.1)
    ball = b.add_body(xform=((0.05, 0.0, 0.35), None))
    b.add_shape_sphere(ball, radius=0.1)
    b.add_ground_plane()
    model = b.finalize()
    state = settle(model, physics.SolverXPBD(model), seconds=2.0)
    assert state.body_q[-1, 2] == pytest.approx(0.3, abs=1e-4)
    assert state.body_q[-1, 0] == pytest.approx(0.05, abs=1e-3)
    assert np.abs(state.body_qd).max() < 1e-3


@pytest.mark.parametrize("e", [1.0, 0.5])
def test_xpbd_spheres_collide_by_newtons_law_of_restitution(e):
    """Equal spheres, one at rest: after the impact v_A = (1 - e) / 2 v, v_B = (1 + e) / 2 v
    (momentum kept, relative speed times e)."""
    b = physics.ModelBuilder(gravity=0.0)
    cfg = physics.ShapeConfig(restitution=e, mu=0.0)
    for x in (0.0, 0.3):
        body = b.add_body(xform=((x, 0.0, 1.0), None))
        b.add_shape_sphere(body, radius=0.1, cfg=cfg)
    model = b.finalize()
    solver = physics.SolverXPBD(model, iterations=1)
    state, contacts = model.state(), model.contacts()
    state.body_qd[0, 0] = 1.0
    for _ in range(30):
        model.collide(state, contacts)
        for _ in range(20):
            solver.step(state, state, None, contacts, 1.0 / 1200.0)
    np.testing.assert_allclose(state.body_qd[:, 0], [(1.0 - e) / 2.0, (1.0 + e) / 2.0],
                               atol=1e-4)
    np.testing.assert_allclose(state.body_qd[:, 1:], 0.0, atol=1e-5)


def overlapping_pair(**kwargs):
    """Two unit boxes at one place (in worlds / groups / joined as *kwargs* say)."""
    b = physics.ModelBuilder(gravity=0.0)
    if kwargs.get("worlds"):
        one = physics.ModelBuilder(gravity=0.0)
        body = one.add_body(xform=((0.0, 0.0, 1.0), None))
        one.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
        b.replicate(one, 2)
        return b.finalize()
    bodies = []
    for group in kwargs.get("groups", (-1, -1)):
        bodies.append(b.add_body(xform=((0.0, 0.0, 1.0), None)))
        b.add_shape_box(bodies[-1], hx=0.1, hy=0.1, hz=0.1,
                        cfg=physics.ShapeConfig(collision_group=group))
    if kwargs.get("joined"):
        b.add_joint_ball(bodies[0], bodies[1])
    return b.finalize()


@pytest.mark.parametrize("kwargs, expected", [
    ({}, 16), ({"groups": (1, 1)}, 16), ({"groups": (-1, 2)}, 16), ({"groups": (1, 2)}, 0),
    ({"worlds": True}, 0), ({"joined": True}, 0)])
def test_shapes_meet_unless_worlds_groups_or_a_joint_keep_them_apart(kwargs, expected):
    model = overlapping_pair(**kwargs)
    assert int(model.collide(model.state()).rigid_contact_count[0]) == expected


def test_replicated_stacks_find_their_own_contacts_only():
    """Worlds side by side at one place (spacing 0): each finds the contacts one stack alone
    finds, none with another world's boxes."""
    one = box_stack()
    alone = int(one.collide(one.state()).rigid_contact_count[0])
    template = physics.ModelBuilder(gravity=-G)
    for k in range(3):
        body = template.add_body(xform=((0.0, 0.0, 0.11 + 0.21 * k), None))
        template.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b = physics.ModelBuilder(gravity=-G)
    b.replicate(template, 5)
    b.add_ground_plane()
    model = b.finalize()
    contacts = model.collide(model.state())
    count = int(contacts.rigid_contact_count[0])
    assert count == 5 * alone
    s0, s1 = contacts.rigid_contact_shape0[:count], contacts.rigid_contact_shape1[:count]
    world = model.shape_world
    assert ((world[s0] == world[s1]) | (world[s1] < 0)).all()


def test_a_world_without_shapes_leaves_its_neighbours_their_contacts():
    stack = physics.ModelBuilder(gravity=-G)
    for k in range(2):
        body = stack.add_body(xform=((0.0, 0.0, 0.11 + 0.21 * k), None))
        stack.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    particle = physics.ModelBuilder(gravity=-G)
    particle.add_particle((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), 1.0)
    b = physics.ModelBuilder(gravity=-G)
    for world, part in enumerate((stack, particle, stack)):     # world 1: no shapes
        b.add_builder(part, xform=((3.0 * world, 0.0, 0.0), None), world=world)
    model = b.finalize()
    assert model.shape_world.tolist() == [0, 0, 2, 2]
    assert model.shape_world_start.tolist()[::2] == [0, 2]
    assert model.shape_world_end.tolist()[::2] == [2, 4]
    contacts = model.collide(model.state())
    assert int(contacts.rigid_contact_count[0]) == 2 * 8       # 4 + 4 corners per stack


def test_a_tilted_box_falls_flat():
    angle = 0.3
    rot = (math.sin(angle / 2), 0.0, 0.0, math.cos(angle / 2))
    model, half, _ = resting_model("box", z=0.2, rot=rot)
    state = settle(model, physics.SolverXPBD(model, iterations=1), seconds=2.0)
    assert tilt(state.body_q[0, 3:]) < 1e-2
    assert state.body_q[0, 2] == pytest.approx(half, abs=1e-4)
    assert np.abs(state.body_qd[0]).max() < 1e-3


def test_xpbd_restitution_returns_e_times_the_impact_speed():
    e = 0.5
    model, half, _ = resting_model("sphere", z=0.6, cfg=physics.ShapeConfig(restitution=e))
    solver = physics.SolverXPBD(model, iterations=1)
    state, contacts = model.state(), model.contacts()
    dt = 1.0 / 1200.0
    speeds = []
    for _ in range(600):
        model.collide(state, contacts)
        solver.step(state, state, None, contacts, dt)
        speeds.append(float(state.body_qd[0, 2]))
    speeds = np.array(speeds)
    k = int(np.argmax(speeds > 0.0))                  # the first step moving up
    impact = math.sqrt(2.0 * G * (0.6 - half))
    assert speeds[k - 1] == pytest.approx(-impact, rel=0.01)
    assert speeds[k] == pytest.approx(e * impact, rel=0.02)


def test_xpbd_friction_stops_a_sliding_box_after_v0_squared_over_2_mu_g():
    mu, v0 = 0.4, 1.0
    model, half, _ = resting_model("box", z=0.1, cfg=physics.ShapeConfig(mu=mu))
    solver = physics.SolverXPBD(model, iterations=1)
    state, contacts = model.state(), model.contacts()
    state.body_qd[0, 0] = v0
    dt = 1.0 / 1200.0
    for _ in range(600):
        model.collide(state, contacts)
        solver.step(state, state, None, contacts, dt)
    assert state.body_q[0, 0] == pytest.approx(v0 * v0 / (2.0 * mu * G), rel=0.02)
    assert np.abs(state.body_qd[0]).max() < 1e-3


# ---------------------------------------------------------------------------- pendulum

def pendulum_model(theta0, half_length=0.5, pivot=(0.0, 0.0, 2.0), joint="revolute"):
    """A box rod hanging from a hinge about x at its top end, swung out by theta0."""
    b = physics.ModelBuilder(gravity=-G)
    pivot = np.asarray(pivot, dtype=np.float64)
    q = (math.sin(theta0 / 2), 0.0, 0.0, math.cos(theta0 / 2))
    origin = pivot + np.array([0.0, half_length * math.sin(theta0),
                               -half_length * math.cos(theta0)])
    body = b.add_body(xform=(origin, q))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=half_length)
    kwargs = {"axis": (1.0, 0.0, 0.0)} if joint == "revolute" else {}
    weld = q if joint == "fixed" else None            # a weld holds the body where it is
    getattr(b, f"add_joint_{joint}")(-1, body, parent_xform=(pivot, weld),
                                     child_xform=((0.0, 0.0, half_length), None), **kwargs)
    return b.finalize()


def run_pendulum(model, seconds, substeps, half_length=0.5):
    solver = physics.SolverXPBD(model, iterations=1)
    state = model.state()
    dt = 1.0 / 60.0 / substeps
    pivot = model.joint_X_p[0, :3].astype(np.float64)
    angles, gap = [], 0.0
    for _ in range(int(seconds * 60)):
        for _ in range(substeps):
            solver.step(state, state, None, None, dt)
            q = state.body_q[0, 3:].astype(np.float64)
            angles.append(2.0 * math.atan2(q[0], q[3]))
        top = state.body_q[0, :3] + quat_rotate(q, np.array([0.0, 0.0, half_length]))
        gap = max(gap, float(np.linalg.norm(top - pivot)))
    return np.array(angles), dt, gap, state


def test_xpbd_pendulum_period_matches_the_physical_pendulum():
    theta0 = 0.05
    model = pendulum_model(theta0)
    angles, dt, gap, _ = run_pendulum(model, 5.0, 50)
    t = dt * (np.arange(len(angles)) + 1)
    down = [t[k] + angles[k] * dt / (angles[k] - angles[k + 1])
            for k in range(len(angles) - 1) if angles[k] > 0.0 >= angles[k + 1]]
    period = float(np.mean(np.diff(down)))
    m = float(model.body_mass[0])
    d = 0.5
    inertia_pivot = float(model.body_inertia[0][0, 0]) + m * d * d
    expected = 2.0 * math.pi * math.sqrt(inertia_pivot / (m * G * d)) * (1.0 + theta0 ** 2 / 16)
    assert len(down) >= 3
    assert period == pytest.approx(expected, rel=5e-3)
    # amplitude after about three periods (XPBD's projection loses energy at O(dt))
    last = np.abs(angles[-int(expected / dt):]).max()
    assert last == pytest.approx(theta0, rel=0.02)
    assert gap < 1e-4


@pytest.mark.parametrize("joint", ["fixed", "ball"])
def test_xpbd_fixed_and_ball_joints_hold(joint):
    model = pendulum_model(0.5, joint=joint)
    angles, _, gap, state = run_pendulum(model, 1.0, 20)
    assert gap < 1e-4
    if joint == "fixed":
        assert np.abs(angles - 0.5).max() < 2e-3       # the weld keeps its angle
    else:
        assert angles.min() < -0.45                    # it swings to the other side


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_xpbd_revolute_limit_holds(side):
    """A bar held out horizontally from a hinge about y falls onto its limit (+-0.2 rad)."""
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.3 * side, 0.0, 1.0), None))
    b.add_shape_box(body, hx=0.1, hy=0.05, hz=0.05)
    b.add_joint_revolute(-1, body, parent_xform=((0.0, 0.0, 1.0), None),
                         child_xform=((-0.3 * side, 0.0, 0.0), None), axis=(0.0, 1.0, 0.0),
                         limit_lower=-0.2, limit_upper=0.2)
    model = b.finalize()
    solver = physics.SolverXPBD(model, iterations=1)
    state = model.state()
    angles = []
    for _ in range(1200):
        solver.step(state, state, None, None, 1.0 / 1200.0)
        q = state.body_q[0, 3:].astype(np.float64)
        angles.append(2.0 * math.atan2(q[1], q[3]))
    angles = np.array(angles) * side
    assert angles.max() == pytest.approx(0.2, abs=1e-3)
    assert angles[-1] == pytest.approx(0.2, abs=1e-4)
    top = state.body_q[0, :3] + quat_rotate(q, np.array([-0.3 * side, 0.0, 0.0]))
    assert np.linalg.norm(top - (0.0, 0.0, 1.0)) < 1e-4


def test_xpbd_prismatic_slides_to_its_limit():
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.0, 0.0, 1.0), None))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b.add_joint_prismatic(-1, body, parent_xform=((0.0, 0.0, 1.0), None), axis=(0, 0, 1),
                          limit_lower=-0.3, limit_upper=0.3)
    model = b.finalize()
    solver = physics.SolverXPBD(model, iterations=1)
    state = model.state()
    state.body_qd[0, 3:] = (1.0, 0.0, 0.0)             # the slider also removes spin
    for _ in range(1200):
        solver.step(state, state, None, None, 1.0 / 1200.0)
    np.testing.assert_allclose(state.body_q[0], [0, 0, 0.7, 0, 0, 0, 1], atol=1e-4)
    assert np.abs(state.body_qd[0]).max() < 1e-3


def driven_model(joint, ke, kd, target=0.0, gravity=0.0):
    """A box on a hinge about x (or a slider along y) from the world, driven by its PD."""
    b = physics.ModelBuilder(gravity=gravity)
    body = b.add_body(xform=((0.0, 0.3, 1.0), None))
    b.add_shape_box(body, hx=0.05, hy=0.3, hz=0.05)
    add = b.add_joint_revolute if joint == "revolute" else b.add_joint_prismatic
    add(-1, body, parent_xform=((0.0, 0.0, 1.0), None), child_xform=((0.0, -0.3, 0.0), None),
        axis=(1.0, 0.0, 0.0) if joint == "revolute" else (0.0, 1.0, 0.0), target_q=target,
        target_ke=ke, target_kd=kd)
    return b.finalize()


def joint_coordinate(model, state, joint):
    q = state.body_q[0, 3:].astype(np.float64)
    if joint == "revolute":
        return 2.0 * math.atan2(q[0], q[3])
    return float(state.body_q[0, 1]) - 0.3


@pytest.mark.parametrize("joint, target", [("revolute", 0.5), ("prismatic", 0.2)])
def test_xpbd_drive_reaches_its_target_and_follows_a_new_one(joint, target):
    """A PD drive (ke 2000, kd 100 against a 6 kg box of inertia 0.72 about the hinge)
    brings the joint to the builder's target_q, and then to the Control's."""
    model = driven_model(joint, ke=2000.0, kd=100.0, target=target)
    solver = physics.SolverXPBD(model, iterations=1)
    state, control = model.state(), model.control()
    for _ in range(600):
        solver.step(state, state, None, None, 1.0 / 600.0)
    assert joint_coordinate(model, state, joint) == pytest.approx(target, abs=1e-4)
    assert np.abs(state.body_qd[0]).max() < 1e-3
    control.joint_target_q[0] = -target
    for _ in range(600):
        solver.step(state, state, control, None, 1.0 / 600.0)
    assert joint_coordinate(model, state, joint) == pytest.approx(-target, abs=1e-4)
    assert np.abs(state.body_qd[0]).max() < 1e-3


def test_xpbd_drive_holds_against_gravity_at_the_spring_equilibrium():
    """Under gravity a stiff hinge drive sags to where ke theta = m g d cos(theta)."""
    ke, g = 500.0, 9.81
    model = driven_model("revolute", ke=ke, kd=20.0, gravity=-g)
    solver = physics.SolverXPBD(model, iterations=1)
    state = model.state()
    for _ in range(1200):
        solver.step(state, state, None, None, 1.0 / 600.0)
    m, d = float(model.body_mass[0]), 0.3
    theta = joint_coordinate(model, state, "revolute")
    assert ke * theta == pytest.approx(-m * g * d * math.cos(theta), rel=2e-3)


def test_xpbd_damper_drive_spins_the_joint_at_its_target_velocity():
    """ke = 0, kd > 0: a damper that pulls the hinge's rate to control.joint_target_qd."""
    model = driven_model("revolute", ke=0.0, kd=50.0)
    solver = physics.SolverXPBD(model, iterations=1)
    state, control = model.state(), model.control()
    control.joint_target_qd[0] = 2.0
    for _ in range(600):
        solver.step(state, state, control, None, 1.0 / 600.0)
    np.testing.assert_allclose(state.body_qd[0, 3:], [2.0, 0.0, 0.0], atol=1e-3)


@pytest.mark.parametrize("joint", ["revolute", "prismatic"])
def test_xpbd_joint_force_accelerates_the_joint_by_its_inertia(joint):
    """control.joint_f: a hinge torque turns the bar at tau / I_pivot, a slider force moves
    it at f / m (no gravity).  (At a tenth of the torque float32 positions near z = 1 round
    the hinge's tiny corrections, and the rate comes out 4% high.)"""
    model = driven_model(joint, ke=0.0, kd=0.0)
    solver = physics.SolverXPBD(model, iterations=1)
    state, control = model.state(), model.control()
    control.joint_f[0] = 5.0
    steps, dt = 300, 1.0 / 600.0
    for _ in range(steps):
        solver.step(state, state, control, None, dt)
    m = float(model.body_mass[0])
    if joint == "revolute":
        inertia = float(model.body_inertia[0][0, 0]) + m * 0.3 * 0.3
        assert state.body_qd[0, 3] == pytest.approx(5.0 / inertia * steps * dt, rel=5e-3)
    else:
        assert state.body_qd[0, 1] == pytest.approx(5.0 / m * steps * dt, rel=1e-3)


def test_a_control_of_another_model_is_rejected():
    model = driven_model("revolute", ke=1.0, kd=0.0)
    other = pendulum_model(0.1, joint="ball")
    with pytest.raises(ValueError, match=r"SolverXPBD.step: control.joint_target_q has shape "
                                         r"\(3,\), the model has 1 entries"):
        physics.SolverXPBD(model).step(model.state(), model.state(), other.control(), None,
                                       1e-3)


def chain_builder(links=3, half=0.25, builder=None, pivot=(0.0, 0.0, 3.0)):
    """A chain of box links hinged about x, held out horizontally (along +y) from a pivot
    (at angle 0 of every joint), added to *builder* (a new one by default)."""
    b = builder or physics.ModelBuilder(gravity=-G)
    pivot = np.asarray(pivot, dtype=np.float64)
    parent = -1
    for k in range(links):
        body = b.add_body(xform=(pivot + np.array([0.0, half * (2 * k + 1), 0.0]), None))
        b.add_shape_box(body, hx=0.03, hy=half, hz=0.03)
        b.add_joint_revolute(parent, body,
                             parent_xform=(pivot if parent < 0 else (0.0, half, 0.0), None),
                             child_xform=((0.0, -half, 0.0), None), axis=(1.0, 0.0, 0.0))
        parent = body
    return b


def chain_model(links=3, half=0.25):
    return chain_builder(links, half).finalize()


def chain_energy_and_gap(model, state):
    q = state.body_q.astype(np.float64)
    qd = state.body_qd.astype(np.float64)
    energy = 0.0
    for i in range(model.body_count):
        rot = np.stack([quat_rotate(q[i, 3:], e) for e in np.eye(3)], axis=1)
        inertia = rot @ model.body_inertia[i].astype(np.float64) @ rot.T
        mass = float(model.body_mass[i])
        energy += 0.5 * mass * qd[i, :3] @ qd[i, :3] + 0.5 * qd[i, 3:] @ inertia @ qd[i, 3:] \
            + mass * G * (q[i, 2] - 3.0)
    gap = 0.0
    for j in range(model.joint_count):
        parent, child = int(model.joint_parent[j]), int(model.joint_child[j])
        a1 = model.joint_X_p[j, :3].astype(np.float64)
        if parent >= 0:
            a1 = q[parent, :3] + quat_rotate(q[parent, 3:], a1)
        a2 = q[child, :3] + quat_rotate(q[child, 3:], model.joint_X_c[j, :3].astype(np.float64))
        gap = max(gap, float(np.linalg.norm(a1 - a2)))
    return energy, gap


def test_xpbd_three_link_chain_never_gains_energy_and_its_joints_hold():
    model = chain_model()
    solver = physics.SolverXPBD(model)                 # 2 iterations
    state = model.state()
    energies, gaps = [chain_energy_and_gap(model, state)[0]], []
    lowest = 3.0
    for _ in range(120):
        for _ in range(20):
            solver.step(state, state, None, None, 1.0 / 1200.0)
        lowest = min(lowest, float(state.body_q[2, 2]))
        energy, gap = chain_energy_and_gap(model, state)
        energies.append(energy)
        gaps.append(gap)
    energies = np.array(energies)
    assert np.diff(energies).max() <= 1e-4             # J; float32 noise, no rise
    assert energies.min() > -45.0 and energies[-1] < -0.5   # it swung and lost a little
    assert max(gaps) < 1e-4
    assert lowest < 2.0                                 # the last link swung down


def semi_implicit_pendulum(theta0, joint="revolute", attach_ke=1.0e5, attach_kd=1.0e2):
    model = pendulum_model(theta0, joint=joint)
    model.joint_attach_ke = attach_ke
    model.joint_attach_kd = attach_kd
    return model, physics.SolverSemiImplicit(model, angular_damping=0.0)


def test_semi_implicit_joint_springs_hold_a_pendulum_at_its_period():
    """warp.sim's joint model: springs (joint_attach_ke/kd) pull the child's joint frame
    onto the parent's; stiff ones (1e5 against 10 kg) give the physical pendulum's period
    and a joint that gives by about m g / ke."""
    theta0 = 0.05
    model, solver = semi_implicit_pendulum(theta0)
    state = model.state()
    dt = 1.0 / 2400.0
    angles, gap = [], 0.0
    for k in range(12000):
        solver.step(state, state, None, None, dt)
        q = state.body_q[0, 3:].astype(np.float64)
        angles.append(2.0 * math.atan2(q[0], q[3]))
        top = state.body_q[0, :3] + quat_rotate(q, np.array([0.0, 0.0, 0.5]))
        gap = max(gap, float(np.linalg.norm(top - model.joint_X_p[0, :3])))
    angles = np.array(angles)
    t = dt * (np.arange(len(angles)) + 1)
    down = [t[k] + angles[k] * dt / (angles[k] - angles[k + 1])
            for k in range(len(angles) - 1) if angles[k] > 0.0 >= angles[k + 1]]
    m, d = float(model.body_mass[0]), 0.5
    inertia_pivot = float(model.body_inertia[0][0, 0]) + m * d * d
    expected = 2.0 * math.pi * math.sqrt(inertia_pivot / (m * G * d)) * (1.0 + theta0 ** 2 / 16)
    assert float(np.mean(np.diff(down))) == pytest.approx(expected, rel=5e-3)
    assert gap < 3.0 * m * G / 1.0e5


def test_semi_implicit_revolute_limit_and_drive_act_about_the_axis():
    """A bar held out from a hinge falls onto its 0.2 rad limit (limit_ke 1e4); a drive
    (ke 500, kd 5) then pulls it back to 0.1 rad against gravity, less m g d / ke.  (The
    drive's damping acts on the bar's own inertia, explicitly: kd 50 at 2400 Hz blows up,
    as in warp.sim.)"""
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.3, 0.0, 1.0), None))
    b.add_shape_box(body, hx=0.1, hy=0.05, hz=0.05)
    b.add_joint_revolute(-1, body, parent_xform=((0.0, 0.0, 1.0), None),
                         child_xform=((-0.3, 0.0, 0.0), None), axis=(0.0, 1.0, 0.0),
                         limit_lower=-0.2, limit_upper=0.2, limit_ke=1.0e4, limit_kd=10.0)
    model = b.finalize()
    model.joint_attach_ke, model.joint_attach_kd = 1.0e5, 1.0e2
    solver = physics.SolverSemiImplicit(model, angular_damping=0.0)
    state = model.state()

    def angle():
        q = state.body_q[0, 3:].astype(np.float64)
        return 2.0 * math.atan2(q[1], q[3])

    for _ in range(4800):
        solver.step(state, state, None, None, 1.0 / 2400.0)
    m = float(model.body_mass[0])
    torque = m * G * 0.3 * math.cos(0.2)
    assert angle() == pytest.approx(0.2 + torque / 1.0e4, abs=2e-3)      # on the limit
    model.joint_target_ke = np.array([500.0], np.float32)
    model.joint_target_kd = np.array([5.0], np.float32)
    control = model.control()
    control.joint_target_q[0] = 0.1
    for _ in range(9600):
        solver.step(state, state, control, None, 1.0 / 2400.0)
    assert angle() == pytest.approx(0.1 + m * G * 0.3 * math.cos(0.1) / 500.0, abs=2e-3)


@pytest.mark.parametrize("joint", ["fixed", "ball", "prismatic"])
def test_semi_implicit_fixed_ball_and_prismatic_joints_hold(joint):
    """A weld and a ball joint hold the rod's top at the pivot (the weld at its angle, the
    ball swinging through); a vertical slider lets the hanging rod fall along it only."""
    model, solver = semi_implicit_pendulum(0.0 if joint == "prismatic" else 0.5, joint=joint)
    start_z = float(model.body_q[0, 2])
    state = model.state()
    for _ in range(2400):
        solver.step(state, state, None, None, 1.0 / 2400.0)
    q = state.body_q[0, 3:].astype(np.float64)
    top = state.body_q[0, :3] + quat_rotate(q, np.array([0.0, 0.0, 0.5]))
    gap = np.linalg.norm(top - model.joint_X_p[0, :3])
    m = float(model.body_mass[0])
    angle = 2.0 * math.atan2(q[0], q[3])
    if joint == "prismatic":        # slides freely along its axis (z), held otherwise
        assert abs(top[1] - model.joint_X_p[0, 1]) < 1e-5
        assert abs(angle) < 1e-4
        fall = start_z - float(state.body_q[0, 2])
        assert fall == pytest.approx(0.5 * G * 1.0 ** 2, rel=0.01)   # free along the slide
    else:
        assert gap < 3.0 * m * G / 1.0e5
        if joint == "fixed":
            assert abs(angle - 0.5) < 1e-2
        else:
            assert angle < 0.0                         # swung through


def test_a_captured_cpu_graph_of_rigid_steps_matches_plain_steps():
    def build():
        b = physics.ModelBuilder(gravity=-G)
        body = b.add_body(xform=((0.0, 0.0, 0.12), None))
        b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
        b.add_ground_plane()
        return b.finalize()

    runs = []
    for captured in (False, True):
        model = build()
        solver = physics.SolverXPBD(model, iterations=1)
        s0, s1, contacts = model.state(), model.state(), model.contacts()
        if captured:
            with sim.capture("cpu") as graph:
                for _ in range(5):
                    solver.step(s0, s1, None, contacts, 1.0 / 600.0)
                    solver.step(s1, s0, None, contacts, 1.0 / 600.0)
        for _ in range(10):
            model.collide(s0, contacts)
            if captured:
                graph.launch()
            else:
                for _ in range(5):
                    solver.step(s0, s1, None, contacts, 1.0 / 600.0)
                    solver.step(s1, s0, None, contacts, 1.0 / 600.0)
        runs.append(s0.body_q.copy())
    np.testing.assert_array_equal(runs[0], runs[1])
    assert runs[0][0, 2] == pytest.approx(0.1, abs=1e-4)     # it fell onto the ground


# ---------------------------------------------------------------------- CUDA, offline

RIGID_KERNELS = ["plane_contacts_kernel", "shape_contacts_kernel", "rigid_contact_force_kernel",
                 "joint_force_kernel", "integrate_bodies_kernel", "xpbd_rigid_substep_kernel"]


@pytest.mark.parametrize("name", RIGID_KERNELS)
def test_every_rigid_kernel_compiles_for_cuda_offline(name, private_device_code_cache):
    m, _, _ = resting_model("box")
    state = m.state()
    c = m.contacts()
    f = np.zeros((1, 6), np.float32)
    arrays = rigid_contacts.rigid_contact_arrays(c)
    if name == "plane_contacts_kernel":
        kernel = rigid_contacts.plane_contacts_kernel
        inputs = [state.body_q, rigid_contacts.plane_shapes(m), m.shape_type, m.shape_body, m.shape_transform,
                  m.shape_scale, m.shape_thickness, m.shape_world, m.shape_shape_collision,
                  *rigid_contacts.mesh_point_arrays(m), 0.1, c.rigid_contact_max, *arrays]
    elif name == "shape_contacts_kernel":
        kernel = rigid_contacts.shape_contacts_kernel
        inputs = [state.body_q, m.shape_count, m.shape_type, m.shape_body, m.shape_transform,
                  m.shape_scale, m.shape_thickness, m.shape_world, m.shape_collision_group,
                  m.shape_shape_collision, m.shape_world_start, m.shape_world_end,
                  m.shape_global, m.body_parent, m.shape_source_ptr, m.shape_mesh_radius,
                  *rigid_contacts.mesh_point_arrays(m), 0.1, c.rigid_contact_max, *arrays]
    elif name == "rigid_contact_force_kernel":
        kernel = rigid_kernels.rigid_contact_force_kernel
        inputs = [state.body_q, state.body_qd, m.body_com, m.shape_body, m.shape_material_ke,
                  m.shape_material_kd, m.shape_material_kf, m.shape_material_mu, *arrays, f]
    elif name == "joint_force_kernel":
        m = pendulum_model(0.1)
        state = m.state()
        kernel = rigid_kernels.joint_force_kernel
        zeros = np.zeros(m.joint_dof_count, np.float32)
        inputs = [state.body_q, state.body_qd, m.body_com, m.joint_type, m.joint_parent,
                  m.joint_child, m.joint_X_p, m.joint_X_c, m.joint_axis, m.joint_qd_start,
                  m.joint_linear_dofs, m.joint_target_q, zeros, zeros, m.joint_target_ke, m.joint_target_kd,
                  m.joint_limit_lower, m.joint_limit_upper, m.joint_limit_ke, m.joint_limit_kd,
                  m.joint_attach_ke, m.joint_attach_kd, f]
    elif name == "integrate_bodies_kernel":
        kernel = rigid_kernels.integrate_bodies_kernel
        inputs = [state.body_q, state.body_qd, f, f, m.body_com, m.body_inv_mass,
                  m.body_inertia, m.body_inv_inertia, sim.vec3(0.0, 0.0, -G), 0.05, 1e-3,
                  state.body_q, state.body_qd]
    else:
        kernel = xpbd_rigid_substep.xpbd_rigid_substep_kernel
        solver = physics.SolverXPBD(m)
        solver.step(state, state, None, c, 1e-3)        # makes the structs
        launch_inputs = next(iter(solver._recorded.values()))[2]
        inputs = list(launch_inputs)
    library = kernel.compile("cuda", inputs, cc=(7, 5))
    ptx = library.get_asm_str(cc=(7, 5))
    assert ".entry" in ptx
    assert_float32_only(ptx)


# ------------------------------------------------------------------- D6 and distance

def hanging_rod(add_joint):
    """The pendulum_model rod at 0.5 rad, joined to the world at its top by *add_joint*."""
    b = physics.ModelBuilder(gravity=-G)
    q = (math.sin(0.25), 0.0, 0.0, math.cos(0.25))
    origin = np.array([0.0, 0.5 * math.sin(0.5), 2.0 - 0.5 * math.cos(0.5)])
    body = b.add_body(xform=(origin, q))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.5)
    add_joint(b, body, ((0.0, 0.0, 2.0), None), ((0.0, 0.0, 0.5), None))
    return b.finalize()


D6_TWINS = {
    "revolute": (lambda b, c, p, x: b.add_joint_d6(-1, c, angular_axes=[(1.0, 0.0, 0.0)],
                                                   parent_xform=p, child_xform=x),
                 lambda b, c, p, x: b.add_joint_revolute(-1, c, parent_xform=p, child_xform=x,
                                                         axis=(1.0, 0.0, 0.0))),
    "ball": (lambda b, c, p, x: b.add_joint_d6(-1, c, angular_axes=list(np.eye(3)),
                                               parent_xform=p, child_xform=x),
             lambda b, c, p, x: b.add_joint_ball(-1, c, parent_xform=p, child_xform=x)),
    "prismatic": (lambda b, c, p, x: b.add_joint_d6(-1, c, linear_axes=[(0.0, 0.0, 1.0)],
                                                    parent_xform=p, child_xform=x),
                  lambda b, c, p, x: b.add_joint_prismatic(-1, c, parent_xform=p,
                                                           child_xform=x)),
}


@pytest.mark.parametrize("twin", sorted(D6_TWINS))
def test_xpbd_d6_joints_move_as_the_joints_they_spell(twin):
    runs = []
    for add in D6_TWINS[twin]:
        model = hanging_rod(add)
        solver = physics.SolverXPBD(model, iterations=1)
        state = model.state()
        for _ in range(600):
            solver.step(state, state, None, None, 1.0 / 1200.0)
        runs.append(state.body_q.copy())
    np.testing.assert_allclose(runs[0], runs[1], atol=1e-6)
    assert np.abs(runs[0] - hanging_rod(D6_TWINS[twin][0]).body_q).max() > 1e-2   # it moved


def test_xpbd_universal_d6_keeps_its_axes_perpendicular():
    """Two angular axes (x on the parent, y on the child): the rod swings about both, its
    top held, the child's y axis kept perpendicular to the parent's x."""
    model = hanging_rod(lambda b, c, p, x: b.add_joint_d6(
        -1, c, angular_axes=[(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)], parent_xform=p, child_xform=x))
    solver = physics.SolverXPBD(model, iterations=2)
    state = model.state()
    state.body_qd[0, 3:] = (0.0, 2.0, 1.0)            # a kick about y (and z: held)
    worst, gap = 0.0, 0.0
    for _ in range(1200):
        solver.step(state, state, None, None, 1.0 / 1200.0)
        q = state.body_q[0, 3:].astype(np.float64)
        worst = max(worst, abs(float(quat_rotate(q, np.array([0.0, 1.0, 0.0]))[0])))
        top = state.body_q[0, :3] + quat_rotate(q, np.array([0.0, 0.0, 0.5]))
        gap = max(gap, float(np.linalg.norm(top - (0.0, 0.0, 2.0))))
    assert worst < 1e-3 and gap < 1e-4
    assert abs(float(state.body_qd[0, 4])) > 0.1         # it swings about y


def test_xpbd_distance_joint_is_a_rope():
    """A box on a 1 m distance joint from a pivot, released 0.8 m out: it falls slack, then
    swings on the taut rope, never further than 1 m."""
    b = physics.ModelBuilder(gravity=-G)
    body = b.add_body(xform=((0.0, 0.8, 2.0), None))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.05)
    b.add_joint_distance(-1, body, parent_xform=((0.0, 0.0, 2.0), None), max_distance=1.0)
    model = b.finalize()
    solver = physics.SolverXPBD(model, iterations=1)
    state = model.state()
    distances = []
    for _ in range(1200):
        solver.step(state, state, None, None, 1.0 / 1200.0)
        distances.append(float(np.linalg.norm(state.body_q[0, :3] - (0.0, 0.0, 2.0))))
    assert max(distances) < 1.0 + 1e-4
    assert distances[0] < 0.81 and max(distances) > 1.0 - 1e-4    # slack, then taut
    assert state.body_q[0, 1] < 0.0                                # it swung through


D6_BAD = [
    (dict(linear_axes=[(1, 0, 0)] * 4), r"add_joint_d6: linear_axes takes at most 3 axes"),
    (dict(angular_axes=[(1, 0, 0), (1, 1, 0)]), r"add_joint_d6: angular_axes must be "
                                                r"orthogonal; axes 0 and 1 are not"),
    (dict(angular_axes=[{"axis": (1, 0, 0), "limit": 1.0}]),
     r"add_joint_d6: angular_axes\[0\] has unknown settings \['limit'\]"),
    (dict(linear_axes=[{"axis": (0, 0, 1), "limit_lower": 1.0, "limit_upper": 0.0}]),
     r"add_joint_d6: linear_axes\[0\] limits must satisfy limit_lower <= limit_upper"),
    (dict(linear_axes=[(0, 0, 0)]), r"add_joint_d6: linear_axes\[0\] axis must be non-zero"),
]


@pytest.mark.parametrize("kwargs, message", D6_BAD)
def test_d6_bad_axes_raise_value_errors(kwargs, message):
    b = physics.ModelBuilder()
    body = b.add_body(mass=1.0)
    with pytest.raises(ValueError, match=message):
        b.add_joint_d6(-1, body, **kwargs)


def test_d6_and_distance_joint_layouts():
    b = physics.ModelBuilder()
    body = b.add_body(mass=1.0, inertia=(1, 1, 1))
    b.add_joint_d6(-1, body, linear_axes=[{"axis": (0, 0, 1), "limit_upper": 0.5}],
                   angular_axes=[(1, 0, 0), (0, 1, 0)])
    m = b.finalize()
    assert m.joint_type.tolist() == [physics.JointType.D6]
    assert m.joint_dof_dim.tolist() == [[1, 2]] and m.joint_coord_count == 3
    assert m.joint_limit_upper[0] == 0.5 and math.isinf(m.joint_limit_upper[1])
    b = physics.ModelBuilder()
    body = b.add_body(mass=1.0, inertia=(1, 1, 1))
    b.add_joint_distance(-1, body)
    m = b.finalize()
    assert m.joint_coord_count == 7 and m.joint_dof_count == 6
    physics.SolverFeatherstone(m)          # slides and a ball (test_physics_rigid_joints.py)
