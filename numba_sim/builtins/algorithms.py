"""Warp's "Algorithms" builtins: ``lower_bound``.

``lower_bound(arr, value)`` searches the sorted 1-D scalar array *arr* for the
first element greater than or equal to *value* and returns its index (int32);
``lower_bound(arr, arr_begin, arr_end, value)`` searches ``[arr_begin, arr_end)``.
As in Warp, the search never returns past the range's last index: a *value*
greater than every element gives ``arr_end - 1`` (and an empty range gives
``arr_begin``).  *value* is converted to the array's scalar type, as Warp's
``Scalar`` parameter is.  One Python function is the implementation in Python
mode and, compiled for the target, the lowering on the CPU and on CUDA.
"""

import numpy as np
from numba.core import cgutils, types
from numba.core.typing import signature

from numba_sim.builtins.forms import intrinsic_builtin
from numba_sim.lowering.intrinsics import compiled
from numba_sim.operations import fail

__all__ = ["lower_bound"]

_USAGE = "lower_bound(arr, value) or lower_bound(arr, arr_begin, arr_end, value)"


def _search(arr, lower, end, value):
    """Warp's binary search (native/array.h): the first index in [lower, end - 1] whose
    element is not less than *value*, or end - 1."""
    upper = end - 1
    while lower < upper:
        mid = lower + (upper - lower) // 2
        if arr[mid] < value:
            lower = mid + 1
        else:
            upper = mid
    return lower


def _typer(*args):
    if len(args) not in (2, 4):
        fail("lower_bound", args, f"expected {_USAGE}")
    arr, value = args[0], args[-1]
    if not isinstance(arr, types.Array) or arr.ndim != 1 \
            or not isinstance(arr.dtype, (types.Integer, types.Float)):
        fail("lower_bound", args, f"expected {_USAGE} with arr a 1-D array of scalars, got {arr} "
                                  f"for arr")
    if not isinstance(value, (types.Integer, types.Float)) or isinstance(value, types.Boolean):
        fail("lower_bound", args, f"expected {_USAGE}, got {value} for value (a scalar)")
    if isinstance(arr.dtype, types.Integer) and isinstance(value, types.Float):
        fail("lower_bound", args, f"a {value} value for an array of {arr.dtype}; convert it "
                                  f"with {arr.dtype}(...)")
    bounds = args[1:-1]
    for name, bound in zip(("arr_begin", "arr_end"), bounds):
        if not isinstance(bound, types.Integer):
            fail("lower_bound", args, f"expected {_USAGE}, got {bound} for {name} (an int)")
    return signature(types.int32, arr, *([types.int32] * len(bounds)), arr.dtype)


def _python(*args):
    if len(args) not in (2, 4):
        raise TypeError(f"lower_bound: expected {_USAGE}, got {len(args)} arguments")
    arr, value = args[0], args[-1]
    if not isinstance(arr, np.ndarray) or arr.ndim != 1 or arr.dtype.kind not in "iuf":
        raise TypeError(f"lower_bound: arr: expected a 1-D NumPy array of scalars, got "
                        f"{type(arr).__name__} {getattr(arr, 'dtype', '')}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"lower_bound: value: expected a scalar, got {type(value).__name__}")
    if arr.dtype.kind in "iu" and not isinstance(value, (int, np.integer)):
        raise TypeError(f"lower_bound: a float value for an integer array of {arr.dtype}")
    value = arr.dtype.type(value)
    if len(args) == 2:
        return np.int32(_search(arr, 0, len(arr), value))
    begin, end = (int(bound) for bound in args[1:3])
    return np.int32(_search(arr, begin, end, value))


_lower_range = compiled(_search)


def _lower(context, builder, sig, args):
    """The range form; the two-argument form searches [0, len(arr))."""
    if len(args) == 2:
        arr_type, value_type = sig.args
        length = cgutils.create_struct_proxy(arr_type)(context, builder, value=args[0]).shape
        length = context.cast(builder, builder.extract_value(length, 0), types.intp, types.int32)
        sig = signature(sig.return_type, arr_type, types.int32, types.int32, value_type)
        args = [args[0], context.get_constant(types.int32, 0), length, args[1]]
    return _lower_range(context, builder, sig, args)


lower_bound = intrinsic_builtin(
    "lower_bound",
    "lower_bound(arr, value) / lower_bound(arr, arr_begin, arr_end, value): the index of the "
    "first element of the sorted 1-D array *arr* (in ``[arr_begin, arr_end)``) that is not "
    "less than *value* (int32), as Warp's.",
    typer=_typer, python=_python, lower=_lower)
