"""Sphere and capsule queries, kind-erased query variables and mesh_get_bvh on a real GPU: the same loops
compiled for CUDA and for the CPU give the same answers (trees built on the host, SAH and
median, are the same on both devices; the traversal and the exact tests are one source).
"""

import numba
import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import spatial

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")


def tally_body(query):
    count = 0
    total = 0
    for j in query:
        count += 1
        total += j
    return count, total


def make_answers(tally):
    def answers(bvh, mesh, c, radius, kind, out):
        """Counts and index sums of the sphere hits (Bvh, Mesh, the Mesh's BVH), of a
        kind-erased query and of a capsule at centre c, into the row out."""
        out[0], out[1] = tally(spatial.bvh_query_sphere(bvh, c, radius))
        out[2], out[3] = tally(spatial.mesh_query_sphere(mesh, c, radius))
        out[4], _ = tally(spatial.bvh_query_sphere(spatial.mesh_get_bvh(mesh), c, radius))
        if kind == 0:
            query = spatial.bvh_query_aabb(bvh, c - sim.vec3(radius), c + sim.vec3(radius))
        elif kind == 1:
            query = spatial.bvh_query_ray(bvh, c, sim.vec3(1.0, 0.5, 0.25))
        else:
            query = spatial.bvh_query_sphere(bvh, c, radius)
        out[5], _ = tally(query)
        out[6], _ = tally(spatial.bvh_query_capsule(bvh, c, sim.vec3(0.5, -0.25, 1.0), radius))

    return answers


answers_cpu = numba.njit(make_answers(numba.njit(tally_body)))
answers_gpu = cuda.jit(device=True)(make_answers(cuda.jit(device=True)(tally_body)))


@numba.njit
def run_cpu(bvh, mesh, centers, radius, out):
    for i in range(centers.shape[0]):
        c = sim.vec3(centers[i, 0], centers[i, 1], centers[i, 2])
        answers_cpu(bvh, mesh, c, radius, i % 3, out[i])


@cuda.jit(extensions=[sim.cuda_args])
def run_gpu(bvh, mesh, centers, radius, out):
    i = cuda.grid(1)
    if i < centers.shape[0]:
        c = sim.vec3(centers[i, 0], centers[i, 1], centers[i, 2])
        answers_gpu(bvh, mesh, c, radius, i % 3, out[i])


@pytest.mark.parametrize("constructor", ["sah", "median"])
def test_sphere_and_runtime_kind_queries_on_the_gpu_equal_the_cpu(constructor):
    rng = np.random.default_rng(0)
    lowers = (rng.random((3000, 3)) * 8.0).astype(np.float32)
    uppers = lowers + (rng.random((3000, 3)) * 0.5).astype(np.float32)
    tris = (rng.random((2000, 1, 3)) * 8.0 + (rng.random((2000, 3, 3)) - 0.5) * 0.6)
    points = tris.reshape(-1, 3).astype(np.float32)
    faces = np.arange(len(points), dtype=np.int32)
    centers = (rng.random((4000, 3)) * 8.0).astype(np.float32)
    radius = np.float32(0.6)

    cpu_bvh = spatial.Bvh(lowers, uppers, constructor=constructor)
    cpu_mesh = spatial.Mesh(points, faces, bvh_constructor=constructor)
    expected = np.zeros((len(centers), 7), np.int64)
    run_cpu(cpu_bvh, cpu_mesh, centers, radius, expected)
    assert expected[:, 0].sum() > 0 and expected[:, 2].sum() > 0

    gpu_bvh = spatial.Bvh(cuda.to_device(lowers), cuda.to_device(uppers), constructor=constructor)
    gpu_mesh = spatial.Mesh(cuda.to_device(points), cuda.to_device(faces),
                            bvh_constructor=constructor)
    got = cuda.to_device(np.full((len(centers), 7), -1, np.int64))
    run_gpu[(len(centers) + 127) // 128, 128](gpu_bvh, gpu_mesh, cuda.to_device(centers), radius,
                                              got)
    np.testing.assert_array_equal(got.copy_to_host(), expected)
