"""What every benchmark here shares: timing side by side, one-thread runs, and result tables.

* ``interleaved_medians`` times the contenders in turns, round after round, so that a change
  of the machine's load falls on all of them; only medians and ratios are reported.
* ``one_thread`` runs a callable with one Numba thread: the per-core figure (Warp's CPU
  backend runs on one thread).
* ``Table`` is one result table: printed as text by the script that made it, and written as
  JSON (``--json FILE``) for ``python -m benchmarks``, which puts every table into
  ``docs/benchmarks.md``.
"""

import json
import os
import time

import numba
import numpy as np


def one_thread(fn):
    """``fn`` run with a single Numba thread.

    ``interleaved_medians`` sets the thread count outside the timed region (setting it costs
    microseconds, as much as a small launch); called directly, the wrapper sets it itself.
    """

    def run():
        with threads_set_to(1):
            return fn()

    run.threads, run.inner = 1, fn
    return run


class threads_set_to:
    """Numba's thread count set to ``n`` inside a ``with`` block."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.previous = numba.get_num_threads()
        numba.set_num_threads(self.n)

    def __exit__(self, *exc_info):
        numba.set_num_threads(self.previous)


def interleaved_medians(runners, repeat):
    """Median time of each runner, the runners taking turns round after round.

    Taking turns spreads the machine's load changes over all of them, so the
    ratios stay meaningful on a noisy machine.
    """
    for fn in runners.values():
        fn()  # warm up (compiles)
    samples = {name: [] for name in runners}
    for _ in range(repeat):
        for name, fn in runners.items():
            with threads_set_to(getattr(fn, "threads", numba.get_num_threads())):
                inner = getattr(fn, "inner", fn)
                start = time.perf_counter()
                inner()
                samples[name].append(time.perf_counter() - start)
    return {name: float(np.median(times)) for name, times in samples.items()}


def load_average():
    """The machine's 1-minute load average (what else ran during a measurement)."""
    return os.getloadavg()[0]


class Table:
    """One result table: a title, column names, rows of cells, and notes below it."""

    def __init__(self, title, columns, notes=()):
        self.title = title
        self.columns = list(columns)
        self.rows = []
        self.notes = list(notes)

    def add(self, *cells):
        if len(cells) != len(self.columns):
            raise ValueError(f"Table.add: {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append([_cell(c) for c in cells])

    def note(self, text):
        self.notes.append(text)

    def text(self):
        widths = [max(len(str(x)) for x in [name] + [row[k] for row in self.rows])
                  for k, name in enumerate(self.columns)]
        lines = [f"== {self.title}",
                 "  ".join(name.rjust(w) for name, w in zip(self.columns, widths))]
        lines += ["  ".join(str(c).rjust(w) for c, w in zip(row, widths)) for row in self.rows]
        lines += [f"   {n}" for n in self.notes]
        return "\n".join(lines)

    def markdown(self):
        lines = [f"#### {self.title}", "",
                 "| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---" if k == 0 else "---:" for k in range(len(self.columns))) + "|"]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in self.rows]
        if self.notes:
            lines += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(lines)

    def as_dict(self):
        return {"title": self.title, "columns": self.columns, "rows": self.rows,
                "notes": self.notes}

    @classmethod
    def from_dict(cls, data):
        table = cls(data["title"], data["columns"], data["notes"])
        table.rows = data["rows"]
        return table


def _cell(value):
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return value


def ms(seconds):
    """A time for a table: s, ms or µs, three significant digits."""
    if seconds >= 1.0:
        return f"{seconds:.3g} s"
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} µs"


def ratio(theirs, ours):
    return f"{theirs / ours:.2f}x"


def emit(tables, json_path=None):
    """Print the tables; with ``json_path``, also write them there for ``python -m benchmarks``."""
    for table in tables:
        print(table.text(), flush=True)
        print()
    if json_path:
        with open(json_path, "w") as f:
            json.dump([t.as_dict() for t in tables], f)


def cpu_warp():
    """warp-lang, initialized quietly for its CPU device, or None when it is not installed."""
    try:
        import warp as wp
    except ImportError:
        return None
    wp.config.quiet = True
    wp.init()
    return wp


def versus_warp_table(title, times, tasks, has_warp):
    """numba_sim against Warp per task: per core (one thread each) and all cores.

    ``times`` holds ``numba_sim TASK``, ``numba_sim TASK (1 thread)`` and ``warp TASK``.
    """
    table = Table(title, ["task", "numba_sim 1 thread", "warp (1 thread)", "vs warp per core",
                          "numba_sim all cores", "vs warp all cores"])
    for task in tasks:
        single, ours = times[f"numba_sim {task} (1 thread)"], times[f"numba_sim {task}"]
        theirs = times.get(f"warp {task}") if has_warp else None
        table.add(task, ms(single), ms(theirs) if theirs else "-",
                  ratio(theirs, single) if theirs else "-", ms(ours),
                  ratio(theirs, ours) if theirs else "-")
    return table


def timed_both_ways(runners):
    """``numba_sim TASK`` and ``numba_sim TASK (1 thread)`` runners for each of ``runners``."""
    timed = {}
    for task, fn in runners.items():
        timed[f"numba_sim {task}"] = fn
        timed[f"numba_sim {task} (1 thread)"] = one_thread(fn)
    return timed


def finish(tables, args, load_before):
    """Add the run's conditions to every table and print / write them."""
    for table in tables:
        table.note(f"numba threads {numba.get_num_threads()}, threading layer "
                   f"{numba.threading_layer()}; load average {load_before:.2f} before, "
                   f"{load_average():.2f} after; medians of {args.repeat} alternating rounds")
    emit(tables, args.json)
