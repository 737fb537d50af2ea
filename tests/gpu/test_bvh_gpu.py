"""sim.Bvh on a real GPU: CUDA trees answer exactly like CPU trees.

SAH and median trees are built by the host library and copied, so their
nodes equal the CPU tree's; the GPU LBVH runs the same steps as the CPU
LBVH, so its reachable nodes equal the CPU LBVH's too. Query results from
CUDA kernels (count and sum of squares of the items of every query) must
equal those of the same loops compiled for the CPU.
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
from test_bvh import count_overlaps_kernel  # noqa: E402

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")

CONSTRUCTORS = ["sah", "median", "lbvh"]


def summary(bvh, p, q, ray):
    """(count, sum of squares) of the items of the query (box p-q, or ray p + t q)."""
    count = 0
    total = 0
    if ray:
        for j in spatial.bvh_query_ray(bvh, p, q):
            count += 1
            total += j * j
    else:
        for j in spatial.bvh_query_aabb(bvh, p, q):
            count += 1
            total += j * j
    return count, total


summary_on_cpu = numba.njit(summary)
summary_on_gpu = cuda.jit(device=True)(summary)


@numba.njit
def summary_cpu(bvh, a, b, ray, out):
    for i in range(a.shape[0]):
        p = sim.vec3(a[i, 0], a[i, 1], a[i, 2])
        q = sim.vec3(b[i, 0], b[i, 1], b[i, 2])
        out[i, 0], out[i, 1] = summary_on_cpu(bvh, p, q, ray)


@cuda.jit(extensions=[sim.cuda_args])
def summary_kernel(bvh, a, b, ray, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        p = sim.vec3(a[i, 0], a[i, 1], a[i, 2])
        q = sim.vec3(b[i, 0], b[i, 1], b[i, 2])
        out[i, 0], out[i, 1] = summary_on_gpu(bvh, p, q, ray)


def random_boxes(n, seed=0, size=0.02):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 1, (n, 3))
    half = rng.uniform(0, size, (n, 3))
    return (centres - half).astype(np.float32), (centres + half).astype(np.float32)


def summaries(cpu_tree, gpu_tree, a, b, ray):
    expected = np.zeros((len(a), 2), np.int64)
    summary_cpu(cpu_tree, a, b, ray, expected)
    out = cuda.to_device(np.full((len(a), 2), -1, np.int64))
    summary_kernel[(len(a) + 127) // 128, 128](gpu_tree, cuda.to_device(a), cuda.to_device(b),
                                               ray, out)
    return out.copy_to_host(), expected


def check_queries(cpu_tree, gpu_tree, lowers, uppers):
    rng = np.random.default_rng(5)
    starts = rng.uniform(0, 1, (2000, 3)).astype(np.float32)
    directions = rng.normal(size=(2000, 3)).astype(np.float32)
    for a, b, ray in ((lowers, uppers, False), (starts, directions, True)):
        got, expected = summaries(cpu_tree, gpu_tree, a, b, ray)
        assert expected[:, 0].sum() > 0
        assert np.array_equal(got, expected)
        got_by_id, _ = summaries(cpu_tree, np.uint64(gpu_tree.id), a, b, ray)
        assert np.array_equal(got_by_id, expected)


@pytest.mark.parametrize("leaf_size", [1, 4])
@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_gpu_trees_equal_cpu_trees(constructor, leaf_size):
    lowers, uppers = random_boxes(50_000)
    cpu_tree = spatial.Bvh(lowers, uppers, constructor=constructor, leaf_size=leaf_size)
    gpu_tree = spatial.Bvh(cuda.to_device(lowers), cuda.to_device(uppers),
                           constructor=constructor, leaf_size=leaf_size)
    cuda.synchronize()
    assert gpu_tree.device.startswith("cuda") and gpu_tree.constructor == constructor
    assert gpu_tree.stats() == cpu_tree.stats()
    reachable = cpu_tree._storage.refit_order[: cpu_tree.stats().nodes]
    assert np.array_equal(gpu_tree._storage.nodes.copy_to_host()[reachable],
                          cpu_tree._storage.nodes[reachable])
    check_queries(cpu_tree, gpu_tree, lowers, uppers)


def test_default_constructor_on_cuda_is_lbvh():
    lowers, uppers = random_boxes(100)
    assert spatial.Bvh(cuda.to_device(lowers), cuda.to_device(uppers)).constructor == "lbvh"


@pytest.mark.parametrize("constructor", CONSTRUCTORS)
def test_gpu_refit_and_rebuild(constructor):
    lowers, uppers = random_boxes(20_000, seed=1)
    d_lowers, d_uppers = cuda.to_device(lowers), cuda.to_device(uppers)
    gpu_tree = spatial.Bvh(d_lowers, d_uppers, constructor=constructor)
    cpu_tree = spatial.Bvh(lowers, uppers, constructor=constructor)
    shift = np.random.default_rng(2).normal(0, 0.1, lowers.shape).astype(np.float32)
    lowers += shift
    uppers += shift
    d_lowers.copy_to_device(lowers)
    d_uppers.copy_to_device(uppers)
    cpu_tree.refit()
    gpu_tree.refit()
    cuda.synchronize()
    check_queries(cpu_tree, gpu_tree, lowers, uppers)
    cpu_tree.rebuild("lbvh")
    gpu_tree.rebuild("lbvh")
    cuda.synchronize()
    assert gpu_tree.stats() == cpu_tree.stats()
    check_queries(cpu_tree, gpu_tree, lowers, uppers)


@pytest.mark.parametrize("n", [0, 1, 2, 129])
def test_small_and_empty_gpu_trees(n):
    lowers, uppers = random_boxes(n, seed=3, size=0.4)  # large enough for random rays to hit
    for constructor in CONSTRUCTORS:
        gpu_tree = spatial.Bvh(cuda.to_device(lowers), cuda.to_device(uppers),
                               constructor=constructor)
        cpu_tree = spatial.Bvh(lowers, uppers, constructor=constructor)
        assert gpu_tree.stats() == cpu_tree.stats()
        if n:
            check_queries(cpu_tree, gpu_tree, lowers, uppers)


def test_gpu_tree_refuses_bad_boxes_and_cpu_code():
    lowers, uppers = random_boxes(100, seed=4)
    uppers[42, 1] = np.nan
    with pytest.raises(ValueError, match=r"Bvh\(lowers=\.\.\., uppers=\.\.\.\): box 42"):
        spatial.Bvh(cuda.to_device(lowers), cuda.to_device(uppers))
    with pytest.raises(ValueError, match=r"expected an array on cuda:\d .* not on cpu"):
        spatial.Bvh(cuda.to_device(lowers), uppers)
    uppers[42, 1] = lowers[42, 1]
    gpu_tree = spatial.Bvh(cuda.to_device(lowers), cuda.to_device(uppers))
    with pytest.raises(ValueError, match=r"was passed to CPU code"):
        summary_cpu(gpu_tree, lowers, uppers, False, np.zeros((100, 2), np.int64))


def test_sim_kernel_on_a_gpu_tree():
    lowers, uppers = random_boxes(5000, seed=6)
    cpu_tree = spatial.Bvh(lowers, uppers)
    gpu_tree = spatial.Bvh(cuda.to_device(lowers), cuda.to_device(uppers))
    expected = np.zeros(len(lowers), np.int32)
    sim.launch(count_overlaps_kernel, dim=len(lowers), inputs=[cpu_tree, lowers, uppers, expected])
    counts = cuda.to_device(np.zeros(len(lowers), np.int32))
    sim.launch(count_overlaps_kernel, dim=len(lowers),
               inputs=[gpu_tree, cuda.to_device(lowers), cuda.to_device(uppers), counts])
    sim.synchronize()
    assert np.array_equal(counts.copy_to_host(), expected)
