"""Launching substeps without paying ``sim.launch``'s argument binding every time (CPU).

A solver's substep launches the same kernels with the same arrays substep after
substep (two sets, when the caller swaps ``state_0`` and ``state_1``).  Binding
the arguments costs about 15 us a launch, far more than a small model's kernel:

* ``SubstepLaunches._launch`` records a launch the first time its arguments are
  seen (``sim.launch(..., record_cmd=True)``) and replays the recorded launch the
  next times: same kernel, same array objects, same scalar values;
* ``step_frame`` runs a frame of substeps as one CPU graph (``sim.capture``):
  captured once per set of states, controls, contacts, ``dt`` and substep count,
  replayed as one compiled call (a 20-particle rope: ~0.6 ms a frame -> ~0.03 ms).

Arrays are recorded by reference (a replay reads their current contents); the
cache keys hold the objects they name, so an id is never reused while cached.
Inside a user's ``sim.capture("cpu")`` launches go through ``sim.launch`` and are
recorded into the user's graph.  Launches of CUDA models go through ``sim.launch``
(which has its own prepared-launch fast path).
"""

import numpy as np

import numba_sim as sim
from numba_sim import launch_capture
from numba_sim.physics import differentiable

_SCALARS = (bool, int, float, np.integer, np.floating)


def _key(value):
    """A scalar by type and value, anything else (arrays, structs, vectors) by identity."""
    return (type(value), value) if isinstance(value, _SCALARS) else id(value)


def capturing():
    """Whether this thread is recording a CPU graph (``sim.capture("cpu")``)."""
    return launch_capture.cpu_graph_recording() is not None


class SubstepLaunches:
    """Mixed into solvers: ``_launch`` (recorded launches), ``step_frame`` (CPU graphs).

    ``replay_launches`` (default True on the CPU) turns both off when set to False:
    every launch is then a plain ``sim.launch``.
    """

    FRAME_GRAPHS = True
    """whether ``step_frame`` may capture a frame as one CPU graph (a graph inlines every
    substep's kernels into one function: a large kernel times many substeps takes LLVM
    minutes to optimize)"""
    DIFFERENTIABLE = False
    """whether ``step`` may run under a ``sim.Tape`` (differentiable.py); the others raise
    a RuntimeError saying why at their first launch under one"""
    RECORDED_LIMIT = 128
    """recorded launches kept per solver (the cache is emptied when it is full)"""
    GRAPH_LIMIT = 8
    """frame graphs kept per solver"""

    def _init_launches(self, cpu):
        self.replay_launches = bool(cpu)
        self._recorded = {}
        self._graphs = {}
        self._gravity_key = None
        self._gravity_value = None

    def _gravity(self):
        """The model's gravity as one ``sim.vec3`` object while it is unchanged (so that
        a recorded launch taking it is found again)."""
        key = self.model.gravity.tobytes()
        if key != self._gravity_key:
            self._gravity_value = sim.vec3(*(float(g) for g in self.model.gravity))
            self._gravity_key = key
        return self._gravity_value

    def _launch(self, kernel, dim, inputs):
        """``sim.launch(kernel, dim=dim, inputs=inputs)``, replayed when seen before."""
        if differentiable.taping():
            if not self.DIFFERENTIABLE:
                raise differentiable.refuse(self)
            # the tape records every launch with its arguments; no replayed command
            sim.launch(kernel, dim=dim, inputs=inputs)
            return
        if not (self.replay_launches and self._cpu) or capturing():
            sim.launch(kernel, dim=dim, inputs=inputs)
            return
        key = (id(kernel), dim, *map(_key, inputs))
        entry = self._recorded.get(key)
        if entry is None:
            if len(self._recorded) >= self.RECORDED_LIMIT:
                self._recorded.clear()
            recorded = sim.launch(kernel, dim=dim, inputs=inputs, record_cmd=True)
            entry = self._recorded[key] = (recorded, kernel, inputs)
        entry[0].launch()

    def _check_capturable(self, call):
        """Before anything of the step is made or recorded (the HashGrid included)."""
        if self._cpu and capturing() and self._particle_contacts():
            raise RuntimeError(
                f"{call}: particle-particle contacts rebuild a HashGrid on the host every "
                "substep, which a CPU capture cannot record; set model.particle_collision = "
                "False to capture, or step without sim.capture")

    def _graph_key(self):
        """What a frame graph depends on besides its states, control, contacts and dt:
        the model's parameters (every assignment bumps ``_version``), its gravity, and
        the solver's settings."""
        m = self.model
        return (m._version, m.gravity.tobytes(), getattr(self, "iterations", None))

    def step_frame(self, state_0, state_1, control, contacts, dt, substeps):
        """``substeps`` steps of ``dt``, each reading one state and writing the other
        (``state_0 -> state_1 -> state_0 ...``, as a frame loop that swaps them); returns
        the state holding the result (``state_0`` when ``substeps`` is even).

        Same results as calling ``step`` in that loop.  Small CPU models without
        particle-particle contacts run the frame as one captured CPU graph (captured at
        the first call with these states, control, contacts, dt and substeps, replayed
        after); others step one substep at a time.
        """
        name = f"{type(self).__name__}.step_frame"
        if isinstance(substeps, bool) or not isinstance(substeps, (int, np.integer)) \
                or substeps < 1:
            raise ValueError(f"{name}: substeps must be an int >= 1, got {substeps!r}")
        substeps = int(substeps)
        if substeps > 1 and differentiable.taping():
            raise ValueError(
                f"{name}: a frame of {substeps} substeps alternates state_0 and state_1, which "
                "overwrites states the recording sim.Tape replays in backward; under a tape "
                "step each substep into a fresh state (states = [model.state() for _ in "
                "range(n + 1)]; solver.step(states[i], states[i + 1], ...))")
        states = (state_0, state_1)
        graphable = self.FRAME_GRAPHS and self._cpu and self.replay_launches \
            and not capturing() and not differentiable.taping() \
            and (self.model.particle_count > 0 or self.model.body_count > 0) \
            and not self._particle_contacts()
        if not graphable:
            for k in range(substeps):
                self.step(states[k % 2], states[1 - k % 2], control, contacts, dt)
            return states[substeps % 2]
        parts = [state_0, state_1, control, contacts]
        for state in states:
            parts += [state.particle_q, state.particle_qd, state.particle_f]
        if control is not None:
            parts += [control.tri_activations, control.tet_activations]
        key = (*map(id, parts), _key(dt), substeps, self._graph_key())
        entry = self._graphs.get(key)
        if entry is None:
            with sim.capture("cpu") as graph:
                for k in range(substeps):
                    self.step(states[k % 2], states[1 - k % 2], control, contacts, dt)
            if len(self._graphs) >= self.GRAPH_LIMIT:
                self._graphs.clear()
            entry = self._graphs[key] = (graph, parts)
        entry[0].launch()
        return states[substeps % 2]
