"""The builtin adjoints' derivation (the interface: numba_sim/autodiff/op_adjoints.py).

An adjoint function is an entry of the operation table (:func:`numba_sim.operations.define`)
whose formula runs the forward formula on traced scalars (:mod:`numba_sim.autodiff.trace`)
and sweeps the trace in reverse, unless :mod:`numba_sim.autodiff.op_overrides` holds a
hand-written adjoint for the variant.  Keys that the table does not hold but Numba types
itself (scalar arithmetic, casts) take their formulas from
:mod:`numba_sim.autodiff.op_scalars`; component access (getitem, attributes) has its
adjoints here, written as the scatter they are.
"""

import operator
import re
import threading

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing import signature
from numba.np import numpy_support

from numba_sim import algebra, registry
from numba_sim.autodiff import op_overrides
from numba_sim.autodiff.derivation import derive, is_differentiable
from numba_sim.autodiff.op_scalars import SCALAR_OPERATIONS, scalar_key
from numba_sim.builtins.forms import KEYWORD_FORM
from numba_sim.lowering import operations as operations_lowering
from numba_sim.lowering.operations import components as lowered_components
from numba_sim.lowering.symbolic import Sym
from numba_sim.operations import (
    OPERATIONS, Variant, _python_type, _to_components, define, from_components,
)
from numba_sim.types import attribute_slice
from numba_sim.typing import operations as operations_typing
from numba_sim.typing.value_access import attribute_type, factory_as_builtin, index_result
from numba_sim.typing.value_types import ValueType

ADJOINT_OF = "__sim_adjoint_of__"
"""The attribute of an adjoint function: the operation key (or attribute name) it
differentiates."""

_lock = threading.RLock()
_adjoints = {}


def no_adjoint_error(name, reason):
    return TypingError(f"numba_sim: no adjoint for builtin '{name}': {reason}")


def is_adjoint_function(fn):
    return hasattr(fn, ADJOINT_OF)


def adjoint_function(key):
    """The adjoint function of the operation *key* (made at the first call, then cached);
    a TypingError naming the builtin when it has none."""
    key = scalar_key(factory_as_builtin(key))
    with _lock:
        fn = _adjoints.get(("call", key))
        if fn is None:
            fn = _adjoints[("call", key)] = _define(key)
    return fn


def adjoint_attribute(name):
    """The adjoint function ``adj(value, adj_ret) -> (adj_value,)`` of ``value.<name>``."""
    with _lock:
        fn = _adjoints.get(("attribute", name))
        if fn is None:
            fn = _adjoints[("attribute", name)] = _define_attribute(name)
    return fn


# --------------------------------------------------------------------------
# The forward operation of a key: (signature, formula) for argument types


def _operation_name(key):
    """The builtin's name (an operator's function name: ``add``, ``neg``)."""
    op = OPERATIONS.get(key)
    if op is not None and op.name.isidentifier():
        return op.name
    return getattr(key, "__name__", None) or (op.name if op is not None else str(key))


def forward(key, argtypes, result_type=None):
    """The forward (signature, formula) of *key* for *argtypes*, or (None, None).  A builtin
    with compile-time keywords (``vector(s, length=3)``, :data:`KEYWORD_FORM`) is typed again
    with the keywords its *result_type* (the type of the result adjoint) implies."""
    keyword_form = getattr(key, KEYWORD_FORM, None)
    if keyword_form is not None:
        return _keyword_forward(keyword_form, argtypes, result_type)
    op = OPERATIONS.get(key)
    if op is not None:
        sig, variant = op.resolve(argtypes)
        if sig is not None:
            if variant.formula is None:
                raise no_adjoint_error(op.name, f"the variant for ({_names(argtypes)}) has no "
                                                "formula")
            return sig, variant.formula
    scalar = SCALAR_OPERATIONS.get(key)
    if scalar is not None:
        return scalar(argtypes)
    return None, None


def _keyword_forward(keyword_form, argtypes, result_type):
    """(signature, formula) of a keyword builtin's call of *argtypes* that made a
    *result_type*: the keywords ``length`` / ``shape`` / ``dtype`` are read off the result,
    which is the same call (a keyword only fixes what the values do not)."""
    keywords, typer, formula = keyword_form
    if not isinstance(result_type, ValueType):
        return None, None
    shape = result_type.spec.shape
    implied = {"length": types.literal(shape[0]),
               "shape": types.Tuple([types.literal(n) for n in shape]),
               "dtype": types.NumberClass(result_type.dtype)}
    try:
        sig = typer(tuple(argtypes), {k: implied[k] for k in keywords if k in implied})
    except TypingError:
        return None, None
    if sig is None or sig.return_type != result_type:
        return None, None
    return sig, formula


def _names(argtypes):
    return ", ".join(str(t) for t in argtypes)


def _has_adjoint(key):
    return key in OPERATIONS or key in SCALAR_OPERATIONS or key is operator.getitem \
        or hasattr(key, KEYWORD_FORM)


# --------------------------------------------------------------------------
# Types: what an argument's adjoint is


def adjoint_type(argtype):
    """The Numba type of an argument's adjoint: its own (unliteral) type; None for
    compile-time constants that are not numbers (dtypes)."""
    argtype = types.unliteral(argtype)
    if isinstance(argtype, (ValueType, types.Number, types.Boolean)):
        return argtype
    if isinstance(argtype, types.BaseTuple):
        return types.Tuple([adjoint_type(t) for t in argtype.types])
    return types.none


def _has_float_component(result_type):
    """Whether a result (a value, a scalar or a tuple of them) has a float component."""
    if isinstance(result_type, types.BaseTuple):
        return any(_has_float_component(t) for t in result_type.types)
    return is_differentiable(result_type)


def _check_result_adjoint(name, result_type, given):
    given = types.unliteral(given)
    if isinstance(result_type, (types.Number, types.Boolean)) and \
            isinstance(given, (types.Number, types.Boolean)):
        return
    if given != result_type:
        raise TypingError(f"adj_{name}: the result adjoint must be of the result type "
                          f"{result_type}, got {given}")


def _adjoint_signature(name, forward_sig, adj_ret):
    _check_result_adjoint(name, forward_sig.return_type, adj_ret)
    argtypes = tuple(forward_sig.args)  # literals kept: identity(3, float32) needs its 3
    result = types.Tuple([adjoint_type(t) for t in argtypes])
    return signature(result, *argtypes, forward_sig.return_type)


# --------------------------------------------------------------------------
# Formula inputs and outputs


def _split(value, numba_type):
    """A formula input: tuples (a lowered tuple is one Sym) as lists of their items."""
    if isinstance(numba_type, types.BaseTuple):
        if isinstance(value, Sym):
            return [_split(lowered_components(value.context, value.builder,
                                              value.builder.extract_value(value.value, i), t), t)
                    for i, t in enumerate(numba_type.types)]
        return [_split(v, t) for v, t in zip(value, numba_type.types)]
    return value


def _zero_adjoint(value, numba_type):
    """The zero adjoint of an argument *value* (formula components) of *numba_type*."""
    if isinstance(numba_type, types.BaseTuple):
        return [_zero_adjoint(v, t) for v, t in zip(value, numba_type.types)]
    if adjoint_type(numba_type) == types.none:
        return _none_value(value)
    if isinstance(value, list):
        return [algebra.zero_like(x) for x in value]
    if isinstance(value, Sym) and isinstance(value.type, types.Literal):  # identity's 3
        value = value.cast_to(types.unliteral(value.type))
    return algebra.zero_like(value)


def _none_value(value):
    if isinstance(value, Sym):
        return value.context.get_dummy_value()
    return None


def _python_components(value, numba_type):
    if isinstance(numba_type, types.BaseTuple):
        return [_python_components(v, t) for v, t in zip(value, numba_type.types)]
    if isinstance(numba_type, (ValueType, types.Number, types.Boolean)):
        return _to_components(value, numba_type)
    return value


def _python_result(result, numba_type):
    if numba_type == types.none:
        return None
    if isinstance(numba_type, types.BaseTuple):
        return tuple(_python_result(r, t) for r, t in zip(result, numba_type.types))
    return from_components(result, numba_type)


def _python_runner(name):
    """The Python-mode body of an adjoint function (NumPy scalars, value instances)."""
    def run(*args):
        op = OPERATIONS[fn]
        sig, variant = op.resolve(tuple(_python_type(a) for a in args))
        if sig is None:
            raise TypeError(f"adj_{name}() does not accept arguments of type "
                            f"({', '.join(type(a).__name__ for a in args)})")
        inputs = [_python_components(a, t) for a, t in zip(args, sig.args)]
        with np.errstate(all="ignore"):
            result = variant.formula(sig, *inputs)
        return _python_result(result, sig.return_type)

    fn = run
    fn.__name__ = fn.__qualname__ = _public_name(name)
    fn.__module__ = __name__
    globals()[fn.__name__] = fn  # Numba's typing keys a function by its global name
    return fn


def _public_name(name):
    """A free module-global name ``adj_<name>`` (made an identifier; numbered if taken)."""
    base = "adj_" + re.sub(r"\W", "_", name)
    candidate, number = base, 1
    while candidate in globals():
        number += 1
        candidate = f"{base}_{number}"
    return candidate


def _register(fn, typer, formula, name, marker):
    setattr(fn, ADJOINT_OF, marker)
    fn.__doc__ = f"adj_{name}(*args, adj_ret): the adjoint of {name} (numba_sim.autodiff)."
    define(fn, Variant(typer, formula, literal_args=True), name=f"adj_{name}")
    operations_typing.register_operations()
    operations_lowering.register_operations()
    registry.install()
    return fn


# --------------------------------------------------------------------------
# Derived adjoints of operations


_traceable = {}


def _sample(numba_type):
    """Ones of *numba_type* as formula components (Python mode)."""
    if isinstance(numba_type, types.BaseTuple):
        return [_sample(t) for t in numba_type.types]
    if isinstance(numba_type, ValueType):
        return [numba_type.spec.scalar_type(1)] * numba_type.size
    if isinstance(numba_type, (types.Number, types.Boolean)):
        return numpy_support.as_dtype(numba_type).type(1)
    return None


def _check_traceable(key, name, forward_sig, formula):
    """A TypingError naming the builtin when its formula for *forward_sig* is not made of
    the traced algebra (a call into native code), found by deriving it once on ones in
    Python (cached per signature)."""
    marker = (key, forward_sig)
    if marker in _traceable or op_overrides.find(key, forward_sig) is not None \
            or not any(is_differentiable(t) for t in forward_sig.args) \
            or not _has_float_component(forward_sig.return_type):
        return
    inputs = [_sample(t) for t in forward_sig.args]
    try:
        with np.errstate(all="ignore"):
            derive(forward_sig, formula, inputs, _sample(forward_sig.return_type))
    except (TypeError, AttributeError, ValueError) as e:
        raise no_adjoint_error(name, f"its formula for ({_names(forward_sig.args)}) "
                                     f"({getattr(formula, '__name__', formula)}) computes "
                                     f"outside numba_sim's algebra ({e})") from None
    _traceable[marker] = True


def _define(key):
    if not _has_adjoint(key):
        raise no_adjoint_error(_operation_name(key), "it is not a formula of the operation "
                               "table (an intrinsic builtin such as a random or atomic "
                               "function, or not a numba_sim operation)")
    if key is operator.getitem:
        return _define_getitem()
    name = _operation_name(key)

    def typer(*argtypes):
        if not argtypes:
            return None
        forward_sig, forward_formula = forward(key, argtypes[:-1], types.unliteral(argtypes[-1]))
        if forward_sig is None:
            return None
        sig = _adjoint_signature(name, forward_sig, argtypes[-1])
        _check_traceable(key, name, signature(forward_sig.return_type, *sig.args[:-1]),
                         forward_formula)
        return sig

    def formula(sig, *inputs):
        forward_types = sig.args[:-1]
        inputs = [_split(x, t) for x, t in zip(inputs, sig.args)]
        forward_sig, forward_formula = forward(key, forward_types, sig.args[-1])
        forward_sig = signature(forward_sig.return_type, *forward_types)
        args, adj_ret = inputs[:-1], inputs[-1]
        override = op_overrides.find(key, forward_sig)
        if override is not None:
            adjoints = override(forward_sig, *args, adj_ret)
        elif not any(is_differentiable(t) for t in forward_types) \
                or not _has_float_component(forward_sig.return_type):
            adjoints = [None] * len(args)
        else:
            adjoints = derive(forward_sig, forward_formula, args, adj_ret)
        return [_zero_adjoint(x, t) if g is None or not is_differentiable(t) else g
                for x, g, t in zip(args, adjoints, forward_types)]

    return _register(_python_runner(name), typer, formula, name, key)


# --------------------------------------------------------------------------
# Component access


def _index_matches(index, position, bound):
    """Whether the (runtime or constant) *index* names *position* of a dimension of
    *bound* entries (a negative index counts from the end)."""
    return (index == position) | (index == position - bound)


def _scatter(value, positions, adj_ret):
    """The adjoint of reading *positions* of *value*: *adj_ret* there, zero elsewhere
    (*positions*: storage index -> (condition, index into adj_ret or None))."""
    out = []
    for k, x in enumerate(value):
        zero = algebra.zero_like(x)
        contribution = zero
        for condition, source in positions.get(k, ()):
            g = adj_ret if source is None else adj_ret[source]
            contribution = contribution + algebra.select(condition, g, zero)
        out.append(contribution)
    return out


def _getitem_positions(value_type, index):
    spec = value_type.spec
    if isinstance(index, list):  # m[i, j]
        rows, cols = spec.shape
        return {r * cols + c: [(_index_matches(index[0], r, rows)
                                & _index_matches(index[1], c, cols), None)]
                for r in range(rows) for c in range(cols)}
    if len(spec.shape) == 2:  # a row
        rows, cols = spec.shape
        return {r * cols + c: [(_index_matches(index, r, rows), c)]
                for r in range(rows) for c in range(cols)}
    return {k: [(_index_matches(index, k, spec.size), None)] for k in range(spec.size)}


def _define_getitem():
    def typer(*argtypes):
        if len(argtypes) != 3 or not isinstance(argtypes[0], ValueType):
            return None
        value_type, index, adj_ret = argtypes
        result = index_result(value_type, types.unliteral(index)
                              if not isinstance(index, types.BaseTuple)
                              else types.Tuple([types.unliteral(i) for i in index]))
        if result is None:
            return None
        return _adjoint_signature("getitem", signature(result, value_type, index), adj_ret)

    def formula(sig, value, index, adj_ret):
        value_type, index_type = sig.args[0], sig.args[1]
        index = _split(index, index_type)
        positions = _getitem_positions(value_type, index)
        return [_scatter(value, positions, adj_ret), _zero_adjoint(index, index_type)]

    return _register(_python_runner("getitem"), typer, formula, "getitem", operator.getitem)


def _define_attribute(attr):
    def typer(*argtypes):
        if len(argtypes) != 2 or not isinstance(argtypes[0], ValueType):
            return None
        value_type, adj_ret = argtypes
        result = attribute_type(value_type, attr)
        if result is None:
            return None
        return _adjoint_signature(f"attribute_{attr}", signature(result, value_type), adj_ret)

    def formula(sig, value, adj_ret):
        start, stop, result_spec = attribute_slice(sig.args[0].spec, attr)
        true = np.bool_(True)
        positions = {k: [(true, None if result_spec is None else k - start)]
                     for k in range(start, stop)}
        return [_scatter(value, positions, adj_ret)]

    return _register(_python_runner(f"attribute_{attr}"), typer, formula,
                     f"attribute_{attr}", ("attribute", attr))


# --------------------------------------------------------------------------
# Coverage (for tests and docs)


def operation_keys():
    """The keys of the operation table that are operations (not adjoint functions)."""
    return [key for key in OPERATIONS if not is_adjoint_function(key)]


__all__ = ["adjoint_function", "adjoint_attribute", "derive", "factory_as_builtin", "forward",
           "is_adjoint_function", "KEYWORD_FORM",
           "no_adjoint_error", "operation_keys", "ADJOINT_OF"]
