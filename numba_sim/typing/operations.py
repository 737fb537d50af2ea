"""Typing of every operation of :mod:`numba_sim.operations`, for both targets."""

from numba.core.errors import TypingError
from numba.core.typing.templates import AbstractTemplate

from numba_sim.operations import (
    OPERATIONS, PARAMS_ATTRIBUTE, compiled_warp_sentence, fold_keywords, keyword_params,
    python_signature,
)
from numba_sim.registry import typing_registry

_typed_keys = set()


def _make_template(op):
    class OperationTemplate(AbstractTemplate):
        key = op.key
        prefer_literal = True  # int literals reach the variants that take them (literal_args)

        def generic(self, args, kws):
            try:
                return self._generic(args, kws)
            except TypingError as e:
                if callable(op.key) and not isinstance(op.key, type) \
                        and getattr(op.key, "__module__", None) == "numba_sim":
                    # a builtin: Warp's sentence too, after numba_sim's reason
                    raise TypingError(f"{e}. {compiled_warp_sentence(op.name, args)}") from None
                raise

        def _generic(self, args, kws):
            if not kws:
                sig, _ = op.resolve(args)
                return sig
            params = keyword_params(getattr(op.key, PARAMS_ATTRIBUTE, ()), args, kws)
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
