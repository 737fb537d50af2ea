"""How a CPU launch chooses between its serial and its parallel launcher (issue 21).

A parallel region ends when its slowest thread ends.  When other processes keep every core
busy, a worker thread that the OS has descheduled costs the launch a scheduler slice
(milliseconds): with OpenMP's static chunks a 16k-thread launch took 400 to 2000 times as
long as on one thread, and how badly varied from one process to the next.  TBB's work
stealing (the threading layer _checks.py picks) lets the launching thread take the work of
an absent worker, which removes most of it; what remains is a policy per CPU launcher:

* Launches are grouped in size classes (the bit length of the thread count).  Each class
  holds a :class:`LaunchChoice`: the launcher it runs now (serial or parallel) and an
  average time per thread of each.
* Some launches are timed (two clock reads, about a microsecond in all): at most one in
  ``SAMPLE_EVERY``, at least one per ``SAMPLE_SPACING`` seconds of launches, so short
  launches keep their cost and long ones are watched closely.  The other launches cost a
  counter decrement.  When the current launcher's average falls behind the other's by more
  than ``HYSTERESIS``, the class switches at once.
* Now and then ``TRIAL_LAUNCHES`` timed launches run the other launcher instead (a *trial*),
  and the class switches if it wins.  Trials are spaced so that they take at most
  ``1 / TRIAL_SHARE`` of the class's launch time at the other's mean cost, and each trial
  lost in a row doubles the spacing, up to ``TRIAL_PERIOD`` seconds of launches: a freed
  machine is noticed within about a second, a busy one pays little.
* Serial launches count for at most ``SERIAL_CLIP`` times the serial average (a slow serial
  launch is one the OS interrupted, which any launcher pays); parallel launches count in
  full (waiting for a descheduled worker is the parallel launcher's own cost).  Under load
  the choice thus leans to one thread, which is never far from one thread's time.
* While other runnable tasks fill every core (:func:`machine_busy`), a new class starts on
  the serial launcher and parallel trials are put off: each would risk a scheduler slice
  to learn what the run queue already says.
* A timed call that compiled (or loaded from the disk cache) is no measurement and is
  repeated at the next launch.  The serial twin is compiled when the first trial needs it,
  ``FIRST_TRIAL`` launches into a class, so kernels launched once or twice compile as before.

The process's CPU affinity was considered and left to Numba, whose default thread count is
already the affinity mask's size.  Concurrent Python threads launching one kernel may
interleave their updates of a class; an average then loses a sample, which is harmless.
"""

import os
import time

SAMPLE_EVERY = 32
"""At most one launch in SAMPLE_EVERY is timed once the current launcher has an average..."""

SAMPLE_SPACING = 64e-6
"""... and at least one per SAMPLE_SPACING seconds of launches: a timed launch costs about a
microsecond more than another, so short launches are timed rarely (the overhead stays near
1.5%) and long ones, whose collapse under load costs the most, every time."""

TRIAL_SHARE = 32
"""Trials of the launcher not chosen cost at most 1/TRIAL_SHARE of the launch time."""

TRIAL_LAUNCHES = 2
"""Launches of the other launcher in one trial."""

HYSTERESIS = 1.1
"""A class switches launcher when the other one is faster by more than this factor."""

AVERAGING = 0.25
"""Weight of a new timed launch in the current launcher's estimate..."""

TRIAL_AVERAGING = 0.5
"""... and of a trial's launch in the other's (an older figure, so fresh news weighs more)."""

SERIAL_CLIP = 2.0
"""A timed serial launch counts for at most SERIAL_CLIP times the serial estimate."""

FIRST_TRIAL = 3
"""Launches of a class before its first trial (and the serial twin's compilation)."""

TRIAL_PERIOD = 1.0
"""Seconds of launches between trials, at most, once trials keep losing (unless the
1/TRIAL_SHARE rule asks for more)."""

MAX_TRIAL_INTERVAL = 1 << 22
"""Launches between trials, at most (so that a freed machine is noticed eventually)."""

_clock = time.perf_counter
_CORES = os.cpu_count() or 1


def machine_busy():
    """Whether other runnable tasks fill every core of the machine now.

    Linux: the number of runnable tasks at this instant (``/proc/loadavg``'s fourth field,
    this thread included), against ``os.cpu_count()`` (the count covers the whole machine,
    whatever this process's affinity).  A snapshot, not the one-minute load average, which
    would keep a machine that has just been freed "busy" for a minute.  Elsewhere, the load
    average.  It only starts new size classes on one thread and puts off parallel trials,
    whose threads would wait for cores; the measured launches still decide.
    """
    try:
        with open("/proc/loadavg", "rb") as loadavg:
            running = int(loadavg.read().split()[3].split(b"/")[0])
        return running - 1 >= _CORES
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.getloadavg()[0] >= _CORES
    except (AttributeError, OSError):  # no load average here (Windows)
        return False


def _averaged(estimate, sample, weight, clip):
    """The exponential average *estimate* moved towards *sample*, clipped to *clip* times the
    estimate unless None."""
    if not estimate:
        return sample
    if clip is not None:
        sample = min(sample, clip * estimate)
    return estimate + weight * (sample - estimate)


class LaunchChoice:
    """The launcher one size class of one CPU launcher runs, and what it has measured.

    ``owner`` has ``serial`` and ``parallel`` properties giving the compiled launchers
    (compiled on first use).  The hot path (``CpuLauncher.__call__``) decrements
    ``countdown`` and calls ``dispatcher`` while it stays positive; otherwise it calls
    :meth:`sample`.
    """

    __slots__ = ("owner", "dispatcher", "parallel", "countdown", "period", "until_trial",
                 "serial_time", "parallel_time", "serial_cost",
                 "trial_launches", "losses", "switches", "trials", "samples")

    def __init__(self, owner):
        self.owner = owner
        self.dispatcher = None
        self.parallel = True
        self.countdown = 1
        self.period = 1
        self.until_trial = FIRST_TRIAL
        self.serial_time = 0.0
        """mean seconds per thread of the serial launcher, an exponential average of its
        timed launches (0: not measured yet)"""
        self.parallel_time = 0.0
        """the same, of the parallel launcher.  Both decide, with one difference: a serial
        launch counts for at most SERIAL_CLIP times the serial estimate.  A serial launch is
        slow only when the OS took its core away, which costs any launcher a scheduler
        slice and must not decide alone; a parallel launch is slow also when it waits for a
        descheduled worker, which is its own cost and counts in full.  Under load the
        choice thus leans to the serial launcher, which is never far from one thread."""
        self.serial_cost = 0.0
        """the serial average without the clipping: the mean cost of a serial trial, which
        spaces the trials"""
        self.trial_launches = 0
        """launches of the trial in progress so far"""
        self.losses = 0
        """trials lost in a row (each doubles the interval to the next)"""
        self.switches = 0
        self.trials = 0
        self.samples = 0

    def __repr__(self):
        current = "parallel" if self.parallel else "serial"
        return (f"LaunchChoice({current}, serial {self.serial_time * 1e9:.3g} ns/thread, "
                f"parallel {self.parallel_time * 1e9:.3g} ns/thread, {self.samples} samples, "
                f"{self.trials} trials, {self.switches} switches)")

    def sample(self, dims, count, args):
        """Run one timed launch (of the current launcher, or a trial of the other) and update
        the choice."""
        self.until_trial -= self.period
        trial = self.until_trial <= 0
        if not self.samples and self.dispatcher is None and machine_busy():
            self.parallel = False  # a busy machine: start on one thread
        if trial and not self.parallel and not self.trial_launches and machine_busy():
            trial = False  # no parallel trial while every core is taken: try again later
            self.losses = min(self.losses + 1, 30)
            self._plan_trial(count)
        parallel = self.parallel != trial
        owner = self.owner
        dispatcher = owner.parallel if parallel else owner.serial
        overloads = dispatcher.overloads
        compiled = len(overloads)
        start = _clock()
        dispatcher(dims, *args)
        elapsed = _clock() - start
        if len(overloads) == compiled:  # else it compiled (or loaded) now: no measurement
            self._record(parallel, trial, elapsed / count, count)
        else:
            self._schedule(1)
        self.dispatcher = owner.parallel if self.parallel else owner.serial

    def _record(self, parallel, trial, per_thread, count):
        self.samples += 1
        weight = TRIAL_AVERAGING if trial else AVERAGING
        if parallel:
            self.parallel_time = _averaged(self.parallel_time, per_thread, weight, None)
        else:
            self.serial_time = _averaged(self.serial_time, per_thread, weight, SERIAL_CLIP)
            self.serial_cost = _averaged(self.serial_cost, per_thread, weight, None)
        if trial:
            self.trial_launches += 1
            if self.trial_launches < TRIAL_LAUNCHES:  # the trial goes on at the next launch
                self._schedule(1)
                return
            self.trial_launches = 0
            self.trials += 1
        chosen, other = (self.parallel_time, self.serial_time) if self.parallel else \
            (self.serial_time, self.parallel_time)
        if not chosen:  # the current launcher is still unmeasured
            if trial:
                self.until_trial = 2  # the next timed launch measures it
            self._schedule(1)
            return
        if other and chosen > other * HYSTERESIS:
            self.parallel = not self.parallel
            self.switches += 1
            self.losses = 0
            chosen = other
            self._plan_trial(count)
        elif trial:
            self.losses = min(self.losses + 1, 30)
            self._plan_trial(count)
        self._schedule(max(1, min(SAMPLE_EVERY, int(SAMPLE_SPACING / (chosen * count)))))

    def _plan_trial(self, count):
        """Space the next trial: trials (TRIAL_LAUNCHES launches of the other launcher, at
        its mean cost) take at most 1/TRIAL_SHARE of the time, and each trial lost (or put
        off) in a row doubles the interval, up to TRIAL_PERIOD seconds of launches."""
        chosen, other = (self.parallel_time, self.serial_cost) if self.parallel else \
            (self.serial_time, self.parallel_time)
        interval = int(TRIAL_LAUNCHES * TRIAL_SHARE * other / chosen) if chosen and other \
            else 2 * SAMPLE_EVERY
        limit = int(TRIAL_PERIOD / (chosen * count)) if chosen else interval
        self.until_trial = max(2 * SAMPLE_EVERY, min(
            MAX_TRIAL_INTERVAL, max(interval, min(interval << self.losses, limit))))

    def _schedule(self, launches):
        self.period = self.countdown = launches


__all__ = ["LaunchChoice", "machine_busy"]
