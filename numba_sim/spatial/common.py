"""Host-side helpers shared by the spatial structures (Bvh, Mesh).

* :class:`HostFunctions` - entry points of the host library called from
  Python through ctypes (which releases the GIL during a call);
* :class:`CpuRegistry` and :func:`cpu_structure` - finding a live CPU
  structure from the object or its ``id``, for queries run as Python;
* :func:`box_arrays` and friends - argument checks whose messages name the
  call and the argument;
* :func:`device_of` - the device of an array: ``"cpu"`` or ``"cuda:N"``.
"""

import ctypes
import operator
import threading
import weakref

import numpy as np

from numba_sim import arrays, native

POINTER, INT, FLOAT = ctypes.c_void_p, ctypes.c_int, ctypes.c_float

#: Index and count limit: trees have 2n - 1 int32-indexed nodes.
MAX_ITEMS = 2**30


class HostFunctions:
    """Entry points of the host library, from ``{name: (argument types, result type)}``."""

    def __init__(self, signatures):
        self._signatures = signatures
        self._functions = {}
        self._lock = threading.Lock()

    def __getitem__(self, name):
        function = self._functions.get(name)
        if function is None:
            with self._lock:
                function = getattr(ctypes.CDLL(native.host_library_path()), name)
                function.argtypes, function.restype = self._signatures[name]
                self._functions[name] = function
        return function


def aligned_zeros(shape, dtype, alignment=64):
    """A zeroed NumPy array whose data starts at a multiple of ``alignment`` bytes."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.zeros(size + alignment, dtype=np.uint8)
    offset = -raw.ctypes.data % alignment
    return raw[offset:offset + size].view(dtype).reshape(shape)


def address(array):
    """The data address of a NumPy array (0 for None)."""
    return 0 if array is None else array.ctypes.data


class CpuRegistry:
    """The live CPU structures of one class, by ``id`` (weakly held)."""

    def __init__(self):
        self._objects = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def add(self, structure):
        with self._lock:
            self._objects[structure.id] = structure

    def get(self, structure_id):
        with self._lock:
            return self._objects.get(structure_id)


class SpatialStructure:
    """What Bvh and Mesh share: ``id``, how compiled code receives them, ``refit``.

    Subclasses set ``numba_type`` and keep their descriptor and buffers in
    ``self._storage`` (whose ``id`` is the descriptor's address, and which
    checks inputs and refits), the device in ``self.device`` and a lock in
    ``self._lock``.
    """

    numba_type = None

    @property
    def id(self):
        """Address of the structure's descriptor on its device (Warp's ``id``)."""
        return self._storage.id

    @property
    def _cpu_id(self):
        """``id`` for CPU code (Numba's unboxing); refuses a CUDA structure."""
        if self.device != "cpu":
            name = type(self).__name__
            raise ValueError(f"a {name} on {self.device} was passed to CPU code; build the "
                             f"{name} from NumPy arrays, or call a CUDA kernel")
        return self._storage.id

    @property
    def _numba_type_(self):
        return self.numba_type

    def refit(self):
        """Update the structure after its inputs moved in place (a Bvh's ``lowers`` and
        ``uppers``, a Mesh's ``points``); the topology stays.

        A CPU refit checks the inputs first (finite, ...) and leaves the
        structure untouched when they are bad; a CUDA refit does not check (it
        would have to wait for the GPU), as in Warp.
        """
        with self._lock:
            if self.device == "cpu":
                self._storage.check_inputs(f"{type(self).__name__}.refit")
            self._storage.refit()


def cpu_structure(value, cls, registry, function):
    """The live CPU ``cls`` that ``value`` (the object or its ``id``) designates.

    For builtins run as Python (``function`` names the builtin in messages).
    """
    name = cls.__name__
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        found = registry.get(int(value))
        if found is None:
            raise ValueError(
                f"{function}(): {int(value):#x} is not the id of a live CPU {name} (called from "
                f"Python, {function} takes CPU structures; query CUDA ones in CUDA kernels)"
            )
        return found
    if not isinstance(value, cls):
        raise TypeError(f"{function}(): expected a sim.{name} or its id (an int), "
                        f"not {type(value).__name__}")
    if value.device != "cpu":
        raise ValueError(f"{function}(): the {name} is on {value.device}; called from Python "
                         f"{function} takes CPU structures (query CUDA ones in CUDA kernels)")
    return value


def vec3_argument(value, function, what):
    """``value`` as 3 float32 (for builtins run as Python)."""
    try:
        vector = np.array(value, dtype=np.float32).reshape(3)
    except (TypeError, ValueError):
        raise TypeError(f"{function}(): {what} must be a vec3 (3 numbers), "
                        f"not {type(value).__name__}") from None
    return np.ascontiguousarray(vector)


# --------------------------------------------------------------------------
# Argument checks


def device_of(array, where, name):
    """``"cpu"`` for a NumPy array, ``"cuda:N"`` for a CUDA array; else a TypeError."""
    if isinstance(array, np.ndarray):
        return "cpu"
    if not hasattr(array, "__cuda_array_interface__"):
        raise TypeError(f"{where}({name}=...): expected a NumPy array (CPU) or a CUDA array "
                        f"(CuPy, or anything with __cuda_array_interface__), "
                        f"not {type(array).__name__}")
    from numba import cuda

    if not cuda.is_available():
        raise RuntimeError(f"{where}({name}=...): a CUDA array was given but no CUDA GPU is "
                           "available")
    return f"cuda:{cuda.get_current_device().id}"  # arrays of the current device


def _shape_and_dtype(array):
    if isinstance(array, np.ndarray):
        return array.shape, array.dtype
    interface = array.__cuda_array_interface__
    return tuple(interface["shape"]), np.dtype(interface["typestr"])


def vec3_array(where, name, array, device=None):
    """Check that ``array`` is a C-contiguous (n, 3) float32 array (on ``device``); returns n.

    The arrays are used in place (a later refit reads them again), so they are
    never copied: anything else is an error naming ``where`` and ``name``.
    """
    found = device_of(array, where, name)
    if device is not None and found != device:
        raise ValueError(f"{where}({name}=...): expected an array on {device} (where the other "
                         f"arrays are), not on {found}")
    shape, dtype = _shape_and_dtype(array)
    if dtype != np.float32:
        raise TypeError(f"{where}({name}=...): {name} must be float32 (an (n, 3) array of vec3), "
                        f"not {dtype}")
    if len(shape) != 2 or shape[1] != 3:
        raise ValueError(f"{where}({name}=...): {name} must have shape (n, 3), not {tuple(shape)}")
    if not arrays.c_contiguous(array):
        raise ValueError(f"{where}({name}=...): {name} must be C-contiguous (it is used in place: "
                         "refit reads it again); pass np.ascontiguousarray(...)")
    if shape[0] > MAX_ITEMS:
        raise ValueError(f"{where}({name}=...): more than {MAX_ITEMS} rows")
    return int(shape[0]), found


def check_finite_rows(where, name, values):
    """ValueError naming the first row of the (n, 3) NumPy array ``values`` with NaN or inf."""
    bad = ~np.isfinite(values).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"{where}({name}=...): {name}[{row}] = {values[row].tolist()} is not "
                         "finite (NaN or infinite bounds are not allowed)")


def positive_int(where, name, value):
    """``value`` as an int >= 1; TypeError / ValueError naming the argument."""
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{where}({name}=...) must be an int, not {type(value).__name__}") from None
    if value < 1:
        raise ValueError(f"{where}({name}={value}) must be at least 1")
    return value

