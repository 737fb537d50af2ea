"""Typing of component access on value types: ``v.x``, ``t.p``, ``v[i]``,
``m[i]`` (a row), ``m[i, j]``, ``len(v)``; and the plain-Numba error for
assigning to a component (values are immutable outside the kernel language)."""

import operator

from numba.core import types
from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, signature

from numba_sim.operations import fail
from numba_sim.registry import typing_registry
from numba_sim.types import KIND_MAT, attribute_slice, row_spec
from numba_sim.typing.value_types import VALUE_TYPES, ValueType


def attribute_type(value_type, attr):
    """The Numba type of ``value.attr``, or None."""
    found = attribute_slice(value_type.spec, attr)
    if found is None:
        return None
    result_spec = found[2]
    return value_type.dtype if result_spec is None else VALUE_TYPES[result_spec]


@typing_registry.register_attr
class ValueAttributes(AttributeTemplate):
    key = ValueType

    def generic_resolve(self, value_type, attr):
        return attribute_type(value_type, attr)


def _check_literal(value_type, index, bound):
    if isinstance(index, types.IntegerLiteral) and not 0 <= index.literal_value < bound:
        fail("[]", (value_type, index), f"index {index.literal_value} is out of range for "
                                        f"{value_type} (valid: 0 to {bound - 1})")


def index_result(value_type, index):
    """The Numba type of ``value[index]`` (None if not an index of this value)."""
    spec = value_type.spec
    if isinstance(index, types.Integer):
        _check_literal(value_type, index, spec.shape[0])
        return VALUE_TYPES[row_spec(spec)] if spec.kind == KIND_MAT else value_type.dtype
    if isinstance(index, types.BaseTuple) and len(index) == 2 \
            and all(isinstance(i, types.Integer) for i in index):
        if spec.kind != KIND_MAT:
            fail("[]", (value_type, index), f"{value_type} takes one index, not two")
        for i, bound in zip(index, spec.shape):
            _check_literal(value_type, i, bound)
        return value_type.dtype
    return None


@typing_registry.register_global(operator.getitem)
class ValueGetItem(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) == 2 and isinstance(args[0], ValueType):
            result = index_result(args[0], args[1])
            if result is not None:
                return signature(result, *args)
        return None


@typing_registry.register
class ValueStaticGetItem(AbstractTemplate):
    """Constant indices (``v[3]``, ``m[1, 3]``): range-checked at compile time.

    Valid ones return None and fall through to the getitem typing above (the
    generic getitem may see the index unliteraled and cannot check it).
    """

    key = "static_getitem"

    def generic(self, args, kws):
        value_type, index = args
        if not isinstance(value_type, ValueType):
            return None
        if isinstance(index, int):
            index_result(value_type, types.IntegerLiteral(index))
        elif isinstance(index, tuple) and all(isinstance(i, int) for i in index):
            index_result(value_type, types.Tuple([types.IntegerLiteral(i) for i in index]))
        return None


@typing_registry.register_global(operator.setitem)
class ValueSetItem(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) == 3 and isinstance(args[0], ValueType):
            value_type = args[0]
            fail("[]=", args, f"{value_type} values are immutable in plain Numba code: build a "
                              f"new value instead (e.g. {value_type}(...) with the changed "
                              "component); component assignment works inside @sim.kernel and "
                              "@sim.func")
        return None


@typing_registry.register_global(len)
class ValueLen(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) == 1 and isinstance(args[0], ValueType):
            return signature(types.intp, *args)
        return None
