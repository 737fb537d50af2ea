"""The operation table: every operator, constructor and builtin, defined once.

An operation is keyed by what user code calls (``operator.add``, a value-type
class, a builtin function such as :func:`numba_sim.dot`) and holds variants.
A variant is

* a *typer*: Numba argument types -> a Numba ``Signature`` (its argument types
  are the coerced ones: ``vec3 * 2.0`` types as ``(vec3, float32) -> vec3``),
  ``None`` when it does not apply, or a ``TypingError`` naming the types when
  the arguments are wrong in a way worth explaining;
* a *formula*: ``formula(sig, *args)`` over component lists
  (:mod:`numba_sim.algebra`).

From this one table :mod:`numba_sim.typing.operations` registers the typing,
:mod:`numba_sim.lowering.operations` the lowering (CPU and CUDA), and
:func:`apply_python` runs the same formula on NumPy scalars in Python.
"""

import inspect
import operator
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing.typeof import typeof
from numba.np import numpy_support

from numba_sim import scalar_rule
from numba_sim.types import KIND_VEC, type_repr
from numba_sim.typing.value_types import ValueType


@dataclass(frozen=True)
class Variant:
    """One typing rule and the formula that computes it.

    *lowering_pattern* is the tuple of Numba type classes under which the
    lowering is registered (``None``: any arguments, for keys that belong to
    numba_sim alone).
    """

    typer: Callable
    formula: Callable
    lowering_pattern: tuple = None
    literal_args: bool = False
    """Whether the typer sees int literals as literals (``Literal[int](3)``; the scalar
    rule's literals, see :func:`numba_sim.builtins.forms.common_scalar`) instead of their
    plain types."""


@dataclass
class Operation:
    key: object
    name: str
    variants: list

    def resolve(self, argtypes):
        """The (signature, variant) for *argtypes*, or (None, None)."""
        plain = tuple(types.unliteral(t) for t in argtypes)
        for variant in self.variants:
            sig = variant.typer(*(argtypes if variant.literal_args else plain))
            if sig is not None:
                return sig, variant
        return None, None


OPERATIONS = {}
"""key -> Operation, in definition order."""


def define(key, *variants, name=None):
    """Add *variants* to the operation keyed by *key* (created on first use)."""
    op = OPERATIONS.get(key)
    if op is None:
        op = OPERATIONS[key] = Operation(key, name or getattr(key, "__name__", str(key)), [])
    op.variants.extend(variants)
    return op


def make_builtin(name, doc, python=None):
    """A public builtin function: runs as Python, typed and lowered from the table.

    The parameter names of the usage that starts *doc* (``"pow(x, y): ..."``) let the
    arguments be passed by keyword, as in Warp (``pow(y=4.0, x=2.0)``), in Python and in
    compiled code (:data:`PARAMS_ATTRIBUTE`).  *python* (``python(*args)``), when given,
    runs the call in Python instead of the table's formula: Warp's builtins that update
    a Python value in place (``transform_set_translation``), which compiled code cannot."""

    def builtin(*args, **kwargs):
        if kwargs:
            args = fold_keywords(name, keyword_params(params, args, kwargs), args, kwargs)
        if python is not None:
            return python(*args)
        return apply_python(builtin, args)

    params = usage_params(name, doc)
    builtin.__name__ = builtin.__qualname__ = name
    builtin.__module__ = "numba_sim"
    builtin.__doc__ = doc
    setattr(builtin, PARAMS_ATTRIBUTE, params)
    return builtin


PARAMS_ATTRIBUTE = "__sim_params__"
"""The attribute of a builtin naming its parameters, for keyword arguments (empty: none)."""


def usage_params(name, doc):
    """The parameter names of the usage ``name(a, b)`` that starts *doc*, or () when there is
    none or it has optional or variadic parts.  Where more lines of *doc* start with another
    usage of other names (Warp's overloads name their parameters each their own way:
    ``transform_point(xform, point)``, ``transform_point(mat, point)``), a tuple of the
    alternatives (:func:`keyword_params` picks one per call)."""
    found = []
    for match in re.finditer(rf"^{re.escape(name)}\(([^)]*)\)", doc or "", re.MULTILINE):
        params = tuple(p.strip() for p in match.group(1).split(","))
        if not all(p.isidentifier() for p in params):
            if not found:
                return ()
            continue
        if params not in found:
            found.append(params)
    if len(found) <= 1:
        return found[0] if found else ()
    return tuple(found)


def keyword_params(params, args, kws):
    """The parameter names a call with *args* and keywords *kws* uses: *params* itself, or of
    its alternatives (see :func:`usage_params`) the first that names every keyword."""
    if not params or not isinstance(params[0], tuple):
        return params
    for candidate in params:
        if set(kws) <= set(candidate[len(args):]):
            return candidate
    return params[0]


def fold_keywords(name, params, args, kws):
    """*args* and *kws* as one positional tuple, in the order of *params* (parameter names,
    the optional ones last), or a TypeError naming what is wrong."""
    if not params:
        raise TypeError(f"{name}() takes no keyword arguments")
    if len(args) > len(params):
        raise TypeError(f"{name}() takes at most {len(params)} arguments "
                        f"({', '.join(params)}), {len(args)} given")
    folded = list(args)
    for param in params[len(args):]:
        if param not in kws:
            break
        folded.append(kws[param])
    used = set(params[:len(folded)])
    for key in kws:
        if key not in params:
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r} "
                            f"(parameters: {', '.join(params)})")
        if key in params[:len(args)]:
            raise TypeError(f"{name}() got multiple values for argument {key!r}")
        if key not in used:
            raise TypeError(f"{name}(): keyword argument {key!r} given without the arguments "
                            f"before it ({', '.join(params)})")
    return tuple(folded)


def python_signature(params):
    """The Python signature of positional-or-keyword *params* (a typing result's ``pysig``,
    so that Numba folds keyword arguments into place)."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter(p, kind) for p in params])


# --------------------------------------------------------------------------
# Helpers for typers


def is_value(t, *kinds):
    return isinstance(t, ValueType) and (not kinds or t.kind in kinds)


def is_scalar(t):
    return isinstance(t, (types.Integer, types.Float))


def type_names(argtypes):
    return ", ".join(str(t) for t in argtypes)


def fail(name, argtypes, reason):
    raise TypingError(f"{name}({type_names(argtypes)}): {reason}")


def _described(kind, shape):
    return f"vector of length {shape[0]}" if kind == KIND_VEC else f"matrix of shape {shape}"


def copy_shape_message(kind, shape, given):
    """Warp's sentence for a vector / matrix (*kind* KIND_VEC / KIND_MAT) of *shape* built from one
    of shape *given* (Warp names the shape asked for first)."""
    return (f"incompatible {_described(kind, shape)} given when copy constructing a "
            f"{_described(kind, given)}")


def value_count_message(kind, shape, count):
    """Warp's sentence for *count* values given to a vector / matrix of *shape*."""
    return (f"incompatible number of values given ({count}) when constructing a "
            f"{_described(kind, shape)}")


def scalar_for(value_type, scalar, name, argtypes):
    """The type *scalar* is coerced to when it meets *value_type*.

    Float value types take any int or float scalar (converted to their dtype,
    so ``vec3 * 0.5`` stays vec3 and a float32 meets vec3d as float64);
    integer value types take integer scalars only.
    """
    if isinstance(value_type.dtype, types.Integer) and not isinstance(scalar, types.Integer):
        fail(name, argtypes, f"an integer {value_type} combines with integer scalars "
                             f"only, not {scalar}")
    return value_type.dtype


# --------------------------------------------------------------------------
# Python execution


def _python_type(value):
    """The Numba type of a Python-mode argument, as compiled code types it: a Python int is
    an int literal (the scalar rule's: ``mul(2, 3)`` is int32, ``mul(i, 3)`` i's type)."""
    if type(value) is int and -2**63 <= value < 2**64:
        return types.literal(value)
    if type(value) is scalar_rule.FloatLiteral:  # a float literal of a func run as Python
        return types.float32
    return typeof(value)


def _to_components(value, numba_type):
    if isinstance(numba_type, ValueType):
        return [numba_type.spec.scalar_type(x) for x in value._components()]
    return scalar_rule.convert(value, numpy_support.as_dtype(numba_type).type)  # ints wrap


def from_components(result, numba_type):
    """Wrap a formula's result (Python mode) as an instance of *numba_type*."""
    if isinstance(numba_type, ValueType):
        return numba_type.python_class._from_components(result)
    if isinstance(numba_type, types.Boolean):
        return bool(result)
    if isinstance(numba_type, types.BaseTuple):
        return tuple(from_components(r, t) for r, t in zip(result, numba_type.types))
    return numpy_support.as_dtype(numba_type).type(result)


def apply_python(key, args):
    """Run the operation *key* on Python values with the compiled semantics."""
    op = OPERATIONS[key]
    try:
        argtypes = tuple(_python_type(a) for a in args)
    except ValueError:
        return NotImplemented if _is_operator(key) else _raise_unsupported(op, args)
    try:
        sig, variant = op.resolve(argtypes)
    except TypingError as e:
        if _is_operator(key) or isinstance(key, type):
            raise TypeError(str(e)) from None
        raise BuiltinArgumentError(f"{e}. {_warp_sentence(op, args)}") from None
    if sig is None:
        if _is_operator(key):
            return NotImplemented
        _raise_unsupported(op, args)
    components = [_to_components(a, t) for a, t in zip(args, sig.args)]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        result = variant.formula(sig, *components)
    return from_components(result, sig.return_type)


def _is_operator(key):
    return key in _OPERATOR_FUNCTIONS


_OPERATOR_FUNCTIONS = {f for f in vars(operator).values() if callable(f)}


class BuiltinArgumentError(TypeError, RuntimeError):
    """A builtin called in Python with arguments it does not take: a TypeError, and the
    RuntimeError Warp raises there, whose sentence ends the message."""


def _warp_sentence(op, args):
    """Warp's words for a Python call no overload takes (its types as Warp names them)."""
    names = ", ".join(type_repr(type(a)) for a in args)
    return f"Couldn't find a function '{op.name}' compatible with the arguments '{names}'"


def warp_type_name(numba_type):
    """A Numba type as Warp's messages name it (``float32``, ``vec3f``; an int literal
    ``int32``, its type in Warp); other types as Numba writes them."""
    if isinstance(numba_type, types.IntegerLiteral):
        return "int32" if scalar_rule.from_numba(numba_type).dtype == scalar_rule.INT32 \
            else str(types.unliteral(numba_type))
    numba_type = types.unliteral(numba_type)
    if isinstance(numba_type, ValueType):
        return type_repr(numba_type.python_class)
    if isinstance(numba_type, (types.Integer, types.Float, types.Boolean)):
        return type_repr(numpy_support.as_dtype(numba_type).type)
    return str(numba_type)


def compiled_warp_sentence(name, argtypes):
    """Warp's words for a kernel's call of builtin *name* that no overload takes."""
    return (f"Couldn't find function overload for '{name}' that matched inputs with types: "
            f"[{', '.join(warp_type_name(t) for t in argtypes)}]")


def _raise_unsupported(op, args):
    names = ", ".join(type(a).__name__ for a in args)
    if isinstance(op.key, type):
        raise TypeError(f"{op.name}() does not accept arguments of type ({names})")
    raise BuiltinArgumentError(f"{op.name}() does not accept arguments of type ({names}). "
                               f"{_warp_sentence(op, args)}")


def construct_python(cls, args):
    return apply_python(cls, args)
