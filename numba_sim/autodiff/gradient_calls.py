"""Warp's ``wp.grad(f)(*args)`` in kernels and funcs: the gradient of a scalar function.

``sim.grad(f)(x, y)`` is the adjoint of ``f`` at ``(x, y)`` seeded with 1: a tuple with one
gradient per argument, or the gradient alone when ``f`` takes one argument (Warp's rule).
``f`` is a ``@sim.func`` (its generated adjoint, or its ``@sim.func_grad``) or a builtin
(its adjoint, numba_sim/autodiff/op_adjoints.py); a local bound to ``sim.grad(f)`` names the
same gradient.  The kernel rewrite (kernel_language.py) turns the call into
``adjoint(*args, one_of(f(*args)))``: the forward call only gives the seed its type, and
Numba drops it.
"""

import ast

from numba.core import types
from numba.core.errors import TypingError
from numba.core.extending import intrinsic

from numba_sim import autodiff_hooks
from numba_sim.autodiff.adjoint_kernel import adjoint_func
from numba_sim.func_overloads import FuncOverloads
from numba_sim.kernel import Func


@intrinsic
def one_of(typingctx, value):
    """A one of the scalar *value*'s type (the seed of a gradient call)."""
    value = types.unliteral(value)
    if not isinstance(value, (types.Float, types.Integer)) or isinstance(value, types.Boolean):
        return None

    def codegen(context, builder, signature, args):
        return context.get_constant(signature.return_type, 1)

    return value(value), codegen


def gradient_call(function, args, node, helpers, error):
    """The expression of ``sim.grad(function)(*args)`` (ast nodes), registering the objects it
    calls in *helpers* (name -> object); *error(message, node)* makes the error to raise."""
    if isinstance(function, FuncOverloads):
        raise error("sim.grad(f): f is an overloaded func; the gradient of one overload is "
                    "not selected yet (call sim.grad of a single func)", node)
    if isinstance(function, Func):
        adjoint, array_positions, _ = adjoint_func(function)
        if array_positions:
            raise error(f"sim.grad({function.__name__}): a func with array parameters has no "
                        f"gradient of its own (Warp's grad takes scalar and value arguments)",
                        node)
    elif function is None:
        raise error("sim.grad(f): f must name a @sim.func or a builtin", node)
    else:
        try:
            adjoint = autodiff_hooks.adjoint_function(function)
        except TypingError as e:
            raise error(f"sim.grad({getattr(function, '__name__', function)}): {e}", node) \
                from None
    stem = f"__sim_gradient_{len(helpers)}"
    helpers[stem] = adjoint
    helpers[stem + "_of"] = function
    helpers["__sim_one_of"] = one_of
    forward = ast.Call(func=ast.Name(id=stem + "_of", ctx=ast.Load()), args=list(args),
                       keywords=[])
    seed = ast.Call(func=ast.Name(id="__sim_one_of", ctx=ast.Load()), args=[forward],
                    keywords=[])
    call = ast.Call(func=ast.Name(id=stem, ctx=ast.Load()), args=list(args) + [seed],
                    keywords=[])
    if len(args) == 1:
        call = ast.Subscript(value=call, slice=ast.Constant(0), ctx=ast.Load())
    return ast.fix_missing_locations(ast.copy_location(call, node))
