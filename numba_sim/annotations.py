"""A kernel's or func's names and annotations, read as Warp reads them.

A function's string annotations (``def k(a: "sim.array(dtype=dtype)")``, or every annotation
under ``from __future__ import annotations``) are evaluated with its globals and, over them,
the variables of its closure: a kernel made by a factory names the factory's arguments in
its annotations, as Warp allows (Python's ``inspect.get_annotations`` sees only the
globals).
"""

import inspect


def function_namespace(fn):
    """*fn*'s globals with its closure variables over them (empty cells left out)."""
    namespace = dict(fn.__globals__)
    namespace.update(closure_variables(fn))
    return namespace


def closure_variables(fn):
    """*fn*'s closure variables by name (empty cells left out: defined later in the
    enclosing function)."""
    variables = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            variables[name] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    return variables


def function_annotations(fn):
    """*fn*'s annotations, strings evaluated with its globals and closure variables."""
    code = getattr(fn, "__code__", None)
    if code is None:  # not a Python function (a class, a builtin): Python's own reading
        return inspect.get_annotations(fn, eval_str=True)
    return inspect.get_annotations(fn, globals=fn.__globals__, locals=closure_variables(fn),
                                   eval_str=True)
