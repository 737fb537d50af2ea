"""sim.Mesh on a real GPU: CUDA meshes answer like CPU meshes.

The per-face steps and the traversals are the same code on both devices;
for a tree built the same way (SAH and median: built on the host; LBVH: the
same steps), closest points, signs, rays and box queries from CUDA kernels
must equal those of the same loops compiled for the CPU (vertex normals are
sums of float atomics on the GPU, so signs are compared away from the surface).
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
from mesh_shapes import closest_points, cube, icosphere, torus  # noqa: E402

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")


def answers(mesh, p, d, out):
    """Point, ray and box queries at p (ray direction d) into the row out."""
    q = sim.mesh_query_point(mesh, p, 100.0)
    r = sim.mesh_query_ray(mesh, p, d, 100.0)
    count = 0
    for f in sim.mesh_query_aabb(mesh, p - sim.vec3(0.1), p + sim.vec3(0.1)):
        count += 1
    out[0] = q.sign
    out[1] = q.face
    out[2] = sim.length(sim.mesh_eval_position(mesh, q.face, q.u, q.v) - p)
    out[3] = r.t if r.result else -1.0
    out[4] = r.face
    out[5] = r.sign
    out[6] = count


answers_on_cpu = numba.njit(answers)
answers_on_gpu = cuda.jit(device=True)(answers)


@numba.njit
def queries_cpu(mesh, queries, directions, out):
    for i in range(queries.shape[0]):
        p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        d = sim.vec3(directions[i, 0], directions[i, 1], directions[i, 2])
        answers_on_cpu(mesh, p, d, out[i])


@cuda.jit(extensions=[sim.cuda_args])
def queries_kernel(mesh, queries, directions, out):
    i = cuda.grid(1)
    if i < queries.shape[0]:
        p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        d = sim.vec3(directions[i, 0], directions[i, 1], directions[i, 2])
        answers_on_gpu(mesh, p, d, out[i])


def run_both(points, faces, constructor, n=4000, seed=0):
    rng = np.random.default_rng(seed)
    queries = rng.uniform(-1.6, 1.6, (n, 3)).astype(np.float32)
    directions = rng.normal(size=(n, 3)).astype(np.float32)
    cpu_mesh = spatial.Mesh(points, faces, bvh_constructor=constructor)
    gpu_mesh = spatial.Mesh(cuda.to_device(points), cuda.to_device(faces),
                            bvh_constructor=constructor)
    expected = np.zeros((n, 7), np.float32)
    queries_cpu(cpu_mesh, queries, directions, expected)
    got = cuda.to_device(np.zeros((n, 7), np.float32))
    queries_kernel[(n + 127) // 128, 128](gpu_mesh, cuda.to_device(queries),
                                          cuda.to_device(directions), got)
    return queries, got.copy_to_host(), expected, gpu_mesh


@pytest.mark.parametrize("constructor", ["sah", "median", "lbvh"])
@pytest.mark.parametrize("shape", ["cube", "icosphere", "torus"])
def test_gpu_mesh_answers_like_the_cpu_mesh(shape, constructor):
    points, faces = {"cube": cube, "icosphere": lambda: icosphere(4), "torus": torus}[shape]()
    queries, got, expected, _ = run_both(points, faces, constructor)
    assert np.allclose(got[:, 2], expected[:, 2], rtol=1e-5, atol=1e-6)  # distances
    far = np.sqrt(closest_points(points, faces, queries)[0]) > 1e-4
    assert np.array_equal(got[far, 0], expected[far, 0])  # signs
    assert np.allclose(got[:, 3], expected[:, 3], rtol=1e-5, atol=1e-6)  # ray t
    assert np.array_equal(got[:, 5], expected[:, 5]) and np.array_equal(got[:, 6], expected[:, 6])


def test_default_gpu_mesh_uses_lbvh_and_refits_on_the_gpu():
    points, faces = torus()
    gpu_points = cuda.to_device(points)
    gpu_mesh = spatial.Mesh(gpu_points, cuda.to_device(faces))
    assert gpu_mesh.bvh_constructor == "lbvh"
    points *= 1.3
    gpu_points.copy_to_device(points)
    gpu_mesh.refit()
    cpu_mesh = spatial.Mesh(points, faces, bvh_constructor="lbvh")
    rng = np.random.default_rng(1)
    queries = rng.uniform(-2, 2, (3000, 3)).astype(np.float32)
    directions = rng.normal(size=(3000, 3)).astype(np.float32)
    expected = np.zeros((3000, 7), np.float32)
    queries_cpu(cpu_mesh, queries, directions, expected)
    got = cuda.to_device(np.zeros((3000, 7), np.float32))
    queries_kernel[24, 128](np.uint64(gpu_mesh.id), cuda.to_device(queries),
                            cuda.to_device(directions), got)
    assert np.allclose(got.copy_to_host()[:, 2], expected[:, 2], rtol=1e-5, atol=1e-6)


def test_gpu_mesh_errors():
    points, faces = cube()
    bad = faces.copy()
    bad[3, 1] = 99
    with pytest.raises(ValueError, match=r"Mesh\(indices=\.\.\.\): index 99 of triangle 3"):
        spatial.Mesh(cuda.to_device(points), cuda.to_device(bad))
    with pytest.raises(ValueError, match=r"Mesh\(indices=\.\.\.\): expected an array on cuda"):
        spatial.Mesh(cuda.to_device(points), faces)
    nan_points = points.copy()
    nan_points[5, 2] = np.nan
    with pytest.raises(ValueError, match=r"Mesh\(points=\.\.\.\): points\[5\]"):
        spatial.Mesh(cuda.to_device(nan_points), cuda.to_device(faces))
    mesh = spatial.Mesh(cuda.to_device(points), cuda.to_device(faces))
    with pytest.raises(ValueError, match=r"was passed to CPU code"):
        queries_cpu(mesh, points, points, np.zeros((8, 7), np.float32))
