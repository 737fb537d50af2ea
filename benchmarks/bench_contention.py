"""CPU launches on a busy machine (issue 21): all threads vs one thread vs numba_sim's choice.

For each threading layer that loads here (omp, tbb) and each number of busy background
processes (0 and one per core: pure-Python spin loops), fresh worker processes measure the
mean launch time of a float32 saxpy kernel of 16k and 4M threads, launched through

* ``serial``: the launcher's serial twin (one thread);
* ``parallel``: the ``prange`` launcher on all of Numba's threads;
* ``chosen``: the CPU launcher itself (``launcher(dims, count, args)``), i.e. numba_sim's
  choice between the two (numba_sim/cpu_scheduling.py), its exploration included;
* ``launch/serial``: ``sim.launch`` with the launcher held to its serial twin (one thread,
  argument binding included);
* ``sim.launch``: ``sim.launch`` as it is (numba_sim's choice, argument binding included).

The modes run in interleaved rounds, in a shuffled order, inside each worker, so that they
share the load of the moment; the ratios to ``serial`` are taken per worker and then averaged
(and their worst worker shown: a parallel launch's collapse under load differs from one
process to the next).  ``mean`` is over all launches; ``trimmed`` leaves out each mode's
slowest tenth of rounds (those during which the OS gave the worker's core to another process
for a scheduler slice, whichever launcher ran: tests/test_contention.py asserts on it).
The machine's load average is given with every configuration: one table per configuration,
printed, and written as JSON with ``--json FILE`` (``python -m benchmarks``).

    python benchmarks/bench_contention.py                  # all layers, 0 and N busy
    python benchmarks/bench_contention.py --layers tbb --busy 2 --processes 5
    python benchmarks/bench_contention.py --no-load-gate     # the measured choice alone
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SIZES = (16 * 1024, 4 * 1024 * 1024)
MODES = ("serial", "parallel", "chosen", "launch/serial", "sim.launch")
SPIN = "while True:\n    pass\n"


def worker(layer, rounds, budget, load_gate=True):
    """Runs in a fresh process: measure every mode at every size; print one JSON line."""
    os.environ["NUMBA_THREADING_LAYER"] = layer
    if not load_gate:
        from numba_sim import cpu_scheduling

        cpu_scheduling.machine_busy = lambda: False  # the measured choice alone
    from random import Random

    import numba
    import numpy as np

    shuffle = Random(0).shuffle

    import numba_sim as sim
    from numba_sim.launcher import launcher_for

    @sim.kernel
    def saxpy(x: sim.array(dtype=sim.float32), y: sim.array(dtype=sim.float32),
              a: sim.float32):
        i = sim.tid()
        y[i] = a * x[i] + y[i]

    result = {"layer": None, "threads": numba.get_num_threads(), "sizes": {}}
    for n in SIZES:
        x = np.ones(n, np.float32)
        y = np.zeros(n, np.float32)
        a = np.float32(0.5)
        launcher = launcher_for(saxpy, "cpu", 1)
        dims, bound = (n,), [x, y, a]
        serial, parallel = launcher.serial, launcher.parallel
        serial(dims, *bound)  # compile (or load) both, outside the measurement
        parallel(dims, *bound)
        result["layer"] = numba.threading_layer()
        start = time.perf_counter()
        serial(dims, *bound)
        one = time.perf_counter() - start
        per_round = max(2, min(50, int(budget / rounds / max(one, 1e-6) / 4)))
        calls = {
            "serial": lambda: serial(dims, *bound),
            "parallel": lambda: parallel(dims, *bound),
            "chosen": lambda: launcher(dims, n, bound),
            "launch/serial": lambda: serial_launch(saxpy, n, inputs=[x, y, a]),
            "sim.launch": lambda: sim.launch(saxpy, n, inputs=[x, y, a]),
        }

        def serial_launch(*arguments, **keywords):
            launcher.serial_threshold = n + 1  # sim.launch on the serial twin
            try:
                sim.launch(*arguments, **keywords)
            finally:
                del launcher.serial_threshold

        times = {mode: [] for mode in MODES}
        order = list(MODES)
        for _ in range(rounds):
            shuffle(order)  # no mode always follows another (a parallel round leaves the
            for mode in order:  # process behind in the OS's fair share, and the next pays)
                call = calls[mode]
                start = time.perf_counter()
                for _ in range(per_round):
                    call()
                times[mode].append(time.perf_counter() - start)
        launches = rounds * per_round
        kept = rounds - rounds // 10
        result["sizes"][n] = {
            "launches": launches,
            "mean_us": {mode: sum(times[mode]) / launches * 1e6 for mode in MODES},
            "trimmed_us": {mode: sum(sorted(times[mode])[:kept]) / (kept * per_round) * 1e6
                           for mode in MODES},
            "choice": repr(launcher.choices[n.bit_length()]),
        }
    print(json.dumps(result))


def busy_processes(count):
    return [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(count)]


def run_worker(layer, rounds, budget, load_gate):
    command = [sys.executable, __file__, "--worker", layer, "--rounds", str(rounds),
               "--budget", str(budget)] + ([] if load_gate else ["--no-load-gate"])
    output = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if output.returncode:
        raise RuntimeError(f"worker failed:\n{output.stderr}")
    return json.loads(output.stdout.strip().splitlines()[-1])


def loads():
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="*", default=["omp", "tbb"])
    parser.add_argument("--busy", nargs="*", type=int, default=None,
                        help="numbers of busy background processes (default: 0 and cores)")
    parser.add_argument("--processes", type=int, default=3, help="fresh workers per config")
    parser.add_argument("--rounds", type=int, default=100, help="interleaved rounds per worker")
    parser.add_argument("--budget", type=float, default=1.0,
                        help="seconds of serial launches per size and worker, roughly")
    parser.add_argument("--no-load-gate", action="store_true",
                        help="ignore the load average (cpu_scheduling.machine_busy): the "
                        "measured choice alone")
    parser.add_argument("--json", help="also write the tables to this file (python -m benchmarks)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        worker(options.worker, options.rounds, options.budget, not options.no_load_gate)
        return
    # (report imports Numba: never in a worker, which sets its threading layer first)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from report import emit

    cores = os.cpu_count()
    busy_counts = options.busy if options.busy is not None else [0, cores]
    start_load = loads()
    tables = []
    for layer in options.layers:
        for busy in busy_counts:
            spinners = busy_processes(busy)
            try:
                time.sleep(0.5 if busy else 0)
                load_before = loads()
                results = [run_worker(layer, options.rounds, options.budget,
                                      not options.no_load_gate)
                           for _ in range(options.processes)]
            finally:
                for process in spinners:
                    process.kill()
                    process.wait()
            tables.append(config_table(layer, busy, options, results, load_before))
    for table in tables:
        table.note(f"{cores} cores; load average (1/5/15 min) {start_load} when the script "
                   "started" + ("; load gate off" if options.no_load_gate else ""))
    emit(tables, options.json)


def config_table(layer, busy, options, results, load_before):
    """One configuration's table: per size and statistic, each mode's mean launch time and
    its ratio to the serial launch (sim.launch: to launch/serial), mean over the workers
    [worst worker]."""
    from report import Table

    used = {r["layer"] for r in results}
    table = Table(f"launch time, layer {layer} (used: {', '.join(sorted(used))}), "
                  f"{results[0]['threads']} threads, {busy} busy processes, "
                  f"{options.processes} fresh workers", ["n", "statistic", *MODES])
    for n in SIZES:
        rows = [r["sizes"][str(n)] for r in results]
        for statistic in ("mean_us", "trimmed_us"):
            cells = []
            for mode in MODES:
                base = "launch/serial" if mode in ("sim.launch", "launch/serial") else "serial"
                times = [row[statistic][mode] for row in rows]
                ratios = [row[statistic][mode] / row[statistic][base] for row in rows]
                cells.append(f"{statistics.mean(times):.1f} µs" + (
                    "" if mode == base else
                    f" x{statistics.mean(ratios):.2f} [{max(ratios):.2f}]"))
            table.add(f"{n:,}", statistic[:-3], *cells)
        table.note(f"n={n:,}: {rows[0]['launches']} launches per mode and worker; the last "
                   f"worker's choice: {rows[-1]['choice']}")
    table.note("x: mean over workers of the ratio to serial (sim.launch to launch/serial), "
               "[the worst worker]; trimmed leaves out each mode's slowest tenth of rounds")
    table.note(f"load average {load_before} before, {loads()} after")
    return table


if __name__ == "__main__":
    main()
