"""physics.viewer: the frame protocol, a time-sampled USD file read back with pxr.Usd
(its samples equal the logged states), and the pictures of ViewerImages."""

import math

import numpy as np
import pytest

from numba_sim import physics
from numba_sim.physics.viewer import ViewerImages, ViewerNull, ViewerUSD

FRAMES = 10


@pytest.fixture(scope="module")
def scene():
    """A body of every primitive and a mesh, a static box, loose particles and a cloth
    (y up), stepped by XPBD; the states logged for FRAMES frames."""
    builder = physics.ModelBuilder(up_axis="y")
    shapes = {}
    for k, (name, add) in enumerate([
            ("sphere", lambda b: builder.add_shape_sphere(b, radius=0.2)),
            ("box", lambda b: builder.add_shape_box(b, hx=0.1, hy=0.2, hz=0.3)),
            ("capsule", lambda b: builder.add_shape_capsule(b, radius=0.1, half_height=0.2)),
            ("cylinder", lambda b: builder.add_shape_cylinder(b, radius=0.1, half_height=0.2)),
            ("cone", lambda b: builder.add_shape_cone(b, radius=0.1, half_height=0.2)),
            ("mesh", lambda b: builder.add_shape_mesh(b, mesh=physics.Mesh(
                CUBE_VERTICES, CUBE_TRIANGLES), scale=(0.2, 0.2, 0.2)))]):
        body = builder.add_body(xform=((k * 0.6, 1.0 + 0.1 * k, 0.0), None), label=name)
        builder.add_joint_free(body)
        shapes[name] = add(body)
    builder.body_qd[0] = np.array([1.0, 0.0, 0.0, 0.0, 3.0, 0.0])
    shapes["static"] = builder.add_shape_box(-1, xform=((0.0, -0.5, 2.0), None), hx=1.0,
                                             hy=0.5, hz=1.0)
    builder.add_ground_plane()
    for k in range(3):
        builder.add_particle((k * 0.3, 2.0, 1.0), (0.0, 0.0, 0.0), 1.0, radius=0.05)
    builder.add_cloth_grid(pos=(0.0, 2.5, -1.0), rot=None, vel=(0.0, 0.0, 0.0), dim_x=3,
                           dim_y=2, cell_x=0.2, cell_y=0.2, mass=0.1, add_springs=True,
                           spring_ke=1.0e3, spring_kd=0.0)
    model = builder.finalize()
    solver = physics.SolverXPBD(model, iterations=2)
    state_0, state_1 = model.state(), model.state()
    logged = []
    for _ in range(FRAMES):
        logged.append((np.array(state_0.body_q), np.array(state_0.particle_q)))
        for _ in range(4):
            solver.step(state_0, state_1, None, None, 1.0 / 240.0)
            state_0, state_1 = state_1, state_0
    return model, shapes, logged


CUBE_VERTICES = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0)
                          for z in (-1.0, 1.0)]) * 0.5
CUBE_TRIANGLES = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                           [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])


def replay(viewer, model, logged):
    """Log the recorded states through *viewer*, as a frame loop does."""
    state = model.state()
    viewer.set_model(model)
    for k, (body_q, particle_q) in enumerate(logged):
        state.body_q[:] = body_q
        state.particle_q[:] = particle_q
        viewer.begin_frame(k / 60.0)
        viewer.log_state(state)
        viewer.end_frame()
    viewer.close()


def test_usd_has_one_sample_per_frame_equal_to_the_states(scene, tmp_path):
    Usd = pytest.importorskip("pxr.Usd")
    from pxr import UsdGeom

    model, shapes, logged = scene
    path = tmp_path / "scene.usda"
    replay(ViewerUSD(path, fps=60), model, logged)
    stage = Usd.Stage.Open(str(path))
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (0, FRAMES - 1)
    assert stage.GetTimeCodesPerSecond() == 60 and UsdGeom.GetStageUpAxis(stage) == "Y"
    assert stage.GetDefaultPrim().GetPath() == "/root"
    for b, name in enumerate(model.body_label):
        prim = stage.GetPrimAtPath(f"/root/bodies/{name}")
        assert prim.IsValid() and prim.GetTypeName() == "Xform"
        xform = UsdGeom.Xformable(prim)
        translate, orient = xform.GetOrderedXformOps()
        assert translate.GetTimeSamples() == list(range(FRAMES))
        for frame, (body_q, _) in enumerate(logged):
            np.testing.assert_allclose(np.array(translate.Get(frame)), body_q[b, :3],
                                       rtol=1e-6, atol=1e-7)
            q = orient.Get(frame)
            np.testing.assert_allclose([*q.GetImaginary(), q.GetReal()], body_q[b, 3:],
                                       atol=1e-6)
    points = UsdGeom.Points(stage.GetPrimAtPath("/root/particles"))
    assert points.GetPointsAttr().GetTimeSamples() == list(range(FRAMES))
    for frame, (_, particle_q) in enumerate(logged):
        np.testing.assert_allclose(np.array(points.GetPointsAttr().Get(frame)), particle_q,
                                   atol=1e-6)
    np.testing.assert_allclose(np.array(points.GetWidthsAttr().Get()),
                               2.0 * np.asarray(model.particle_radius))
    surface = UsdGeom.Mesh(stage.GetPrimAtPath("/root/surface"))
    assert len(surface.GetFaceVertexCountsAttr().Get()) == model.tri_count
    assert surface.GetPointsAttr().GetTimeSamples() == list(range(FRAMES))


def test_usd_shapes_are_primitives_with_their_sizes(scene, tmp_path):
    Usd = pytest.importorskip("pxr.Usd")
    from pxr import UsdGeom

    model, shapes, logged = scene
    path = tmp_path / "shapes.usd"
    replay(ViewerUSD(path), model, logged[:1])
    stage = Usd.Stage.Open(str(path))

    def prim(name, body=None):
        return stage.GetPrimAtPath(f"/root/{'bodies/' + (body or name)}/shape_{shapes[name]}")

    assert prim("sphere").GetTypeName() == "Sphere"
    assert UsdGeom.Sphere(prim("sphere")).GetRadiusAttr().Get() == pytest.approx(0.2)
    box = prim("box")
    assert box.GetTypeName() == "Cube" and UsdGeom.Cube(box).GetSizeAttr().Get() == 2.0
    scale = [op for op in UsdGeom.Xformable(box).GetOrderedXformOps()
             if op.GetOpType() == UsdGeom.XformOp.TypeScale][0]
    np.testing.assert_allclose(np.array(scale.Get()), [0.1, 0.2, 0.3], rtol=1e-6)
    for name, kind in (("capsule", UsdGeom.Capsule), ("cylinder", UsdGeom.Cylinder),
                       ("cone", UsdGeom.Cone)):
        p = kind(prim(name))
        assert p.GetRadiusAttr().Get() == pytest.approx(0.1)
        assert p.GetHeightAttr().Get() == pytest.approx(0.4)
        assert p.GetAxisAttr().Get() == "Y"
    mesh = UsdGeom.Mesh(prim("mesh"))
    np.testing.assert_allclose(np.array(mesh.GetPointsAttr().Get()), CUBE_VERTICES * 0.2,
                               atol=1e-7)
    assert len(mesh.GetFaceVertexCountsAttr().Get()) == 12
    static = stage.GetPrimAtPath(f"/root/static/shape_{shapes['static']}")
    assert static.GetTypeName() == "Cube"
    assert np.array(UsdGeom.Xformable(static).GetOrderedXformOps()[0].Get()) == \
        pytest.approx([0.0, -0.5, 2.0])


def test_images_gif_png_and_one_png_per_frame(scene, tmp_path):
    from PIL import Image

    model, shapes, logged = scene
    gif = ViewerImages(tmp_path / "scene.gif", title="scene")
    replay(gif, model, logged)
    with Image.open(gif.written[0]) as image:
        assert image.n_frames == FRAMES
        image.seek(0)
        first = np.asarray(image.convert("RGB")).astype(int)
        image.seek(FRAMES - 1)
        last = np.asarray(image.convert("RGB")).astype(int)
    assert (np.abs(first - last).sum(axis=2) > 0).mean() > 0.001  # the scene moved
    png = ViewerImages(tmp_path / "last.png")
    replay(png, model, logged)
    assert png.written == [str(tmp_path / "last.png")]
    with Image.open(png.written[0]) as image:
        picture = np.asarray(image.convert("RGB"))
    # the bodies are drawn: many pixels are neither background nor ground
    colourful = (picture.max(axis=2).astype(int) - picture.min(axis=2)) > 40
    assert colourful.mean() > 0.01
    frames = ViewerImages(tmp_path / "frame_{frame:03d}.png")
    replay(frames, model, logged[:3])
    assert [p.rsplit("/", 1)[1] for p in frames.written] == ["frame_000.png", "frame_001.png",
                                                            "frame_002.png"]


def test_null_viewer_counts_frames_and_checks_the_call_order(scene):
    model, _, logged = scene
    viewer = ViewerNull(num_frames=2)
    state = model.state()
    with pytest.raises(RuntimeError, match="ViewerNull.begin_frame: call set_model"):
        viewer.begin_frame(0.0)
    with pytest.raises(ValueError, match="ViewerNull.set_model: model must be a physics.Model"):
        viewer.set_model("model")
    viewer.set_model(model)
    with pytest.raises(RuntimeError, match="ViewerNull.log_state: call begin_frame"):
        viewer.log_state(state)
    with pytest.raises(RuntimeError, match="ViewerNull.end_frame: no frame has begun"):
        viewer.end_frame()
    while viewer.is_running():
        viewer.begin_frame(0.1 * viewer.frame_count)
        with pytest.raises(RuntimeError, match="has not ended"):
            viewer.begin_frame(1.0)
        with pytest.raises(ValueError, match="state must be a physics.State"):
            viewer.log_state(model)
        viewer.log_state(state)
        viewer.end_frame()
    assert viewer.frame_count == 2 and viewer.time == pytest.approx(0.1)
    viewer.close()
    with pytest.raises(RuntimeError, match="the viewer is closed"):
        viewer.set_model(model)
    with pytest.raises(ValueError, match="time must be finite"):
        v = ViewerNull()
        v.set_model(model)
        v.begin_frame(math.nan)


@pytest.mark.parametrize("make, message", [
    (lambda d: ViewerUSD(d / "x.png"), "ViewerUSD: path must end in .usd, .usda or .usdc"),
    (lambda d: ViewerUSD(d / "no" / "x.usd"), "ViewerUSD: cannot write"),
    (lambda d: ViewerUSD(d / "x.usd", fps=0), "ViewerUSD: fps must be > 0"),
    (lambda d: ViewerImages(d / "x.jpg"), "ViewerImages: path must end in .png or .gif"),
    (lambda d: ViewerImages(d / "x_{frame}.gif"), "a {frame} pattern needs a .png path"),
    (lambda d: ViewerImages(d / "no" / "x.png"), "ViewerImages: cannot write"),
    (lambda d: ViewerNull(num_frames=0), "ViewerNull: num_frames must be a positive int"),
])
def test_bad_viewer_arguments_are_named(make, message, tmp_path):
    pytest.importorskip("pxr.Usd")
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        make(tmp_path)
