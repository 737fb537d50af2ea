"""Building a hash grid on the CPU: all cores, no Python loop over points.

The build is ``sim_hash_grid_build_host`` (cuda_src/hashgrid_host_build.cpp):
cells from ``cuda_src/hashgrid.h``, a stable parallel radix sort by cell and
the cell offsets, on a team of up to ``numba.get_num_threads()`` threads
meeting at blocking barriers, so it follows ``numba.set_num_threads`` and
does not spin on cores shared with other processes. It is called through
ctypes, which releases the GIL: grids built from several Python threads
build at the same time.

Measured (benchmarks/bench_hash_grid.py, 1M points, 2 cores): about 2.3x
faster than Warp's serial build, 1.3x on one thread. Right after a Numba
``parallel=True`` region, GNU OpenMP's idle workers spin for some
milliseconds (unless ``OMP_WAIT_POLICY=PASSIVE``) and take a core from this
build, which then runs at about its one-thread speed.
"""

import numba
import numpy as np

from numba_sim.spatial.hash_grid_native import host_function, set_host_descriptor

#: ``sizeof(sim::HashGrid)`` (cuda_src/hashgrid.h), in 8-byte words.
DESCRIPTOR_WORDS = 5


class CpuGridStorage:
    """The descriptor and buffers of a CPU grid, and its build.

    The descriptor lives in a NumPy array; its address is the grid's id.
    Until the first build it is all zeros, which queries read as an empty grid.
    """

    def __init__(self, dims):
        self.dims = tuple(int(d) for d in dims)
        self.num_cells = self.dims[0] * self.dims[1] * self.dims[2]
        self.descriptor = np.zeros(DESCRIPTOR_WORDS, dtype=np.uint64)
        self.id = int(self.descriptor.ctypes.data)
        self.capacity = 0
        self.num_points = 0
        self.cell_width = 0.0
        # (2, capacity) int32 each: a radix pass reads one row and writes the other
        self.keys = self.values = None
        self.cell_offsets = None  # num_cells + 1 int32, allocated by the first reserve
        self.final_row = 0  # the row of `values` holding the sorted point indices
        self.point_ids = np.zeros(0, dtype=np.int32)

    def reserve(self, capacity):
        """Make room for ``capacity`` points, keeping the current contents queryable."""
        if self.cell_offsets is None:
            self.cell_offsets = np.zeros(self.num_cells + 1, dtype=np.int32)
        if capacity <= self.capacity and self.keys is not None:
            return
        capacity = max(capacity, 1)
        keys = np.empty((2, capacity), dtype=np.int32)
        values = np.empty((2, capacity), dtype=np.int32)
        values[self.final_row, : self.num_points] = self.point_ids
        self.keys, self.values, self.capacity = keys, values, capacity
        self.point_ids = values[self.final_row, : self.num_points]
        if self.num_points:
            set_host_descriptor(self.id, self.dims, self.num_points, self.cell_width,
                                self.point_ids, self.cell_offsets)

    def build(self, points, cell_width):
        """Build from ``points`` ((n, 3) float32, C-contiguous) with cells of ``cell_width``."""
        num_points = points.shape[0]
        self.reserve(num_points)
        final_row = host_function("sim_hash_grid_build_host")(
            self.id, points.ctypes.data, num_points, *self.dims, cell_width,
            self.keys.ctypes.data, self.values.ctypes.data, self.capacity,
            self.cell_offsets.ctypes.data, numba.get_num_threads(),
        )
        if final_row < 0:  # the library left the grid empty
            self.num_points, self.point_ids = 0, np.zeros(0, dtype=np.int32)
            raise MemoryError("HashGrid.build: out of memory for the sort's counters")
        self.final_row = final_row
        self.num_points = num_points
        self.cell_width = float(cell_width)
        self.point_ids = self.values[self.final_row, :num_points]
