"""``sim.launch``: argument binding, device inference and the CPU and CUDA launchers.

A launcher is generated per (kernel, device, launch dimensionality):

* CPU: ``for flat in prange(n)`` unravels the N-D index (row-major, last
  fastest), converts it to int32 and calls the compiled body; a serial
  ``range`` twin serves small launches, so that they stay cheap, and larger
  ones whenever it measures faster (cpu_scheduling.py: a busy machine makes a
  parallel region wait for descheduled threads).  Both are compiled lazily by
  Numba (``parallel=True`` for the first).
* CUDA: a bounds-checked ``cuda.grid(1)`` kernel doing the same unravelling.

Arrays annotated with value-type elements arrive as scalar arrays and are
viewed inside the launcher (``sim.view``), so NumPy and CuPy arrays pass
zero-copy.
"""

import contextlib
import math
import threading
import warnings

import numba
import numpy as np

from numba_sim import arrays, autodiff_hooks, cache, cuda_fast_launch, cuda_launch, cuda_runtime
from numba_sim import errors, launch_bounds, launch_capture, redefinition, structure_ids
from numba_sim.cpu_scheduling import LaunchChoice
from numba_sim.arrays import view
from numba_sim.cuda_args import cuda_args
from numba_sim.lowering.atomics import SERIAL_LAUNCHER_PREFIX
from numba_sim.lowering.hints import borrowed, nonnegative

MAX_THREADS = 2**31 - 1
SERIAL_THRESHOLD = 2048
"""Launches of fewer threads run on the calling thread (no parallel region)."""

CUDA_BLOCK_SIZE = 256


# --------------------------------------------------------------------------
# Generated launcher source

_MAX_INLINED_ARGUMENTS = 30
"""CPython's STACK_USE_GUIDELINE: a call with more arguments is compiled as ``f(*args)``."""


def _launcher_name(kernel, serial):
    """The launcher function's name: a serial CPU launcher's (the calling thread runs every
    thread of the launch) tells the lowering of atomics that it needs none (atomics.py)."""
    return f"{SERIAL_LAUNCHER_PREFIX if serial else '__launch_'}{kernel.__name__}"


def _launcher_source(kernel, ndim, cuda, serial=False):
    """Source of a launcher function ``launch(__dims, a0, a1, ...)``."""
    names = [f"a{k}" for k in range(len(kernel.parameters))]
    body_args = []
    # CPU: the caller holds the arrays; borrowed, they cost no reference counting per thread
    lines = [] if cuda else [f"    {n} = __borrowed({n})" for n in names]
    for k, parameter in enumerate(kernel.parameters):
        if parameter.view_dtype is not None:
            lines.append(f"    v{k} = __view(a{k}, __dtype{k})")
            body_args.append(f"v{k}")
        else:
            body_args.append(f"a{k}")
    count = " * ".join(f"__dims[{d}]" for d in range(ndim))
    if cuda:
        lines += ["    __flat = __int64(__grid(1))",
                  f"    if __flat < {count}:"]
    else:
        lines += [f"    for __index in __range({count}):",
                  "        __flat = __int64(__index)"]
    indent = "        "
    for d in reversed(range(1, ndim)):
        lines += [f"{indent}__i{d} = __flat % __dims[{d}]",
                  f"{indent}__flat = __flat // __dims[{d}]"]
    lines.append(f"{indent}__i0 = __flat")
    tid = ", ".join(f"__nonnegative(__int32(__i{d}))" for d in range(ndim))
    lines.append(f"{indent}__body(({tid},), {', '.join(body_args)})")
    header = f"def {_launcher_name(kernel, serial)}(__dims{''.join(', ' + n for n in names)}):"
    return "\n".join([header] + lines) + "\n"


def _build_launcher(kernel, ndim, cuda, body, loop, serial=False):
    namespace = {"__view": view, "__body": body, "__int32": np.int32, "__int64": np.int64,
                 "__nonnegative": nonnegative, "__borrowed": borrowed,
                 "__name__": __name__}  # a cached launcher's environment re-imports its module
    for k, parameter in enumerate(kernel.parameters):
        namespace[f"__dtype{k}"] = parameter.view_dtype
    if cuda:
        from numba import cuda as numba_cuda

        namespace["__grid"] = numba_cuda.grid
    else:
        namespace["__range"] = loop
    source = _launcher_source(kernel, ndim, cuda, serial)
    code = compile(source, f"<numba_sim launcher of {kernel.key} ({ndim}-D)>", "exec")
    exec(code, namespace)
    function = namespace[_launcher_name(kernel, serial)]
    function.__numba_sim_source__ = source
    return function


class CpuLauncher:
    """Parallel and serial CPU launchers of one kernel and dimensionality.

    Launches of fewer than ``serial_threshold`` threads run the serial launcher.  Larger
    ones run the one their size class (the bit length of the thread count) has measured
    faster lately: a :class:`~numba_sim.cpu_scheduling.LaunchChoice` per class.  Debug
    mode compiles no parallel loop, and a process whose Numba has one thread
    (``NUMBA_NUM_THREADS=1``) has no parallelism to gain: their launches all run the serial
    launcher.  The serial launcher's own code updates memory without atomics (one thread:
    lowering/atomics.py), so it is a variant of its own, compiled and cached apart.
    """

    serial_threshold = SERIAL_THRESHOLD

    def __init__(self, kernel, ndim, mode="release"):
        self.kernel = kernel
        self.ndim = ndim
        self.mode = mode
        self._lock = threading.Lock()
        self._body = None
        self._parallel = None
        self._serial = None
        if mode == "debug" or numba.config.NUMBA_NUM_THREADS == 1:
            self.serial_threshold = MAX_THREADS + 1
        self.choices = [LaunchChoice(self) for _ in range(MAX_THREADS.bit_length() + 1)]
        """the LaunchChoice of each size class, indexed by the thread count's bit length"""

    @property
    def body(self):
        if self._body is None:
            # CPython passes a call of more than 30 arguments as *args, which Numba cannot
            # inline: the body of a kernel with that many parameters is called, not inlined
            inline = "always" if len(self.kernel.parameters) + 1 <= _MAX_INLINED_ARGUMENTS else "never"
            self._body = numba.njit(inline=inline)(self.kernel.body_for(self.mode))
        return self._body

    @property
    def parallel(self):
        if self._parallel is None:
            with self._lock:
                if self._parallel is None:
                    function = _build_launcher(self.kernel, self.ndim, False, self.body, numba.prange)
                    self._parallel = cache.attach(
                        numba.njit(parallel=self.mode != "debug")(function), function,
                        self.kernel, "cpu", self.ndim, "parallel", self.mode)
        return self._parallel

    @property
    def serial(self):
        if self._serial is None:
            with self._lock:
                if self._serial is None:
                    function = _build_launcher(self.kernel, self.ndim, False, self.body, range,
                                               serial=True)
                    self._serial = cache.attach(numba.njit(function), function, self.kernel,
                                                "cpu", self.ndim, "serial", self.mode)
        return self._serial

    def __call__(self, dims, count, args, stream=None, ordinal=None):
        if count < self.serial_threshold:
            self.serial(dims, *args)
            return
        choice = self.choices[count.bit_length()]
        choice.countdown -= 1
        if choice.countdown > 0:
            choice.dispatcher(dims, *args)
        else:
            choice.sample(dims, count, args)

    def dispatcher_for(self, count):
        """The compiled launcher that a launch of *count* threads runs now (a CPU graph
        replays it)."""
        if count < self.serial_threshold:
            return self.serial
        return self.choices[count.bit_length()].dispatcher or self.parallel


class CudaLauncher:
    """The CUDA launcher of one kernel and dimensionality.

    The first launch of each signature goes through numba-cuda's dispatcher
    (which compiles); release-mode launchers whose parameters are all annotated, none
    generic (one signature), then keep a prepared launch per device (cuda_launch.py)
    for the next ones.
    """

    def __init__(self, kernel, ndim, mode="release"):
        from numba import cuda

        self.kernel = kernel
        self.ndim = ndim
        self.mode = mode
        debug = {"debug": True, "opt": False} if mode == "debug" else {}
        self.body = cuda.jit(device=True, **debug)(kernel.body_for(mode, "cuda"))
        self.function = _build_launcher(kernel, ndim, True, self.body, None)
        self.dispatcher = cache.attach(cuda.jit(extensions=[cuda_args], **debug)(self.function),
                                       self.function, kernel, "cuda", ndim, mode)
        parameters = kernel.parameters
        self._preparable = mode == "release" and all(
            p.annotation is not None and not p.generic for p in parameters)
        self._prepared = {}
        """device ordinal -> PreparedLaunch, or None where the signature cannot be prepared"""
        self._strided = tuple(k for k, p in enumerate(parameters)
                              if p.array is not None and p.view_dtype is None)
        """arguments whose contiguity the binding does not check (plain arrays)"""
        self._objects = tuple(k for k, p in enumerate(parameters)
                              if p.array is None and p.scalar is None and p.value_class is None)
        """arguments passed through as objects (spatial structures, structs): their
        Python type is part of the prepared signature"""
        self._object_types = None
        self._checks_arguments = bool(self._strided or self._objects)
        self._current_device = cuda_runtime.current_device_function()
        self._current_stream = cuda_runtime.current_stream_function()

    def __call__(self, dims, count, args, stream=None, ordinal=None):
        if self._preparable and ordinal is None:
            device = self._current_device()
            prepared = self._prepared.get(device)
            if prepared is not None and (not self._checks_arguments or self._matches(args)):
                handle = self._current_stream() if stream is None else \
                    cuda_runtime.stream_handle(stream)
                if handle is not None:
                    result = prepared.launch((dims, *args), (count + CUDA_BLOCK_SIZE - 1) //
                                             CUDA_BLOCK_SIZE, CUDA_BLOCK_SIZE, handle)
                    if not result:
                        return
                    if not cuda_launch.is_context_error(result):
                        raise RuntimeError(f"{self.kernel.__qualname__}: cuLaunchKernel failed: "
                                           f"{cuda_launch.error_name(result)}")
                    # no current context on this thread, or a reset one: the dispatcher
                    # makes the context current, and the launch is prepared again
                    del self._prepared[device]
            self._launch_with_dispatcher(dims, count, args, stream, ordinal)
            if device not in self._prepared and self._matches(args):
                self._prepare(device, dims, args)
            return
        self._launch_with_dispatcher(dims, count, args, stream, ordinal)

    def _launch_with_dispatcher(self, dims, count, args, stream, ordinal):
        blocks = (count + CUDA_BLOCK_SIZE - 1) // CUDA_BLOCK_SIZE
        args = [cuda_runtime.as_cuda_array(a) for a in args]
        with cuda_runtime.on_device(ordinal):
            self.dispatcher[blocks, CUDA_BLOCK_SIZE, cuda_runtime.numba_stream(stream)](dims, *args)

    def _matches(self, args):
        """Whether *args* fit the prepared signature: plain arrays C-contiguous, objects
        of the types seen when it was prepared."""
        for k in self._strided:
            if not arrays.c_contiguous(args[k]):
                return False
        if self._object_types is not None:
            for k, expected in zip(self._objects, self._object_types):
                if type(args[k]) is not expected:
                    return False
        return True

    def _prepare(self, device, dims, args):
        values = (dims, *[cuda_runtime.as_cuda_array(a) for a in args])
        prepared = self._prepared[device] = cuda_launch.prepare(self.dispatcher, values)
        if prepared is not None and self.ndim == 1 and self.mode == "release":
            self.kernel.fast_launch = cuda_fast_launch.make(self.kernel, prepared, args, device,
                                                            CUDA_BLOCK_SIZE)
        if self._object_types is None:
            self._object_types = tuple(type(args[k]) for k in self._objects)


def launcher_for(kernel, device, ndim, mode=None):
    """The (cached) launcher of *kernel* for *device* ('cpu' | 'cuda'), *ndim* and *mode*
    (the current ``sim.config.mode`` by default)."""
    if mode is None:
        mode = kernel.module.compile_mode()  # the module's "mode" option, else config.mode
    key = (device, ndim, mode)
    launcher = kernel.launchers.get(key)
    if launcher is None:
        redefinition.built(kernel)
        factory = CpuLauncher if device == "cpu" else CudaLauncher
        launcher = kernel.launchers.setdefault(key, factory(kernel, ndim, mode))
    return launcher


# --------------------------------------------------------------------------
# launch


def _normalize_dims(dim):
    if type(dim) is int and 0 <= dim <= MAX_THREADS:
        return (dim,), dim
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim) if isinstance(
        dim, (tuple, list)) else None
    if dims is None or not 1 <= len(dims) <= arrays.MAX_NDIM or not all(
            isinstance(d, (int, np.integer)) for d in dims):
        raise TypeError(f"dim: expected an int or a tuple of 1 to {arrays.MAX_NDIM} ints, got {dim!r}")
    if any(d < 0 for d in dims):
        raise ValueError(f"dim: extents must be >= 0, got {dim!r}")
    dims = tuple(int(d) for d in dims)
    count = math.prod(dims)
    if count > MAX_THREADS:
        raise ValueError(f"dim: a launch of {count} threads exceeds the limit of 2^31 - 1 "
                         f"({MAX_THREADS}) threads (tid() is int32, as in Warp)")
    return dims, count


def _bind(kernel, args):
    """(launcher arguments, device inferred from the arrays or None)."""
    bound = []
    device, device_parameter = None, None
    for parameter, value in zip(kernel.parameters, args):
        value, value_device = parameter.bind(kernel, value)
        if value_device is not None:
            if device is not None and value_device != device:
                raise ValueError(
                    f"{kernel.__qualname__}: parameter {parameter.name!r} is on {value_device} but "
                    f"parameter {device_parameter!r} is on {device}; all arrays of a launch must "
                    "be on one device")
            if device is None:
                device, device_parameter = value_device, parameter.name
        bound.append(value)
    return bound, device, device_parameter


def _overload_for(kernel, args):
    """The first of *kernel*'s overloads (sim.overload) whose parameters accept *args*, else
    the generic kernel itself (its own binding then says what does not fit)."""
    for candidate in kernel.overloads:
        if len(args) != len(candidate.parameters):
            break
        try:
            for parameter, value in zip(candidate.parameters, args):
                if parameter.scalar is not None and _scalar_kind(value) != np.dtype(
                        parameter.scalar).kind:
                    raise TypeError(parameter.name)
                parameter.bind(candidate, value)
        except (TypeError, ValueError):
            continue
        return candidate
    return kernel


def _scalar_kind(value):
    """NumPy's kind letter of a Python or NumPy scalar: an overload for ``int`` takes ints
    and one for ``float`` floats (a scalar parameter alone would convert either)."""
    if isinstance(value, (bool, np.bool_)):
        return "b"
    if isinstance(value, (int, np.integer)):
        return np.dtype(type(value)).kind if isinstance(value, np.integer) else "i"
    if isinstance(value, (float, np.floating)):
        return "f"
    return None


def _warn_dim_like_shape(kernel, dims, args):
    for parameter, value in zip(kernel.parameters, args):
        if parameter.view_dtype is not None and tuple(getattr(value, "shape", ())) == dims \
                and len(dims) > parameter.array.ndim:
            warnings.warn(
                f"{kernel.__qualname__}: dim={dims} equals the host shape of {parameter.name!r}, "
                f"whose trailing dims are the storage of {parameter.array!r}; launch with "
                f"dim={dims[:parameter.array.ndim]} for one thread per element",
                stacklevel=3)
            return


def launch(kernel, dim, inputs=(), outputs=(), device=None, stream=None, record_cmd=False,
           block_dim=None, max_blocks=None, adjoint=False, adj_inputs=None, adj_outputs=None,
           record_tape=True):
    """Run *kernel* on ``dim`` threads (an int or a tuple of up to 4 ints).

    ``inputs`` and ``outputs`` are the kernel's arguments, in order.  The
    device is taken from the array arguments unless given ("cpu", "cuda",
    "cuda:N").  CPU launches use every core and return when done; CUDA
    launches go on CuPy's current stream (or *stream*) and return at once.
    With ``record_cmd=True`` nothing runs: the bound launch is returned, and its
    ``launch()`` runs it (and checks the launch size and structure ids then, since
    Warp's ``set_param_*`` may change them first).  Warp's ``block_dim`` and ``max_blocks``
    are accepted and leave the block size to numba_sim (docs/porting-from-warp.md).  Inside a CPU ``sim.capture`` a CPU launch is recorded
    into the graph instead of run (launch_capture.py).  ``adjoint=True`` launches the
    kernel's adjoint with the gradients *adj_inputs* and *adj_outputs*, and a launch while a
    ``sim.Tape`` records is recorded on it (numba_sim/autodiff/tape.py) unless
    ``record_tape=False`` (Warp's: it then runs, unrecorded).
    """
    if adjoint or (record_tape and autodiff_hooks.tapes) or adj_inputs is not None \
            or adj_outputs is not None:
        return autodiff_hooks.intercept(kernel, dim, inputs, outputs, device, stream, record_cmd,
                                        adjoint, adj_inputs, adj_outputs)
    return launch_forward(kernel, dim, inputs, outputs, device, stream, record_cmd)


def launch_forward(kernel, dim, inputs=(), outputs=(), device=None, stream=None,
                   record_cmd=False):
    """`launch` of the kernel itself, never recorded on a tape."""
    try:
        generation = kernel.generation
        fast_launch = kernel.fast_launch  # a prepared CUDA signature's shortcut (cuda_fast_launch)
    except AttributeError:
        raise TypeError(f"kernel: expected a @sim.kernel, got {kernel!r}") from None
    if generation != redefinition.current[0]:  # a func or kernel was defined again
        redefinition.refresh(kernel)
        fast_launch = kernel.fast_launch
    if fast_launch is not None and not record_cmd \
            and fast_launch(dim, inputs, outputs, device, stream):
        return
    args = [*inputs, *outputs]
    if kernel.overloads:
        kernel = _overload_for(kernel, args)
    if len(args) != len(kernel.parameters):
        names = ", ".join(p.name for p in kernel.parameters)
        raise TypeError(f"{kernel.__qualname__} takes {len(kernel.parameters)} arguments "
                        f"({names}), {len(args)} given")
    dims, count = _normalize_dims(dim)
    bound, inferred, inferred_parameter = _bind(kernel, args)
    if kernel.tid_indexed and not record_cmd:
        launch_bounds.check(kernel, dims, bound)
    if kernel.structure_ids and not record_cmd:
        structure_ids.check(kernel, bound)
    target, ordinal = arrays.parse_device(device) if device is not None else (inferred or "cpu", None)
    if inferred is not None and inferred != target:
        raise ValueError(f"{kernel.__qualname__}: device={device!r} but parameter "
                         f"{inferred_parameter!r} is on {inferred}")
    if len(dims) > 1:
        _warn_dim_like_shape(kernel, dims, args)
    launcher = launcher_for(kernel, target, len(dims))
    if record_cmd:
        return launch_capture.RecordedLaunch(kernel, launcher if count else _no_launch, dims, count,
                                      bound, stream, ordinal)
    if count == 0:
        return
    if target == "cpu":
        graph = launch_capture.cpu_graph_recording()
        if graph is not None:
            graph.record(launcher, dims, count, bound)
            return
    try:
        launcher(dims, count, bound, stream=stream, ordinal=ordinal)
    except numba.core.errors.TypingError as error:
        raise errors.short_typing_error(kernel, error).with_traceback(None) from None
    except (IndexError, FloatingPointError) as error:  # a debug-mode check: told as a sentence
        sentence = errors.debug_error(kernel, error)
        if sentence is None:
            raise
        raise sentence.with_traceback(None) from None


def _no_launch(dims, count, args, stream=None, ordinal=None):
    """The launcher of a recorded launch of no threads."""


def synchronize():
    """Wait for all CUDA work of this process (no-op without CUDA)."""
    from numba import cuda

    if cuda.is_available():
        cuda.synchronize()


# --------------------------------------------------------------------------
# compile / inspect without launching


def _launcher_argtypes(kernel, argtypes_or_inputs, ndim):
    from numba.core import types
    from numba.core.typing.typeof import typeof

    items = list(argtypes_or_inputs)
    if len(items) != len(kernel.parameters):
        raise TypeError(f"{kernel.__qualname__} takes {len(kernel.parameters)} arguments, "
                        f"{len(items)} argument types or inputs given")
    result = [types.UniTuple(types.int64, ndim)]
    for parameter, item in zip(kernel.parameters, items):
        if isinstance(item, types.Type):
            result.append(item)
        else:
            result.append(typeof(parameter.bind(kernel, item)[0]))
    return tuple(result)


@contextlib.contextmanager
def offline_compute_capability(cc):
    """Compile CUDA code for *cc* without a GPU: numba-cuda asks the current
    device for its compute capability when it compiles device functions."""
    import types as pytypes

    import numba.cuda.dispatcher as dispatcher_module
    from numba.core.compiler_lock import global_compiler_lock

    device = pytypes.SimpleNamespace(compute_capability=tuple(cc), id=0, name=b"offline")
    with global_compiler_lock:
        original = dispatcher_module.get_current_device
        dispatcher_module.get_current_device = lambda: device
        try:
            yield
        finally:
            dispatcher_module.get_current_device = original


def _cuda_library(kernel, argtypes, cc, ndim):
    from numba.core import types
    from numba.cuda.compiler import compile_cuda, kernel_fixup

    if cc is None:
        from numba import cuda

        cc = cuda.get_current_device().compute_capability
    function = launcher_for(kernel, "cuda", ndim).function
    with offline_compute_capability(cc):
        result = compile_cuda(function, types.void, argtypes, debug=False, lineinfo=False,
                              nvvm_options={"opt": 3}, cc=tuple(cc), lto=True)
        kernel_fixup(result.library.get_function(result.fndesc.llvm_func_name), False)
    return result.library, tuple(cc)


def compile_kernel(kernel, device, argtypes_or_inputs, cc=None, ndim=1):
    try:
        return _compile_kernel(kernel, device, argtypes_or_inputs, cc, ndim)
    except numba.core.errors.TypingError as error:
        raise errors.short_typing_error(kernel, error).with_traceback(None) from None


def _compile_kernel(kernel, device, argtypes_or_inputs, cc, ndim):
    target = arrays.parse_device(device)[0]
    argtypes = _launcher_argtypes(kernel, argtypes_or_inputs, ndim)
    if target == "cpu":
        launcher = launcher_for(kernel, "cpu", ndim)
        launcher.parallel.compile(argtypes)
        return launcher.parallel
    library, cc = _cuda_library(kernel, argtypes, cc, ndim)
    library.get_cubin(cc=cc)  # links: fails here if anything is unresolved
    return library


INSPECT_KINDS = {"cpu": ("llvm", "asm"), "cuda": ("llvm", "ptx", "cubin")}


def _check_inspect_kind(target, kind):
    if kind not in INSPECT_KINDS[target]:
        raise ValueError(f"kind: bad kind {kind!r} for {target}; expected one of "
                         f"{', '.join(map(repr, INSPECT_KINDS[target]))}")


def inspect_kernel(kernel, device, kind, argtypes_or_inputs, cc=None, ndim=1):
    target = arrays.parse_device(device)[0]
    _check_inspect_kind(target, kind)
    try:
        return _inspect_kernel(kernel, target, kind, argtypes_or_inputs, cc, ndim)
    except numba.core.errors.TypingError as error:
        raise errors.short_typing_error(kernel, error).with_traceback(None) from None


def _inspect_kernel(kernel, target, kind, argtypes_or_inputs, cc, ndim):
    argtypes = _launcher_argtypes(kernel, argtypes_or_inputs, ndim)
    if target == "cpu":
        # compiled afresh: a launcher loaded from the disk cache keeps no LLVM IR
        launcher = launcher_for(kernel, "cpu", ndim)
        function = _build_launcher(kernel, ndim, False, launcher.body, numba.prange)
        dispatcher = numba.njit(parallel=launcher.mode != "debug")(function)
        dispatcher.compile(argtypes)
        if kind == "llvm":
            return dispatcher.inspect_llvm(argtypes)
        return dispatcher.inspect_asm(argtypes)
    library, cc = _cuda_library(kernel, argtypes, cc, ndim)
    if kind == "llvm":
        return library.get_llvm_str()
    if kind == "ptx":
        return library.get_asm_str(cc=cc)
    return bytes(library.get_cubin(cc=cc).code)


def inspect_compiled(kernel, device, kind, cc=None):
    """{launcher signature: code} of every signature of *kernel* compiled so far on *device*."""
    target = arrays.parse_device(device)[0]
    _check_inspect_kind(target, kind)
    signatures = []
    for (launcher_device, _, _), launcher in list(kernel.launchers.items()):
        if launcher_device != target:
            continue
        dispatchers = [launcher._parallel, launcher._serial] if target == "cpu" else \
            [launcher.dispatcher]
        for dispatcher in dispatchers:
            for signature in getattr(dispatcher, "overloads", ()):
                if signature not in signatures:
                    signatures.append(signature)
    if not signatures:
        raise ValueError(f"{kernel.__qualname__}: nothing is compiled for {target} yet; launch "
                         "the kernel first, or pass argtypes_or_inputs to inspect one signature")
    return {signature: inspect_kernel(kernel, device, kind, signature[1:], cc=cc,
                                      ndim=len(signature[0]))
            for signature in signatures}


__all__ = ["launch", "synchronize", "compile_kernel", "inspect_kernel", "inspect_compiled"]
