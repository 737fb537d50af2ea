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

A grouped build (``grid.build(points, radius, groups=ids)``, Warp's) keeps each
cell's points ordered by group, so that ``hash_grid_query(grid, p, r, group)``
returns only that group's points (one binary search per touched cell); queries
without a group run the ungrouped code unchanged.

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
    cpu_capture,
    cuda_device_name,
    device_index,
    host_functions,
    int_argument,
)

#: Cell count limit (cell indices and sorted positions are int32, as in Warp).
MAX_CELLS = 2**31 - 1
MAX_POINTS = 2**31 - 1


class CellCountError(ValueError, RuntimeError):
    """Too many cells: a ValueError naming the dims, and the RuntimeError Warp raises."""


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

    def __init__(self, dim_x, dim_y, dim_z, device="cpu", dtype=np.float32):
        self.dtype = _dtype(dtype)
        dims = tuple(_dimension(name, value)
                     for name, value in (("dim_x", dim_x), ("dim_y", dim_y), ("dim_z", dim_z)))
        if math.prod(dims) > MAX_CELLS:
            raise CellCountError(
                f"HashGrid(dim_x={dims[0]}, dim_y={dims[1]}, dim_z={dims[2]}): "
                f"{math.prod(dims)} cells exceed the limit of {MAX_CELLS} (2^31 - 1): "
                "cell count exceeds supported limit"
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

    def reserve(self, num_points, with_groups=False, *, stream=None):
        """Allocate room for builds of up to ``num_points`` points (``with_groups``: grouped
        builds too).

        A CUDA build within the reserved capacity allocates no memory, so it can
        be captured in a CUDA graph. The grid keeps its current contents.
        """
        num_points = _count("HashGrid.reserve", "num_points", num_points)
        with_groups = bool(with_groups)
        with self._lock:
            if self.device == "cpu":
                if cpu_capture.graph() is not None and self._storage.needs_memory(
                        num_points, with_groups):
                    raise NotImplementedError(
                        f"HashGrid.reserve({num_points}) during a CPU graph capture would "
                        "allocate while recording: reserve before capture")
                self._storage.reserve(num_points, with_groups)
            else:
                self._storage.reserve(num_points, with_groups, cuda_runtime.numba_stream(stream))

    def build(self, points, radius, groups=None, *, stream=None):
        """Rebuild the grid from ``points`` with cells of edge ``radius``.

        ``points`` is an ``(n, 3)`` float32 array (or ``(..., 3)``, flattened) on
        the grid's device: a NumPy array for a CPU grid; for a CUDA grid a CuPy
        array, a DLPack CUDA array or any object with ``__cuda_array_interface__``.
        ``groups`` (optional, Warp's grouped grid): an int32 array of one group id
        per point on the same device; ``hash_grid_query(grid, p, r, group)`` then
        returns only the points of ``group`` (any int32 is a group id). CUDA builds
        run on ``stream`` (a CuPy or numba stream; by default CuPy's current stream,
        as ``sim.launch``), return without waiting, and after :meth:`reserve` can be
        recorded by ``sim.capture()``. A CPU build inside ``sim.capture("cpu")`` is
        checked, then recorded: each replay builds from the arrays' contents then.
        """
        cell_width = _cell_width(radius)
        if self.device == "cpu":
            graph = cpu_capture.graph()
            if graph is not None:  # checked now, built at each replay from the arrays then
                self._build_host(points, cell_width, groups, check_only=True)
                graph.record_host(lambda: self._build_host(points, cell_width, groups))
            else:
                self._build_host(points, cell_width, groups)
            return
        with self._lock:
            points = _device_points(points, self.device)
            groups = _device_groups(groups, points.shape[0], self.device)
            self._storage.build(points, cell_width, groups, cuda_runtime.numba_stream(stream))

    def _build_host(self, points, cell_width, groups, check_only=False):
        """A CPU grid's build from the current contents of ``points`` and ``groups``."""
        with self._lock:
            points = _host_points(points, self.device)
            groups = _host_groups(groups, points.shape[0], self.device)
            if not check_only:
                self._storage.build(points, cell_width, groups)


class CpuGridStorage:
    """The descriptor and buffers of a CPU grid, and its build.

    The descriptor lives in a NumPy array; its address is the grid's id.
    Until the first build it is all zeros, which queries read as an empty grid.

    The build is ``sim_hash_grid_build_host`` (cuda_src/hashgrid_host_build.cpp):
    cells from ``cuda_src/hashgrid.h``, a stable scatter into buckets of
    consecutive cells, then a counting sort of each bucket that writes the cell
    offsets on the way, on up to ``numba.get_num_threads()`` std::threads joined
    after each step, so it follows ``numba.set_num_threads`` and does not spin on
    cores shared with other processes; no Python loop over points. It is called through ctypes, which releases the GIL: grids built
    from several Python threads build at the same time.

    Measured: see docs/benchmarks.md (benchmarks/bench_hash_grid.py). Right after a Numba
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
        # (2, capacity) int32 each: row 1 holds the points bucketed, row 0 the cells
        # first, then both the sorted result
        self.keys = self.values = None
        self.cell_offsets = None  # num_cells + 1 int32, allocated by the first reserve
        self.final_row = 0  # the row of `values` holding the sorted point indices
        self.point_ids = np.zeros(0, dtype=np.int32)
        self.sorted_groups = None  # capacity int32: the group of each sorted position
        self.grouped = False  # whether the last build had groups

    def needs_memory(self, capacity, with_groups=False):
        """Whether ``reserve(capacity, with_groups)`` would allocate."""
        if self.keys is None or capacity > self.capacity:
            return True
        return with_groups and (self.sorted_groups is None or self.sorted_groups.size < capacity)

    def reserve(self, capacity, with_groups=False):
        """Make room for ``capacity`` points (``with_groups``: for grouped builds too),
        keeping the current contents queryable."""
        if self.cell_offsets is None:
            self.cell_offsets = np.zeros(self.num_cells + 1, dtype=np.int32)
        if capacity > self.capacity or self.keys is None:
            self.capacity = max(capacity, 1)
            keys = np.empty((2, self.capacity), dtype=np.int32)
            values = np.empty((2, self.capacity), dtype=np.int32)
            values[self.final_row, : self.num_points] = self.point_ids
            self.keys, self.values = keys, values
            self.point_ids = values[self.final_row, : self.num_points]
            if self.num_points:
                host_functions["sim_hash_grid_set"](
                    self.id, *self.dims, self.num_points, self.cell_width,
                    address(self.point_ids), address(self.cell_offsets))
        if (with_groups or self.sorted_groups is not None) and (
                self.sorted_groups is None or self.sorted_groups.size < self.capacity):
            sorted_groups = np.empty(self.capacity, dtype=np.int32)
            if self.sorted_groups is not None:
                sorted_groups[: self.num_points] = self.sorted_groups[: self.num_points]
            self.sorted_groups = sorted_groups
        if self.grouped and self.num_points:  # (re)point the descriptor at the groups
            host_functions["sim_hash_grid_set_groups"](self.id, address(self.sorted_groups))

    def build(self, points, cell_width, groups=None):
        """Build from ``points`` ((n, 3) float32, C-contiguous) with cells of ``cell_width``,
        grouped by ``groups`` (n int32, or None)."""
        num_points = points.shape[0]
        self.reserve(num_points, groups is not None)
        self.grouped = False
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
        if groups is not None and num_points:
            if host_functions["sim_hash_grid_group_host"](
                    self.id, address(groups), groups.strides[0], address(self.keys[final_row]),
                    address(self.point_ids), address(self.sorted_groups)) < 0:
                self.num_points, self.point_ids = 0, np.zeros(0, dtype=np.int32)
                host_functions["sim_hash_grid_set"](self.id, *self.dims, 0, self.cell_width,
                                                    None, None)
                raise MemoryError("HashGrid.build: out of memory ordering the groups")
            self.grouped = True


# -------------------------------------------------------------------- validation


def _dtype(dtype):
    """The grid's scalar type: float32 (Warp's default; Warp also has float16 and float64
    grids, which numba_sim does not)."""
    if dtype in (np.float32, float) or getattr(dtype, "__name__", None) == "float32":
        return np.float32
    if dtype in (np.float16, np.float64) or getattr(dtype, "__name__", None) in ("float16",
                                                                                "float64"):
        raise TypeError(f"HashGrid(dtype={getattr(dtype, '__name__', dtype)}): numba_sim's "
                        "hash grids are float32 (vec3 points); float16 and float64 grids are "
                        "not available")
    raise TypeError(f"HashGrid(dtype={dtype!r}): expected float32 (the points' scalar type)")


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


class DeviceMismatchError(TypeError, RuntimeError):
    """An argument on another device than the grid (Warp raises a RuntimeError)."""


def _check_points(dtype, shape):
    check_vec3_rows("HashGrid.build", "points", dtype, shape, MAX_POINTS, "points")


def _flat_shape(shape):
    """(n, 3) for points of shape (..., 3) (Warp flattens multi-dimensional arrays of vec3)."""
    if len(shape) > 2 and shape[-1] == 3:
        return (math.prod(shape[:-1]), 3)
    return tuple(shape)


def _host_points(points, device):
    if not isinstance(points, np.ndarray):
        where = "a CUDA array" if arrays.device_of(points) == "cuda" else type(points).__name__
        raise DeviceMismatchError(
            f"HashGrid.build(points=...): the grid is on {device}, so points must be a NumPy "
            f"array, not {where} (points must live on the same device as the grid)"
        )
    _check_points(points.dtype, _flat_shape(points.shape))
    # the build does not keep them: strided ones are copied
    return np.ascontiguousarray(points).reshape(_flat_shape(points.shape))


def _check_groups(dtype, shape, num_points):
    if dtype != np.int32:
        raise TypeError(f"HashGrid.build(groups=...): groups must be an int32 array (one group "
                        f"id per point), not {dtype}")
    if math.prod(shape) != num_points:
        raise ValueError(f"HashGrid.build(groups=...): groups has {math.prod(shape)} entries "
                         f"(shape {tuple(shape)}) for {num_points} points")


def _host_groups(groups, num_points, device):
    """``groups`` as a 1-D int32 NumPy array of ``num_points`` entries (None stays None)."""
    if groups is None:
        return None
    if not isinstance(groups, np.ndarray):
        where = "a CUDA array" if arrays.device_of(groups) == "cuda" else type(groups).__name__
        raise DeviceMismatchError(
            f"HashGrid.build(groups=...): the grid is on {device}, so groups must be a NumPy "
            f"array, not {where} (groups must live on the same device as the grid)"
        )
    _check_groups(groups.dtype, groups.shape, num_points)
    return groups.reshape(-1)  # strided 1-D views are read in place


def _device_array(name, value, device):
    """``value`` (a CUDA array on the grid's device) as a numba device array."""
    if arrays.device_of(value) != "cuda":
        raise DeviceMismatchError(
            f"HashGrid.build({name}=...): the grid is on {device}, so {name} must be a CUDA "
            f"array (CuPy, DLPack, or any object with __cuda_array_interface__), not "
            f"{type(value).__name__} ({name} must live on the same device as the grid)"
        )
    from numba import cuda  # a CUDA grid: numba-cuda is already imported

    array = cuda_runtime.as_cuda_array(value)  # DLPack arrays come back as CuPy arrays
    if not hasattr(array, "gpu_data"):  # not a numba device array yet
        array = cuda.as_cuda_array(array, sync=False)
    if not arrays.c_contiguous(array):
        raise ValueError(f"HashGrid.build({name}=...): a CUDA {name} array must be C-contiguous")
    return array


def _device_points(points, device):
    array = _device_array("points", points, device)
    _check_points(array.dtype, _flat_shape(array.shape))
    return array.reshape(_flat_shape(array.shape)) if array.ndim > 2 else array


def _device_groups(groups, num_points, device):
    if groups is None:
        return None
    array = _device_array("groups", groups, device)
    _check_groups(array.dtype, array.shape, num_points)
    return array.reshape(num_points) if array.ndim != 1 else array
