"""Lowering of every operation of :mod:`numba_sim.operations`, for both targets.

Arguments are split into component :class:`~numba_sim.lowering.symbolic.Sym`
lists, the operation's formula runs on them (emitting IR), and the result is
packed back into the return type's data model.
"""

from numba.core import cgutils, types

from numba_sim.lowering.symbolic import Sym, llvm_value
from numba_sim.operations import OPERATIONS
from numba_sim.registry import lowering_registry
from numba_sim.typing.value_types import ValueType

_lowered = set()


def components(context, builder, value, numba_type):
    """A value as formula input: a list of Syms (value types) or one Sym."""
    if isinstance(numba_type, ValueType):
        return [Sym(context, builder, numba_type.dtype, builder.extract_value(value, i))
                for i in range(numba_type.size)]
    return Sym(context, builder, numba_type, value)


def pack(context, builder, result, numba_type):
    """A formula's result as an LLVM value of *numba_type*."""
    if isinstance(numba_type, ValueType):
        out = cgutils.get_null_value(context.get_value_type(numba_type))
        for i, component in enumerate(result):
            out = builder.insert_value(out, llvm_value(context, numba_type.dtype, component), i)
        return out
    if isinstance(numba_type, types.BaseTuple):
        items = [pack(context, builder, r, t) for r, t in zip(result, numba_type.types)]
        return context.make_tuple(builder, numba_type, items)
    if isinstance(result, Sym) and result.type != numba_type:
        result = result.cast_to(numba_type)
    return llvm_value(context, numba_type, result)


def _make_lowering(op):
    def lower_operation(context, builder, sig, args):
        resolved, variant = op.resolve(sig.args)
        assert resolved is not None and resolved.return_type == sig.return_type, (op.name, sig)
        inputs = [components(context, builder, a, t) for a, t in zip(args, sig.args)]
        result = variant.formula(sig, *inputs)
        return pack(context, builder, result, sig.return_type)

    lower_operation.__name__ = f"lower_{op.name}"
    return lower_operation


def register_operations():
    """Register lowering for operation variants not yet registered (idempotent)."""
    for key, op in OPERATIONS.items():
        impl = _make_lowering(op)
        for variant in op.variants:
            pattern = variant.lowering_pattern
            marker = (key, pattern)
            if marker in _lowered:
                continue
            _lowered.add(marker)
            if pattern is None:
                lowering_registry.lower(key, types.VarArg(types.Any))(impl)
            else:
                lowering_registry.lower(key, *pattern)(impl)
