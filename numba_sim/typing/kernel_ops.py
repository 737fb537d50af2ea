"""Typing of the kernel language's operators and component-assignment helpers
(see numba_sim/kernel_ops.py for their semantics).

Two scalar operands meet at the type of the kernel language's scalar rule
(numba_sim/scalar_rule.py), which Python mode applies too; an operator that
does not take the operands' types is a TypingError with the rule's message.
"""

import operator

from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing.templates import AbstractTemplate, signature
from numba.np import numpy_support

from numba_sim import kernel_ops, scalar_rule
from numba_sim.registry import typing_registry
from numba_sim.types import KIND_MAT, attribute_slice, row_spec
from numba_sim.typing.structs import StructType
from numba_sim.typing.value_types import VALUE_TYPES, ValueType


def _check(name, a, b):
    """Raise the rule's TypingError when operator *name* does not take Scalars *a* and *b*."""
    message = scalar_rule.operator_error(name, a.dtype, b.dtype)
    if message is not None:
        raise TypingError(message)


def binary_signature(context, name, a, b):
    """(signature, is_scalar) of the kernel operator *name* on (a, b)."""
    a_scalar, b_scalar = scalar_rule.from_numba(a), scalar_rule.from_numba(b)
    if a_scalar is not None and b_scalar is not None:
        _check(name, a_scalar, b_scalar)
        common = numpy_support.from_dtype(scalar_rule.common_dtype(a_scalar, b_scalar))
        return signature(common, common, common), True
    sig = context.resolve_function_type(kernel_ops.BINARY[name], (a, b), {})
    return sig, False


def _binary_template(name, function):
    class KernelBinary(AbstractTemplate):
        key = function
        prefer_literal = True  # see int literals as literals (Numba tries unliteral types first)

        def generic(self, args, kws):
            if kws or len(args) != 2:
                return None
            return binary_signature(self.context, name, *args)[0]

    KernelBinary.__name__ = f"KernelOp_{name}"
    return KernelBinary


for _name in kernel_ops.BINARY:
    _function = getattr(kernel_ops, _name)
    typing_registry.register_global(_function)(_binary_template(_name, _function))


@typing_registry.register_global(kernel_ops.neg)
class KernelNeg(AbstractTemplate):
    prefer_literal = True

    def generic(self, args, kws):
        (a,) = args
        scalar = scalar_rule.from_numba(a)
        if scalar is not None:  # an int literal has its natural type (int32 unless too large)
            result = numpy_support.from_dtype(scalar.dtype)
            return signature(result, result)
        return self.context.resolve_function_type(operator.neg, args, {})


# --------------------------------------------------------------------------
# Component assignment


def _literal_string(t, what):
    if not isinstance(t, types.StringLiteral):
        raise TypingError(f"{what} must be a constant string")
    return t.literal_value


def component_type(container, key):
    """The type of ``container[key]`` / ``container.key`` for value types and structs."""
    if isinstance(container, StructType):
        field = container.field_type(key) if isinstance(key, str) else None
        if field is None:
            raise TypingError(f"{container.python_class.__name__} has no field {key!r}")
        return field
    spec = container.spec
    if isinstance(key, str):
        found = attribute_slice(spec, key)
        if found is None:
            raise TypingError(f"{container} has no attribute {key!r}")
        return container.dtype if found[2] is None else VALUE_TYPES[found[2]]
    if isinstance(key, types.Integer):
        return VALUE_TYPES[row_spec(spec)] if spec.kind == KIND_MAT else container.dtype
    if isinstance(key, types.BaseTuple) and len(key) == 2 and spec.kind == KIND_MAT:
        return container.dtype
    raise TypingError(f"cannot index {container} with {key}")


@typing_registry.register_global(kernel_ops.store_item)
class StoreItem(AbstractTemplate):
    def generic(self, args, kws):
        container, index, value = args
        if isinstance(container, (ValueType,)):
            return signature(container, container, index, component_type(container, index))
        sig = self.context.resolve_function_type(operator.setitem, args, {})
        if sig is None:
            return None
        return signature(container, *sig.args)


@typing_registry.register_global(kernel_ops.store_attr)
class StoreAttr(AbstractTemplate):
    def generic(self, args, kws):
        container, name, value = args
        key = _literal_string(name, "the attribute name")
        if isinstance(container, (ValueType, StructType)):
            return signature(container, container, name, component_type(container, key))
        raise TypingError(f"cannot assign attribute {key!r} of {container}: only value types "
                          "and structs have assignable components")


@typing_registry.register_global(kernel_ops.update_item)
class UpdateItem(AbstractTemplate):
    def generic(self, args, kws):
        container, index, op, value = args
        op_name = _literal_string(op, "the operator")
        if isinstance(container, types.Array):
            element = container.dtype
            if isinstance(index, types.BaseTuple) and len(index) != container.ndim:
                return None
            return signature(container, container, index, op, _update_value_type(
                self.context, element, op_name, value))
        if isinstance(container, ValueType):
            element = component_type(container, index)
            return signature(container, container, index, op, _update_value_type(
                self.context, element, op_name, value))
        raise TypingError(f"augmented assignment to an item of {container} is not supported")


def _update_value_type(context, element, op_name, value):
    """The type *value* converts to in ``element op= value``: a scalar element's own type."""
    element_scalar = scalar_rule.from_numba(element)
    if element_scalar is not None:
        value_scalar = scalar_rule.from_numba(value)
        if value_scalar is None:
            raise TypingError(f"cannot combine {value} into a {element} element")
        _check(op_name, element_scalar, value_scalar)
        return element
    sig, _ = binary_signature(context, op_name, element, value)
    if sig is None or sig.return_type != element:
        raise TypingError(f"cannot combine {value} into a {element} element with '{op_name}'")
    return sig.args[1]


@typing_registry.register_global(kernel_ops.update_attr)
class UpdateAttr(AbstractTemplate):
    def generic(self, args, kws):
        container, name, op, value = args
        key = _literal_string(name, "the attribute name")
        op_name = _literal_string(op, "the operator")
        if not isinstance(container, (ValueType, StructType)):
            raise TypingError(f"cannot assign attribute {key!r} of {container}")
        element = component_type(container, key)
        return signature(container, container, name, op,
                         _update_value_type(self.context, element, op_name, value))


@typing_registry.register_global(kernel_ops.update_component)
class UpdateComponent(AbstractTemplate):
    def generic(self, args, kws):
        container, index, key, op, value = args
        op_name = _literal_string(op, "the operator")
        if isinstance(container, types.Array):
            element = container.dtype
        elif isinstance(container, ValueType):
            element = component_type(container, index)
        else:
            raise TypingError(f"augmented assignment to a component of {container} is not "
                              "supported")
        if not isinstance(element, (ValueType, StructType)):
            raise TypingError(f"{element} has no components to update")
        if isinstance(key, types.StringLiteral):
            component = component_type(element, key.literal_value)
        else:
            component = component_type(element, key)
        return signature(container, container, index, key, op,
                         _update_value_type(self.context, component, op_name, value))
