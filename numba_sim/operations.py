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


@dataclass
class Operation:
    key: object
    name: str
    variants: list

    def resolve(self, argtypes):
        """The (signature, variant) for *argtypes*, or (None, None)."""
        argtypes = tuple(types.unliteral(t) for t in argtypes)
        for variant in self.variants:
            sig = variant.typer(*argtypes)
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


def make_builtin(name, doc):
    """A public builtin function: runs as Python, typed and lowered from the table.

    The parameter names of the usage that starts *doc* (``"pow(x, y): ..."``) let the
    arguments be passed by keyword, as in Warp (``pow(y=4.0, x=2.0)``), in Python and in
    compiled code (:data:`PARAMS_ATTRIBUTE`)."""

    def builtin(*args, **kwargs):
        if kwargs:
            args = fold_keywords(name, params, args, kwargs)
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
    none or it has optional or variadic parts."""
    match = re.match(rf"{re.escape(name)}\(([^)]*)\)", doc or "")
    if match is None:
        return ()
    params = tuple(p.strip() for p in match.group(1).split(","))
    return params if all(p.isidentifier() for p in params) else ()


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
    return typeof(value)


def _to_components(value, numba_type):
    if isinstance(numba_type, ValueType):
        return [numba_type.spec.scalar_type(x) for x in value._components()]
    scalar_type = numpy_support.as_dtype(numba_type).type
    with np.errstate(all="ignore"):
        return scalar_type(value)


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
        raise TypeError(str(e)) from None
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


def _raise_unsupported(op, args):
    names = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"{op.name}() does not accept arguments of type ({names})")


def construct_python(cls, args):
    return apply_python(cls, args)
