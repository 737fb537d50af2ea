"""Plain scalar arithmetic as formulas, for the adjoints of keys the table does not hold.

The operation table holds ``operator.add`` and the other operators for value types only;
on int and float scalars Numba types and lowers them itself.  Their adjoints are derived
like the table's (:mod:`numba_sim.autodiff.op_adjoints`) from the formulas here: each entry
maps argument types to the forward ``(signature, formula)`` with Numba's result type
(NumPy's promotion of the operands: ``float32 + float32`` is float32, ``int32 / int32``
float64), the operands converted to it inside the formula, so an integer operand's
adjoint stays a zero of its own type.  ``%`` is C's ``fmod`` (Warp's and the kernel
language's).  Casts (``float``, ``int``, NumPy's and numba_sim's scalar types) are
one-argument entries.

:func:`scalar_key` maps the other names of a builtin to its table key: numba_sim's scalar
types to NumPy's, Python's ``abs``/``min``/``max`` and the functions of :mod:`math` to
numba_sim's builtins of the same name.
"""

import math
import operator

import numpy as np
from numba.core import types
from numba.core.typing import signature
from numba.np import numpy_support

from numba_sim import algebra


def _is_scalar(t):
    return isinstance(t, (types.Integer, types.Float, types.Boolean))


def _is_integral(t):
    return isinstance(t, (types.Integer, types.Boolean))


def _dtype(t):
    return numpy_support.as_dtype(types.unliteral(t))


def _binary(formula, result_rule=None, operand=_is_scalar):
    def resolve(argtypes):
        if len(argtypes) != 2 or not all(operand(types.unliteral(t)) for t in argtypes):
            return None, None
        a, b = (types.unliteral(t) for t in argtypes)
        common = np.result_type(_dtype(a), _dtype(b))
        result = numpy_support.from_dtype(common) if result_rule is None \
            else result_rule(common)
        operand_type = common.type

        def run(sig, x, y):
            return formula(algebra.cast(x, operand_type), algebra.cast(y, operand_type))

        return signature(result, a, b), run

    return resolve


def _unary(formula, operand=_is_scalar):
    def resolve(argtypes):
        if len(argtypes) != 1 or not operand(types.unliteral(argtypes[0])):
            return None, None
        a = types.unliteral(argtypes[0])
        return signature(a, a), lambda sig, x: formula(x)

    return resolve


def _true_division(common):
    return numpy_support.from_dtype(common if common.kind == "f" else np.dtype(np.float64))


def _divide(a, b):
    if algebra.is_integer(a):
        return algebra.div(algebra.cast(a, np.float64), algebra.cast(b, np.float64))
    return algebra.div(a, b)


def _floor_divide(a, b):
    if algebra.is_integer(a):
        return algebra.truncated_div(a, b)
    return algebra.call(math.floor, algebra.div(a, b))


def _power(a, b):
    if algebra.is_integer(a):
        return algebra.cast(algebra.call(math.pow, algebra.cast(a, np.float64), b),
                            algebra.scalar_type_of(a))
    return algebra.call(math.pow, a, b)


def _boolean(common):
    return types.boolean


def _cast(scalar_type):
    def resolve(argtypes):
        if len(argtypes) != 1 or not _is_scalar(types.unliteral(argtypes[0])):
            return None, None
        a = types.unliteral(argtypes[0])
        return (signature(numpy_support.from_dtype(np.dtype(scalar_type)), a),
                lambda sig, x: algebra.cast(x, scalar_type))

    return resolve


SCALAR_OPERATIONS = {
    operator.add: _binary(lambda a, b: a + b),
    operator.sub: _binary(lambda a, b: a - b),
    operator.mul: _binary(lambda a, b: a * b),
    operator.truediv: _binary(_divide, _true_division),
    operator.floordiv: _binary(_floor_divide),
    operator.mod: _binary(algebra.remainder),
    operator.pow: _binary(_power),
    operator.neg: _unary(lambda a: -a),
    operator.pos: _unary(lambda a: +a),
    **{op: _binary(op, _boolean) for op in (operator.lt, operator.le, operator.gt,
                                             operator.ge, operator.eq, operator.ne)},
    **{op: _binary(None, operand=_is_integral) for op in (
        operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift)},
    operator.invert: _unary(None, operand=_is_integral),
    float: _cast(np.float64),
    int: _cast(np.int64),
    bool: _cast(np.bool_),
    **{t: _cast(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32,
                              np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_)},
}
"""key -> resolve(argtypes) -> (forward signature, formula) or (None, None).  The bit
operators and comparisons have no formula: nothing of them is differentiable."""

_PYTHON_BUILTINS = {abs: "abs", min: "min", max: "max"}
_MATH_NAMES = ("sqrt", "exp", "log", "log2", "log10", "pow", "sin", "cos", "tan", "asin",
               "acos", "atan", "atan2", "sinh", "cosh", "tanh", "floor", "ceil", "trunc",
               "copysign", "cbrt")


def scalar_key(key):
    """The table key (or :data:`SCALAR_OPERATIONS` key) that *key* stands for."""
    numpy_type = getattr(type(key), "numpy_type", None)
    if isinstance(numpy_type, property):  # numba_sim's scalar types (sim.float32)
        return key.numpy_type
    if key in _PYTHON_BUILTINS or (getattr(key, "__module__", None) == "math"
                                   and getattr(key, "__name__", None) in _MATH_NAMES):
        import numba_sim

        name = _PYTHON_BUILTINS.get(key, getattr(key, "__name__", None))
        return getattr(numba_sim, name, key)
    return key
