"""``physics.Mesh``: a triangle mesh as a collision shape (``builder.add_shape_mesh``).

The builder keeps the host vertices and triangles; ``finalize`` builds, per mesh and
scale, a numba_sim ``Mesh`` (``numba_sim.spatial``) of the scaled vertices on the
model's device, which the contact kernels query (``mesh_query_point``).

Mass properties come from the closed surface by signed tetrahedra (each triangle with
the origin; Mirtich / Eberly's covariance form): a triangle (a, b, c) adds the
tetrahedron (0, a, b, c) of signed volume ``det[a b c] / 6`` and covariance
``det[a b c] V C0 V^T`` (``V = [a b c]``, ``C0`` the canonical tetrahedron's,
``(1 + delta_ij) / 120``), so a closed mesh wound counter-clockwise seen from outside
(Warp's convention) gives its solid's volume, centroid and inertia.
"""

import numpy as np

import numba_sim as sim
from numba_sim.physics import checks

_CANONICAL = (np.ones((3, 3)) + np.eye(3)) / 120.0


def mesh_mass_properties(vertices, triangles):
    """(volume, centroid, inertia about the centroid) of the solid a closed mesh
    bounds, for density 1; the volume is negative when the triangles are wound
    clockwise seen from outside."""
    a = vertices[triangles[:, 0]]
    b = vertices[triangles[:, 1]]
    c = vertices[triangles[:, 2]]
    det = np.einsum("ij,ij->i", a, np.cross(b, c))
    volume = det.sum() / 6.0
    if abs(volume) <= 1e-300:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    centroid = (det[:, None] * (a + b + c)).sum(axis=0) / 24.0 / volume
    V = np.stack([a, b, c], axis=2)                         # columns a, b, c
    covariance = np.einsum("t,tik,kl,tjl->ij", det, V, _CANONICAL, V)
    covariance -= volume * np.outer(centroid, centroid)     # about the centroid
    inertia = np.trace(covariance) * np.eye(3) - covariance
    return volume, centroid, 0.5 * (inertia + inertia.T)


class Mesh:
    """A triangle mesh shape: ``vertices`` ((n, 3)) and ``indices`` ((m, 3) or flat 3 m,
    into the vertices); closed and wound counter-clockwise seen from outside for a body's
    mass and for inside/outside (an open surface, such as static terrain, still gives
    closest points) (warp.sim's ``sim.Mesh``; ``is_solid=False`` is not supported: a mesh
    on a body is solid).

    ``volume``, ``com`` and ``inertia`` (about ``com``) are those of the solid for
    density 1 (warp.sim's ``mass``, ``com``, ``I``); ``add_shape_mesh`` scales them.
    """

    def __init__(self, vertices, indices, compute_inertia=True, is_solid=True):
        call = "Mesh"
        self.vertices = checks.points(call, "vertices", vertices)
        if len(self.vertices) < 3:
            raise ValueError(f"{call}: vertices must hold at least 3 points, got "
                             f"{len(self.vertices)}")
        self.indices = checks.indices(call, "indices", indices, 3, len(self.vertices))
        if len(self.indices) < 1:
            raise ValueError(f"{call}: indices must hold at least one triangle")
        if not is_solid:
            raise ValueError(f"{call}: is_solid=False (a thin shell) is not supported; "
                             "mesh shapes are solid")
        self.is_solid = True
        self.compute_inertia = bool(compute_inertia)
        self.volume, self.com, self.inertia = mesh_mass_properties(self.vertices, self.indices)

    # warp.sim's names (density 1)
    mass = property(lambda self: self.volume)
    I = property(lambda self: self.inertia)

    def mass_properties(self, scale):
        """(volume, centroid, inertia about it for density 1) of the mesh scaled by
        *scale* (per axis, in the mesh frame)."""
        return mesh_mass_properties(self.vertices * np.asarray(scale, dtype=np.float64),
                                    self.indices)

    def __repr__(self):
        return f"physics.Mesh({len(self.vertices)} vertices, {len(self.indices)} triangles)"


def mesh_model_arrays(model, builder, put):
    """The mesh shapes' arrays of *model*: ``shape_source`` (each shape's
    ``physics.Mesh`` or None), ``shape_source_ptr`` (the id of the numba_sim ``Mesh``
    of its scaled vertices on the model's device, 0 for other shapes; one ``Mesh`` per
    distinct mesh and scale, so replicated worlds share it), and the scaled vertices in
    the shape frame, ``shape_mesh_points[shape_mesh_start[s]:][:shape_mesh_count[s]]``
    (a mesh shape's contact points), and ``shape_mesh_radius``, the radius of a sphere
    about the shape origin holding them (0 for other shapes)."""
    model.shape_source = list(builder.shape_source)
    built = {}
    ids = np.zeros(builder.shape_count, dtype=np.uint64)
    starts = np.zeros(builder.shape_count, dtype=np.int64)
    counts = np.zeros(builder.shape_count, dtype=np.int64)
    radii = np.zeros(builder.shape_count)
    points = []
    total = 0
    for s, source in enumerate(builder.shape_source):
        if source is None:
            continue
        scale = np.asarray(builder.shape_scale[s], dtype=np.float64)
        key = (id(source), tuple(scale))
        if key not in built:
            scaled = source.vertices * scale
            mesh = sim.Mesh(put(scaled, np.float32, (3,)), put(source.indices, np.int32, (3,)))
            built[key] = (mesh, total, len(scaled))
            points.append(scaled)
            total += len(scaled)
        mesh, starts[s], counts[s] = built[key]
        ids[s] = mesh.id
        radii[s] = np.linalg.norm(source.vertices * scale, axis=1).max()
    model._shape_meshes = [entry[0] for entry in built.values()]   # kept alive
    model.shape_source_ptr = put(ids, np.uint64)
    model.shape_mesh_radius = put(radii, np.float32)
    model.shape_mesh_start = put(starts, np.int32)
    model.shape_mesh_count = put(counts, np.int32)
    model.shape_mesh_points = put(np.concatenate(points) if points else np.zeros((0, 3)),
                                  np.float32, (3,))
