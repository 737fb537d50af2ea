"""Debug mode: bounds-checked array access and NaN checks naming the kernel, the array
parameter and the index; release mode is untouched."""

import subprocess
import sys

import numpy as np
import pytest

import numba_sim as sim


@sim.kernel
def shift(x: sim.array(dtype=sim.vec3), out: sim.array(dtype=sim.vec3), offset: int, scale: float):
    i = sim.tid()
    out[i] = x[i + offset] * scale


@sim.kernel
def accumulate(totals: sim.array(dtype=float, ndim=2), row: int, value: float):
    i = sim.tid()
    totals[row, i] += value


@pytest.fixture
def debug_mode():
    previous = sim.config.mode
    sim.config.mode = "debug"
    yield
    sim.config.mode = previous


def test_out_of_bounds_load_names_kernel_parameter_and_index(debug_mode):
    x, out = np.ones((10, 3), np.float32), np.zeros((10, 3), np.float32)
    with pytest.raises(IndexError) as info:
        sim.launch(shift, dim=10, inputs=[x, out, 1, 2.0])
    error = info.value
    assert (error.index, error.extent, error.dimension) == (10, 10, 0)
    lines = str(error).splitlines()
    assert lines[0] == ("kernel shift: index 10 is out of bounds for array parameter 'x' "
                        "(extent 10 in dimension 0)")
    assert lines[1] == f'  File "{__file__}", line {error.lineno}, in shift'
    assert lines[2].strip() == "out[i] = x[i + offset] * scale"


def test_out_of_bounds_store_and_augmented_store(debug_mode):
    totals = np.zeros((2, 4), np.float32)
    sim.launch(accumulate, dim=4, inputs=[totals, 1, 2.0])
    np.testing.assert_array_equal(totals[1], 2.0)
    with pytest.raises(IndexError) as info:
        sim.launch(accumulate, dim=4, inputs=[totals, 2, 1.0])
    assert "'totals'" in str(info.value) and (info.value.index, info.value.extent) == (2, 2)
    assert "totals[row, i] += value" in str(info.value)
    with pytest.raises(ValueError, match="'totals'"):  # the launch check refuses it first
        sim.launch(accumulate, dim=5, inputs=[totals, 0, 1.0])


def test_nan_store_is_reported(debug_mode):
    x, out = np.ones((4, 3), np.float32), np.zeros((4, 3), np.float32)
    with pytest.raises(FloatingPointError) as info:
        sim.launch(shift, dim=4, inputs=[x, out, 0, float("nan")])
    assert str(info.value).startswith("kernel shift: NaN stored in array parameter 'out' at "
                                      "index 0")
    assert info.value.index == 0 and "out[i] = x[i + offset] * scale" in str(info.value)


def test_release_mode_has_no_checks():
    assert sim.config.mode == "release"
    x, out = np.ones((10, 3), np.float32), np.zeros((10, 3), np.float32)
    sim.launch(shift, dim=9, inputs=[x, out, 1, 3.0])
    np.testing.assert_array_equal(out[:9], 3.0)
    with pytest.raises(ValueError, match="mode"):
        sim.config.mode = "fast"


def test_environment_variable_selects_debug_mode(tmp_path):
    code = ("import numba_sim as sim, numpy as np\n"
            "assert sim.config.mode == 'debug'\n"
            "@sim.kernel\n"
            "def k(a: sim.array(dtype=float)):\n"
            "    i = sim.tid()\n"
            "    a[i + 1] = 1.0\n"
            "try:\n"
            "    sim.launch(k, dim=3, inputs=[np.zeros(3, np.float32)])\n"
            "except IndexError as e:\n"
            "    print('caught', e.index, e.extent)\n")
    import os

    script = tmp_path / "debug_script.py"
    script.write_text(code)
    environment = dict(os.environ, NUMBA_SIM_DEBUG="1", NUMBA_SIM_CACHE_DIR=str(tmp_path / "cache"))
    for run in ("compiled", "loaded from the cache"):  # the exception's arguments survive caching
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                env=environment, timeout=300)
        assert result.returncode == 0, f"{run}: {result.stderr}"
        assert "caught 3 3" in result.stdout, run


def test_debug_kernels_compile_for_cuda_offline(debug_mode):
    x, out = np.ones((4, 3), np.float32), np.zeros((4, 3), np.float32)
    library = shift.compile("cuda", [x, out, 0, 1.0], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
