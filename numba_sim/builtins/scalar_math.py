"""Math builtins (Warp's "Scalar Math"), with the vector forms Warp has.

Floating-point functions take float32 / float64 scalars (Warp's ``Float``):
an integer argument is a typing error, except where it meets a float, which it
is converted to (``pow(x, 2)`` is float32 for a float32 x).  ``min max clamp
abs sign step`` take integers too.  Vector forms, as in Warp: ``min``/``max``
of two vectors (componentwise) or of one (its smallest / largest component),
``abs`` and ``sign`` of a vector, ``lerp`` of vectors, matrices, quaternions
and transforms, ``isnan isinf isfinite`` of float vectors, quaternions and
matrices (any / any / all components).

Semantics follow Warp's C++ (warp/native/builtin.h):

* ``min``/``max``/``clamp`` treat NaN as missing (C ``fmin``/``fmax``), and
  ``clamp(x, lo, hi)`` is ``min(max(lo, x), hi)``;
* ``sign(x)`` is -1 for x < 0 else 1 (also for -0.0 and NaN); ``step(x)`` is 1
  for x < 0 else 0;
* ``round`` rounds halfway cases away from zero (C ``round``, not NumPy's
  ``round`` nor Python's, which round to even);
* ``asin``/``acos`` clamp their argument to [-1, 1] first;
* ``degrees``/``radians`` multiply by a double constant and round the product
  to the argument's type, as Warp's ``x * RAD_TO_DEG`` does;
* ``lerp(a, b, t) = a*(1-t) + b*t``;
  ``smoothstep(e0, e1, x)``: t = clamp((x-e0)/(e1-e0), 0, 1), then t*t*(3-2t).
"""

import math

import numpy as np

from numba.core import types
from numba.core.typing import signature

from numba_sim import algebra
from numba_sim.kernel_ops import SCALAR_FORMULAS
from numba_sim.builtins.forms import (
    MATRIX, QUAT, SCALAR, TRANSFORM, VECTOR, Form, boolean_result, builtin, common_scalar,
    same_type, scalar_result,
)
from numba_sim.operations import Variant, define, fail, is_scalar, is_value, make_builtin


def _componentwise(fn):
    return lambda sig, a: [fn(x) for x in a]


def _float_function(usage, fn, description):
    """The builtin ``usage`` (``"atan2(y, x)"``) of float scalars: *fn* is a function of
    :mod:`math` (lowered by the target, see :func:`numba_sim.algebra.call`) or a formula."""
    name, params = usage.rstrip(")").split("(")
    if fn in algebra.MATH_FUNCTIONS:
        formula = lambda sig, *args: algebra.call(fn, *args)  # noqa: E731
    else:
        formula = lambda sig, *args: fn(*args)  # noqa: E731
    form = Form((SCALAR,) * len(params.split(",")), scalar_result, formula)
    return name, builtin(name, f"{usage}: {description}", form)


def _on_clamped_argument(pyfunc):
    """Warp's asin/acos: ``f(min(max(x, -1), 1))``."""
    def clamped(x):
        one = algebra.one_like(x)
        return algebra.call(pyfunc, algebra.minimum(algebra.maximum(x, -one), one))

    return clamped


_FLOAT_FUNCTIONS = (
    ("sqrt(x)", math.sqrt, "the square root of x."),
    ("cbrt(x)", algebra.cbrt, "the cube root of x."),
    ("exp(x)", math.exp, "e raised to the power x."),
    ("log(x)", math.log, "the natural logarithm of x."),
    ("log2(x)", math.log2, "the base-2 logarithm of x."),
    ("log10(x)", math.log10, "the base-10 logarithm of x."),
    ("pow(x, y)", math.pow, "x raised to the power y."),
    ("sin(x)", math.sin, "the sine of x (radians)."),
    ("cos(x)", math.cos, "the cosine of x (radians)."),
    ("tan(x)", math.tan, "the tangent of x (radians)."),
    ("asin(x)", _on_clamped_argument(math.asin), "the arcsine of x, clamped to [-1, 1] first."),
    ("acos(x)", _on_clamped_argument(math.acos), "the arccosine of x, clamped to [-1, 1] first."),
    ("atan(x)", math.atan, "the arctangent of x."),
    ("atan2(y, x)", math.atan2, "the angle of the point (x, y) in radians; note the order (y, x)."),
    ("sinh(x)", math.sinh, "the hyperbolic sine of x."),
    ("cosh(x)", math.cosh, "the hyperbolic cosine of x."),
    ("tanh(x)", math.tanh, "the hyperbolic tangent of x."),
    ("floor(x)", math.floor, "the largest integer <= x (as a float)."),
    ("ceil(x)", math.ceil, "the smallest integer >= x (as a float)."),
    ("round(x)", algebra.round_half_away,
     "the nearest integer (as a float), halfway cases away from zero (C's and Warp's round)."),
    ("trunc(x)", math.trunc, "x without its fractional part (as a float)."),
    ("copysign(x, y)", math.copysign, "the magnitude of x with the sign of y (signed zeros\n"
     "and NaN signs included)."),
    ("frac(x)", lambda x: x - algebra.call(math.trunc, x),
     "the fractional part of x: x - trunc(x) (the sign of x)."),
    ("rint(x)", algebra.rint,
     "the nearest integer (as a float), halfway cases to even (C's rint)."),
    ("radians(x)", lambda x: algebra.scale_in_double(x, algebra.DEG_TO_RAD),
     "x (degrees) in radians."),
    ("degrees(x)", lambda x: algebra.scale_in_double(x, algebra.RAD_TO_DEG),
     "x (radians) in degrees."),
    ("smoothstep(edge0, edge1, x)", algebra.smoothstep,
     "a cubic Hermite step from 0 (x <= edge0) to 1 (x >= edge1):\n"
     "t = clamp((x - edge0) / (edge1 - edge0), 0, 1); t * t * (3 - 2 * t)."),
)

_FUNCTIONS = dict(_float_function(usage, fn, text) for usage, fn, text in _FLOAT_FUNCTIONS)


# --------------------------------------------------------------------------
# Functions of integers and floats, with vector forms


def _reduce(fn):
    def formula(sig, a):
        result = a[0]
        for x in a[1:]:
            result = fn(result, x)
        return result

    return formula


def _extremum(name, fn, comparative, superlative):
    return builtin(
        name,
        f"{name}(a, b): the {comparative} of two scalars, or of two vectors componentwise;\n"
        f"{name}(v): the {superlative} component of a vector. Floats follow C's f{name} (NaN "
        f"counts as missing).",
        Form((SCALAR, SCALAR), scalar_result, lambda sig, a, b: fn(a, b), floats_only=False),
        Form((VECTOR, VECTOR), same_type, lambda sig, a, b: [fn(x, y) for x, y in zip(a, b)],
             floats_only=False, same_values=True),
        Form((VECTOR,), scalar_result, _reduce(fn), floats_only=False),
    )


def _scalar_or_vector(name, fn, description):
    return builtin(
        name, f"{name}(x): {description} (componentwise for a vector).",
        Form((SCALAR,), scalar_result, lambda sig, x: fn(x), floats_only=False),
        Form((VECTOR,), same_type, _componentwise(fn), floats_only=False),
    )


_FUNCTIONS.update(
    min=_extremum("min", algebra.minimum, "smaller", "smallest"),
    max=_extremum("max", algebra.maximum, "larger", "largest"),
    abs=_scalar_or_vector("abs", algebra.absolute, "the absolute value"),
    sign=_scalar_or_vector("sign", algebra.sign, "-1 if x < 0 else 1"),
    step=builtin("step", "step(x): 1 if x < 0 else 0.",
                 Form((SCALAR,), scalar_result, lambda sig, x: algebra.step(x), floats_only=False)),
    clamp=builtin(
        "clamp", "clamp(x, low, high): min(max(low, x), high) (a NaN x gives min(low, high)).",
        Form((SCALAR,) * 3, scalar_result, lambda sig, x, lo, hi: algebra.clamp(x, lo, hi),
             floats_only=False)),
)


def _lerp_values(sig, a, b, t):
    return algebra.lerp(a, b, t)


_FUNCTIONS["lerp"] = builtin(
    "lerp",
    "lerp(a, b, t): a*(1-t) + b*t, for float scalars, vectors, matrices, quaternions and\n"
    "transforms (componentwise; t is a scalar).",
    Form((SCALAR,) * 3, scalar_result, lambda sig, a, b, t: algebra.lerp([a], [b], t)[0]),
    *[Form((kind, kind, SCALAR), same_type, _lerp_values, same_values=True)
      for kind in (VECTOR, MATRIX, QUAT, TRANSFORM)],
)


def _predicate(name, test, combine, description):
    def over_values(sig, a):
        return combine([test(x) for x in a])

    return builtin(
        name, f"{name}(x): {description}",
        Form((SCALAR,), boolean_result, lambda sig, x: test(x)),
        *[Form((kind,), boolean_result, over_values) for kind in (VECTOR, QUAT, MATRIX)],
    )


_FUNCTIONS.update(
    isnan=_predicate("isnan", algebra.is_nan, algebra.any_of,
                     "whether x is NaN (for a vector, quaternion or matrix: any component)."),
    isinf=_predicate("isinf", algebra.is_inf, algebra.any_of,
                     "whether x is +-inf (for a vector, quaternion or matrix: any component)."),
    isfinite=_predicate("isfinite", algebra.is_finite, algebra.all_of,
                        "whether x is finite (for a vector, quaternion or matrix: all\n"
                        "components)."),
)


# --------------------------------------------------------------------------
# Warp's functional operators and selection (issue 17)


def _componentwise2(fn):
    return lambda sig, a, b: [fn(x, y) for x, y in zip(a, b)]


def _value_by_scalar(fn):
    return lambda sig, a, s: [fn(x, s) for x in a]


def _scalar_by_value(fn):
    return lambda sig, s, a: [fn(s, x) for x in a]


_FUNCTIONS["div"] = builtin(
    "div",
    "div(a, b): ``a / b`` as Warp's ``/`` (C truncation for integers); a vector, matrix or\n"
    "quaternion divided by a scalar, or a scalar divided by one, componentwise.",
    Form((SCALAR, SCALAR), scalar_result, lambda sig, a, b: algebra.truncated_div(a, b),
         floats_only=False),
    *[form for kind, floats in ((VECTOR, False), (MATRIX, False), (QUAT, True)) for form in (
        Form((kind, SCALAR), same_type, _value_by_scalar(algebra.truncated_div),
             floats_only=floats),
        Form((SCALAR, kind), same_type, _scalar_by_value(algebra.truncated_div),
             floats_only=floats))],
)

_FUNCTIONS["div_approx"] = builtin(
    "div_approx",
    "div_approx(a, b): Warp's approximate division of floats: ``a / b`` of scalars, or a\n"
    "vector, matrix or quaternion and a scalar, componentwise. Warp computes it with the GPU's\n"
    "approximate intrinsics and exactly on the CPU; here it is the exact quotient on both.",
    Form((SCALAR, SCALAR), scalar_result, lambda sig, a, b: algebra.truncated_div(a, b)),
    *[form for kind in (VECTOR, MATRIX, QUAT) for form in (
        Form((kind, SCALAR), same_type, _value_by_scalar(algebra.truncated_div)),
        Form((SCALAR, kind), same_type, _scalar_by_value(algebra.truncated_div)))],
)

_FUNCTIONS["mod"] = builtin(
    "mod",
    "mod(a, b): the remainder of ``a / b``: C's ``%`` for integers (the sign of a), ``fmod``\n"
    "for floats; componentwise for two vectors.",
    Form((SCALAR, SCALAR), scalar_result, lambda sig, a, b: algebra.remainder(a, b),
         floats_only=False),
    Form((VECTOR, VECTOR), same_type, _componentwise2(algebra.remainder), floats_only=False,
         same_values=True),
)

_FUNCTIONS["floordiv"] = builtin(
    "floordiv",
    "floordiv(a, b): ``a // b`` of two scalars, as Warp's: rounded toward negative infinity\n"
    "for signed integers (Python's and NumPy's ``//``), the truncated quotient for unsigned\n"
    "ones, ``floor(a / b)`` for floats (the kernel operator ``//``'s formula).",
    Form((SCALAR, SCALAR), scalar_result,
         lambda sig, a, b: SCALAR_FORMULAS["floordiv"](a, b), floats_only=False),
)

_FUNCTIONS["nonzero"] = builtin(
    "nonzero", "nonzero(x): 1 if x != 0 else 0, in x's type.",
    Form((SCALAR,), scalar_result, lambda sig, x: algebra.nonzero(x), floats_only=False),
)


class _IntegerForm(Form):
    """A form of integer operands only (Warp's ``Int``)."""

    def _signature(self, name, args):
        for arg in args:
            dtype = arg.dtype if is_value(arg) else arg
            if not isinstance(dtype, types.Integer):
                fail(name, args, f"{name} takes integers (Warp's rule), not {arg}")
        return super()._signature(name, args)


def _bitwise(name, fn, description):
    return builtin(
        name, f"{name}(a, b): {description} of two integers (componentwise for two vectors).",
        _IntegerForm((SCALAR, SCALAR), scalar_result, lambda sig, a, b: fn(a, b),
                     floats_only=False),
        _IntegerForm((VECTOR, VECTOR), same_type, _componentwise2(fn), floats_only=False,
                     same_values=True),
    )


_FUNCTIONS.update(
    bit_and=_bitwise("bit_and", algebra.bit_and, "the bitwise AND"),
    bit_or=_bitwise("bit_or", algebra.bit_or, "the bitwise OR"),
    bit_xor=_bitwise("bit_xor", algebra.bit_xor, "the bitwise XOR"),
    invert=builtin(
        "invert", "invert(a): the bitwise complement of an integer (componentwise for a vector).",
        _IntegerForm((SCALAR,), scalar_result, lambda sig, a: algebra.bit_invert(a),
                     floats_only=False),
        _IntegerForm((VECTOR,), same_type, _componentwise(algebra.bit_invert),
                     floats_only=False)),
)


def _bit_count(x):
    """The set bits of an integer's fixed-width (two's-complement) pattern, as int32."""
    if hasattr(x, "emit_call"):  # a symbolic scalar: LLVM's ctpop
        count = type(x)(x.context, x.builder, x.type, x.builder.ctpop(x.value))
        return count.cast(np.int32)
    bits = np.dtype(algebra.scalar_type_of(x)).itemsize * 8
    return np.int32(bin(int(x) & ((1 << bits) - 1)).count("1"))


_FUNCTIONS["bit_count"] = builtin(
    "bit_count", "bit_count(x): the number of set bits of an integer (int32); a signed x counts\n"
    "its two's-complement pattern, sign bit included (bit_count(int8(-1)) == 8).",
    _IntegerForm((SCALAR,), lambda dtype, argtypes: types.int32, lambda sig, x: _bit_count(x),
                 floats_only=False),
)


def _is_condition(argtype):
    return isinstance(argtype, (types.Boolean, types.Integer))


def _selection_typer(name, order):
    usage = f"{name}(cond, {order})"

    def typer(*args):
        if len(args) != 3:
            fail(name, args, f"expected {usage}")
        cond, a, b = args
        if not _is_condition(cond):
            fail(name, args, f"the condition must be a bool or an integer (nonzero is true), "
                             f"not {cond}")
        if is_scalar(a) and is_scalar(b):
            dtype = common_scalar(name, (a, b), floats_only=False)
            return signature(dtype, cond, dtype, dtype)
        if (is_value(a) or a == types.boolean) and a == b:
            return signature(a, cond, a, b)
        fail(name, args, f"{order} must be of one type (Warp's rule), got {a} and {b}")

    return typer


def _define_selection(name, doc, order, swap):
    fn = make_builtin(name, doc)
    if swap:
        formula = lambda sig, c, if_false, if_true: algebra.where(  # noqa: E731
            algebra.truth(c), if_true, if_false)
    else:
        formula = lambda sig, c, if_true, if_false: algebra.where(  # noqa: E731
            algebra.truth(c), if_true, if_false)
    define(fn, Variant(_selection_typer(name, order), formula), name=name)
    return fn


_FUNCTIONS["where"] = _define_selection(
    "where", "where(cond, value_if_true, value_if_false): value_if_true if cond (a bool, or an\n"
    "integer: nonzero is true) else value_if_false; scalars or values of one type.",
    "value_if_true, value_if_false", swap=False)
_FUNCTIONS["select"] = _define_selection(
    "select", "select(cond, value_if_false, value_if_true): Warp's deprecated form of where, with\n"
    "the values in the opposite order: value_if_true if cond else value_if_false.",
    "value_if_false, value_if_true", swap=True)

globals().update(_FUNCTIONS)

__all__ = sorted(_FUNCTIONS)
