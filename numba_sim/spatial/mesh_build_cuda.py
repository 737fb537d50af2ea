"""Building and refitting a mesh on CUDA.

The indices are copied to the host once, at construction: there they are
checked (integers in range) and give the edge adjacency (the face across
each edge, which depends on the topology only: ``sim_mesh_edge_faces``);
then they and the adjacency go to the device. Everything else runs on the
GPU, on the current stream, from the per-face steps of ``cuda_src/mesh.h``:

* ``face_step_kernel`` (``TRIANGLE_BOUNDS``) - each triangle's box (the BVH's
  items);
* ``clear_kernel`` + ``face_step_kernel`` (``VERTEX_NORMALS``) - the vertices'
  angle-weighted normal sums (float atomics);
* the triangle BVH: a :class:`~numba_sim.spatial.bvh_build_cuda.CudaBvhStorage`
  whose descriptor is the one inside the mesh's (LBVH on the GPU; SAH and
  median built on the host from the boxes, as in Warp).

* ``face_step_kernel`` (``LEAF_TRIANGLES``) - the triangles' points in the
  BVH's leaf order, where the queries read them;
* with ``support_winding_number``: ``solid_angle_kernel``, a launch per depth,
  deepest first - each node's solid-angle expansion from its triangles or
  its children's.

A refit is the same steps, with a BVH refit instead of a build.
"""

import numpy as np
from numba import cuda

from numba_sim import cuda_runtime
from numba_sim.spatial.build_intrinsics import (
    native_add_vertex_normals,
    native_leaf_triangle,
    native_set_mesh,
    native_solid_angle_level_node,
    native_triangle_bounds,
)
from numba_sim.spatial.bvh_build_cuda import (
    CudaBvhStorage,
    as_device_array,
    device_address,
    first_bad_box,
    kernel,
)
from numba_sim.spatial.common import (
    BVH_LEVELS,
    MESH_BVH_OFFSET,
    MESH_SOLID_ANGLE_OFFSET,
    MESH_VELOCITIES_OFFSET,
    MESH_WORDS,
    SOLID_ANGLE_PROPS_FLOATS,
    address,
    host_functions,
    triangle_indices,
)

_THREADS = 256


def set_descriptor_kernel(mesh_id, points, indices, tri_lowers, tri_uppers, edge_faces,
                          vertex_normals, leaf_points, num_points, num_tris):
    if cuda.grid(1) == 0:
        native_set_mesh(mesh_id, points, indices, tri_lowers, tri_uppers, edge_faces,
                        vertex_normals, leaf_points, num_points, num_tris)


# Steps of face_step_kernel
TRIANGLE_BOUNDS, VERTEX_NORMALS, LEAF_TRIANGLES = 0, 1, 2


def face_step_kernel(mesh_id, num_tris, step):
    """One per-face step of cuda_src/mesh.h for every face (or BVH position)."""
    f = cuda.grid(1)
    if f < num_tris:
        if step == TRIANGLE_BOUNDS:
            native_triangle_bounds(mesh_id, f)
        elif step == VERTEX_NORMALS:
            native_add_vertex_normals(mesh_id, f)
        else:
            native_leaf_triangle(mesh_id, f)


def solid_angle_kernel(mesh_id, k, count):
    """The solid-angle expansions of the nodes of refit level k (deepest first)."""
    i = cuda.grid(1)
    if i < count:
        native_solid_angle_level_node(mesh_id, k, i)


def clear_kernel(values, count):
    i = cuda.grid(1)
    if i < count:
        values[i] = 0.0


KERNELS = (set_descriptor_kernel, face_step_kernel, solid_angle_kernel, clear_kernel)


def _blocks(count):
    return max(1, (count + _THREADS - 1) // _THREADS)


class CudaMeshStorage:
    """The descriptor and buffers of a CUDA mesh, and its builds."""

    def __init__(self, points, indices, device_index, support_winding_number=False,
                 groups=None):
        """``groups``: one host int32 group id per triangle (checked), or None."""
        self.device_index = device_index
        self.points = as_device_array(points)
        self.num_points = n = self.points.shape[0]
        host_indices = triangle_indices("Mesh", _host_copy(indices), n)
        self.num_tris = m = host_indices.size // 3
        edge_faces = np.zeros(max(3 * m, 1), np.int32)
        host_functions["sim_mesh_edge_faces"](address(host_indices), m, n, address(edge_faces))
        with cuda.gpus[device_index]:
            self.descriptor = cuda.to_device(np.zeros(MESH_WORDS, dtype=np.uint64))
            self.indices = cuda.to_device(host_indices if m else np.zeros(1, np.int32))
            self.edge_faces = cuda.to_device(edge_faces)
            self.tri_lowers = cuda.device_array((m, 3), np.float32)
            self.tri_uppers = cuda.device_array((m, 3), np.float32)
            self.vertex_normals = cuda.device_array((max(n, 1), 3), np.float32)
            self.leaf_points = cuda.device_array((max(m, 1), 9), np.float32)
            self.solid_angle_props = None
            if support_winding_number:
                self.solid_angle_props = cuda.device_array(
                    (max(2 * m, 1), SOLID_ANGLE_PROPS_FLOATS), np.float32)
                word = MESH_SOLID_ANGLE_OFFSET // 8
                self.descriptor[word:word + 1].copy_to_device(
                    np.array([device_address(self.solid_angle_props)], np.uint64))
        self.id = device_address(self.descriptor)
        self.bvh = CudaBvhStorage(self.tri_lowers, self.tri_uppers, device_index,
                                  descriptor_id=self.id + MESH_BVH_OFFSET, groups=groups,
                                  descriptor=(self.descriptor, MESH_BVH_OFFSET // 8))
        bad = first_bad_box(self.points, self.points, self.bvh.flag)
        if bad is not None:
            raise ValueError(f"Mesh(points=...): points[{bad}] = "
                             f"{self.points[bad].copy_to_host().tolist()} is not finite")

    def set_velocities(self, velocities):
        """Point the descriptor at the vertex velocities (a CUDA array), or at none."""
        self.velocities = None if velocities is None else as_device_array(velocities)
        address = 0 if velocities is None else device_address(self.velocities)
        word = MESH_VELOCITIES_OFFSET // 8
        with cuda.gpus[self.device_index]:
            self.descriptor[word:word + 1].copy_to_device(np.array([address], np.uint64))

    def set_groups(self, groups):
        """Make the triangle BVH grouped (one host int32 id per triangle), before a build."""
        self.bvh.set_groups(groups)

    def _set(self, stream):
        kernel(set_descriptor_kernel)[1, 1, stream](
            np.uint64(self.id), self.points, self.indices, self.tri_lowers, self.tri_uppers,
            self.edge_faces, self.vertex_normals, self.leaf_points, self.num_points,
            self.num_tris)

    def _step(self, step, stream):
        if self.num_tris:
            with cuda.gpus[self.device_index]:
                kernel(face_step_kernel)[_blocks(self.num_tris), _THREADS, stream](
                    np.uint64(self.id), self.num_tris, step)

    def _faces(self, stream):
        """Triangle boxes and vertex normals."""
        self._step(TRIANGLE_BOUNDS, stream)
        flat = self.vertex_normals.reshape(-1)
        kernel(clear_kernel)[_blocks(flat.size), _THREADS, stream](flat, flat.size)
        self._step(VERTEX_NORMALS, stream)

    def build(self, constructor, leaf_size, stream=None):
        stream = cuda_runtime.numba_stream(stream)
        with cuda.gpus[self.device_index]:
            self._set(stream)
            self._faces(stream)
        self.bvh.build(constructor, leaf_size, stream)
        self._step(LEAF_TRIANGLES, stream)
        self._solid_angles(stream)

    def set_points(self, points):
        self.points = as_device_array(points)
        with cuda.gpus[self.device_index]:
            self._set(cuda_runtime.numba_stream(None))

    def refit(self, stream=None):
        stream = cuda_runtime.numba_stream(stream)
        with cuda.gpus[self.device_index]:
            self._faces(stream)
        self.bvh.refit(stream)
        self._step(LEAF_TRIANGLES, stream)
        self._solid_angles(stream)

    def _solid_angles(self, stream):
        """The nodes' solid-angle expansions, a launch per depth (support_winding_number)."""
        if self.solid_angle_props is None or not self.num_tris:
            return
        with cuda.gpus[self.device_index]:
            for k in range(BVH_LEVELS):
                kernel(solid_angle_kernel)[_blocks(self.num_tris), _THREADS, stream](
                    np.uint64(self.id), k, self.num_tris)


def _host_copy(indices):
    """The indices on the host (a CUDA array is copied; anything else is checked as is)."""
    if hasattr(indices, "__cuda_array_interface__"):
        return as_device_array(indices).copy_to_host()
    return indices
