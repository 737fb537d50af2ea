"""Kernel launch benchmarks (issue 5), side by side in one run.

1. The seed's particle update at n = 1k, 100k, 1M on the CPU: numba_sim vs a
   hand-written ``@njit(parallel=True)`` prange over (n, 3) arrays vs Warp's
   CPU backend (warp-lang, if installed).
2. Launch overhead of a 1-thread kernel with 3 array arguments, numba_sim vs
   Warp's CPU launch.

Medians of many repetitions and their ratios are printed (machines here are
noisy; never read a lone absolute time).

    python benchmarks/bench_kernels.py [--repeat 30]
"""

import argparse
import time

import numba
import numpy as np

import numba_sim as sim


@sim.kernel
def integrate(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
    i = sim.tid()
    v[i] = v[i] + sim.vec3(0.0, -9.8, 0.0) * dt
    x[i] = x[i] + v[i] * dt


@numba.njit(parallel=True)
def integrate_by_hand(x, v, dt):
    for i in numba.prange(x.shape[0]):
        v[i, 1] += np.float32(-9.8) * dt
        for k in range(3):
            x[i, k] += v[i, k] * dt


@sim.kernel
def add_one(a: sim.array(dtype=float), b: sim.array(dtype=float), c: sim.array(dtype=float)):
    i = sim.tid()
    c[i] = a[i] + b[i]


def median_time(fn, repeat):
    fn()  # warm up (compiles)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return float(np.median(samples))


def warp_runners():
    """Warp's versions of both kernels, or None when warp-lang is not installed."""
    try:
        import warp as wp
    except ImportError:
        return None
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def warp_integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        v[i] = v[i] + wp.vec3(0.0, -9.8, 0.0) * dt
        x[i] = x[i] + v[i] * dt

    @wp.kernel
    def warp_add_one(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float)):
        i = wp.tid()
        c[i] = a[i] + b[i]

    return wp, warp_integrate, warp_add_one


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)
    warp = warp_runners()
    dt = np.float32(1.0 / 60.0)
    print(f"numba threads: {numba.get_num_threads()}")
    print("particle update (median seconds per launch; ratios > 1 mean numba_sim is faster)")
    print(f"{'n':>9} {'numba_sim':>11} {'hand njit':>11} {'warp cpu':>11} "
          f"{'vs hand':>8} {'vs warp':>8}")
    for n in (1_000, 100_000, 1_000_000):
        rng = np.random.default_rng(0)
        x = rng.random((n, 3), dtype=np.float32)
        v = np.zeros((n, 3), np.float32)
        t_sim = median_time(lambda: sim.launch(integrate, dim=n, inputs=[x, v, dt]), args.repeat)
        t_hand = median_time(lambda: integrate_by_hand(x, v, dt), args.repeat)
        t_warp = float("nan")
        if warp is not None:
            wp, warp_integrate, _ = warp
            wx = wp.array(x, dtype=wp.vec3, device="cpu")
            wv = wp.array(v, dtype=wp.vec3, device="cpu")
            t_warp = median_time(
                lambda: wp.launch(warp_integrate, dim=n, inputs=[wx, wv, float(dt)], device="cpu"),
                args.repeat)
        print(f"{n:>9} {t_sim:>11.2e} {t_hand:>11.2e} {t_warp:>11.2e} "
              f"{t_hand / t_sim:>8.2f} {t_warp / t_sim:>8.2f}")

    a, b, c = (np.ones(1, np.float32) for _ in range(3))
    t_sim = median_time(lambda: sim.launch(add_one, dim=1, inputs=[a, b, c]), args.repeat * 100)
    line = f"launch overhead, 1 thread, 3 arrays: numba_sim {t_sim * 1e6:.2f} us"
    if warp is not None:
        wp, _, warp_add_one = warp
        wa, wb, wc = (wp.array(arr, dtype=float, device="cpu") for arr in (a, b, c))
        t_warp = median_time(lambda: wp.launch(warp_add_one, dim=1, inputs=[wa, wb, wc],
                                               device="cpu"), args.repeat * 100)
        line += f", warp {t_warp * 1e6:.2f} us, ratio {t_warp / t_sim:.1f}x"
    print(line)
    print(f"threading layer used: {numba.threading_layer()}")


if __name__ == "__main__":
    main()
