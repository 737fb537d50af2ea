"""Declaring builtins, two ways: formulas (:func:`builtin`) and intrinsics
(:func:`intrinsic_builtin`).

The first way: a builtin that computes a formula is a list of *forms*.
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
  NumPy promotion of the integer variables, which int literals adopt as the
  kernel language's scalar rule has it (``max(i, 0)`` keeps the type of ``i``;
  ``mul(2, 3)`` of two literals is int32, or int64 when one needs it; in Python a
  Python int is a literal);
* ``floats_only`` forms (Warp's ``Float``) reject integer types with a message
  that says how to convert.

Builtins with compile-time constant arguments (``identity(n, dtype)``,
``quat_identity(dtype)``) use :func:`constant_builtin`: their integer
arguments stay literal for the typer (so ``n`` can choose the matrix type) and
a dtype argument may be a NumPy or Numba scalar type (``sim.float32``,
``np.float64``, ``numba.float32``), a NumPy dtype, or Python's ``float`` /
``int`` (float32 / int32, as in Warp).

The second way: intrinsic builtins
----------------------------------

A builtin that is not a formula on components -- the random builtins advance
a state in place, the atomics update memory -- is declared with
:func:`intrinsic_builtin`.  Its :class:`Overload` s list the accepted calls:
parameter kinds (:class:`Param`: the Numba types a parameter accepts and the
one they are converted to), the result type, the Python-mode implementation
and a reference to the lowering, which lives in :mod:`numba_sim.lowering`
(by default the Python implementation compiled for the target,
:func:`numba_sim.lowering.intrinsics.compiled`).  A builtin whose parameters
cannot be listed (``atomic_add(arr, i[, j, k, l], value)``: one index per
array dimension) gives one typer, Python implementation and lowering instead.
The helper registers the typing and the lowerings in
:mod:`numba_sim.registry`, so the builtin exists on the CPU and the CUDA
target, and a builtin's module only declares.  Plain Python functions that
such implementations call (shared steps, float32 ``math``) are declared with
:func:`compiled_helper`: the same registration, with the function itself as
the key, so it keeps running as Python.

Wrong calls of an intrinsic builtin fail as those of a formula builtin do,
naming the given types and the accepted calls (``randi(float32): expected
randi(a random state) or randi(a random state, an int, an int), got float32
for a random state; ...``): a ``TypingError`` when compiled, a ``TypeError``
in Python.
"""

import inspect
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing import signature
from numba.core.typing.templates import AbstractTemplate
from numba.core.typing.typeof import typeof
from numba.np import numpy_support

from numba_sim import scalar_rule
from numba_sim.lowering.intrinsics import compiled
from numba_sim.lowering.operations import components as formula_inputs
from numba_sim.lowering.operations import pack as pack_result
from numba_sim.operations import (
    OPERATIONS, Operation, Variant, define, fail, fold_keywords, from_components, is_scalar,
    is_value, keyword_params, make_builtin, python_signature, scalar_for,
)
from numba_sim.registry import lowering_registry, typing_registry
from numba_sim.types import KIND_MAT, KIND_QUAT, KIND_TRANSFORM, KIND_VEC
from numba_sim.typing.value_types import value_type_of


@dataclass(frozen=True)
class Value:
    """A value-type parameter: accepted kinds and shapes (None: any shape; ``"square"``:
    any square shape)."""

    describe: str
    kinds: tuple
    shapes: object = None

    def matches(self, argtype):
        if not is_value(argtype, *self.kinds):
            return False
        if self.shapes == "square":
            return argtype.spec.is_square
        return self.shapes is None or argtype.shape in self.shapes


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
SQUARE_MATRIX = Value("square matrix", (KIND_MAT,), "square")
SMALL_SQUARE_MATRIX = Value("2x2, 3x3 or 4x4 matrix", (KIND_MAT,), ((2, 2), (3, 3), (4, 4)))
MAT33 = Value("mat33", (KIND_MAT,), ((3, 3),))
MAT33_OR_MAT44 = Value("mat33 or mat44", (KIND_MAT,), ((3, 3), (4, 4)))
MAT44 = Value("mat44", (KIND_MAT,), ((4, 4),))
SPATIAL_VECTOR = Value("spatial_vector", (KIND_VEC,), ((6,),))


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
    if kind in (KIND_QUAT, KIND_TRANSFORM):
        return (f"the result would be a {what} of {dtype}, which numba_sim does not have "
                f"({what}s are float32 or float64)")
    return (f"the result would be a {size} {what} of {dtype}, which numba_sim does not have "
            f"(vectors and matrices take the scalar types int8 to uint64, float32 and float64)")


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
        def typer(*args):  # int literals as literals (the scalar rule's), others plain
            args = tuple(a if isinstance(a, types.IntegerLiteral) else types.unliteral(a)
                         for a in args)
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
    floats = [types.unliteral(t) for t in argtypes if isinstance(t, types.Float)]
    if floats:
        return sorted(floats, key=lambda t: t.bitwidth)[-1]
    if floats_only:
        fail(name, argtypes, f"{name} takes floating-point arguments (Warp's rule); convert "
                             f"integers first, e.g. float32(x)")
    variables = [t for t in argtypes if not isinstance(t, types.IntegerLiteral)]
    if not variables:  # literals alone: int32, or the type one of them needs
        common = scalar_rule.from_numba(argtypes[0])
        for t in argtypes[1:]:
            common = scalar_rule.Scalar(
                scalar_rule.common_dtype(common, scalar_rule.from_numba(t)), literal=True)
        return numpy_support.from_dtype(common.dtype)
    promoted = np.result_type(*[numpy_support.as_dtype(t) for t in variables])
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
    variants = [Variant(form.typer(name), form.formula, literal_args=True) for form in forms]
    define(fn, *variants, Variant(_usage_error(name, forms, hint), None), name=name)
    return fn


def custom_builtin(name, doc, typer, formula, python=None, literal_args=False):
    """A builtin with one hand-written typer (variadic builtins, delegating ones); *python*
    as :func:`numba_sim.operations.make_builtin`'s; *literal_args*: the typer sees int
    literals as literals (:class:`numba_sim.operations.Variant`)."""
    fn = make_builtin(name, doc, python)
    define(fn, Variant(typer, formula, literal_args=literal_args), name=name)
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


def constant_builtin(name, doc, typer, formula, params=("dtype",)):
    """A builtin whose arguments are all compile-time constants (sizes and dtypes).

    ``formula(sig)`` computes the result from the signature alone; in Python the
    arguments are typed as Numba types them in compiled code (integers as literals).
    *params* names the parameters, so that they can be passed by keyword, as in Warp
    (``quat_identity(dtype=float64)``), in Python and in compiled code.
    """
    def run_python(*args, **kwargs):
        try:
            folded = fold_keywords(name, params, args, kwargs)
            sig, _ = OPERATIONS[fn].resolve(tuple(_constant_type(a) for a in folded))
        except (TypingError, ValueError) as e:
            raise TypeError(str(e)) from None
        return from_components(formula(sig), sig.return_type)

    fn = run_python
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "numba_sim"
    fn.__doc__ = doc
    variant = Variant(typer, lambda sig, *args: formula(sig))
    OPERATIONS[fn] = ConstantArgsOperation(fn, name, [variant])

    class KeywordTemplate(AbstractTemplate):
        """Calls with keyword arguments (positional ones are typed by the operation table)."""

        key = fn

        def generic(self, args, kws):
            if not kws:
                return None
            try:
                folded = fold_keywords(name, params, args, kws)
            except TypeError as e:
                raise TypingError(str(e)) from None
            sig = typer(*folded)
            return sig.replace(pysig=python_signature(params[:len(folded)]))

    KeywordTemplate.__name__ = f"Keywords_{name}"
    typing_registry.register_global(fn, types.Function(KeywordTemplate))
    return fn


# --------------------------------------------------------------------------
# Builtins with values and compile-time keyword arguments (Warp's vector(..., length=n))


def _python_keyword_type(value):
    """The Numba type of a keyword argument's value in Python mode, as compiled code types it
    (integers and tuples of integers as literals)."""
    if isinstance(value, tuple):
        return types.Tuple([_python_keyword_type(v) for v in value])
    try:
        return _constant_type(value)
    except ValueError:  # no Numba type: named in the typer's message
        return types.Opaque(repr(value))


KEYWORD_FORM = "__sim_keyword_form__"
"""The attribute of a :func:`keyword_builtin`: its (keywords, typer, formula), from which
the adjoint is derived (numba_sim/autodiff/op_derived.py)."""


def keyword_builtin(name, doc, keywords, typer, formula):
    """A builtin taking values positionally and compile-time constants by keyword.

    ``typer(argtypes, keyword_types)`` gets the positional argument types (integer
    constants as literals, in Python too) and a dict of the keyword arguments' (literal)
    types; it returns a ``Signature`` over the positional arguments (converted as they
    should be) or raises a TypingError.  ``formula(sig,
    *components)`` computes the result from the positional arguments' components.  The
    keyword values are compile-time constants: ints as literals (``length=5``), tuples of
    them (``shape=(2, 3)``), scalar types (``dtype=float64``).  Runs in Python, and
    compiled on the CPU and CUDA targets.
    """
    def check_keywords(kws):
        for key in kws:
            if key not in keywords:
                raise TypingError(f"{name}() got an unexpected keyword argument {key!r} "
                                  f"(keywords: {', '.join(keywords)})")

    def run_python(*args, **kwargs):
        try:
            check_keywords(kwargs)
            argtypes = tuple(_python_keyword_type(a) if isinstance(a, int) else typeof(a)
                             for a in args)
            sig = typer(argtypes, {k: _python_keyword_type(v) for k, v in kwargs.items()})
        except (TypingError, ValueError) as e:
            raise TypeError(str(e)) from None
        inputs = [_python_components(a, t) for a, t in zip(args, sig.args)]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return from_components(formula(sig, *inputs), sig.return_type)

    run_python.__name__ = run_python.__qualname__ = name
    run_python.__module__ = "numba_sim"
    run_python.__doc__ = doc
    setattr(run_python, KEYWORD_FORM, (keywords, typer, formula))  # autodiff/op_derived.py

    class KeywordValuesTemplate(AbstractTemplate):
        key = run_python
        prefer_literal = True  # shape=(2, 3) as a tuple of literals

        def generic(self, args, kws):
            check_keywords(kws)
            sig = typer(tuple(args), dict(kws))
            if sig is None:
                return None
            keyword_types = [types.unliteral(kws[k]) if k in kws else types.none
                             for k in keywords]
            parameters = [inspect.Parameter(f"arg{i}", inspect.Parameter.POSITIONAL_ONLY)
                          for i in range(len(args))]
            keyword_kind = inspect.Parameter.POSITIONAL_OR_KEYWORD  # Numba folds these by name
            parameters += [inspect.Parameter(k, keyword_kind, default=None) for k in keywords]
            return signature(sig.return_type, *sig.args, *keyword_types).replace(
                pysig=inspect.Signature(parameters))

    KeywordValuesTemplate.__name__ = f"Typing_{name}"
    typing_registry.register_global(run_python, types.Function(KeywordValuesTemplate))

    def lower(context, builder, sig, args):
        count = len(sig.args) - len(keywords)
        inputs = [formula_inputs(context, builder, a, t)
                  for a, t in zip(args[:count], sig.args[:count])]
        return pack_result(context, builder, formula(sig, *inputs), sig.return_type)

    lower.__name__ = f"lower_{name}"
    lowering_registry.lower(run_python, types.VarArg(types.Any))(lower)
    return run_python


def _python_components(value, numba_type):
    """A Python-mode argument as formula input, converted to *numba_type*."""
    if is_value(numba_type):
        return [numba_type.spec.scalar_type(x) for x in value._components()]
    with np.errstate(all="ignore"):
        return numpy_support.as_dtype(numba_type).type(value)


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
    """The scalar type named by argument *index* (absent or None: *default*, as Warp's
    ``dtype=None``)."""
    if index >= len(args) or isinstance(args[index], (types.NoneType, types.Omitted)):
        return default
    dtype = dtype_argument(args[index])
    if dtype is None:
        fail(name, args, f"dtype must be a scalar type such as float32, float64 or float, "
                         f"not {args[index]}")
    return dtype


# --------------------------------------------------------------------------
# The second way: intrinsic builtins (see the module docstring)


@dataclass(frozen=True)
class Param:
    """A parameter kind of an :class:`Overload`.

    *describe* names it in messages (``"a random state"``); *accepts* are the
    Numba type classes it takes (booleans never) and *converted* the type an
    argument is converted to, which the implementation and the lowering see.
    *hint* is added to the message when an argument does not fit.  *python* is
    the class (or tuple of classes) an argument must be an instance of in Python
    mode; None: any (the implementation converts it, as compiled code does).
    """

    describe: str
    accepts: tuple
    converted: types.Type
    hint: str = None
    python: object = None

    def matches(self, argtype):
        return isinstance(argtype, self.accepts) and not isinstance(argtype, types.Boolean)

    def matches_python(self, value):
        return self.python is None or isinstance(value, self.python)


@dataclass(frozen=True)
class Overload:
    """One call of an intrinsic builtin: *params* (:class:`Param`), the Numba *result*
    type, *python* (the Python-mode implementation, called with the arguments) and
    *lower*, the lowering ``lower(context, builder, sig, args)`` from
    :mod:`numba_sim.lowering` (None: *python* compiled for the target)."""

    params: tuple
    result: types.Type
    python: Callable
    lower: Callable = None

    def usage(self, name):
        return f"{name}({', '.join(p.describe for p in self.params)})"

    def converted_signature(self):
        return signature(self.result, *[p.converted for p in self.params])

    def lowering(self):
        return self.lower if self.lower is not None else compiled(self.python)


def _first_mismatch(overload, args, matches):
    """The first (param, argument) of *overload* that does not match."""
    return next((p, a) for p, a in zip(overload.params, args) if not matches(p, a))


def _hint(param):
    return f"; {param.hint}" if param.hint else ""


def _overloads_typer(name, overloads):
    usage = " or ".join(o.usage(name) for o in overloads)

    def typer(*args):
        fitting = [o for o in overloads if len(o.params) == len(args)]
        for overload in fitting:
            if all(p.matches(a) for p, a in zip(overload.params, args)):
                return overload.converted_signature()
        if not fitting:
            fail(name, args, f"expected {usage}")
        param, arg = _first_mismatch(fitting[0], args, Param.matches)
        fail(name, args, f"expected {usage}, got {arg} for {param.describe}{_hint(param)}")

    return typer


def _overloads_python(name, overloads):
    usage = " or ".join(o.usage(name) for o in overloads)
    by_arity = {}
    for overload in overloads:
        by_arity.setdefault(len(overload.params), []).append(overload)

    def python(*args):
        fitting = by_arity.get(len(args), ())
        for overload in fitting:
            for param, arg in zip(overload.params, args):
                if not param.matches_python(arg):
                    break
            else:
                return overload.python(*args)
        names = ", ".join(type(a).__name__ for a in args)
        hint = ""
        if fitting:
            param, _ = _first_mismatch(fitting[0], args, Param.matches_python)
            hint = _hint(param)
        raise TypeError(f"{name}({names}): expected {usage}{hint}")

    return python


def _register_intrinsic(fn, name, typer, lowerings, keywords=()):
    """Typing of calls of *fn* by ``typer(*argtypes)`` and its ``(pattern, lower)``
    lowerings, in numba_sim's registries (so on the CPU and the CUDA target); keyword
    arguments by the parameter names *keywords* (see :func:`intrinsic_builtin`)."""
    class Template(AbstractTemplate):
        key = fn

        def generic(self, args, kws):
            if not kws:
                return typer(*(types.unliteral(a) for a in args))
            params = keyword_params(keywords, args, kws)
            try:
                folded = fold_keywords(name, params, args, kws)
            except TypeError as e:
                raise TypingError(str(e)) from None
            sig = typer(*(types.unliteral(a) for a in folded))
            return None if sig is None else sig.replace(
                pysig=python_signature(params[:len(folded)]))

    Template.__name__ = f"Typing_{name}"
    typing_registry.register_global(fn, types.Function(Template))
    for pattern, lower in lowerings:
        lowering_registry.lower(fn, *pattern)(lower)


def intrinsic_builtin(name, doc, *overloads, typer=None, python=None, lower=None, keywords=()):
    """Define the public builtin *name* that is not a formula; returns the Python function.

    Either *overloads* (:class:`Overload`): each lists its parameter kinds and
    result type, its Python implementation and its lowering; a call is typed by
    the first overload of its arity whose parameters all match (converted to
    the :class:`Param`'s types), and a wrong one fails naming the given types,
    every accepted call and the parameter that does not fit.

    Or, for builtins whose parameters cannot be listed, *typer* (``typer(*argtypes)``
    -> a ``Signature`` of the converted types, or a ``TypingError`` that says
    why not), *python* (``python(*args)``) and *lower* (from
    :mod:`numba_sim.lowering`) for every call.

    In Python the builtin runs the implementation with NumPy's overflow warnings
    off (integer arithmetic wraps silently, as in compiled code); compiled, the
    lowering, on the CPU and the CUDA target.  Keyword arguments are rejected, unless
    *keywords* names the parameters (Warp's names): one tuple of names, or a tuple of
    alternatives, one per way of calling (``(("state", "xy", ...), ("state", "xyz", ...))``),
    of which a call uses the first that names its keywords.
    """
    if overloads:
        if any(x is not None for x in (typer, python, lower)):
            raise TypeError(f"{name}: give overloads, or typer, python and lower; not both")
        typer = _overloads_typer(name, overloads)
        python = _overloads_python(name, overloads)
        lowerings = [(o.converted_signature().args, o.lowering()) for o in overloads]
    else:
        if typer is None or python is None or lower is None:
            raise TypeError(f"{name}: without overloads, give typer, python and lower")
        lowerings = [((types.VarArg(types.Any),), lower)]

    def builtin(*args, **kwargs):
        if kwargs:
            args = fold_keywords(name, keyword_params(keywords, args, kwargs), args, kwargs)
        with np.errstate(over="ignore"):  # integer arithmetic wraps, as in compiled code
            return python(*args)

    builtin.__name__ = builtin.__qualname__ = name
    builtin.__module__ = "numba_sim"
    builtin.__doc__ = doc
    _register_intrinsic(builtin, name, typer, lowerings, keywords)
    return builtin


def compiled_helper(result, *params, lower=None):
    """Decorator for a plain Python function that intrinsic implementations call.

    The function keeps running as Python; compiled code calling it is typed
    ``result(*params)`` (arguments converted to the Numba types *params*) and
    lowered by *lower* (None: the function compiled for the target).
    """
    sig = signature(result, *params)

    def typer(*args):
        return sig if len(args) == len(params) else None

    def declare(fn):
        _register_intrinsic(fn, fn.__name__, typer,
                            [(params, lower if lower is not None else compiled(fn))])
        return fn

    return declare
