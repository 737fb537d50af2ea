"""Issue 17's builtins on a real GPU, compared with the CPU: the scalar builtins, noise,
the decompositions, atomic_exch / atomic_cas, print and the expectations, and the
kernel-language forms (None arrays, static, reversed ranges, float globals).

Integer results, selections and the hash-driven noise lattice must match bit for bit;
float results within float32 rounding (NVVM contracts multiply-adds into FMAs and
libdevice's log2f / log10f may differ from libm by an ulp).
"""

import numpy as np
import pytest
from numba import cuda
from test_builtins_more import FLOAT_EXPRESSIONS, INT_EXPRESSIONS, N, exchange_inputs, exchanges
from test_builtins_more import inputs as scalar_inputs
from test_builtins_more import kernel_source as scalar_source
from test_builtins_more import load_kernel
from test_kernel_forms import forms_inputs, make_forms_kernel
from test_linalg import inputs as linalg_inputs
from test_linalg import load as load_linalg
from test_noise import EXPRESSIONS as NOISE_EXPRESSIONS
from test_noise import inputs as noise_inputs
from test_noise import load as load_noise

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")


def on_both(kernel, dim, arrays):
    """(CPU results, GPU results) of *kernel* on copies of *arrays* (None stays None)."""
    cpu = [None if a is None else a.copy() for a in arrays]
    sim.launch(kernel, dim=dim, inputs=cpu)
    gpu = [None if a is None else cuda.to_device(a) for a in arrays]
    sim.launch(kernel, dim=dim, inputs=gpu)
    sim.synchronize()
    return cpu, [None if a is None else a.copy_to_host() for a in gpu]


def test_scalar_builtins_on_the_gpu(tmp_path):
    kernel = load_kernel(tmp_path, "gpu_more_builtins", scalar_source("sim"), "sim.kernel")
    s, ints = scalar_inputs()
    arrays = [s, ints, np.zeros((N, len(FLOAT_EXPRESSIONS)), np.float32),
              np.zeros((N, len(INT_EXPRESSIONS)), np.int32)]
    cpu, gpu = on_both(kernel, N, arrays)
    np.testing.assert_allclose(gpu[2], cpu[2], rtol=1e-6, atol=1e-6, equal_nan=True)
    rows = ints[:, 0] != -2**31  # INT_MIN / -1 is undefined
    np.testing.assert_array_equal(gpu[3][rows], cpu[3][rows])


def test_noise_on_the_gpu(tmp_path):
    kernel = load_noise(tmp_path, "sim", "sim.kernel")
    seeds, points = noise_inputs()
    cpu, gpu = on_both(kernel, len(seeds), [seeds, points,
                                            np.zeros((len(seeds), len(NOISE_EXPRESSIONS)),
                                                     np.float32)])
    np.testing.assert_allclose(gpu[2], cpu[2], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_decompositions_on_the_gpu(tmp_path, dtype):
    kernel = load_linalg(tmp_path, "sim", "sim.kernel", dtype)
    arrays = linalg_inputs(dtype)
    cpu, gpu = on_both(kernel, len(arrays[0]), arrays)
    tolerance = 1e-3 if dtype == np.float32 else 1e-9
    for ours, theirs in zip(gpu[2:], cpu[2:]):
        np.testing.assert_allclose(ours, theirs, atol=tolerance)


def test_exchange_and_compare_and_swap_on_the_gpu():
    n = 1 << 16
    ints, floats, vectors, olds, winners, vold = arrays = [cuda.to_device(a)
                                                           for a in exchange_inputs(n)]
    sim.launch(exchanges, dim=n, inputs=arrays)
    sim.synchronize()
    ints, olds, winners = ints.copy_to_host(), olds.copy_to_host(), winners.copy_to_host()
    assert sorted(olds.tolist() + [int(ints[0])]) == list(range(n + 1))
    assert ints[1] == winners[0] and 1 <= winners[0] <= n
    assert floats.copy_to_host().tolist() == [[7.0, 0.0]]
    assert vectors.copy_to_host().tolist() == [[4.0, 2.0, 4.0]]


def test_print_and_expectations_on_the_gpu(capfd):
    @sim.kernel
    def report(a: sim.array(dtype=float)):
        i = sim.tid()
        print(sim.vec3(a[i], 2.0, 3.0))
        sim.printf("gpu %d %g %d %s\n", i, a[i], 7, "text")
        sim.expect_eq(a[i], 2.0)

    sim.launch(report, dim=1, inputs=[cuda.to_device(np.array([1.5], np.float32))])
    sim.synchronize()
    out = capfd.readouterr().out
    assert "1.5 2 3 \n" in out and "gpu 0 1.5 7 text\n" in out
    assert "Error, expect_eq() failed:\n\t Expected: 2\n\t Actual: 1.5\n" in out


def test_kernel_forms_on_the_gpu():
    kernel = make_forms_kernel()
    arrays = forms_inputs(None, np.ones((2, 4), np.float32))
    cpu, gpu = on_both(kernel, 1, arrays)
    np.testing.assert_array_equal(gpu[0], cpu[0])
    np.testing.assert_array_equal(gpu[1], cpu[1])
