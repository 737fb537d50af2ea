"""``sim.Mesh``: Warp's triangle mesh for closest points, inside/outside, ray casts and box queries.

    mesh = sim.Mesh(points, indices)    # (n, 3) float32; (m, 3) or (3 m,) integer indices

    @numba.njit(parallel=True)
    def distances(mesh, queries, out):
        for i in numba.prange(queries.shape[0]):
            p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
            q = sim.mesh_query_point(mesh, p, 10.0)
            if q.result:
                out[i] = q.sign * sim.length(sim.mesh_eval_position(mesh, q.face, q.u, q.v) - p)

Kernel side (Warp's names and fields): ``mesh_query_point(mesh, p, max_dist)``
-> ``.result .sign .face .u .v`` (and Warp's variants, with the same result:
``mesh_query_point_no_sign``, ``mesh_query_point_sign_normal``,
``mesh_query_point_sign_winding_number``, ``mesh_query_furthest_point_no_sign``,
see :mod:`numba_sim.spatial.mesh_query`); ``mesh_query_ray(mesh, start, dir, max_t)``
-> ``.result .t .u .v .sign .normal .face``; ``for f in mesh_query_aabb(mesh,
lo, hi):``; ``mesh_eval_position(mesh, face, u, v)`` and
``mesh_eval_velocity(mesh, face, u, v)`` (of ``Mesh(points, indices, velocities)``).

The sign of a point query is decided by the angle-weighted pseudo-normal of
the feature (face, edge or vertex) the closest point lies on: -1 inside, +1
outside for counter-clockwise faces seen from outside (Warp's convention).
It is exact for closed, consistently wound 2-manifold meshes; near holes,
edges shared by more than two faces, flipped faces or self-intersections it
is not reliable (nor is Warp's, which casts rays). Zero-area triangles are
ignored by point and ray queries (they have no normal; their points lie on
other triangles' edges) but still appear in ``mesh_query_aabb``.

The mesh keeps the caller's ``points`` array: after moving points in place,
call :meth:`Mesh.refit`; assigning ``mesh.points = new_points`` (same shape
and device) refits by itself, as in Warp. The triangle BVH is a
:class:`~numba_sim.spatial.bvh.Bvh` build (Warp's default: SAH on the CPU,
LBVH on CUDA; leaves of 8 and 4 triangles). Algorithms: ``cuda_src/mesh.h``,
``cuda_src/mesh_host_build.cpp``.
"""

import threading

import numba
import numpy as np

from numba_sim.spatial.bvh import constructor_name, counts, group_arguments
from numba_sim.spatial.common import (
    BVH_CONSTRUCTORS,
    BVH_LEVELS,
    MESH_BVH_OFFSET,
    MESH_SOLID_ANGLE_OFFSET,
    MESH_VELOCITIES_OFFSET,
    MESH_WORDS,
    SOLID_ANGLE_PROPS_FLOATS,
    RefittableStructure,
    address,
    aligned_zeros,
    array_device,
    check_finite_rows,
    device_index,
    group_ids,
    host_functions,
    positive_int,
    triangle_indices,
    vec3_array,
)


DEFAULT_LEAF_SIZES = {"sah": 8, "median": 8, "lbvh": 4}
"""Triangles per leaf of a mesh's BVH when ``bvh_leaf_size`` is None, by constructor.  Leaves
of 8 (against 4) made the CPU's rays 4-8 % faster and its closest points 5 % (icosphere of
327,680 triangles, 100,000 queries, one thread; the same results); LBVH, the CUDA builder,
keeps 4."""


class Mesh(RefittableStructure):
    """A triangle mesh over ``points`` (``(n, 3)`` float32) and ``indices``.

    ``indices`` holds three vertex indices per triangle, as an ``(m, 3)`` or a
    flat ``(3 m,)`` integer array (int32, or any integer type, converted),
    each in ``[0, n)``; it is copied. NumPy arrays make a CPU mesh, CUDA arrays
    (CuPy, or anything with ``__cuda_array_interface__``) a CUDA mesh.
    Warp's parameters, in Warp's order: ``velocities`` (``(n, 3)`` float32
    on the points' device, or None: what ``mesh_eval_velocity`` interpolates),
    then the rest. ``bvh_constructor`` and ``bvh_leaf_size`` set the triangle
    BVH (defaults: the device's constructor, and, as Warp's None, the constructor's
    leaf size: :data:`DEFAULT_LEAF_SIZES`). ``support_winding_number``
    (Warp's) keeps the dipole expansion of every BVH node, rebuilt by every
    refit, for ``mesh_query_point_sign_winding_number``'s fast winding number
    (without it, that query signs by Warp's fallback: three rays).
    ``groups`` (Warp's): one integer group id per triangle; the triangle BVH
    then keeps a subtree per group (see :class:`~numba_sim.spatial.bvh.Bvh`):
    ``mesh_get_group_root(mesh, group)`` gives its root, which
    ``mesh_query_ray(mesh, start, dir, max_t, root)`` searches alone. Grouped
    meshes are built by SAH (the default) or median.

    ``id`` is the address of the mesh's descriptor on its device, as in Warp:
    kernels take the mesh itself or ``mesh.id`` (a ``uint64``).
    """

    argument = "mesh"
    cpu_hint = "build the Mesh from NumPy arrays"

    def __init__(self, points, indices, velocities=None, support_winding_number=False,
                 bvh_constructor=None, bvh_leaf_size=None, groups=None):
        num_points, device = vec3_array("Mesh", "points", points)
        indices_device = array_device("Mesh", "indices", indices)
        if indices_device != device:
            raise ValueError(f"Mesh(indices=...): expected an array on {device} (where the "
                             f"points are), not on {indices_device}")
        self.device = device
        self.bvh_constructor = constructor_name("Mesh", bvh_constructor, device, "bvh_constructor",
                                                grouped=groups is not None)
        self.bvh_leaf_size = DEFAULT_LEAF_SIZES[self.bvh_constructor] if bvh_leaf_size is None \
            else positive_int("Mesh", "bvh_leaf_size", bvh_leaf_size)
        if not isinstance(support_winding_number, (bool, np.bool_)):
            raise TypeError(f"Mesh(support_winding_number=...): expected True or False, not "
                            f"{type(support_winding_number).__name__}")
        self.support_winding_number = bool(support_winding_number)
        self._lock = threading.RLock()
        self.groups = groups
        if device == "cpu":
            check_finite_rows("Mesh", "points", points)
            host_indices = triangle_indices("Mesh", indices, num_points)
            host_groups = None if groups is None else group_ids("Mesh", groups,
                                                                host_indices.size // 3, device)
            self._storage = CpuMeshStorage(points, host_indices, self.support_winding_number,
                                           host_groups)
        else:
            # Function-local on purpose: the CUDA build imports numba-cuda (half a second),
            # which CPU-only programs never pay.
            from numba_sim.spatial.mesh_build_cuda import CudaMeshStorage

            self._storage = CudaMeshStorage(points, indices, device_index(device),
                                            self.support_winding_number)
            if groups is not None:  # (the triangles counted and checked by the storage)
                self._storage.set_groups(group_ids("Mesh", groups, self.num_tris, device))
        self._points = points
        self._velocities = None
        if velocities is not None:
            self.velocities = velocities
        self._storage.build(BVH_CONSTRUCTORS[self.bvh_constructor], self.bvh_leaf_size)
        self._register()

    # ---------------------------------------------------------------- properties

    @property
    def points(self):
        """The vertex positions, the caller's array (Warp's ``Mesh.points``).

        Modify them in place and call :meth:`refit`, or assign a new array of
        the same shape on the same device, which refits.
        """
        return self._points

    @points.setter
    def points(self, points):
        num_points, _ = vec3_array("Mesh.points", "points", points, self.device)
        if num_points != self.num_points:
            raise ValueError(f"Mesh.points(points=...): the mesh has {self.num_points} points, "
                             f"the new array {num_points}")
        with self._lock:
            if self.device == "cpu":
                check_finite_rows("Mesh.points", "points", points)
            self._storage.set_points(points)
            self._points = points
            self._storage.refit()

    @property
    def velocities(self):
        """The vertex velocities (Warp's ``Mesh.velocities``): the caller's ``(n, 3)`` float32
        array, or None; ``mesh_eval_velocity`` interpolates them. Assignable."""
        return self._velocities

    @velocities.setter
    def velocities(self, velocities):
        if velocities is not None:
            count, _ = vec3_array("Mesh", "velocities", velocities, self.device)
            if count != self.num_points:
                raise ValueError(f"Mesh(velocities=...): the mesh has {self.num_points} points, "
                                 f"the velocities {count} rows")
        with self._lock:
            self._storage.set_velocities(velocities)
            self._velocities = velocities

    @property
    def indices(self):
        """The triangles' vertex indices, flat (3 per triangle), int32 (the mesh's copy)."""
        return self._storage.indices

    @property
    def num_points(self):
        return self._storage.num_points

    @property
    def num_tris(self):
        return self._storage.num_tris

    def __repr__(self):
        return (f"Mesh({self.num_points} points, {self.num_tris} triangles, "
                f"device={self.device!r})")


class CpuMeshStorage:
    """The descriptor and buffers of a CPU mesh, and its builds.

    The descriptor (``sim::Mesh``, with its BVH's descriptor inside) lives in a
    NumPy array, whose address is the mesh's id.
    """

    def __init__(self, points, indices, support_winding_number=False, groups=None):
        self.points = points
        self.groups = groups  # host int32 per triangle, or None
        self.indices = indices
        self.num_points = n = points.shape[0]
        self.num_tris = m = indices.size // 3
        slots = max(2 * m, 1)
        self.descriptor = np.zeros(MESH_WORDS, dtype=np.uint64)
        self.id = address(self.descriptor)
        self.tri_lowers = np.zeros((max(m, 1), 3), np.float32)
        self.tri_uppers = np.zeros((max(m, 1), 3), np.float32)
        self.edge_faces = np.zeros(max(3 * m, 1), np.int32)
        self.vertex_normals = np.zeros((max(n, 1), 3), np.float32)
        self.leaf_points = np.zeros((max(m, 1), 9), np.float32)
        self.nodes = aligned_zeros((slots, 8), np.int32)
        self.primitive_indices = np.zeros(max(m, 1), np.int32)
        self.refit_order = np.zeros(slots, np.int32)
        self.level_offsets = np.zeros(BVH_LEVELS + 1, np.int32)
        self.group_ids = np.zeros(max(m, 1), np.int32)
        self.group_roots = np.zeros(max(m, 1), np.int32)
        self.solid_angle_props = None
        if support_winding_number:
            self.solid_angle_props = np.zeros((slots, SOLID_ANGLE_PROPS_FLOATS), np.float32)
            self.descriptor[MESH_SOLID_ANGLE_OFFSET // 8] = address(self.solid_angle_props)
        self._set()

    def _set(self):
        host_functions["sim_mesh_set"](
            self.id, address(self.points), address(self.indices), address(self.tri_lowers),
            address(self.tri_uppers), address(self.edge_faces), address(self.vertex_normals),
            address(self.leaf_points), self.num_points, self.num_tris)

    def build(self, constructor, leaf_size):
        host_functions["sim_mesh_build_host"](
            self.id, constructor, leaf_size, address(self.nodes),
            address(self.primitive_indices), address(self.refit_order),
            address(self.level_offsets), numba.get_num_threads(),
            *group_arguments(self.groups, self.group_ids, self.group_roots))

    def prepare_signs(self):
        """Bring edge_faces, vertex_normals and the descriptor's edge_length_sum up to
        date (the signed point queries do it themselves, at their first call after a
        build or refit)."""
        host_functions["sim_mesh_prepare_signs"](self.id)

    def check_inputs(self, where):
        check_finite_rows(where, "points", self.points)

    def set_points(self, points):
        self.points = points
        host_functions["sim_mesh_set_points"](self.id, address(points))

    def set_velocities(self, velocities):
        self.velocities = velocities  # (kept alive while the descriptor points to it)
        word = MESH_VELOCITIES_OFFSET // 8
        self.descriptor[word] = 0 if velocities is None else address(velocities)

    def refit(self):
        host_functions["sim_mesh_refit_host"](self.id, numba.get_num_threads())

    def bvh_counts(self):
        return counts(self.id + MESH_BVH_OFFSET)
