"""Adjoint kernels on a real GPU: the same gradients as on the CPU (tape, CuPy arrays)."""

import sys
import os

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
cupy = pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import test_autodiff_kernels as cases  # noqa: E402  (the kernels and their inputs)

GPU_CASES = ["arithmetic", "vectors", "branches", "running_product", "sum_used_after",
             "loop_with_break", "while_loop", "atomics", "noisy_product"]


def _gradient_on(device, case, x, weights):
    kernel, dim, _, arguments, _, shape = cases.CASES[case]
    start = np.zeros(shape)
    if case == "atomics":
        start[2] = -10.0
    move = (lambda a: cupy.asarray(a)) if device == "cuda" else (lambda a: a.copy())
    xd = sim.requires_grad(move(x))
    yd = sim.requires_grad(move(start))
    tape = sim.Tape()
    with tape:
        sim.launch(kernel, dim, inputs=arguments(xd, yd))
    tape.backward(grads=[(yd, move(weights))])
    gradient = sim.grad(xd)
    return cupy.asnumpy(gradient) if device == "cuda" else gradient


@pytest.mark.parametrize("case", GPU_CASES)
def test_gpu_gradients_equal_the_cpus(case):
    x = cases.CASES[case][2].astype(np.float64)
    weights = np.random.default_rng(3).uniform(0.5, 1.5, cases.CASES[case][5])
    cpu = _gradient_on("cpu", case, x, weights)
    gpu = _gradient_on("cuda", case, x, weights)
    assert np.any(cpu != 0)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-9, atol=1e-12)
