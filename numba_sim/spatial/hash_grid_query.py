"""Kernel-side hash-grid functions, and how they run when called from Python.

``hash_grid_query(grid, point, radius)``, ``hash_grid_point_id(grid, index)``
(and Warp's ``hash_grid_query_next``, which numba_sim replaces by
``for j in hash_grid_query(...)`` loops) are typed and lowered for compiled
code in :mod:`numba_sim.typing.hash_grid` / :mod:`numba_sim.lowering.hash_grid`.
Called from Python (a ``@sim.func`` run as Python, a test), they run the very
same ``cuda_src/hashgrid.h`` code of the host library through ctypes
(:mod:`numba_sim.spatial.hash_grid_native`), on CPU grids: the grid object
itself or its ``id``.
"""

import threading
import weakref

import numpy as np

from numba_sim.spatial.hash_grid_native import host_function

#: ``sizeof(sim::HashGridQuery)`` in cuda_src/hashgrid.h.
QUERY_STATE_BYTES = 72

_cpu_grids = weakref.WeakValueDictionary()
_cpu_grids_lock = threading.Lock()


def register_cpu_grid(grid):
    """Make a CPU grid findable from its ``id`` (Python-mode calls that pass ``grid.id``)."""
    with _cpu_grids_lock:
        _cpu_grids[grid.id] = grid


def _cpu_grid(grid, function):
    """The live CPU HashGrid that ``grid`` (an object or an ``id``) designates."""
    if isinstance(grid, (int, np.integer)):
        with _cpu_grids_lock:
            found = _cpu_grids.get(int(grid))
        if found is None:
            raise ValueError(
                f"{function}(): grid={int(grid):#x} is not the id of a live CPU HashGrid "
                "(Python-mode calls take CPU grids; CUDA grids are queried in CUDA kernels)"
            )
        return found
    from numba_sim.spatial.hash_grid import HashGrid

    if not isinstance(grid, HashGrid):
        raise TypeError(
            f"{function}(): grid must be a sim.HashGrid or its id (an int), "
            f"not {type(grid).__name__}"
        )
    if grid.device != "cpu":
        raise ValueError(
            f"{function}(): grid is on {grid.device}; called from Python it takes a CPU grid "
            "(query CUDA grids inside CUDA kernels)"
        )
    return grid


class HashGridQuery:
    """A hash-grid query run as Python: iterating yields candidate point indices.

    Candidates are the points of every cell the sphere (point, radius) touches,
    in cell-sorted order, as in compiled code; filter them by distance.
    """

    def __init__(self, grid, point, radius):
        self._grid = _cpu_grid(grid, "hash_grid_query")
        self._point = np.array(point, dtype=np.float32).reshape(3)
        self._radius = float(radius)

    def __iter__(self):
        begin = host_function("sim_hash_grid_query_begin")
        next_range = host_function("sim_hash_grid_query_next_range")
        grid = self._grid
        with grid._lock:  # the buffers must not be swapped while the library reads them
            state = np.zeros(QUERY_STATE_BYTES // 8, dtype=np.uint64)
            header = state.view(np.int32)  # [2] = index, [3] = end
            begin(state.ctypes.data, grid.id, self._point.ctypes.data, self._radius)
            point_ids = grid._point_ids
            runs = [point_ids[header[2]:header[3]].copy()]
            while next_range(state.ctypes.data):
                runs.append(point_ids[header[2]:header[3]].copy())
        for run in runs:
            yield from run  # np.int32 values, as compiled code yields int32


def hash_grid_query(grid, point, radius):
    """Start a neighbour query of ``grid`` around ``point`` (a vec3) within ``radius``.

    ``for j in hash_grid_query(grid, p, r):`` yields the indices (int32) of
    the points in every grid cell the sphere touches: a superset of the
    neighbours, as in Warp, to be filtered by distance. ``grid`` is a
    ``sim.HashGrid`` or its ``id``. The query may be stored and iterated later.
    """
    return HashGridQuery(grid, point, radius)


def hash_grid_point_id(grid, index):
    """The index of the point at position ``index`` of the grid's cell-sorted order.

    Threads that take their point from this order (``i = hash_grid_point_id(grid,
    tid())``) visit neighbouring points together, which keeps memory access local.
    Returns -1 for an unbuilt grid or an index outside ``[0, number of points)``.
    """
    grid = _cpu_grid(grid, "hash_grid_point_id")
    with grid._lock:
        return np.int32(host_function("sim_hash_grid_point_id")(grid.id, int(index)))


QUERY_NEXT_MESSAGE = (
    "Warp's hash_grid_query_next(query, index) form is replaced in numba_sim by a loop: "
    "`for index in sim.hash_grid_query(grid, point, radius):`"
)


def hash_grid_query_next(query, index):
    """Warp's output-argument form; numba_sim uses ``for j in hash_grid_query(...)``."""
    raise TypeError(QUERY_NEXT_MESSAGE)
