"""Kernel launch benchmarks (issues 5 and 21), side by side in one run.

1. The particle update (``v += g dt; x += v dt`` over vec3 arrays) at n = 1k, 100k and 4M on
   the CPU: numba_sim vs a hand-written ``@njit(parallel=True)`` prange over (n, 3) arrays vs
   Warp's CPU backend (warp-lang, one thread). At 4M the arrays (96 MB) are three times the
   size of this machine's last-level cache, so each update streams from memory; its speed is
   given as a fraction of the machine's copy bandwidth, measured in the same run (a prange
   copy of 256 MB on all cores, and on one). Each contender updates its own copy of the same
   data the same number of times, and the copies are checked equal at the end.
2. Launch overhead of a 1-thread kernel with 3 array arguments: ``sim.launch`` vs
   ``wp.launch``, a recorded launch (``record_cmd=True`` then ``.launch()``) in both, and one
   launch of numba_sim's CPU capture (100 launches replayed by ``g.launch()``, per launch).

Per-core columns run numba_sim and the hand-written loop on one Numba thread; all-core columns
on every thread. The contenders take turns, round after round; medians and ratios are printed
(ratios > 1: numba_sim faster), with the machine's load average.

    python benchmarks/bench_kernels.py [--repeat 30] [--json FILE]
"""

import argparse
import os
import sys

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import (Table, cpu_warp, finish, interleaved_medians, load_average, ms,  # noqa: E402
                    one_thread, ratio)

import numba_sim as sim  # noqa: E402

SIZES = (1_000, 100_000, 4_000_000)
DT = np.float32(1.0 / 60.0)
COPY_BYTES = 256 * 1024 * 1024
CAPTURED_LAUNCHES = 100


@sim.kernel
def integrate(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
    i = sim.tid()
    v[i] = v[i] + sim.vec3(0.0, -9.8, 0.0) * dt
    x[i] = x[i] + v[i] * dt


@numba.njit(parallel=True)
def integrate_by_hand(x, v, dt):
    for i in numba.prange(x.shape[0]):
        v[i, 0] += np.float32(0.0) * dt
        v[i, 1] += np.float32(-9.8) * dt
        v[i, 2] += np.float32(0.0) * dt
        for k in range(3):
            x[i, k] += v[i, k] * dt


@numba.njit(parallel=True)
def parallel_copy(src, dst):
    for i in numba.prange(src.shape[0]):
        dst[i] = src[i]


@sim.kernel
def add_one(a: sim.array(dtype=float), b: sim.array(dtype=float), c: sim.array(dtype=float)):
    i = sim.tid()
    c[i] = a[i] + b[i]


def warp_kernels(wp):
    @wp.kernel
    def warp_integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        v[i] = v[i] + wp.vec3(0.0, -9.8, 0.0) * dt
        x[i] = x[i] + v[i] * dt

    @wp.kernel
    def warp_add_one(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float)):
        i = wp.tid()
        c[i] = a[i] + b[i]

    return warp_integrate, warp_add_one


def copy_bandwidth(repeat):
    """Bytes per second of a prange copy of COPY_BYTES (read + write), all threads and one."""
    src = np.ones(COPY_BYTES // 8, np.float64)
    dst = np.empty_like(src)
    copy = lambda: parallel_copy(src, dst)  # noqa: E731
    times = interleaved_medians({"all": copy, "one": one_thread(copy)}, repeat)
    return {k: 2 * COPY_BYTES / t for k, t in times.items()}


def particle_table(wp, repeat):
    bandwidth = copy_bandwidth(max(3, repeat // 3))
    table = Table("particle update, seconds per launch",
                  ["n", "numba_sim 1 thread", "hand njit 1 thread", "warp (1 thread)",
                   "vs warp per core", "vs hand per core", "numba_sim all cores",
                   "hand njit all cores", "vs warp all cores", "all cores / 1 thread",
                   "% copy bandwidth (1 / all)"])
    table.note(f"copy bandwidth measured in the same run: {bandwidth['one'] / 1e9:.1f} GB/s on "
               f"one thread, {bandwidth['all'] / 1e9:.1f} GB/s on {numba.get_num_threads()} "
               f"(read + write of {COPY_BYTES >> 20} MB)")
    warp_integrate = warp_kernels(wp)[0] if wp else None
    for n in SIZES:
        x0 = np.random.default_rng(0).random((n, 3), dtype=np.float32)
        copies = {name: (x0.copy(), np.zeros((n, 3), np.float32)) for name in ("sim", "hand")}
        launches = {name: 0 for name in ("sim", "hand", "warp")}

        def counted(name, fn):
            def run():
                fn()
                launches[name] += 1
            return run

        sx, sv = copies["sim"]
        hx, hv = copies["hand"]
        ours = counted("sim", lambda: sim.launch(integrate, dim=n, inputs=[sx, sv, DT]))
        hand = counted("hand", lambda: integrate_by_hand(hx, hv, DT))
        runners = {"sim 1": one_thread(ours), "hand 1": one_thread(hand),
                   "sim": ours, "hand": hand}
        if wp:
            wx = wp.array(x0, dtype=wp.vec3, device="cpu")
            wv = wp.zeros(n, dtype=wp.vec3, device="cpu")
            runners["warp"] = counted("warp", lambda: wp.launch(
                warp_integrate, dim=n, inputs=[wx, wv, float(DT)], device="cpu"))
        t = interleaved_medians(runners, repeat)
        results = dict(copies, **({"warp": (wx.numpy(), wv.numpy())} if wp else {}))
        check_particles(x0, results, launches, n)
        moved = 4 * 12 * n  # x and v, each read and written
        table.add(f"{n:,}", ms(t["sim 1"]), ms(t["hand 1"]),
                  ms(t["warp"]) if wp else "-",
                  ratio(t["warp"], t["sim 1"]) if wp else "-", ratio(t["hand 1"], t["sim 1"]),
                  ms(t["sim"]), ms(t["hand"]),
                  ratio(t["warp"], t["sim"]) if wp else "-", ratio(t["sim 1"], t["sim"]),
                  f"{100 * moved / t['sim 1'] / bandwidth['one']:.0f} / "
                  f"{100 * moved / t['sim'] / bandwidth['all']:.0f}")
    return table


def check_particles(x0, results, launches, n):
    """Each contender's particles equal numba_sim's after the same number of updates from x0."""
    references = {}
    for name, (x, v) in results.items():
        steps = launches[name]
        if steps not in references:
            rx, rv = x0.copy(), np.zeros_like(x0)
            for _ in range(steps):
                sim.launch(integrate, dim=n, inputs=[rx, rv, DT])
            assert np.allclose(rv[:, 1], np.float32(-9.8) * DT * steps, rtol=1e-4), \
                "numba_sim's velocities are off"
            references[steps] = rx, rv
        rx, rv = references[steps]
        assert np.allclose(x, rx, rtol=1e-5, atol=1e-6) and np.allclose(v, rv, rtol=1e-5), \
            f"n={n}: {name} and numba_sim computed different particles"


def overhead_table(wp, repeat):
    a, b, c = (np.ones(1, np.float32) for _ in range(3))
    recorded = sim.launch(add_one, dim=1, inputs=[a, b, c], record_cmd=True)
    with sim.capture(device="cpu") as graph:
        for _ in range(CAPTURED_LAUNCHES):
            sim.launch(add_one, dim=1, inputs=[a, b, c])
    runners = {"sim.launch": lambda: sim.launch(add_one, dim=1, inputs=[a, b, c]),
               "recorded": recorded.launch, "captured": graph.launch}
    if wp:
        warp_add_one = warp_kernels(wp)[1]
        wa, wb, wc = (wp.array(arr, dtype=float, device="cpu") for arr in (a, b, c))
        w_recorded = wp.launch(warp_add_one, dim=1, inputs=[wa, wb, wc], device="cpu",
                               record_cmd=True)
        runners["warp launch"] = lambda: wp.launch(warp_add_one, dim=1, inputs=[wa, wb, wc],
                                                   device="cpu")
        runners["warp recorded"] = w_recorded.launch
    t = interleaved_medians({k: _repeated(fn, 100) for k, fn in runners.items()}, repeat)
    t = {k: v / 100 for k, v in t.items()}
    t["captured"] /= CAPTURED_LAUNCHES
    table = Table("launch overhead: a 1-thread kernel with 3 array arguments",
                  ["launch", "numba_sim", "warp", "vs warp"])
    for name, theirs in (("sim.launch / wp.launch", "warp launch"),
                         ("recorded (record_cmd=True, .launch())", "warp recorded")):
        ours = t["sim.launch" if theirs == "warp launch" else "recorded"]
        table.add(name, ms(ours), ms(t[theirs]) if wp else "-",
                  ratio(t[theirs], ours) if wp else "-")
    table.add(f"captured (per launch of {CAPTURED_LAUNCHES} in one g.launch())",
              ms(t["captured"]), "-", "-")
    assert c[0] == 2.0, "the launches computed a wrong sum"
    return table


def _repeated(fn, times):
    def run():
        for _ in range(times):
            fn()
    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", help="also write the tables to this file (python -m benchmarks)")
    args = parser.parse_args(argv)
    wp = cpu_warp()
    before = load_average()
    finish([particle_table(wp, args.repeat), overhead_table(wp, args.repeat)], args, before)

if __name__ == "__main__":
    main()
