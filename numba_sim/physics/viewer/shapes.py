"""What the viewers draw of a model: each shape's surface as triangles in its own frame
(tessellated primitives; a mesh shape's own triangles), the bodies' shapes placed in the
world by ``body_q``, and the particles' surface (cloth triangles and the soft bodies'
outer faces).

Shapes are stored along their frame's y axis (builder.py): capsules, cylinders and cones
are tessellated that way."""

import math

import numpy as np

from numba_sim.physics.definitions import GeoType
from numba_sim.physics.import_common import rotation_matrix

SEGMENTS = 24  # around a round shape
RINGS = 12     # from pole to pole of a sphere


def _ring_grid(profile):
    """A surface of revolution about y: *profile* is a list of (radius, y) from bottom to
    top; a zero radius is a pole (one vertex).  Returns (vertices, triangles)."""
    vertices, rows = [], []
    for radius, y in profile:
        if radius <= 0.0:
            rows.append([len(vertices)])
            vertices.append((0.0, y, 0.0))
        else:
            row = []
            for k in range(SEGMENTS):
                a = 2.0 * math.pi * k / SEGMENTS
                row.append(len(vertices))
                vertices.append((radius * math.cos(a), y, -radius * math.sin(a)))
            rows.append(row)
    triangles = []
    for low, high in zip(rows, rows[1:]):
        for k in range(SEGMENTS):
            k1 = (k + 1) % SEGMENTS
            if len(low) == 1:
                triangles.append((low[0], high[k], high[k1]))
            elif len(high) == 1:
                triangles.append((low[k], high[0], low[k1]))
            else:
                triangles.append((low[k], high[k], high[k1]))
                triangles.append((low[k], high[k1], low[k1]))
    return np.array(vertices, dtype=np.float64), np.array(triangles, dtype=np.int64)


def _hemisphere_profile(radius, centre, upper):
    angles = np.linspace(0.0, 0.5 * math.pi, RINGS // 2 + 1)
    if upper:
        return [(radius * math.cos(a), centre + radius * math.sin(a)) for a in angles]
    return [(radius * math.cos(a), centre - radius * math.sin(a)) for a in angles[::-1]]


BOX_CORNERS = np.array([[(k & 1) * 2 - 1, (k >> 1 & 1) * 2 - 1, (k >> 2 & 1) * 2 - 1]
                        for k in range(8)], dtype=np.float64)
BOX_TRIANGLES = np.array([[0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4],
                          [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]])


def surface(geo, scale, source=None, plane_extent=10.0):
    """(vertices (n, 3), triangles (m, 3)) of a shape in its frame; a plane is a square of
    ``2 plane_extent`` when it is infinite (width and length 0)."""
    geo = GeoType(int(geo))
    r, h = float(scale[0]), float(scale[1])
    if geo == GeoType.SPHERE:
        return _ring_grid(_hemisphere_profile(r, 0.0, False) + _hemisphere_profile(r, 0.0, True)[1:])
    if geo == GeoType.CAPSULE:
        return _ring_grid(_hemisphere_profile(r, -h, False) + _hemisphere_profile(r, h, True))
    if geo == GeoType.CYLINDER:
        return _ring_grid([(0.0, -h), (r, -h), (r, h), (0.0, h)])
    if geo == GeoType.CONE:
        return _ring_grid([(0.0, -h), (r, -h), (0.0, h)])
    if geo == GeoType.BOX:
        return BOX_CORNERS * np.asarray(scale, dtype=np.float64), BOX_TRIANGLES.copy()
    if geo == GeoType.MESH:
        return (np.asarray(source.vertices, dtype=np.float64) * np.asarray(scale),
                np.asarray(source.indices, dtype=np.int64).reshape(-1, 3))
    if geo == GeoType.PLANE:
        wx = 0.5 * float(scale[0]) if scale[0] > 0.0 else plane_extent
        wy = 0.5 * float(scale[1]) if scale[1] > 0.0 else plane_extent
        return (np.array([[-wx, -wy, 0.0], [wx, -wy, 0.0], [wx, wy, 0.0], [-wx, wy, 0.0]]),
                np.array([[0, 1, 2], [0, 2, 3]]))
    raise ValueError(f"no surface for shape type {geo!r}")


def boundary_faces(tets):
    """The faces of the tetrahedra *tets* ((n, 4)) that belong to one tetrahedron only."""
    tets = np.asarray(tets, dtype=np.int64).reshape(-1, 4)
    faces = np.concatenate([tets[:, [0, 2, 1]], tets[:, [0, 1, 3]], tets[:, [0, 3, 2]],
                            tets[:, [1, 2, 3]]])
    _, index, counts = np.unique(np.sort(faces, axis=1), axis=0, return_index=True,
                                 return_counts=True)
    return faces[np.sort(index[counts == 1])]


def particle_surface(model, to_numpy):
    """The triangles over the particles to draw: the cloth's and the soft bodies' outer
    faces, as (m, 3) particle indices (None when there are none)."""
    parts = []
    if model.tri_count:
        parts.append(np.asarray(to_numpy(model.tri_indices), dtype=np.int64))
    if model.tet_count:
        parts.append(boundary_faces(to_numpy(model.tet_indices)))
    return np.concatenate(parts) if parts else None


class BodyGeometry:
    """Every body shape's surface in its body's frame, concatenated, so that one call
    places them all in the world for a state's ``body_q``."""

    def __init__(self, model, to_numpy, include_static=True):
        types = np.asarray(to_numpy(model.shape_type))
        bodies = np.asarray(to_numpy(model.shape_body))
        transforms = np.asarray(to_numpy(model.shape_transform), dtype=np.float64)
        scales = np.asarray(to_numpy(model.shape_scale), dtype=np.float64)
        sources = getattr(model, "shape_source", [None] * len(types))
        vertices, triangles, owner = [], [], []
        count = 0
        for s, geo in enumerate(types):
            if geo == GeoType.PLANE or (bodies[s] < 0 and not include_static):
                continue  # the pictures draw their own ground
            v, t = surface(geo, scales[s], sources[s])
            rot = rotation_matrix(transforms[s, 3:])
            vertices.append(v @ rot.T + transforms[s, :3])
            triangles.append(t + count)
            owner.append(np.full(len(v), bodies[s]))
            count += len(v)
        self.local = np.concatenate(vertices) if vertices else np.zeros((0, 3))
        self.triangles = np.concatenate(triangles) if triangles else np.zeros((0, 3), np.int64)
        self.owner = np.concatenate(owner) if owner else np.zeros(0, np.int64)

    def world(self, body_q):
        """The vertices in the world for the bodies' transforms *body_q* ((b, 7))."""
        out = self.local.copy()
        moving = self.owner >= 0
        if moving.any():
            q = np.asarray(body_q, dtype=np.float64)[self.owner[moving]]
            p, r = q[:, :3], q[:, 3:]
            v = self.local[moving]
            t = 2.0 * np.cross(r[:, :3], v)
            out[moving] = p + v + r[:, 3:] * t + np.cross(r[:, :3], t)
        return out
