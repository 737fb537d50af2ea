"""Kernel parameters: what each annotation accepts at launch, and how it is passed.

An annotation decides the checks (dtype, dims, contiguity, device) and the
conversion (scalars to their Warp type, value-type arrays viewed in the
launcher); unannotated parameters pass through and Numba types them from the
argument, as Numba does.
"""

import builtins
import inspect

import numpy as np

from numba_sim import arrays
from numba_sim.types import Value


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
        if self.array is not None:
            if isinstance(self.array.dtype, type):
                self.view_dtype = self.array.dtype
            self._storage_dtype, self._host_ndim = self.array.storage
            self._trailing = arrays.storage_of(self.array.dtype)[1]

    def describe(self):
        return repr(self.array) if self.array is not None else getattr(
            self.annotation, "__name__", repr(self.annotation))

    def _fail(self, kernel, expected, value, error=TypeError):
        device = arrays.device_of(value)
        if device is not None:
            got = (f"{type(value).__module__}.{type(value).__name__} of dtype {value.dtype}, "
                   f"shape {tuple(value.shape)} on {device}")
        else:
            got = f"{type(value).__name__} {value!r}"[:200]
        raise error(f"{kernel.__qualname__}: parameter {self.name!r}: expected {expected}, "
                    f"got {got}")

    def bind(self, kernel, value):
        """(the value passed to the launcher, its device or None)."""
        if self.array is not None:
            if not isinstance(value, np.ndarray) and not hasattr(value, "__cuda_array_interface__"):
                from numba_sim.cuda_runtime import as_cuda_array, is_dlpack_cuda

                if is_dlpack_cuda(value):  # e.g. a torch tensor: imported zero-copy
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
            try:
                return self.value_class(*np.asarray(value).reshape(-1).tolist()), None
            except (TypeError, ValueError):
                self._fail(kernel, f"a {self.value_class.__name__} (or its components)", value)
        return value, _device_of_argument(value)

    def _check_array(self, kernel, value):
        if type(value) is np.ndarray and value.dtype == self._storage_dtype \
                and value.ndim == self._host_ndim \
                and (not self._trailing or value.shape[self.array.ndim:] == self._trailing) \
                and (self.view_dtype is None or value.flags.c_contiguous):
            return "cpu"  # the fast path of every well-formed NumPy launch
        return self._check_array_slow(kernel, value)

    def _check_array_slow(self, kernel, value):
        device = arrays.device_of(value)
        scalar, host_ndim = self._storage_dtype, self._host_ndim
        expected = (f"{self.array!r}: a {scalar} array with {host_ndim} dims"
                    + (f" ending in {arrays.storage_of(self.array.dtype)[1]}"
                       if host_ndim > self.array.ndim else ""))
        if device is None:
            self._fail(kernel, expected, value)
        if value.dtype != scalar:
            self._fail(kernel, expected, value)
        if value.ndim != host_ndim:
            self._fail(kernel, expected, value, ValueError)
        trailing = self._trailing
        if trailing and tuple(value.shape[self.array.ndim:]) != trailing:
            self._fail(kernel, expected, value, ValueError)
        if self.view_dtype is not None and not _c_contiguous(value):
            self._fail(kernel, expected + " (C-contiguous)", value, ValueError)
        return device


def _device_of_argument(value):
    """The device kind of an array or a spatial structure (``.id`` and ``.device``), or None."""
    device = arrays.device_of(value)
    if device is None and hasattr(value, "id") and isinstance(getattr(value, "device", None), str):
        return arrays.parse_device(value.device)[0]
    return device


def _c_contiguous(value):
    flags = getattr(value, "flags", None)
    if flags is not None:
        return bool(flags["C_CONTIGUOUS"] if not hasattr(flags, "c_contiguous") else flags.c_contiguous)
    interface = value.__cuda_array_interface__
    return interface.get("strides") is None or _strides_are_c(interface)


def _strides_are_c(interface):
    itemsize = np.dtype(interface["typestr"]).itemsize
    expected = itemsize
    for extent, stride in zip(reversed(interface["shape"]), reversed(interface["strides"])):
        if extent > 1 and stride != expected:
            return False
        expected *= extent
    return True
