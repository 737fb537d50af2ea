"""Typing of every operation of :mod:`numba_sim.operations`, for both targets."""

from numba.core.errors import TypingError
from numba.core.typing.templates import AbstractTemplate

from numba_sim.operations import OPERATIONS, PARAMS_ATTRIBUTE, fold_keywords, python_signature
from numba_sim.registry import typing_registry

_typed_keys = set()


def _make_template(op):
    class OperationTemplate(AbstractTemplate):
        key = op.key

        def generic(self, args, kws):
            if not kws:
                sig, _ = op.resolve(args)
                return sig
            params = getattr(op.key, PARAMS_ATTRIBUTE, ())
            try:
                folded = fold_keywords(op.name, params, args, kws)
            except TypeError as e:
                raise TypingError(str(e)) from None
            sig, _ = op.resolve(folded)
            return None if sig is None else sig.replace(
                pysig=python_signature(params[:len(folded)]))

    OperationTemplate.__name__ = f"Typing_{op.name}"
    return OperationTemplate


def register_operations():
    """Declare typing for operations not yet declared (idempotent)."""
    for key, op in OPERATIONS.items():
        if key in _typed_keys:
            continue
        _typed_keys.add(key)
        typing_registry.register_global(key)(_make_template(op))
