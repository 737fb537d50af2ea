"""``sim.copy``: Warp's ``wp.copy`` of NumPy / CuPy arrays, and its adjoint on a tape.

``copy(dest, src, dest_offset=0, src_offset=0, count=0)`` copies *count* elements (0: all
of *src*) of *src* from *src_offset* into *dest* at *dest_offset*, with Warp's argument
checks and messages (RuntimeError).  Without offsets and count, both contiguous, it is
Warp's flat copy of *src*'s data into the start of *dest*'s.  With them, an element is a row
of the leading dimension (a value-type array's trailing storage dims are one element), as
for Warp's 1-D arrays; a non-contiguous array then has to be 1-D, as in Warp.  Inside a CPU
``sim.capture`` the copy is recorded and replayed with the launches.

Under a recording ``sim.Tape`` the copy is differentiated as Warp's: the backward adds the
copied window of the destination's gradient into the source's, then zeroes that window of
the destination's gradient (the copy was the last write there).  A view's gradient is the
matching view of the gradient registered beside the array it views.  A copy whose source and
destination overlap, or that reinterprets the data (other dtypes, non-float elements),
cannot be tracked that way: its backward copies the gradient's bytes back (Warp's
fallback), with a warning.
"""

import operator

import numpy as np

from numba_sim import arrays, autodiff_hooks, launch_capture


def _module_of(a):
    return arrays.cupy_module() if arrays.device_of(a) == "cuda" else np


def _on_device_of(dest, src):
    if _module_of(dest) is _module_of(src):
        return src
    return arrays.to_numpy(src) if _module_of(dest) is np else arrays.cupy_module().asarray(src)


def _contiguous(a):
    return bool(a.flags.c_contiguous)


def _windows(dest, src, dest_offset, src_offset, count):
    """(destination window, source window) of the copy, checked as Warp checks them."""
    contiguous = _contiguous(src) and _contiguous(dest)
    if count == 0 and dest_offset == 0 and src_offset == 0 and (contiguous
                                                               or src.size == dest.size):
        if not contiguous:
            if src.shape != dest.shape:
                raise RuntimeError(f"Incompatible array shapes: destination shape={dest.shape}, "
                                   f"source shape={src.shape}")
            return dest, src
        if src.size > dest.size:
            raise RuntimeError(f"Trying to copy source buffer with size ({src.nbytes}) from "
                               f"offset (0) is larger than destination size ({dest.nbytes})")
        return dest.reshape(-1)[:src.size], src.reshape(-1)
    count = count or src.shape[0]
    if not contiguous and (src.ndim != 1 or dest.ndim != 1):
        raise RuntimeError("dest_offset, src_offset, and count are only supported for 1-D "
                           "non-contiguous arrays")
    if src_offset + count > src.shape[0]:
        raise RuntimeError(f"Trying to copy a range of {count} element(s) from source offset "
                           f"({src_offset}) exceeds the source size ({src.shape[0]})")
    if dest_offset + count > dest.shape[0]:
        raise RuntimeError(f"Trying to copy a range of {count} element(s) to destination offset "
                           f"({dest_offset}) exceeds the destination size ({dest.shape[0]})")
    target, part = dest[dest_offset:dest_offset + count], src[src_offset:src_offset + count]
    if target.shape != part.shape:
        raise RuntimeError(f"Incompatible array shapes: destination shape={target.shape}, "
                           f"source shape={part.shape}")
    return target, part


def copy(dest, src, dest_offset=0, src_offset=0, count=0, stream=None):
    """Warp's ``wp.copy``: see the module's docstring."""
    if arrays.device_of(src) is None or arrays.device_of(dest) is None:
        raise RuntimeError("Copy source and destination must be arrays")
    try:
        src_offset, dest_offset, count = (operator.index(v)
                                          for v in (src_offset, dest_offset, count))
    except TypeError as error:
        raise RuntimeError("Copy src_offset, dest_offset, and count must be integers") from error
    if src_offset < 0:
        raise RuntimeError(f"Source offset must be non-negative, got {src_offset}")
    if dest_offset < 0:
        raise RuntimeError(f"Destination offset must be non-negative, got {dest_offset}")
    if count < 0:
        raise RuntimeError(f"Copy count must be non-negative, got {count}")
    if src.dtype.itemsize != dest.dtype.itemsize:
        raise RuntimeError(f"Incompatible array data types: destination dtype={dest.dtype}, "
                           f"source dtype={src.dtype}")
    target, part = _windows(dest, src, dest_offset, src_offset, count)
    if autodiff_hooks.tapes and autodiff_hooks.record_copy is not None:
        autodiff_hooks.record_copy(autodiff_hooks.tapes[-1], dest, src, target, part)
    values = _on_device_of(dest, part)
    launch_capture.host_operation(lambda: target.__setitem__(Ellipsis, values.view(dest.dtype)
                                                             if values.dtype != dest.dtype
                                                             else values))


def clone(a, device=None, requires_grad=None, pinned=False):
    """A copy of *a*, on its device or on *device* (Warp's ``clone``; ``requires_grad=None``:
    a gradient if *a* has one; under a tape its gradient flows back into *a*'s)."""
    result = arrays.like("empty", a, device, requires_grad, pinned)
    copy(result, a)  # differentiated on a tape, as Warp's clone
    return result


__all__ = ["clone", "copy"]
