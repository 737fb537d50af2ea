"""Helpers the generated adjoint code calls (numba_sim/autodiff/adjoint_source.py).

``zero_of(x)`` is a zero of ``x``'s type (a scalar, a vector, a matrix...: the type's null
constant), so that an adjoint starts as the zero of its value's type whatever that type is
(the adjoint source is generated before any typing).  It is a core Numba intrinsic, so it
compiles for the CPU and for CUDA; so is ``winner_adjoint``, the componentwise adjoint of
``atomic_min`` / ``atomic_max``.
"""

from numba.core import types
from numba.core.extending import intrinsic

from numba_sim import algebra
from numba_sim.lowering.operations import components, pack
from numba_sim.typing.random_state import RandomStateType
from numba_sim.typing.value_types import ValueType


def _plain(numba_type):
    """*numba_type* without literal values (an int literal's type is its integer type)."""
    literal_type = getattr(numba_type, "literal_type", None)
    return types.unliteral(numba_type) if literal_type is None else types.unliteral(literal_type)


@intrinsic
def zero_of(typingctx, value):
    result = _plain(value)
    if isinstance(result, (types.Array, types.NoneType)):
        return None

    def codegen(context, builder, signature, args):
        return context.get_constant_null(signature.return_type)

    return result(value), codegen


@intrinsic
def winner_adjoint(typingctx, held, value, adjoint):
    """*adjoint* where *held* equals *value* (or both are NaN), component by component, else
    0: the adjoint an ``atomic_min`` / ``atomic_max`` gives its value (Warp's rule: to the
    winning value, each component of a vector or matrix on its own)."""
    held, value, adjoint = (_plain(t) for t in (held, value, adjoint))
    if held != adjoint or not (isinstance(held, ValueType) or isinstance(held, types.Number)):
        return None

    def codegen(context, builder, signature, args):
        kinds = signature.args
        h, v, g = (components(context, builder, a, t) for a, t in zip(args, kinds))
        if not isinstance(h, list):
            h, v, g = [h], [v], [g]
        v = [x.cast_to(kinds[0].dtype if isinstance(kinds[0], ValueType) else kinds[0])
             for x in v]
        result = [algebra.select((a == b) | (algebra.is_nan(a) & algebra.is_nan(b)), c,
                                 algebra.zero_like(c)) for a, b, c in zip(h, v, g)]
        return pack(context, builder, result if isinstance(kinds[0], ValueType) else result[0],
                    signature.return_type)

    return adjoint(held, value, adjoint), codegen


HELPERS = {"__sim_zero_of": zero_of, "__sim_winner_adjoint": winner_adjoint}
"""The helpers by the names the generated adjoint source calls them."""


@intrinsic
def state_value(typingctx, state):
    """The uint32 a random state holds now."""
    if not isinstance(state, RandomStateType):
        return None

    def codegen(context, builder, signature, args):
        return builder.load(args[0])

    return types.uint32(state), codegen


@intrinsic
def set_state(typingctx, state, value):
    """Put the uint32 *value* back into the random state *state* (in place): a loop replayed
    by an adjoint draws the numbers it drew in the forward pass."""
    if not isinstance(state, RandomStateType) or not isinstance(value, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        builder.store(context.cast(builder, args[1], signature.args[1], types.uint32), args[0])
        return context.get_dummy_value()

    return types.none(state, value), codegen


HELPERS.update({"__sim_state_value": state_value, "__sim_set_state": set_state})
