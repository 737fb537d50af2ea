"""Atomics on array elements: ``atomic_add atomic_sub atomic_min atomic_max``.

``old = atomic_add(arr, i, value)`` (one index per array dimension, up to 4)
updates ``arr[i]`` atomically and returns the value it held before, as in
Warp.  Arrays of int32, uint32, int64, uint64, float32 and float64, and of
value types (vectors, matrices, quaternions, transforms) over those scalars:
a value-type element is updated component by component, each component
atomically (as in Warp: another thread's update may come between two
components), and the old value is assembled from the components' old values.

The value is converted to the element type: integers and floats for float
elements, integers for integer elements (a float value for an integer array
is a typing error, as in Warp); value-type elements take the same value type.
Real atomics on both targets (:func:`numba_sim.lowering.atomics.emit_atomic`).

Run as Python (a ``@sim.func`` called from Python) the builtins update NumPy
arrays (value-type arrays with their trailing storage dims) under a lock and
return the old value; ``min``/``max`` on floats ignore a NaN operand, like the
CPU target.
"""

import threading

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.typing.templates import AbstractTemplate, signature

from numba_sim.lowering.atomics import SUPPORTED_TYPES, emit_atomic
from numba_sim.registry import lowering_registry, typing_registry
from numba_sim.types import Value
from numba_sim.typing.value_types import ValueType

_PYTHON_LOCK = threading.Lock()
_PYTHON_OPS = {
    "add": lambda old, value: old + value,
    "sub": lambda old, value: old - value,
    "min": lambda old, value: (np.fmin if old.dtype.kind == "f" else np.minimum)(old, value),
    "max": lambda old, value: (np.fmax if old.dtype.kind == "f" else np.maximum)(old, value),
}


# --------------------------------------------------------------------------
# Python semantics


def _python_operand(name, element_dtype, value):
    """*value* as NumPy data of the array's dtype (the compiled typing rules)."""
    if isinstance(value, Value):
        if value.spec.dtype != element_dtype:
            raise TypeError(f"{name}: a {type(value).__name__} value for an array of "
                            f"{element_dtype}")
        return np.asarray(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name}: expected a number or a value type, got {type(value).__name__}")
    if element_dtype.kind in "iu" and not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: a float value for an integer array of {element_dtype}")
    with np.errstate(over="ignore"):
        return np.array(value).astype(element_dtype)


def _run_python(name, op, arr, args):
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{name}: expected a NumPy array, got {type(arr).__name__}")
    if len(args) < 2:
        raise TypeError(f"{name}(arr, i[, j, k, l], value): missing index or value")
    *indices, value = args
    index = tuple(int(i) for i in indices)
    operand = _python_operand(name, arr.dtype, value)
    with _PYTHON_LOCK, np.errstate(over="ignore", invalid="ignore"):
        old = np.array(arr[index], copy=True)
        if old.shape != operand.shape:
            raise TypeError(f"{name}: the element {index} has shape {old.shape}, the value "
                            f"{operand.shape}")
        arr[index] = _PYTHON_OPS[op](old, operand)
    if isinstance(value, Value):
        return type(value)._from_components(old.reshape(-1).tolist())
    return old[()]


# --------------------------------------------------------------------------
# Typing and lowering


def _resolve(name, args):
    """The signature of ``name(arr, *indices, value)`` for Numba types *args*."""
    usage = f"{name}(arr, i[, j, k, l], value)"
    if len(args) < 3:
        raise TypingError(f"{usage}: got {len(args)} arguments")
    arr, indices, value = args[0], args[1:-1], args[-1]
    if not isinstance(arr, types.Array):
        raise TypingError(f"{usage}: expected an array, got {arr}")
    if not arr.mutable:
        raise TypingError(f"{usage}: the array {arr} is read-only")
    dtype = arr.dtype
    scalar = dtype.dtype if isinstance(dtype, ValueType) else dtype
    if scalar not in SUPPORTED_TYPES:
        raise TypingError(f"{usage}: no atomics on arrays of {dtype}; supported element types "
                          f"are {', '.join(map(str, SUPPORTED_TYPES))} and value types over them")
    if len(indices) != arr.ndim or not all(isinstance(i, types.Integer) for i in indices):
        raise TypingError(f"{usage}: a {arr.ndim}-D array takes {arr.ndim} integer indices, got "
                          f"({', '.join(map(str, indices))})")
    if isinstance(dtype, ValueType):
        if value != dtype:
            raise TypingError(f"{usage}: an array of {dtype} takes a {dtype} value, got {value}")
    elif isinstance(value, types.Boolean) or not isinstance(value, (types.Integer, types.Float)):
        raise TypingError(f"{usage}: an array of {dtype} takes a number, got {value}")
    elif isinstance(dtype, types.Integer) and isinstance(value, types.Float):
        raise TypingError(f"{usage}: a {value} value for an array of {dtype} (convert it "
                          f"explicitly, e.g. {dtype}(value))")
    return signature(dtype, arr, *[types.intp] * arr.ndim, dtype)


def _make_lowering(op):
    def lower_atomic(context, builder, sig, args):
        array_type, dtype = sig.args[0], sig.return_type
        array = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, array, args[1:-1],
                                           wraparound=True)
        value = args[-1]
        if not isinstance(dtype, ValueType):
            return emit_atomic(context, builder, op, pointer, dtype, value)
        old = ir.Constant(context.get_value_type(dtype), ir.Undefined)
        for k in range(dtype.size):
            component = cgutils.gep_inbounds(builder, pointer, 0, k)
            previous = emit_atomic(context, builder, op, component, dtype.dtype,
                                   builder.extract_value(value, k))
            old = builder.insert_value(old, previous, k)
        return old

    lower_atomic.__name__ = f"lower_atomic_{op}"
    return lower_atomic


def _atomic_builtin(op, doc):
    name = f"atomic_{op}"

    def builtin(arr, *args):
        return _run_python(name, op, arr, args)

    builtin.__name__ = builtin.__qualname__ = name
    builtin.__module__ = "numba_sim"
    builtin.__doc__ = doc

    class Template(AbstractTemplate):
        key = builtin

        def generic(self, args, kws):
            if kws:
                raise TypingError(f"{name}() takes no keyword arguments")
            return _resolve(name, tuple(types.unliteral(a) for a in args))

    Template.__name__ = f"Typing_{name}"
    typing_registry.register_global(builtin, types.Function(Template))
    lowering_registry.lower(builtin, types.Array, types.VarArg(types.Any))(_make_lowering(op))
    return builtin


atomic_add = _atomic_builtin(
    "add", "atomic_add(arr, i[, j, k, l], value): ``arr[i] += value`` atomically; returns the "
           "old ``arr[i]``.")
atomic_sub = _atomic_builtin(
    "sub", "atomic_sub(arr, i[, j, k, l], value): ``arr[i] -= value`` atomically; returns the "
           "old ``arr[i]``.")
atomic_min = _atomic_builtin(
    "min", "atomic_min(arr, i[, j, k, l], value): ``arr[i] = min(arr[i], value)`` atomically "
           "(componentwise for value types); returns the old ``arr[i]``.")
atomic_max = _atomic_builtin(
    "max", "atomic_max(arr, i[, j, k, l], value): ``arr[i] = max(arr[i], value)`` atomically "
           "(componentwise for value types); returns the old ``arr[i]``.")

__all__ = ["atomic_add", "atomic_sub", "atomic_min", "atomic_max"]
