"""sim.Bvh on CUDA without a GPU: kernels link offline, the LBVH build runs in the simulator.

* Query kernels (tree object or uint64 id, AABB and ray queries, nested) and
  every build kernel (the BVH's and the Mesh's) compile and link into cubins
  for sm_75 and sm_90, with and without LTO; with LTO the traversal is
  inlined (no call left).
* The GPU LBVH build (numba_sim/spatial/bvh_build_cuda.py) runs under the
  CUDA simulator in a subprocess, its native steps served by the host library
  (device memory is host memory there) and its sort by NumPy (the radix sort
  has its own simulator test): it must give the CPU LBVH's tree exactly.
"""

import os
import sys
import textwrap

import numpy as np
import pytest
from numba import cuda
from numba.core import types

import numba_sim as sim
from numba_sim import native, spatial
from numba_sim.spatial import bvh_build_cuda, mesh_build_cuda
from numba_sim.typing.bvh import bvh_type
from numba_sim.typing.spatial_common import prepare_cuda_arg

import simulated_native
from test_bvh import count_overlaps_kernel

BOXES = types.float32[:, ::1]
FLOATS = types.float32[::1]
INDICES = types.int32[::1]
NODES = types.int32[:, ::1]


pytestmark = pytest.mark.usefixtures("private_device_code_cache")


def overlap_and_ray_kernel(bvh, lowers, uppers, counts):
    i = cuda.grid(1)
    if i < lowers.shape[0]:
        lo = sim.vec3(lowers[i, 0], lowers[i, 1], lowers[i, 2])
        hi = sim.vec3(uppers[i, 0], uppers[i, 1], uppers[i, 2])
        count = 0
        for j in spatial.bvh_query_aabb(bvh, lo, hi):
            count += 1
        for j in spatial.bvh_query_ray(bvh, lo, hi - lo):
            count += j
        counts[i] = count


def nested_queries_kernel(bvh_a, bvh_b, lowers, uppers, counts):
    i = cuda.grid(1)
    if i < lowers.shape[0]:
        lo = sim.vec3(lowers[i, 0], lowers[i, 1], lowers[i, 2])
        hi = sim.vec3(uppers[i, 0], uppers[i, 1], uppers[i, 2])
        query = spatial.bvh_query_aabb(bvh_a, lo, hi)
        count = 0
        for j in query:
            for _ in spatial.bvh_query_ray(bvh_b, lo, hi):
                count += 1
        for _ in query:  # a stored query runs again from the start
            count += 1
        counts[i] = count


@pytest.mark.parametrize("tree_type", [bvh_type, types.uint64], ids=["Bvh", "uint64"])
@pytest.mark.parametrize("cc, lto", [((7, 5), True), ((9, 0), True), ((7, 5), False)],
                         ids=["sm_75-lto", "sm_90-lto", "sm_75-no-lto"])
def test_query_kernel_links_offline(offline_cuda, tree_type, cc, lto):
    argtypes = (tree_type, BOXES, BOXES, INDICES)
    cubin = offline_cuda.cubin(overlap_and_ray_kernel, argtypes, cc=cc, lto=lto)
    assert cubin[:4] == b"\x7fELF"


def test_nested_queries_on_two_trees_link_offline(offline_cuda):
    argtypes = (bvh_type, types.uint64, BOXES, BOXES, INDICES)
    assert offline_cuda.cubin(nested_queries_kernel, argtypes)[:4] == b"\x7fELF"


def test_lto_inlines_the_traversal(offline_cuda):
    if native.linked_device_code_kind() != "ltoir":
        pytest.skip("nvJitLink is not available: device code is linked as PTX")
    argtypes = (bvh_type, BOXES, BOXES, INDICES)
    library = offline_cuda.compile(overlap_and_ray_kernel, argtypes, cc=(7, 5), lto=True)
    ptx = library.get_lto_ptx(cc=(7, 5))
    assert "sim_bvh" not in ptx
    assert "call" not in ptx.replace("callseq", "")  # nothing left to call


BUILD_KERNEL_ARGTYPES = {
    bvh_build_cuda.check_boxes_kernel: (BOXES, BOXES, types.int64, INDICES),
    bvh_build_cuda.reset_bounds_kernel: (FLOATS,),
    bvh_build_cuda.centre_bounds_kernel: (BOXES, BOXES, types.int64, FLOATS),
    bvh_build_cuda.frame_kernel: (FLOATS, FLOATS),
    bvh_build_cuda.morton_kernel: (BOXES, BOXES, types.int64, FLOATS, INDICES, INDICES),
    bvh_build_cuda.karras_kernel: (INDICES, types.int64, NODES, INDICES, INDICES),
    bvh_build_cuda.finish_kernel:
        (NODES, INDICES, INDICES, types.int64, types.int64, INDICES, INDICES),
    bvh_build_cuda.levels_kernel:
        (types.uint64, NODES, INDICES, INDICES, INDICES, BOXES, BOXES, types.int64, types.int64,
         INDICES, INDICES, INDICES),
    bvh_build_cuda.scatter_kernel: (INDICES, types.int64, INDICES, INDICES),
    bvh_build_cuda.refit_kernel: (types.uint64, types.int64, types.int64),
    bvh_build_cuda.set_descriptor_kernel:
        (types.uint64, NODES, INDICES, INDICES, INDICES, BOXES, BOXES, INDICES),
    mesh_build_cuda.set_descriptor_kernel:
        (types.uint64, BOXES, INDICES, BOXES, BOXES, INDICES, BOXES, BOXES, types.int64,
         types.int64),
    mesh_build_cuda.face_step_kernel: (types.uint64, types.int64, types.int64),
    mesh_build_cuda.solid_angle_kernel: (types.uint64, types.int64, types.int64),
    mesh_build_cuda.clear_kernel: (FLOATS, types.int64),
}


def test_every_build_kernel_is_covered():
    assert set(BUILD_KERNEL_ARGTYPES) == set(bvh_build_cuda.KERNELS + mesh_build_cuda.KERNELS)


@pytest.mark.parametrize("body", list(BUILD_KERNEL_ARGTYPES), ids=lambda f: f.__name__)
def test_build_kernel_links_offline(offline_cuda, body):
    assert offline_cuda.cubin(body, BUILD_KERNEL_ARGTYPES[body], cc=(7, 5))[:4] == b"\x7fELF"


# --------------------------------------------------------------------------
# Kernel arguments


class _FakeCudaBvh:
    device = "cuda:0"
    id = 0xBEEF0


def test_prepare_cuda_arg_passes_the_id():
    assert prepare_cuda_arg(bvh_type, _FakeCudaBvh()) == (types.uint64, 0xBEEF0)
    assert prepare_cuda_arg(types.float32, 1.5) == (types.float32, 1.5)
    assert sim.cuda_args.prepare_args(bvh_type, _FakeCudaBvh()) == (types.uint64, 0xBEEF0)


def test_prepare_cuda_arg_refuses_a_cpu_tree():
    boxes = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"CUDA kernel received a Bvh on 'cpu'"):
        prepare_cuda_arg(bvh_type, spatial.Bvh(boxes, boxes))


@pytest.mark.parametrize("tree_type", [bvh_type, types.uint64], ids=["Bvh", "uint64"])
def test_sim_kernel_with_a_tree_compiles_for_cuda_offline(offline_cuda, tree_type):
    argtypes = [tree_type, BOXES, BOXES, INDICES]
    library = count_overlaps_kernel.compile("cuda", argtypes, cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


# --------------------------------------------------------------------------
# The GPU LBVH build under the simulator

SIMULATED_LBVH = textwrap.dedent("""
    import numpy as np
    from numba import cuda
    from numba_sim.spatial import bvh_build_cuda as build
    from numba_sim.spatial.bvh import Bvh, counts

    rng = np.random.default_rng(0)
    for n, leaf_size in ((90, 2), (1, 1), (33, 1)):
        centres = rng.uniform(0, 1, (n, 3))
        half = rng.uniform(0, 0.05, (n, 3))
        lowers = (centres - half).astype(np.float32)
        uppers = (centres + half).astype(np.float32)
        lowers[: n // 4] = lowers[0]  # identical boxes too
        uppers[: n // 4] = uppers[0]
        gpu_lowers, gpu_uppers = cuda.to_device(lowers), cuda.to_device(uppers)
        gpu = build.CudaBvhStorage(gpu_lowers, gpu_uppers, 0)
        gpu.check_boxes("Bvh")
        gpu.build(build.LBVH, leaf_size)
        cpu = Bvh(lowers, uppers, constructor="lbvh", leaf_size=leaf_size)
        assert counts(gpu.id) == counts(cpu.id), (counts(gpu.id), counts(cpu.id))
        reachable = cpu._storage.refit_order[: counts(cpu.id)[1]]
        for name in ("nodes", "primitive_indices", "level_offsets"):
            assert np.array_equal(np.asarray(getattr(gpu, name))[reachable if name == "nodes"
                                                                 else slice(None)],
                                  getattr(cpu._storage, name)[reachable if name == "nodes"
                                                              else slice(None)]), (n, name)
        offsets = cpu._storage.level_offsets
        for k in range(32):  # the same nodes at each depth (atomics order them freely)
            level = slice(offsets[k], offsets[k + 1])
            assert sorted(np.asarray(gpu.refit_order)[level]) == sorted(
                cpu._storage.refit_order[level]), (n, k)
        lowers[::2] += 0.5  # moved in place: refits follow
        uppers[::2] += 0.5
        gpu_lowers.copy_to_device(lowers)
        gpu_uppers.copy_to_device(uppers)
        cpu.refit()
        gpu.refit()
        assert np.array_equal(np.asarray(gpu.nodes)[reachable], cpu._storage.nodes[reachable])
    bad = np.zeros((5, 3), np.float32)
    bad[3, 1] = np.nan
    gpu = build.CudaBvhStorage(cuda.to_device(bad), cuda.to_device(bad + 1), 0)
    try:
        gpu.check_boxes("Bvh")
    except ValueError as error:
        assert "box 3" in str(error), error
    else:
        raise AssertionError("NaN box accepted")
    print("built")
""")


def test_gpu_lbvh_build_in_the_cuda_simulator_equals_the_cpu_build(tmp_path):
    assert simulated_native.run(SIMULATED_LBVH, tmp_path).strip().endswith("built")


SIMULATED_GROUPS = textwrap.dedent("""
    import ctypes
    import numpy as np
    from numba import cuda
    from numba_sim.spatial import bvh_build_cuda as build
    from numba_sim.spatial.bvh import Bvh
    from numba_sim.spatial.bvh_query import bvh_get_group_root, bvh_query_aabb
    from simulated_native import handle, library

    rng = np.random.default_rng(1)
    n = 200
    lowers = rng.uniform(0, 1, (n, 3)).astype(np.float32)
    uppers = (lowers + 0.05).astype(np.float32)
    groups = rng.choice(np.array([3, 8, 40], np.int32), n)
    gpu = build.CudaBvhStorage(cuda.to_device(lowers), cuda.to_device(uppers), 0, groups=groups)
    gpu.build(0, 2)  # SAH: on the host, copied; then the group tables and descriptor words
    cpu = Bvh(lowers, uppers, constructor="sah", leaf_size=2, groups=groups)
    for group in (3, 8, 40, 5):
        root = library.sim_bvh_group_root(handle(gpu.id), group)
        assert root == bvh_get_group_root(cpu, group), (group, root)
    assert np.array_equal(np.asarray(gpu.nodes), cpu._storage.nodes)
    # the simulated descriptor is in host memory: the host library walks it
    library.sim_bvh_query_aabb_begin.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int]
    library.sim_bvh_query_aabb_next.argtypes = [ctypes.c_void_p]
    lo, hi = np.full(3, 0.2, np.float32), np.full(3, 0.6, np.float32)
    for group in (3, 8, 40):
        root = library.sim_bvh_group_root(handle(gpu.id), group)
        state = np.zeros(22, np.uint64)
        library.sim_bvh_query_aabb_begin(state.ctypes.data, gpu.id, lo.ctypes.data,
                                         hi.ctypes.data, root)
        found = []
        while (item := library.sim_bvh_query_aabb_next(state.ctypes.data)) >= 0:
            found.append(item)
        assert sorted(found) == sorted(bvh_query_aabb(cpu, lo, hi, root)), group
        assert all(groups[i] == group for i in found)
    print("built")
""")


def test_gpu_grouped_build_in_the_cuda_simulator_equals_the_cpu_build(tmp_path):
    assert simulated_native.run(SIMULATED_GROUPS, tmp_path).strip().endswith("built")


def group_queries_kernel(bvh, groups, lowers, uppers, counts):
    i = cuda.grid(1)
    if i < lowers.shape[0]:
        lo = sim.vec3(lowers[i, 0], lowers[i, 1], lowers[i, 2])
        hi = sim.vec3(uppers[i, 0], uppers[i, 1], uppers[i, 2])
        root = spatial.bvh_get_group_root(bvh, groups[i])
        count = 0
        for j in spatial.bvh_query_aabb(bvh, lo, hi, root):
            count += 1
        for j in spatial.bvh_query_ray(bvh, lo, hi - lo, root):
            count += j
        counts[i] = count


@pytest.mark.parametrize("tree_type", [bvh_type, types.uint64], ids=["Bvh", "uint64"])
def test_group_query_kernel_links_offline(offline_cuda, tree_type):
    argtypes = (tree_type, INDICES, BOXES, BOXES, INDICES)
    assert offline_cuda.cubin(group_queries_kernel, argtypes, cc=(7, 5))[:4] == b"\x7fELF"


def test_gpu_test_kernels_link_offline(offline_cuda):
    """The kernels of tests/gpu/test_bvh_gpu.py and test_mesh_gpu.py (run only with a GPU)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "gpu"))
    import test_bvh_gpu
    import test_mesh_gpu

    from numba_sim.typing.mesh import mesh_type

    summary = offline_cuda.cubin(test_bvh_gpu.summary_kernel.py_func,
                                 (bvh_type, BOXES, BOXES, types.boolean, types.int64[:, ::1]))
    answers = offline_cuda.cubin(test_mesh_gpu.queries_kernel.py_func,
                                 (mesh_type, BOXES, BOXES, types.float32[:, ::1]))
    assert summary[:4] == answers[:4] == b"\x7fELF"
