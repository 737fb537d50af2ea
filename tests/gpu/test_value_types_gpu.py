"""Value types on a real GPU: kernels taking value arguments agree with the CPU."""

import numba
import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim.types import CLASSES, VALUE_TABLE

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")




@pytest.mark.parametrize("spec", [s for s in VALUE_TABLE if s.is_float], ids=lambda s: s.name)
def test_value_arguments_on_gpu_match_cpu(spec):
    cls = CLASSES[spec]
    rng = np.random.default_rng(spec.size)
    a = cls(*rng.uniform(-2, 2, spec.size).tolist())
    b = cls(*rng.uniform(-2, 2, spec.size).tolist())
    s = spec.scalar_type(1.5)
    is_matrix = spec.kind == "mat"

    def kernel_body(out, a, b, s):
        c = (a + b) * s - (-a) / s
        for k in range(out.shape[0]):
            out[k] = 0
        out[0] = c[0, 0] if is_matrix else c[0]
        out[1] = c[1, 1] if is_matrix else c[1]
        out[2] = 1 if a == b else 0

    expected = np.zeros(3, dtype=spec.dtype)
    numba.njit(kernel_body)(expected, a, b, s)
    kernel = cuda.jit(extensions=[sim.cuda_args])(kernel_body)
    out = cuda.to_device(np.full(3, -1, dtype=spec.dtype))
    kernel[1, 1](out, a, b, s)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-6)


def test_vec3_builtins_on_gpu_match_cpu():
    def body(out, points):
        i = 0
        while i < points.shape[0]:
            p = sim.vec3(points[i, 0], points[i, 1], points[i, 2])
            n = sim.normalize(p)
            c = sim.cross(p, sim.vec3(0.0, 0.0, 1.0))
            out[i, 0] = sim.dot(p, n)
            out[i, 1] = sim.length(c)
            out[i, 2] = n.y
            i += 1

    points = np.random.default_rng(3).normal(size=(256, 3)).astype(np.float32)
    expected = np.zeros_like(points)
    numba.njit(body)(expected, points)
    out = cuda.to_device(np.zeros_like(points))
    cuda.jit(body)[1, 1](out, cuda.to_device(points))
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-5, atol=1e-6)
