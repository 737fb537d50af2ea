"""``sim.HashGrid``: Warp's hash grid for fixed-radius neighbour queries, on the CPU or CUDA.

    grid = sim.HashGrid(128, 128, 128, device="cpu")   # or "cuda", "cuda:N"
    grid.build(points, radius)                         # (n, 3) float32 NumPy / CUDA array

    @numba.njit(parallel=True)
    def count(grid, points, radius, out):
        for i in numba.prange(points.shape[0]):
            p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
            for j in sim.hash_grid_query(grid, p, radius):
                ...   # candidates: filter by distance

Cells are cubes of edge ``radius`` (the build's radius; queries may use
another); cell coordinates wrap modulo the dims, so the grid is periodic and
covers all of space: points outside ``dims * radius`` share cells with
points inside, and a query returns every point of every cell it touches (a
superset of the neighbours, to be filtered by distance, as in Warp). Points
with NaN or infinite coordinates are stored in a definite cell (NaN counts as
0, infinities as the extreme cell) and may be returned as candidates that a
distance test rejects; they never fail or hang a build or a query.

The algorithm is ``cuda_src/hashgrid.h``; builds run on the grid's device
(:class:`CpuGridStorage` below, numba_sim/spatial/hash_grid_build_cuda.py).
"""

import math
import threading

import numba
import numpy as np

from numba_sim import arrays, cuda_runtime
from numba_sim.spatial.common import (
    HASH_GRID_WORDS,
    SpatialStructure,
    address,
    check_vec3_rows,
    cuda_device_name,
    device_index,
    host_functions,
    int_argument,
)

#: Cell count limit (cell indices and sorted positions are int32, as in Warp).
MAX_CELLS = 2**31 - 1
MAX_POINTS = 2**31 - 1


class HashGrid(SpatialStructure):
    """A uniform hash grid of ``dim_x * dim_y * dim_z`` cells on ``device``.

    ``id`` is the address of the grid's descriptor on its device, as in Warp:
    kernels take either the grid itself or ``grid.id`` (a ``uint64``).
    Builds and Python-mode queries of one grid are serialized by a lock, so
    sharing a grid between Python threads is safe; building different grids
    from several threads at once runs them in parallel. As in Warp, compiled
    code must not query a grid while it is being rebuilt.
    """

    argument = "grid"
    cpu_hint = "use a grid built with device='cpu'"

    def __init__(self, dim_x, dim_y, dim_z, device="cpu"):
        dims = tuple(_dimension(name, value)
                     for name, value in (("dim_x", dim_x), ("dim_y", dim_y), ("dim_z", dim_z)))
        if math.prod(dims) > MAX_CELLS:
            raise ValueError(
                f"HashGrid(dim_x={dims[0]}, dim_y={dims[1]}, dim_z={dims[2]}): "
                f"{math.prod(dims)} cells exceed the limit of {MAX_CELLS} (2^31 - 1)"
            )
        self._dims = dims
        self._lock = threading.RLock()
        self.device = _device_name(device)
        if self.device == "cpu":
            self._storage = CpuGridStorage(dims)
        else:
            # Function-local on purpose: the CUDA build imports numba-cuda (half a second),
            # which CPU-only programs never pay.
            from numba_sim.spatial.hash_grid_build_cuda import CudaGridStorage

            self._storage = CudaGridStorage(dims, device_index(self.device))
        self._register()

    # ---------------------------------------------------------------- properties
    # (id: SpatialStructure's)

    @property
    def dim_x(self):
        return self._dims[0]

    @property
    def dim_y(self):
        return self._dims[1]

    @property
    def dim_z(self):
        return self._dims[2]

    @property
    def num_points(self):
        """Number of points of the last build (0 before the first)."""
        return self._storage.num_points

    @property
    def cell_width(self):
        """Cell edge of the last build (its ``radius``; 0.0 before the first)."""
        return self._storage.cell_width

    @property
    def capacity(self):
        """Number of points a build can take without allocating (see :meth:`reserve`)."""
        return self._storage.capacity

    @property
    def _point_ids(self):
        """Cell-sorted point indices of a CPU grid (NumPy; for Python-mode queries)."""
        return self._storage.point_ids

    def __repr__(self):
        return (f"HashGrid({self.dim_x}, {self.dim_y}, {self.dim_z}, device={self.device!r}, "
                f"num_points={self.num_points}, cell_width={self.cell_width})")

    # ------------------------------------------------------------------- methods

    def reserve(self, num_points, *, stream=None):
        """Allocate room for builds of up to ``num_points`` points.

        A CUDA build within the reserved capacity allocates no memory, so it can
        be captured in a CUDA graph. The grid keeps its current contents.
        """
        num_points = _count("HashGrid.reserve", "num_points", num_points)
        with self._lock:
            if self.device == "cpu":
                self._storage.reserve(num_points)
            else:
                self._storage.reserve(num_points, cuda_runtime.numba_stream(stream))

    def build(self, points, radius, *, stream=None):
        """Rebuild the grid from ``points`` with cells of edge ``radius``.

        ``points`` is an ``(n, 3)`` float32 array on the grid's device: a NumPy
        array for a CPU grid; for a CUDA grid a CuPy array, a DLPack CUDA array
        or any object with ``__cuda_array_interface__``. CUDA builds run on
        ``stream`` (a CuPy or numba stream; by default CuPy's current stream,
        as ``sim.launch``), return without waiting, and after :meth:`reserve`
        can be recorded by ``sim.capture()``.
        """
        cell_width = _cell_width(radius)
        with self._lock:
            if self.device == "cpu":
                self._storage.build(_host_points(points, self.device), cell_width)
            else:
                self._storage.build(_device_points(points, self.device), cell_width,
                                    cuda_runtime.numba_stream(stream))


class CpuGridStorage:
    """The descriptor and buffers of a CPU grid, and its build.

    The descriptor lives in a NumPy array; its address is the grid's id.
    Until the first build it is all zeros, which queries read as an empty grid.

    The build is ``sim_hash_grid_build_host`` (cuda_src/hashgrid_host_build.cpp):
    cells from ``cuda_src/hashgrid.h``, a stable parallel radix sort by cell and
    the cell offsets, on a team of up to ``numba.get_num_threads()`` threads
    meeting at blocking barriers, so it follows ``numba.set_num_threads`` and
    does not spin on cores shared with other processes; no Python loop over
    points. It is called through ctypes, which releases the GIL: grids built
    from several Python threads build at the same time.

    Measured (benchmarks/bench_hash_grid.py, 1M points, 2 cores): about 2.3x
    faster than Warp's serial build, 1.3x on one thread. Right after a Numba
    ``parallel=True`` region, GNU OpenMP's idle workers spin for some
    milliseconds (unless ``OMP_WAIT_POLICY=PASSIVE``) and take a core from this
    build, which then runs at about its one-thread speed.
    """

    def __init__(self, dims):
        self.dims = tuple(int(d) for d in dims)
        self.num_cells = self.dims[0] * self.dims[1] * self.dims[2]
        self.descriptor = np.zeros(HASH_GRID_WORDS, dtype=np.uint64)
        self.id = address(self.descriptor)
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
            host_functions["sim_hash_grid_set"](
                self.id, *self.dims, self.num_points, self.cell_width, address(self.point_ids),
                address(self.cell_offsets))

    def build(self, points, cell_width):
        """Build from ``points`` ((n, 3) float32, C-contiguous) with cells of ``cell_width``."""
        num_points = points.shape[0]
        self.reserve(num_points)
        final_row = host_functions["sim_hash_grid_build_host"](
            self.id, address(points), num_points, *self.dims, cell_width, address(self.keys),
            address(self.values), self.capacity, address(self.cell_offsets),
            numba.get_num_threads(),
        )
        if final_row < 0:  # the library left the grid empty
            self.num_points, self.point_ids = 0, np.zeros(0, dtype=np.int32)
            raise MemoryError("HashGrid.build: out of memory for the sort's counters")
        self.final_row = final_row
        self.num_points = num_points
        self.cell_width = float(cell_width)
        self.point_ids = self.values[self.final_row, :num_points]


# -------------------------------------------------------------------- validation


def _dimension(name, value):
    value = int_argument("HashGrid", name, value)
    if value <= 0:
        raise ValueError(f"HashGrid({name}={value}): grid dimensions must be positive")
    return value


def _count(where, name, value):
    value = int_argument(where, name, value)
    if not 0 <= value <= MAX_POINTS:
        raise ValueError(f"{where}({name}={value}) must be in [0, {MAX_POINTS}]")
    return value


def _cell_width(radius):
    """``radius`` as a float32 cell width, refusing what makes no cells."""
    if isinstance(radius, bool) or not isinstance(radius, (int, float, np.integer, np.floating)):
        raise TypeError(f"HashGrid.build(radius=...) must be a number, not {type(radius).__name__}")
    with np.errstate(over="ignore", divide="ignore"):
        width = np.float32(radius)
        inverse = np.float32(1.0) / width if width > 0 else np.float32(np.inf)
    if not (np.isfinite(width) and width > 0 and np.isfinite(inverse)):
        raise ValueError(
            f"HashGrid.build(radius={radius!r}): the radius (cell width) must be a positive, "
            "finite float32 number"
        )
    return width


def _device_name(device):
    """``"cpu"`` or ``"cuda:N"`` for ``device``; a CUDA device must exist."""
    try:
        kind, ordinal = arrays.parse_device(device)
    except ValueError:
        raise ValueError(
            f"HashGrid(device={device!r}): expected 'cpu', 'cuda' or 'cuda:N'"
        ) from None
    if kind == "cpu":
        return "cpu"
    return cuda_device_name(f"HashGrid(device={device!r}):", ordinal)


def _check_points(dtype, shape):
    check_vec3_rows("HashGrid.build", "points", dtype, shape, MAX_POINTS, "points")


def _host_points(points, device):
    if not isinstance(points, np.ndarray):
        where = "a CUDA array" if arrays.device_of(points) == "cuda" else type(points).__name__
        raise TypeError(
            f"HashGrid.build(points=...): the grid is on {device}, so points must be a NumPy "
            f"array, not {where}"
        )
    _check_points(points.dtype, points.shape)
    return np.ascontiguousarray(points)  # the build does not keep them: strided ones are copied


def _device_points(points, device):
    if arrays.device_of(points) != "cuda":
        raise TypeError(
            f"HashGrid.build(points=...): the grid is on {device}, so points must be a CUDA "
            f"array (CuPy, DLPack, or any object with __cuda_array_interface__), not "
            f"{type(points).__name__}"
        )
    from numba import cuda  # a CUDA grid: numba-cuda is already imported

    array = cuda_runtime.as_cuda_array(points)  # DLPack arrays come back as CuPy arrays
    if not hasattr(array, "gpu_data"):  # not a numba device array yet
        array = cuda.as_cuda_array(array, sync=False)
    _check_points(array.dtype, array.shape)
    if not arrays.c_contiguous(array):
        raise ValueError("HashGrid.build(points=...): a CUDA points array must be C-contiguous")
    return array
