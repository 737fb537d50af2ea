"""The hash-grid entry points of the host library, called from Python through ctypes.

Compiled code reaches ``cuda_src/`` through :mod:`numba_sim.native` (named
symbols); Python - the CPU build and Python-mode queries - calls the same
functions here. ctypes releases the GIL during a call.
"""

import ctypes
import functools

import numpy as np

from numba_sim import native

_POINTER, _INT, _FLOAT = ctypes.c_void_p, ctypes.c_int, ctypes.c_float

#: Entry point -> (argument types, result type), as in cuda_src/.
SIGNATURES = {
    "sim_hash_grid_layout": ([_POINTER], None),
    "sim_hash_grid_set": ([_POINTER] + [_INT] * 4 + [_FLOAT] + [_POINTER] * 2, None),
    "sim_hash_grid_query_begin": ([_POINTER, _POINTER, _POINTER, _FLOAT], None),
    "sim_hash_grid_query_next_range": ([_POINTER], _INT),
    "sim_hash_grid_point_id": ([_POINTER, _INT], _INT),
    "sim_hash_grid_build_host":
        ([_POINTER, _POINTER, _INT, _INT, _INT, _INT, _FLOAT, _POINTER, _POINTER, _INT, _POINTER,
          _INT], _INT),
}


@functools.cache
def host_function(name):
    """The host library's entry point ``name`` as a ctypes function."""
    function = getattr(ctypes.CDLL(native.host_library_path()), name)
    function.argtypes, function.restype = SIGNATURES[name]
    return function


def set_host_descriptor(grid_id, dims, num_points, cell_width, point_ids, cell_offsets):
    """Fill the descriptor of a CPU grid (``sim_hash_grid_set``) from Python."""
    host_function("sim_hash_grid_set")(grid_id, *(int(d) for d in dims), num_points,
                                       cell_width, point_ids.ctypes.data, cell_offsets.ctypes.data)


def native_layout():
    """``(sizeof(HashGrid), sizeof(HashGridQuery))`` as compiled in the host library."""
    sizes = np.zeros(2, dtype=np.int32)
    host_function("sim_hash_grid_layout")(sizes.ctypes.data)
    return tuple(int(s) for s in sizes)
