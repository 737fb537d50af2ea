"""The operators of the kernel language (Warp's scalar rules), as functions.

Inside ``@sim.kernel`` / ``@sim.func`` bodies the rewrite
(kernel_language.py) turns ``a + b`` into ``add(a, b)`` and so on.  On two
scalars (ints and floats):

* the operands meet at a common type by the kernel language's scalar rule
  (numba_sim/scalar_rule.py: an int literal adopts the other operand's type, a
  float beats an int, the wider type wins, at equal width the unsigned int)
  and the result keeps it: int32 + int32 is int32 and wraps, float32 * 2.0 is
  float32;
* then one formula per operator (``SCALAR_FORMULAS``) computes the result on
  two scalars of that type.  The formula runs here on NumPy scalars (a
  ``@sim.func`` called as Python), and lowering/kernel_ops.py runs the same
  formula on symbolic scalars to emit LLVM IR for the CPU and CUDA, as the
  value types' formulas in numba_sim/algebra.py do.

The formulas follow Warp's C++ (warp/native/builtin.h):

* ``/`` on ints and ``%`` truncate toward zero (C: ``-7 / 2 == -3``,
  ``-7 % 2 == -1``); ``//`` floors (``-7 // 2 == -4``); ``%`` on floats is
  C's ``fmod``; ``//`` on floats is ``floor(a / b)``.  Ints narrower than 32
  bits divide as int32, as C promotes them (int8 ``-128 / -1`` is -128).
* ``**`` takes floats only (Warp has no integer power) and is the C library's
  ``pow`` in the float type (in Python computed in double precision and
  rounded: it can differ from the compiled result by one ulp);
* ``& | ^ << >>`` take ints only.  A shift count outside ``[0, bits)`` gives 0
  for ``<<`` and the sign fill for ``>>`` (undefined in C; as NumPy does);
  ``>>`` is arithmetic on signed ints.
* Integer division or remainder by zero is undefined in Warp (the CPU traps):
  compiled code leaves it undefined, Python mode raises ZeroDivisionError.
  ``INT_MIN / -1`` of int32 and int64 is likewise undefined compiled, and wraps
  in Python mode.
* Float division by zero gives inf or NaN, never an error.

An operator that does not take the operands' types (``&`` with a float,
``**`` on two ints) is an error naming both types and the conversion to write
(scalar_rule.operator_error), a TypeError in Python and a TypingError when
compiled.  Comparisons are not rewritten: they keep NumPy's and Numba's mixed
type comparison, which agree (exact).  Anything but two scalars (value types,
arrays, tuples...) keeps Python's / Numba's meaning of the operator.

``unpack`` and ``unpack_slice`` are what the rewrite turns the star arguments of a call
(``vec4(*v3, 1.0)``, ``vec2(*arr[0:4:2])``) into.

The component-assignment helpers (``store_item``, ``store_attr``,
``update_item``, ``update_attr``, ``update_component``) are what the rewrite
turns ``v.x = 1``, ``m[i, j] = 0``, ``arr[i] += x`` (atomic on arrays) and
``arr[i][0] += x`` into: they return the updated value (or the array, after an
atomic update of its element).  ``x op= value`` into a scalar component or
element converts *value* to the element's type first, then applies the
operator in that type.
"""

import math
import operator

import numpy as np

from numba_sim import algebra, scalar_rule
from numba_sim.structs import Struct
from numba_sim.types import Value, attribute_slice

float32 = np.float32
int32 = np.int32


def float_literal(bits):
    """A float literal of kernel source, given as the int64 bit pattern of its Python float
    (so that compiled code's typing sees its exact value): float32, as Warp types it, that
    converts to float64 from the value written (``vec3d(0.1, ...)``, ``d * 0.1`` for a
    float64 d: Warp's typed constructors keep a literal's double precision).  Compiled, its
    type is typing/kernel_ops.py's ``FloatLiteral``; in Python, scalar_rule.FloatLiteral."""
    return scalar_rule.FloatLiteral(literal_value(bits))


def literal_value(bits):
    """The Python float whose int64 bit pattern is *bits*."""
    return float(np.array(bits, dtype=np.int64).view(np.float64))


def literal_bits(value):
    """The int64 bit pattern of the Python float *value* (kernel_language.py's argument of
    :func:`float_literal`)."""
    return int(np.array(value, dtype=np.float64).view(np.int64))

BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "and_": operator.and_, "or_": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift,
}
"""Name of each kernel operator -> the Python operator it stands for."""

AUGMENTED = frozenset(BINARY)

WARP_OPERATOR_NAMES = {
    "add": "add", "sub": "sub", "mul": "mul", "div": "truediv", "floordiv": "floordiv",
    "mod": "mod", "pow": "pow", "bit_and": "and_", "bit_or": "or_", "bit_xor": "xor",
    "lshift": "lshift", "rshift": "rshift",
}
"""Warp's builtin name of each operator -> the kernel operator's name here."""

USER_OPERATORS = {}
"""Kernel operator name -> the ``@sim.func`` s named like Warp's builtin of that operator
(``@wp.func def add(a: Complex, b: Complex)``): they overload the operator for the types the
builtin does not take (Warp's rule), the latest definition first."""


def note_user_function(name, function):
    """Record the ``@sim.func`` *function* defined under *name* if it overloads an operator."""
    operator_name = WARP_OPERATOR_NAMES.get(name)
    if operator_name is not None:
        overloads = USER_OPERATORS.setdefault(operator_name, [])
        if function in overloads:
            overloads.remove(function)
        overloads.insert(0, function)


# --------------------------------------------------------------------------
# Polymorphic helpers: NumPy scalars in Python, symbolic scalars when lowering


def _is_symbolic(x):
    return hasattr(x, "emit_call")


def _is_signed(x):
    return np.issubdtype(algebra.scalar_type_of(x), np.signedinteger)


def _bits(x):
    return np.dtype(algebra.scalar_type_of(x)).itemsize * 8


def _c_divide(a, b):
    """C's integer ``a / b`` (truncating) on two ints of one type."""
    if _is_symbolic(a):
        return a / b
    return scalar_rule.convert(_truncated_quotient(int(a), int(b)), type(a))


def _c_remainder(a, b):
    """C's ``a % b`` on ints (the sign of *a*), ``fmod`` on floats."""
    if _is_symbolic(a):
        return a % b  # srem / urem / frem
    if not algebra.is_integer(a):
        return np.fmod(a, b)
    x, y = int(a), int(b)
    return scalar_rule.convert(x - _truncated_quotient(x, y) * y, type(a))


def _truncated_quotient(x, y):
    if y == 0:
        raise ZeroDivisionError("integer division by zero (undefined in Warp's kernels: the "
                                "compiled code gives an undefined value or traps)")
    quotient = abs(x) // abs(y)
    return quotient if (x < 0) == (y < 0) else -quotient


def _instruction(name, a, b):
    """One integer instruction: ``& | ^ << >>`` (``>>`` arithmetic on signed ints).

    The symbolic scalars have no integer bitwise operators (their ``&`` and ``|``
    combine conditions), so the instruction is emitted here, next to NumPy's.
    """
    if not _is_symbolic(a):
        return BINARY[name](a, b)
    builder = a.builder
    emit = {"and_": builder.and_, "or_": builder.or_, "xor": builder.xor, "lshift": builder.shl,
            "rshift": builder.ashr if _is_signed(a) else builder.lshr}[name]
    return type(a)(a.context, builder, a.type, emit(a.value, b.value))


def _as_c_int(a, b, operation):
    """``operation(a, b)`` with ints narrower than 32 bits promoted to int32, as C does."""
    if _bits(a) >= 32:
        return operation(a, b)
    wide = operation(algebra.cast(a, np.int32), algebra.cast(b, np.int32))
    return algebra.cast(wide, algebra.scalar_type_of(a))


def _count_in_range(a, b):
    """Whether *b* is a defined shift count for *a*: ``0 <= b < bits``."""
    below = b < _bits(a)
    return (b >= algebra.zero_like(b)) & below if _is_signed(b) else below


# --------------------------------------------------------------------------
# One formula per operator, on two scalars of the common type


def _truediv(a, b):
    return _as_c_int(a, b, _c_divide) if algebra.is_integer(a) else a / b


def _floordiv(a, b):
    if not algebra.is_integer(a):
        return algebra.call(math.floor, a / b)
    quotient = _as_c_int(a, b, _c_divide)
    if not _is_signed(a):
        return quotient
    remainder = _as_c_int(a, b, _c_remainder)
    zero = algebra.zero_like(a)
    inexact_negative = (remainder != zero) & ((remainder < zero) != (b < zero))
    return algebra.select(inexact_negative, quotient - 1, quotient)


def _mod(a, b):
    return _as_c_int(a, b, _c_remainder) if algebra.is_integer(a) else _c_remainder(a, b)


def _lshift(a, b):
    return algebra.select(_count_in_range(a, b), _instruction("lshift", a, b),
                          algebra.zero_like(a))


def _rshift(a, b):
    zero = algebra.zero_like(a)
    fill = algebra.select(a < zero, zero - 1, zero) if _is_signed(a) else zero
    return algebra.select(_count_in_range(a, b), _instruction("rshift", a, b), fill)


SCALAR_FORMULAS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "truediv": _truediv,
    "floordiv": _floordiv,
    "mod": _mod,
    "pow": lambda a, b: algebra.call(math.pow, a, b),
    "and_": lambda a, b: _instruction("and_", a, b),
    "or_": lambda a, b: _instruction("or_", a, b),
    "xor": lambda a, b: _instruction("xor", a, b),
    "lshift": _lshift,
    "rshift": _rshift,
}
"""Name of each kernel operator -> its formula on two scalars of one type (NumPy or symbolic)."""


# --------------------------------------------------------------------------
# The operators, in Python


def _is_scalar(x):
    return scalar_rule.from_python(x) is not None


def _check(name, a, b):
    message = scalar_rule.operator_error(name, a, b)
    if message is not None:
        raise TypeError(message)


def _scalar_binary(name, a, b):
    a_scalar, b_scalar = scalar_rule.from_python(a), scalar_rule.from_python(b)
    _check(name, a_scalar.dtype, b_scalar.dtype)
    scalar_type = scalar_rule.common_dtype(a_scalar, b_scalar).type
    return _apply(name, scalar_rule.convert(a, scalar_type), scalar_rule.convert(b, scalar_type))


def _apply(name, a, b):
    with np.errstate(all="ignore"):
        return SCALAR_FORMULAS[name](a, b)


def _make_binary(name):
    python_operator = BINARY[name]

    def kernel_operator(a, b):
        if _is_scalar(a) and _is_scalar(b):
            return _scalar_binary(name, a, b)
        return python_operator(a, b)

    kernel_operator.__name__ = name
    kernel_operator.__qualname__ = name
    symbol = scalar_rule.SYMBOLS[name]
    kernel_operator.__doc__ = f"The kernel language's ``{symbol}`` (Warp's scalar rules)."
    return kernel_operator


globals().update({name: _make_binary(name) for name in BINARY})


def neg(a):
    """The kernel language's unary minus (keeps an int32 an int32; an int literal is int32)."""
    if type(a) is scalar_rule.FloatLiteral:  # -0.1 is a literal too
        return -a
    scalar = scalar_rule.from_python(a)
    if scalar is not None:
        with np.errstate(all="ignore"):
            return -scalar_rule.convert(a, scalar.dtype.type)
    return -a


# --------------------------------------------------------------------------
# Chained comparisons (``a < b < c``): Warp's rule on the comparators' types


def chain_kind(value):
    """What a comparator of a chain is, for Warp's rule (`chain_compare`): ``"number"``
    for an int or float (numbers meet at the scalar rule's type), else its type."""
    if isinstance(value, (bool, np.bool_)):
        return bool
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    return type(value)


CHAIN_OPERATORS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
                   ">": operator.gt, ">=": operator.ge}


def chain_compare(ops, *operands):
    """A chained comparison ``a < b < c`` as Warp's (the kernel rewrite makes it
    ``chain_compare("< <", a, b, c)``): every operand evaluated once, left to right, before
    comparing; comparators of one type only ("Cannot chain comparisons of unequal types"),
    where two numbers count as one type (the scalar rule makes them meet) and a bool
    compares with a bool.  Compiled: typing/kernel_ops.py, lowering/kernel_ops.py."""
    symbols = ops.split()
    for op, b, c in zip(symbols[1:], operands[1:], operands[2:]):
        if chain_kind(b) != chain_kind(c):
            raise TypeError(f"Cannot chain comparisons of unequal types: "
                            f"{type(b).__name__} {op} {type(c).__name__}.")
    return all(bool(CHAIN_OPERATORS[op](a, b))
               for op, a, b in zip(symbols, operands, operands[1:]))


# --------------------------------------------------------------------------
# Component assignment (Python semantics; compiled in lowering/kernel_ops.py)


def _replace_component(value, key, new):
    """*value* (a value type or struct) with component/row/field *key* set to *new*."""
    if isinstance(value, Struct):
        result = type(value)._from_fields([getattr(value, f.name) for f in value._fields])
        setattr(result, key, new)
        return result
    if not isinstance(value, Value):
        raise TypeError(f"cannot assign to a component of {type(value).__name__}")
    storage = np.array(value._storage)
    if isinstance(key, str):
        found = attribute_slice(value.spec, key)
        if found is None:
            raise AttributeError(f"{value.spec.name} has no attribute {key!r}")
        start, stop, _ = found
        storage.reshape(-1)[start:stop] = np.asarray(new).reshape(-1)
    else:
        storage[key] = np.asarray(new)
    return type(value)._from_components(list(storage.reshape(-1)))


def _component(value, key):
    return getattr(value, key) if isinstance(key, str) else value[key]


def store_item(container, index, value):
    """``container[index] = value``: arrays are written (and returned), values rebuilt."""
    if isinstance(container, np.ndarray) or hasattr(container, "__cuda_array_interface__") \
            or isinstance(container, (list, dict)):
        container[index] = value
        return container
    return _replace_component(container, index, value)


def store_attr(container, name, value):
    """``container.name = value``, returning the rebuilt value or struct."""
    return _replace_component(container, name, value)


def _combine(op, current, value):
    """``current op value``; a scalar *current* (an element) converts *value* to its type first."""
    if isinstance(current, (np.integer, np.floating)) and _is_scalar(value):
        _check(op, current.dtype, scalar_rule.from_python(value).dtype)
        return _apply(op, current, scalar_rule.convert(value, type(current)))
    return globals()[op](current, value)


def verify_finite(value, where):
    """``sim.config.verify_fp``: print *where* and *value* when *value* (a float, or a value
    type of floats) is not finite, as Warp's ``verify_fp`` reports a stored value; other
    values pass unchecked."""
    components = value._components() if hasattr(value, "_components") else [value]
    if all(isinstance(x, (float, np.floating)) for x in components) \
            and not all(math.isfinite(x) for x in components):
        print(f"{where}: non-finite value stored:", *components)


def constructor_argument(value, dtype_name, kind):
    """An argument of a typed constructor (``vec3f(x, y, z)``) that is a variable, not a
    constant: compiled, a scalar must already have the constructor's scalar type (Warp's
    rule; constants are converted), named *dtype_name*; *kind* is ``vector``, ``matrix``,
    ``quaternion`` or ``transformation``.  In Python the value itself."""
    return value


def unpack(container):
    """``f(*container)``: the items of a vector, quaternion, transform (its scalars), matrix
    (its rows) or tuple, as a tuple (compiled: one read per item, the length static)."""
    return tuple(container[k] for k in range(len(container)))


def unpack_slice(container, start, stop, step):
    """``f(*container[start:stop:step])`` with literal bounds: the items of the slice, as a
    tuple; an array's slice needs an explicit, non-negative *stop* (Warp's rule)."""
    return tuple(container[k] for k in range(*slice(start, stop, step).indices(len(container))))


def update_item(container, index, op, value):
    """``container[index] op= value`` (atomic on array elements when compiled)."""
    return store_item(container, index, _combine(op, container[index], value))


def update_attr(container, name, op, value):
    """``container.name op= value``."""
    return store_attr(container, name, _combine(op, getattr(container, name), value))


def update_component(container, index, key, op, value):
    """``container[index][key] op= value`` / ``container[index].key op= value``."""
    element = container[index]
    return store_item(container, index, store_item(element, key, _combine(
        op, _component(element, key), value)) if not isinstance(key, str) else store_attr(
        element, key, _combine(op, getattr(element, key), value)))
