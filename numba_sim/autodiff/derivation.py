"""Deriving an adjoint from a formula: trace it on watched inputs, sweep the trace back.

Shared by the table's derived adjoints (:mod:`numba_sim.autodiff.op_derived`) and the
overrides that derive from a restated algorithm (:mod:`numba_sim.autodiff.op_overrides`).
"""

from numba.core import types

from numba_sim.autodiff import trace
from numba_sim.typing.value_types import ValueType


def is_differentiable(argtype):
    argtype = types.unliteral(argtype)
    if isinstance(argtype, ValueType):
        return isinstance(argtype.dtype, types.Float)
    return isinstance(argtype, types.Float)


def derive(forward_sig, formula, inputs, adj_ret):
    """The adjoints of *inputs* (formula components) of ``formula(forward_sig, *inputs)``
    given the result adjoint *adj_ret*, by tracing the formula and sweeping it in reverse."""
    with trace.Tape() as tape:
        traced = [trace.watch(x, is_differentiable(t))
                  for x, t in zip(inputs, forward_sig.args)]
        outputs = formula(forward_sig, *traced)
    return trace.gradients(outputs, adj_ret, traced, tape)
