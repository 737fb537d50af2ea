"""The CPU launcher's serial variant: plain (not atomic) updates in its own code, the same
results as the parallel launcher's atomics, which stay atomic under contention; borrowed
arrays (no reference counting per thread); one Numba thread runs every launch serially."""

import os
import re
import subprocess
import sys

import numba
import numpy as np

import numba_sim as sim
from numba_sim import launcher as launcher_module
from numba_sim.launcher import launcher_for

N = 50_000
RMW = re.compile(r"= (?:atomicrmw|cmpxchg) ")


@sim.func
def count_apart(counts: sim.array(dtype=sim.int32), i: int):
    """Not inlined: compiled on its own, so it keeps real atomics wherever it is called."""
    counts[i] += 1


@sim.kernel
def updates(i32: sim.array(dtype=sim.int32), u64: sim.array(dtype=sim.uint64),
            f32: sim.array(dtype=sim.float32), f64: sim.array(dtype=sim.float64),
            v3: sim.array(dtype=sim.vec3), old: sim.array(dtype=sim.int32)):
    i = sim.tid()
    old[i] = sim.atomic_add(i32, 0, 1)
    sim.atomic_sub(i32, 1, 2)
    sim.atomic_min(i32, 2, i - 7)
    sim.atomic_max(i32, 3, i - 7)
    sim.atomic_and(i32, 4, ~(1 << (i % 31)))
    sim.atomic_or(i32, 5, 1 << (i % 31))
    sim.atomic_xor(i32, 6, i)
    sim.atomic_add(u64, 0, sim.uint64(3))
    sim.atomic_min(u64, 1, sim.uint64(i + 5))
    sim.atomic_add(f32, 0, 1.0)
    sim.atomic_sub(f32, 1, 0.5)
    sim.atomic_min(f32, 2, float(i) - 3.0)
    sim.atomic_max(f32, 3, float(i) - 3.0)
    sim.atomic_add(f64, 0, 0.25)
    v3[i % 4] += sim.vec3(1.0, 2.0, -1.0)
    v3[4][i % 3] -= 1.0


@sim.kernel
def counts_apart(counts: sim.array(dtype=sim.int32)):
    count_apart(counts, 0)


def _arrays():
    f32 = np.zeros(4, np.float32)
    f32[2], f32[3] = 1e9, -1e9
    u64 = np.zeros(2, np.uint64)
    u64[1] = 2**63
    return [np.zeros(8, np.int32), u64, f32, np.zeros(1), np.zeros((5, 3), np.float32),
            np.full(N, -1, np.int32)]


def _run(variant):
    """All N threads of `updates` on one launcher ("serial" or "parallel")."""
    arrays = _arrays()
    bound = launcher_module._bind(updates, arrays)[0]
    getattr(launcher_for(updates, "cpu", 1), variant)((N,), *bound)
    return arrays


def _expected():
    i = np.arange(N)
    xor = 0
    for k in range(N):
        xor ^= k
    v3 = np.zeros((5, 3), np.float32)
    np.add.at(v3, i % 4, [1.0, 2.0, -1.0])
    np.add.at(v3[4], i % 3, -1.0)
    return {"i32": [N, -2 * N, -7, N - 8, 0, 2**31 - 1, xor, 0],
            "u64": [3 * N, 5], "f32": [N, -N / 2, -3.0, N - 4.0], "f64": [N / 4], "v3": v3}


def _check(arrays):
    i32, u64, f32, f64, v3, old = arrays
    expected = _expected()
    assert i32.tolist() == expected["i32"]
    assert u64.tolist() == expected["u64"]
    assert f32.tolist() == expected["f32"]
    assert f64.tolist() == expected["f64"]
    np.testing.assert_array_equal(v3, expected["v3"])
    np.testing.assert_array_equal(np.sort(old), np.arange(N))  # every old value, once


def test_serial_and_parallel_launchers_give_the_same_exact_results():
    _check(_run("serial"))
    _check(_run("parallel"))  # real atomics: exact under contention on every core


def _fresh_llvm(kernel, serial, args):
    """The LLVM of a freshly compiled launcher (a cached one keeps none)."""
    launcher = launcher_for(kernel, "cpu", 1)
    function = launcher_module._build_launcher(kernel, 1, False, launcher.body,
                                               range if serial else numba.prange, serial=serial)
    dispatcher = numba.njit(parallel=not serial)(function)
    argtypes = launcher_module._launcher_argtypes(kernel, args, 1)
    dispatcher.compile(argtypes)
    return dispatcher.inspect_llvm(argtypes)


def _function(llvm, prefix):
    """The body of the first LLVM function defined whose name contains *prefix*."""
    match = re.search(rf"define [^\n]*{prefix}[^\n]*\{{.*?\n\}}", llvm, re.S)
    assert match, prefix
    return match.group(0)


def test_only_the_serial_launchers_own_code_drops_the_atomics():
    own = _function(_fresh_llvm(updates, True, _arrays()), "__serial_launch_updates")
    assert not RMW.search(own)
    assert "NRT_incref" not in own and "NRT_decref" not in own  # borrowed arrays
    parallel = _fresh_llvm(updates, False, _arrays())
    assert len(RMW.findall(parallel)) >= 17  # in the loop body Numba outlines
    # a func compiled on its own keeps its atomic, called from a serial launcher too
    counts = np.zeros(1, np.int32)
    assert RMW.search(_fresh_llvm(counts_apart, True, [counts]))
    launcher = launcher_for(counts_apart, "cpu", 1)
    launcher.serial((N,), counts)
    launcher.parallel((N,), counts)
    assert counts[0] == 2 * N


@sim.kernel
def add__serial_launch_one(counts: sim.array(dtype=sim.int32)):
    sim.atomic_add(counts, 0, 1)


def test_a_kernel_named_like_the_marker_keeps_its_parallel_atomics():
    counts = np.zeros(1, np.int32)
    llvm = add__serial_launch_one.inspect("cpu", "llvm", [counts])
    assert RMW.search(llvm)
    bound = launcher_module._bind(add__serial_launch_one, [counts])[0]
    launcher_for(add__serial_launch_one, "cpu", 1).parallel((N,), *bound)
    assert counts[0] == N


@sim.struct
class Pair:
    a: sim.array(dtype=float)
    b: sim.array(dtype=float)


@sim.kernel
def add_pair(p: Pair, out: sim.array(dtype=float)):
    i = sim.tid()
    out[i] = p.a[i] + p.b[i]


def test_borrowed_arrays_keep_reference_counts_balanced():
    a, b, out = np.arange(3000.0, dtype=np.float32), np.ones(3000, np.float32), \
        np.zeros(3000, np.float32)
    pair = Pair()
    pair.a, pair.b = a, b
    before = [sys.getrefcount(x) for x in (a, b, out)]
    for n in (10, 3000):  # the serial launcher, and the parallel one (or its choice)
        for _ in range(50):
            sim.launch(add_pair, n, [pair, out])
    assert [sys.getrefcount(x) for x in (a, b, out)] == before
    np.testing.assert_array_equal(out, a + 1.0)


def test_one_numba_thread_runs_every_launch_on_the_serial_launcher(tmp_path):
    code = ("import numpy as np, numba_sim as sim\n"
            "from numba_sim.launcher import launcher_for\n"
            "@sim.kernel\n"
            "def k(a: sim.array(dtype=float)):\n"
            "    sim.atomic_add(a, 0, 1.0)\n"
            "a = np.zeros(1, np.float32)\n"
            "sim.launch(k, 100000, [a])\n"
            "launcher = launcher_for(k, 'cpu', 1)\n"
            "assert launcher.dispatcher_for(100000) is launcher.serial\n"
            "assert launcher._parallel is None and a[0] == 100000\n"
            "print('ok')\n")
    script = tmp_path / "one_thread.py"  # kernels need a source file
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env=dict(os.environ, NUMBA_NUM_THREADS="1"), timeout=300)
    assert result.stdout.strip() == "ok", result.stderr


def test_a_kernel_of_more_than_thirty_parameters_launches_on_both_launchers(tmp_path, monkeypatch):
    """CPython passes a call of more than 30 arguments as *args, which Numba cannot inline:
    the launcher calls such a kernel's body instead of inlining it."""
    count = 32
    parameters = ", ".join(f"a{k}: sim.array(dtype=float)" for k in range(count))
    sums = " + ".join(f"a{k}[i]" for k in range(1, count))
    (tmp_path / "many_parameters.py").write_text(
        f"import numba_sim as sim\n\n@sim.kernel\ndef many({parameters}):\n"
        f"    i = sim.tid()\n    a0[i] = {sums}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from many_parameters import many

    for n in (10, N):  # the serial and the parallel launcher
        arrays = [np.zeros(n, np.float32)] + [np.full(n, k, np.float32) for k in range(1, count)]
        sim.launch(many, dim=n, inputs=arrays)
        np.testing.assert_array_equal(arrays[0], np.full(n, sum(range(1, count)), np.float32))
