"""The builtin adjoints on a real GPU agree with the CPU: the per-family functions of
tests/test_autodiff_ops_compiled.py run as one-thread CUDA kernels and their outputs are
compared with the same functions compiled for the CPU (float64; libdevice's functions and
NVVM's fused multiply-adds may differ from libm's in the last bits)."""

import numpy as np
import pytest
from numba import cuda, njit
from test_autodiff_ops_compiled import FAMILIES, generated

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")


@pytest.mark.parametrize("family", list(FAMILIES))
def test_adjoints_on_gpu_match_cpu(family):
    fn, expected = generated(family)
    on_cpu = np.full(len(expected), np.nan)
    njit(fn)(on_cpu)
    out = cuda.to_device(np.full(len(expected), np.nan))
    cuda.jit(extensions=[sim.cuda_args])(fn)[1, 1](out)
    on_gpu = out.copy_to_host()
    worst = np.argmax(np.abs(on_gpu - on_cpu))
    assert np.allclose(on_gpu, on_cpu, rtol=1e-9, atol=1e-9), (
        f"{family}: worst at {worst}: GPU {on_gpu[worst]} vs CPU {on_cpu[worst]}")
