"""Grouped BVHs and meshes on a real GPU: CUDA trees built with groups answer like the CPU's.

The tree is built on the host (SAH) and copied with its group tables; group
roots and the queries from them, run in a CUDA kernel, equal the CPU's.
"""

import os
import sys

import numba
import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import spatial

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from test_bvh import random_boxes  # noqa: E402

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")


def answers(bvh, group, lo, hi, out):
    root = sim.bvh_get_group_root(bvh, group)
    count = 0
    total = 0
    for j in sim.bvh_query_aabb(bvh, lo, hi, root):
        count += 1
        total += j
    for j in sim.bvh_query_ray(bvh, lo, hi - lo, root):
        count += 1000
    out[0] = root
    out[1] = count
    out[2] = total


answers_on_cpu = numba.njit(answers)
answers_on_gpu = cuda.jit(device=True)(answers)


@numba.njit
def queries_cpu(bvh, groups, lowers, uppers, out):
    for i in range(lowers.shape[0]):
        lo = sim.vec3(lowers[i, 0], lowers[i, 1], lowers[i, 2])
        hi = sim.vec3(uppers[i, 0], uppers[i, 1], uppers[i, 2])
        answers_on_cpu(bvh, groups[i], lo, hi, out[i])


@cuda.jit(extensions=[sim.cuda_args])
def queries_kernel(bvh, groups, lowers, uppers, out):
    i = cuda.grid(1)
    if i < lowers.shape[0]:
        lo = sim.vec3(lowers[i, 0], lowers[i, 1], lowers[i, 2])
        hi = sim.vec3(uppers[i, 0], uppers[i, 1], uppers[i, 2])
        answers_on_gpu(bvh, groups[i], lo, hi, out[i])


@pytest.mark.parametrize("constructor", ["sah", "median"])
def test_gpu_group_queries_match_cpu(constructor):
    lowers, uppers = random_boxes(5000, seed=30, size=0.05)
    rng = np.random.default_rng(31)
    groups = rng.integers(0, 12, 5000).astype(np.int32)
    queried = rng.integers(0, 14, 5000).astype(np.int32)  # 12, 13: no such group
    cpu = spatial.Bvh(lowers, uppers, constructor=constructor, groups=groups)
    gpu = spatial.Bvh(cuda.to_device(lowers), cuda.to_device(uppers), constructor=constructor,
                      groups=cuda.to_device(groups))
    expected = np.zeros((5000, 3), np.int64)
    queries_cpu(cpu, queried, lowers, uppers, expected)
    got = cuda.to_device(np.zeros((5000, 3), np.int64))
    queries_kernel[(5000 + 127) // 128, 128](gpu, cuda.to_device(queried), cuda.to_device(lowers),
                                             cuda.to_device(uppers), got)
    assert np.array_equal(got.copy_to_host(), expected)


def mesh_rays(mesh, group, start, direction, out):
    root = sim.mesh_get_group_root(mesh, group)
    hit = sim.mesh_query_ray(mesh, start, direction, 100.0, root)
    out[0] = root
    out[1] = hit.face if hit.result else -1
    out[2] = hit.t


mesh_rays_on_cpu = numba.njit(mesh_rays)
mesh_rays_on_gpu = cuda.jit(device=True)(mesh_rays)


@numba.njit
def mesh_rays_cpu(mesh, groups, starts, out):
    for i in range(starts.shape[0]):
        s = sim.vec3(starts[i, 0], starts[i, 1], starts[i, 2])
        mesh_rays_on_cpu(mesh, groups[i], s, -s, out[i])


@cuda.jit(extensions=[sim.cuda_args])
def mesh_rays_kernel(mesh, groups, starts, out):
    i = cuda.grid(1)
    if i < starts.shape[0]:
        s = sim.vec3(starts[i, 0], starts[i, 1], starts[i, 2])
        mesh_rays_on_gpu(mesh, groups[i], s, -s, out[i])


def test_gpu_grouped_mesh_rays_match_cpu():
    from mesh_shapes import icosphere

    points, faces = icosphere(3)
    groups = (np.arange(len(faces)) % 5).astype(np.int32)
    rng = np.random.default_rng(32)
    starts = rng.uniform(-2.0, 2.0, (3000, 3)).astype(np.float32)
    queried = rng.integers(0, 6, 3000).astype(np.int32)
    cpu = spatial.Mesh(points, faces, groups=groups)
    gpu = spatial.Mesh(cuda.to_device(points), cuda.to_device(faces),
                       groups=cuda.to_device(groups))
    expected = np.zeros((3000, 3), np.float32)
    mesh_rays_cpu(cpu, queried, starts, expected)
    got = cuda.to_device(np.zeros((3000, 3), np.float32))
    mesh_rays_kernel[(3000 + 127) // 128, 128](gpu, cuda.to_device(queried),
                                               cuda.to_device(starts), got)
    got = got.copy_to_host()
    assert np.array_equal(got[:, 0], expected[:, 0])  # the same roots (the same host build)
    assert (got[:, 1] == expected[:, 1]).mean() > 0.99  # FMAs: grazing hits may differ
    assert np.allclose(got[:, 2], expected[:, 2], rtol=1e-5, atol=1e-6)
