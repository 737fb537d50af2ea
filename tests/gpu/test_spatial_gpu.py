"""Spatial types, spatial algebra and generic vector sizes on a real GPU agree with the CPU:
the kernel of tests/test_value_types_generic.py, launched on CuPy arrays, against its CPU
launch (within a few ulps: NVVM contracts multiply-adds that the CPU rounds separately)."""

import os
import sys

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
cupy = pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from test_value_types_generic import _spatial_inputs, _spatial_kernel  # noqa: E402


def test_spatial_kernel_on_gpu_matches_cpu():
    host = _spatial_inputs()
    device = [cupy.asarray(a) for a in host]
    sim.launch(_spatial_kernel, dim=8, inputs=host, device="cpu")
    sim.launch(_spatial_kernel, dim=8, inputs=device, device="cuda")
    sim.synchronize()
    for on_cpu, on_gpu in zip(host[3:], device[3:]):
        np.testing.assert_allclose(on_gpu.get(), on_cpu, rtol=2e-5, atol=2e-5)
