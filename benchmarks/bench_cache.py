"""Start-up benchmark (issue 7): time from process start to the end of the first
launch of the seed's particle kernel, cold and warm cache, numba_sim vs Warp.

Each case runs in a fresh Python process (imports included); "cold" uses an
empty cache directory, "warm" the directory a previous run filled. numba_sim and
Warp take turns, trial after trial; each program checks its own result. Medians
of ``--repeat`` trials are printed with ratios, and written as a table with
``--json FILE`` (``python -m benchmarks``).

    python benchmarks/bench_cache.py [--repeat 3] [--json FILE]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import Table, emit, load_average, ratio  # noqa: E402

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


def measure(programs, repeat, workdir):
    """Median cold and warm start of each program, the programs taking turns trial by trial."""
    paths = {}
    for name, program in programs.items():
        paths[name] = os.path.join(workdir, f"{name}.py")
        with open(paths[name], "w") as f:
            f.write(program)
    cold = {name: [] for name in programs}
    warm = {name: [] for name in programs}
    for trial in range(repeat):
        for name, path in paths.items():
            cache_dir = os.path.join(workdir, f"{name}-cache-{trial}")
            cold[name].append(run_program(path, cache_dir))
            warm[name].append(run_program(path, cache_dir))
    return {name: (float(np.median(cold[name])), float(np.median(warm[name])))
            for name in programs}


def run(repeat):
    # (file names that shadow no module: numba_sim.py would be imported as numba_sim)
    programs = {"empty": "pass\n", "numba_sim_start": SIM_PROGRAM}
    has_warp = importlib.util.find_spec("warp") is not None
    if has_warp:
        programs["warp_start"] = WARP_PROGRAM
    with tempfile.TemporaryDirectory() as workdir:
        times = measure(programs, repeat, workdir)
    table = Table("process start to the end of the first launch (100,000-particle kernel)",
                  ["program", "cold cache", "warm cache", "warp / numba_sim cold",
                   "warp / numba_sim warm"])
    sim_cold, sim_warm = times["numba_sim_start"]
    table.add("numba_sim", f"{sim_cold:.2f} s", f"{sim_warm:.2f} s", "-", "-")
    if has_warp:
        warp_cold, warp_warm = times["warp_start"]
        table.add("warp", f"{warp_cold:.2f} s", f"{warp_warm:.2f} s",
                  ratio(warp_cold, sim_cold), ratio(warp_warm, sim_warm))
    table.note(f"an empty Python process takes {times['empty'][0]:.2f} s; every program "
               "checks its first launch's result")
    return [table]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the tables to this file (python -m benchmarks)")
    args = parser.parse_args(argv)
    before = load_average()
    tables = run(args.repeat)
    for table in tables:  # (this process launches nothing: no thread count to give)
        table.note(f"load average {before:.2f} before, {load_average():.2f} after; medians of "
                   f"{args.repeat} alternating trials")
    emit(tables, args.json)


if __name__ == "__main__":
    main()
