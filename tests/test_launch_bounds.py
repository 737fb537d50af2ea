"""A launch over more threads than an array indexed with the thread index has elements is
refused before it runs (release mode would read and write past the array's end)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numba_sim as sim


@sim.kernel
def integrate(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
    i = sim.tid()
    v[i] = v[i] + sim.vec3(0.0, -9.8, 0.0) * dt
    x[i] = x[i] + v[i] * dt


@sim.kernel
def guarded(x: sim.array(dtype=float), n: int):
    i = sim.tid()
    if i >= n:
        return
    x[i] = 1.0


@sim.kernel
def inside_a_branch(x: sim.array(dtype=float), n: int):
    i = sim.tid()
    if i < n:
        x[i] = 1.0


@sim.kernel
def plane(a: sim.array(dtype=float, ndim=2), b: sim.array(dtype=float)):
    i, j = sim.tid()
    a[i, j] = float(i + j)
    b[j] = 2.0


@sim.kernel
def shifted(x: sim.array(dtype=float), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i + 1] = x[i]


@sim.kernel
def index_reassigned(x: sim.array(dtype=float)):
    i = sim.tid()
    i = i // 2
    x[i] = 1.0


def test_what_each_kernel_indexes_with_its_thread_index():
    assert sorted(integrate.tid_indexed) == [(0, 0, 0), (1, 0, 0)]
    assert guarded.tid_indexed == [] and inside_a_branch.tid_indexed == []
    assert sorted(plane.tid_indexed) == [(0, 0, 0), (0, 1, 1), (1, 0, 1)]
    assert shifted.tid_indexed == [(0, 0, 0)]  # x[i]; y[i + 1] is not the thread index
    assert index_reassigned.tid_indexed == []


def test_a_launch_past_an_array_is_refused_naming_the_parameter_and_nothing_runs():
    x, v = np.zeros((10, 3), np.float32), np.ones((8, 3), np.float32)
    with pytest.raises(ValueError, match=r"integrate: dim=10 .* parameter 'v' .* 8 elements"):
        sim.launch(integrate, dim=10, inputs=[x, v, 0.1])
    assert not x.any() and (v == 1.0).all()  # nothing ran
    sim.launch(integrate, dim=8, inputs=[x, v, 0.1])  # within both: runs
    assert (x[:8] != 0).all() and not x[8:].any()


def test_2d_launches_are_checked_on_each_axis():
    sim.launch(plane, dim=(3, 4), inputs=[np.zeros((3, 4), np.float32), np.zeros(4, np.float32)])
    with pytest.raises(ValueError, match="parameter 'a' .* 4 elements along axis 1"):
        sim.launch(plane, dim=(3, 5), inputs=[np.zeros((3, 4), np.float32),
                                              np.zeros(5, np.float32)])
    with pytest.raises(ValueError, match="parameter 'b'"):
        sim.launch(plane, dim=(3, 4), inputs=[np.zeros((3, 4), np.float32),
                                              np.zeros(3, np.float32)])


def test_guarded_kernels_may_launch_more_threads_than_elements():
    x = np.zeros(10, np.float32)
    sim.launch(guarded, dim=64, inputs=[x, 10])
    sim.launch(inside_a_branch, dim=64, inputs=[x, 10])
    assert (x == 1.0).all()


def test_recorded_launches_are_checked_when_first_launched():
    # (Warp's set_dim / set_param_at_index may change the grid and arguments before then)
    recorded = sim.launch(integrate, dim=11, inputs=[np.zeros((10, 3), np.float32),
                                                     np.zeros((11, 3), np.float32), 0.1],
                          record_cmd=True)
    with pytest.raises(ValueError, match="parameter 'x'"):
        recorded.launch()


def test_what_used_to_corrupt_memory_is_now_an_error_not_a_crash(tmp_path):
    script = tmp_path / "overrun.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import numba_sim as sim

        @sim.kernel
        def fill(x: sim.array(dtype=float)):
            i = sim.tid()
            x[i] = 1.0

        try:
            sim.launch(fill, dim=1_000_000, inputs=[np.zeros(10, np.float32)])
        except ValueError as e:
            print("refused:", e)
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=300, env=dict(os.environ))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "refused: fill: dim=1000000" in result.stdout
