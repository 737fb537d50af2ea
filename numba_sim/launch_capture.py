"""Captured and recorded launches: ``sim.capture``, ``record_cmd=True`` and Warp's spellings.

``with sim.capture(device) as g:`` records the launches made inside the block on this thread;
``g.launch()`` replays them.  On CUDA it is a CUDA graph (cuda_runtime.py).  On the CPU the
launches are recorded, not run (as Warp's CPU capture does), with their arguments bound once:
``g.launch()`` calls one compiled function that runs every recorded launcher in order, so a
replay costs one call however many launches it holds.  The arrays are recorded by reference:
a replay reads and writes their current contents.

``sim.launch(..., record_cmd=True)`` returns a :class:`RecordedLaunch` whose ``launch()``
repeats the launch with the same arguments, skipping the binding; Warp's ``Launch``
(``sim.Launch(kernel, device)``, ``set_dim``, ``set_param_at_index`` ...) is the same object.

Warp's names map onto these: ``ScopedCapture`` (``.graph``), ``capture_begin``,
``capture_end`` and ``capture_launch``; Warp's ``capture_if`` / ``capture_while`` run their
branches now, or, inside a CPU capture, record them and choose at each replay.
"""

import contextlib
import threading

import numba

from numba_sim import arrays, autodiff_hooks, cache, cuda_runtime, launch_bounds, structure_ids
from numba_sim.spatial import common as spatial_common

_recording = threading.local()
"""``.graph``: the CpuGraph this thread records into, if any."""


def cpu_graph_recording():
    """The CpuGraph the calling thread records into, or None (launcher.py asks)."""
    return getattr(_recording, "graph", None)


# CPU builds of spatial structures (a layer below) ask here whether to record themselves
spatial_common.cpu_capture.graph = cpu_graph_recording


def host_operation(step):
    """Run *step* (a callable without arguments: host memory work such as a copy, a fill or
    a zeroing of arrays) now, or, inside a CPU ``sim.capture``, record it instead, as a
    launch is: each replay of the graph runs it, in order with the launches (as Warp's
    capture records its memory operations)."""
    if not callable(step):
        raise TypeError(f"step: expected a callable without arguments, got {step!r}")
    graph = cpu_graph_recording()
    if graph is not None:
        graph.record_host(step)
    else:
        step()


class RecordedLaunch:
    """A bound launch (``sim.launch(..., record_cmd=True)``, or Warp's ``sim.Launch(kernel,
    device)``): ``launch()`` repeats it; as Warp's ``Launch``, its grid (``set_dim``) and
    arguments (``set_param_at_index``, ``set_param_by_name``, ``set_params``) can be changed
    between launches (each new argument is bound once, when set)."""

    def __init__(self, kernel, launcher, dims, count, bound, stream=None, ordinal=None):
        self.kernel = kernel
        self.dims = dims
        self._launcher, self._count, self._bound = launcher, count, list(bound)
        self._stream, self._ordinal = stream, ordinal
        self._target = next((key[0] for key, made in kernel.launchers.items()
                             if made is launcher), None)
        self._checked = False  # checked (again) at the first launch: see _check

    def launch(self, stream=None):
        if not self._checked:
            self._check()
        if autodiff_hooks.tapes and not hasattr(self.kernel, "forward_kernel"):
            # run under a sim.Tape: recorded on it, as sim.launch is (an adjoint is not)
            autodiff_hooks.tapes[-1].record_launch(self.kernel, self.dims, self._bound, [],
                                                   None, stream)
        self._launcher(self.dims, self._count, self._bound,
                       stream=self._stream if stream is None else stream, ordinal=self._ordinal)

    def _check(self):
        """What ``sim.launch`` checks, for the grid and arguments set since."""
        if self.kernel.tid_indexed:
            launch_bounds.check(self.kernel, self.dims, self._bound)
        if self.kernel.structure_ids:
            structure_ids.check(self.kernel, self._bound)
        self._checked = True

    def _device_kind(self):
        """"cpu" or "cuda": where the launch runs."""
        if self._target is None:
            devices = {arrays.device_of(v) for v in self._bound} - {None}
            self._target = devices.pop() if len(devices) == 1 else "cpu"
        return self._target

    def set_dim(self, dim):
        """Warp's ``Launch.set_dim``: launch over *dim* threads (an int or a tuple) from now."""
        from numba_sim import launcher  # import cycle: launcher.launch makes RecordedLaunches

        dims, count = launcher._normalize_dims(dim)
        if count and (len(dims) != len(self.dims) or not self._count):
            self._launcher = launcher.launcher_for(self.kernel, self._device_kind(), len(dims))
        self.dims, self._count, self._checked = dims, count, False
        if not count:
            self._launcher = launcher._no_launch

    def set_param_at_index(self, index, value, adjoint=False):
        """Warp's ``Launch.set_param_at_index``: the argument at *index* is *value* from now;
        with ``adjoint=True`` (a recorded adjoint launch), the adjoint of the kernel's
        parameter at *index*."""
        forward = getattr(self.kernel, "forward_kernel", None)
        if adjoint:
            index = self._adjoint_index(forward, index)
        parameters = self.kernel.parameters
        if not isinstance(index, int) or not 0 <= index < len(parameters):
            raise IndexError(f"index: expected a parameter position from 0 to "
                             f"{len(parameters) - 1} of {self.kernel.__qualname__}, got {index!r}")
        parameter = parameters[index]
        if parameter.value_class is not None and type(value) is not parameter.value_class \
                and len(getattr(value, "shape", ())) == 0 and not isinstance(value, (list, tuple)):
            # Warp's words: a single value for a composite parameter is not a fill here
            raise RuntimeError(f"Error setting launch parameter: argument '{parameter.name}' "
                               f"expects {parameter.value_class.spec.warp_name} but got a "
                               f"single value ({value!r})")
        bound, device = parameter.bind(self.kernel, value)
        if device is not None and device != self._device_kind():
            raise ValueError(f"{self.kernel.__qualname__}: argument {parameter.name!r} is on "
                             f"{device} but the launch is on {self._device_kind()}")
        self._bound[index] = bound
        self._checked = False
        if forward is not None and not adjoint:
            self._update_struct_fields(forward, parameter.name, value)
            if parameter.name in self.kernel.adjoint_parameters and parameter.array is not None:
                # Warp's rule: a forward array's adjoint is its gradient until set
                gradient = autodiff_hooks.gradient_or_scratch(value)
                self.set_param_at_index(index, gradient, adjoint=True)

    def _adjoint_index(self, forward, index):
        """The position in an adjoint kernel's arguments of the adjoint of the forward
        kernel's parameter at *index*."""
        if forward is None:
            raise ValueError(f"adjoint: {self.kernel.__qualname__} is not an adjoint launch "
                             f"(record one with sim.launch(..., adjoint=True, record_cmd=True) "
                             f"or sim.Launch(kernel, device, adjoint=True))")
        names = [p.name for p in forward.parameters]
        if not isinstance(index, int) or not 0 <= index < len(names):
            raise IndexError(f"index: expected a parameter position from 0 to "
                             f"{len(names) - 1} of {forward.__qualname__}, got {index!r}")
        if names[index] not in self.kernel.adjoint_parameters:
            raise ValueError(f"adjoint: parameter {names[index]!r} of {forward.__qualname__} "
                             f"is not differentiable (it has no adjoint)")
        return len(names) + len(self.kernel.struct_fields) + \
            self.kernel.adjoint_parameters.index(names[index])

    def _update_struct_fields(self, forward, name, value):
        """A struct argument set on an adjoint launch: the arrays the adjoint takes from it, and
        their adjoints (the gradients registered beside them)."""
        offset = len(forward.parameters)
        adjoints = offset + len(self.kernel.struct_fields) + len(self.kernel.adjoint_parameters)
        parameters = self.kernel.parameters
        for k, (struct_name, chain) in enumerate(self.kernel.struct_fields):
            if struct_name == name:
                field = value
                for attribute in chain:
                    field = None if field is None else getattr(field, attribute)
                self._bound[offset + k] = parameters[offset + k].bind(self.kernel, field)[0]
                self._bound[adjoints + k] = parameters[adjoints + k].bind(
                    self.kernel, autodiff_hooks.gradient_or_scratch(field))[0]

    def set_param_by_name(self, name, value, adjoint=False):
        """Warp's ``Launch.set_param_by_name``."""
        for index, parameter in enumerate(self.kernel.parameters):
            if parameter.name == name:
                return self.set_param_at_index(index, value, adjoint)
        raise ValueError(f"Argument '{name}' not found in kernel '{self.kernel.__qualname__}'")

    def set_params(self, values):
        """Warp's ``Launch.set_params``: the arguments from the first on, in order."""
        for index, value in enumerate(values):
            self.set_param_at_index(index, value)

    def __repr__(self):
        return f"<numba_sim recorded launch of {self.kernel.__qualname__}, dim={self.dims}>"


def _default_argument(parameter):
    """Warp's zero argument of a parameter for a `Launch` made without params: a null
    array, a zero scalar or value, a default struct."""
    if parameter.array is not None:
        return None
    if parameter.scalar is not None:
        return parameter.scalar(0)
    if parameter.value_class is not None:
        return parameter.value_class()
    if isinstance(parameter.annotation, type) and hasattr(parameter.annotation, "numpy_dtype"):
        return parameter.annotation()
    raise TypeError(f"params: {parameter.name!r} ({parameter.annotation!r}) has no default "
                    "argument; give the launch's params")


def Launch(kernel, device=None, params=None, bounds=None, max_blocks=0, block_dim=256,  # noqa: N802
           adjoint=False):
    """Warp's ``wp.Launch(kernel, device)``: a recorded launch of *kernel* on *device*, with
    *params* (zero arguments by default: null arrays, zero scalars and values) over
    *bounds* threads (none by default: ``set_dim``); *max_blocks* and *block_dim* are
    Warp's CUDA block settings (numba_sim picks its own blocks); with *adjoint*, the launch
    of the kernel's adjoint, whose adjoint arguments ``set_param_*(..., adjoint=True)`` set
    (by default the gradients registered beside the arrays)."""
    from numba_sim import launcher  # import cycle: launcher.launch makes RecordedLaunches

    if params is None:
        params = [_default_argument(p) for p in kernel.parameters]
    recorded = launcher.launch(kernel, dim=0 if bounds is None else bounds, inputs=params,
                               device=device, record_cmd=True, adjoint=adjoint)
    if device is not None:
        recorded._target = arrays.parse_device(device)[0]
    return recorded


class CpuGraph:
    """The launches recorded on the CPU by ``sim.capture("cpu")``, replayed as one call."""

    def __init__(self):
        self._steps = []
        """(CPU launcher, dims, thread count, bound arguments) of each recorded launch, or a
        host step (a callable, :meth:`record_host`)"""
        self._closed = False
        self._replay = None
        self._arguments = None

    def record(self, launcher, dims, count, bound):
        self._steps.append((launcher, dims, count, list(bound)))

    def record_host(self, step):
        """Record ``step`` (a callable without arguments), run at each replay in order with
        the launches: host work captured with them, such as a CPU HashGrid's build."""
        self._steps.append(step)

    def __len__(self):
        return len(self._steps)

    def launch(self, stream=None):
        if not self._closed:
            raise RuntimeError("the graph is still being captured; launch it after the "
                               "'with sim.capture()' block")
        if not self._steps:
            return
        if self._replay is None:
            self._replay, self._arguments = self._compile()
        self._replay(*self._arguments)

    def _compile(self):
        """The replay and its arguments: one compiled call for the launches, or, with host
        steps among them, the host steps and one compiled call per run of launches between
        them, in order."""
        if all(isinstance(step, tuple) for step in self._steps):
            return self._compile_launches(self._steps)
        parts, run = [], []
        for step in [*self._steps, None]:
            if isinstance(step, tuple):
                run.append(step)
                continue
            if run:
                parts.append(self._compile_launches(run))
                run = []
            if step is not None:
                parts.append((step, ()))

        def replay():
            for function, arguments in parts:
                function(*arguments)

        return replay, ()

    def _compile_launches(self, steps):
        """One njit function calling each launch's compiled launcher with its arguments.

        Each distinct argument object becomes one parameter of the replay (arrays are unboxed
        once per replay, however many launches use them); dims are constants.
        """
        namespace, parameters, lines, arguments, dispatchers = {"__name__": __name__}, {}, [], [], []
        for k, (launcher, dims, count, bound) in enumerate(steps):
            dispatcher = launcher.dispatcher_for(count)  # the current serial/parallel choice
            namespace[f"launcher{k}"] = dispatcher
            dispatchers.append(dispatcher)
            names = []
            for value in bound:
                name = parameters.get(id(value))
                if name is None:
                    name = parameters[id(value)] = f"a{len(arguments)}"
                    arguments.append(value)
                names.append(name)
            lines.append(f"    launcher{k}({dims!r}, {', '.join(names)})")
        source = f"def replay({', '.join(f'a{k}' for k in range(len(arguments)))}):\n" \
            + "\n".join(lines) + "\n"
        exec(compile(source, f"<numba_sim CPU graph of {len(steps)} launches>", "exec"),
             namespace)
        # on disk like the kernels: a frame graph of a large model compiles for seconds
        replay = cache.attach_graph(numba.njit(namespace["replay"]), namespace["replay"],
                                    source, dispatchers)
        return replay, tuple(arguments)


@contextlib.contextmanager
def capture(device="cuda", stream=None):
    """Record the launches made inside the block; ``g.launch()`` replays them (see the
    module docstring).  *device*: "cpu", "cuda" or "cuda:N"."""
    kind, _ = arrays.parse_device(device)
    if kind == "cuda":
        with cuda_runtime.capture(device, stream) as graph:
            yield graph
        return
    if cpu_graph_recording() is not None:
        raise RuntimeError("sim.capture: a CPU capture is already active on this thread")
    graph = CpuGraph()
    _recording.graph = graph
    try:
        yield graph
    finally:
        _recording.graph = None
        graph._closed = True


class ScopedCapture:
    """Warp's ``wp.ScopedCapture(device=None, stream=None, ...)``: the graph is ``.graph``."""

    def __init__(self, device=None, stream=None, force_module_load=None, external=False,
                 apic=False, capture_mode=None):
        if external:
            raise ValueError("external: an external capture is CUDA-stream specific; numba_sim "
                             "captures on CuPy's streams (use sim.capture)")
        self.device = arrays.current_device() if device is None else device
        self.stream = stream
        self.graph = None
        self.active = False
        self._context = None

    def __enter__(self):
        self._context = capture(self.device, self.stream)
        self.graph = self._context.__enter__()
        self.active = True
        return self

    def __exit__(self, *exc_info):
        self.active = False
        return self._context.__exit__(*exc_info)


_open_captures = {}
"""(thread, device) -> the ScopedCapture that capture_begin opened"""


def capture_begin(device=None, stream=None, force_module_load=None, external=False):
    """Warp's ``wp.capture_begin``: start recording on this thread (``capture_end`` stops)."""
    scoped = ScopedCapture(device, stream, force_module_load, external)
    key = (threading.get_ident(), arrays.parse_device(scoped.device)[0])
    if key in _open_captures:
        raise RuntimeError(f"capture_begin: a capture on {scoped.device} is already open")
    scoped.__enter__()
    _open_captures[key] = scoped


def capture_end(device=None, stream=None):
    """Warp's ``wp.capture_end``: stop recording and return the graph."""
    device = arrays.current_device() if device is None else device
    scoped = _open_captures.pop((threading.get_ident(), arrays.parse_device(device)[0]), None)
    if scoped is None:
        raise RuntimeError(f"capture_end: no capture on {device} was begun on this thread")
    scoped.__exit__(None, None, None)
    return scoped.graph


# --------------------------------------------------------------------------
# Warp's conditional execution: capture_if / capture_while


def _check_condition(condition):
    if arrays.device_of(condition) is None or getattr(condition, "dtype", None) != "int32" \
            or condition.size < 1:
        raise TypeError(f"condition: Condition must be a Warp array of int32 with a single "
                        f"element (a NumPy / CuPy int32 array), got {condition!r}"[:300])


def _condition_is_true(condition):
    """The first element of *condition*, read on the host (a copy from the GPU)."""
    return int(arrays.to_numpy(condition.reshape(-1)[:1])[0]) != 0


def _in_cuda_capture(condition):
    if arrays.device_of(condition) != "cuda":
        return False
    return arrays.cupy_module().cuda.get_current_stream().is_capturing()


def _run(body, kwargs):
    if isinstance(body, (CpuGraph, cuda_runtime.Graph)):
        body.launch()
    elif body is not None:
        body(**kwargs)


def _recorded(body, kwargs):
    """*body* (a callback or a CPU graph) as a CPU graph: a callback's launches and host work,
    recorded (not run) into a graph of its own, as a capture records them."""
    if body is None or isinstance(body, CpuGraph):
        return body
    if isinstance(body, cuda_runtime.Graph):
        raise TypeError("a CUDA graph cannot be a branch of a CPU capture")
    outer, branch = _recording.graph, CpuGraph()
    _recording.graph = branch
    try:
        body(**kwargs)
    finally:
        _recording.graph = outer
        branch._closed = True
    return branch


def _conditional(name, condition, kwargs, run_now, record):
    _check_condition(condition)
    if _in_cuda_capture(condition):
        raise NotImplementedError(f"{name} inside a CUDA graph capture: numba_sim's CUDA "
                                  f"graphs have no conditional nodes; call it outside the "
                                  f"capture, or capture on the CPU")
    graph = cpu_graph_recording() if arrays.device_of(condition) == "cpu" else None
    if graph is None:
        run_now()
    else:
        graph.record_host(record())


def capture_if(condition, on_true=None, on_false=None, stream=None, **kwargs):
    """Warp's ``wp.capture_if``: run *on_true* or *on_false* (a callback, given *kwargs*, or
    a graph) as ``condition[0]`` (an int32 array) is nonzero or not.  Inside a CPU capture
    the branches are recorded and each replay chooses by the condition's value then."""
    if on_true is None and on_false is None:
        return

    def record():
        branches = _recorded(on_true, kwargs), _recorded(on_false, kwargs)

        def step():
            _run(branches[0] if _condition_is_true(condition) else branches[1], {})
        return step

    _conditional("capture_if", condition, kwargs, lambda: _run(
        on_true if _condition_is_true(condition) else on_false, kwargs), record)


def capture_while(condition, while_body, stream=None, **kwargs):
    """Warp's ``wp.capture_while``: run *while_body* (a callback, given *kwargs*, or a graph)
    while ``condition[0]`` (an int32 array the body updates) is nonzero.  Inside a CPU capture
    the body is recorded and each replay loops on the condition's value then."""
    def run_now():
        while _condition_is_true(condition):
            _run(while_body, kwargs)

    def record():
        body = _recorded(while_body, kwargs)

        def step():
            while _condition_is_true(condition):
                _run(body, {})
        return step

    _conditional("capture_while", condition, kwargs, run_now, record)


def capture_launch(graph, stream=None):
    """Warp's ``wp.capture_launch(graph)``: replay *graph*."""
    if not isinstance(graph, (CpuGraph, cuda_runtime.Graph)):
        raise TypeError(f"graph: expected a graph made by sim.capture, got {graph!r}")
    graph.launch(stream)
