"""sim.HashGrid on a real GPU: builds and queries agree with the CPU grid.

Both builds are stable sorts by cell, so a CUDA grid's sorted point indices
and cell offsets must equal the CPU grid's exactly, and neighbour counts from
a CUDA kernel must equal those of the same loop compiled for the CPU.
"""

import numba
import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import spatial
from numba_sim.typing.spatial_common import prepare_cuda_arg

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")

RADIUS = np.float32(0.05)


class GridArguments:
    """numba-cuda extension passing HashGrid arguments as their ids."""

    def prepare_args(self, ty, val, **kwargs):
        return prepare_cuda_arg(ty, val)


EXTENSIONS = [sim.cuda_args, GridArguments()]


def count_body(grid, points, radius, counts):
    i = 0
    n = points.shape[0]
    while i < n:
        p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
        count = 0
        for j in spatial.hash_grid_query(grid, p, radius):
            d = sim.vec3(points[j, 0], points[j, 1], points[j, 2]) - p
            if sim.dot(d, d) <= radius * radius:
                count += 1
        counts[i] = count
        i += 1


count_cpu = numba.njit(count_body)


@cuda.jit(extensions=EXTENSIONS)
def count_kernel(grid, points, radius, counts):
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


@cuda.jit(extensions=EXTENSIONS)
def nested_kernel(grid_a, grid_b, points, radius, counts):
    i = cuda.grid(1)
    if i < points.shape[0]:
        p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
        count = 0
        for j in spatial.hash_grid_query(grid_a, p, radius):
            q = sim.vec3(points[j, 0], points[j, 1], points[j, 2])
            for _ in spatial.hash_grid_query(grid_b, q, radius):
                count += 1
        counts[i] = count


@numba.njit
def nested_cpu(grid_a, grid_b, points, radius, counts):
    for i in range(points.shape[0]):
        p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
        count = 0
        for j in spatial.hash_grid_query(grid_a, p, radius):
            q = sim.vec3(points[j, 0], points[j, 1], points[j, 2])
            for _ in spatial.hash_grid_query(grid_b, q, radius):
                count += 1
        counts[i] = count


def points_cloud(n, seed=0, low=0.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, size=(n, 3)).astype(np.float32)


def grids(points, dims=(32, 32, 32), radius=RADIUS):
    cpu = spatial.HashGrid(*dims)
    cpu.build(points, radius)
    gpu = spatial.HashGrid(*dims, device="cuda")
    gpu.build(cuda.to_device(points), radius)
    cuda.synchronize()
    return cpu, gpu


def gpu_sorted_ids(grid):
    storage = grid._storage
    return storage.buffers["values"].copy_to_host()[storage.final_row, : storage.num_points]


def gpu_counts(grid_arg, points):
    d_points = cuda.to_device(points)
    counts = cuda.to_device(np.full(len(points), -1, dtype=np.int32))
    count_kernel[(len(points) + 127) // 128, 128](grid_arg, d_points, RADIUS, counts)
    return counts.copy_to_host()


@pytest.mark.parametrize("dims", [(8, 8, 8), (32, 32, 32), (256, 256, 128)],
                         ids=["3-pass", "4-pass", "6-pass"])
def test_gpu_build_equals_cpu_build(dims):
    points = points_cloud(50_000, seed=1, low=-2.0, high=2.0)
    cpu, gpu = grids(points, dims)
    assert np.array_equal(gpu_sorted_ids(gpu), cpu._point_ids)
    assert np.array_equal(gpu._storage.cell_offsets.copy_to_host(), cpu._storage.cell_offsets)


def test_gpu_queries_equal_cpu_queries():
    points = points_cloud(20_000, seed=2)
    cpu, gpu = grids(points)
    expected = np.zeros(len(points), dtype=np.int32)
    count_cpu(cpu, points, RADIUS, expected)
    assert expected.min() >= 1
    assert np.array_equal(gpu_counts(gpu, points), expected)
    assert np.array_equal(gpu_counts(np.uint64(gpu.id), points), expected)  # Warp-style id


def test_nested_queries_on_two_gpu_grids():
    points = points_cloud(3000, seed=3)
    cpu_a, gpu_a = grids(points)
    cpu_b, gpu_b = grids(points[::-1].copy(), dims=(16, 8, 4))
    expected = np.zeros(len(points), dtype=np.int32)
    nested_cpu(cpu_a, cpu_b, points, RADIUS, expected)
    got = cuda.to_device(np.zeros(len(points), dtype=np.int32))
    nested_kernel[(len(points) + 127) // 128, 128](gpu_a, gpu_b, cuda.to_device(points), RADIUS,
                                                   got)
    assert np.array_equal(got.copy_to_host(), expected)


@pytest.mark.parametrize("n", [0, 1, 129, 1000])
def test_small_and_empty_gpu_builds(n):
    points = points_cloud(n, seed=4)
    cpu, gpu = grids(points, dims=(4, 4, 4))
    assert np.array_equal(gpu_sorted_ids(gpu), cpu._point_ids)
    if n:
        expected = np.zeros(n, dtype=np.int32)
        count_cpu(cpu, points, RADIUS, expected)
        assert np.array_equal(gpu_counts(gpu, points), expected)


def test_non_finite_points_on_the_gpu():
    points = points_cloud(2000, seed=5, low=-1.0, high=1.0)
    points[::17, 0] = np.nan
    points[1::17] = np.inf
    points[2::17, 2] = -1e30
    cpu, gpu = grids(points)
    assert np.array_equal(gpu_sorted_ids(gpu), cpu._point_ids)
    expected = np.zeros(len(points), dtype=np.int32)
    count_cpu(cpu, points, RADIUS, expected)
    assert np.array_equal(gpu_counts(gpu, points), expected)


def test_build_after_reserve_allocates_nothing(monkeypatch):
    points = cuda.to_device(points_cloud(10_000, seed=6))
    grid = spatial.HashGrid(32, 32, 32, device="cuda")
    grid.reserve(20_000)
    grid.build(points, RADIUS)  # compiles the build kernels
    cuda.synchronize()

    def no_allocation(*args, **kwargs):
        raise AssertionError("a build within the reserved capacity allocated device memory")

    for name in ("device_array", "to_device", "device_array_like", "pinned_array",
                 "mapped_array", "managed_array"):
        monkeypatch.setattr(cuda, name, no_allocation)
    grid.build(points[:5000], RADIUS)
    grid.build(points, np.float32(0.1))
    cuda.synchronize()


def test_build_on_a_stream_and_reserve_keeps_contents():
    points = points_cloud(5000, seed=7)
    cpu, gpu = grids(points)
    stream = cuda.stream()
    gpu.reserve(50_000, stream=stream)
    stream.synchronize()
    assert np.array_equal(gpu_sorted_ids(gpu), cpu._point_ids)
    gpu.build(cuda.to_device(points, stream=stream), RADIUS, stream=stream)
    stream.synchronize()
    assert np.array_equal(gpu_sorted_ids(gpu), cpu._point_ids)


def test_gpu_grid_refuses_host_points_and_cpu_code():
    grid = spatial.HashGrid(4, 4, 4, device="cuda")
    with pytest.raises(TypeError, match=r"grid is on cuda:\d, so points must be a CUDA array"):
        grid.build(points_cloud(10), RADIUS)
    with pytest.raises(ValueError, match=r"was passed to CPU code"):
        count_cpu(grid, points_cloud(10), RADIUS, np.zeros(10, dtype=np.int32))
    with pytest.raises(TypeError, match=r"points must be float32"):
        grid.build(cuda.to_device(np.zeros((4, 3))), RADIUS)
