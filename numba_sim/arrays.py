"""Host side of arrays: the ``sim.array`` annotation, element dtypes, devices and
the allocation helpers (``sim.zeros`` ...).

numba_sim has no array container of its own: NumPy arrays on the CPU and CuPy
(or any ``__cuda_array_interface__`` / DLPack) arrays on CUDA, whose trailing
dimensions are the value type's storage: vec3 -> ``(..., 3)`` float32,
mat33 -> ``(..., 3, 3)``, a struct -> its NumPy structured dtype.
"""

import builtins
import typing

import numpy as np

from numba_sim import autodiff_hooks
from numba_sim import types as value_types
from numba_sim.types import Value

MAX_NDIM = 4


# --------------------------------------------------------------------------
# Element dtypes


def element_dtype(dtype):
    """Normalize an element dtype: a value-type class, a struct class, or a NumPy dtype.

    ``float`` means float32 and ``int`` means int32, as in Warp.
    """
    if dtype is builtins.float:
        return np.dtype(np.float32)
    if dtype is builtins.int:
        return np.dtype(np.int32)
    if dtype is builtins.bool:
        return np.dtype(np.bool_)
    if isinstance(dtype, type) and (issubclass(dtype, Value) or hasattr(dtype, "numpy_dtype")):
        return dtype
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype: expected a scalar type, a value type such as sim.vec3 or a "
                        f"@sim.struct class, got {dtype!r}") from None


def storage_of(dtype):
    """(NumPy dtype, trailing storage shape) of an element dtype."""
    dtype = element_dtype(dtype)
    if isinstance(dtype, type) and issubclass(dtype, Value):
        return dtype.spec.dtype, dtype.spec.shape
    if isinstance(dtype, type):
        return dtype.numpy_dtype, ()
    return dtype, ()


def dtype_name(dtype):
    dtype = element_dtype(dtype)
    return dtype.__name__ if isinstance(dtype, type) else str(dtype)


class _ArrayClass(type):
    """The metaclass of `array`: ``isinstance(x, sim.array)`` is also true of the host arrays
    numba_sim takes as arrays (NumPy, CuPy and other CUDA arrays: `device_of`), as Warp's
    ``isinstance(x, wp.array)`` is of its own arrays (``sim.array(data)`` returns one)."""

    def __instancecheck__(cls, value):
        return super().__instancecheck__(value) or (cls is array and device_of(value) is not None)


class array(metaclass=_ArrayClass):
    """Kernel parameter annotation: ``sim.array(dtype=sim.vec3, ndim=1)``.

    Also Warp's spelling ``sim.array[sim.vec3]``.  The argument is a
    C-contiguous NumPy (cpu) or CUDA array whose trailing dims are the
    element's storage; inside the kernel ``a[i]`` is the element type.

    Called as Warp's host constructor — with data, ``sim.array(data, dtype=sim.vec3,
    device="cpu")``, or with a shape, ``sim.array(shape=n, dtype=...)`` — it returns a
    NumPy (cpu) or CuPy (cuda) array with the trailing storage dims (see `host_array`),
    not an annotation.  A type as the first argument is the annotation's dtype.
    """

    def __new__(cls, data=None, dtype=None, shape=None, device=None, ndim=None, **host):
        if _is_host_construction(data, shape, device, host):
            return host_array(data, dtype=dtype, shape=shape, device=device, ndim=ndim, **host)
        return super().__new__(cls)

    def __init__(self, data=None, dtype=None, shape=None, device=None, ndim=None, **host):
        if data is not None:  # array(sim.vec3): a type as the first argument is the dtype
            if dtype is not None:
                raise TypeError(f"array: dtype given twice, as {data!r} and dtype={dtype!r}")
            dtype = data
        dtype = float if dtype is None else dtype
        ndim = 1 if ndim is None else ndim
        if not isinstance(ndim, int) or not 1 <= ndim <= MAX_NDIM:
            raise ValueError(f"ndim: expected an int from 1 to {MAX_NDIM}, got {ndim!r}")
        self.dtype = typing.Any if dtype is typing.Any else element_dtype(dtype)
        self.ndim = ndim

    @property
    def generic(self):
        """Whether the element type is ``typing.Any`` (Warp's generic arrays): the kernel is
        typed from the argument, which passes as it is (a scalar array)."""
        return self.dtype is typing.Any

    def __class_getitem__(cls, parameters):
        """``sim.array[dtype]`` and ``sim.array[dtype, ndim]`` (ndim an int or
        ``typing.Literal[n]``), Warp's subscript spellings."""
        if not isinstance(parameters, tuple):
            return cls(dtype=parameters)
        if len(parameters) != 2:
            raise TypeError(f"{cls.__name__}[...]: expected {cls.__name__}[dtype] or "
                            f"{cls.__name__}[dtype, ndim], got {len(parameters)} parameters")
        return cls(dtype=parameters[0], ndim=_subscript_ndim(parameters[1]))

    @property
    def storage(self):
        """(NumPy dtype, full host ndim) of arrays passed for this annotation."""
        scalar, trailing = storage_of(self.dtype)
        return scalar, self.ndim + len(trailing)

    def __eq__(self, other):
        return isinstance(other, array) and (self.dtype, self.ndim) == (other.dtype, other.ndim)

    def __hash__(self):
        return hash((array, self.dtype, self.ndim))

    def __repr__(self):
        name = "Any" if self.generic else dtype_name(self.dtype)
        return f"array(dtype={name}, ndim={self.ndim})"


def _subscript_ndim(ndim):
    """The ndim of ``sim.array[dtype, ndim]``: an int or ``typing.Literal[n]``."""
    if typing.get_origin(ndim) is typing.Literal:
        values = typing.get_args(ndim)
        if len(values) != 1:
            raise TypeError(f"ndim: Expected a single Literal value, got {ndim!r}")
        ndim = values[0]
    if ndim is typing.Any:
        raise TypeError("ndim: an array of any number of dims (ndim=Any) is not supported; "
                        "give the ndim, or leave the parameter unannotated")
    if isinstance(ndim, builtins.bool) or not isinstance(ndim, (builtins.int, np.integer)):
        raise TypeError(f"ndim: expected an int or typing.Literal[n], got {ndim!r}")
    return builtins.int(ndim)


# --------------------------------------------------------------------------
# Devices


def parse_device(device):
    """("cpu", None) or ("cuda", ordinal) from "cpu" | "cuda" | "cuda:N"."""
    if device is None or device == "cpu":
        return "cpu", None
    if isinstance(device, str) and (device == "cuda" or device.startswith("cuda:")):
        ordinal = device[5:]
        if ordinal and not ordinal.isdigit():
            raise ValueError(f"device: expected 'cpu', 'cuda' or 'cuda:N', got {device!r}")
        return "cuda", int(ordinal) if ordinal else None
    raise ValueError(f"device: expected 'cpu', 'cuda' or 'cuda:N', got {device!r}")


NUMPY_LIKE_ARRAYS = {np.ndarray: "cpu"}
"""Array classes with NumPy's dtype, ndim, shape and flags attributes -> their device:
NumPy's, and CuPy's once one was seen (so that checking them needs no import)."""


def device_of(value):
    """'cpu' for NumPy arrays, 'cuda' for CUDA arrays (CUDA array interface or DLPack),
    None for anything else."""
    if isinstance(value, np.ndarray):
        return "cpu"
    if hasattr(value, "__cuda_array_interface__"):
        cls = type(value)
        if cls.__name__ == "ndarray" and cls.__module__.split(".")[0] == "cupy":
            NUMPY_LIKE_ARRAYS[cls] = "cuda"
        return "cuda"
    if is_dlpack_cuda(value):
        return "cuda"
    return None


def c_contiguous(value):
    """Whether a NumPy, CuPy, Numba device or CUDA-array-interface array is C-contiguous."""
    flags = getattr(value, "flags", None)
    if flags is not None:  # NumPy and CuPy flags objects; a Numba device array's dict
        return bool(flags.c_contiguous if hasattr(flags, "c_contiguous") else flags["C_CONTIGUOUS"])
    interface = value.__cuda_array_interface__
    strides = interface.get("strides")
    if strides is None:
        return True
    expected = np.dtype(interface["typestr"]).itemsize
    for extent, stride in zip(reversed(interface["shape"]), reversed(strides)):
        if extent > 1 and stride != expected:
            return False
        expected *= extent
    return True


KDL_CUDA = 2
"""DLPack's device type of CUDA memory."""


def is_dlpack_cuda(value):
    """Whether *value* is a DLPack producer of CUDA memory (a torch tensor, say)."""
    device = getattr(value, "__dlpack_device__", None)
    if device is None or not hasattr(value, "__dlpack__"):
        return False
    try:
        return device()[0] == KDL_CUDA
    except Exception:
        return False


def cupy_module():
    """CuPy, or an ImportError saying how to install it."""
    try:
        import cupy
    except ImportError:
        raise ImportError("numba_sim: CUDA arrays need CuPy; install it with "
                          "pip install 'numba-sim[cuda]' (cupy-cuda13x)") from None
    return cupy


_cupy_found = None


def cupy_or_none():
    """CuPy if it is installed, else None (looked up once)."""
    global _cupy_found
    if _cupy_found is None:
        try:
            import cupy
        except ImportError:
            cupy = False
        _cupy_found = cupy
    return _cupy_found or None


def _array_module(device):
    kind, ordinal = parse_device(current_device() if device is None else device)
    if kind == "cpu":
        return np, None
    return cupy_module(), ordinal


MAX_EXTENT = 2**31 - 1
"""The largest extent of an array dimension: kernels index arrays with int32 (``tid()``),
as in Warp."""


def check_array_shape(shape):
    """Raise Warp's ValueError for a shape with a negative extent or one above `MAX_EXTENT`."""
    for extent in shape:
        if extent < 0:
            raise ValueError(f"shape: Array shapes must be non-negative, got {tuple(shape)}")
        if extent > MAX_EXTENT:
            raise ValueError(f"shape: Array shapes must not exceed the maximum representable "
                             f"value of a signed 32-bit integer ({MAX_EXTENT}), got {tuple(shape)}")


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    else:
        shape = tuple(int(s) for s in shape)
    check_array_shape(shape)
    return shape


def _allocate(factory, shape, dtype, device, *extra):
    scalar, trailing = storage_of(dtype)
    module, ordinal = _array_module(device)
    full_shape = _shape(shape) + trailing
    if ordinal is None:
        return getattr(module, factory)(full_shape, *extra, dtype=scalar)
    with module.cuda.Device(ordinal):
        return getattr(module, factory)(full_shape, *extra, dtype=scalar)


def _shape_argument(shape, n):
    """The shape of Warp's ``zeros`` / ``empty`` / ``ones`` / ``full``: *shape*, or Warp's
    older keyword ``n=length`` (``empty(n=4)``); none at all is an empty array, as in Warp."""
    if n is not None:
        if shape is not None:
            raise TypeError(f"shape: give the shape or n (Warp's older spelling of a 1-D "
                            f"shape), not both (shape={shape!r}, n={n!r})")
        return (n,)
    return 0 if shape is None else shape


def zeros(shape=None, dtype=float, device=None, requires_grad=False, pinned=False, *, n=None):
    """Zeros with trailing storage dims: ``zeros(n, dtype=sim.vec3).shape == (n, 3)``.

    *device* defaults to the current device (`sim.get_device()`: "cpu" outside a
    `sim.ScopedDevice`); *requires_grad* and *pinned* are Warp's keywords (see
    `check_warp_keywords`); ``n=length`` is Warp's older spelling of a 1-D *shape*.
    """
    check_warp_keywords(requires_grad, pinned)
    return with_gradient(_allocate("zeros", _shape_argument(shape, n), dtype, device),
                         requires_grad)


def empty(shape=None, dtype=float, device=None, requires_grad=False, pinned=False, *, n=None):
    check_warp_keywords(requires_grad, pinned)
    return with_gradient(_allocate("empty", _shape_argument(shape, n), dtype, device),
                         requires_grad)


def ones(shape=None, dtype=float, device=None, requires_grad=False, pinned=False, *, n=None):
    check_warp_keywords(requires_grad, pinned)
    return with_gradient(_allocate("ones", _shape_argument(shape, n), dtype, device),
                         requires_grad)


def full(shape, value, dtype=None, device=None, requires_grad=False, pinned=False):
    """Every element set to *value* (a scalar, or a value such as ``sim.vec3(1, 2, 3)``).

    Without *dtype*, the element type is *value*'s (`fill_dtype`), as in Warp.
    """
    check_warp_keywords(requires_grad, pinned)
    if dtype is None:
        dtype = fill_dtype(value)
    result = _allocate("empty", shape, dtype, device)
    struct_records = getattr(dtype, "_records", None)  # a struct: its NumPy record
    result[...] = struct_records(value) if struct_records is not None else np.asarray(value)
    return with_gradient(result, requires_grad)


def fill_dtype(value):
    """The element type Warp's ``full`` infers from a fill value: int32 for an int, float32
    for a float, bool, a scalar or value type's own class, a struct's class, and a vector
    (matrix) of the sequence's (nested sequence's) NumPy scalar type for a sequence."""
    kind = type(value)
    if kind in (builtins.int, builtins.float, builtins.bool):
        return element_dtype(kind)
    if isinstance(value, (Value, np.generic)) or hasattr(kind, "numpy_dtype"):
        return kind
    if not hasattr(value, "__len__"):
        raise TypeError(f"value: expected a scalar, a value such as sim.vec3(...), a struct or "
                        f"a sequence, got {value!r}")
    values = np.asarray(value)
    if values.ndim == 1:
        return value_types.vector(values.size, values.dtype.type)
    if values.ndim == 2:
        return value_types.matrix(values.shape, values.dtype.type)
    raise ValueError(f"value: a sequence of 1 or 2 dims (a vector or a matrix), got shape "
                     f"{values.shape}")


def _has_gradient(a):
    """Whether *a*, or an array it views (Warp's views share their array's gradient), has a
    gradient registered beside it."""
    while a is not None:
        if autodiff_hooks.has_gradient(a):
            return True
        a = getattr(a, "base", None)
    return False


def like(factory, a, device, requires_grad, pinned):
    """An array of *a*'s shape and dtype made by *factory* ("zeros", "empty", "ones") on
    *a*'s device (NumPy or CuPy), or on *device*; ``requires_grad=None``: a gradient if *a*
    (or an array it views) has one (Warp's ``*_like``)."""
    if device_of(a) is None:
        raise TypeError(f"a: expected a NumPy or CuPy array, got {type(a).__name__}")
    if requires_grad is None:
        requires_grad = _has_gradient(a)
    check_warp_keywords(requires_grad, pinned)
    if device is not None:
        result = _allocate(factory, a.shape, a.dtype, device)
    else:
        module = cupy_module() if device_of(a) == "cuda" else np
        result = getattr(module, f"{factory}_like")(a)
    return with_gradient(result, requires_grad)


def zeros_like(a, device=None, requires_grad=None, pinned=False):
    """Zeros of *a*'s shape and dtype, on *a*'s device (NumPy or CuPy), or on *device*
    (Warp's keywords, as `zeros`; ``requires_grad=None``: a gradient if *a* has one, as
    Warp's ``zeros_like``)."""
    return like("zeros", a, device, requires_grad, pinned)


def empty_like(a, device=None, requires_grad=None, pinned=False):
    """An uninitialized array like *a* (Warp's ``empty_like``; keywords as `zeros_like`)."""
    return like("empty", a, device, requires_grad, pinned)


def ones_like(a, device=None, requires_grad=None, pinned=False):
    """Ones like *a* (Warp's ``ones_like``; keywords as `zeros_like`)."""
    return like("ones", a, device, requires_grad, pinned)


def full_like(a, value, device=None, requires_grad=None, pinned=False):
    """An array like *a* with every element *value* (Warp's ``full_like``; a scalar, or a
    value of the element's type; keywords as `zeros_like`)."""
    result = like("empty", a, device, requires_grad, pinned)
    result[...] = value if device_of(result) == "cuda" else np.asarray(value)
    return result


def from_numpy(a, dtype=None, shape=None, device=None, requires_grad=False):
    """A copy of *a* (anything NumPy converts) as a C-contiguous array on *device*: Warp's
    ``wp.from_numpy``, which is ``wp.array(a, dtype=, shape=, device=)`` (`host_array`).

    With a value-type *dtype*, *a*'s trailing dims are its storage, or its last dim holds
    the storage flattened, as in Warp (``(3,)`` is one vec3); *shape* reshapes the elements.
    """
    return host_array(a, dtype=dtype, shape=shape, device=device, requires_grad=requires_grad,
                      copy=True)


def to_numpy(a):
    """A NumPy array with *a*'s contents (a copy from the GPU; *a* itself on the CPU)."""
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "get"):
        return a.get()
    if hasattr(a, "copy_to_host"):
        return a.copy_to_host()
    return np.asarray(a)


def view(array, dtype):
    """``view(a, sim.vec3)``: *a* (NumPy, ``(..., 3)`` float32, C-contiguous) as vec3 elements.

    From Python this returns *a* itself after checking it (NumPy has no vec3
    dtype); in compiled code it is a zero-copy ``Array(vec3, ...)`` view
    (typing/arrays.py, lowering/arrays.py).
    """
    check_value_array(array, dtype, "a")
    return array


def shape_dim(a, index):
    """Warp's ``a.shape[index]`` for a constant *index* in a kernel (the kernel language
    rewrites it to this): an array's shape has Warp's 4 entries there, so a dim past the
    array's ndim is 0 (``arr[:3].shape[1] == 0``).  Anything else that has a shape (a
    struct field, a value) is indexed as Python does.  Compiled by typing/arrays.py and
    lowering/arrays.py."""
    shape = a.shape
    if device_of(a) is not None and 0 <= index and index >= len(shape):
        return 0
    return shape[index]


def check_value_array(a, dtype, name):
    """Check that host array *a* can be viewed with element *dtype*; raise naming *name*."""
    scalar, trailing = storage_of(dtype)
    got = f"{type(a).__name__} of dtype {getattr(a, 'dtype', '?')} and shape {getattr(a, 'shape', '?')}"
    if getattr(a, "dtype", None) != scalar:
        raise TypeError(f"{name}: expected a {scalar} array for {dtype_name(dtype)} elements, "
                        f"got {got}")
    if trailing and tuple(a.shape[len(a.shape) - len(trailing):]) != trailing:
        raise ValueError(f"{name}: expected trailing dims {trailing} for {dtype_name(dtype)}, "
                         f"got {got}")
    if isinstance(a, np.ndarray) and not a.flags.c_contiguous:
        raise ValueError(f"{name}: expected a C-contiguous array, got a strided {got}; "
                         f"use np.ascontiguousarray")


# --------------------------------------------------------------------------
# Warp's host spellings: the current device, Warp's allocation keywords, and
# ``sim.array(data, ...)`` / ``sim.array2d`` ... (API.md, "Arrays")

_device_scope = []
"""The devices of the enclosing ``sim.ScopedDevice`` blocks, innermost last."""


def current_device():
    """The device allocations use when none is given: the innermost
    ``sim.ScopedDevice``'s, else "cpu"."""
    return _device_scope[-1] if _device_scope else "cpu"


def check_warp_keywords(requires_grad, pinned):
    """Warp's allocation keywords.  ``pinned`` (page-locked host memory, a transfer
    speed hint) changes nothing for NumPy arrays; ``requires_grad=True`` registers a
    gradient beside the array (`with_gradient`, numba_sim/autodiff/gradients.py)."""
    if not isinstance(pinned, (builtins.bool, np.bool_)):
        raise TypeError(f"pinned: expected a bool, got {pinned!r}")
    if not isinstance(requires_grad, (builtins.bool, np.bool_)):
        raise TypeError(f"requires_grad: expected a bool, got {requires_grad!r}")


def with_gradient(result, requires_grad):
    """*result*, with a zero gradient registered beside it if *requires_grad*."""
    if not requires_grad:
        return result
    return autodiff_hooks.register_gradient(result)  # numba_sim/autodiff/gradients.py


_HOST_KEYWORDS = ("requires_grad", "pinned", "copy")


def _is_host_construction(data, shape, device, host):
    """Whether ``sim.array(...)`` was called as Warp's host constructor, not as an annotation."""
    unknown = set(host) - set(_HOST_KEYWORDS)
    if unknown:
        raise TypeError(f"array: unexpected keyword {sorted(unknown)[0]!r}; expected dtype, ndim "
                        f"(annotation) or data, dtype, shape, device, "
                        f"{', '.join(_HOST_KEYWORDS)} (host array)")
    if data is not None and not isinstance(data, (type, np.dtype)):
        return True
    if shape is not None:  # array(shape=n, dtype=...) or array(sim.vec3, shape=n)
        return True
    if device is not None or host:
        raise TypeError("array: device, requires_grad, pinned and copy need data or a shape "
                        "(sim.array(data, dtype=..., device=...)); the annotation takes only "
                        "dtype and ndim")
    return False


def host_array(data=None, dtype=None, shape=None, device=None, ndim=None, requires_grad=False,
               pinned=False, copy=True):
    """Warp's ``wp.array(data, dtype=..., shape=..., device=...)``, as a NumPy / CuPy array.

    Elements of a value type keep their storage as trailing dims.  *data* is anything
    NumPy converts (lists of values, NumPy or CuPy arrays); its last dimension may hold
    the element's storage flattened, as in Warp (six floats are two vec3), and a 1-D
    *data* of one element's storage is one element.  Without *dtype* the data's own
    dtype is kept.  With *shape* the data is reshaped to it; without data, an
    uninitialized array of *shape* is allocated (Warp's ``wp.array(shape=...)``).
    """
    check_warp_keywords(requires_grad, pinned)
    return with_gradient(_host_array(data, dtype, shape, device, ndim, copy), requires_grad)


def _host_array(data, dtype, shape, device, ndim, copy):
    if data is not None and isinstance(data, (type, np.dtype)):  # array(sim.vec3, shape=n)
        data, dtype = None, data
    if data is None:
        if shape is None:
            raise TypeError("array: expected data or a shape")
        return _allocate("empty", shape, float if dtype is None else dtype, device)
    if dtype is typing.Any:  # Warp's array(data, dtype=Any): the data's own dtype
        dtype = None
    if dtype is None:
        scalar, trailing = None, ()
    else:
        scalar, trailing = storage_of(dtype)
    if hasattr(data, "shape"):  # before any copy: a broadcast view may be huge
        check_array_shape(tuple(data.shape))
    kind, ordinal = parse_device(current_device() if device is None else device)
    if device_of(data) == "cuda" and kind == "cpu":
        data = to_numpy(data)
    if hasattr(dtype, "_records") and device_of(data) is None:  # structs -> their records
        data, copy = dtype._records(data), False
    if kind == "cpu" or device_of(data) != "cuda":
        host = np.array(data, dtype=scalar, copy=builtins.bool(copy) or None)
    else:
        host = data
    if host.ndim == 0:
        raise ValueError(f"data: expected a sequence or an array, got the scalar {data!r}")
    if trailing:
        host = _with_storage_dims(host, trailing, dtype)
    if shape is not None:
        shape = _shape(shape)
        if int(np.prod(shape + trailing)) != host.size:
            raise ValueError(f"shape: {shape} of {dtype_name(dtype) if dtype else host.dtype} "
                             f"elements does not match data of shape "
                             f"{host.shape[:host.ndim - len(trailing)]}")
        host = host.reshape(shape + trailing)
    if ndim is not None and host.ndim - len(trailing) != ndim:
        raise ValueError(f"ndim: expected data with {ndim} dimension(s) of elements, got shape "
                         f"{host.shape[:host.ndim - len(trailing)]}")
    if kind == "cpu":
        return np.ascontiguousarray(host)
    cupy = cupy_module()
    with cupy.cuda.Device(ordinal or 0):
        return cupy.array(host, dtype=scalar, copy=builtins.bool(copy), order="C")


def _with_storage_dims(host, trailing, dtype):
    """*host* with the value type's storage as its trailing dims (Warp's rule)."""
    size = int(np.prod(trailing))
    if host.shape[host.ndim - len(trailing):] == trailing:
        return host if host.ndim > len(trailing) else host.reshape((1,) + trailing)
    if host.shape[-1] == size:
        leading = host.shape[:-1] or (1,)
    elif host.shape[-1] % size == 0:
        leading = host.shape[:-1] + (host.shape[-1] // size,)
    else:
        raise ValueError(f"data: the inner dimension {host.shape[-1]} is not a multiple of "
                         f"{size}, the storage of {dtype_name(dtype)} (shape {host.shape})")
    return host.reshape(leading + trailing)


class fixedarray(array):
    """Warp's ``sim.fixedarray(shape=(2, 3), dtype=int)``: the type of a kernel-local array of
    constant shape, which ``sim.zeros(shape=..., dtype=...)`` makes inside a kernel or a func
    (typing/arrays.py); as an annotation (a func's return type, a parameter), an array of
    its dtype and ndim."""

    def __new__(cls, shape, dtype=float):
        return object.__new__(cls)

    def __init__(self, shape, dtype=float):
        extents = _shape(shape)
        if not 1 <= len(extents) <= MAX_NDIM:
            raise ValueError(f"shape: expected 1 to {MAX_NDIM} extents, got {shape!r}")
        super().__init__(dtype=dtype, ndim=len(extents))
        self.shape = extents

    def __eq__(self, other):
        return isinstance(other, fixedarray) and super().__eq__(other) \
            and self.shape == other.shape

    def __hash__(self):
        return hash((fixedarray, self.dtype, self.shape))

    def __repr__(self):
        return f"fixedarray(shape={self.shape}, dtype={dtype_name(self.dtype)})"


class _FixedNdimArray(array):
    """``sim.array<N>d``: `array` with ``ndim=N`` (Warp's spellings ``array2d(dtype=...)``
    and ``array2d[dtype]``); called with data or a shape, an N-D host array."""

    fixed_ndim = 1

    def __new__(cls, data=None, dtype=None, shape=None, device=None, ndim=None, **host):
        return super().__new__(cls, data, dtype, shape, device, cls._ndim(ndim), **host)

    def __init__(self, data=None, dtype=None, shape=None, device=None, ndim=None, **host):
        super().__init__(data, dtype, shape, device, self._ndim(ndim), **host)

    def __class_getitem__(cls, dtype):
        if isinstance(dtype, tuple):
            raise TypeError(f"{cls.__name__}[...] takes a single type parameter, the dtype "
                            f"(its ndim is {cls.fixed_ndim}), got {dtype!r}")
        return cls(dtype=dtype)

    @classmethod
    def _ndim(cls, ndim):
        if ndim is not None and ndim != cls.fixed_ndim:
            raise ValueError(f"ndim: {cls.__name__} has ndim={cls.fixed_ndim}, got {ndim!r}")
        return cls.fixed_ndim


class array1d(_FixedNdimArray):
    fixed_ndim = 1


class array2d(_FixedNdimArray):
    fixed_ndim = 2


class array3d(_FixedNdimArray):
    fixed_ndim = 3


class array4d(_FixedNdimArray):
    fixed_ndim = 4
