"""Host side of arrays: the ``sim.array`` annotation, element dtypes, devices and
the allocation helpers (``sim.zeros`` ...).

numba_sim has no array container of its own: NumPy arrays on the CPU and CuPy
(or any ``__cuda_array_interface__`` / DLPack) arrays on CUDA, whose trailing
dimensions are the value type's storage: vec3 -> ``(..., 3)`` float32,
mat33 -> ``(..., 3, 3)``, a struct -> its NumPy structured dtype.
"""

import builtins

import numpy as np

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


class array:
    """Kernel parameter annotation: ``sim.array(dtype=sim.vec3, ndim=1)``.

    Also Warp's spelling ``sim.array[sim.vec3]``.  The argument is a
    C-contiguous NumPy (cpu) or CUDA array whose trailing dims are the
    element's storage; inside the kernel ``a[i]`` is the element type.
    """

    def __init__(self, dtype=float, ndim=1):
        if not isinstance(ndim, int) or not 1 <= ndim <= MAX_NDIM:
            raise ValueError(f"ndim: expected an int from 1 to {MAX_NDIM}, got {ndim!r}")
        self.dtype = element_dtype(dtype)
        self.ndim = ndim

    def __class_getitem__(cls, dtype):
        return cls(dtype=dtype)

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
        return f"array(dtype={dtype_name(self.dtype)}, ndim={self.ndim})"


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
    kind, ordinal = parse_device(device)
    if kind == "cpu":
        return np, None
    return cupy_module(), ordinal


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _allocate(factory, shape, dtype, device, *extra):
    scalar, trailing = storage_of(dtype)
    module, ordinal = _array_module(device)
    full_shape = _shape(shape) + trailing
    if ordinal is None:
        return getattr(module, factory)(full_shape, *extra, dtype=scalar)
    with module.cuda.Device(ordinal):
        return getattr(module, factory)(full_shape, *extra, dtype=scalar)


def zeros(shape, dtype=float, device="cpu"):
    """Zeros with trailing storage dims: ``zeros(n, dtype=sim.vec3).shape == (n, 3)``."""
    return _allocate("zeros", shape, dtype, device)


def empty(shape, dtype=float, device="cpu"):
    return _allocate("empty", shape, dtype, device)


def ones(shape, dtype=float, device="cpu"):
    return _allocate("ones", shape, dtype, device)


def full(shape, value, dtype=float, device="cpu"):
    """Every element set to *value* (a scalar, or a value such as ``sim.vec3(1, 2, 3)``)."""
    result = _allocate("empty", shape, dtype, device)
    result[...] = np.asarray(value)
    return result


def zeros_like(a):
    """Zeros of *a*'s shape and dtype, on *a*'s device (NumPy or CuPy)."""
    if device_of(a) == "cuda":
        return cupy_module().zeros_like(a)
    return np.zeros_like(a)


def from_numpy(a, dtype=None, device="cpu"):
    """A copy of *a* (anything NumPy converts) as a C-contiguous array on *device*.

    With a value-type *dtype*, *a*'s trailing dims must match its storage.
    """
    scalar, trailing = storage_of(dtype) if dtype is not None else (None, ())
    host = np.ascontiguousarray(np.asarray(a, dtype=scalar))
    if trailing and host.shape[host.ndim - len(trailing):] != trailing:
        raise ValueError(f"a: expected trailing dims {trailing} for {dtype_name(dtype)}, got "
                         f"shape {host.shape}")
    module, ordinal = _array_module(device)
    if module is np:
        return host.copy() if host is a else host
    with module.cuda.Device(ordinal or 0):
        return module.asarray(host)


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
