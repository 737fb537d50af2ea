"""sim.HashGrid on CUDA without a GPU: kernels link offline, the sort runs in the simulator.

* Query kernels (grid object or uint64 id, nested queries, point ids) and
  every build kernel compile and link into cubins for sm_75 and sm_90, with
  and without LTO; with LTO the traversal is inlined (no call left).
* The build's radix sort and cell offsets (plain numba-cuda kernels) run
  under the CUDA simulator in a subprocess, with tiny block sizes so that
  every path (several blocks, several scan tiles, several passes) is taken.
"""

import os
import subprocess
import sys
import textwrap

import pytest
from numba import cuda
from numba.core import types

import numba_sim as sim
from numba_sim import native, spatial
from numba_sim.spatial import cuda_radix_sort, hash_grid_build_cuda
from numba_sim.typing.hash_grid import hash_grid_type
from numba_sim.typing.spatial_common import prepare_cuda_arg

POINTS = types.float32[:, ::1]
INDICES = types.int32[::1]


@pytest.fixture(autouse=True, scope="module")
def private_device_code_cache(tmp_path_factory):
    """Keeps the device code these tests build out of the user's cache."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("NUMBA_SIM_CACHE_DIR", str(tmp_path_factory.mktemp("numba_sim_cache")))
        yield


def count_neighbours_kernel(grid, points, radius, counts):
    tid = cuda.grid(1)
    if tid < points.shape[0]:
        i = spatial.hash_grid_point_id(grid, tid)
        p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
        count = 0
        for j in spatial.hash_grid_query(grid, p, radius):
            d = sim.vec3(points[j, 0], points[j, 1], points[j, 2]) - p
            if sim.dot(d, d) <= radius * radius:
                count += 1
        counts[i] = count


def count_group_neighbours_kernel(grid, points, groups, radius, counts):
    i = cuda.grid(1)
    if i < points.shape[0]:
        p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
        count = 0
        for j in spatial.hash_grid_query(grid, p, radius, groups[i]):
            d = sim.vec3(points[j, 0], points[j, 1], points[j, 2]) - p
            if sim.dot(d, d) <= radius * radius:
                count += 1
        counts[i] = count


def nested_queries_kernel(grid_a, grid_b, points, radius, counts):
    i = cuda.grid(1)
    if i < points.shape[0]:
        p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
        query = spatial.hash_grid_query(grid_a, p, radius)
        count = 0
        for j in query:
            q = sim.vec3(points[j, 0], points[j, 1], points[j, 2])
            for _ in spatial.hash_grid_query(grid_b, q, radius):
                count += 1
        for _ in query:  # a stored query runs again from the start
            count += 1
        counts[i] = count


@pytest.mark.parametrize("grid_type", [hash_grid_type, types.uint64], ids=["HashGrid", "uint64"])
@pytest.mark.parametrize("cc, lto", [((7, 5), True), ((9, 0), True), ((7, 5), False)],
                         ids=["sm_75-lto", "sm_90-lto", "sm_75-no-lto"])
def test_query_kernel_links_offline(offline_cuda, grid_type, cc, lto):
    argtypes = (grid_type, POINTS, types.float32, INDICES)
    cubin = offline_cuda.cubin(count_neighbours_kernel, argtypes, cc=cc, lto=lto)
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("grid_type", [hash_grid_type, types.uint64], ids=["HashGrid", "uint64"])
def test_grouped_query_kernel_links_offline(offline_cuda, grid_type):
    argtypes = (grid_type, POINTS, INDICES, types.float32, INDICES)
    cubin = offline_cuda.cubin(count_group_neighbours_kernel, argtypes, cc=(7, 5), lto=True)
    assert cubin[:4] == b"\x7fELF"


def test_nested_queries_on_two_grids_link_offline(offline_cuda):
    argtypes = (hash_grid_type, types.uint64, POINTS, types.float32, INDICES)
    assert offline_cuda.cubin(nested_queries_kernel, argtypes)[:4] == b"\x7fELF"


def test_lto_inlines_the_traversal(offline_cuda):
    if native.linked_device_code_kind() != "ltoir":
        pytest.skip("nvJitLink is not available: device code is linked as PTX")
    argtypes = (hash_grid_type, POINTS, types.float32, INDICES)
    library = offline_cuda.compile(count_neighbours_kernel, argtypes, cc=(7, 5), lto=True)
    ptx = library.get_lto_ptx(cc=(7, 5))
    assert "sim_hash_grid" not in ptx
    assert "call" not in ptx.replace("callseq", "")  # nothing left to call
    assert "cvt.rmi.s32.f32" in ptx  # the cell coordinate (floor), computed in the kernel


BUILD_KERNEL_ARGTYPES = {
    hash_grid_build_cuda.set_descriptor_kernel:
        (types.uint64,) + (types.int64,) * 4 + (types.float32, INDICES, INDICES),
    hash_grid_build_cuda.point_cells_kernel: (types.uint64, POINTS, types.int64, INDICES, INDICES),
    hash_grid_build_cuda.set_groups_kernel: (types.uint64, INDICES),
    hash_grid_build_cuda.group_keys_kernel: (INDICES, types.int64, INDICES),
    hash_grid_build_cuda.gather_kernel: (INDICES, types.int64, INDICES, INDICES),
    cuda_radix_sort.radix_count_kernel: (INDICES, types.int64, types.int64, INDICES),
    cuda_radix_sort.radix_scatter_kernel: (INDICES,) * 4 + (types.int64, types.int64, INDICES),
    cuda_radix_sort.scan_blocks_kernel: (INDICES, types.int64, INDICES),
    cuda_radix_sort.scan_block_sums_kernel: (INDICES, types.int64),
    cuda_radix_sort.scan_add_kernel: (INDICES, types.int64, INDICES),
    cuda_radix_sort.key_offsets_kernel: (INDICES, types.int64, INDICES, types.int64),
}


def test_every_build_kernel_is_covered():
    assert set(BUILD_KERNEL_ARGTYPES) == set(hash_grid_build_cuda.KERNELS + cuda_radix_sort.KERNELS)


@pytest.mark.parametrize("body", list(BUILD_KERNEL_ARGTYPES), ids=lambda f: f.__name__)
def test_build_kernel_links_offline(offline_cuda, body):
    assert offline_cuda.cubin(body, BUILD_KERNEL_ARGTYPES[body], cc=(7, 5))[:4] == b"\x7fELF"


# --------------------------------------------------------------------------
# Kernel arguments


class _FakeCudaGrid:
    device = "cuda:0"
    id = 0xDEAD0


def test_prepare_cuda_arg_passes_the_id():
    assert prepare_cuda_arg(hash_grid_type, _FakeCudaGrid()) == (types.uint64, 0xDEAD0)
    assert prepare_cuda_arg(types.float32, 1.5) == (types.float32, 1.5)


def test_prepare_cuda_arg_refuses_a_cpu_grid():
    with pytest.raises(ValueError, match=r"CUDA kernel received a HashGrid on 'cpu'"):
        prepare_cuda_arg(hash_grid_type, spatial.HashGrid(2, 2, 2))


# --------------------------------------------------------------------------
# The sort under the simulator

SIMULATED_SORT = textwrap.dedent("""
    import importlib.util
    import numpy as np
    from numba import cuda

    spec = importlib.util.spec_from_file_location("radix", {path!r})
    radix = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(radix)
    radix.BLOCK, radix.SCAN_BLOCK = 8, 4   # many blocks and scan tiles from few keys
    rng = np.random.default_rng(0)
    for n, bits in ((45, 7), (1, 1), (0, 3), (20, 4)):
        keys_host = rng.integers(0, 1 << bits, n).astype(np.int32)
        if n == 20:
            keys_host[:] = 5   # all equal: stability decides the order
        capacity = max(n, 1)
        keys = cuda.to_device(np.zeros((2, capacity), np.int32))
        values = cuda.to_device(np.zeros((2, capacity), np.int32))
        if n:
            keys[0, :n].copy_to_device(keys_host)
            values[0, :n].copy_to_device(np.arange(n, dtype=np.int32))
        counts, sums = radix.scratch_sizes(capacity)
        stream = cuda.default_stream()
        row = radix.sort_pairs(keys, values, n, bits, cuda.device_array(counts, np.int32),
                               cuda.device_array(sums, np.int32), stream) if n else 0
        offsets = cuda.device_array((1 << bits) + 1, np.int32)
        radix.key_offsets(keys[row], n, offsets, (1 << bits) + 1, stream)
        order = np.argsort(keys_host, kind="stable")
        assert np.array_equal(keys.copy_to_host()[row, :n], keys_host[order]), n
        assert np.array_equal(values.copy_to_host()[row, :n], order), n
        expected = np.searchsorted(keys_host[order], np.arange((1 << bits) + 1))
        assert np.array_equal(offsets.copy_to_host(), expected), n
    print("sorted")
""")


def test_radix_sort_and_offsets_in_the_cuda_simulator(tmp_path):
    script = tmp_path / "simulated_sort.py"
    script.write_text(SIMULATED_SORT.format(path=cuda_radix_sort.__file__))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "sorted"


def test_passes_cover_the_key_bits():
    assert cuda_radix_sort.passes_for(1) == 1
    assert cuda_radix_sort.passes_for(21) == 6
    assert cuda_radix_sort.passes_for(31) == 8



@sim.kernel
def count_neighbours_sim_kernel(grid, points: sim.array(dtype=sim.vec3), radius: float,
                                counts: sim.array(dtype=int)):
    tid = sim.tid()
    i = spatial.hash_grid_point_id(grid, tid)
    p = points[i]
    count = int(0)
    for j in spatial.hash_grid_query(grid, p, radius):
        if sim.length(points[j] - p) <= radius:
            count += 1
    counts[i] = count


@pytest.mark.parametrize("grid_type", [hash_grid_type, types.uint64], ids=["HashGrid", "uint64"])
def test_sim_kernel_with_a_grid_compiles_for_cuda_offline(offline_cuda, grid_type):
    argtypes = [grid_type, POINTS, types.float32, INDICES]
    library = count_neighbours_sim_kernel.compile("cuda", argtypes, cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
