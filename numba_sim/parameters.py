"""Kernel parameters: what each annotation accepts at launch, and how it is passed.

An annotation decides the checks (dtype, dims, contiguity, device) and the
conversion (scalars to their Warp type, value-type arrays viewed in the
launcher); unannotated parameters pass through and Numba types them from the
argument, as Numba does.
"""

import builtins
import inspect
import typing

import numpy as np

from numba_sim import arrays
from numba_sim.cuda_runtime import as_cuda_array
from numba_sim.types import Value, is_generic_annotation, type_repr


class ArgumentTypeError(TypeError, RuntimeError):
    """A launch argument of the wrong kind or dtype: a TypeError, and a RuntimeError as
    Warp's launch raises for it (so code that catches Warp's error ports)."""


class ArgumentValueError(ValueError, RuntimeError):
    """A launch argument of the right kind but the wrong dims, shape or layout: a ValueError,
    and a RuntimeError as Warp's launch raises for it."""


_LAUNCH_ERRORS = {TypeError: ArgumentTypeError, ValueError: ArgumentValueError}


class Parameter:
    """One kernel parameter: its name and normalized annotation."""

    def __init__(self, name, annotation):
        self.name = name
        self.annotation = None if annotation is inspect.Parameter.empty else annotation
        self.array = annotation if isinstance(annotation, arrays.array) else None
        self.scalar = None
        self.value_class = None
        if self.array is None and self.annotation is not None:
            if isinstance(annotation, type) and issubclass(annotation, Value):
                self.value_class = annotation
            elif annotation in (builtins.float, builtins.int, builtins.bool) or (
                    isinstance(annotation, type) and issubclass(annotation, np.generic)):
                self.scalar = arrays.element_dtype(annotation).type
        self.view_dtype = None
        """The element class a launcher views this array as (None: no view needed)."""
        self.generic = self.annotation is not None and is_generic_annotation(self.annotation) \
            or (self.array is not None and self.array.generic)
        """Typed from the argument at launch (``typing.Any``, ``sim.Float``, ``vector(3,
        sim.Int)``, ``sim.array(dtype=Any)``)."""
        if self.array is not None and not self.array.generic:
            if isinstance(self.array.dtype, type):
                self.view_dtype = self.array.dtype
            self._storage_dtype, self._host_ndim = self.array.storage
            self._trailing = arrays.storage_of(self.array.dtype)[1]

    def describe(self):
        return repr(self.array) if self.array is not None else getattr(
            self.annotation, "__name__", repr(self.annotation))

    def _dtype_spelling(self):
        dtype = self.array.dtype
        return f"sim.{dtype.__name__}" if isinstance(dtype, type) and \
            dtype.__module__.startswith("numba_sim") else f"np.{np.dtype(self._storage_dtype)}"

    def _warp_sentence(self, value):
        """Warp's words for a value that is no array, for ported code that matches them:
        ``expects an array of type array(ndim=1, dtype=float32), but passed value has type
        list``."""
        dtype = self.array.dtype  # a NumPy dtype, a value class or a struct
        dtype = type_repr(dtype.type if isinstance(dtype, np.dtype) else dtype)
        return (f"Warp: argument {self.name!r} expects an array of type array(ndim="
                f"{self.array.ndim}, dtype={dtype}), but passed value has type "
                f"{type(value).__name__}")

    def _fail(self, kernel, expected, value, error=TypeError, fix=""):
        device = arrays.device_of(value)
        if device is not None:
            got = (f"{type(value).__module__}.{type(value).__name__} of dtype {value.dtype}, "
                   f"shape {tuple(value.shape)} on {device}")
        else:
            got = f"{type(value).__name__} {value!r}"[:200]
        error = _LAUNCH_ERRORS.get(error, error)
        raise error(f"{kernel.__qualname__}: parameter {self.name!r}: expected {expected}, "
                    f"got {got}{fix}")

    def bind(self, kernel, value):
        """(the value passed to the launcher, its device or None)."""
        if value is None and self.array is not None:
            return self._null_array(kernel), None
        if self.generic and self.array is not None:
            return self._bind_generic_array(kernel, value)
        if self.array is not None:
            device = arrays.NUMPY_LIKE_ARRAYS.get(type(value))
            if device is not None and self._well_formed(value):
                return value, device  # the fast path of every well-formed NumPy or CuPy launch
            if not isinstance(value, np.ndarray) and not isinstance(getattr(value, "dtype", None),
                                                                    np.dtype):
                # a torch tensor, or another producer whose dtype is not NumPy's: imported
                # zero-copy through its CUDA array interface or DLPack
                if hasattr(value, "__cuda_array_interface__") or arrays.is_dlpack_cuda(value):
                    value = as_cuda_array(value)
            return value, self._check_array(kernel, value)
        if self.scalar is not None:
            if isinstance(value, (builtins.bool, np.bool_)) and self.scalar is not np.bool_:
                self._fail(kernel, f"a {np.dtype(self.scalar)} scalar", value)
            try:
                return self.scalar(value), None
            except (TypeError, ValueError):
                self._fail(kernel, f"a {np.dtype(self.scalar)} scalar", value)
        if self.value_class is not None:
            if type(value) is self.value_class:
                return value, None
            warp_name = self.value_class.spec.warp_name
            if value is None:  # Warp's words
                self._fail(kernel, f"a {self.value_class.__name__} (or its components)", value,
                           ValueError, f": Failed to convert argument for param {self.name} to "
                                       f"{warp_name}")
            if np.ndim(value) == 0 and not isinstance(value, Value):  # no fill: Warp's rule
                self._fail(kernel, f"a {self.value_class.__name__} (or its components)", value,
                           fix=f": argument {self.name!r} expects {warp_name} but got a single "
                               f"value")
            try:
                return self.value_class(*np.asarray(value).reshape(-1).tolist()), None
            except (TypeError, ValueError):
                self._fail(kernel, f"a {self.value_class.__name__} (or its components)", value)
        if value is None and _is_struct_class(self.annotation):
            self._fail(kernel, f"a {self.annotation.__name__}", value,
                       fix=f": argument {self.name!r} expects {self.annotation.__name__} but "
                           f"got None")
        return value, _device_of_argument(value)

    def _bind_generic_array(self, kernel, value):
        """An array of any scalar dtype with the annotation's ndim, passed as it is."""
        if not isinstance(value, np.ndarray) and not isinstance(getattr(value, "dtype", None),
                                                                np.dtype):
            if hasattr(value, "__cuda_array_interface__") or arrays.is_dlpack_cuda(value):
                value = as_cuda_array(value)
        device = arrays.device_of(value)
        if device is None or value.ndim != self.array.ndim:
            self._fail(kernel, f"{self.array!r}: an array with {self.array.ndim} dims (a generic "
                               "array's elements are its scalars; sim.overload the kernel for "
                               "value-type elements)", value,
                       TypeError if device is None else ValueError)
        return value, device

    def _null_array(self, kernel):
        """What ``None`` for an array parameter passes (Warp allows it: the array is then
        null and unused): an empty NumPy array of the annotated dtype and ndim, so the kernel
        keeps the signature of its other launches and ``a.shape`` is zeros.  It names no
        device (the launch takes the device of the other arguments)."""
        if self.generic:
            self._fail(kernel, f"{self.array!r}: an array (None needs an array annotation with "
                               f"a dtype, which a generic array has not)", None)
        null = getattr(self, "_null", None)
        if null is None:
            shape = (0,) * self.array.ndim + tuple(self._trailing)
            null = self._null = np.empty(shape, self._storage_dtype)
        return null

    def _well_formed(self, value):
        """The checks of a NumPy-like array (dtype, ndim, shape and flags attributes)."""
        return value.dtype == self._storage_dtype and value.ndim == self._host_ndim \
            and (not self._trailing or value.shape[self.array.ndim:] == self._trailing) \
            and (self.view_dtype is None or value.flags.c_contiguous)

    def _check_array(self, kernel, value):
        device = arrays.device_of(value)
        scalar, host_ndim = self._storage_dtype, self._host_ndim

        def fail(error=TypeError, also="", fix=""):
            expected = (f"{self.array!r}: a {scalar} array with {host_ndim} dims"
                        + (f" ending in {arrays.storage_of(self.array.dtype)[1]}"
                           if host_ndim > self.array.ndim else "") + also)
            self._fail(kernel, expected, value, error, fix)

        if device is None:
            fail(fix=f" ({self._warp_sentence(value)}); make one with sim.from_numpy(..., "
                 f"dtype={self._dtype_spelling()})" if not hasattr(value, "dtype") else "")
        if value.dtype != scalar:
            fail(fix=f"; convert it with .astype(np.{scalar})")
        if value.ndim != host_ndim:
            fail(ValueError)
        trailing = self._trailing
        if trailing and tuple(value.shape[self.array.ndim:]) != trailing:
            fail(ValueError)
        if self.view_dtype is not None and not arrays.c_contiguous(value):
            fail(ValueError, " (C-contiguous)")
        return device


def _is_struct_class(annotation):
    """A @sim.struct class."""
    from numba_sim.structs import Struct  # import cycle: structs.py imports this module

    return isinstance(annotation, type) and issubclass(annotation, Struct)


def _device_of_argument(value):
    """The device kind of an array or a spatial structure (``.id`` and ``.device``), or None."""
    device = arrays.device_of(value)
    if device is None and hasattr(value, "id") and isinstance(getattr(value, "device", None), str):
        return arrays.parse_device(value.device)[0]
    return device
