"""Warp's host spellings on a real GPU: ``sim.array(data, device="cuda")``,
``sim.ScopedDevice("cuda:0")``, ``sim.get_device("cuda")`` and a kernel launched on what
they return, compared with the CPU."""

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
cupy = pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")


@sim.kernel
def shift(points: sim.array(dtype=sim.vec3), grid: sim.array2d(dtype=float),
          out: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    out[i] = points[i] * 2.0 + sim.vec3(grid[i, 0], grid[i, 1], 0.0)


def test_arrays_from_data_on_cuda_match_the_cpu():
    rng = np.random.default_rng(3)
    data = rng.uniform(-1, 1, (1000, 3))
    grid = rng.uniform(-1, 1, (1000, 2))
    results = {}
    for device in ("cpu", "cuda"):
        points = sim.array(data, dtype=sim.vec3, device=device)
        g = sim.array2d(grid, dtype=float, device=device)
        out = sim.zeros(1000, dtype=sim.vec3, device=device)
        assert (device == "cuda") == isinstance(points, cupy.ndarray)
        sim.launch(shift, dim=1000, inputs=[points, g, out])
        sim.synchronize()
        results[device] = sim.to_numpy(out)
    np.testing.assert_allclose(results["cuda"], results["cpu"], rtol=1e-6, atol=1e-6)


def test_scoped_device_allocates_on_the_gpu():
    device = sim.get_device("cuda")
    assert device.is_cuda and device.ordinal == cupy.cuda.Device().id
    major, minor = cuda.get_current_device().compute_capability
    assert device.arch == 10 * major + minor
    with sim.ScopedDevice("cuda:0") as scoped:
        assert sim.get_device() == scoped == "cuda:0"
        a = sim.zeros(4, dtype=sim.vec3)
        b = sim.array([1.0, 2.0, 3.0], dtype=sim.vec3)
        assert isinstance(a, cupy.ndarray) and a.shape == (4, 3)
        assert isinstance(b, cupy.ndarray) and b.shape == (1, 3)
    assert isinstance(sim.zeros(4), np.ndarray)
    host = sim.array(cupy.arange(6, dtype=cupy.float32), dtype=sim.vec3, device="cpu")
    np.testing.assert_array_equal(host, np.arange(6, dtype=np.float32).reshape(2, 3))
