"""Declarative typing of builtins: a builtin is a list of *forms*.

A :class:`Form` is a parameter list (value-type patterns and scalars), a rule
for the result type and the formula (:mod:`numba_sim.algebra`) that computes
it.  :func:`builtin` turns the forms into one entry of the operation table
(:mod:`numba_sim.operations`): a typer per form, plus a last one that rejects
everything else with a message naming the given types and the accepted forms.

Scalar rules (Warp's, relaxed only where plain Numba code needs it):

* value arguments of one form share one scalar type (``quat_rotate(quatd, vec3)``
  is an error, as in Warp); forms marked ``same_values`` need one value type;
* a scalar next to a value is converted to the value's scalar type, as the
  operators do (``lerp(a, b, 0.5)`` stays vec3);
* scalars alone meet at a common type: the widest float among them (so
  ``pow(x, 2)`` stays float32 and never turns float64 by accident), else the
  NumPy promotion of the integers;
* ``floats_only`` forms (Warp's ``Float``) reject integer types with a message
  that says how to convert.

Builtins with compile-time constant arguments (``identity(n, dtype)``,
``quat_identity(dtype)``) use :func:`constant_builtin`: their integer
arguments stay literal for the typer (so ``n`` can choose the matrix type) and
a dtype argument may be a NumPy or Numba scalar type (``sim.float32``,
``np.float64``, ``numba.float32``), a NumPy dtype, or Python's ``float`` /
``int`` (float32 / int32, as in Warp).
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing import signature
from numba.core.typing.typeof import typeof
from numba.np import numpy_support

from numba_sim.operations import (
    OPERATIONS, Operation, Variant, define, fail, from_components, is_scalar, is_value,
    make_builtin, scalar_for,
)
from numba_sim.types import KIND_MAT, KIND_QUAT, KIND_TRANSFORM, KIND_VEC
from numba_sim.typing.value_types import value_type_of


@dataclass(frozen=True)
class Value:
    """A value-type parameter: accepted kinds and shapes (None: any shape)."""

    describe: str
    kinds: tuple
    shapes: tuple = None

    def matches(self, argtype):
        return is_value(argtype, *self.kinds) and (self.shapes is None
                                                    or argtype.shape in self.shapes)


class _Scalar:
    describe = "scalar"

    def matches(self, argtype):
        return is_scalar(argtype)


SCALAR = _Scalar()

VECTOR = Value("vector", (KIND_VEC,))
VEC3 = Value("vec3", (KIND_VEC,), ((3,),))
QUAT = Value("quat", (KIND_QUAT,))
TRANSFORM = Value("transform", (KIND_TRANSFORM,))
MATRIX = Value("matrix", (KIND_MAT,))
SQUARE_MATRIX = Value("square matrix", (KIND_MAT,), ((2, 2), (3, 3), (4, 4)))
MAT33_OR_MAT44 = Value("mat33 or mat44", (KIND_MAT,), ((3, 3), (4, 4)))
MAT44 = Value("mat44", (KIND_MAT,), ((4, 4),))


def same_type(dtype, argtypes):
    """Result rule: the type of the first value argument (or the common scalar)."""
    for t in argtypes:
        if is_value(t):
            return t
    return dtype


def scalar_result(dtype, argtypes):
    return dtype


def boolean_result(dtype, argtypes):
    return types.boolean


def value_result(kind, shape):
    """Result rule: the value type of *kind* and *shape* in the arguments' scalar type."""
    def result(dtype, argtypes):
        return value_type_of(kind, dtype, shape) or missing_type(kind, dtype, shape)

    return result


def missing_type(kind, dtype, shape):
    """A result rule's answer when the result type does not exist: the reason, as text."""
    size = "x".join(str(n) for n in shape)
    what = {KIND_MAT: "matrix", KIND_VEC: "vector"}.get(kind, kind)
    return (f"the result would be a {size} {what} of {dtype}, which numba_sim does not have "
            f"(matrices are square, 2x2 to 4x4, of float32 or float64)")


@dataclass(frozen=True)
class Form:
    """One way to call a builtin: *params* (:class:`Value` patterns and :data:`SCALAR`),
    *result* ``(dtype, coerced argtypes) -> Numba type`` (or the reason there is none),
    and ``formula(sig, *components)``."""

    params: tuple
    result: Callable
    formula: Callable
    floats_only: bool = True
    same_values: bool = False

    def usage(self, name):
        return f"{name}({', '.join(p.describe for p in self.params)})"

    def typer(self, name):
        def typer(*args):
            if len(args) != len(self.params) or not all(
                    p.matches(a) for p, a in zip(self.params, args)):
                return None
            return self._signature(name, args)

        return typer

    def _signature(self, name, args):
        values = [a for a in args if is_value(a)]
        if not values:
            dtype = common_scalar(name, args, self.floats_only)
            coerced = (dtype,) * len(args)
        else:
            first = values[0]
            if self.same_values and any(v != first for v in values):
                fail(name, args, f"{name} needs arguments of one type")
            if any(v.dtype != first.dtype for v in values):
                fail(name, args, f"{name} needs arguments of one scalar type (Warp's rule); "
                                 f"convert one first, e.g. {_converted_name(first, values)}(...)")
            dtype = first.dtype
            if self.floats_only and not isinstance(dtype, types.Float):
                fail(name, args, f"{name} needs floating-point components; {first} has integer "
                                 f"components (convert first, e.g. {_float_name(first)}(v))")
            coerced = tuple(a if is_value(a) else scalar_for(first, a, name, args) for a in args)
        result = self.result(dtype, coerced)
        if isinstance(result, str):
            fail(name, args, result)
        return signature(result, *coerced)


def _converted_name(first, values):
    other = next(v for v in values if v.dtype != first.dtype)
    return value_type_of(other.kind, first.dtype, other.shape) or other


def _float_name(value):
    converted = value_type_of(value.kind, types.float32, value.shape)
    return converted.spec.name if converted is not None else "float32"


def common_scalar(name, argtypes, floats_only):
    """The type that scalar arguments meet at (see the module docstring)."""
    floats = [t for t in argtypes if isinstance(t, types.Float)]
    if floats:
        return sorted(floats, key=lambda t: t.bitwidth)[-1]
    if floats_only:
        fail(name, argtypes, f"{name} takes floating-point arguments (Warp's rule); convert "
                             f"integers first, e.g. float32(x)")
    promoted = np.result_type(*[numpy_support.as_dtype(t) for t in argtypes])
    if promoted.kind not in "iu":
        fail(name, argtypes, f"{name} cannot mix these integer types; convert one first")
    return numpy_support.from_dtype(promoted)


def _usage_error(name, forms, hint):
    usages = " or ".join(form.usage(name) for form in forms)

    def typer(*args):
        fail(name, args, f"expected {usages}" + (f"; {hint}" if hint else ""))

    return typer


def builtin(name, doc, *forms, hint=None):
    """Define the public builtin *name* from its forms; returns the Python function."""
    fn = make_builtin(name, doc)
    variants = [Variant(form.typer(name), form.formula) for form in forms]
    define(fn, *variants, Variant(_usage_error(name, forms, hint), None), name=name)
    return fn


def custom_builtin(name, doc, typer, formula):
    """A builtin with one hand-written typer (variadic builtins, delegating ones)."""
    fn = make_builtin(name, doc)
    define(fn, Variant(typer, formula), name=name)
    return fn


# --------------------------------------------------------------------------
# Builtins with compile-time constant arguments


PYTHON_SCALARS = {float: types.float32, int: types.int32}
"""Python's ``float`` and ``int`` as dtypes mean float32 and int32 (Warp's rule)."""


def dtype_argument(argtype):
    """The Numba scalar type named by a dtype argument's type, or None."""
    if isinstance(argtype, types.NumberClass):
        return argtype.instance_type
    if isinstance(argtype, types.DType):
        return argtype.dtype
    if isinstance(argtype, types.Function):
        return PYTHON_SCALARS.get(argtype.typing_key)
    return None


class ConstantArgsOperation(Operation):
    """An operation whose typer sees literal types (``Literal[int](3)``), not their
    plain types: integer arguments are compile-time constants."""

    def resolve(self, argtypes):
        for variant in self.variants:
            sig = variant.typer(*argtypes)
            if sig is not None:
                return sig, variant
        return None, None


def _constant_type(value):
    """The Numba type of a constant argument in Python mode, as compiled code types it."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return types.literal(int(value))
    if value in PYTHON_SCALARS:
        return types.NumberClass(PYTHON_SCALARS[value])
    return typeof(value)


def constant_builtin(name, doc, typer, formula):
    """A builtin whose arguments are all compile-time constants (sizes and dtypes).

    ``formula(sig)`` computes the result from the signature alone; in Python the
    arguments are typed as Numba types them in compiled code (integers as literals).
    """
    def run_python(*args):
        try:
            sig, _ = OPERATIONS[fn].resolve(tuple(_constant_type(a) for a in args))
        except (TypingError, ValueError) as e:
            raise TypeError(str(e)) from None
        return from_components(formula(sig), sig.return_type)

    fn = run_python
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "numba_sim"
    fn.__doc__ = doc
    variant = Variant(typer, lambda sig, *args: formula(sig))
    OPERATIONS[fn] = ConstantArgsOperation(fn, name, [variant])
    return fn


def constant_int(name, args, index, describe):
    """The value of literal integer argument *index*, or a TypingError that says why not."""
    argtype = args[index]
    if isinstance(argtype, types.IntegerLiteral):
        return argtype.literal_value
    fail(name, args, f"{describe} must be a compile-time constant integer (a literal such as 3), "
                     f"not a runtime {types.unliteral(argtype)}")


def dtype_only_typer(name, kind, shape, noun):
    """The typer of ``name(dtype=float32)``: the value of *kind* and *shape* in that dtype."""
    def typer(*args):
        if len(args) > 1:
            fail(name, args, f"{name} takes (dtype=float32)")
        dtype = constant_dtype(name, args, 0)
        result = value_type_of(kind, dtype, shape)
        if result is None:
            fail(name, args, f"there is no {noun} of {dtype} (float32 or float64)")
        return signature(result, *args)

    return typer


def constant_dtype(name, args, index, default=types.float32):
    """The scalar type named by argument *index* (absent: *default*)."""
    if index >= len(args):
        return default
    dtype = dtype_argument(args[index])
    if dtype is None:
        fail(name, args, f"dtype must be a scalar type such as float32, float64 or float, "
                         f"not {args[index]}")
    return dtype
