"""Typing of component access on value types: ``v.x``, ``t.p``, ``v[i]``,
``m[i]`` (a row), ``m[i, j]``, constant slices (``v[1:]``, ``m[:, 0]``: a new vector or
matrix), ``len(v)``; the plain-Numba error for assigning to a component (compiled values
are immutable outside the kernel language); and the
type factories ``sim.types.vector`` / ``matrix`` / ``transformation`` called in compiled
code, where Warp makes them its anonymous constructors."""

import operator
import sys

import numpy as np
from numba.core import types
from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, signature

from numba_sim.operations import fail
from numba_sim.registry import install, typing_registry
from numba_sim import types as value_table
from numba_sim.types import KIND_MAT, KIND_VEC, attribute_slice, row_spec
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
    if isinstance(index, types.IntegerLiteral) and not -bound <= index.literal_value < bound:
        fail("[]", (value_type, index), f"index {index.literal_value} is out of range for "
                                        f"{value_type} (valid: {-bound} to {bound - 1}; a "
                                        "negative index counts from the end)")


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


def slice_positions(value_type, index):
    """The storage positions ``value[index]`` takes, shaped as the result, when *index* is a
    constant with a slice in it (``v[1:]``, ``v[::-1]``, ``m[1:]``, ``m[0, :2]``,
    ``m[:, 1]``); None for any other index.  Warp's slices are compile-time constants and
    give a new vector (matrix) of the components they select, any length >= 0."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(k, slice) for k in parts):
        return None
    spec = value_type.spec
    if not all(isinstance(k, (slice, int)) for k in parts) or len(parts) > len(spec.shape):
        fail("[]", (value_type,), f"{value_type} takes {len(spec.shape)} constant index(es) or "
                                  f"slice(s), not {index!r}")
    try:
        return np.arange(spec.size).reshape(spec.shape)[index]
    except IndexError as e:
        fail("[]", (value_type,), f"{index!r} is out of range for {value_type}: {e}")


def sliced_type(value_type, positions):
    """The vector or matrix type of a slice's *positions* (see :func:`slice_positions`)."""
    kind = KIND_VEC if positions.ndim == 1 else KIND_MAT
    shape = value_table.sliced_shape(positions.shape)
    return VALUE_TYPES[value_table.find_spec(kind, value_type.spec.dtype, shape)]


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
        sliced = slice_positions(value_type, index)
        if sliced is not None:
            return signature(sliced_type(value_type, sliced), *args)
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


TYPE_FACTORIES = ("vector", "matrix", "quaternion", "transformation")
"""The type factories of numba_sim.types that, called in a kernel, are the builtin of the
same name (Warp's rule: ``wp.types.vector(1.0, 2.0)`` in a kernel is ``wp.vector(1.0, 2.0)``,
a vec2f)."""


def factory_as_builtin(key):
    """A type factory called in a kernel (``sim.types.matrix(x, shape=(2, 2))``) is the
    builtin of its name (the typing below), and so is its adjoint (numba_sim.autodiff)."""
    for name in TYPE_FACTORIES:
        if key is getattr(value_table, name):
            return getattr(sys.modules["numba_sim"], name)
    return key


def type_factories_as_builtins(builtins):
    """Type each factory of :data:`TYPE_FACTORIES` in compiled code as the builtin of its name
    in *builtins* (the builtins package, whose ``__all__`` names them: ``numba_sim/__init__.py``
    calls this once they are registered); the builtin's lowering then serves the call."""
    declared = {id(value): numba_type for value, numba_type in typing_registry.globals}
    for name in TYPE_FACTORIES:
        if name in builtins.__all__:
            typing_registry.register_global(getattr(value_table, name),
                                            declared[id(getattr(builtins, name))])
    install()
