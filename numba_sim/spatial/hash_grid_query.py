"""Kernel-side hash-grid functions, and how they run when called from Python.

``hash_grid_query(grid, point, radius)``, ``hash_grid_point_id(grid, index)``
(and Warp's ``hash_grid_query_next``, which numba_sim replaces by
``for j in hash_grid_query(...)`` loops) are typed and lowered for compiled
code in :mod:`numba_sim.typing.hash_grid` / :mod:`numba_sim.lowering.hash_grid`.
Called from Python (a ``@sim.func`` run as Python, a test), they run the very
same ``cuda_src/hashgrid.h`` code of the host library through ctypes, on CPU
grids: the grid object itself or its ``id``.
"""

import numpy as np

from numba_sim.spatial.common import (
    HASH_GRID_QUERY_BYTES,
    address,
    cpu_structure,
    host_functions,
    vec3_argument,
)
from numba_sim.spatial.hash_grid import HashGrid


def _grid(grid, function):
    return cpu_structure(grid, HashGrid, function)


class HashGridQuery:
    """A hash-grid query run as Python: iterating yields candidate point indices.

    Candidates are the points of every cell the sphere (point, radius) touches,
    in cell-sorted order, as in compiled code; filter them by distance.
    """

    def __init__(self, grid, point, radius, group=None):
        self._grid = _grid(grid, "hash_grid_query")
        self._point = vec3_argument(point, "hash_grid_query", "point")
        self._radius = float(radius)
        self._group = None if group is None else int(np.int32(group))

    def __iter__(self):
        if self._group is None:
            begin = host_functions["sim_hash_grid_query_begin"]
            next_range = host_functions["sim_hash_grid_query_next_range"]
            group = ()
        else:
            begin = host_functions["sim_hash_grid_query_begin_group"]
            next_range = host_functions["sim_hash_grid_query_next_group_range"]
            group = (self._group,)
        grid = self._grid
        with grid._lock:  # the buffers must not be swapped while the library reads them
            state = np.zeros(HASH_GRID_QUERY_BYTES // 8, dtype=np.uint64)
            header = state.view(np.int32)  # [2] = index, [3] = end
            begin(address(state), grid.id, address(self._point), self._radius, *group)
            point_ids = grid._point_ids
            runs = [point_ids[header[2]:header[3]].copy()]
            while next_range(address(state)):
                runs.append(point_ids[header[2]:header[3]].copy())
        for run in runs:
            yield from run  # np.int32 values, as compiled code yields int32


def hash_grid_query(grid, point, radius, group=None):
    """Start a neighbour query of ``grid`` around ``point`` (a vec3) within ``radius``.

    ``for j in hash_grid_query(grid, p, r):`` yields the indices (int32) of
    the points in every grid cell the sphere touches: a superset of the
    neighbours, as in Warp, to be filtered by distance. ``grid`` is a
    ``sim.HashGrid`` or its ``id``. The query may be stored and iterated later.
    ``group`` (an int32): on a grid built with ``groups=``, only the points of
    that group (Warp's grouped query); on an ungrouped grid it changes nothing.
    """
    return HashGridQuery(grid, point, radius, group)


def hash_grid_point_id(grid, index):
    """The index of the point at position ``index`` of the grid's cell-sorted order.

    Threads that take their point from this order (``i = hash_grid_point_id(grid,
    tid())``) visit neighbouring points together, which keeps memory access local.
    Returns -1 for an unbuilt grid or an index outside ``[0, number of points)``.
    """
    grid = _grid(grid, "hash_grid_point_id")
    with grid._lock:
        return np.int32(host_functions["sim_hash_grid_point_id"](grid.id, int(index)))


QUERY_NEXT_MESSAGE = (
    "Warp's hash_grid_query_next(query, index) form is replaced in numba_sim by a loop: "
    "`for index in sim.hash_grid_query(grid, point, radius):`"
)


def hash_grid_query_next(query, index):
    """Warp's output-argument form; numba_sim uses ``for j in hash_grid_query(...)``."""
    raise TypeError(QUERY_NEXT_MESSAGE)
