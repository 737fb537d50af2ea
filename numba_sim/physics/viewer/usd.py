"""``ViewerUSD``: a time-sampled USD stage of a simulation (``usd-core``), time code =
frame index, ``timeCodesPerSecond`` = fps; it opens in usdview, Omniverse, Blender and
Houdini.

Layout under ``/root`` (the default prim): ``bodies/<name>`` an ``Xform`` per body with
sampled ``translate`` and ``orient``, holding its shapes as USD primitives (``Sphere``,
``Cube`` scaled to the box, ``Capsule``, ``Cylinder``, ``Cone`` along y, a ``Mesh`` for a
mesh shape) with their fixed offsets; ``static/shape_<k>`` the world's shapes (planes as
square meshes); ``particles`` a ``Points`` prim with sampled ``points`` and the radii as
``widths``; ``surface`` a ``Mesh`` over the particles (cloth triangles and soft bodies'
outer faces) with sampled ``points``."""

import os
import re

import numpy as np

from numba_sim.physics.definitions import GeoType
from numba_sim.physics.viewer.base import Viewer, host
from numba_sim.physics.viewer.shapes import particle_surface, surface


def _pxr():
    try:
        from pxr import Gf, Sdf, Usd, UsdGeom, Vt
    except ImportError:
        raise ImportError("ViewerUSD needs usd-core: pip install 'numba-sim[physics]'"
                          ) from None
    return Gf, Sdf, Usd, UsdGeom, Vt


def _prim_name(label, fallback, taken):
    """A valid, unique USD prim name for *label*."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", label) if label else fallback
    if not name or name[0].isdigit():
        name = f"_{name}"
    unique, k = name, 1
    while unique in taken:
        unique, k = f"{name}_{k}", k + 1
    taken.add(unique)
    return unique


class ViewerUSD(Viewer):
    """Write the frames to the USD file *path* (``.usd``, ``.usda`` or ``.usdc``) at *fps*
    frames per second; the file is saved by ``close()``."""

    def __init__(self, path, fps=60, num_frames=None):
        super().__init__(num_frames)
        path = os.fspath(path)
        if os.path.splitext(path)[1].lower() not in (".usd", ".usda", ".usdc"):
            raise ValueError(f"ViewerUSD: path must end in .usd, .usda or .usdc, got {path!r}")
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise ValueError(f"ViewerUSD: cannot write {path!r}: no directory {directory!r}")
        fps = float(fps)
        if not fps > 0.0:
            raise ValueError(f"ViewerUSD: fps must be > 0, got {fps!r}")
        self.path, self.fps = path, fps
        self._Gf, self._Sdf, Usd, self._UsdGeom, self._Vt = _pxr()
        self.stage = Usd.Stage.CreateNew(path)
        self.stage.SetTimeCodesPerSecond(fps)
        self.stage.SetFramesPerSecond(fps)
        self.stage.SetStartTimeCode(0)
        root = self._UsdGeom.Xform.Define(self.stage, "/root")
        self.stage.SetDefaultPrim(root.GetPrim())
        self._UsdGeom.SetStageMetersPerUnit(self.stage, 1.0)
        self._body_ops = []
        self._points = self._surface = None

    # ------------------------------------------------------------------ the scene
    def _model_set(self, model):
        UsdGeom = self._UsdGeom
        # USD knows y-up and z-up stages only
        UsdGeom.SetStageUpAxis(self.stage, "Y" if model.up_axis == 1 else "Z")
        types, bodies = host(model.shape_type), host(model.shape_body)
        transforms, scales = host(model.shape_transform), host(model.shape_scale)
        sources = getattr(model, "shape_source", [None] * len(types))
        labels = getattr(model, "body_label", None) or [None] * model.body_count
        taken = set()
        self._body_ops = []
        body_paths = []
        UsdGeom.Scope.Define(self.stage, "/root/bodies")
        for b in range(model.body_count):
            path = f"/root/bodies/{_prim_name(labels[b], f'body_{b}', taken)}"
            xform = UsdGeom.Xform.Define(self.stage, path)
            self._body_ops.append((xform.AddTranslateOp(), xform.AddOrientOp()))
            body_paths.append(path)
        UsdGeom.Scope.Define(self.stage, "/root/static")
        for s, geo in enumerate(types):
            parent = body_paths[bodies[s]] if bodies[s] >= 0 else "/root/static"
            self._shape(f"{parent}/shape_{s}", geo, scales[s], sources[s], transforms[s])
        if model.particle_count:
            self._points = UsdGeom.Points.Define(self.stage, "/root/particles")
            self._points.CreateWidthsAttr(self._Vt.FloatArray.FromNumpy(
                (2.0 * host(model.particle_radius)).astype(np.float32)))
            triangles = particle_surface(model, host)
            if triangles is not None:
                self._surface = UsdGeom.Mesh.Define(self.stage, "/root/surface")
                self._surface.CreateFaceVertexCountsAttr(
                    self._Vt.IntArray.FromNumpy(np.full(len(triangles), 3, np.int32)))
                self._surface.CreateFaceVertexIndicesAttr(
                    self._Vt.IntArray.FromNumpy(triangles.astype(np.int32).ravel()))
                self._surface.CreateDoubleSidedAttr(True)

    def _shape(self, path, geo, scale, source, transform):
        UsdGeom, Gf = self._UsdGeom, self._Gf
        geo = GeoType(int(geo))
        r, h = float(scale[0]), float(scale[1])
        if geo == GeoType.SPHERE:
            prim = UsdGeom.Sphere.Define(self.stage, path)
            prim.CreateRadiusAttr(r)
        elif geo == GeoType.BOX:
            prim = UsdGeom.Cube.Define(self.stage, path)
            prim.CreateSizeAttr(2.0)
        elif geo in (GeoType.CAPSULE, GeoType.CYLINDER, GeoType.CONE):
            kind = {GeoType.CAPSULE: UsdGeom.Capsule, GeoType.CYLINDER: UsdGeom.Cylinder,
                    GeoType.CONE: UsdGeom.Cone}[geo]
            prim = kind.Define(self.stage, path)
            prim.CreateRadiusAttr(r)
            prim.CreateHeightAttr(2.0 * h)
            prim.CreateAxisAttr("Y")
        else:  # meshes and planes
            vertices, triangles = surface(geo, scale, source)
            prim = UsdGeom.Mesh.Define(self.stage, path)
            prim.CreatePointsAttr(self._Vt.Vec3fArray.FromNumpy(vertices.astype(np.float32)))
            prim.CreateFaceVertexCountsAttr(
                self._Vt.IntArray.FromNumpy(np.full(len(triangles), 3, np.int32)))
            prim.CreateFaceVertexIndicesAttr(
                self._Vt.IntArray.FromNumpy(triangles.astype(np.int32).ravel()))
            prim.CreateDoubleSidedAttr(True)
        prim.AddTranslateOp().Set(Gf.Vec3d(*map(float, transform[:3])))
        x, y, z, w = map(float, transform[3:])
        prim.AddOrientOp().Set(Gf.Quatf(w, x, y, z))
        if geo == GeoType.BOX:
            prim.AddScaleOp().Set(Gf.Vec3f(*map(float, scale)))

    # ------------------------------------------------------------------- samples
    def _log_state(self, state):
        Gf, Vt = self._Gf, self._Vt
        t = float(self.frame_count)
        if self._body_ops:
            body_q = host(state.body_q).astype(np.float64)
            for (translate, orient), q in zip(self._body_ops, body_q):
                translate.Set(Gf.Vec3d(q[0], q[1], q[2]), t)
                orient.Set(Gf.Quatf(float(q[6]), float(q[3]), float(q[4]), float(q[5])), t)
        if self._points is not None:
            points = Vt.Vec3fArray.FromNumpy(host(state.particle_q).astype(np.float32))
            self._points.GetPointsAttr().Set(points, t)
            if self._surface is not None:
                self._surface.GetPointsAttr().Set(points, t)

    def _frame_ended(self):
        self.stage.SetEndTimeCode(float(self.frame_count))

    def _finish(self):
        self.stage.GetRootLayer().Save()
