"""Prepared CUDA launches: argument marshalling worked out once per kernel signature.

numba-cuda's dispatcher types every argument, wraps each CuPy array as a Numba
device array and builds ctypes values on every call (18 us of host time with
Numba device arrays, 43 us with CuPy arrays, on an H200 machine). After the
first launch of a signature through the dispatcher (which compiles), a
:class:`PreparedLaunch` keeps the compiled kernel's ``CUfunction`` and a
parameter buffer laid out like the kernel's flattened parameters (Numba's
argument packer: an array is meminfo, parent, nitems, itemsize, data,
shape..., strides...; tuples and value types are their scalars). A launch
packs the arguments' scalars with one ``struct.pack_into`` from generated
straight-line code and calls ``cuLaunchKernel`` from the host library
(``numba_sim._native.launch``).

The layout is checked against the packer's LLVM argument types when a launch
is prepared; a signature it cannot describe keeps using the dispatcher. Two
users: ``sim.launch`` (launcher.CudaLauncher, one signature per launcher) and
numba_sim's own numba-cuda kernels (:func:`kernel`: the spatial builds)."""

import ctypes
import functools
import struct
import threading

import numpy as np
from numba.core import types

from numba_sim import arrays, cuda_runtime
from numba_sim.cuda_args import cuda_args

SLOT = 8
"""Bytes per kernel parameter in the buffer (every leaf is at most 8 bytes)."""

_SCALAR_CODES = {1: "b", 2: "h", 4: "i", 8: "q"}


class Unsupported(Exception):
    """A parameter type the prepared path does not marshal (the dispatcher does)."""


# --------------------------------------------------------------------------
# Layout: the struct code of every leaf of a Numba type, in data-model order


def _scalar_code(ty):
    if isinstance(ty, types.Boolean):
        return "?"
    if isinstance(ty, types.Float) and ty.bitwidth in (32, 64):
        return "f" if ty.bitwidth == 32 else "d"
    if isinstance(ty, types.Integer):
        code = _SCALAR_CODES[ty.bitwidth // 8]
        return code if ty.signed else code.upper()
    raise Unsupported(ty)


def leaf_codes(ty):
    """Struct codes of the kernel parameters that Numba flattens *ty* into."""
    if isinstance(ty, types.Array):
        if ty.layout != "C":
            raise Unsupported(f"{ty} (only C-contiguous arrays are prepared)")
        return ["Q", "Q", "q", "q", "Q"] + ["q"] * (2 * ty.ndim)
    if isinstance(ty, types.BaseTuple):
        return [code for item in ty for code in leaf_codes(item)]
    return [_scalar_code(ty)]


def _llvm_leaf(llvm_type):
    """(bytes, is_float) of one LLVM kernel parameter type."""
    from llvmlite import ir

    if isinstance(llvm_type, ir.PointerType):
        return 8, False
    if isinstance(llvm_type, ir.IntType):
        return max(1, llvm_type.width // 8), False
    if isinstance(llvm_type, ir.FloatType):
        return 4, True
    if isinstance(llvm_type, ir.DoubleType):
        return 8, True
    raise Unsupported(f"LLVM parameter type {llvm_type}")


def check_layout(codes, argtypes):
    """Raise Unsupported unless *codes* match the kernel's flattened LLVM parameters."""
    from numba.cuda.descriptor import cuda_target

    packer = cuda_target.target_context.get_arg_packer(argtypes)
    expected = [_llvm_leaf(t) for t in packer.argument_types]
    got = [(struct.calcsize(code), code in "fd") for code in codes]
    if got != expected:
        raise Unsupported(f"parameter layout {codes} does not match the kernel's {expected}")


# --------------------------------------------------------------------------
# Values: the leaves of one argument at launch time


def array_slots(value):
    """(meminfo, parent, nitems, itemsize, data, *shape, *strides) of a CUDA array."""
    data = getattr(value, "data", None)
    if data is not None and hasattr(data, "ptr"):  # CuPy
        return (0, 0, value.size, value.itemsize, data.ptr, *value.shape, *value.strides)
    pointer = getattr(value, "device_ctypes_pointer", None)
    if pointer is not None:  # a Numba device array
        return (0, 0, value.size, value.dtype.itemsize, pointer.value or 0, *value.shape,
                *value.strides)
    return _interface_slots(value.__cuda_array_interface__)


def _interface_slots(interface):
    import numpy as np

    itemsize = np.dtype(interface["typestr"]).itemsize
    shape = tuple(interface["shape"])
    strides = interface.get("strides")
    if strides is None:
        strides, step = [], itemsize
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= extent
    size = 1
    for extent in shape:
        size *= extent
    return (0, 0, size, itemsize, interface["data"][0], *shape, *strides)


def flatten(ty, value, out):
    """Append the leaves of *value* (of Numba type *ty*) to *out*."""
    if isinstance(ty, types.Array):
        out.extend(array_slots(value))
    elif isinstance(ty, types.BaseTuple):
        for item_type, item in zip(ty, value):
            flatten(item_type, item, out)
    else:
        out.append(value)


# --------------------------------------------------------------------------
# The prepared launch


def _driver():
    from cuda.bindings import driver

    return driver


def _cufunction(kernel):
    """The CUfunction of a compiled numba-cuda kernel in the current context."""
    driver = _driver()
    handle = kernel._codelibrary.get_cufunc().handle
    if isinstance(handle, driver.CUkernel):
        error, handle = driver.cuKernelGetFunction(handle)
        if error != driver.CUresult.CUDA_SUCCESS:
            raise Unsupported(f"cuKernelGetFunction failed: {error.name}")
    return handle


class ArgumentPacking:
    """How one kernel signature's arguments become its parameter buffer.

    *argtypes* are the launcher's Numba argument types (dims first); *converted*
    gives, per argument, the Numba type numba_sim's CUDA argument conversion
    turns it into (value types, structs, spatial structures), or None.
    """

    def __init__(self, argtypes, converted):
        flat_types = [c if c is not None else t for t, c in zip(argtypes, converted)]
        self.codes = [code for ty in flat_types for code in leaf_codes(ty)]
        check_layout(self.codes, argtypes)
        self.format = struct.Struct("=" + "".join(
            code if struct.calcsize(code) == SLOT else f"{code}{SLOT - struct.calcsize(code)}x"
            for code in self.codes))
        self.pack = _generate_pack(argtypes, converted)
        """``pack(args) -> tuple of leaves``: straight-line code for this signature"""


def _generate_pack(argtypes, converted):
    namespace = {"__array": array_slots}
    parts = []
    for k, (ty, conversion) in enumerate(zip(argtypes, converted)):
        if conversion is not None:
            namespace[f"__flat{k}"] = _flattener(ty, cuda_args.prepare_args)
            parts.append(f"*__flat{k}(a[{k}])")
        elif isinstance(ty, types.Array):
            parts.append(f"*__array(a[{k}])")
        elif isinstance(ty, types.BaseTuple) and all(
                isinstance(item, (types.Number, types.Boolean)) for item in ty):
            parts.append(f"*a[{k}]")  # the launch dims, a tuple of scalars
        elif isinstance(ty, types.BaseTuple):
            namespace[f"__flat{k}"] = _flattener(ty)
            parts.append(f"*__flat{k}(a[{k}])")
        else:
            parts.append(f"a[{k}]")
    source = f"def pack(a):\n    return ({', '.join(parts)},)\n"
    exec(compile(source, "<numba_sim prepared launch>", "exec"), namespace)
    return namespace["pack"]


class PreparedLaunch:
    """One kernel signature's launch on one device: a parameter buffer and
    ``cuLaunchKernel`` of the compiled kernel."""

    def __init__(self, kernel, packing):
        self.function = int(_cufunction(kernel))
        self.packing = packing
        self._lock = threading.Lock()
        count = len(packing.codes)
        self._storage = ctypes.create_string_buffer(SLOT * count)
        base = ctypes.addressof(self._storage)
        self._pointers = (ctypes.c_void_p * count)(*[base + SLOT * k for k in range(count)])
        self._pointer_address = ctypes.addressof(self._pointers)

    def launch(self, args, blocks, threads, stream):
        """Launch *blocks* x *threads* on *stream* (a CUstream handle as an int) with
        the kernel's arguments *args*. Returns the CUresult (an int)."""
        leaves = self.packing.pack(args)
        with self._lock:  # one buffer: launches from several threads take turns
            self.packing.format.pack_into(self._storage, 0, *leaves)
            return _LAUNCH(self.function, blocks, threads, stream, self._pointer_address)


def prepare(dispatcher, args):
    """The PreparedLaunch of *dispatcher*'s kernel compiled for *args* (launched through
    the dispatcher before), or None where none can be prepared."""
    argtypes = tuple(dispatcher.typeof_pyval(a) for a in args)
    kernel = dispatcher.overloads.get(argtypes)
    if kernel is None:
        return None
    extensions = dispatcher.targetoptions.get("extensions") or ()
    converted = [None] * len(args)
    if extensions:
        if list(extensions) != [cuda_args]:
            return None  # someone else's argument conversions: leave them to the dispatcher
        for k, (ty, value) in enumerate(zip(argtypes, args)):
            converted_type = cuda_args.prepare_args(ty, value)[0]
            converted[k] = None if converted_type is ty else converted_type
    try:
        prepared = PreparedLaunch(kernel, ArgumentPacking(argtypes, converted))
    except Unsupported:
        return None
    prepared.argtypes = argtypes
    return prepared


# --------------------------------------------------------------------------
# numba_sim's own numba-cuda kernels (spatial builds, sorts)


_SCALAR_CLASSES = {int, float, bool}
_ARRAY_CLASSES = set()
"""Classes seen as kernel arguments: Python and NumPy scalars; CUDA arrays (checked
for the CUDA array interface once: Numba's builds a dict each time it is asked)."""


def _argument_key(value):
    """What decides the Numba type of a kernel argument, cheaply; None: not preparable."""
    cls = type(value)
    if cls in _SCALAR_CLASSES:
        return cls
    if cls not in _ARRAY_CLASSES:
        if issubclass(cls, np.generic):
            _SCALAR_CLASSES.add(cls)
            return cls
        if not hasattr(value, "__cuda_array_interface__") or not hasattr(value, "dtype"):
            return None
        _ARRAY_CLASSES.add(cls)
    return cls, value.dtype, value.ndim, arrays.c_contiguous(value)


class DispatcherLaunches:
    """``launches[blocks, threads, stream](*args)``: a numba-cuda dispatcher's launch,
    through a PreparedLaunch once a signature was launched (under the CUDA simulator,
    and for grids given as tuples, the dispatcher's own)."""

    def __init__(self, dispatcher):
        from numba.cuda import config

        self.dispatcher = dispatcher
        self._simulated = bool(config.ENABLE_CUDASIM)
        self._prepared = {}
        self._current_device = None

    def __getitem__(self, configuration):
        blocks, threads, stream = (*configuration, 0)[:3]
        if self._simulated or type(blocks) is not int or type(threads) is not int:
            return self.dispatcher[configuration]
        return lambda *args: self.launch(blocks, threads, stream, args)

    def launch(self, blocks, threads, stream, args):
        if self._current_device is None:
            self._current_device = cuda_runtime.current_device_function()
        key = (self._current_device(), *[_argument_key(a) for a in args])
        if None in key:
            self.dispatcher[blocks, threads, stream](*args)
            return
        prepared = self._prepared.get(key)
        if prepared is not None:
            handle = cuda_runtime.stream_handle(stream)
            if handle is not None:
                result = prepared.launch(args, blocks, threads, handle)
                if not result:
                    return
                if not is_context_error(result):
                    raise RuntimeError(f"{self.dispatcher.__name__}: cuLaunchKernel failed: "
                                       f"{error_name(result)}")
                del self._prepared[key]
        self.dispatcher[blocks, threads, stream](*args)
        if key not in self._prepared:
            self._prepared[key] = prepare(self.dispatcher, args)


@functools.cache
def kernel(body):
    """``kernel(body)[blocks, threads, stream](*args)``: ``cuda.jit(body)`` (compiled at
    its first launch) with prepared launches."""
    from numba import cuda

    return DispatcherLaunches(cuda.jit(body))


def _flattener(ty, convert=None):
    """``flat(value) -> leaves`` of a value of Numba type *ty*, converted first by
    *convert* (numba_sim's CUDA argument conversions) when given."""
    def flat(value):
        value_type = ty
        if convert is not None:
            value_type, value = convert(ty, value)
        out = []
        flatten(value_type, value, out)
        return out
    return flat


def _launch_function():
    """``launch(function, blocks, threads, stream, params) -> CUresult``: the host
    library's direct driver call, or cuda.bindings' (slower) where it is missing."""
    try:
        from numba_sim._native import launch

        return launch
    except ImportError:
        driver = _driver()

        def launch(function, blocks, threads, stream, params):
            (result,) = driver.cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0, stream,
                                              params, 0)
            return int(result)

        return launch


class _LazyLaunch:
    """The launch function, looked up at the first launch."""

    def __call__(self, *args):
        global _LAUNCH
        _LAUNCH = _launch_function()
        return _LAUNCH(*args)


_LAUNCH = _LazyLaunch()


def launch_function():
    """The launch function itself (looked up now if it was not yet)."""
    global _LAUNCH
    if isinstance(_LAUNCH, _LazyLaunch):
        _LAUNCH = _launch_function()
    return _LAUNCH


def error_name(result):
    """The name of a CUresult given as an int."""
    try:
        return _driver().CUresult(result).name
    except ValueError:
        return f"CUresult {result}"


def is_context_error(result):
    """True for the CUresult of a launch from a thread with no (or another) current context."""
    errors = _driver().CUresult
    return result in (int(errors.CUDA_ERROR_INVALID_CONTEXT), int(errors.CUDA_ERROR_INVALID_HANDLE),
                      int(errors.CUDA_ERROR_CONTEXT_IS_DESTROYED))
