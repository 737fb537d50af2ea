"""Building and loading the native code of ``cuda_src/`` for both Numba targets.

The algorithms of the spatial structures live once, as C++ headers in
``cuda_src/``; ``cuda_src/entry_points.cpp`` wraps them in ``extern "C"``
functions that take plain pointers. This module makes those functions
callable from Numba-compiled code on either target through one lowering API:

* :func:`declare_native` / :func:`call_native` declare an entry point in the
  LLVM module being lowered (and call it), whatever the target;
* :func:`alloca_floats` / :func:`load_floats` move values through the
  stack buffers that the entry points read and write.

CPU target
    ``setup.py`` compiles ``cuda_src/*.cpp`` with the system C++ compiler into
    the extension module ``numba_sim._native``. :func:`load_host_library`
    loads it into LLVM's symbol table (``llvmlite.binding.load_library_permanently``,
    once, thread-safe), so that Numba's JIT resolves the external declarations
    by name. Named symbols, not ctypes function pointers, keep functions that
    call them cacheable (``cache=True``). A function loaded from Numba's cache
    is not lowered again, and MCJIT resolves a symbol it cannot find to
    address 0 (a segfault when called), so importing this module already
    loads the library when it is built; only a missing build is reported
    lazily, at the first lowering that needs it.

CUDA target
    ``entry_points.cpp`` is compiled at first use by NVRTC (raw
    ``cuda.bindings.nvrtc``, no include path: ``cuda_src/`` must not need
    system headers) for the oldest supported architecture, sm_75, to LTO-IR
    and/or PTX. Code built for sm_75 links into kernels for every newer
    architecture; code built for a newer one does not link into older kernels.
    The result is cached on disk under :func:`cache_dir`, keyed by the NVRTC
    version, the architecture, the compile options and a hash of every file in
    ``cuda_src/``, and written atomically (temporary file + ``os.replace``),
    so concurrent processes are safe. It is not shipped prebuilt: LTO-IR from a
    newer NVRTC cannot be linked by an older nvJitLink or driver.

    :func:`declare_native` adds the compiled code to the code library being
    lowered (``context.active_code_library.add_linking_file``, the mechanism
    behind ``cuda.declare_device(..., link=[...])``). Libraries of device
    functions pass their linking files on to the kernels that call them.

Linking, as found with numba-cuda 0.30.4 and the CUDA 13.5 wheels (no GPU):

* ``@cuda.jit`` defaults to ``lto=True`` whenever nvJitLink is available and
  ``debug`` is off. An LTO kernel linked with our LTO-IR gets the entry point
  inlined by nvJitLink: no call is left in the LTO'd PTX.
* A non-LTO kernel (``lto=False``, or ``debug=True``) links our LTO-IR too:
  numba-cuda switches nvJitLink to LTO as soon as one LTO-IR input is present;
  the kernel, given as PTX, then makes a real call. PTX device code links
  into both kinds as well, but is never inlined.
* So kernels link LTO-IR whenever the linker is nvJitLink (at least as new as
  NVRTC), and PTX otherwise, which the driver's linker also reads
  (:func:`linked_device_code_kind`). The kind cannot follow the kernel's
  ``lto`` flag: a builtin is often lowered inside another code library (an
  ``@overload`` implementation, a device function) whose linking files are
  passed on to whichever kernels call it later.
* Both link offline, without a driver: ``CUDACodeLibrary.get_cubin(cc)``
  (see the ``offline_cuda`` fixture in tests/conftest.py), for sm_75 and sm_90.
* A declared entry point that ``cuda_src/`` does not define fails the link:
  nvJitLink reports "Unresolved extern function '<name>'" (LTO kernels) or
  "Undefined reference to '<name>'" (non-LTO kernels). On the CPU the same
  mistake is caught while lowering (:func:`declare_native`).
* Each kind of device code is one object per process: a code library keeps
  its linking files in a set, and two distinct objects holding the same code
  would define every entry point twice.
"""

import functools
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types

#: Oldest architecture supported by NVVM 13; device code built for it links
#: into kernels for every newer one.
DEVICE_ARCH = "sm_75"

#: The file NVRTC compiles, with the headers of cuda_src/ as its includes.
ENTRY_POINTS = "entry_points.cpp"

_HEADER_SUFFIXES = (".h", ".cuh")
_SOURCE_SUFFIXES = _HEADER_SUFFIXES + (".cpp", ".cu")
_NVRTC_OPTIONS = ("-std=c++17", "-rdc=true")
_DEVICE_CODE_SUFFIX = {"ltoir": ".ltoir", "ptx": ".ptx"}

_host_lock = threading.Lock()
_host_library_path = None
_device_lock = threading.Lock()
_device_code_objects = {}


# --------------------------------------------------------------------------
# Sources and cache location


def source_dir():
    """The directory holding the ``cuda_src/`` files.

    An installed package carries a copy in ``numba_sim/_cuda_src`` (made by
    setup.py); a source checkout (or an editable install) uses the repository's
    ``cuda_src/`` beside the package.
    """
    package_dir = os.path.dirname(os.path.abspath(__file__))
    for candidate in (
        os.path.join(package_dir, "_cuda_src"),
        os.path.join(os.path.dirname(package_dir), "cuda_src"),
    ):
        if os.path.isfile(os.path.join(candidate, ENTRY_POINTS)):
            return candidate
    raise FileNotFoundError(
        f"numba_sim: cannot find the native sources ({ENTRY_POINTS}) in "
        f"{package_dir}/_cuda_src or in a cuda_src/ directory beside the package"
    )


def read_sources():
    """All files of ``cuda_src/`` as a sorted ``{file name: bytes}`` dict."""
    directory = source_dir()
    return {
        name: _read_bytes(os.path.join(directory, name))
        for name in sorted(os.listdir(directory))
        if name.endswith(_SOURCE_SUFFIXES)
    }


def cache_dir():
    """Directory of the on-disk device code cache.

    ``$NUMBA_SIM_CACHE_DIR`` if set, else ``numba_sim`` under the user's cache
    directory (``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux,
    ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows).
    """
    override = os.environ.get("NUMBA_SIM_CACHE_DIR")
    if override:
        return os.path.abspath(os.path.expanduser(override))
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "numba_sim")


def _read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def _write_atomically(path, data):
    """Write ``data`` to ``path`` so that readers never see a partial file."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp_path, path)
    except BaseException:
        try:
            os.unlink(tmp_path)
        except OSError:
            pass
        raise


# --------------------------------------------------------------------------
# Host library (CPU target)


def host_library_path():
    """Path of the built host library ``numba_sim._native``.

    Raises :class:`ImportError` with build instructions if it was not built.
    """
    spec = importlib.util.find_spec("numba_sim._native")
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        raise ImportError(
            "numba_sim's host library (numba_sim._native, compiled from cuda_src/) "
            "is not built. Install the package with `pip install .` (or "
            "`pip install -e .` for development), or in a source checkout run "
            "`python setup.py build_ext --inplace`; this needs a C++17 compiler."
        )
    return spec.origin


def load_host_library():
    """Make the host library's symbols visible to Numba's CPU JIT; idempotent.

    Returns the library's path.
    """
    global _host_library_path
    if _host_library_path is None:
        with _host_lock:
            if _host_library_path is None:
                from llvmlite import binding

                path = host_library_path()
                try:
                    binding.load_library_permanently(path)
                except RuntimeError as exc:
                    raise ImportError(
                        f"numba_sim: cannot load the host library {path}: {exc}. "
                        "Rebuild it (`pip install .`, or `python setup.py build_ext --inplace`)."
                    ) from exc
                _host_library_path = path
    return _host_library_path


def _require_host_symbol(name):
    """Load the host library and check that it defines ``name``.

    MCJIT resolves an unknown external symbol to address 0, so without this
    check a misspelt entry point would crash the process when called.
    """
    from llvmlite import binding

    load_host_library()
    if not binding.address_of_symbol(name):
        raise LookupError(
            f"numba_sim: native function {name!r} is not defined by the host library "
            f"{_host_library_path} (an entry point of cuda_src/{ENTRY_POINTS}); "
            "if it was added recently, rebuild the library."
        )


# --------------------------------------------------------------------------
# Device code (CUDA target)


@functools.cache
def nvrtc_version():
    """``(major, minor)`` of the NVRTC library in use."""
    try:
        from cuda.bindings import nvrtc

        result = nvrtc.nvrtcVersion()
    except Exception as exc:
        raise RuntimeError(
            "numba_sim: cannot load NVRTC, which compiles cuda_src/ for the CUDA target. "
            "Install `numba-cuda[cu13]` (it brings NVRTC, nvJitLink and NVVM)."
        ) from exc
    return tuple(_nvrtc_check(result, "nvrtcVersion"))


def device_code_cache_path(kind, arch=DEVICE_ARCH, sources=None):
    """Cache file of ``kind`` (``"ltoir"`` or ``"ptx"``) device code for ``arch``.

    The name carries a hash of everything that determines the output: NVRTC
    version, architecture, kind, options and all ``cuda_src/`` contents.
    """
    if kind not in _DEVICE_CODE_SUFFIX:
        raise ValueError(f"unknown device code kind {kind!r}; expected 'ltoir' or 'ptx'")
    sources = read_sources() if sources is None else sources
    key = hashlib.sha256()
    for part in (repr(nvrtc_version()), arch, kind, repr(_NVRTC_OPTIONS)):
        key.update(part.encode() + b"\0")
    for name, content in sources.items():
        key.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    stem = os.path.splitext(ENTRY_POINTS)[0]
    filename = f"{stem}-{arch}-{key.hexdigest()[:24]}{_DEVICE_CODE_SUFFIX[kind]}"
    return os.path.join(cache_dir(), "device", filename)


def build_device_code(kind, arch=DEVICE_ARCH):
    """The ``cuda_src`` entry points as ``kind`` device code (bytes) for ``arch``.

    Read from the disk cache when present, otherwise compiled with NVRTC and
    stored there atomically.
    """
    sources = read_sources()
    path = device_code_cache_path(kind, arch, sources)
    try:
        return _read_bytes(path)
    except FileNotFoundError:
        pass
    code = _nvrtc_compile(sources, kind, arch)
    _write_atomically(path, code)
    return code


def device_code(kind):
    """The process-wide linkable object of ``kind`` device code for sm_75.

    One object per kind, so that code libraries (which keep linking files in a
    set) never link the same entry points twice.
    """
    with _device_lock:
        obj = _device_code_objects.get(kind)
        if obj is None:
            from numba.cuda import LTOIR, PTXSource

            code = build_device_code(kind)
            name = f"numba_sim_cuda_src_{DEVICE_ARCH}{_DEVICE_CODE_SUFFIX[kind]}"
            obj = LTOIR(code, name=name) if kind == "ltoir" else PTXSource(code, name=name)
            _device_code_objects[kind] = obj
        return obj


@functools.cache
def linked_device_code_kind():
    """The kind of device code that kernels link: ``"ltoir"`` or ``"ptx"``.

    LTO-IR when the linker is nvJitLink at least as new as NVRTC (it then
    links LTO-IR into LTO and non-LTO kernels alike), else PTX, which the
    driver's linker also takes.
    """
    from numba.cuda.cudadrv.driver import _have_nvjitlink

    if not _have_nvjitlink():
        return "ptx"
    from cuda.bindings import nvjitlink

    return "ltoir" if tuple(nvjitlink.version()) >= nvrtc_version() else "ptx"


def _nvrtc_compile(sources, kind, arch):
    """Compile ``ENTRY_POINTS`` with NVRTC; the other sources are its headers."""
    from cuda.bindings import nvrtc

    headers = {name: code for name, code in sources.items() if name.endswith(_HEADER_SUFFIXES)}
    program = _nvrtc_check(
        nvrtc.nvrtcCreateProgram(
            sources[ENTRY_POINTS],
            ENTRY_POINTS.encode(),
            len(headers),
            list(headers.values()),
            [name.encode() for name in headers],
        ),
        "nvrtcCreateProgram",
    )
    try:
        virtual_arch = arch.replace("sm_", "compute_")
        options = [f"-arch={virtual_arch}", *_NVRTC_OPTIONS]
        if kind == "ltoir":
            options.append("-dlto")
        (result,) = nvrtc.nvrtcCompileProgram(program, len(options), [o.encode() for o in options])
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(
                f"numba_sim: NVRTC failed to compile cuda_src/{ENTRY_POINTS} for {arch} "
                f"({result.name}):\n{_nvrtc_log(program)}"
            )
        if kind == "ltoir":
            size = _nvrtc_check(nvrtc.nvrtcGetLTOIRSize(program), "nvrtcGetLTOIRSize")
            code = b" " * size
            _nvrtc_check(nvrtc.nvrtcGetLTOIR(program, code), "nvrtcGetLTOIR")
        else:
            size = _nvrtc_check(nvrtc.nvrtcGetPTXSize(program), "nvrtcGetPTXSize")
            code = b" " * size
            _nvrtc_check(nvrtc.nvrtcGetPTX(program, code), "nvrtcGetPTX")
            code = code.rstrip(b"\0")
        return code
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def _nvrtc_log(program):
    from cuda.bindings import nvrtc

    size = _nvrtc_check(nvrtc.nvrtcGetProgramLogSize(program), "nvrtcGetProgramLogSize")
    log = b" " * size
    _nvrtc_check(nvrtc.nvrtcGetProgramLog(program, log), "nvrtcGetProgramLog")
    return log.rstrip(b"\0").decode(errors="replace")


def _nvrtc_check(result, what):
    """Unpack a ``cuda.bindings.nvrtc`` ``(status, *values)`` result."""
    from cuda.bindings import nvrtc

    status, *values = result
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"numba_sim: {what} failed: {status.name}")
    if not values:
        return None
    return values[0] if len(values) == 1 else values


# --------------------------------------------------------------------------
# Lowering API (both targets)


def is_cuda_context(context):
    """Whether ``context`` is numba-cuda's target context (without importing it)."""
    target_module = sys.modules.get("numba.cuda.target")
    return target_module is not None and isinstance(context, target_module.CUDATargetContext)


def declare_native(context, builder, name, fnty):
    """Declare the ``cuda_src`` entry point ``name`` of type ``fnty`` in ``builder.module``.

    ``fnty`` is an ``llvmlite.ir.FunctionType`` matching the C signature.
    On the CPU target this loads the host library and checks that it defines
    ``name``; on the CUDA target it adds the device code (LTO-IR or PTX, see
    :func:`linked_device_code_kind`) to the code library being lowered, so that
    it is linked into every kernel that uses it. Returns the ``ir.Function``.
    """
    if is_cuda_context(context):
        context.active_code_library.add_linking_file(device_code(linked_device_code_kind()))
    else:
        _require_host_symbol(name)
    fn = cgutils.get_or_insert_function(builder.module, fnty, name)
    if fn.function_type != fnty:
        raise TypeError(
            f"numba_sim: native function {name!r} declared as {fn.function_type}, "
            f"now requested as {fnty}"
        )
    return fn


def call_native(context, builder, name, return_type, args):
    """Call the ``cuda_src`` entry point ``name`` with the LLVM values ``args``.

    The function type is ``return_type`` (an ``ir.Type``; ``ir.VoidType()`` for
    ``void``) over the types of ``args``. Returns the call instruction.
    """
    fnty = ir.FunctionType(return_type, [arg.type for arg in args])
    return builder.call(declare_native(context, builder, name, fnty), args)


def alloca_floats(builder, values_or_count, element=None):
    """A ``float*`` to a stack buffer in the function's entry block.

    ``values_or_count`` is either the number of floats to reserve or a list
    of float32 LLVM values to store into the buffer. ``element`` gives
    another element type (an ``ir.DoubleType()``, an ``ir.IntType(32)``).
    """
    element = element or ir.FloatType()
    values = None if isinstance(values_or_count, int) else list(values_or_count)
    count = values_or_count if values is None else len(values)
    buffer = cgutils.alloca_once(builder, ir.ArrayType(element, count))
    zero = ir.Constant(ir.IntType(32), 0)
    pointer = builder.gep(buffer, [zero, zero], inbounds=True)
    for i, value in enumerate(values or ()):
        builder.store(value, builder.gep(pointer, [ir.Constant(ir.IntType(32), i)], inbounds=True))
    return pointer


def load_floats(builder, pointer, count):
    """Load ``count`` consecutive floats (elements) from the ``float*`` ``pointer``."""
    return [
        builder.load(builder.gep(pointer, [ir.Constant(ir.IntType(32), i)], inbounds=True))
        for i in range(count)
    ]


# --------------------------------------------------------------------------
# Operations computed by an entry point (Python and both compiled targets)

_LLVM_ELEMENTS = {np.float32: ir.FloatType, np.float64: ir.DoubleType,
                  np.int32: lambda: ir.IntType(32)}
_NUMBA_SCALARS = {np.float32: types.float32, np.float64: types.float64, np.int32: types.int32}


def native_formula(name, result_size, dtype=np.float32, result_dtype=None, scalar_result=False):
    """An operation formula (see numba_sim.operations) computed by entry point *name*.

    The entry point takes one ``const T*`` per argument (its components; a
    scalar argument is one component), ``T`` the NumPy scalar type *dtype*
    (float32 or float64, the arguments converted to it), and a pointer to
    the *result_size* result components of *result_dtype* (default *dtype*;
    ``scalar_result``: one component, returned as a scalar). In compiled code
    the formula lowers to a call of the entry point (host library on the CPU,
    linked device code on CUDA); in Python it calls the very same host
    function through ctypes, so all three compute identical numbers.
    """
    result_dtype = result_dtype or dtype

    def formula(sig, *args):
        args = [arg if isinstance(arg, list) else [arg] for arg in args]
        first = args[0][0]
        if hasattr(first, "builder"):
            builder = first.builder
            in_type = _NUMBA_SCALARS[dtype]
            buffers = [alloca_floats(builder, [x.cast_to(in_type).value for x in arg],
                                     _LLVM_ELEMENTS[dtype]()) for arg in args]
            out = alloca_floats(builder, result_size, _LLVM_ELEMENTS[result_dtype]())
            call_native(first.context, builder, name, ir.VoidType(), [*buffers, out])
            values = [first._wrap(_NUMBA_SCALARS[result_dtype], v)
                      for v in load_floats(builder, out, result_size)]
        else:
            inputs = [np.ascontiguousarray(arg, dtype=dtype) for arg in args]
            out = np.empty(result_size, dtype=result_dtype)
            _host_function(name, len(args) + 1)(*[a.ctypes.data for a in inputs],
                                                out.ctypes.data)
            values = list(out)
        return values[0] if scalar_result else values

    formula.__name__ = f"native_{name}"
    return formula


@functools.cache
def _host_function(name, n_pointers):
    import ctypes

    library = ctypes.CDLL(host_library_path())
    function = getattr(library, name)
    function.argtypes = [ctypes.c_void_p] * n_pointers
    function.restype = None
    return function


def _preload_host_library():
    """Load the host library at import when it is built (see the module docstring)."""
    try:
        load_host_library()
    except ImportError:
        pass


_preload_host_library()
