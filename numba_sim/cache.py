"""The compilation cache of kernels: in the process and on disk, with exact invalidation.

In the process, each kernel keeps its launchers and Numba keeps one
specialization per argument types (and compute capability on CUDA).  On disk:

* CPU launchers use Numba's own cache machinery with a locator of ours
  (launchers are generated code, which Numba's file-based locators cannot
  place);
* CUDA launchers use numba-cuda's cache machinery, with kernels saved after
  linking (the cubin for the device's compute capability is kept and the
  linking files dropped, which numba-cuda's own cache refuses to pickle).

Numba keys its cache on the function's bytecode and file stamp, so a change
inside a helper or in numba_sim would go unnoticed.  Our *fingerprint*
replaces that stamp: the numba_sim, Numba and numba-cuda versions and a hash
of numba_sim's own sources, the kernel's source, the source of every
``@sim.func`` / ``@njit`` helper it reaches (transitively, through globals,
closures and module attributes), and the values of the globals it freezes.
Editing any of them recompiles; nothing else does.

The directory is ``$NUMBA_SIM_CACHE_DIR`` or ``numba_sim`` in the user's cache
directory; ``python -m numba_sim info`` shows it and ``python -m numba_sim
cache clear`` empties it.  ``NUMBA_SIM_CACHE=0`` turns the disk cache off.
"""

import functools
import hashlib
import inspect
import marshal
import os
import shutil
import types as pytypes

import numpy as np

from numba_sim.kernel_language import function_namespace
from numba_sim.func_overloads import FuncOverloads
from numba_sim.native import cache_dir, read_sources
from numba_sim.structs import Struct
from numba_sim.types import Value

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_STABLE_MODULES = ("numba_sim", "numba", "numpy", "math", "cmath", "operator", "llvmlite")
"""Modules whose contents the package fingerprint covers (by version or source hash)."""


def enabled():
    return os.environ.get("NUMBA_SIM_CACHE", "1").lower() not in ("0", "false", "no", "off")


# --------------------------------------------------------------------------
# Fingerprints


@functools.cache
def package_fingerprint():
    """Versions of Numba, numba-cuda and NumPy, and a hash of numba_sim's sources (its
    version among them, in ``__init__.py``)."""
    import numba

    hasher = hashlib.sha256()
    try:
        from importlib.metadata import version

        cuda_version = version("numba-cuda")
    except Exception:  # pragma: no cover - numba-cuda is a dependency
        cuda_version = "none"
    hasher.update(f"{numba.__version__} {cuda_version} {np.__version__}".encode())
    for root, dirs, files in os.walk(_PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_cuda_src", "__pycache__")))
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(root, name), "rb") as f:
                    hasher.update(name.encode() + f.read())
    for name, code in read_sources().items():
        hasher.update(name.encode() + code)
    return hasher.hexdigest()


def code_names(code):
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= code_names(const)
    return names


class _Digest:
    """Hashes a function with everything it reaches, once each."""

    def __init__(self):
        self.hasher = hashlib.sha256()
        self.seen = set()
        self.raises = False
        """Whether any reached source may raise (cached code then needs Numba's full context)."""

    def update(self, text):
        self.hasher.update(text.encode() if isinstance(text, str) else text)

    def function(self, fn):
        original = getattr(fn, "__wrapped_kernel_source__", fn)
        if id(original) in self.seen:
            return
        self.seen.add(id(original))
        self.update(f"function {original.__module__}.{original.__qualname__}\n")
        try:
            source = inspect.getsource(original)
        except (OSError, TypeError):
            self.raises = True
            self.update(marshal.dumps(original.__code__))
        else:
            self.raises = self.raises or "raise" in source
            self.update(source)
        names = code_names(original.__code__)
        namespace = function_namespace(original)
        for name in sorted(names):
            if name in namespace:
                self.value(name, namespace[name], names)

    def value(self, name, value, names):
        from numba.core.dispatcher import Dispatcher

        self.update(f"\n{name}=")
        if isinstance(value, Dispatcher) or type(value).__name__ == "CUDADispatcher":
            self.update(repr(sorted(getattr(value, "targetoptions", {}).items())))
            self.function(value.py_func)
        elif isinstance(getattr(value, "py_func", None), pytypes.FunctionType):
            self.function(value.py_func)  # a @sim.kernel
        elif isinstance(value, FuncOverloads):
            for k, member in enumerate(value.members):
                self.value(f"{name}[{k}]", member, names)
        elif isinstance(value, pytypes.ModuleType):
            self.update(value.__name__)
            if value.__name__.split(".")[0] in _STABLE_MODULES or id(value) in self.seen:
                return
            self.seen.add(id(value))
            for attribute in sorted(names):
                if hasattr(value, attribute):
                    member = getattr(value, attribute)
                    if callable(member) or isinstance(member, pytypes.ModuleType):
                        self.value(f"{name}.{attribute}", member, names)
        elif isinstance(value, pytypes.FunctionType):
            if value.__module__.split(".")[0] not in _STABLE_MODULES:
                self.function(value)
        elif isinstance(value, (bool, int, float, complex, str, bytes, type(None), np.generic)):
            self.update(f"{type(value).__name__}:{value!r}")
        elif isinstance(value, np.ndarray):
            self.update(f"ndarray {value.dtype} {value.shape}")
            self.update(hashlib.sha256(np.ascontiguousarray(value).tobytes()).digest())
        elif isinstance(value, (tuple, list)):
            for k, item in enumerate(value):
                self.value(f"{name}[{k}]", item, names)
        elif isinstance(value, Value):
            self.update(repr(value))
        elif isinstance(value, type) and issubclass(value, Struct):
            self.update(f"struct {value.__module__}.{value.__qualname__} "
                        f"{[(f.name, repr(f.annotation)) for f in value._fields]}")
        elif isinstance(value, type):
            self.update(f"class {value.__module__}.{value.__qualname__}")
        else:
            self.update(f"object {type(value).__module__}.{type(value).__qualname__}")


def _kernel_digest(kernel, variant):
    digest = _Digest()
    digest.update(package_fingerprint())
    digest.update(repr(variant))
    for parameter in kernel.parameters:
        digest.value(parameter.name, parameter.annotation, set())
        digest.update(repr(parameter.annotation))
    digest.function(kernel.py_func)
    digest.update(getattr(kernel.body, "__sim_transformed__", ""))  # Warp's code_transformers
    return digest


def kernel_fingerprint(kernel, *variant):
    """The fingerprint of one launcher of *kernel* (see the module docstring)."""
    return _kernel_digest(kernel, variant).hasher.hexdigest()


# --------------------------------------------------------------------------
# Numba cache classes with our locator (one set per Numba target)


_CHECKSUM = hashlib.sha256().digest_size


def _checksummed(index_data_file_class):
    """An index/data file class whose data files carry a SHA-256 of their contents, so that
    a corrupted object file is detected before its code could run."""

    class ChecksummedIndexDataCacheFile(index_data_file_class):
        def _save_data(self, name, data):
            payload = self._dump(data)
            with self._open_for_write(self._data_path(name)) as f:
                f.write(hashlib.sha256(payload).digest() + payload)

        def _load_data(self, name):
            import pickle

            with open(self._data_path(name), "rb") as f:
                content = f.read()
            digest, payload = content[:_CHECKSUM], content[_CHECKSUM:]
            if hashlib.sha256(payload).digest() != digest:
                raise ValueError(f"checksum mismatch in {self._data_path(name)}")
            return pickle.loads(payload)

    return ChecksummedIndexDataCacheFile


class _RobustCacheMixin:
    """Unreadable cache files (truncated, corrupted, from another version) are a miss
    with a warning, never a crash and never stale code; the next save replaces them."""

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file.__class__ = _checksummed(type(self._cache_file))

    def _load_overload(self, sig, target_context):
        try:
            return super()._load_overload(sig, target_context)
        except Exception as error:  # pickle, EOF, zlib, version errors alike
            self._discard(f"is unreadable ({type(error).__name__}: {error}); recompiling")
            return None

    def _save_overload(self, sig, data):
        try:
            super()._save_overload(sig, data)
        except Exception as error:
            self._discard(f"could not be updated ({type(error).__name__}: {error}); "
                          "starting it afresh")
            super()._save_overload(sig, data)

    def _discard(self, reason):
        import warnings

        index = self._cache_file._index_path
        warnings.warn(f"numba_sim: the cache entry {index} {reason}", RuntimeWarning, stacklevel=4)
        for path in (index,):
            try:
                os.remove(path)
            except OSError:
                pass


def _cache_classes(caching, impl_base, target):
    class FingerprintLocator(caching._CacheLocator):
        """Places a launcher by its fingerprint under the numba_sim cache directory."""

        def __init__(self, py_func):
            self._fingerprint = py_func.__numba_sim_fingerprint__
            self._path = os.path.join(cache_dir(), target)

        def get_cache_path(self):
            return self._path

        def get_source_stamp(self):
            return self._fingerprint

        def get_disambiguator(self):
            return self._fingerprint[:20]

        @classmethod
        def from_function(cls, py_func, py_file):
            if getattr(py_func, "__numba_sim_fingerprint__", None) is None:
                return None
            return cls(py_func)

    class FingerprintCacheImpl(impl_base):
        _locator_classes = [FingerprintLocator]

        def get_filename_base(self, fullname, abiflags):
            return f"{self._kernel_name}-{self.locator.get_disambiguator()}"

        def __init__(self, py_func):
            self._kernel_name = py_func.__numba_sim_kernel_name__
            super().__init__(py_func)

    return FingerprintCacheImpl


@functools.cache
def _cpu_cache_class():
    from numba.core import caching

    impl = _cache_classes(caching, caching.CompileResultCacheImpl, "cpu")

    class KernelCpuCache(_RobustCacheMixin, caching.FunctionCache):
        _impl_class = impl

        def load_overload(self, sig, target_context):
            """Numba refreshes the whole target context before a cache lookup (imports of
            every NumPy implementation, ~0.4 s); a cached launcher needs only the runtime,
            unless its code raises exceptions (their arguments need the full context)."""
            if getattr(self._py_func, "__numba_sim_raises__", True):
                target_context.refresh()
            else:
                from numba.core.runtime import rtsys

                rtsys.initialize(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)

    return KernelCpuCache


@functools.cache
def _cuda_cache_class():
    from numba.cuda.codegen import NRT_LIBRARY
    from numba.cuda.core import caching
    from numba.cuda.dispatcher import CUDACache, CUDACacheImpl

    base = _cache_classes(caching, CUDACacheImpl, "cuda")

    class LinkedKernelCacheImpl(base):
        def reduce(self, kernel):
            """Save the kernel with its cubin for this device, without linking files."""
            from numba import cuda

            library = kernel._codelibrary
            library.get_cubin(cc=cuda.get_current_device().compute_capability)
            linked = without_linking_files(library, keep={NRT_LIBRARY})
            states = kernel._reduce_states()
            states["codelibrary"] = linked
            return states

    return type("KernelCudaCache", (_RobustCacheMixin, CUDACache),
                {"_impl_class": LinkedKernelCacheImpl})


def without_linking_files(library, keep=()):
    """A shallow copy of a linked CUDA code library that numba-cuda agrees to pickle.

    Its cubins (and PTX) are kept; the files it was linked with are not needed
    to load it again for the same compute capability.
    """
    linked = object.__new__(type(library))
    linked.__dict__.update(library.__dict__)
    linked._linking_files = set(library._linking_files) & set(keep)
    return linked


def attach(dispatcher, function, kernel, target, *variant):
    """Give *dispatcher* (compiling generated *function*) the fingerprinted disk cache."""
    if not enabled():
        return dispatcher
    digest = _kernel_digest(kernel, (target,) + variant)
    function.__numba_sim_fingerprint__ = digest.hasher.hexdigest()
    function.__numba_sim_raises__ = digest.raises or "debug" in variant
    function.__numba_sim_kernel_name__ = "".join(
        c if c.isalnum() or c == "_" else "_" for c in kernel.__qualname__)
    cache_class = _cpu_cache_class() if target == "cpu" else _cuda_cache_class()
    dispatcher._cache = cache_class(function)
    return dispatcher


def attach_graph(dispatcher, function, source, launchers):
    """Give the replay of a CPU graph (``launch_capture``: generated *source* calling the
    compiled *launchers*) the fingerprinted disk cache: its fingerprint is the package's,
    the replay's source (the launches, their order and their dims) and every launcher's
    own fingerprint, so editing any kernel of the graph recompiles it.  Not cached when a
    launcher has no fingerprint (the cache is off, or it was not compiled by numba_sim)."""
    parts = [getattr(d.py_func, "__numba_sim_fingerprint__", None) for d in launchers]
    if not enabled() or not all(parts):
        return dispatcher
    digest = hashlib.sha256()
    for part in (package_fingerprint(), "cpu graph", source, *parts):
        digest.update(part.encode())
    function.__numba_sim_fingerprint__ = digest.hexdigest()
    function.__numba_sim_raises__ = any(getattr(d.py_func, "__numba_sim_raises__", True)
                                        for d in launchers)
    function.__numba_sim_kernel_name__ = f"cpu_graph_of_{len(launchers)}_launches"
    dispatcher._cache = _cpu_cache_class()(function)
    return dispatcher


# --------------------------------------------------------------------------
# Inspection and clearing (python -m numba_sim info / cache clear)


def cache_size():
    """(number of files, total bytes) under the cache directory."""
    files = total = 0
    for root, _, names in os.walk(cache_dir()):
        for name in names:
            files += 1
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return files, total


def clear():
    """Empty the cache directory; returns the number of files removed."""
    files, _ = cache_size()
    directory = cache_dir()
    if os.path.isdir(directory):
        shutil.rmtree(directory, ignore_errors=True)
    return files
