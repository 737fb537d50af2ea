"""Grouped sim.HashGrid on a real GPU: the build and grouped queries equal the CPU grid's.

Both builds order each cell's run by (group as uint32, point index) (the CPU by a sort of
each run, CUDA by a stable radix sort by group, then by cell), so the sorted point indices,
cell offsets and sorted groups must be equal exactly, and grouped neighbour counts from a
CUDA kernel must equal those of the same loop compiled for the CPU and a brute-force count.
"""

import numba
import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import spatial
from numba_sim.typing.spatial_common import prepare_cuda_arg

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")

RADIUS = np.float32(0.08)
INT32_MIN, INT32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max


class GridArguments:
    """numba-cuda extension passing HashGrid arguments as their ids."""

    def prepare_args(self, ty, val, **kwargs):
        return prepare_cuda_arg(ty, val)


EXTENSIONS = [sim.cuda_args, GridArguments()]


def count_one(grid, points, groups, radius, i):
    """Point i's neighbours of its own group (a candidate of another group: -1000000)."""
    p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
    count = 0
    for j in spatial.hash_grid_query(grid, p, radius, groups[i]):
        d = sim.vec3(points[j, 0], points[j, 1], points[j, 2]) - p
        if groups[j] != groups[i]:
            count -= 1000000
        elif sim.dot(d, d) <= radius * radius:
            count += 1
    return count


count_one_cpu = numba.njit(count_one)
count_one_gpu = cuda.jit(device=True)(count_one)


@numba.njit
def count_cpu(grid, points, groups, radius, counts):
    for i in range(points.shape[0]):
        counts[i] = count_one_cpu(grid, points, groups, radius, i)


@cuda.jit(extensions=EXTENSIONS)
def count_kernel(grid, points, groups, radius, counts):
    i = cuda.grid(1)
    if i < points.shape[0]:
        counts[i] = count_one_gpu(grid, points, groups, radius, i)


def sample(n, seed):
    rng = np.random.default_rng(seed)
    points = rng.uniform(0.0, 1.0, size=(n, 3)).astype(np.float32)
    groups = rng.choice(np.array([INT32_MIN, -1, 0, 5, INT32_MAX], np.int32), size=n)
    return points, groups.astype(np.int32)


def brute_force(points, groups, radius):
    p = points.astype(np.float64)
    near = np.linalg.norm(p[:, None] - p[None], axis=-1) <= radius
    return (near & (groups[:, None] == groups[None])).sum(axis=1)


@pytest.mark.parametrize("dims", [(8, 8, 8), (32, 32, 32)])
def test_grouped_gpu_build_and_queries_equal_cpu(dims):
    points, groups = sample(4000, 1)
    cpu = spatial.HashGrid(*dims)
    cpu.build(points, RADIUS, groups=groups)
    gpu = spatial.HashGrid(*dims, device="cuda")
    d_points, d_groups = cuda.to_device(points), cuda.to_device(groups)
    gpu.build(d_points, RADIUS, groups=d_groups)
    cuda.synchronize()
    storage = gpu._storage
    ids = storage.buffers["values"].copy_to_host()[storage.final_row, : len(points)]
    assert np.array_equal(ids, cpu._point_ids)
    assert np.array_equal(storage.cell_offsets.copy_to_host(), cpu._storage.cell_offsets)
    assert np.array_equal(storage.buffers["sorted_groups"].copy_to_host()[: len(points)],
                          cpu._storage.sorted_groups[: len(points)])

    expected = np.zeros(len(points), np.int32)
    count_cpu(cpu, points, groups, RADIUS, expected)
    assert np.array_equal(expected, brute_force(points, groups, RADIUS))
    got = cuda.to_device(np.full(len(points), -1, np.int32))
    count_kernel[(len(points) + 127) // 128, 128](gpu, d_points, d_groups, RADIUS, got)
    assert np.array_equal(got.copy_to_host(), expected)


def test_grouped_gpu_build_after_reserve_allocates_nothing(monkeypatch):
    points, groups = sample(3000, 2)
    d_points, d_groups = cuda.to_device(points), cuda.to_device(groups)
    grid = spatial.HashGrid(16, 16, 16, device="cuda")
    grid.reserve(len(points), with_groups=True)
    grid.build(d_points, RADIUS, groups=d_groups)  # compiles the build kernels
    cuda.synchronize()

    def no_allocation(*args, **kwargs):
        raise AssertionError("a grouped build within the reserved capacity allocated memory")

    for name in ("device_array", "to_device", "device_array_like"):
        monkeypatch.setattr(cuda, name, no_allocation)
    grid.build(d_points, RADIUS, groups=d_groups)
    cuda.synchronize()
