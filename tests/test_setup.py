"""Registration and import-time checks."""

import subprocess
import sys
import textwrap

import pytest

import numba_sim as sim
from numba_sim import _checks


def run_python(code, **env):
    import os

    environment = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=environment, timeout=300)


def test_import_after_other_numba_code_still_registers():
    """A process that compiled Numba code (CPU and CUDA) before importing numba_sim can use vec3."""
    result = run_python("""
        import numba
        from numba import cuda, types
        @numba.njit
        def plain(x):
            return x + 1
        assert plain(1) == 2
        cuda.compile_ptx(lambda out: None, (types.float32[:],), cc=(7, 5))
        import numba_sim as sim
        @numba.njit
        def use(v):
            return sim.length(v * 2.0), sim.normalize(v)
        length, unit = use(sim.vec3(1.0, 2.0, 2.0))
        assert abs(length - 6.0) < 1e-6 and abs(unit.z - 2.0 / 3.0) < 1e-6
        def kernel(out, x):
            out[0] = sim.length(sim.vec3(x, x, x))
        ptx, _ = cuda.compile_ptx(kernel, (types.float32[:], types.float32), cc=(7, 5))
        assert "sqrt" in ptx
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_numba_extensions_entry_point_is_declared():
    from importlib.metadata import entry_points

    targets = {ep.value for ep in entry_points(group="numba_extensions")}
    assert "numba_sim._extension:init" in targets


def test_entry_point_init_registers():
    from numba_sim import _extension

    _extension.init()  # importing again is harmless
    assert sim.vec3 is sim.vec3f


def test_numba_cuda_check_names_the_fix(monkeypatch):
    import numba.cuda

    monkeypatch.setattr(numba.cuda, "implementation", "Numba", raising=False)
    with pytest.raises(_checks.SetupError, match=r"pip install 'numba-cuda\[cu13\]'"):
        _checks.check_numba_cuda()


def test_missing_thread_safe_layer_names_the_fix(monkeypatch):
    monkeypatch.setattr(_checks, "thread_safe_layers", lambda: [])
    with pytest.raises(_checks.SetupError, match="workqueue.*pip install tbb.*libgomp"):
        _checks.check_threading_layer()


def test_workqueue_layer_is_refused_at_import():
    result = run_python("import numba_sim", NUMBA_THREADING_LAYER="workqueue")
    assert result.returncode != 0
    assert "not thread-safe" in result.stderr and "NUMBA_THREADING_LAYER=omp" in result.stderr


def test_a_thread_safe_layer_is_selected():
    import numba

    assert _checks.thread_safe_layers()
    assert numba.config.THREADING_LAYER in ("threadsafe", "safe", "omp", "tbb")
