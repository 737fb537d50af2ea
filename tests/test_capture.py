"""CPU capture (``sim.capture("cpu")``, Warp's ScopedCapture / capture_begin / capture_end /
capture_launch) and recorded launches (``record_cmd=True``)."""

import threading

import numpy as np
import pytest

import numba_sim as sim


@sim.kernel
def relax(a: sim.array(dtype=float), b: float):
    i = sim.tid()
    a[i] = a[i] * 0.5 + b


@sim.kernel
def shift_rows(grid: sim.array(dtype=float, ndim=2), out: sim.array(dtype=float, ndim=2)):
    i, j = sim.tid()
    out[i, j] = grid[i, (j + 1) % grid.shape[1]] + float(i)


def direct_and_captured(steps):
    """Run *steps(a, big, grid, out)* directly and captured on equal fresh data."""
    def data():
        rng = np.random.default_rng(7)
        return [rng.random(16).astype(np.float32), rng.random(5000).astype(np.float32),
                rng.random((8, 9)).astype(np.float32), np.zeros((8, 9), np.float32)]

    direct, captured = data(), data()
    steps(*direct)
    before = [x.copy() for x in captured]
    with sim.capture("cpu") as graph:
        steps(*captured)
    for x, y in zip(captured, before):
        np.testing.assert_array_equal(x, y)  # recorded, not run (Warp's CPU capture)
    graph.launch()
    return direct, captured, graph


def mixed_steps(a, big, grid, out):
    for k in range(10):
        sim.launch(relax, dim=16, inputs=[a, float(k)])
        sim.launch(relax, dim=5000, inputs=[big, 1.0])  # the parallel launcher
        sim.launch(shift_rows, dim=(8, 9), inputs=[grid, out])
        grid, out = out, grid


def test_a_replay_gives_what_the_direct_launches_give():
    direct, captured, graph = direct_and_captured(mixed_steps)
    assert len(graph) == 30
    for x, y in zip(direct, captured):
        np.testing.assert_array_equal(x, y)
    graph.launch()  # replays read the arrays' current contents
    mixed_steps(*direct)
    for x, y in zip(direct, captured):
        np.testing.assert_array_equal(x, y)


def test_a_graph_is_launched_after_its_block_and_captures_do_not_nest():
    a = np.zeros(4, np.float32)
    with sim.capture("cpu") as graph:
        sim.launch(relax, dim=4, inputs=[a, 1.0])
        with pytest.raises(RuntimeError, match="still being captured"):
            graph.launch()
        with pytest.raises(RuntimeError, match="already active on this thread"):
            with sim.capture("cpu"):
                pass
    graph.launch()
    np.testing.assert_array_equal(a, [1.0] * 4)


def test_a_capture_records_only_its_own_thread():
    a, b = np.zeros(4, np.float32), np.zeros(4, np.float32)
    with sim.capture("cpu") as graph:
        worker = threading.Thread(target=lambda: sim.launch(relax, dim=4, inputs=[b, 2.0]))
        worker.start()
        worker.join()
        sim.launch(relax, dim=4, inputs=[a, 1.0])
    np.testing.assert_array_equal(b, [2.0] * 4)  # ran: not captured
    assert len(graph) == 1


def test_warps_capture_spellings():
    a = np.zeros(4, np.float32)
    with sim.ScopedCapture(device="cpu") as capture:
        assert capture.active
        sim.launch(relax, dim=4, inputs=[a, 1.0])
    assert not capture.active
    sim.capture_launch(capture.graph)
    np.testing.assert_array_equal(a, [1.0] * 4)
    sim.capture_begin("cpu")
    sim.launch(relax, dim=4, inputs=[a, 1.0])
    graph = sim.capture_end("cpu")
    sim.capture_launch(graph)
    np.testing.assert_array_equal(a, [1.5] * 4)
    with pytest.raises(RuntimeError, match="no capture on cpu was begun"):
        sim.capture_end("cpu")
    with pytest.raises(TypeError, match="graph: expected a graph made by sim.capture"):
        sim.capture_launch(object())
    with pytest.raises(ValueError, match="external"):
        sim.ScopedCapture(external=True)


def test_a_recorded_launch_repeats_the_launch():
    a, b = np.zeros(16, np.float32), np.zeros(16, np.float32)
    recorded = sim.launch(relax, dim=16, inputs=[a, 1.0], record_cmd=True)
    np.testing.assert_array_equal(a, 0.0)  # not run yet
    for _ in range(3):
        recorded.launch()
        sim.launch(relax, dim=16, inputs=[b, 1.0])
    np.testing.assert_array_equal(a, b)
    assert sim.launch(relax, dim=0, inputs=[a, 1.0], record_cmd=True).launch() is None
    with pytest.raises(TypeError, match="relax takes 2 arguments"):
        sim.launch(relax, dim=16, inputs=[a], record_cmd=True)

