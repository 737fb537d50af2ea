"""``@sim.func_grad(f)`` and ``@sim.func_replay(f)``: a func's adjoint or replay written by
hand, as Warp's.

A custom adjoint takes the func's parameters, then the adjoint of its result, and adds
into ``sim.adjoint[x]`` the adjoint of each parameter ``x`` (Warp's spelling)::

    @sim.func_grad(square)
    def adj_square(x: float, adj_ret: float):
        sim.adjoint[x] += 2.0 * x * adj_ret

It is compiled as a func that returns the parameters' adjoints (each starts as a zero of
its parameter's type), and replaces the generated adjoint of ``f`` everywhere ``f`` is
differentiated.  A custom replay has ``f``'s signature and replaces calls of ``f`` in the
forward replay of adjoints (a cheaper recomputation, or one without side effects).
"""

import ast

from numba_sim import arrays, kernel_language
from numba_sim.annotations import function_annotations
from numba_sim.autodiff.adjoint_kernel import _compile_source, _Function, _Helpers
from numba_sim.autodiff.adjoint_source import ZERO, _indent
from numba_sim.func_overloads import FuncOverloads, annotations_of
from numba_sim.kernel import Func, func


class _AdjointOf:
    """``sim.adjoint``: only meaningful inside a ``@sim.func_grad`` body."""

    def __getitem__(self, name):
        raise TypeError("sim.adjoint[x] is written inside a @sim.func_grad function only")

    def __repr__(self):
        return "sim.adjoint"


adjoint = _AdjointOf()


def _check_func(f, decorator):
    if not isinstance(f, (Func, FuncOverloads)):
        raise TypeError(f"@sim.{decorator}(f): f: expected a @sim.func, got {f!r}")


def _member(f, fn, decorator):
    """The func *fn* customizes: *f*, or, for an overloaded func, the overload whose
    parameter annotations are *fn*'s first ones (as Warp picks it)."""
    if isinstance(f, Func):
        return f
    given = annotations_of(fn)
    for member in f.members:
        own = annotations_of(member)
        if given[:len(own)] == own:
            return member
    raise TypeError(f"@sim.{decorator}({f.__name__}) {fn.__qualname__}: no overload of "
                    f"{f.__name__} has the annotations of its first parameters; the "
                    f"overloads are {f.describe()}")


def func_grad(f):
    """Decorator: the custom adjoint of the ``@sim.func`` *f* (see the module docstring);
    for an overloaded func, of the overload with *fn*'s leading annotations."""
    _check_func(f, "func_grad")

    def decorate(fn):
        f_ = _member(f, fn, "func_grad")
        made = _compiled_custom_adjoint(f_, fn)
        f_._sim_custom_adjoint = made
        f_.__dict__.pop("_sim_adjoints", None)
        return fn

    return decorate


def func_replay(f):
    """Decorator: the custom forward replay of the ``@sim.func`` *f*."""
    _check_func(f, "func_replay")

    def decorate(fn):
        _member(f, fn, "func_replay")._sim_custom_replay = func(fn)
        return fn

    return decorate


def _is_adjoint_subscript(node):
    value = node.value
    return isinstance(node, ast.Subscript) and (
        (isinstance(value, ast.Name) and value.id == "adjoint")
        or (isinstance(value, ast.Attribute) and value.attr == "adjoint"))


def _compiled_custom_adjoint(f, fn):
    forward = [a.arg for a in _Function(f.func).definition.args.args]
    function = _Function(fn)
    params = function.parameters
    if params[:len(forward)] != forward:
        raise TypeError(f"@sim.func_grad({f.__name__}) {fn.__qualname__}: its first parameters "
                        f"must be {f.__name__}'s ({', '.join(forward)}), then the adjoint of "
                        f"the result; got ({', '.join(params)})")
    definition = function.definition

    class Rewriter(ast.NodeTransformer):
        def visit_Subscript(self, node):
            if _is_adjoint_subscript(node):
                return ast.copy_location(_adjoint_of(node.slice, node.ctx), node)
            return self.generic_visit(node)

    def _adjoint_of(target, ctx):
        """``adj__x`` for ``sim.adjoint[x]``; ``adj__x.field`` for a field of a struct
        parameter, ``sim.adjoint[x.field]`` (also nested: ``x.a.b``)."""
        if isinstance(target, ast.Name) and target.id in forward:
            return ast.Name(id=f"adj__{target.id}", ctx=ctx)
        if isinstance(target, ast.Attribute):
            return ast.Attribute(value=_adjoint_of(target.value, ast.Load()), attr=target.attr,
                                 ctx=ctx)
        raise kernel_language._error(
            f"sim.adjoint[...] takes one of {f.__name__}'s parameters ({', '.join(forward)}) "
            "or a field of one", fn, target)

    body = [Rewriter().visit(s) for s in definition.body]
    name = f"{fn.__name__}__custom_adjoint"
    results_adjoints = params[len(forward):]
    if len(results_adjoints) > 1:
        # Warp's form for a func returning a tuple: one parameter per result (adj_ret0,
        # adj_ret1, ...); the adjoint is called with the tuple of them
        lines = [f"def {name}({', '.join(forward + ['adj__result__'])}):"]
        lines += _indent([f"{', '.join(results_adjoints)} = adj__result__"])
    else:
        lines = [f"def {name}({', '.join(params)}):"]
    annotations = function_annotations(fn)
    # an array parameter has no adjoint of its own (its elements' are the arrays' gradients):
    # a placeholder the caller drops
    lines += _indent([f"adj__{p} = 0" if isinstance(annotations.get(p), arrays.array)
                      else f"adj__{p} = {ZERO}({p})" for p in forward])
    # a compound statement (if, for) unparses to several lines: indent each of them
    lines += _indent([line for s in body
                      for line in ast.unparse(ast.fix_missing_locations(s)).splitlines()])
    results = ", ".join(f"adj__{p}" for p in forward)
    lines += _indent([f"return ({results}{',' if len(forward) == 1 else ''})"])
    helpers = _Helpers()
    made = func(_compile_source(fn, name, lines, helpers))
    array_positions = ()
    return made, array_positions, ()


__all__ = ["adjoint", "func_grad", "func_replay"]
