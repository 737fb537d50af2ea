"""CUDA runtime on a real GPU: CuPy / Numba / DLPack arrays, streams, cuda:N,
graph capture, and kernels agreeing with the CPU."""

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
cupy = pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")


@sim.kernel
def integrate(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
    i = sim.tid()
    v[i] = v[i] + sim.vec3(0.0, -9.8, 0.0) * dt
    x[i] = x[i] + v[i] * dt


@sim.kernel
def grid_2d(out: sim.array(dtype=sim.int32, ndim=2)):
    i, j = sim.tid()
    out[i, j] = i * 1000 + j


def particles(n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (n, 3)).astype(np.float32),
            rng.uniform(-1, 1, (n, 3)).astype(np.float32))


def test_cupy_arrays_match_the_cpu():
    x, v = particles(100_000)
    gx, gv = cupy.asarray(x), cupy.asarray(v)
    sim.launch(integrate, dim=len(x), inputs=[x, v, 0.01])
    sim.launch(integrate, dim=len(x), inputs=[gx, gv, 0.01])
    sim.synchronize()
    np.testing.assert_allclose(gx.get(), x, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gv.get(), v, rtol=1e-6, atol=1e-6)


def test_zeros_on_cuda_is_cupy_and_nd_launches_unravel():
    out = sim.zeros((37, 29), dtype=sim.int32, device="cuda")
    assert isinstance(out, cupy.ndarray) and out.shape == (37, 29)
    sim.launch(grid_2d, dim=(37, 29), inputs=[out])
    rows, cols = np.indices((37, 29))
    np.testing.assert_array_equal(out.get(), rows * 1000 + cols)


def test_numba_device_arrays_and_explicit_device():
    x, v = particles(1000)
    dx, dv = cuda.to_device(x), cuda.to_device(v)
    sim.launch(integrate, dim=1000, inputs=[dx, dv, 0.01], device="cuda:0")
    sim.launch(integrate, dim=1000, inputs=[x, v, 0.01])
    np.testing.assert_allclose(dx.copy_to_host(), x, rtol=1e-6, atol=1e-6)


def test_launches_follow_cupys_current_stream_and_explicit_streams():
    x, v = particles(50_000)
    gx, gv = cupy.asarray(x), cupy.asarray(v)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        for _ in range(10):
            sim.launch(integrate, dim=len(x), inputs=[gx, gv, 0.01])
    other = cupy.cuda.Stream(non_blocking=True)
    # order the two streams: `other` waits for the ten launches on `stream` (no race)
    other.wait_event(stream.record())
    sim.launch(integrate, dim=len(x), inputs=[gx, gv, 0.01], stream=other)
    other.synchronize()
    for _ in range(11):
        sim.launch(integrate, dim=len(x), inputs=[x, v, 0.01])
    np.testing.assert_allclose(gx.get(), x, rtol=1e-5, atol=1e-5)


def test_graph_capture_replays_the_eager_result():
    x, v = particles(10_000)
    gx, gv = cupy.asarray(x), cupy.asarray(v)
    sim.launch(integrate, dim=len(x), inputs=[gx, gv, 0.01])  # compile outside the capture
    with sim.capture() as graph:
        for _ in range(4):
            sim.launch(integrate, dim=len(x), inputs=[gx, gv, 0.01])
    graph.launch()
    cupy.cuda.get_current_stream().synchronize()
    for _ in range(5):
        sim.launch(integrate, dim=len(x), inputs=[x, v, 0.01])
    np.testing.assert_allclose(gx.get(), x, rtol=1e-5, atol=1e-5)


def test_dlpack_producers_are_accepted_zero_copy():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    x, v = particles(1000)
    tx, tv = torch.as_tensor(x, device="cuda"), torch.as_tensor(v, device="cuda")
    sim.launch(integrate, dim=1000, inputs=[tx, tv, 0.01])
    torch.cuda.synchronize()
    sim.launch(integrate, dim=1000, inputs=[x, v, 0.01])
    np.testing.assert_allclose(tx.cpu().numpy(), x, rtol=1e-6, atol=1e-6)
