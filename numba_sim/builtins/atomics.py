"""Atomics on array elements: ``atomic_add atomic_sub atomic_min atomic_max atomic_exch
atomic_cas atomic_and atomic_or atomic_xor``.

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
Real atomics on both targets (:func:`numba_sim.lowering.atomics.lower_atomic`,
on :func:`~numba_sim.lowering.atomics.emit_atomic`).  Each builtin is an
intrinsic builtin (:func:`numba_sim.builtins.forms.intrinsic_builtin`) with a
typer, since it takes one index per array dimension.

``atomic_and``, ``atomic_or`` and ``atomic_xor`` (Warp's bitwise atomics, also what
``arr[i] &= x``, ``|=`` and ``^=`` do in a kernel) take integer elements and integer
vectors / matrices only.

``atomic_exch(arr, i..., value)`` stores *value* and returns the old element;
``atomic_cas(arr, i..., compare, value)`` stores *value* where the element
equals *compare* and returns the old element.  Both compare floats bit for bit
(Warp's CUDA ``atomicCAS``: ``-0.0`` does not match ``0.0``, a NaN matches the
same NaN), component by component for value types.  Element types are Warp's
for atomics: [u]int32, [u]int64, float32, float64 (Warp has no atomics on
8- and 16-bit integers; float16 is not a numba_sim scalar).

Run as Python (a ``@sim.func`` called from Python) the builtins update NumPy
arrays (value-type arrays with their trailing storage dims) under a lock and
return the old value; ``min``/``max`` on floats ignore a NaN operand, like the
CPU target.
"""

import threading

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing import signature
from numba.np import numpy_support

from numba_sim.builtins.forms import intrinsic_builtin
from numba_sim.lowering.atomics import SUPPORTED_TYPES, lower_atomic
from numba_sim.types import Value, type_repr
from numba_sim.typing.value_types import ValueType

_PYTHON_LOCK = threading.Lock()
_PYTHON_OPS = {
    "add": lambda old, value: old + value,
    "sub": lambda old, value: old - value,
    "min": lambda old, value: (np.fmin if old.dtype.kind == "f" else np.minimum)(old, value),
    "max": lambda old, value: (np.fmax if old.dtype.kind == "f" else np.maximum)(old, value),
    "exch": lambda old, value: value,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}
_BITWISE = ("atomic_and", "atomic_or", "atomic_xor")


def _same_bits(a, b):
    """Elementwise bitwise equality of two arrays of one dtype (Warp's CUDA atomicCAS)."""
    a, b = np.array(a, copy=True), np.array(b, dtype=a.dtype, copy=True)
    width = np.dtype(f"u{a.dtype.itemsize}")
    return a.view(width) == b.view(width)


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
    operands = 2 if op == "cas" else 1
    if name in _BITWISE and arr.dtype.kind not in "iu":
        raise TypeError(f"{_usage(name)}: bitwise atomics take arrays of integers, not of "
                        f"{arr.dtype}")
    if len(args) < 1 + operands:
        raise TypeError(f"{_usage(name)}: missing index or value")
    indices, values = args[:-operands], args[-operands:]
    value = values[-1]
    index = tuple(int(i) for i in indices)
    converted = [_python_operand(name, arr.dtype, v) for v in values]
    operand = converted[-1]
    with _PYTHON_LOCK, np.errstate(over="ignore", invalid="ignore"):
        old = np.array(arr[index], copy=True)
        if old.shape != operand.shape:
            raise TypeError(f"{name}: the element {index} has shape {old.shape}, the value "
                            f"{operand.shape}")
        if op == "cas":
            arr[index] = np.where(_same_bits(old, converted[0]), operand, old)
        else:
            arr[index] = _PYTHON_OPS[op](old, operand)
    if isinstance(value, Value):
        return type(value)._from_components(old.reshape(-1).tolist())
    return old[()]


# --------------------------------------------------------------------------
# Typing


def _usage(name):
    operands = "compare, value" if name == "atomic_cas" else "value"
    return f"{name}(arr, i[, j, k, l], {operands})"


def _resolve(name, args):
    """The signature of ``name(arr, *indices, value)`` (``atomic_cas``: ``compare, value``)
    for Numba types *args*."""
    usage = _usage(name)
    operands = 2 if name == "atomic_cas" else 1
    if len(args) < 2 + operands:
        raise TypingError(f"{usage}: got {len(args)} arguments")
    if operands == 2:  # compare and value: each checked as the value of atomic_exch
        _resolve("atomic_exch", args[:-1])
        sig = _resolve("atomic_exch", args[:-2] + args[-1:])
        return signature(sig.return_type, *sig.args, sig.return_type)
    arr, indices, value = args[0], args[1:-1], args[-1]
    if not isinstance(arr, types.Array):
        raise TypingError(f"{usage}: expected an array, got {arr}")
    if not arr.mutable:
        raise TypingError(f"{usage}: the array {arr} is read-only")
    dtype = arr.dtype
    scalar = dtype.dtype if isinstance(dtype, ValueType) else dtype
    _check_element_type(name, dtype, scalar)
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


_WARP_ATOMIC_TYPES = {
    "atomic_add": "[u]int32, [u]int64, float16, bfloat16, float32, or float64",
    "atomic_sub": "[u]int32, [u]int64, float16, bfloat16, float32, or float64",
    "atomic_min": "[u]int32, [u]int64, bfloat16, float32, or float64",
    "atomic_max": "[u]int32, [u]int64, bfloat16, float32, or float64",
    "atomic_cas": "[u]int32, [u]int64, float32, or float64",
    "atomic_exch": "[u]int32, [u]int64, float32, or float64",
    "atomic_and": "[u]int32 or [u]int64",
    "atomic_or": "[u]int32 or [u]int64",
    "atomic_xor": "[u]int32 or [u]int64",
}
"""Each atomic -> the scalar types Warp lists in its error for the others (Warp 1.19's
builtins.py, verbatim: a ported error check matches)."""


def _check_element_type(name, dtype, scalar):
    """Reject an array whose scalar type has no *name* atomic, as Warp does (its sentence).
    Warp's add/sub lists float16 and bfloat16, which numba_sim has no atomics for: those
    get numba_sim's own message instead of a sentence that would say they work."""
    warp_types = _WARP_ATOMIC_TYPES[name]
    bitwise = name in _BITWISE
    if scalar in SUPPORTED_TYPES and (not bitwise or isinstance(scalar, types.Integer)):
        return
    if scalar == types.float16 and "float16" in warp_types:
        raise TypingError(f"{name}() on an array of {_type_repr(dtype)}: Warp has float16 "
                          f"atomics, numba_sim has none (float16 is outside its kernel "
                          f"language); use a float32 array")
    raise TypingError(f"{name}() operations only work on arrays with {warp_types} as the "
                      f"underlying scalar types, but got {_type_repr(dtype)} (with scalar "
                      f"type {_type_repr(scalar)})")


def _type_repr(numba_type):
    """A Numba scalar or value type as Warp's messages name it (``int8``, ``vec3b``)."""
    if isinstance(numba_type, ValueType):
        return type_repr(numba_type.python_class)
    return type_repr(numpy_support.as_dtype(numba_type).type)


def _atomic_builtin(op, doc):
    name = f"atomic_{op}"

    def typer(*args):
        return _resolve(name, args)

    def python(*args):
        if not args:
            raise TypeError(f"{_usage(name)}: got no arguments")
        return _run_python(name, op, args[0], args[1:])

    return intrinsic_builtin(name, doc, typer=typer, python=python, lower=lower_atomic(op))


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

atomic_exch = _atomic_builtin(
    "exch", "atomic_exch(arr, i[, j, k, l], value): ``arr[i] = value`` atomically (componentwise "
            "for value types); returns the old ``arr[i]``.")
atomic_cas = _atomic_builtin(
    "cas", "atomic_cas(arr, i[, j, k, l], compare, value): ``arr[i] = value`` where ``arr[i]`` "
           "equals ``compare`` (bit for bit; componentwise for value types), atomically; returns "
           "the old ``arr[i]``.")


def _bitwise_atomic(op, operator):
    return _atomic_builtin(
        op, f"atomic_{op}(arr, i[, j, k, l], value): ``arr[i] {operator}= value`` atomically "
            f"(integer elements, componentwise for integer vectors and matrices); returns the old "
            f"``arr[i]``.")


atomic_and = _bitwise_atomic("and", "&")
atomic_or = _bitwise_atomic("or", "|")
atomic_xor = _bitwise_atomic("xor", "^")

__all__ = ["atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_exch", "atomic_cas",
           "atomic_and", "atomic_or", "atomic_xor"]
