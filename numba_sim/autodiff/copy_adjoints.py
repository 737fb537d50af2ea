"""The adjoint of ``sim.copy`` / ``sim.clone`` on a tape (numba_sim/array_copy.py).

The backward of a copy adds the destination window's gradient into the source window's and
zeroes the destination window's (Warp's accumulate-and-consume rule).  Gradients are found
by the array object (numba_sim/autodiff/gradients.py); a view without one of its own (a
column ``base[:, 2]``) uses the matching view of the gradient of the array it views.  Where
the copy cannot be followed element for element — overlapping source and destination, or
a copy that reinterprets the data (another dtype, non-float elements) — the backward copies
the destination gradient's bytes into the source's, as Warp's fallback, with Warp's warning.
"""

import warnings

import numpy as np

from numba_sim import arrays, autodiff_hooks
from numba_sim.autodiff.gradients import grad_or_none


def _address(a):
    interface = getattr(a, "__array_interface__", None) or a.__cuda_array_interface__
    return interface["data"][0]


def owner_gradient(a):
    """(the array whose registered gradient covers *a*, that gradient): *a* itself, or the
    nearest array *a* views (``a.base``, its base ...) whose gradient is laid out as it is;
    (None, None) where there is none."""
    owner = a
    while owner is not None:
        gradient = grad_or_none(owner)
        if gradient is not None and (owner is a or (gradient.strides == owner.strides
                                                    and gradient.dtype == owner.dtype)):
            return owner, gradient
        owner = getattr(owner, "base", None)
    return None, None


def corresponding(view, owner, gradient):
    """The view of *gradient* (the gradient of *owner*) that *view* is of *owner*."""
    if view is owner:
        return gradient
    offset = _address(view) - _address(owner)
    if arrays.device_of(view) == "cuda":
        cupy = arrays.cupy_module()
        return cupy.ndarray(view.shape, view.dtype, gradient.data + offset, view.strides)
    root = gradient if gradient.base is None else gradient.base
    offset += _address(gradient) - _address(root)
    return np.ndarray(view.shape, view.dtype, buffer=root, offset=offset, strides=view.strides)


def _overlap(a, b):
    module = arrays.cupy_module() if arrays.device_of(a) == "cuda" else np
    return arrays.device_of(a) == arrays.device_of(b) and module.shares_memory(a, b)


def record_copy(tape, dest, src, dest_window, src_window):
    """Put the adjoint of a copy of *src_window* (a view of *src*) into *dest_window* (of
    *dest*) on *tape*."""
    (dest_owner, dest_gradient), (src_owner, src_gradient) = owner_gradient(dest), \
        owner_gradient(src)
    if dest_gradient is None or src_gradient is None:
        return  # nothing flows: the destination has no gradient, or the source none to take it
    g_dest = corresponding(dest_window, dest_owner, dest_gradient)
    g_src = corresponding(src_window, src_owner, src_gradient)
    float_copy = src.dtype == dest.dtype and np.dtype(src.dtype).kind == "f"
    overlapping = _overlap(dest_window, src_window)

    def backward():
        values = g_dest if arrays.device_of(g_dest) == arrays.device_of(g_src) else (
            arrays.to_numpy(g_dest) if arrays.device_of(g_src) == "cpu"
            else arrays.cupy_module().asarray(g_dest))
        if float_copy and not overlapping:
            g_src[...] += values
            g_dest[...] = 0
            return
        what = "an overlapping copy" if overlapping else \
            "a copy between unsupported gradient dtypes"
        warnings.warn(f"the adjoint of {what} cannot yet be fully tracked; the destination "
                      f"gradient's bytes are copied into the source's", UserWarning,
                      stacklevel=4)
        g_src[...] = values.copy().view(g_src.dtype).reshape(g_src.shape)

    tape.record_func(backward, [dest_owner, src_owner])


autodiff_hooks.record_copy = record_copy
