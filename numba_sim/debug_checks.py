"""Debug-mode checks (``sim.config.mode = "debug"``): generated Numba functions that
check an index against an array parameter's bounds before an access, and the
stored element for NaN after a store.

Compiled code cannot format a message, so a check raises ``(template, line, values...)``:
a template naming the kernel and the parameter, the source line of the access, and the
index (and extent). ``errors.debug_error`` turns that into a sentence with the source line
when the launch fails; on CUDA (constant exception arguments only) the template is raised
with the line filled in and no values.
"""

import functools

import numba
from numba.core import types
from numba.core.typing import signature

from numba_sim.operations import Variant, define, is_value


def has_no_nan(value):
    """True unless a float scalar or a component of a float value is NaN (compiled too)."""
    return bool(_has_no_nan_formula(None, _components(value)))


def _components(value):
    import numpy as np

    return list(np.asarray(value).reshape(-1))


def _has_no_nan_typer(*args):
    if len(args) != 1:
        return None
    (value,) = args
    if isinstance(value, (types.Float, types.Integer, types.Boolean)) or is_value(value):
        return signature(types.boolean, value)
    return None


def _has_no_nan_formula(sig, value):
    items = value if isinstance(value, list) else [value]
    if sig is not None:
        element = sig.args[0].dtype if is_value(sig.args[0]) else sig.args[0]
        if not isinstance(element, types.Float):
            return True
    result = items[0] == items[0]
    for item in items[1:]:
        result = result & (item == item)
    return result


define(has_no_nan, Variant(_has_no_nan_typer, _has_no_nan_formula), name="has_no_nan")


def _indices(count):
    return ", ".join(f"i{k}" for k in range(count))


@functools.cache
def index_check(where, name, count, target="cpu"):
    """``check(a, line, i0, ...)``: IndexError naming *where* and *name* when out of bounds;
    returns the index (``i0`` or the tuple), so that ``a[check(a, line, i)]`` is a checked
    load."""
    message = (f"{where}: index {{index}} is out of bounds for array parameter '{name}' "
               f"(extent {{extent}} in dimension {{dimension}})" if target == "cpu" else
               f"{where}: index out of bounds for array parameter '{name}'")
    lines = [f"def check(a, line, {_indices(count)}):"]
    for k in range(count):
        lines += [f"    if i{k} < 0 or i{k} >= a.shape[{k}]:",
                  f"        raise IndexError(MESSAGE, line, i{k}, a.shape[{k}], {k})"
                  if target == "cpu" else
                  "        raise IndexError(MESSAGE)"]  # numba-cuda: constant exception arguments
    lines.append(f"    return {_indices(count)}")
    return _compile(lines, message)


@functools.cache
def nan_check(where, name, count, target="cpu"):
    """``check(a, line, i0, ...)``: FloatingPointError naming *where* and *name* when a NaN
    was stored."""
    message = f"{where}: NaN stored in array parameter '{name}'" + \
        (" at index {index}" if target == "cpu" else "")
    index = _indices(count)
    lines = [f"def check(a, line, {index}):",
             f"    if not has_no_nan(a[{index}]):",
             f"        raise FloatingPointError(MESSAGE, line, ({index},))" if target == "cpu" else
             "        raise FloatingPointError(MESSAGE)"]
    return _compile(lines, message)


FIELDS = {IndexError: ("index", "extent", "dimension"), FloatingPointError: ("index",)}
"""What a check raises after (template, line): the values its template names."""


def _compile(lines, message):
    # A module name makes the check's environment cacheable: a cached launcher that
    # raises with runtime arguments needs it to box them (numba's Environment.can_cache).
    namespace = {"MESSAGE": message, "has_no_nan": has_no_nan, "__name__": __name__}
    exec("\n".join(lines) + "\n", namespace)
    return numba.njit(namespace["check"])


__all__ = ["has_no_nan", "index_check", "nan_check"]
