"""The geometry builtins on a real GPU agree with the CPU (cuda_src/geometry.h on both).

The device contracts multiply-adds into FMAs: closest points agree to float32
rounding; the triangle-triangle test away from touching cases.
"""

import os
import sys

import numpy as np
import pytest
from numba import cuda

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from test_geometry import (  # noqa: E402
    edge_cases,
    edge_edge,
    geometry_kernel,
    tri_tri,
    tri_tri_cases,
    triangle,
    triangle_cases,
)

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")


def test_gpu_matches_cpu():
    n = 4096
    edges, triangles, pairs = edge_cases(n, seed=5), triangle_cases(n, seed=6), tri_tri_cases(n, 7)
    out_edges = cuda.to_device(np.zeros((n, 3), np.float32))
    out_triangles = cuda.to_device(np.zeros((n, 2), np.float32))
    out_pairs = cuda.to_device(np.zeros((n, 2), np.int32))
    kernel = cuda.jit(geometry_kernel)
    kernel[(n + 127) // 128, 128](cuda.to_device(edges), cuda.to_device(triangles),
                                  cuda.to_device(pairs), out_edges, out_triangles, out_pairs)
    np.testing.assert_allclose(out_edges.copy_to_host(), edge_edge(edges), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out_triangles.copy_to_host(), triangle(triangles), atol=1e-5)
    agree = (out_pairs.copy_to_host() == tri_tri(pairs)).mean(axis=0)
    assert (agree > 0.99).all()  # shared-vertex pairs may round either way
