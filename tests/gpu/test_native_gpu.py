"""cuda_src/ on a real GPU: kernels calling native builtins agree with the CPU."""

import numba
import numpy as np
import pytest
from numba import cuda

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")


@numba.jit(nopython=True)
def closest_point_row(c):
    return sim.closest_point_on_segment(sim.vec3(c[0], c[1], c[2]), sim.vec3(c[3], c[4], c[5]),
                                        sim.vec3(c[6], c[7], c[8]))


@numba.njit
def closest_points_cpu(cases):
    out = np.empty((cases.shape[0], 3), dtype=np.float32)
    for i in range(cases.shape[0]):
        q = closest_point_row(cases[i])
        out[i, 0], out[i, 1], out[i, 2] = q.x, q.y, q.z
    return out


def closest_points_kernel(cases, out):
    i = cuda.grid(1)
    if i < cases.shape[0]:
        c = cases[i]
        q = sim.closest_point_on_segment(sim.vec3(c[0], c[1], c[2]), sim.vec3(c[3], c[4], c[5]),
                                         sim.vec3(c[6], c[7], c[8]))
        out[i, 0], out[i, 1], out[i, 2] = q.x, q.y, q.z


@pytest.mark.parametrize("lto", [None, True, False], ids=["default", "lto", "no-lto"])
def test_gpu_matches_cpu(lto):
    rng = np.random.default_rng(0)
    cases = rng.uniform(-10.0, 10.0, size=(4096, 9)).astype(np.float32)
    cases[::10, 3:6] = cases[::10, 0:3]  # degenerate segments
    kernel = cuda.jit(lto=lto)(closest_points_kernel)
    out = cuda.device_array((cases.shape[0], 3), dtype=np.float32)
    kernel[(cases.shape[0] + 127) // 128, 128](cuda.to_device(cases), out)
    # FMA contraction on the device: agreement to float32 rounding, not bit for bit
    np.testing.assert_allclose(out.copy_to_host(), closest_points_cpu(cases), rtol=1e-5, atol=1e-5)
