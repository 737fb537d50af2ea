"""Running the CUDA builds of the Bvh and the Mesh in the CUDA simulator.

For scripts run with ``NUMBA_ENABLE_CUDASIM=1`` (tests/test_bvh_cuda.py and
tests/test_mesh_cuda.py start them in a subprocess). Kernels then run as
Python and intrinsics are ignored, so :func:`install` replaces the build
modules' native steps by calls of the same entry points in the host library
(device memory is host memory in the simulator), their device addresses by
host addresses, and the radix sort by NumPy's (it has its own simulator test).
:func:`run` runs a script so prepared in a subprocess.
"""

import ctypes
import os
import subprocess
import sys
import threading

import numpy as np

_PRELUDE = f"""
import sys
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import numba_sim
numba_sim.registry._cuda_installed = True  # numba_sim's CUDA target needs a real numba-cuda
import simulated_native
simulated_native.install()
"""


def run(script, tmp_path):
    """Run ``script`` (after install()) in the simulator in a subprocess; returns its stdout."""
    path = tmp_path / "simulated.py"
    path.write_text(_PRELUDE + script)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


library = None
_lock = threading.Lock()  # the host's vertex-normal sums are not atomic


def at(array):
    """The host address of a (simulated device) array, for ctypes."""
    return ctypes.c_void_p(np.asarray(array).ctypes.data)


def handle(value):
    return ctypes.c_void_p(int(value))


def _add_vertex_normals(mesh, face):
    with _lock:
        library.sim_mesh_add_vertex_normals(handle(mesh), int(face))


def _sort_pairs(keys, values, count, key_bits, block_counts, block_sums, stream):
    k, v = np.asarray(keys[0]), np.asarray(values[0])
    order = np.argsort(k[:count], kind="stable")
    k[:count], v[:count] = k[:count][order], v[:count][order]
    return 0


def install():
    global library
    from numba_sim import native
    from numba_sim.spatial import bvh_build_cuda, cuda_radix_sort, mesh_build_cuda

    library = ctypes.CDLL(native.host_library_path())
    for module in (bvh_build_cuda, mesh_build_cuda):
        module.device_address = lambda array: np.asarray(array).ctypes.data
        module.as_device_array = lambda array: array
        module._THREADS = 32
    bvh_build_cuda.native_morton_code = lambda lo, hi, i, origin, inv: (
        library.sim_bvh_morton_code(at(lo), at(hi), int(i), at(origin), at(inv)))
    bvh_build_cuda.native_lbvh_build_node = lambda codes, n, i, nodes, parents, ranges: (
        library.sim_lbvh_build_node(at(codes), int(n), int(i), at(nodes), at(parents),
                                    at(ranges)))
    bvh_build_cuda.native_lbvh_finish_node = lambda nodes, parents, ranges, n, leaf, s, is_leaf: (
        library.sim_lbvh_finish_node(at(nodes), at(parents), at(ranges), int(n), int(leaf),
                                     int(s), at(is_leaf)))
    bvh_build_cuda.native_refit_level_node = lambda bvh, k, i: (
        library.sim_bvh_refit_level_node(handle(bvh), int(k), int(i)))
    bvh_build_cuda.native_set_bvh = lambda bvh, *arrays: (
        library.sim_bvh_set(handle(bvh), *[at(a) for a in arrays]))
    mesh_build_cuda.native_set_mesh = lambda mesh, *arrays: library.sim_mesh_set(
        handle(mesh), *[at(a) for a in arrays[:7]], int(arrays[7]), int(arrays[8]))
    mesh_build_cuda.native_triangle_bounds = lambda mesh, f: (
        library.sim_mesh_triangle_bounds(handle(mesh), int(f)))
    mesh_build_cuda.native_add_vertex_normals = _add_vertex_normals
    mesh_build_cuda.native_leaf_triangle = lambda mesh, i: (
        library.sim_mesh_leaf_triangle(handle(mesh), int(i)))
    mesh_build_cuda.native_solid_angle_level_node = lambda mesh, k, i: (
        library.sim_mesh_solid_angle_level_node(handle(mesh), int(k), int(i)))
    mesh_build_cuda._host_copy = lambda array: array.copy_to_host()
    cuda_radix_sort.sort_pairs = _sort_pairs
