"""Typing of the kernel language's operators and component-assignment helpers
(see numba_sim/kernel_ops.py for their semantics).

Two scalar operands meet at the type of the kernel language's scalar rule
(numba_sim/scalar_rule.py), which Python mode applies too; an operator that
does not take the operands' types is a TypingError with the rule's message.
"""

import operator

from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models
from numba.core.errors import TypingError
from numba.core.extending import register_model
from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, signature
from numba.np import numpy_support

from numba_sim import func_overloads, kernel_ops, scalar_rule
from numba_sim.registry import typing_registry
from numba_sim.types import KIND_MAT, KIND_VEC, attribute_slice, row_spec
from numba_sim.typing.structs import StructType
from numba_sim.typing.value_access import slice_positions, sliced_type
from numba_sim.typing.value_types import VALUE_TYPES, ValueType


# --------------------------------------------------------------------------
# Float literals: float32 that remember the value written (kernel_ops.float_literal)


class FloatLiteral(types.Literal, types.Float):
    """The type of a float literal of kernel source: float32 (its data model, its value in
    arithmetic, as Warp types it), carrying the exact Python float written, which a
    conversion to another float type uses (lowering/kernel_ops.py's cast): ``vec3d(0.1)``,
    ``float64(x)`` of ``x = 0.1``, a store into a float64 element keep 0.1 to double
    precision, as Warp's typed constructors do."""

    def __init__(self, value):
        self._literal_init(value)
        self._literal_type_cache = types.float32
        types.Type.__init__(self, name=f"Literal[float]({value!r})")  # (Float's needs 'float32')
        self.bitwidth = 32

    def can_convert_to(self, typingctx, other):
        conv = typingctx.can_convert(self.literal_type, other)
        if conv is not None:
            return max(conv, types.Conversion.promote)
        return None


@register_model(FloatLiteral)
class FloatLiteralModel(models.PrimitiveModel):
    """A float literal is stored as its float32 value."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.FloatType())


@typing_registry.register_global(kernel_ops.float_literal)
class FloatLiteralTyping(AbstractTemplate):
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 1 or not isinstance(args[0], types.IntegerLiteral):
            return None
        value = kernel_ops.literal_value(args[0].literal_value)
        return signature(FloatLiteral(value), args[0])


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
    try:
        sig = context.resolve_function_type(kernel_ops.BINARY[name], (a, b), {})
    except TypingError:
        found = user_operator(context, name, a, b)
        if found is None:
            raise
        return found[1], False
    if sig is None:
        found = user_operator(context, name, a, b)
        sig = None if found is None else found[1]
    return sig, False


def user_operator(context, name, a, b):
    """(the ``@sim.func``, its signature) overloading operator *name* for (a, b), or None
    (kernel_ops.USER_OPERATORS)."""
    for function in kernel_ops.USER_OPERATORS.get(name, ()):
        annotations = func_overloads.annotations_of(function)
        if len(annotations) != 2 or not any(all(func_overloads.matches(t, arg, relaxed) for t, arg in zip(annotations, (a, b)))
                   for relaxed in (False, True)):
            continue  # its parameters are annotated for other types
        try:
            sig = context.resolve_function_type(context.resolve_value_type(function), (a, b), {})
        except TypingError:
            continue
        if sig is not None:
            return function, sig
    return None


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
        if isinstance(a, FloatLiteral):  # -0.1 is a literal too
            return signature(FloatLiteral(-a.literal_value), a)
        scalar = scalar_rule.from_numba(a)
        if scalar is not None:  # an int literal has its natural type (int32 unless too large)
            result = numpy_support.from_dtype(scalar.dtype)
            return signature(result, result)
        return self.context.resolve_function_type(operator.neg, args, {})


def _chain_kind(t):
    """kernel_ops.chain_kind of a Numba type: numbers are one kind (the scalar rule)."""
    t = types.unliteral(t)
    if isinstance(t, types.Boolean):
        return types.boolean
    return "number" if isinstance(t, (types.Integer, types.Float)) else t


@typing_registry.register_global(kernel_ops.chain_compare)
class KernelChainCompare(AbstractTemplate):
    """A chained comparison (kernel_ops.chain_compare): Warp's rule on its comparators; the
    comparisons themselves are typed when lowered (lowering/kernel_ops.py)."""
    prefer_literal = True  # the operators are a string literal

    def generic(self, args, kws):
        ops, *operands = args
        _literal_string(ops, "a comparison chain's operators")
        for op, b, c in zip(ops.literal_value.split()[1:], operands[1:], operands[2:]):
            if _chain_kind(b) != _chain_kind(c):
                raise TypingError(f"Cannot chain comparisons of unequal types: "
                                  f"{types.unliteral(b)} {op} {types.unliteral(c)}.")
        return signature(types.boolean, ops, *(types.unliteral(t) for t in operands))


@typing_registry.register_global(kernel_ops.verify_finite)
class KernelVerifyFinite(AbstractTemplate):
    def generic(self, args, kws):
        value, where = args
        _literal_string(where, "verify_finite's place")
        return signature(types.none, value, where)


@typing_registry.register_global(kernel_ops.constructor_argument)
class KernelConstructorArgument(AbstractTemplate):
    """Warp's rule for the variables given to a typed constructor: a scalar variable has the
    constructor's scalar type (a constant, a literal type here, is converted; so is a value:
    a vector, a quaternion)."""
    prefer_literal = True

    def generic(self, args, kws):
        value, dtype_name, kind = args
        dtype_name = _literal_string(dtype_name, "the constructor's scalar type")
        kind = _literal_string(kind, "the constructor's kind")
        if isinstance(value, (types.Number, types.Boolean)) \
                and not isinstance(value, types.Literal) and str(value) != dtype_name:
            if kind.startswith("fill "):
                raise TypingError(f"the value used to fill this {kind[5:]} is expected to be of "
                                  f"the type `{dtype_name}`")
            raise TypingError(f"all values used to initialize this {kind} are expected to be "
                              f"of the type `{dtype_name}`")
        return signature(value, *args)


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


def _warp_name(t):
    return t.spec.warp_name if isinstance(t, ValueType) else str(types.unliteral(t))


def checked_component(context, container, key, value):
    """The type of the component ``container[key]`` / ``.key`` that *value* is stored into: a
    value that does not convert to it (a vec3 into a float slot) is Warp's TypeError."""
    component = component_type(container, key)
    if context.can_convert(value, component) is None:
        raise TypingError(f"Composite slot assignment expects value of type "
                          f"{_warp_name(component)}, got {_warp_name(value)}")
    return component


def check_slot_indices(container, index):
    """A write into an array's element (``a[i] = v``, ``a[i] += v``, ``a[i].x = v``) takes
    integer indices (or slices): Warp's TypeError and sentence otherwise (a float index
    would be truncated silently)."""
    if not isinstance(container, types.Array):
        return
    indices = index.types if isinstance(index, types.BaseTuple) else (index,)
    if not all(isinstance(i, (types.Integer, types.SliceType)) for i in indices):
        raise TypingError(f"Array slot write indices must be integers or slices, got "
                          f"({', '.join(map(str, indices))}) for {container}")


@typing_registry.register_global(kernel_ops.store_item)
class StoreItem(AbstractTemplate):
    def generic(self, args, kws):
        container, index, value = args
        check_slot_indices(container, index)
        if isinstance(container, (ValueType,)):
            return signature(container, container, index,
                             checked_component(self.context, container, index, value))
        if isinstance(container, types.Array) and isinstance(index, types.BaseTuple) \
                and len(index) > container.ndim \
                and all(isinstance(i, types.Integer) for i in index):  # Warp's sentence
            raise TypingError(f"Incorrect number of indices specified for array indexing: "
                              f"{len(index)} for an array of {container.ndim} dims")
        sig = self.context.resolve_function_type(operator.setitem, args, {})
        if sig is None:
            return None
        return signature(container, *sig.args)


@typing_registry.register_global(kernel_ops.store_attr)
class StoreAttr(AbstractTemplate):
    prefer_literal = True  # the name is a literal: the one try whose error is worth reporting

    def generic(self, args, kws):
        container, name, value = args
        key = _literal_string(name, "the attribute name")
        if isinstance(container, (ValueType, StructType)):
            return signature(container, container, name,
                             checked_component(self.context, container, key, value))
        raise TypingError(f"cannot assign attribute {key!r} of {container}: only value types "
                          "and structs have assignable components")


@typing_registry.register_global(kernel_ops.update_item)
class UpdateItem(AbstractTemplate):
    def generic(self, args, kws):
        container, index, op, value = args
        check_slot_indices(container, index)
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
        check_slot_indices(container, index)
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


# --------------------------------------------------------------------------
# Star arguments: f(*x), f(*x[a:b:c])


def static_length(container):
    """The number of items ``*container`` gives, known at compile time (None: not known)."""
    if isinstance(container, ValueType):
        return container.shape[0]
    if isinstance(container, types.BaseTuple):
        return len(container)
    return None


def _literal_bound(bound, what):
    if isinstance(bound, (types.NoneType, types.Omitted)):
        return None
    if isinstance(bound, types.IntegerLiteral):
        return bound.literal_value
    raise TypingError(f"*x[start:stop:step] in a call: Slice component must be a compile-time "
                      f"constant: the {what} must be an integer literal, not {bound} (the "
                      f"number of arguments is fixed when compiling)")


def unpack_indices(container, start, stop, step):
    """The indices ``*container[start:stop:step]`` reads (literal bounds)."""
    start, stop, step = (_literal_bound(b, w) for b, w in (
        (start, "start"), (stop, "stop"), (step, "step")))
    length = static_length(container)
    if length is None:
        if not isinstance(container, types.Array):
            raise TypingError(f"cannot unpack {container} with *: Starred expressions are only "
                              f"supported for vectors, matrices, quaternions, transforms, tuples "
                              f"and arrays")
        if stop is None:
            raise TypingError(f"*arr[start:stop] of {container} requires explicit upper bound "
                              f"(its length is not known when compiling)")
        if stop < 0 or (start or 0) < 0:
            raise TypingError(f"*arr[start:stop] of {container}: bounds cannot be negative for "
                              f"arrays (their length is not known when compiling)")
        if (step or 1) < 0:
            raise TypingError(f"*arr[start:stop:step] of {container}: step cannot be negative "
                              f"for arrays")
        length = stop
    return tuple(range(*slice(start, stop, step).indices(length)))


def _unpack_signature(context, container, indices, *bounds):
    if not indices:
        return signature(types.Tuple(()), container, *bounds)
    item = context.resolve_function_type(operator.getitem, (container, types.intp), {})
    if item is None:
        raise TypingError(f"cannot unpack {container} with *: it has no items")
    return signature(types.UniTuple(item.return_type, len(indices)), container, *bounds)


@typing_registry.register_global(kernel_ops.unpack)
class Unpack(AbstractTemplate):
    def generic(self, args, kws):
        (container,) = args
        if isinstance(container, types.BaseTuple):
            return signature(container, container)
        length = static_length(container)
        if length is None:
            raise TypingError(f"cannot unpack {container} with * in a call: Starred "
                              f"expressions are only supported for vectors, matrices (their "
                              f"rows), quaternions, transforms, tuples and array slices with "
                              f"literal bounds (*arr[0:3]), whose length is known when compiling")
        return _unpack_signature(self.context, container, range(length), )


@typing_registry.register_global(kernel_ops.unpack_slice)
class UnpackSlice(AbstractTemplate):
    """``*x[a:b:c]`` whose bounds are not all literals (literal ones are
    :func:`slice_unpack_template` s): the bounds must be literals."""
    prefer_literal = True

    def generic(self, args, kws):
        container, start, stop, step = args
        indices = unpack_indices(container, start, stop, step)
        return _unpack_signature(self.context, container, indices, start, stop, step)


def slice_unpack_template(function, start, stop, step):
    """The typing of *function* (``*x[start:stop:step]`` with these literal bounds, see
    numba_sim.lowering.kernel_ops.slice_unpacker): the items, as a tuple."""
    class UnpackLiteralSlice(AbstractTemplate):
        key = function

        def generic(self, args, kws):
            (container,) = args
            indices = unpack_indices(container, *(
                types.literal(b) if b is not None else types.none for b in (start, stop, step)))
            return _unpack_signature(self.context, container, indices)

    return UnpackLiteralSlice


def _slice_store_error(container, key, value, positions):
    """Warp's sentence for ``container[key] = value`` where *value* is not the vector /
    matrix the constant slice selects (*positions*, numba_sim.typing.value_access), or
    None when it is."""
    dtype = container.spec.dtype.name
    shape = positions.shape
    kind = "vector" if len(shape) == 1 else "matrix"
    if len(shape) == 1:
        size = f"of length {shape[0]}"
        given_size = value.spec.shape[0] if isinstance(value, ValueType) else None
    else:
        size = f"of shape {shape}"
        given_size = value.spec.shape if isinstance(value, ValueType) else None
    if not (isinstance(value, ValueType) and value.spec.kind == (KIND_VEC if len(shape) == 1
                                                                 else KIND_MAT)):
        return f"The provided value is expected to be a {kind} {size}, with dtype {dtype}."
    if value.spec.dtype != container.spec.dtype:
        return f"The provided {kind} is expected to be {size} with dtype {dtype}."
    if given_size != (shape[0] if len(shape) == 1 else shape):
        if len(shape) == 1:
            return (f"The length of the provided vector ({given_size}) isn't compatible with "
                    f"the given slice (expected {shape[0]}).")
        return (f"The shape of the provided matrix ({given_size}) isn't compatible with the "
                f"given slice (expected {shape}).")
    return None


def slice_store_template(function, key):
    """The typing of *function* (``container[key] = value`` with the constant slice *key*,
    see numba_sim.lowering.kernel_ops.slice_storer): the container rebuilt; the value must
    be the vector / matrix of the components the slice selects (no broadcast: Warp's rule)."""
    class StoreLiteralSlice(AbstractTemplate):
        key = function

        def generic(self, args, kws):
            container, value = args
            if not isinstance(container, ValueType):  # an array: NumPy's slice assignment
                parts = key if isinstance(key, tuple) else (key,)
                index = [types.intp if isinstance(k, int) else types.slice3_type
                         for k in parts]
                index = index[0] if len(index) == 1 else types.UniTuple(index[0], len(index)) \
                    if len(set(index)) == 1 else types.Tuple(index)
                if self.context.resolve_function_type(operator.setitem,
                                                      (container, index, value), {}) is None:
                    raise TypingError(f"cannot assign {value} to {container}"
                                      f"[{slice_text(key)}]")
                return signature(container, container, value)
            positions = slice_positions(container, key)
            error = _slice_store_error(container, key, types.unliteral(value), positions)
            if error is not None:
                raise TypingError(f"{container}[{slice_text(key)}] = {value}: {error}")
            return signature(container, container, sliced_type(container, positions))

    return StoreLiteralSlice


def slice_text(key):
    """A constant index as written: ``1:``, ``:, 2``."""
    def part(k):
        if not isinstance(k, slice):
            return str(k)
        text = ":".join("" if b is None else str(b) for b in (k.start, k.stop, k.step))
        return text[:-1] if k.step is None else text
    return ", ".join(part(k) for k in (key if isinstance(key, tuple) else (key,)))


# --------------------------------------------------------------------------
# type(x) of a value or a struct: its class, a constructor (Warp's generic code:
# ``type(a)(b)`` converts b to a's type)


def _class_attribute(key):
    class ClassOf(AttributeTemplate):
        def resolve___class__(self, instance):
            return self.context.resolve_value_type(instance.python_class)

    ClassOf.key = key
    ClassOf.__name__ = f"ClassOf{key.__name__}"
    return typing_registry.register_attr(ClassOf)


for _key in (ValueType, StructType):
    _class_attribute(_key)
