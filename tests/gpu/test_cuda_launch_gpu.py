"""Prepared CUDA launches on a real GPU: after the first launch of a signature
(through numba-cuda's dispatcher) launches pack their own parameter buffer and
call cuLaunchKernel; they must compute what the CPU computes, for every kind
of parameter, on every stream, from any thread and inside a graph capture."""

import os
import sys
import threading

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim
from numba_sim import cuda_launch, spatial
from numba_sim.launcher import launcher_for

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
cupy = pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from test_bvh import count_overlaps_kernel  # noqa: E402
from test_cuda_launch import many, many_inputs  # noqa: E402


def prepared_launch(kernel, ndim=1):
    return launcher_for(kernel, "cuda", ndim)._prepared.get(cupy.cuda.runtime.getDevice())


class NoDispatcher:
    def __getitem__(self, config):
        raise AssertionError("the dispatcher was called: the prepared launch was not used")


@pytest.fixture
def without_dispatcher(monkeypatch):
    def forbid(kernel, ndim=1):
        monkeypatch.setattr(launcher_for(kernel, "cuda", ndim), "dispatcher", NoDispatcher())
    return forbid


def test_every_parameter_kind_is_packed_like_the_dispatcher(without_dispatcher):
    n = 3000
    for k, (scale, flip) in enumerate([(1.5, False), (-2.0, True), (0.25, False)]):
        host = many_inputs(n, np, scale, flip, seed=k)
        device = many_inputs(n, cupy, scale, flip, seed=k)
        sim.launch(many, dim=n, inputs=host)
        if k == 1:
            assert isinstance(prepared_launch(many), cuda_launch.PreparedLaunch)
            without_dispatcher(many)
        sim.launch(many, dim=n, inputs=device)
        np.testing.assert_allclose(device[0].get(), host[0], rtol=1e-6, atol=1e-6)


@sim.kernel
def add_into(values: sim.array(dtype=float), amount: float):
    i = sim.tid()
    values[i] = values[i] + amount


def test_strided_arrays_take_the_dispatcher_and_stay_right():
    base = cupy.zeros(2000, dtype=np.float32)
    sim.launch(add_into, dim=2000, inputs=[base, 1.0])  # prepares the contiguous signature
    sim.launch(add_into, dim=1000, inputs=[base[::2], 2.0])
    sim.launch(add_into, dim=2000, inputs=[base, 0.5])
    expected = np.full(2000, 1.5, np.float32)
    expected[::2] += 2.0
    np.testing.assert_array_equal(base.get(), expected)


def test_launches_from_new_threads_and_on_every_kind_of_stream():
    values = cupy.zeros(4096, dtype=np.float32)
    sim.launch(add_into, dim=4096, inputs=[values, 1.0])
    errors = []

    def worker():
        try:
            sim.launch(add_into, dim=4096, inputs=[values, 1.0])
            cupy.cuda.get_current_stream().synchronize()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    for _ in range(3):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert not errors
    cupy_stream = cupy.cuda.Stream(non_blocking=True)
    numba_stream = cuda.stream()
    cupy.cuda.get_current_stream().synchronize()
    with cupy_stream:
        sim.launch(add_into, dim=4096, inputs=[values, 1.0])  # CuPy's current stream
    cupy_stream.synchronize()
    sim.launch(add_into, dim=4096, inputs=[values, 1.0], stream=cupy_stream)
    cupy_stream.synchronize()
    sim.launch(add_into, dim=4096, inputs=[values, 1.0], stream=numba_stream)
    numba_stream.synchronize()
    np.testing.assert_array_equal(values.get(), np.full(4096, 7.0, np.float32))


def test_spatial_structures_and_ids_are_packed_too(without_dispatcher):
    rng = np.random.default_rng(3)
    centres = rng.uniform(0, 1, (4000, 3))
    half = rng.uniform(0, 0.03, (4000, 3))
    lowers = (centres - half).astype(np.float32)
    uppers = (centres + half).astype(np.float32)
    expected = np.zeros(len(lowers), np.int32)
    sim.launch(count_overlaps_kernel, dim=len(lowers),
               inputs=[spatial.Bvh(lowers, uppers), lowers, uppers, expected])
    tree = spatial.Bvh(cupy.asarray(lowers), cupy.asarray(uppers))
    gl, gu = cupy.asarray(lowers), cupy.asarray(uppers)
    for k in range(3):
        counts = cupy.full(len(lowers), -1, np.int32)
        if k == 1:
            without_dispatcher(count_overlaps_kernel)
        sim.launch(count_overlaps_kernel, dim=len(lowers), inputs=[tree, gl, gu, counts])
        np.testing.assert_array_equal(counts.get(), expected)


def test_graph_capture_records_prepared_launches():
    values = cupy.zeros(1000, dtype=np.float32)
    sim.launch(add_into, dim=1000, inputs=[values, 1.0])
    sim.launch(add_into, dim=1000, inputs=[values, 1.0])
    assert isinstance(prepared_launch(add_into), cuda_launch.PreparedLaunch)
    with sim.capture() as graph:
        for k in range(10):
            sim.launch(add_into, dim=1000, inputs=[values, float(k)])
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(values.get(), np.full(1000, 2.0, np.float32))  # not run yet
    graph.launch()
    graph.launch()
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(values.get(), np.full(1000, 2.0 + 2 * 45.0, np.float32))


def test_two_dimensional_launches_are_prepared(without_dispatcher):
    @sim.kernel
    def grid(out: sim.array(dtype=sim.int32, ndim=2), base: int):
        i, j = sim.tid()
        out[i, j] = base + i * 1000 + j

    out = cupy.zeros((37, 29), np.int32)
    sim.launch(grid, dim=(37, 29), inputs=[out, 5])
    without_dispatcher(grid, 2)
    sim.launch(grid, dim=(37, 29), inputs=[out, 9])
    rows, cols = np.indices((37, 29))
    np.testing.assert_array_equal(out.get(), 9 + rows * 1000 + cols)


def test_sim_launch_takes_the_fast_path_once_prepared(monkeypatch):
    values = cupy.zeros(512, dtype=np.float32)
    sim.launch(add_into, dim=512, inputs=[values, 1.0])
    assert add_into.fast_launch is not None
    launcher = launcher_for(add_into, "cuda", 1)
    monkeypatch.setattr(launcher, "dispatcher", NoDispatcher())
    # neither the launcher (the full path) nor the dispatcher is reached
    monkeypatch.setattr(type(launcher), "__call__", lambda *a, **k: pytest.fail("full path"))
    sim.launch(add_into, dim=512, inputs=[values], outputs=[2.0])
    sim.launch(add_into, dim=256, inputs=[values, 3])  # an int for a float parameter
    expected = np.full(512, 3.0, np.float32)
    expected[:256] += 3.0
    np.testing.assert_array_equal(values.get(), expected)


def test_spatial_builds_use_prepared_launches(monkeypatch):
    from numba_sim.spatial import cuda_radix_sort, hash_grid_build_cuda

    rng = np.random.default_rng(7)
    points = rng.uniform(0, 4, (20000, 3)).astype(np.float32)
    grid = sim.HashGrid(32, 32, 32, device="cuda")
    gpu_points = cupy.asarray(points)
    grid.build(gpu_points, 0.1)  # launches (and prepares) every build kernel
    bodies = [cuda_radix_sort.radix_count_kernel, cuda_radix_sort.radix_scatter_kernel,
              cuda_radix_sort.scan_blocks_kernel, cuda_radix_sort.scan_block_sums_kernel,
              cuda_radix_sort.scan_add_kernel, cuda_radix_sort.key_offsets_kernel,
              *hash_grid_build_cuda.KERNELS]
    for body in bodies:
        launches = cuda_radix_sort.kernel(body)
        assert launches._prepared, body.__name__
        monkeypatch.setattr(launches, "dispatcher", NoDispatcher())
    grid.build(gpu_points * 1.0, 0.1)
    cpu_grid = sim.HashGrid(32, 32, 32)
    cpu_grid.build(points, 0.1)

    @sim.kernel
    def neighbours(grid: sim.uint64, points: sim.array(dtype=sim.vec3),
                   counts: sim.array(dtype=sim.int32)):
        i = sim.tid()
        c = int(0)
        for j in sim.hash_grid_query(grid, points[i], 0.1):
            c += 1
        counts[i] = c

    expected = np.zeros(len(points), np.int32)
    sim.launch(neighbours, dim=len(points), inputs=[cpu_grid.id, points, expected])
    counts = cupy.zeros(len(points), np.int32)
    sim.launch(neighbours, dim=len(points), inputs=[grid.id, gpu_points, counts])
    np.testing.assert_array_equal(counts.get(), expected)
