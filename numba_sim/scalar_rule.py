"""The kernel language's scalar rule, written once: the type two scalar operands meet at.

Warp rejects an operator between two different scalar types (``int32 + int64``,
``float32 * int32``: "couldn't find function overload").  numba_sim promotes
them instead, by the rule below, because values from Numba's side reach kernel
code with types other than Warp's int32: a ``range`` loop index over an int64
bound, ``a.shape[0]`` and ``len(a)`` (int64), an int literal too large for
int32, the arguments plain ``@njit`` code passes a ``@sim.func`` (int64 for a
Python int).  Rejecting those would break Warp code that ports unchanged.
The rule, for the operands of ``+ - * / // % ** & | ^ << >>``:

1. An int literal (an int constant written in the source) adopts the other
   operand's type: ``u + 1`` stays uint8 for a uint8 ``u``, ``x * 2`` stays
   float32.  Two int literals meet at int32, or int64 when one needs it
   (uint64 for a literal >= 2**63).
2. A float beats an int: ``i * x`` is float32 for an int64 ``i`` and a float32
   ``x`` (no accidental float64).
3. Of two floats, the wider wins: float32 + float64 is float64.
4. Of two ints, the wider wins, and at equal width the unsigned one (C's usual
   arithmetic conversions, without C's promotion of narrow types to int:
   int8 + int8 stays int8, as in Warp): int32 + uint32 is uint32, int64 +
   uint32 is int64.

The result keeps the common type (int32 * int32 is int32 and wraps).  Float
literals are float32 before this rule sees them: the kernel rewrite
(kernel_language.py) turns each into ``kernel_ops.float_literal(bits)``, a float32
(compiled: typing/kernel_ops.py's ``FloatLiteral`` type; in a ``@sim.func`` run as
Python: :class:`FloatLiteral`) that converts to float64 from the value written, so
``d * 0.1`` for a float64 ``d`` and ``vec3d(0.1)`` keep 0.1 to double precision.

The rule is one function, :func:`common_dtype`, over :class:`Scalar`: a NumPy
dtype and whether the operand is an int literal.  Two thin adapters describe
an operand for it: :func:`from_numba` a Numba type (compiled code:
typing/kernel_ops.py, whose templates ask Numba for literal types, so that an
int constant in the source, or an int global, arrives as an IntegerLiteral),
and :func:`from_python` a Python value (Python mode: kernel_ops.py).  A
Python value gets the type Numba gives the same value: NumPy scalars their
dtype, a Python float float64 (as a float global is in compiled code), and a
Python int counts as a literal.  (In Python mode a Python int can also be a
``range`` index or a ``.shape``, which compiled code types as int32/int64
variables: the values agree, the int type differs when the other operand is
a narrower int.)

:func:`operator_error` is the one check of which operators take which types
(bitwise operators take ints, ``**`` takes floats, as in Warp), with the
message both modes raise.  The formula of each operator on two scalars of the
common type is in kernel_ops.py (``SCALAR_FORMULAS``).
"""

from dataclasses import dataclass

import numpy as np
from numba.core import types
from numba.np import numpy_support

INT32 = np.dtype(np.int32)
INT64 = np.dtype(np.int64)
UINT64 = np.dtype(np.uint64)


@dataclass(frozen=True)
class Scalar:
    """What the rule knows of an operand: its dtype and whether it is an int literal.

    A literal's dtype is its natural one (:func:`literal_dtype`).
    """

    dtype: np.dtype
    literal: bool = False

    @property
    def is_float(self):
        return self.dtype.kind == "f"

    @property
    def bits(self):
        return self.dtype.itemsize * 8


def literal_dtype(value):
    """The natural type of an int literal: int32, else int64, else uint64."""
    for dtype in (INT32, INT64, UINT64):
        info = np.iinfo(dtype)
        if info.min <= value <= info.max:
            return dtype
    raise OverflowError(f"the int literal {value} does not fit a 64-bit integer")


def common_dtype(a, b):
    """The NumPy dtype two :class:`Scalar` operands meet at (the rule above)."""
    if a.literal != b.literal:
        return b.dtype if a.literal else a.dtype
    if a.dtype == b.dtype:
        return a.dtype
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a.dtype if a.bits >= b.bits else b.dtype
        return a.dtype if a.is_float else b.dtype
    if a.bits != b.bits:
        return a.dtype if a.bits > b.bits else b.dtype
    return a.dtype if a.dtype.kind == "u" else b.dtype  # C: the unsigned one of equal width


# --------------------------------------------------------------------------
# Adapters


def from_numba(numba_type):
    """The :class:`Scalar` of a Numba int or float type, or None for any other type."""
    if isinstance(numba_type, types.IntegerLiteral):
        return Scalar(literal_dtype(numba_type.literal_value), literal=True)
    numba_type = types.unliteral(numba_type)  # a float literal: float32
    if isinstance(numba_type, (types.Integer, types.Float)):
        return Scalar(np.dtype(numpy_support.as_dtype(numba_type)))
    return None


class FloatLiteral(float):
    """A float literal of kernel source, in Python mode (``kernel_ops.float_literal``): a
    float32 for the rule, which converts to float64 from the value written (as compiled
    code's float literals do: typing/kernel_ops.py)."""

    __slots__ = ()

    def __neg__(self):
        return FloatLiteral(-float(self))


FLOAT32 = np.dtype(np.float32)


def from_python(value):
    """The :class:`Scalar` of a Python-mode operand, or None when it is not a scalar.

    NumPy ints and floats give their dtype, a Python float float64 (a float literal of
    kernel source, :class:`FloatLiteral`, float32), a Python int a literal; bools are not
    scalars of the rule.
    """
    if type(value) is FloatLiteral:
        return Scalar(FLOAT32)
    if type(value) is int:
        return Scalar(literal_dtype(value), literal=True)
    if type(value) is float:
        return Scalar(np.dtype(np.float64))
    if isinstance(value, (np.integer, np.floating)):
        return Scalar(value.dtype)
    return None


def convert(value, scalar_type):
    """*value* as the NumPy scalar type *scalar_type*, as compiled code converts it.

    Ints wrap to the width of an int type (a C cast, as compiled code converts
    a literal); NumPy's own conversion would raise on a Python int out of range.
    """
    if type(value) is int and np.issubdtype(scalar_type, np.integer):
        bits = np.dtype(scalar_type).itemsize * 8
        value &= (1 << bits) - 1
        if np.issubdtype(scalar_type, np.signedinteger) and value >> (bits - 1):
            value -= 1 << bits
        return scalar_type(value)
    with np.errstate(all="ignore"):
        return scalar_type(value)


# --------------------------------------------------------------------------
# Which operators take which types


SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "pow": "**", "and_": "&", "or_": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
}
"""Name of each kernel operator -> its symbol in source code."""

BITWISE = frozenset({"and_", "or_", "xor", "lshift", "rshift"})


def operator_error(name, a, b):
    """Why the kernel operator *name* does not take dtypes *a* and *b*, or None.

    Bitwise operators take ints only and ``**`` floats only (Warp has no
    integer power); the message names both types and the conversion to write.
    """
    a, b = np.dtype(a), np.dtype(b)
    symbol = SYMBOLS[name]
    if name in BITWISE and "f" in (a.kind, b.kind):
        target = next((t for t in (a, b) if t.kind != "f"), INT32)
        left = f"{target.name}(a)" if a.kind == "f" else "a"
        right = f"{target.name}(b)" if b.kind == "f" else "b"
        return (f"a {symbol} b with a: {a.name}, b: {b.name}: bitwise operators take integers "
                f"only (as in Warp); convert the float first: {left} {symbol} {right}")
    if name == "pow" and a.kind != "f" and b.kind != "f":
        return (f"a ** b with a: {a.name}, b: {b.name}: '**' takes floats (Warp has no integer "
                f"power); convert first: float32(a) ** b, or multiply (a * a)")
    return None
