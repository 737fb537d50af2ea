"""The compilation cache: warm processes compile nothing, edits invalidate exactly,
same-named kernels do not collide, and the CLI shows and clears the cache."""

import os
import re
import subprocess
import sys

import pytest

RUNNER = """
import sys, numpy as np, numba.core.dispatcher as dispatcher
import numba_sim as sim
from numba_sim.launcher import launcher_for
if "--no-compile" in sys.argv:
    def refuse(*args, **kwargs):
        raise AssertionError("compiled in a process that should load everything from the cache")
    dispatcher._FunctionCompiler._compile_core = refuse
sys.path.insert(0, sys.argv[1])
import importlib
results = []
for name in sys.argv[2].split(","):
    module = importlib.import_module(name)
    out = np.zeros(4, np.float32)
    sim.launch(module.kernel, dim=4, inputs=[out])
    stats = launcher_for(module.kernel, "cpu", 1).serial.stats
    results.append(f"{name}:{out[3]}:{sum(stats.cache_hits.values())}:{sum(stats.cache_misses.values())}")
print(";".join(results))
"""

HELPERS = """
import numba_sim as sim

@sim.func
def scale(x: float):
    return x * {factor}
"""

KERNEL = """
import numba_sim as sim
from helpers import scale

OFFSET = {offset}

@sim.kernel
def kernel(out: sim.array(dtype=float)):
    i = sim.tid()
    out[i] = scale(float(i)) + OFFSET
"""


@pytest.fixture
def workspace(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "helpers.py").write_text(HELPERS.format(factor=2.0))
    (code / "first.py").write_text(KERNEL.format(offset=0.0))
    (code / "second.py").write_text(KERNEL.format(offset=100.0))
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER)
    environment = dict(os.environ, NUMBA_SIM_CACHE_DIR=str(tmp_path / "cache"),
                       PYTHONDONTWRITEBYTECODE="1")

    def run(modules, *flags):
        result = subprocess.run([sys.executable, str(runner), str(code), modules, *flags],
                                capture_output=True, text=True, env=environment, timeout=300)
        assert result.returncode == 0, result.stderr
        return {name: (float(value), int(hits), int(misses)) for name, value, hits, misses in
                (item.split(":") for item in result.stdout.strip().split(";"))}

    return code, run, environment


def test_warm_process_compiles_nothing_and_edits_invalidate(workspace):
    code, run, _ = workspace
    cold = run("first,second")
    assert cold == {"first": (6.0, 0, 1), "second": (106.0, 0, 1)}  # same name, no collision
    warm = run("first,second", "--no-compile")
    assert warm == {"first": (6.0, 1, 0), "second": (106.0, 1, 0)}
    # editing a reached @sim.func recompiles the kernels that use it
    (code / "helpers.py").write_text(HELPERS.format(factor=3.0))
    edited = run("first,second")
    assert edited == {"first": (9.0, 0, 1), "second": (109.0, 0, 1)}
    # editing a frozen global recompiles only the kernel that reads it
    (code / "second.py").write_text(KERNEL.format(offset=200.0))
    assert run("first,second") == {"first": (9.0, 1, 0), "second": (209.0, 0, 1)}


DEMOS = """
import sys, hashlib, numpy as np, numba.core.dispatcher as dispatcher
import numba_sim as sim
from numba_sim.examples import dem, sph
if "--no-compile" in sys.argv:
    def refuse(self, *args, **kwargs):
        raise AssertionError(f"compiled {self.py_func} in a process that should load everything")
    dispatcher._FunctionCompiler._compile_core = refuse
digests = []
for example in (dem.Example(dims=(4, 8, 4), sim_substeps=4), sph.Example(smoothing_length=3.0)):
    for _ in range(2):
        example.step()
    digests.append(hashlib.sha256(np.ascontiguousarray(example.positions()).tobytes()).hexdigest())
print(" ".join(digests))
"""


def test_demos_load_from_a_warm_cache_and_give_the_same_bits(tmp_path):
    """The demos' kernels (HashGrid queries included) compile once; a second process
    loads every launcher, compiles nothing, and steps DEM and SPH to the same bits."""
    script = tmp_path / "demos.py"
    script.write_text(DEMOS)
    environment = dict(os.environ, NUMBA_SIM_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, str(script), *flags], capture_output=True, text=True,
                           env=environment, timeout=600) for flags in ([], ["--no-compile"])]
    for result in runs:
        assert result.returncode == 0, result.stderr
    cold, warm = (result.stdout.split() for result in runs)
    assert len(cold) == 2 and cold == warm


def test_cli_shows_and_clears_the_cache(workspace):
    _, run, environment = workspace
    run("first")
    info = subprocess.run([sys.executable, "-m", "numba_sim", "info"], capture_output=True,
                          text=True, env=environment, timeout=300)
    assert info.returncode == 0, info.stderr
    assert environment["NUMBA_SIM_CACHE_DIR"] in info.stdout
    assert re.search(r"threading layer: (tbb|omp) in use", info.stdout), info.stdout
    files = int(info.stdout.split("cache directory:")[1].split("(")[1].split()[0])
    assert files >= 2
    cleared = subprocess.run([sys.executable, "-m", "numba_sim", "cache", "clear"],
                             capture_output=True, text=True, env=environment, timeout=300)
    assert cleared.returncode == 0 and f"removed {files} files" in cleared.stdout
    assert not os.path.exists(environment["NUMBA_SIM_CACHE_DIR"]) or not any(
        files for _, _, files in os.walk(environment["NUMBA_SIM_CACHE_DIR"]))


def test_fingerprint_covers_helpers_globals_and_the_package():
    import numba_sim as sim
    from numba_sim import cache

    def make(constant, helper_factor):
        @sim.func
        def helper(x: float):
            return x * helper_factor

        @sim.kernel
        def kernel(out: sim.array(dtype=float)):
            i = sim.tid()
            out[i] = helper(float(i)) + constant

        return kernel

    base = cache.kernel_fingerprint(make(1.0, 2.0), "cpu")
    assert base == cache.kernel_fingerprint(make(1.0, 2.0), "cpu")
    assert base != cache.kernel_fingerprint(make(1.5, 2.0), "cpu")
    assert base != cache.kernel_fingerprint(make(1.0, 3.0), "cpu")
    assert base != cache.kernel_fingerprint(make(1.0, 2.0), "cuda")
    assert len(cache.package_fingerprint()) == 64


def test_cuda_library_survives_the_cache_round_trip(offline_cuda):
    """A linked CUDA library is saved without its linking files, with its cubin."""
    import pickle

    import numpy as np
    from numba.core import types

    import numba_sim as sim

    def kernel(out, a, b, p):
        out[0] = sim.closest_point_on_segment(a, b, p).x

    vec3 = sim.typing.value_types.value_type_by_name("vec3")
    library = offline_cuda.compile(kernel, (types.float32[::1], vec3, vec3, vec3), cc=(7, 5))
    cubin = bytes(library.get_cubin(cc=(7, 5)).code)
    with pytest.raises(RuntimeError, match="linking files"):
        pickle.dumps(library)
    from numba_sim.cache import without_linking_files

    linked = without_linking_files(library)
    assert library._linking_files  # the original is untouched
    restored = pickle.loads(pickle.dumps(linked))
    assert bytes(restored.get_cubin(cc=(7, 5)).code) == cubin
    assert np.frombuffer(cubin[:4], np.uint8).tolist() == [0x7F, 0x45, 0x4C, 0x46]


CORRUPTIONS = {
    "truncated data": lambda path: path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2]),
    "flipped byte in the object code": lambda path: path.write_bytes(
        (lambda b: b[:-100] + bytes([b[-100] ^ 0xFF]) + b[-99:])(path.read_bytes())),
    "garbage index": None,
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_corrupted_cache_entries_are_recompiled_with_a_warning(workspace, corruption):
    code, run, environment = workspace
    assert run("first") == {"first": (6.0, 0, 1)}
    cache_dir = __import__("pathlib").Path(environment["NUMBA_SIM_CACHE_DIR"]) / "cpu"
    if corruption == "garbage index":
        for index in cache_dir.glob("*.nbi"):
            index.write_bytes(b"\x80\x04garbage" * 3)
    else:
        for data in cache_dir.glob("*.nbc"):
            CORRUPTIONS[corruption](data)
    result = subprocess.run(
        [sys.executable, "-c",
         "import runpy, sys;"
         f"sys.argv = ['runner', {str(code)!r}, 'first']; runpy.run_path({str(code.parent / 'runner.py')!r})"],
        capture_output=True, text=True, env=environment, timeout=300)
    # recompiled (a miss), correct, and said so
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "first:6.0:0:1"
    assert "numba_sim: the cache entry" in result.stderr
    assert run("first") == {"first": (6.0, 1, 0)}  # and the cache is whole again


def test_four_processes_filling_one_cache_at_once(workspace):
    import multiprocessing

    code, run, environment = workspace
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        results = pool.starmap(_run_in_subprocess, [(str(code), environment)] * 4)
    assert all(r == "first:6.0" for r in results), results
    hits = run("first,second")
    assert hits["first"][0] == 6.0 and hits["first"][1] == 1  # one of them filled it


def _run_in_subprocess(code, environment):
    result = subprocess.run([sys.executable, str(__import__("pathlib").Path(code).parent / "runner.py"),
                             code, "first"], capture_output=True, text=True, env=environment,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return ":".join(result.stdout.strip().split(":")[:2])


GRAPH_KERNELS = """
import numba_sim as sim

FACTOR = {factor}

@sim.kernel
def add_one(x: sim.array(dtype=float)):
    i = sim.tid()
    x[i] = x[i] + 1.0

@sim.kernel
def scale(x: sim.array(dtype=float)):
    i = sim.tid()
    x[i] = x[i] * FACTOR
"""

GRAPH = """
import sys, numpy as np, numba.core.dispatcher as dispatcher
import numba_sim as sim
sys.path.insert(0, sys.argv[1])
if "--no-compile" in sys.argv:
    def refuse(self, *args, **kwargs):
        raise AssertionError(f"compiled {self.py_func} in a process that should load everything")
    dispatcher._FunctionCompiler._compile_core = refuse
import graph_kernels as k
x = np.zeros(8, np.float32)
with sim.capture("cpu") as graph:
    sim.launch(k.add_one, dim=8, inputs=[x])
    sim.launch(k.scale, dim=8, inputs=[x])
    sim.launch(k.add_one, dim=8, inputs=[x])
graph.launch()
print(x[3])
"""


def test_cpu_graph_replays_load_from_the_cache_and_edits_invalidate(tmp_path):
    """A captured CPU graph's replay (one compiled call of its launches, the physics
    solvers' frame graphs) is cached like a kernel: a warm process compiles nothing; an
    edit of one of its kernels recompiles the replay, never a stale copy of that kernel."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "graph_kernels.py").write_text(GRAPH_KERNELS.format(factor=2.0))
    script = tmp_path / "graph.py"
    script.write_text(GRAPH)
    environment = dict(os.environ, NUMBA_SIM_CACHE_DIR=str(tmp_path / "cache"),
                       PYTHONDONTWRITEBYTECODE="1")

    def run(*flags):
        result = subprocess.run([sys.executable, str(script), str(code), *flags],
                                capture_output=True, text=True, env=environment, timeout=300)
        assert result.returncode == 0, result.stderr
        assert "unreadable" not in result.stderr, result.stderr
        return float(result.stdout.strip())

    assert run() == 3.0
    assert run("--no-compile") == 3.0
    assert any(name.startswith("cpu_graph_of_3_launches")
               for name in os.listdir(tmp_path / "cache" / "cpu"))
    (code / "graph_kernels.py").write_text(GRAPH_KERNELS.format(factor=5.0))
    assert run() == 6.0
    assert run("--no-compile") == 6.0
