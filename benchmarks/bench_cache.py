"""Start-up benchmark (issue 7): time from process start to the end of the first
launch of the seed's particle kernel, cold and warm cache, numba_sim vs Warp.

Each case runs in a fresh Python process (imports included); "cold" uses an
empty cache directory, "warm" the directory a previous run filled.  Medians of
``--repeat`` runs are printed with ratios.

    python benchmarks/bench_cache.py [--repeat 3]
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

SIM_PROGRAM = textwrap.dedent("""
    import numpy as np
    import numba_sim as sim

    @sim.kernel
    def integrate(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
        i = sim.tid()
        v[i] = v[i] + sim.vec3(0.0, -9.8, 0.0) * dt
        x[i] = x[i] + v[i] * dt

    n = 100_000
    x = np.zeros((n, 3), np.float32)
    v = np.zeros((n, 3), np.float32)
    sim.launch(integrate, dim=n, inputs=[x, v, 1.0 / 60.0])
    assert abs(v[0, 1] + 9.8 / 60.0) < 1e-6
""")

WARP_PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import warp as wp
    wp.config.quiet = True
    wp.config.kernel_cache_dir = sys.argv[1]

    @wp.kernel
    def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        v[i] = v[i] + wp.vec3(0.0, -9.8, 0.0) * dt
        x[i] = x[i] + v[i] * dt

    n = 100_000
    x = wp.zeros(n, dtype=wp.vec3, device="cpu")
    v = wp.zeros(n, dtype=wp.vec3, device="cpu")
    wp.launch(integrate, dim=n, inputs=[x, v, 1.0 / 60.0], device="cpu")
    assert abs(v.numpy()[0, 1] + 9.8 / 60.0) < 1e-6
""")


def run_program(path, cache_dir):
    environment = dict(os.environ, NUMBA_SIM_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, path, cache_dir], env=environment,
                            capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return elapsed


def measure(program, repeat, workdir, name):
    path = os.path.join(workdir, f"{name}.py")
    with open(path, "w") as f:
        f.write(program)
    cold, warm = [], []
    for trial in range(repeat):
        cache_dir = os.path.join(workdir, f"{name}-cache-{trial}")
        cold.append(run_program(path, cache_dir))
        warm.append(run_program(path, cache_dir))
    return float(np.median(cold)), float(np.median(warm))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        baseline = measure("pass\n", args.repeat, workdir, "empty")[0]
        sim_cold, sim_warm = measure(SIM_PROGRAM, args.repeat, workdir, "numba_sim_start")
        if importlib.util.find_spec("warp") is None:
            warp_cold = warp_warm = float("nan")
        else:
            warp_cold, warp_warm = measure(WARP_PROGRAM, args.repeat, workdir, "warp_start")
    print(f"process start to end of first launch (median of {args.repeat}, seconds; "
          f"an empty Python process takes {baseline:.2f})")
    print(f"{'':10} {'cold':>7} {'warm':>7}")
    print(f"{'numba_sim':10} {sim_cold:>7.2f} {sim_warm:>7.2f}")
    print(f"{'warp':10} {warp_cold:>7.2f} {warp_warm:>7.2f}")
    print(f"ratio warp / numba_sim: cold {warp_cold / sim_cold:.2f}x, warm {warp_warm / sim_warm:.2f}x")


if __name__ == "__main__":
    main()
