"""Building a hash grid on CUDA from preallocated buffers (nothing is allocated).

The launches, all on one stream:

1. ``set_descriptor_kernel`` (one thread) fills the device descriptor, whose
   address is the grid's id: dims, point count, cell width and the buffers
   the sorted indices and cell offsets will be in;
2. ``point_cells_kernel`` - the cell of each point, from ``cuda_src/hashgrid.h``
   (LTO-inlined), and the identity permutation;
3. the stable radix sort of :mod:`numba_sim.spatial.cuda_radix_sort` by cell;
4. the cell offsets, one binary search per cell.

A grouped build (``groups=``) sorts first by group (as uint32, all 32 bits)
and then, stably, by cell, so that each cell's run is ordered by (group, point
index) as on the host (cuda_src/hashgrid_host_build.cpp); the cells of the
points wait in the grid's ``sorted_groups`` buffer, which then receives the
group of every sorted position, and ``set_groups_kernel`` points the
descriptor at it.

Launches read and write only the grid's buffers (sized by ``reserve``), so a
build can be captured in a CUDA graph.
"""

import numpy as np
from numba import cuda

from numba_sim.cuda_launch import kernel
from numba_sim.spatial import cuda_radix_sort
from numba_sim.spatial.build_intrinsics import (
    native_point_cells,
    native_set_grid,
    native_set_grid_groups,
)
from numba_sim.spatial.common import HASH_GRID_WORDS


def set_descriptor_kernel(grid_id, dim_x, dim_y, dim_z, num_points, cell_width, point_ids,
                          cell_offsets):
    if cuda.grid(1) == 0:
        native_set_grid(grid_id, dim_x, dim_y, dim_z, num_points, cell_width, point_ids,
                        cell_offsets)


def point_cells_kernel(grid_id, points, num_points, cells, point_ids):
    i = cuda.grid(1)
    if i < num_points:
        native_point_cells(grid_id, points, i, i + 1, cells)
        point_ids[i] = i


def set_groups_kernel(grid_id, sorted_groups):
    if cuda.grid(1) == 0:
        native_set_grid_groups(grid_id, sorted_groups)


def group_keys_kernel(groups, num_points, keys):
    i = cuda.grid(1)
    if i < num_points:
        keys[i] = groups[i]


def gather_kernel(source, num_points, indices, target):
    """``target[i] = source[indices[i]]`` (cells by group order, groups by cell order)."""
    i = cuda.grid(1)
    if i < num_points:
        target[i] = source[indices[i]]


KERNELS = (set_descriptor_kernel, point_cells_kernel, set_groups_kernel, group_keys_kernel,
           gather_kernel)

_THREADS = 256


def build_cuda(grid_id, points, num_points, dims, cell_width, buffers, stream, groups=None):
    """Build the grid at ``grid_id`` from ``points[:num_points]`` ((n, 3) float32 device array),
    grouped by ``groups`` (num_points int32, or None).

    ``buffers`` holds the grid's device arrays: ``keys`` and ``values``
    ``(2, capacity)`` int32 and their rows ``key_rows`` and ``value_rows``,
    ``cell_offsets`` (num_cells + 1), the sort's ``block_counts`` and
    ``block_sums``, and for grouped builds ``sorted_groups`` (capacity int32).
    Returns the row of ``values`` that holds the cell-sorted point indices.
    """
    num_cells = dims[0] * dims[1] * dims[2]
    key_bits = max(1, (num_cells - 1).bit_length())
    final = cuda_radix_sort.passes_for(key_bits) % 2
    keys, values = buffers["key_rows"], buffers["value_rows"]
    grid_id = np.uint64(grid_id)
    kernel(set_descriptor_kernel)[1, 1, stream](
        grid_id, dims[0], dims[1], dims[2], num_points, cell_width, values[final],
        buffers["cell_offsets"],
    )
    scratch = buffers["block_counts"], buffers["block_sums"], stream
    if num_points > 0 and groups is not None:
        blocks = (num_points + _THREADS - 1) // _THREADS
        sorted_groups = buffers["sorted_groups"]
        kernel(point_cells_kernel)[blocks, _THREADS, stream](
            grid_id, points, num_points, sorted_groups, values[0]
        )
        kernel(group_keys_kernel)[blocks, _THREADS, stream](groups, num_points, keys[0])
        by_group = cuda_radix_sort.sort_pairs(keys, values, num_points, 32, *scratch)
        assert by_group == 0  # 32 bits: an even number of passes
        kernel(gather_kernel)[blocks, _THREADS, stream](sorted_groups, num_points, values[0],
                                                        keys[0])
        sorted_row = cuda_radix_sort.sort_pairs(keys, values, num_points, key_bits, *scratch)
        assert sorted_row == final
        kernel(gather_kernel)[blocks, _THREADS, stream](groups, num_points, values[final],
                                                        sorted_groups)
        kernel(set_groups_kernel)[1, 1, stream](grid_id, sorted_groups)
    elif num_points > 0:
        blocks = (num_points + _THREADS - 1) // _THREADS
        kernel(point_cells_kernel)[blocks, _THREADS, stream](
            grid_id, points, num_points, keys[0], values[0]
        )
        sorted_row = cuda_radix_sort.sort_pairs(keys, values, num_points, key_bits, *scratch)
        assert sorted_row == final
    cuda_radix_sort.key_offsets(keys[final], num_points, buffers["cell_offsets"], num_cells + 1,
                                stream)
    return final


class CudaGridStorage:
    """The descriptor and buffers of a CUDA grid, and its build.

    Everything is allocated by the constructor (descriptor, cell offsets) and
    by :meth:`reserve` (per-point buffers and sort scratch); :meth:`build` of
    at most ``capacity`` points allocates nothing.
    """

    def __init__(self, dims, device_index):
        self.dims = tuple(int(d) for d in dims)
        self.num_cells = self.dims[0] * self.dims[1] * self.dims[2]
        self.device_index = device_index
        with cuda.gpus[device_index]:
            self.descriptor = cuda.to_device(np.zeros(HASH_GRID_WORDS, dtype=np.uint64))
            self.cell_offsets = cuda.to_device(np.zeros(self.num_cells + 1, dtype=np.int32))
        self.id = int(self.descriptor.__cuda_array_interface__["data"][0])
        self.capacity = 0
        self.num_points = 0
        self.cell_width = 0.0
        self.buffers = None
        self.final_row = 0
        self.grouped = False  # whether the last build had groups

    def reserve(self, capacity, with_groups=False, stream=0):
        """Make room for ``capacity`` points (``with_groups``: for grouped builds too),
        keeping the current contents queryable."""
        if self.buffers is not None and capacity <= self.capacity:
            if with_groups and "sorted_groups" not in self.buffers:
                with cuda.gpus[self.device_index]:
                    self.buffers["sorted_groups"] = cuda.device_array(self.capacity, np.int32)
            return
        capacity = max(capacity, 1)
        block_counts, block_sums = cuda_radix_sort.scratch_sizes(capacity)
        with cuda.gpus[self.device_index]:
            buffers = {
                "keys": cuda.device_array((2, capacity), dtype=np.int32),
                "values": cuda.device_array((2, capacity), dtype=np.int32),
                "block_counts": cuda.device_array(block_counts, dtype=np.int32),
                "block_sums": cuda.device_array(block_sums, dtype=np.int32),
                "cell_offsets": self.cell_offsets,
            }
            if with_groups or self.grouped or (self.buffers and "sorted_groups" in self.buffers):
                buffers["sorted_groups"] = cuda.device_array(capacity, dtype=np.int32)
                if self.grouped and self.num_points:
                    old = self.buffers["sorted_groups"][: self.num_points]
                    buffers["sorted_groups"][: self.num_points].copy_to_device(old, stream=stream)
            buffers["key_rows"] = cuda_radix_sort.rows(buffers["keys"])
            buffers["value_rows"] = cuda_radix_sort.rows(buffers["values"])
            if self.num_points:
                row = self.final_row
                old = self.buffers["values"][row, : self.num_points]
                buffers["values"][row, : self.num_points].copy_to_device(old, stream=stream)
                kernel(set_descriptor_kernel)[1, 1, stream](
                    np.uint64(self.id), *self.dims, self.num_points, np.float32(self.cell_width),
                    buffers["values"][row], self.cell_offsets,
                )
                if self.grouped:
                    kernel(set_groups_kernel)[1, 1, stream](np.uint64(self.id),
                                                            buffers["sorted_groups"])
        self.buffers, self.capacity = buffers, capacity

    def build(self, points, cell_width, groups, stream):
        """Build from ``points`` ((n, 3) float32 device array) with cells of ``cell_width``,
        grouped by ``groups`` (n int32 device array, or None)."""
        num_points = points.shape[0]
        self.reserve(num_points, groups is not None, stream)
        with cuda.gpus[self.device_index]:
            self.final_row = build_cuda(self.id, points, num_points, self.dims, cell_width,
                                        self.buffers, stream, groups)
        self.grouped = groups is not None and num_points > 0
        self.num_points = num_points
        self.cell_width = float(cell_width)
