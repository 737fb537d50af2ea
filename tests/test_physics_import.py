"""add_mjcf and add_urdf against the files' own numbers (tests/data/robots, the ant demo's
asset): counts, masses and inertias, frames, joint axes, ranges, drives and actuators;
bad files; an imported ant under XPBD; a URDF pendulum's period under Featherstone."""

import math

import numpy as np
import pytest

from numba_sim import physics
from numba_sim.examples import get_asset_directory
from numba_sim.physics import GeoType, JointType

Rotation = pytest.importorskip("scipy.spatial.transform").Rotation

ROBOTS = __import__("pathlib").Path(__file__).parent / "data" / "robots"
ANT = f"{get_asset_directory()}/ant.xml"
DEG = math.pi / 180.0


def capsule_volume(radius, length):
    return math.pi * radius ** 2 * length + 4.0 / 3.0 * math.pi * radius ** 3


def capsule_inertia(r, length, density):
    """(about its axis, across it through its centre) of a solid capsule."""
    m_c = density * math.pi * r * r * length
    m_s = density * 4.0 / 3.0 * math.pi * r ** 3
    axial = m_c * r * r / 2.0 + 0.4 * m_s * r * r
    across = m_c * (3 * r * r + length ** 2) / 12.0 + \
        m_s * (0.4 * r * r + length ** 2 / 4.0 + 3.0 * length * r / 8.0)
    return axial, across


def body_world(builder, body):
    return np.asarray(builder.body_q[body])


def rotate(q, v):
    return Rotation.from_quat(q).apply(v)


def joint_world_axis(builder, j, k=0):
    """Joint *j*'s k-th axis in the world (parent frame at the rest pose)."""
    parent = builder.joint_parent[j]
    X_p = np.asarray(builder.joint_X_p[j])
    q = X_p[3:] if parent < 0 else (Rotation.from_quat(body_world(builder, parent)[3:]) *
                                   Rotation.from_quat(X_p[3:])).as_quat()
    return rotate(q, builder.joint_axis[builder.joint_qd_start[j] + k])


# ---------------------------------------------------------------------------- MJCF: ant
@pytest.fixture(scope="module")
def ant():
    builder = physics.ModelBuilder(up_axis="z")
    return builder, builder.add_mjcf(ANT)


def test_ant_counts_and_joint_types(ant):
    builder, imported = ant
    # the four leg roots have no joint: MuJoCo welds them to the torso, so they merge
    assert builder.body_count == 9 and builder.joint_count == 9
    assert [JointType(t).name for t in builder.joint_type] == ["FREE"] + ["REVOLUTE"] * 8
    assert builder.joint_dof_count == 6 + 8
    assert imported.bodies["front_left_leg"] == imported.bodies["torso"] == 0
    assert len(imported.shapes) == len(builder.shape_type) == 14  # 13 geoms and the floor
    assert builder.shape_type.count(GeoType.PLANE) == 1 and \
        builder.shape_body[builder.shape_type.index(GeoType.PLANE)] == -1


def test_ant_masses_follow_mujoco_geom_rule(ant):
    builder, imported = ant
    model = builder.finalize()
    density = 100.0
    leg_root = capsule_volume(0.08, 0.2 * math.sqrt(2.0)) * density
    torso = 4.0 / 3.0 * math.pi * 0.25 ** 3 * density + 4 * leg_root
    assert model.body_mass[0] == pytest.approx(torso, rel=1e-5)
    assert model.body_mass[imported.bodies["front_left_thigh"]] == pytest.approx(leg_root, rel=1e-5)
    shin = capsule_volume(0.08, 0.4 * math.sqrt(2.0)) * density
    assert model.body_mass[imported.bodies["back_right_shin"]] == pytest.approx(shin, rel=1e-5)
    # the torso is symmetric: its centre of mass stays at the sphere's centre
    np.testing.assert_allclose(model.body_com[0], 0.0, atol=1e-6)
    # a thigh's capsule runs from its origin along (1, 1, 0): com halfway, inertia about it
    thigh = imported.bodies["front_left_thigh"]
    np.testing.assert_allclose(model.body_com[thigh], [0.1, 0.1, 0.0], atol=1e-6)
    axis = np.array([1.0, 1.0, 0.0]) / math.sqrt(2.0)
    axial, across = capsule_inertia(0.08, 0.2 * math.sqrt(2.0), density)
    assert axis @ model.body_inertia[thigh] @ axis == pytest.approx(axial, rel=1e-4)
    assert model.body_inertia[thigh][2, 2] == pytest.approx(across, rel=1e-4)


def test_ant_frames_axes_ranges_and_actuators(ant):
    builder, imported = ant
    np.testing.assert_allclose(body_world(builder, imported.bodies["front_left_shin"])[:3],
                               [0.4, 0.4, 0.75], atol=1e-12)
    hip, ankle = imported.joints["hip_1"], imported.joints["ankle_1"]
    np.testing.assert_allclose(joint_world_axis(builder, hip), [0.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(joint_world_axis(builder, ankle),
                               np.array([-1.0, 1.0, 0.0]) / math.sqrt(2.0), atol=1e-12)
    d = builder.joint_qd_start[hip]
    assert (builder.joint_limit_lower[d], builder.joint_limit_upper[d]) == \
        pytest.approx((-30 * DEG, 30 * DEG))
    d = builder.joint_qd_start[ankle]
    assert (builder.joint_limit_lower[d], builder.joint_limit_upper[d]) == \
        pytest.approx((-10 * DEG, 70 * DEG))
    assert builder.joint_armature[d] == pytest.approx(0.01)
    assert [a.name for a in imported.actuators] == [f"{j}_{k}" for k in range(1, 5)
                                                   for j in ("hip", "ankle")]
    for a in imported.actuators:
        assert a.kind == "position" and a.ctrl_range == (-1.2, 1.2)
        assert builder.joint_qd_start[a.joint] == a.dof
        # the actuator's kp and kv replace the joint's passive stiffness and damping
        assert (builder.joint_target_ke[a.dof], builder.joint_target_kd[a.dof]) == (200.0, 5.0)
    np.testing.assert_array_equal(imported.actuated_dofs("position"),
                                  [a.dof for a in imported.actuators])


def test_ant_turned_into_a_y_up_builder_and_placed():
    builder = physics.ModelBuilder(up_axis="y")
    imported = builder.add_mjcf(ANT, xform=((1.0, 0.0, 2.0), None))
    # z-up file into y-up: (x, y, z) -> (x, z, -y), then moved by xform
    np.testing.assert_allclose(body_world(builder, imported.bodies["front_left_shin"])[:3],
                               [1.4, 0.75, 2.0 - 0.4], atol=1e-12)
    np.testing.assert_allclose(joint_world_axis(builder, imported.joints["hip_1"]),
                               [0.0, 1.0, 0.0], atol=1e-12)
    plane = builder.shape_type.index(GeoType.PLANE)
    normal = rotate(builder.shape_transform[plane][3:], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(normal, [0.0, 1.0, 0.0], atol=1e-12)


def test_ant_options_floating_and_separate_leg_roots():
    builder = physics.ModelBuilder()
    imported = builder.add_mjcf(ANT, floating=False, collapse_fixed_joints=False)
    assert builder.body_count == 13
    assert JointType(builder.joint_type[imported.joints["root"]]) == JointType.FIXED
    assert [JointType(t).name for t in builder.joint_type].count("FIXED") == 5


# ------------------------------------------------------------------------ MJCF: humanoid
@pytest.fixture(scope="module")
def humanoid():
    builder = physics.ModelBuilder(up_axis="z")
    return builder, builder.add_mjcf(ROBOTS / "humanoid.xml")


def test_humanoid_one_joint_per_body(humanoid):
    builder, imported = humanoid
    assert list(imported.bodies) == ["torso", "head", "lwaist", "pelvis", "right_thigh",
                                     "right_shin", "right_upper_arm", "right_lower_arm"]
    assert [JointType(t).name for t in builder.joint_type] == [
        "FREE", "BALL", "D6", "REVOLUTE", "D6", "REVOLUTE", "D6", "REVOLUTE"]
    # several hinges in a body make one D6 of those axes, in file order
    lwaist = imported.joints["abdomen_z"]
    assert imported.joints["abdomen_y"] == lwaist and builder.joint_dof_dim[lwaist] == (0, 2)
    d = builder.joint_qd_start[lwaist]
    np.testing.assert_allclose(builder.joint_axis[d:d + 2], [[0, 0, 1], [0, 1, 0]])
    assert (builder.joint_limit_lower[d + 1], builder.joint_limit_upper[d + 1]) == \
        pytest.approx((-75 * DEG, 30 * DEG))
    thigh = imported.joints["right_hip_x"]
    assert builder.joint_dof_dim[thigh] == (0, 3)
    # the D6 sits at the first joint's pos (0 0 0.065 in lwaist)
    np.testing.assert_allclose(builder.joint_X_c[lwaist][:3], [0.0, 0.0, 0.065])


def test_humanoid_limited_false_and_ball_joint(humanoid):
    builder, imported = humanoid
    d = builder.joint_qd_start[imported.joints["abdomen_x"]]
    # range given, limited="false": no limit (the case newton's users report broken)
    assert builder.joint_limit_lower[d] == -math.inf and builder.joint_limit_upper[d] == math.inf
    neck = imported.joints["neck"]
    assert JointType(builder.joint_type[neck]) == JointType.BALL
    assert builder.joint_dof_dim[neck] == (0, 3)


def test_humanoid_default_classes_childclass_and_actuators(humanoid):
    builder, imported = humanoid
    dof = {name: builder.joint_qd_start[j] for name, j in imported.joints.items()}
    dof["abdomen_y"] += 1
    dof["right_hip_z"] += 1
    dof["right_hip_y"] += 2
    dof["right_shoulder2"] += 1
    ke, kd = builder.joint_target_ke, builder.joint_target_kd
    assert kd[dof["abdomen_z"]] == 2.0           # childclass "body"
    assert (ke[dof["right_hip_x"]], kd[dof["right_hip_x"]]) == (10.0, 5.0)  # nested "leg"
    assert kd[dof["right_hip_y"]] == 7.0          # the joint's own damping over its class
    assert ke[dof["right_hip_y"]] == 120.0        # the position actuator's kp
    assert kd[dof["right_knee"]] == 3.0           # the velocity actuator's kv
    assert ke[dof["right_elbow"]] == 40.0 and kd[dof["right_elbow"]] == 2.0  # class="body"
    assert kd[dof["right_shoulder1"]] == 2.0      # "arm" inherits "body"'s damping
    assert builder.joint_armature[dof["right_knee"]] == pytest.approx(0.02)  # main's
    kinds = {a.name: (a.kind, a.gear, a.dof) for a in imported.actuators}
    assert kinds == {"abdomen_y": ("force", 100.0, dof["abdomen_y"]),
                     "right_hip_y": ("position", 1.0, dof["right_hip_y"]),
                     "right_knee": ("velocity", 1.0, dof["right_knee"]),
                     "right_elbow": ("position", 1.0, dof["right_elbow"])}
    assert imported.actuators[0].ctrl_range == (-0.4, 0.4)
    # non-orthogonal-looking shoulder axes are orthogonal: one D6
    d = dof["right_shoulder1"]
    np.testing.assert_allclose(builder.joint_axis[d], np.array([2, 1, 1]) / math.sqrt(6))


def test_humanoid_masses_inertials_and_visual_geoms(humanoid):
    builder, imported = humanoid
    model = builder.finalize()
    body = imported.bodies
    # the visual class has density 0 and no contacts: the torso weighs its capsule only
    assert model.body_mass[body["torso"]] == pytest.approx(
        1000.0 * capsule_volume(0.07, 0.14), rel=1e-5)
    eye = [s for s in imported.shapes if builder.shape_body[s] == body["torso"]
           and builder.shape_type[s] == GeoType.SPHERE]
    assert len(eye) == 1 and not builder.shape_shape_collision[eye[0]]
    assert model.body_mass[body["head"]] == pytest.approx(5.0, rel=1e-6)  # geom mass="5"
    # an inertial wins over geoms; fullinertia turned by the inertial's quat (45 deg on z)
    assert model.body_mass[body["lwaist"]] == pytest.approx(2.5)
    np.testing.assert_allclose(model.body_com[body["lwaist"]], [0.0, 0.0, 0.01], atol=1e-7)
    full = np.array([[0.03, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.025]])
    R = Rotation.from_euler("z", 45, degrees=True).as_matrix()
    np.testing.assert_allclose(model.body_inertia[body["lwaist"]], R @ full @ R.T, atol=1e-7)


def test_humanoid_orientations_frames_and_include(humanoid):
    builder, imported = humanoid
    body = imported.bodies
    # xyaxes="0 1 0 -1 0 0": x onto y, y onto -x, a quarter turn about z
    q = body_world(builder, body["right_upper_arm"])[3:]
    np.testing.assert_allclose(Rotation.from_quat(q).as_matrix(),
                               Rotation.from_euler("z", 90, degrees=True).as_matrix(), atol=1e-9)
    # pelvis: euler="0 -2 0" in lwaist, itself quat="1 0 -0.002 0" (wxyz) in the torso
    lwaist = Rotation.from_quat([0.0, -0.002, 0.0, 1.0])
    pelvis = lwaist * Rotation.from_euler("y", -2, degrees=True)
    np.testing.assert_allclose(Rotation.from_quat(body_world(builder, body["pelvis"])[3:])
                               .as_matrix(), pelvis.as_matrix(), atol=1e-9)
    # the foot box in a <frame pos="0 0 -0.35" axisangle="0 0 1 90"> of the shin
    foot = [s for s in imported.shapes if builder.shape_type[s] == GeoType.BOX]
    assert len(foot) == 1 and builder.shape_body[foot[0]] == body["right_shin"]
    X = builder.shape_transform[foot[0]]
    np.testing.assert_allclose(X[:3], [0.0, 0.02, -0.35], atol=1e-12)
    np.testing.assert_allclose(rotate(X[3:], [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(builder.shape_scale[foot[0]], [0.05, 0.1, 0.027])
    # the floor comes from humanoid_floor.xml through <include>, with its friction
    floor = builder.shape_type.index(GeoType.PLANE)
    assert builder.shape_body[floor] == -1
    assert builder.shape_material_mu[floor] == pytest.approx(1.2)


@pytest.mark.parametrize("sequence, scipy_sequence", [("xyz", "XYZ"), ("XYZ", "xyz"),
                                                       ("zyx", "ZYX")])
def test_euler_sequences_and_radians(sequence, scipy_sequence):
    """Lower case rotates about the moving axes (MuJoCo), scipy's upper case."""
    builder = physics.ModelBuilder()
    builder.add_mjcf(f"""<mujoco><compiler angle="radian" eulerseq="{sequence}"/>
        <worldbody><body name="b" euler="0.3 -0.7 1.1">
          <joint name="j" range="-1 0.5"/><geom type="sphere" size="0.1"/>
        </body></worldbody></mujoco>""")
    expected = Rotation.from_euler(scipy_sequence, [0.3, -0.7, 1.1]).as_matrix()
    np.testing.assert_allclose(Rotation.from_quat(builder.body_q[0][3:]).as_matrix(), expected,
                               atol=1e-9)
    assert (builder.joint_limit_lower[0], builder.joint_limit_upper[0]) == (-1.0, 0.5)


def test_static_geoms_in_frames_are_added_once():
    builder = physics.ModelBuilder()
    builder.add_mjcf("""<mujoco><worldbody><frame pos="0 0 1" euler="0 0 90">
        <geom type="box" size="1 2 0.1" pos="1 0 0"/><frame pos="0 0 1"><geom size="0.2"/></frame>
        </frame></worldbody></mujoco>""")
    assert builder.shape_type == [GeoType.BOX, GeoType.SPHERE]
    np.testing.assert_allclose(builder.shape_transform[0][:3], [0.0, 1.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(builder.shape_transform[1][:3], [0.0, 0.0, 2.0], atol=1e-12)


def test_mjcf_ellipsoid_is_a_sphere_of_its_mass():
    builder = physics.ModelBuilder()
    builder.add_mjcf("""<mujoco><worldbody><body><freejoint/>
        <geom type="ellipsoid" size="0.05 0.04 0.03" density="1000"/></body></worldbody></mujoco>""")
    model = builder.finalize()
    assert GeoType(builder.shape_type[0]) == GeoType.SPHERE and builder.shape_scale[0][0] == 0.05
    assert model.body_mass[0] == pytest.approx(1000 * 4.0 / 3.0 * math.pi * 0.05 * 0.04 * 0.03,
                                               rel=1e-5)


def test_mjcf_mesh_geom_weighs_its_volume(tmp_path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "cube.obj").write_text((ROBOTS / "meshes" / "cube.obj").read_text())
    (tmp_path / "m.xml").write_text("""<mujoco><compiler meshdir="meshes"/>
      <asset><mesh name="cube" file="cube.obj" scale="0.2 0.4 0.6"/></asset>
      <worldbody><body name="b"><freejoint/><geom type="mesh" mesh="cube" density="500"/>
      </body></worldbody></mujoco>""")
    builder = physics.ModelBuilder()
    imported = builder.add_mjcf(tmp_path / "m.xml")
    model = builder.finalize()
    assert builder.shape_type[imported.shapes[0]] == GeoType.MESH
    assert model.body_mass[0] == pytest.approx(500.0 * 0.2 * 0.4 * 0.6, rel=1e-5)
    np.testing.assert_allclose(np.diag(model.body_inertia[0]),
                               500 * 0.048 / 12 * np.array([0.4 ** 2 + 0.6 ** 2,
                                                             0.2 ** 2 + 0.6 ** 2,
                                                             0.2 ** 2 + 0.4 ** 2]), rtol=1e-4)


# ----------------------------------------------------------------------- URDF: cartpole
@pytest.fixture(scope="module")
def cartpole():
    builder = physics.ModelBuilder(up_axis="z")
    return builder, builder.add_urdf(ROBOTS / "cartpole.urdf")


def test_cartpole_links_joints_and_frames(cartpole):
    builder, imported = cartpole
    assert list(imported.bodies) == ["world", "rail", "cart", "pole"]
    assert [JointType(t).name for t in builder.joint_type] == ["FIXED", "FIXED", "PRISMATIC",
                                                               "REVOLUTE"]
    assert builder.joint_dof_count == 2
    np.testing.assert_allclose(body_world(builder, imported.bodies["cart"])[:3], [0, 0, 1.5])
    np.testing.assert_allclose(body_world(builder, imported.bodies["pole"])[:3], [0, 0, 1.6])
    slider, hinge = imported.joints["rail_to_cart"], imported.joints["cart_to_pole"]
    np.testing.assert_allclose(joint_world_axis(builder, slider), [1, 0, 0])
    np.testing.assert_allclose(joint_world_axis(builder, hinge), [0, 1, 0])
    d = builder.joint_qd_start[slider]
    assert (builder.joint_limit_lower[d], builder.joint_limit_upper[d]) == (-3.5, 3.5)
    assert builder.joint_target_kd[d] == 0.25  # <dynamics damping>
    d = builder.joint_qd_start[hinge]  # continuous: no limits
    assert (builder.joint_limit_lower[d], builder.joint_limit_upper[d]) == (-math.inf, math.inf)


def test_cartpole_inertials_and_massless_links(cartpole):
    builder, imported = cartpole
    model = builder.finalize()
    body = imported.bodies
    assert model.body_mass[body["rail"]] == 0.0  # collision shapes, no inertial: no mass
    assert model.body_mass[body["cart"]] == pytest.approx(1.5)
    np.testing.assert_allclose(model.body_com[body["cart"]], [0.01, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(model.body_inertia[body["cart"]], np.diag([0.02, 0.05, 0.06]),
                               atol=1e-7)
    # rpy is about the fixed x, y, z axes in turn (scipy's extrinsic "xyz")
    R = Rotation.from_euler("xyz", [0.3, 0.2, 0.1]).as_matrix()
    np.testing.assert_allclose(model.body_inertia[body["pole"]],
                               R @ np.diag([0.02, 0.03, 0.005]) @ R.T, atol=1e-7)
    np.testing.assert_allclose(model.body_com[body["pole"]], [0.0, 0.0, 0.5], atol=1e-7)


def test_cartpole_collision_shapes(cartpole):
    builder, imported = cartpole
    types = [GeoType(builder.shape_type[s]).name for s in imported.shapes]
    assert types == ["CYLINDER", "BOX", "CAPSULE", "MESH"]
    rail, box, capsule, mesh = imported.shapes
    np.testing.assert_allclose(builder.shape_scale[box], [0.2, 0.15, 0.1])  # half the size
    np.testing.assert_allclose(builder.shape_scale[capsule][:2], [0.02, 0.5])
    np.testing.assert_allclose(builder.shape_scale[rail][:2], [0.02, 4.0])
    # the rail's cylinder turned onto x by rpy="0 pi/2 0"; shapes keep their axis on y
    np.testing.assert_allclose(np.abs(rotate(builder.shape_transform[rail][3:], [0, 1, 0])),
                               [1, 0, 0], atol=1e-9)
    source = builder.shape_source[mesh]  # package://cartpole/meshes/cube.obj, scaled
    assert source.volume == pytest.approx(0.1 * 0.2 * 0.1, rel=1e-9)
    assert all(builder.shape_density[s] == 0.0 for s in imported.shapes)


def test_cartpole_floating_and_visuals():
    builder = physics.ModelBuilder()
    imported = builder.add_urdf(ROBOTS / "cartpole.urdf", floating=True, parse_visuals=True)
    assert JointType(builder.joint_type[0]) == JointType.FREE
    assert len(imported.shapes) == 5
    visual = [s for s in imported.shapes if not builder.shape_shape_collision[s]]
    assert len(visual) == 1 and GeoType(builder.shape_type[visual[0]]) == GeoType.BOX


PENDULUM_URDF = """<robot name="pendulum">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="0 0 -0.6" rpy="0.4 -0.3 0.2"/><mass value="0.7"/>
      <inertia ixx="0.03" iyy="0.05" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="pivot" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 2.0"/><axis xyz="0 1 0"/></joint>
</robot>"""


def test_urdf_pendulum_period_under_featherstone():
    """Small swings of the imported pendulum: T = 2 pi sqrt(I_pivot / (m g d)), I_pivot the
    file's rotated inertia about the hinge plus m d^2."""
    builder = physics.ModelBuilder(up_axis="z", gravity=-9.81)
    builder.add_urdf(PENDULUM_URDF)
    model = builder.finalize()
    R = Rotation.from_euler("xyz", [0.4, -0.3, 0.2]).as_matrix()
    m, d = 0.7, 0.6
    I_pivot = (R @ np.diag([0.03, 0.05, 0.02]) @ R.T)[1, 1] + m * d * d
    period = 2.0 * math.pi * math.sqrt(I_pivot / (m * 9.81 * d))
    solver = physics.SolverFeatherstone(model, angular_damping=0.0)
    state_0, state_1 = model.state(), model.state()
    q = np.array(state_0.joint_q)
    q[builder.joint_q_start[1]] = 0.05
    state_0.joint_q[:] = q
    physics.eval_fk(model, state_0.joint_q, state_0.joint_qd, state_0)
    dt, angles = 1.0e-3, []
    for _ in range(int(2.5 * period / dt)):
        solver.step(state_0, state_1, None, None, dt)
        state_0, state_1 = state_1, state_0
        angles.append(float(state_0.joint_q[builder.joint_q_start[1]]))
    angles = np.array(angles)
    crossings = np.flatnonzero((angles[:-1] > 0) & (angles[1:] <= 0))
    measured = (crossings[1] - crossings[0]) * dt
    assert measured == pytest.approx(period, rel=2e-3)
    assert np.abs(angles).max() == pytest.approx(0.05, rel=1e-2)


# --------------------------------------------------------------------------- bad files
BAD_MJCF = [
    ("<robot/>", "has a <robot> root; expected <mujoco>"),
    ("<mujoco><worldbody>", "is not well-formed XML"),
    ("<mujoco/>", "has no <worldbody>"),
    ('<mujoco><worldbody><body><geom class="nope"/></body></worldbody></mujoco>',
     "uses class 'nope', which no <default> defines"),
    ('<mujoco><worldbody><body><joint type="spiral"/></body></worldbody></mujoco>',
     "has type 'spiral'"),
    ('<mujoco><worldbody><body><geom type="hfield"/></body></worldbody></mujoco>',
     "has type 'hfield'"),
    ('<mujoco><worldbody><body pos="1 two 3"/></worldbody></mujoco>',
     "pos='1 two 3' is not a list of numbers"),
    ('<mujoco><worldbody><body pos="1 2"/></worldbody></mujoco>', "needs 3 numbers, got 2"),
    ('<mujoco><worldbody><body><inertial mass="-1" diaginertia="1 1 1"/></body></worldbody>'
     '</mujoco>', "has a negative mass"),
    ('<mujoco><worldbody><body><joint limited="true"/></body></worldbody></mujoco>',
     "is limited but has no range"),
    ('<mujoco><worldbody><body><joint range="1 -1"/></body></worldbody></mujoco>',
     "is reversed"),
    ('<mujoco><worldbody><body><geom type="capsule" size="0.1" fromto="0 0 0 0 0 0"/></body>'
     '</worldbody></mujoco>', "fromto has equal ends"),
    ('<mujoco><worldbody><body><geom type="sphere" size="0"/></body></worldbody></mujoco>',
     "needs a positive size"),
    ('<mujoco><worldbody><body><geom type="mesh" mesh="m"/></body></worldbody></mujoco>',
     "names mesh 'm', which no <asset><mesh>"),
    ('<mujoco><asset><mesh name="m" file="missing.stl"/></asset><worldbody><body>'
     '<geom type="mesh" mesh="m"/></body></worldbody></mujoco>', "mesh file 'missing.stl' not found"),
    ('<mujoco><worldbody><body><joint name="a"/></body></worldbody><actuator>'
     '<motor joint="ghost"/></actuator></mujoco>', "names joint 'ghost'"),
    ('<mujoco><worldbody><body><body><freejoint/></body></body></worldbody></mujoco>',
     "has a free joint but is not a child of <worldbody>"),
    ('<mujoco><worldbody><body><joint axis="1 0 0"/><joint axis="1 1 0"/></body></worldbody>'
     '</mujoco>', "make no D6 joint: add_joint_d6: angular_axes must be orthogonal"),
    ('<mujoco><compiler angle="grad"/><worldbody/></mujoco>', "expected degree or radian"),
    ('<mujoco><worldbody><body zaxis="0 0 0"/></worldbody></mujoco>', "zaxis='0 0 0' is zero"),
    ('<mujoco><worldbody><body xyaxes="1 0 0 2 0 0"/></worldbody></mujoco>',
     "are not two independent directions"),
]


@pytest.mark.parametrize("text, message", BAD_MJCF, ids=[m for _, m in BAD_MJCF])
def test_bad_mjcf_is_named_and_leaves_the_builder_alone(text, message):
    builder = physics.ModelBuilder()
    builder.add_body()
    with pytest.raises(ValueError, match="^add_mjcf: .*" + __import__("re").escape(message)):
        builder.add_mjcf(text)
    assert builder.body_count == 1 and builder.joint_count == 0 and not builder.shape_type


BAD_URDF = [
    ('<robot><link name="a"/><link name="a"/></robot>', "link 'a' is defined twice"),
    ('<robot><link name="a"/><joint name="j" type="fixed"><parent link="a"/>'
     '<child link="b"/></joint></robot>', "joint 'j' names child link 'b'"),
    ('<robot><link name="a"/><link name="b"/><joint name="j"><parent link="a"/>'
     '<child link="b"/></joint></robot>', "joint 'j' has type None"),
    ('<robot><link name="a"/><link name="b"/><link name="c"/>'
     '<joint name="j" type="fixed"><parent link="a"/><child link="c"/></joint>'
     '<joint name="k" type="fixed"><parent link="b"/><child link="c"/></joint></robot>',
     "link 'c' is the child of two joints"),
    ('<robot><link name="a"/><link name="b"/>'
     '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'
     '<joint name="k" type="fixed"><parent link="b"/><child link="a"/></joint></robot>',
     "the joints form a cycle"),
    ('<robot><link name="a"><collision><geometry><box/></geometry></collision></link></robot>',
     "<box> of link 'a' needs a positive size"),
    ('<robot><link name="a"><collision><geometry><mesh filename="package://x/gone.stl"/>'
     '</geometry></collision></link></robot>', "mesh file 'package://x/gone.stl' not found"),
    ('<robot><link name="a"><inertial><mass value="1"/><inertia ixx="-1" iyy="1" izz="1"/>'
     '</inertial></link></robot>', "is not positive semi-definite"),
    ('<robot><link name="a"/><link name="b"/><joint name="j" type="revolute">'
     '<parent link="a"/><child link="b"/><limit lower="1" upper="0"/></joint></robot>',
     "has limits lower=1.0 > upper=0.0"),
]


@pytest.mark.parametrize("text, message", BAD_URDF, ids=[m for _, m in BAD_URDF])
def test_bad_urdf_is_named_and_leaves_the_builder_alone(text, message):
    builder = physics.ModelBuilder()
    with pytest.raises(ValueError, match="^add_urdf: .*" + __import__("re").escape(message)):
        builder.add_urdf(text)
    assert builder.body_count == 0 and builder.joint_count == 0


@pytest.mark.parametrize("call, kwargs, message", [
    ("add_mjcf", {"source": 3}, "source must be a path or an XML string, got int"),
    ("add_mjcf", {"source": "/no/such/file.xml"}, "is neither an existing file nor XML text"),
    ("add_mjcf", {"source": ANT, "cfg": "soft"}, "cfg must be a physics.ShapeConfig"),
    ("add_mjcf", {"source": ANT, "floating": "yes"}, "floating must be True, False or None"),
    ("add_mjcf", {"source": ANT, "up_axis": "w"}, "up_axis"),
    ("add_mjcf", {"source": ANT, "density": -1.0}, "density"),
    ("add_urdf", {"source": str(ROBOTS / "cartpole.urdf"), "floating": None},
     "floating must be True or False"),
    ("add_urdf", {"source": str(ROBOTS / "cartpole.urdf"), "xform": (1, 2)}, "xform"),
])
def test_bad_arguments_are_named(call, kwargs, message):
    with pytest.raises(ValueError, match=f"^{call}: .*{__import__('re').escape(message)}"):
        getattr(physics.ModelBuilder(), call)(**kwargs)


def test_imports_append_after_what_the_builder_has():
    builder = physics.ModelBuilder()
    builder.add_body()
    builder.add_joint_free(0)
    first = builder.add_mjcf(ANT)
    second = builder.add_mjcf(ANT)
    assert first.bodies["torso"] == 1 and second.bodies["torso"] == 10
    assert second.actuators[0].dof == first.actuators[0].dof + 14
    assert builder.joint_qd_start[second.actuators[0].joint] == second.actuators[0].dof
    assert builder.body_label[second.bodies["front_left_shin"]] == "front_left_shin"


# ------------------------------------------------------------------------- dynamics
def test_imported_ant_stays_finite_and_upright_under_xpbd():
    """The ant demo: the MJCF ant dropped from 0.75 m, its hinges driven by a trotting
    gait, stands on its legs after two seconds."""
    from numba_sim.examples import ant

    example = ant.Example()
    lowest = math.inf
    for _ in range(120):
        example.step()
        torso = example.torso()
        assert np.all(np.isfinite(torso))
        lowest = min(lowest, torso[2])
    up = Rotation.from_quat(torso[3:]).apply([0.0, 0.0, 1.0])
    assert up[2] > 0.9  # upright-ish
    assert torso[2] > 0.3  # on its legs (the torso's radius is 0.25)
    assert lowest > 0.26
    body_q = np.asarray(example.states[0].body_q)
    assert body_q[:, 2].min() > 0.0


BALL_PENDULUM = """<mujoco><worldbody>
  <body name="bob" pos="0 0 2" euler="4 0 0">
    <joint name="ball" type="ball" range="0 30" limited="false"/>
    <geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05" density="800"/>
  </body>
  <body name="free" pos="3 0 5"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("solver_name, tolerance", [("SolverFeatherstone", 2e-3),
                                                     ("SolverXPBD", 5e-3)])
def test_mjcf_ball_joint_pendulum_and_free_body(solver_name, tolerance):
    """The MJCF ball joint and free joint newton's users report broken: a capsule on a ball
    joint, tilted 4 degrees, swings with the physical pendulum's period; a free box falls
    as g t^2 / 2."""
    builder = physics.ModelBuilder(up_axis="z", gravity=-9.81)
    imported = builder.add_mjcf(BALL_PENDULUM)
    model = builder.finalize()
    r, length, density = 0.05, 1.0, 800.0
    mass = density * capsule_volume(r, length)
    across = capsule_inertia(r, length, density)[1]
    d = 0.5 * length
    period = 2.0 * math.pi * math.sqrt((across + mass * d * d) / (mass * 9.81 * d))
    solver = getattr(physics, solver_name)(model, angular_damping=0.0) \
        if solver_name == "SolverFeatherstone" else physics.SolverXPBD(model, iterations=4)
    state_0, state_1 = model.state(), model.state()
    dt, ys, t = 1.0e-3, [], 0.0
    bob, box = imported.bodies["bob"], imported.bodies["free"]
    for _ in range(int(1.6 * period / dt)):
        solver.step(state_0, state_1, None, None, dt)
        state_0, state_1 = state_1, state_0
        t += dt
        q = np.asarray(state_0.body_q[bob], dtype=np.float64)
        ys.append(rotate(q[3:], [0.0, 0.0, -d])[1] + q[1])  # the centre of mass across
    ys = np.array(ys)
    crossings = np.flatnonzero((ys[:-1] < 0) != (ys[1:] < 0))
    assert len(crossings) >= 3
    measured = 2.0 * (crossings[2] - crossings[1]) * dt
    assert measured == pytest.approx(period, rel=tolerance)
    z = float(state_0.body_q[box][2])
    assert z == pytest.approx(5.0 - 0.5 * 9.81 * t * t, abs=0.02 * 9.81 * t * t)


def test_mjcf_ignore_names_leaves_out_geoms_bodies_and_their_actuators():
    """xform moves the whole file, its floor too: a lifted robot drops its floor by name
    (newton's examples do); a left-out body takes its subtree and its actuators along."""
    builder = physics.ModelBuilder()
    imported = builder.add_mjcf(ROBOTS / "humanoid.xml", xform=((0.0, 0.0, 1.0), None),
                                ignore_names=["floor", "right_th.*"])
    assert GeoType.PLANE not in builder.shape_type
    assert "right_thigh" not in imported.bodies and "right_shin" not in imported.bodies
    assert "pelvis" in imported.bodies and builder.body_count == 6
    assert [a.name for a in imported.actuators] == ["abdomen_y", "right_elbow"]
    kept = physics.ModelBuilder()
    kept.add_mjcf(ROBOTS / "humanoid.xml", xform=((0.0, 0.0, 1.0), None))
    floor = kept.shape_type.index(GeoType.PLANE)
    assert kept.shape_transform[floor][2] == 1.0  # moved with the file
    with pytest.raises(ValueError, match="add_mjcf: ignore_names must be names or regular"):
        physics.ModelBuilder().add_mjcf(ANT, ignore_names=["("])
