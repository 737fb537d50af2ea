"""Host-side compatibility for Warp's ported unit tests (tests/warp_suite/).

The ported test files (written by tools/port_warp_tests.py, never edited by hand)
import this module in place of ``warp.tests.unittest_utils``.  It does two things
only, both on the host:

1. Warp's test scaffolding, re-stated for numba_sim: ``get_test_devices``,
   ``add_function_test`` / ``add_kernel_test``, ``assert_np_equal``, ``CheckOutput``
   (stdout capture), ... with the same behaviour as Warp's ``unittest_utils``.
   Devices are numba_sim's device strings (``sim.get_device``); a CUDA case is
   registered like Warp's and skipped, with the reason, where no GPU is usable.
2. Warp's host API spellings that numba_sim spells differently, as functions the
   generator's logged rewrites call: ``wpc.to_device(a, d)`` for ``a.to(d)``,
   ``wpc.zero_(a)`` for ``a.zero_()``, ``wpc.Kernel(func=...)`` for
   ``wp.Kernel(func=...)``, ``wpc.copy`` ... (see ``HOST_NAMES``).

It never implements a kernel-language feature: no builtin, no type, nothing a
kernel body can call.  Arrays are numba_sim's: NumPy (cpu) or CuPy (cuda), with
a value type's storage as trailing dims.
"""

import ctypes
import ctypes.util
import functools
import importlib.util
import io
import operator
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import numba_sim as sim
from numba_sim import arrays as _arrays
from numba_sim.autodiff import gradients as _gradients
from numba_sim.structs import Struct as _Struct
from numba_sim.autodiff import array_access as _array_access
from numba_sim import launch_capture as _launch_capture
from numba_sim import map_kernels as _map_kernels

_sim_kernel = sys.modules["numba_sim.kernel"]  # the module (sim.kernel is the decorator)

USD_AVAILABLE = importlib.util.find_spec("pxr") is not None  # as in Warp: usd-core importable
wpc = sys.modules[__name__]  # the ported files name this module wpc (star imports too)
test_mode = "unique_or_2x"

try:
    LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
except OSError:
    LIBC = None

# --------------------------------------------------------------------------
# Devices


def _cuda_usable():
    """Whether a CUDA device can run the CUDA cases (CuPy and a driver)."""
    cupy = _arrays.cupy_or_none()
    if cupy is None:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


CUDA_SKIP_REASON = "CUDA case: no usable CUDA device (CuPy and a driver) on this machine"


def is_cuda_available():
    return _cuda_usable()


def is_cpu_available():
    return True


def get_cuda_device_count():
    return _arrays.cupy_module().cuda.runtime.getDeviceCount() if _cuda_usable() else 0


def get_cuda_devices():
    return [sim.get_device(f"cuda:{i}") for i in range(get_cuda_device_count())]


def get_devices():
    return [sim.get_device("cpu")] + get_cuda_devices()


def get_cpu_test_devices():
    return [sim.get_device("cpu")]


class _ListedCudaDevice(sim.Device):
    """``cuda:0`` as listed without a usable GPU, so that its cases exist (and skip with the
    reason): Warp's filters on ``arch`` see 0 there instead of failing at import."""

    __slots__ = ()

    @property
    def arch(self):
        return super().arch if _cuda_usable() else 0


def get_selected_cuda_test_devices(mode=None):
    """Warp's CUDA test devices; the first CUDA device is always listed, so that its
    cases exist (and are skipped with a reason) on machines without a GPU."""
    return [_ListedCudaDevice("cuda:0")]


def get_test_devices(mode=None):
    return get_cpu_test_devices() + get_selected_cuda_test_devices(mode)


def get_cuda_test_devices(mode=None):
    return get_selected_cuda_test_devices(mode)


def get_test_devices_with_graph_capture_allocation(mode=None):
    return get_test_devices(mode)


def get_test_devices_with_cuda_graph_module_load(mode=None):
    return get_test_devices(mode)


def get_test_devices_with_graph_capture_allocation_and_cuda_graph_module_load(mode=None):
    return get_test_devices(mode)


def get_cuda_test_devices_with_mempool(mode=None):
    return get_cuda_test_devices(mode)


def get_selected_cuda_test_devices_with_mempool(mode=None):
    return get_selected_cuda_test_devices(mode)


def _peer_pair(check):
    devices = get_cuda_devices()
    for target in devices:
        for peer in devices:
            if target != peer and check(peer.ordinal, target.ordinal):
                return target, peer
    return None


def get_cuda_device_pair_with_peer_access_support(devices=None):
    """The first pair of CUDA devices where the second can access the first's memory."""
    return _peer_pair(lambda a, b: _arrays.cupy_module().cuda.runtime.deviceCanAccessPeer(a, b))


def get_cuda_device_pair_with_mempool_access_support(devices=None):
    return get_cuda_device_pair_with_peer_access_support(devices)


def is_cuda_graph_module_load_supported(device):
    return True


def synchronize_device(device=None):
    """Warp's ``wp.synchronize_device``: CPU work is done when a launch returns."""
    if sim.get_device(device).is_cuda:
        sim.synchronize()


# --------------------------------------------------------------------------
# Warp's host spellings of array operations (NumPy / CuPy underneath)


def _module_of(a):
    return _arrays.cupy_module() if _arrays.device_of(a) == "cuda" else np


def to_device(a, device):
    """``a.to(device)``: *a* itself on its device, else a copy on *device*."""
    target = sim.get_device(device)
    if (_arrays.device_of(a) or "cpu") == ("cuda" if target.is_cuda else "cpu"):
        return a
    return sim.from_numpy(sim.to_numpy(a), device=target)


def zero_(a):
    """``a.zero_()`` (recorded by a CPU capture, as Warp's memory operations are)."""
    _launch_capture.host_operation(lambda: a.__setitem__(Ellipsis, 0))


def fill_(a, value):
    """``a.fill_(value)``: a scalar, or a value such as ``sim.vec3(...)`` (recorded by a CPU
    capture)."""
    value = np.asarray(value)
    if value.ndim == 0 and a.dtype.fields is None:
        # ndarray.fill converts the scalar once; a[...] = value casts it for every element
        # (a strided float32 view of 500M elements: 15 s against 1 s)
        _launch_capture.host_operation(lambda: a.fill(value[()]))
    else:
        _launch_capture.host_operation(lambda: a.__setitem__(Ellipsis, value))


def assign(a, src):
    """``a.assign(src)``: ``sim.copy(a, src)`` for an array of *a*'s shape and dtype (Warp's
    assign is its copy, differentiated on a tape), else *src*'s values written into *a*."""
    if _arrays.device_of(src) is not None and tuple(src.shape) == tuple(a.shape) \
            and src.dtype == a.dtype:
        sim.copy(a, src)
        return
    a[...] = _module_of(a).asarray(sim.to_numpy(src) if _module_of(a) is np else src).reshape(a.shape)


def is_contiguous(a):
    """``a.is_contiguous``: whether *a* is C-contiguous (NumPy's and CuPy's flag)."""
    return bool(a.flags.c_contiguous)


def element_shape(a):
    """``a.dtype._shape_`` of an array of matrices: the matrix shape, *a*'s trailing two
    dims (numba_sim's array of matrices is its scalars, ``(..., rows, cols)``)."""
    if getattr(a, "ndim", 0) < 2:
        raise TypeError(f"a.dtype._shape_: an array of matrices has at least 2 dims (rows, "
                        f"cols trailing), got shape {getattr(a, 'shape', None)}")
    return tuple(a.shape[-2:])


def element_length(a):
    """``a.dtype._length_`` of an array of vectors: the vector length, *a*'s trailing dim
    (numba_sim's array of vectors is its scalars, ``(..., length)``)."""
    if getattr(a, "ndim", 0) < 1:
        raise TypeError(f"a.dtype._length_: an array of vectors has its length as its last "
                        f"dim, got shape {getattr(a, 'shape', None)}")
    return a.shape[-1]


def grad(a):
    """``a.grad``: *a*'s gradient, registered beside it (``sim.grad``), or None where it
    has none (Warp's property is None for an array without ``requires_grad``)."""
    return _gradients.grad_or_none(a)


def has_grad(a):
    """``a.requires_grad``: whether *a* has a gradient registered beside it."""
    return _gradients.has_grad(a)


def set_requires_grad(a, value):
    """``a.requires_grad = value``: True registers a zero gradient beside *a*
    (``sim.requires_grad``; one it has stays).  numba_sim cannot unregister one: False on
    an array with a gradient raises NotImplementedError."""
    if value:
        sim.requires_grad(a)
    elif _gradients.has_grad(a):
        raise NotImplementedError("a.requires_grad = False: numba_sim keeps a registered "
                                  "gradient beside its array (no way to drop it)")


def is_read(a):
    """``a._is_read``: whether a launch recorded on a tape read *a*, with
    ``sim.config.verify_autograd_array_access`` on (the mark kept beside the array)."""
    return _array_access.is_read(a)


def set_is_read(a, value):
    """``a._is_read = value``."""
    _array_access.set_read(a, value)


class _TapeGradients:
    """``tape.gradients``: Warp's dict from an array to its gradient, looked up by the
    array (NumPy arrays cannot be dict keys): the gradient registered beside it."""

    def __init__(self, tape):
        self._tape = tape

    def __getitem__(self, a):
        if isinstance(a, _Struct):
            return _gradients.grad(a)  # a struct of its arrays' gradients
        gradient = _gradients.grad_or_none(a)
        if gradient is None:
            raise KeyError(f"tape.gradients: no gradient registered beside this "
                           f"{type(a).__name__}" + (f" of shape {a.shape}" if hasattr(a, "shape")
                                                    else ""))
        return gradient

    def __contains__(self, a):
        return _gradients.grad_or_none(a) is not None

    def get(self, a, default=None):
        gradient = _gradients.grad_or_none(a)
        return default if gradient is None else gradient


def tape_gradients(tape):
    """``tape.gradients`` -> a mapping by array (:class:`_TapeGradients`)."""
    return _TapeGradients(tape)


def list_(a):
    """``a.list()``: *a*'s elements, flattened, as Python values (Warp 1.19): Python scalars
    for a scalar array, structs (the numba_sim struct class of the array's record
    dtype) for an array of structs.  A value-type array (vec3: trailing storage dims of
    its scalar type) cannot be told from a scalar array with more dims here (numba_sim's
    arrays are NumPy's, without Warp's dtype): it lists its scalars."""
    host = sim.to_numpy(a)
    if host.dtype.names is None:
        return host.reshape(-1).tolist()
    cls = _struct_class(host.dtype)
    return [cls.from_numpy(record) for record in host.reshape(-1)]


def _struct_class(dtype):
    """The numba_sim struct class whose NumPy record dtype *dtype* is."""
    from numba_sim.structs import Struct

    classes = Struct.__subclasses__()
    found = [c for c in classes if vars(c).get("numpy_dtype") is dtype] or [
        c for c in classes if vars(c).get("numpy_dtype") == dtype]
    if len(found) != 1:
        raise TypeError(f"a: an array of records {dtype} that is not one struct class's "
                        f"({len(found)} struct classes have this dtype)")
    return found[0]


def clone(a, device=None, requires_grad=None, pinned=None, retain_grad=False):
    """``wp.clone(a)``: ``sim.clone`` (``pinned``/``retain_grad``: Warp's, see `_like`)."""
    return _like(sim.clone, a, device, requires_grad, pinned, retain_grad)


def _like(factory, a, device, requires_grad, pinned, retain_grad, *value):
    """Warp's ``*_like(src, device, requires_grad, pinned, retain_grad)`` as numba_sim's:
    ``pinned=None`` is Warp's "as the source" (a NumPy array is never pinned);
    ``retain_grad=True`` is not translated (numba_sim's store adjoints decide it)."""
    if retain_grad:
        raise NotImplementedError("retain_grad=True: numba_sim has no per-array flag for it")
    return factory(a, *value, device=device, requires_grad=requires_grad,
                   pinned=bool(pinned))


def empty_like(a, device=None, requires_grad=None, pinned=None, retain_grad=False):
    return _like(sim.empty_like, a, device, requires_grad, pinned, retain_grad)


def ones_like(a, device=None, requires_grad=None, pinned=None, retain_grad=False):
    return _like(sim.ones_like, a, device, requires_grad, pinned, retain_grad)


def full_like(a, value, device=None, requires_grad=None, pinned=None, retain_grad=False):
    return _like(sim.full_like, a, device, requires_grad, pinned, retain_grad, value)


_SCALAR_NAMES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                 "float32", "float64")
_SCALAR_OF_DTYPE = {np.dtype(getattr(sim, name)): getattr(sim, name) for name in _SCALAR_NAMES}
"""NumPy dtype -> numba_sim's scalar type (float16 and bfloat16 are out of scope)."""


def dtype_from_numpy(numpy_dtype):
    """``wp.dtype_from_numpy``: numba_sim's scalar type of a NumPy dtype."""
    scalar = _SCALAR_OF_DTYPE.get(np.dtype(numpy_dtype))
    if scalar is None:
        raise TypeError(f"numpy_dtype: expected the dtype of one of numba_sim's scalar types "
                        f"({', '.join(_SCALAR_NAMES)}), got {numpy_dtype!r}")
    return scalar


def dtype_to_numpy(scalar_type):
    """``wp.dtype_to_numpy``."""
    return np.dtype(scalar_type)


class _KernelClass(type):
    """``wp.Kernel`` is Warp's kernel class: called, it makes a kernel (`Kernel`); as a class,
    ``isinstance(k, wp.Kernel)`` is true of numba_sim's kernels."""

    def __call__(cls, func, key=None, module=None, options=None, code_transformers=None):
        """``wp.Kernel(func=f, key=..., options=...)``: the call form of
        ``@wp.kernel(**options)`` (with Warp's ``code_transformers``, numba_sim's Kernel's)."""
        if code_transformers:
            options = dict(options or {})
            return _sim_kernel.Kernel(func, enable_backward=options.get("enable_backward"),
                                      options=options, code_transformers=code_transformers)
        return sim.kernel(func, **(options or {}))

    def __instancecheck__(cls, value):
        return isinstance(value, _sim_kernel.Kernel)


class Kernel(metaclass=_KernelClass):
    """``wp.Kernel``: see `_KernelClass`."""


def make_isolated_kernel(func, **kwargs):
    """Warp builds a kernel in a module of its own; numba_sim kernels compile one by one."""
    return sim.kernel(func)


def init():
    """``wp.init()``: numba_sim initializes on import."""


def _type_tables():
    """Warp's tables of its scalar types (``warp._src.types.scalar_types`` ...), in numba_sim's
    spelling (its scalar types are NumPy's), without float16 and bfloat16: both are out of
    scope (issue 17), and Warp's tests build vector types of every listed scalar at module
    level, so listing them would fail whole files, in-scope cases included.  The cases of
    those types are counted out of scope from Warp's own list of cases."""
    ints = tuple(_SCALAR_OF_DTYPE[np.dtype(n)] for n in _SCALAR_NAMES[1:9])
    floats = (sim.float32, sim.float64)
    to_warp = {np.dtype(t).type: t for t in _SCALAR_OF_DTYPE.values()}
    to_warp.update(_SCALAR_OF_DTYPE)
    return {
        "warp._src.types.int_types": ints,
        "warp._src.types.float_types": floats,
        "warp._src.types.scalar_types": ints + floats,
        "warp._src.types.vector_types": _vector_types(),
        "warp._src.types.np_dtype_to_warp_type": to_warp,
        "warp._src.types.warp_type_to_np_dtype": {t: np.dtype(t).type
                                                  for t in _SCALAR_OF_DTYPE.values()},
    }


def _vector_types():
    """Warp's ``vector_types`` (its vectors, matrices, quaternions, transforms and spatial
    types of every scalar, in Warp's order), without the float16 ones (out of scope, see
    `_type_tables`)."""
    names = [f"vec{n}{s}" for n in (2, 3, 4) for s in ("b", "ub", "s", "us", "i", "ui", "l",
                                                      "ul", "f", "d")]
    names += [f"{c}{s}" for c in ("mat22", "mat33", "mat44", "quat", "transform",
                                  "spatial_vector", "spatial_matrix") for s in ("f", "d")]
    return tuple(getattr(sim, name) for name in names)


def _out_of_scope_types():
    """Warp's out-of-scope scalar types and its composites of float16, by name -> reason."""
    composites = ("vec2", "vec3", "vec4", "mat22", "mat33", "mat44", "quat", "transform",
                  "spatial_vector", "spatial_matrix")
    return {"float16": "fp16", "half": "fp16", "bfloat16": "bf16",
            **{f"{c}h": "fp16" for c in composites}}


OUT_OF_SCOPE_TYPES = _out_of_scope_types()


class _OutOfScopeType(type):
    """The metaclass of the placeholders for Warp's float16 / bfloat16 types: a class with
    Warp's name (``dtype.__name__`` names the cases Warp registers in a loop over dtypes),
    identity (``scalar_type is wp.bfloat16``) and, for a composite, ``_wp_scalar_type_``;
    using it as a type (a value, an array dtype, a subscript) raises, naming it."""

    def _fail(cls, *args, **kwargs):
        raise NotImplementedError(f"wp.{cls.__name__} is out of scope ({cls._reason}): "
                                  f"numba_sim has no {cls.__name__} type")

    __call__ = __getitem__ = __iter__ = _fail

    def __getattr__(cls, attr):
        raise AttributeError(f"wp.{cls.__name__} (out of scope: {cls._reason}) has no "
                             f"attribute {attr!r} in numba_sim")

    def __repr__(cls):
        return f"<Warp's {cls.__name__}: out of scope ({cls._reason})>"


@functools.cache
def out_of_scope_type(name):
    """The generator's stand-in for ``wp.<name>`` (float16, bfloat16, vec3h, ...): one
    placeholder per name, so that identity comparisons hold."""
    if name not in OUT_OF_SCOPE_TYPES:
        raise ValueError(f"name: expected one of Warp's out-of-scope types "
                         f"{sorted(OUT_OF_SCOPE_TYPES)}, got {name!r}")
    attributes = {"_reason": OUT_OF_SCOPE_TYPES[name], "__module__": "warp"}
    if name not in ("float16", "half", "bfloat16"):
        attributes["_wp_scalar_type_"] = out_of_scope_type("float16")
    if name == "half":
        return out_of_scope_type("float16")
    return _OutOfScopeType(name, (), attributes)


_TYPE_TABLES = _type_tables()
_TYPE_TABLES.update({f"warp._src.types.{name}": out_of_scope_type(name)
                     for name in OUT_OF_SCOPE_TYPES})
for _name in ("vector", "matrix", "quaternion", "transformation", "type_size",
              "type_size_in_bytes", "types_equal", "type_repr",
              "Vector", "Matrix", "Quaternion", "Transformation"):  # (and its type hints)
    # Warp's type factories and type queries (also public as wp.types.X): numba_sim.types'
    if hasattr(sim.types, _name):
        _TYPE_TABLES[f"warp._src.types.{_name}"] = getattr(sim.types, _name)
for _name in ("WarpCodegenError", "WarpCodegenTypeError", "WarpCodegenValueError"):
    # Warp's kernel compile errors, which numba_sim raises under the same names
    _TYPE_TABLES[f"warp._src.codegen.{_name}"] = getattr(sim, _name)
_TYPE_TABLES["warp._src.types.Reference"] = sim.ref  # the class of wp.ref[T] annotations
_TYPE_TABLES["warp._src.context.user_modules"] = _sim_kernel.KernelModule._named  # by name
_TYPE_TABLES["warp._src.utils.map_cache"] = _map_kernels.map_cache  # wp.map's kernel cache
_TYPE_TABLES["warp._src.types.check_array_shape"] = _arrays.check_array_shape  # shape limits
_TYPE_TABLES["warp._src.utils.check_p2p"] = (  # Warp's host check that peer-to-peer works
    lambda: get_cuda_device_pair_with_peer_access_support() is not None)


class WarpInternal:
    """Stands for a name from one of Warp's own modules (``warp._src.codegen``,
    ``warp.optim``, ...), which numba_sim does not have: using it raises, naming it, so
    that only the cases that use it fail."""

    def __init__(self, name):
        self._name = name

    def _fail(self, *args, **kwargs):
        raise NotImplementedError(f"{self._name} is part of Warp itself, not of numba_sim")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        name = f"{self._name}.{attr}"
        return _TYPE_TABLES[name] if name in _TYPE_TABLES else WarpInternal(name)

    __call__ = __getitem__ = __iter__ = __enter__ = __bool__ = _fail
    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = __contains__ = _fail
    __hash__ = None

    def __repr__(self):
        return f"<Warp's {self._name}>"


class _WarpExamples:
    """``warp.examples``: only the location of Warp's example data (meshes and
    volumes its tests load); no code of Warp's is imported."""

    @staticmethod
    def get_asset_directory():
        spec = importlib.util.find_spec("warp")
        return os.path.join(spec.submodule_search_locations[0], "examples", "assets")


NUMBA_SIM_MODULES = {
    "warp.optim": "numba_sim.optim", "warp._src.optim": "numba_sim.optim",
    "warp._src.optim.sgd": "numba_sim.optim", "warp._src.optim.adam": "numba_sim.optim",
    "warp.autograd": "numba_sim.autograd", "warp._src.autograd": "numba_sim.autograd",
}
"""Warp's modules that numba_sim has under another name (a spelling: the module is
numba_sim's own feature, docs/autodiff.md)."""


def warp_module(name):
    """The generator's stand-in for ``wp.<Warp submodule>`` (``wp._src``, ``wp.optim``, ...)."""
    return warp_internal(f"warp.{name}")


def warp_internal(module, *names):
    """The generator's stand-in for ``from <Warp module> import names`` / ``<Warp module>.x``."""
    if module in NUMBA_SIM_MODULES:
        own = importlib.import_module(NUMBA_SIM_MODULES[module])
        return own if not names else tuple(getattr(own, name) for name in names)
    objects = [(_WarpExamples if module == "warp.examples" else WarpInternal(module))] if not names \
        else [_TYPE_TABLES[f"{module}.{name}"] if f"{module}.{name}" in _TYPE_TABLES
              else WarpInternal(f"{module}.{name}") for name in names]
    return objects[0] if not names else tuple(objects)


HOST_NAMES = (
    "Kernel", "clone", "dtype_from_numpy", "dtype_to_numpy", "empty_like", "full_like",
    "get_cuda_device_count",
    "get_cuda_devices", "get_devices", "init", "is_cpu_available", "is_cuda_available",
    "ones_like", "synchronize_device",
)
"""Warp's host names (``wp.X``) that the generator routes here (``wpc.X``)."""


# --------------------------------------------------------------------------
# Warp's test scaffolding (warp/tests/unittest_utils.py), on numba_sim


class StreamCapture:
    """Captures a standard stream at the file-descriptor level (C ``printf`` too)."""

    def __init__(self, stream_name):
        self.stream_name = stream_name
        self.saved = None
        self.target = None
        self.tempfile = None

    def begin(self):
        if LIBC is not None:
            LIBC.fflush(None)
        self.saved = getattr(sys, self.stream_name)
        self.saved.flush()
        # the process's descriptor (1 or 2), where C printf writes, whatever object sys.stdout
        # is now (pytest's capture replaces it with one on another descriptor)
        self.fd = getattr(sys, f"__{self.stream_name}__").fileno()
        self.target = os.dup(self.fd)
        self.tempfile = io.TextIOWrapper(tempfile.TemporaryFile(buffering=0), encoding="utf-8",
                                         errors="replace", newline="", write_through=True)
        os.dup2(self.tempfile.fileno(), self.fd)
        setattr(sys, self.stream_name, self.tempfile)

    def end(self):
        if LIBC is not None:
            LIBC.fflush(None)
        os.dup2(self.target, self.fd)
        os.close(self.target)
        self.tempfile.seek(0)
        res = self.tempfile.buffer.read()
        self.tempfile.close()
        setattr(sys, self.stream_name, self.saved)
        return str(res.decode("utf-8"))


class StdErrCapture(StreamCapture):
    def __init__(self):
        super().__init__("stderr")


class StdOutCapture(StreamCapture):
    def __init__(self):
        super().__init__("stdout")


class CheckOutput:
    """Fails the test if it prints anything (e.g. a failed ``expect_eq``), as Warp's."""

    def __init__(self, test):
        self.test = test

    def __enter__(self):
        self.capture = StdOutCapture()
        self.capture.begin()

    def __exit__(self, exc_type, exc_value, traceback):
        try:
            sim.synchronize()
        finally:
            s = self.capture.end()
            if s != "":
                print(s.rstrip())
        if s.strip() and exc_type is None:
            self.test.fail(f"Unexpected output:\n'{s.rstrip()}'")


def assert_array_equal(result, expect):
    np.testing.assert_equal(sim.to_numpy(result), sim.to_numpy(expect))


def assert_np_equal(result, expect, tol=0.0):
    if tol != 0.0:
        np.testing.assert_allclose(np.asarray(result).flatten(), np.asarray(expect).flatten(),
                                   atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(result, expect)


def run_python_subprocess(source, *args, timeout=60, hide_gpu=False, env_updates=None):
    env = os.environ.copy()
    env.update(env_updates or {})
    if hide_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    source = f"import resource as _resource; _resource.setrlimit(_resource.RLIMIT_CORE, (0, 0));\n{source}"
    return subprocess.run([sys.executable, "-u", "-c", source, *args], check=False,
                          capture_output=True, text=True, timeout=timeout, env=env)


def run_test_in_subprocess(test, *, timeout=600, hide_gpu=False, env_updates=None):
    """Warp runs such a test in a fresh interpreter; here it runs in this one (the
    isolation guards Warp's own module state, which numba_sim does not share)."""
    return False


def sanitize_identifier(s):
    s = str(s)
    return s if s.isidentifier() else re.sub(r"\W|^(?=\d)", "_", s)


def _is_cuda(device):
    return device is not None and sim.get_device(device).is_cuda


def create_test_func(func, device, check_output, device_check=None, enable_cpu_blocks=False,
                     **kwargs):
    # a case over device pairs (device1=..., device2=...) needs a GPU if one is CUDA
    on_cuda = _is_cuda(device) or any(isinstance(v, sim.Device) and v.is_cuda
                                      for v in kwargs.values())

    @functools.wraps(func)
    def test_func(self):
        if on_cuda and not _cuda_usable():
            self.skipTest(CUDA_SKIP_REASON)
        if device_check is not None:
            device_check(self, device)
        if check_output:
            with CheckOutput(self):
                func(self, device, **kwargs)
        else:
            func(self, device, **kwargs)

    return test_func


def skip_test_func(self):
    self.skipTest("No suitable devices to run the test.")


def add_function_test(cls, name, func, devices=None, check_output=True, device_check=None, **kwargs):
    reason = _out_of_scope(cls, name)
    if reason is not None:
        _skip_out_of_scope(cls, name, devices, reason)
        return
    if devices is None:
        setattr(cls, name, create_test_func(func, None, check_output, device_check=device_check, **kwargs))
    elif isinstance(devices, list):
        if not devices:
            setattr(cls, name, skip_test_func)
        for device in devices:
            setattr(cls, name + "_" + sanitize_identifier(device),
                    create_test_func(func, device, check_output, device_check=device_check, **kwargs))
    else:
        setattr(cls, name + "_" + sanitize_identifier(devices),
                create_test_func(func, devices, check_output, device_check=device_check, **kwargs))


def add_kernel_test(cls, kernel, dim, name=None, expect=None, inputs=None, devices=None,
                    inputs_factory=None):
    if inputs is not None and inputs_factory is not None:
        raise ValueError("Only one of `inputs` and `inputs_factory` may be provided.")

    def test_func(self, device):
        if _is_cuda(device) and not _cuda_usable():
            self.skipTest(CUDA_SKIP_REASON)
        args = []
        test_inputs = inputs_factory(device) if inputs_factory is not None else inputs
        if test_inputs:
            args.extend(test_inputs)
        if expect:
            result = sim.array(expect, dtype=int, device=device)
            output = sim.zeros_like(result)
            args.append(output)
        with CheckOutput(self):
            sim.launch(kernel, dim=dim, inputs=args, device=device)
        if expect:
            assert_array_equal(output, result)

    if name is None:  # Warp's kernel.key: the function's name
        name = kernel.__name__
    if devices is None:
        devices = get_test_devices()
    reason = _out_of_scope(cls, name)
    if reason is not None:
        _skip_out_of_scope(cls, name, devices, reason)
        return
    for d in devices:
        def test_func_wrapper(test, device=d):
            test_func(test, device)

        setattr(cls, name + "_" + sanitize_identifier(d), test_func_wrapper)


def add_function_test_register_kernel(cls, name, func, devices=None, **kwargs):
    reason = _out_of_scope(cls, name)
    if reason is not None:  # its kernels are not built either
        _skip_out_of_scope(cls, name, devices, reason)
        return
    func(None, None, **kwargs, register_kernels=True)
    add_function_test(cls, name, func, devices=devices, **kwargs)


# --------------------------------------------------------------------------
# The generator's out-of-scope list, applied to a ported module


_OUT_OF_SCOPE = {}
"""Ported module name -> {"Class.case": reason}: the generator's fixed list, declared at
the top of each ported file (``declare_out_of_scope``) before its cases are registered."""

_DEVICE_SUFFIX = re.compile(r"_(cpu|cuda_\d+)$")


def declare_out_of_scope(module, reasons):
    _OUT_OF_SCOPE[module] = dict(reasons)


def _out_of_scope(cls, name):
    reasons = _OUT_OF_SCOPE.get(cls.__module__, {})
    return reasons.get(f"{cls.__name__}.{_DEVICE_SUFFIX.sub('', name)}") \
        or reasons.get(f"{cls.__name__}.{name}")


def _method_names(name, devices):
    """The names of the methods a registration of case *name* on *devices* defines."""
    if devices is None or (isinstance(devices, list) and not devices):
        return [name]
    return [name + "_" + sanitize_identifier(d)
            for d in (devices if isinstance(devices, list) else [devices])]


def _skip_out_of_scope(cls, name, devices, reason):
    """Registers the case's methods (one per device, as Warp names them) as skipped."""
    for method in _method_names(name, devices):
        setattr(cls, method, _skipped(method, f"out of scope: {reason}"))


def out_of_scope_definition(name, reason):
    """Stands for a module-level definition that only out-of-scope cases use (the generator
    leaves it out, since defining it may already need the feature, e.g. a ``vec3h``
    annotation); calling it says so."""

    def placeholder(*args, **kwargs):
        raise NotImplementedError(f"{name} is used only by out-of-scope cases ({reason})")

    placeholder.__name__ = name
    return placeholder


class ModuleLevelDefinitionError(Exception):
    """A case used a module-level definition of its file that failed to be defined."""


class FailedDefinition:
    """Stands for a module-level definition of a ported file that raised when the module
    was imported (the generator guards the definitions that running the module does not
    need): the file imports, and a case that uses it fails with the original error."""

    def __init__(self, name, error, what="could not be defined"):
        self.__name__ = self.__qualname__ = name
        self._error = error
        self._what = what

    def _fail(self, *args, **kwargs):
        error = self._error
        raise ModuleLevelDefinitionError(
            f"{self.__name__} {self._what}: {type(error).__name__}: "
            + (str(error).splitlines() or [""])[0]) from error

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        self._fail()

    __call__ = __getitem__ = __iter__ = __enter__ = __bool__ = __len__ = _fail
    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = __contains__ = _fail
    __hash__ = object.__hash__

    def __repr__(self):
        return (f"<{self.__name__}: its module-level definition failed: "
                f"{type(self._error).__name__}: {(str(self._error).splitlines() or [''])[0]}>")


def failed_definition(name, error):
    """The generator's placeholder for a guarded module-level definition that raised."""
    return FailedDefinition(name, error)


def failed_registration(cls, name, devices, error):
    """Registers the cases of a module-level ``add_*_test(...)`` that raised while its
    arguments were evaluated (e.g. ``inputs=[SomeStruct()]``) as failing with that error
    (or skipped, when the generator declared them out of scope)."""
    reason = _out_of_scope(cls, name)
    if reason is not None:
        _skip_out_of_scope(cls, name, devices, reason)
        return
    placeholder = FailedDefinition(name, error, "could not be registered")
    listed = [None] if devices is None or (isinstance(devices, list) and not devices) else (
        devices if isinstance(devices, list) else [devices])
    for method, device in zip(_method_names(name, devices), listed):
        def failing(self, _device=device):
            if _is_cuda(_device) and not _cuda_usable():
                self.skipTest(CUDA_SKIP_REASON)
            placeholder()

        failing.__name__ = method
        setattr(cls, method, failing)


def mark_out_of_scope(namespace):
    """Skips the declared out-of-scope cases that are methods of the module's TestCase
    classes (those not registered through ``add_function_test`` and its kin)."""
    for cls in list(namespace.values()):
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            continue
        for attr in list(vars(cls)):
            if attr.startswith("test"):
                reason = _out_of_scope(cls, attr)
                if reason is not None:
                    setattr(cls, attr, _skipped(attr, f"out of scope: {reason}"))


def _skipped(name, reason):
    @unittest.skip(reason)
    def skipped(self):
        pass

    skipped.__name__ = name
    return skipped
