"""Warp's mesh point-query variants on a real GPU answer like the CPU mesh.

mesh_query_point_no_sign, mesh_query_point_sign_normal,
mesh_query_furthest_point_no_sign, mesh_query_point_sign_winding_number
(the winding number's node expansions built level by level on the GPU),
mesh_query_point_sign_parity, mesh_query_ray_count_intersections and
mesh_query_ray_anyhit from a
CUDA kernel against the same loop compiled for the CPU, for a tree built the
same way (SAH: built on the host). The device contracts multiply-adds into
FMAs, so distances agree to float32 rounding and signs away from the surface.
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
from mesh_shapes import closest_points, icosphere, torus, winding_numbers  # noqa: E402

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")


def variants(mesh, p, out):
    a = sim.mesh_query_point_no_sign(mesh, p, 100.0)
    b = sim.mesh_query_point_sign_normal(mesh, p, 100.0)
    c = sim.mesh_query_furthest_point_no_sign(mesh, p, 0.0)
    d = sim.mesh_query_point_sign_winding_number(mesh, p, 100.0)
    out[0] = sim.length(sim.mesh_eval_position(mesh, a.face, a.u, a.v) - p)
    out[1] = b.sign
    out[2] = sim.length(sim.mesh_eval_position(mesh, c.face, c.u, c.v) - p)
    out[3] = d.sign
    e = sim.mesh_query_point_sign_parity(mesh, p, 100.0, 3)
    out[4] = 1.0 if (a.result and b.result and c.result and d.result and e.result) else 0.0
    out[5] = e.sign
    out[6] = float(sim.mesh_query_ray_count_intersections(mesh, p, sim.vec3(0.3, 1.0, 0.2)))
    out[7] = 1.0 if sim.mesh_query_ray_anyhit(mesh, p, sim.vec3(-1.0, 0.1, 0.2), 0.5) else 0.0


variants_on_cpu = numba.njit(variants)
variants_on_gpu = cuda.jit(device=True)(variants)


@numba.njit
def queries_cpu(mesh, queries, out):
    for i in range(queries.shape[0]):
        variants_on_cpu(mesh, sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2]), out[i])


@cuda.jit(extensions=[sim.cuda_args])
def queries_kernel(mesh, queries, out):
    i = cuda.grid(1)
    if i < queries.shape[0]:
        variants_on_gpu(mesh, sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2]), out[i])


@pytest.mark.parametrize("shape", ["icosphere", "torus"])
def test_gpu_variants_match_cpu(shape):
    points, faces = icosphere(3) if shape == "icosphere" else torus()
    rng = np.random.default_rng(3)
    queries = rng.uniform(-1.6, 1.6, (3000, 3)).astype(np.float32)
    cpu_mesh = spatial.Mesh(points, faces, bvh_constructor="sah", support_winding_number=True)
    gpu_mesh = spatial.Mesh(cuda.to_device(points), cuda.to_device(faces), bvh_constructor="sah",
                            support_winding_number=True)
    expected = np.zeros((len(queries), 8), np.float32)
    queries_cpu(cpu_mesh, queries, expected)
    got = cuda.to_device(np.zeros((len(queries), 8), np.float32))
    queries_kernel[(len(queries) + 127) // 128, 128](gpu_mesh, cuda.to_device(queries), got)
    got = got.copy_to_host()
    assert (got[:, 4] == 1.0).all() and (expected[:, 4] == 1.0).all()
    assert np.allclose(got[:, [0, 2]], expected[:, [0, 2]], rtol=1e-5, atol=1e-6)
    far = np.sqrt(closest_points(points, faces, queries)[0]) > 1e-3
    assert np.array_equal(got[far, 1], expected[far, 1])
    clear = far & (np.abs(winding_numbers(points, faces, queries) - 0.5) > 0.05)
    assert np.array_equal(got[clear, 3], expected[clear, 3])
    assert np.array_equal(got[clear, 5], expected[clear, 5])  # parity: inside is inside
    assert (got[:, 6] == expected[:, 6]).mean() > 0.999  # grazing rays may differ in the FMAs
    assert (got[:, 7] == expected[:, 7]).mean() > 0.999
    # refits rebuild the expansions on the GPU too
    moved = (points * np.float32(1.3)).astype(np.float32)
    cpu_mesh.points = moved
    gpu_mesh.points = cuda.to_device(moved)
    queries_cpu(cpu_mesh, queries, expected)
    queries_kernel[(len(queries) + 127) // 128, 128](gpu_mesh, cuda.to_device(queries), got)
    clear = np.abs(winding_numbers(moved, faces, queries) - 0.5) > 0.05
    assert np.array_equal(got.copy_to_host()[clear, 3], expected[clear, 3])
