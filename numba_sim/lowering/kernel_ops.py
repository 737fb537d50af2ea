"""Lowering of the kernel language's operators and component-assignment helpers
(semantics in numba_sim/kernel_ops.py), for both targets.

A scalar operator runs its one formula (``kernel_ops.SCALAR_FORMULAS``, the same
that runs in Python mode) on symbolic scalars, which emit the LLVM IR.
"""

import operator

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import box, unbox
from numba.core.imputils import impl_ret_borrowed
from numba.core.typing import signature

from numba_sim import kernel_ops, registry
from numba_sim.lowering.atomics import SUPPORTED_TYPES, emit_atomic
from numba_sim.lowering.debug import emit_printf, escape, print_format
from numba_sim.lowering.symbolic import Sym
from numba_sim.lowering.value_access import flat_index, index_value
from numba_sim.registry import lowering_registry, typing_registry
from numba_sim.types import KIND_MAT, attribute_slice
from numba_sim.typing.kernel_ops import (
    FloatLiteral, component_type, slice_store_template, slice_text, slice_unpack_template,
    static_length, unpack_indices, user_operator,
)
from numba_sim.typing.value_access import slice_positions
from numba_sim.typing.structs import StructType
from numba_sim.typing.value_types import ValueType

lower = lowering_registry.lower


def _is_number(t):
    return isinstance(t, (types.Integer, types.Float))


# --------------------------------------------------------------------------
# Scalar operators


def scalar_binary(context, builder, name, scalar_type, a, b):
    """Emit the kernel operator *name* on two LLVM scalars of *scalar_type*."""
    a, b = Sym(context, builder, scalar_type, a), Sym(context, builder, scalar_type, b)
    return kernel_ops.SCALAR_FORMULAS[name](a, b).value


def _binary_lowering(name):
    def lower_kernel_binary(context, builder, sig, args):
        if _is_number(sig.args[0]) and _is_number(sig.args[1]) \
                and sig.args[0] == sig.args[1] == sig.return_type:
            return scalar_binary(context, builder, name, sig.return_type, *args)
        try:
            implementation = context.get_function(kernel_ops.BINARY[name], sig)
        except NotImplementedError:  # typed as a @sim.func named like Warp's builtin
            found = user_operator(context.typing_context, name, *sig.args)
            if found is None:
                raise
            function = found[0]
            return context.compile_internal(builder, lambda a, b: function(a, b), sig, args)
        return implementation(builder, args)

    return lower_kernel_binary


for _name in kernel_ops.BINARY:
    lower(getattr(kernel_ops, _name), types.Any, types.Any)(_binary_lowering(_name))


# --------------------------------------------------------------------------
# Float literals (typing/kernel_ops.py's FloatLiteral)


@lower(kernel_ops.float_literal, types.IntegerLiteral)
def lower_float_literal(context, builder, sig, args):
    return context.get_constant(types.float32, sig.return_type.literal_value)


@lowering_registry.lower_cast(FloatLiteral, types.Float)
def float_literal_to_float(context, builder, fromty, toty, val):
    """To a float type: the literal's exact value in it (float64 keeps what was written)."""
    return context.get_constant(toty, fromty.literal_value)


@box(FloatLiteral)
def box_float_literal(typ, val, c):
    """As its float32 (a func called with a literal is compiled for it, as Numba compiles
    for int literals, and gets a Python wrapper)."""
    return c.box(types.float32, val)


@unbox(FloatLiteral)
def unbox_float_literal(typ, obj, c):
    return c.unbox(types.float32, obj)


@lowering_registry.lower_cast(FloatLiteral, types.Integer)
@lowering_registry.lower_cast(FloatLiteral, types.Boolean)
def float_literal_to_number(context, builder, fromty, toty, val):
    """To an integer or a bool: from its float32 value, as any float32."""
    return context.cast(builder, val, types.float32, toty)


@lower(kernel_ops.neg, types.Any)
def lower_kernel_neg(context, builder, sig, args):
    if isinstance(sig.return_type, FloatLiteral):
        return context.get_constant(types.float32, sig.return_type.literal_value)
    if _is_number(sig.args[0]):
        return (-Sym(context, builder, sig.return_type, args[0])).value
    return context.get_function(operator.neg, sig)(builder, args)


def combine(context, builder, op, element_type, current, value_type, value):
    """``current op value`` with the kernel language's semantics."""
    if _is_number(element_type):
        value = context.cast(builder, value, value_type, element_type)
        return scalar_binary(context, builder, op, element_type, current, value)
    sig = context.typing_context.resolve_function_type(kernel_ops.BINARY[op],
                                                       (element_type, value_type), {})
    result = context.get_function(kernel_ops.BINARY[op], sig)(
        builder, [current, context.cast(builder, value, value_type, sig.args[1])])
    return context.cast(builder, result, sig.return_type, element_type)


# --------------------------------------------------------------------------
# Positions of components inside a value type or struct


def component_slots(context, builder, container_type, key, key_type):
    """Flat storage positions (ints or LLVM values) of ``container[key]`` / ``.key``."""
    spec = container_type.spec
    if isinstance(key, str):
        start, stop, _ = attribute_slice(spec, key)
        return list(range(start, stop))
    if isinstance(key_type, types.BaseTuple):
        row, column = (index_value(context, builder, builder.extract_value(key, k), t,
                                   spec.shape[k])
                       for k, t in enumerate(key_type.types))
        return [flat_index(builder, row, column, spec.shape[1])]
    index = index_value(context, builder, key, key_type, spec.shape[0])
    if spec.kind == KIND_MAT:
        return [flat_index(builder, index, j, spec.shape[1]) for j in range(spec.shape[1])]
    return [index]


def _read_slots(builder, value, slots):
    if all(isinstance(s, int) for s in slots):
        return [builder.extract_value(value, s) for s in slots]
    slot = cgutils.alloca_once_value(builder, value)
    zero = ir.Constant(ir.IntType(64), 0)
    return [builder.load(builder.gep(slot, [zero, _as_value(s)], inbounds=True)) for s in slots]


def _write_slots(builder, value, slots, items):
    if all(isinstance(s, int) for s in slots):
        for s, item in zip(slots, items):
            value = builder.insert_value(value, item, s)
        return value
    slot = cgutils.alloca_once_value(builder, value)
    zero = ir.Constant(ir.IntType(64), 0)
    for s, item in zip(slots, items):
        builder.store(item, builder.gep(slot, [zero, _as_value(s)], inbounds=True))
    return builder.load(slot)


def _as_value(slot):
    return ir.Constant(ir.IntType(64), slot) if isinstance(slot, int) else slot


def _split(builder, component_type, value):
    """A component value as the list of scalars it occupies."""
    if isinstance(component_type, ValueType):
        return [builder.extract_value(value, k) for k in range(component_type.size)]
    return [value]


def _join(context, builder, component_type, items):
    if isinstance(component_type, ValueType):
        out = cgutils.get_null_value(context.get_value_type(component_type))
        for k, item in enumerate(items):
            out = builder.insert_value(out, item, k)
        return out
    return items[0]


def read_component(context, builder, container_type, container, key, key_type, component_type):
    if isinstance(container_type, StructType):
        return getattr(cgutils.create_struct_proxy(container_type)(
            context, builder, value=container), key)
    slots = component_slots(context, builder, container_type, key, key_type)
    return _join(context, builder, component_type, _read_slots(builder, container, slots))


def write_component(context, builder, container_type, container, key, key_type, component_type,
                    value):
    if isinstance(container_type, StructType):
        proxy = cgutils.create_struct_proxy(container_type)(context, builder, value=container)
        setattr(proxy, key, value)
        result = proxy._getvalue()
        if context.enable_nrt:
            context.nrt.incref(builder, container_type, result)
        return result
    slots = component_slots(context, builder, container_type, key, key_type)
    return _write_slots(builder, container, slots, _split(builder, component_type, value))


def _key(key_type):
    return key_type.literal_value if isinstance(key_type, types.StringLiteral) else None


def _component_type(container_type, key, key_type):
    return component_type(container_type, key if key is not None else key_type)


# --------------------------------------------------------------------------
# store_item / store_attr


@lower(kernel_ops.store_item, types.Any, types.Any, types.Any)
def lower_store_item(context, builder, sig, args):
    container_type, index_type, value_type = sig.args
    container, index, value = args
    if isinstance(container_type, ValueType):
        return write_component(context, builder, container_type, container, index, index_type,
                               value_type, value)
    context.get_function(operator.setitem, signature(types.none, *sig.args))(builder, args)
    return impl_ret_borrowed(context, builder, container_type, container)


@lower(kernel_ops.store_attr, types.Any, types.StringLiteral, types.Any)
def lower_store_attr(context, builder, sig, args):
    container_type, name_type, value_type = sig.args
    return write_component(context, builder, container_type, args[0], name_type.literal_value,
                           name_type, value_type, args[2])


# --------------------------------------------------------------------------
# Augmented assignment: atomic on array elements


ATOMIC_OPS = {"add": "add", "sub": "sub", "and_": "and", "or_": "or", "xor": "xor"}
"""The augmented assignments that are atomic on array elements (Warp's ``+= -= &= |= ^=``)."""


def _scalar_pointers(context, builder, pointer, element_type):
    """(scalar type, pointers to each scalar) of the element at *pointer*."""
    if isinstance(element_type, ValueType):
        zero = ir.Constant(ir.IntType(32), 0)
        return element_type.dtype, [builder.gep(pointer, [zero, ir.Constant(ir.IntType(32), k)])
                                    for k in range(element_type.size)]
    return element_type, [pointer]


def update_in_memory(context, builder, op, pointer, element_type, value_type, value):
    """``*pointer op= value``: real atomics for ``+ - & | ^``, else a read-modify-write (also
    on elements of 8- and 16-bit integers, which have no atomics: Warp's rule)."""
    scalar_type, pointers = _scalar_pointers(context, builder, pointer, element_type)
    if op in ATOMIC_OPS and scalar_type in SUPPORTED_TYPES:
        value = context.cast(builder, value, value_type, element_type)
        items = _split(builder, element_type, value)
        for item_pointer, item in zip(pointers, items):
            emit_atomic(context, builder, ATOMIC_OPS[op], item_pointer, scalar_type, item)
        return
    current = builder.load(pointer)
    builder.store(combine(context, builder, op, element_type, current, value_type, value), pointer)


def _element_pointer(context, builder, array_type, array, index_type, index):
    if isinstance(index_type, types.BaseTuple):
        indices = [context.cast(builder, builder.extract_value(index, k), t, types.intp)
                   for k, t in enumerate(index_type.types)]
    else:
        indices = [context.cast(builder, index, index_type, types.intp)]
    array_struct = context.make_array(array_type)(context, builder, value=array)
    return cgutils.get_item_pointer(context, builder, array_type, array_struct, indices,
                                    wraparound=True)


@lower(kernel_ops.update_item, types.Any, types.Any, types.StringLiteral, types.Any)
def lower_update_item(context, builder, sig, args):
    container_type, index_type, op_type, value_type = sig.args
    container, index, _, value = args
    op = op_type.literal_value
    if isinstance(container_type, types.Array):
        pointer = _element_pointer(context, builder, container_type, container, index_type, index)
        update_in_memory(context, builder, op, pointer, container_type.dtype, value_type, value)
        return impl_ret_borrowed(context, builder, container_type, container)
    component_type = _component_type(container_type, None, index_type)
    current = read_component(context, builder, container_type, container, index, index_type,
                             component_type)
    new = combine(context, builder, op, component_type, current, value_type, value)
    return write_component(context, builder, container_type, container, index, index_type,
                           component_type, new)


@lower(kernel_ops.update_attr, types.Any, types.StringLiteral, types.StringLiteral, types.Any)
def lower_update_attr(context, builder, sig, args):
    container_type, name_type, op_type, value_type = sig.args
    name = name_type.literal_value
    component_type = _component_type(container_type, name, name_type)
    current = read_component(context, builder, container_type, args[0], name, name_type,
                             component_type)
    new = combine(context, builder, op_type.literal_value, component_type, current, value_type,
                  args[3])
    return write_component(context, builder, container_type, args[0], name, name_type,
                           component_type, new)


def _component_pointer(context, builder, element_type, pointer, key, key_type):
    """Pointer to component *key* of the element at *pointer* (value type or struct)."""
    zero = ir.Constant(ir.IntType(32), 0)
    if isinstance(element_type, StructType):
        position = [name for name, _ in element_type.fields].index(key)
        return builder.gep(pointer, [zero, ir.Constant(ir.IntType(32), position)])
    slots = component_slots(context, builder, element_type, key, key_type)
    scalar_pointer = builder.gep(pointer, [zero, _as_value(slots[0])])
    component_type = _component_type(element_type, key if isinstance(key, str) else None, key_type)
    return builder.bitcast(scalar_pointer, context.get_data_type(component_type).as_pointer())


@lower(kernel_ops.update_component, types.Any, types.Any, types.Any, types.StringLiteral, types.Any)
def lower_update_component(context, builder, sig, args):
    container_type, index_type, key_type, op_type, value_type = sig.args
    container, index, key, _, value = args
    op = op_type.literal_value
    key = _key(key_type) if isinstance(key_type, types.StringLiteral) else key
    if isinstance(container_type, types.Array):
        element_type = container_type.dtype
        pointer = _element_pointer(context, builder, container_type, container, index_type, index)
        component_pointer = _component_pointer(context, builder, element_type, pointer, key, key_type)
        component_type = _component_type(element_type, key if isinstance(key, str) else None,
                                         key_type)
        update_in_memory(context, builder, op, component_pointer, component_type, value_type, value)
        return impl_ret_borrowed(context, builder, container_type, container)
    element_type = _component_type(container_type, None, index_type)
    element = read_component(context, builder, container_type, container, index, index_type,
                             element_type)
    component_type = _component_type(element_type, key if isinstance(key, str) else None, key_type)
    current = read_component(context, builder, element_type, element, key, key_type, component_type)
    new = combine(context, builder, op, component_type, current, value_type, value)
    element = write_component(context, builder, element_type, element, key, key_type,
                              component_type, new)
    return write_component(context, builder, container_type, container, index, index_type,
                           element_type, element)


# --------------------------------------------------------------------------
# Star arguments: f(*x), f(*x[a:b:c])


def _read_items(context, builder, container_type, container, indices, result_type):
    if not indices:
        return context.make_tuple(builder, result_type, [])
    item_type = result_type.dtype
    getitem = context.get_function(operator.getitem,
                                   signature(item_type, container_type, types.intp))
    items = [getitem(builder, (container, context.get_constant(types.intp, k)))
             for k in indices]
    return context.make_tuple(builder, result_type, items)


_CHAIN_IMPLEMENTATIONS = {}


def _chain_implementation(symbols):
    """``lambda ops, a, b, c: a < b and b < c`` for the operators *symbols* (cached)."""
    function = _CHAIN_IMPLEMENTATIONS.get(symbols)
    if function is None:
        names = [f"x{k}" for k in range(len(symbols) + 1)]
        tests = " and ".join(f"({a} {op} {b})" for op, a, b in zip(symbols, names, names[1:]))
        namespace = {}
        exec(f"def chain(ops, {', '.join(names)}):\n    return {tests}\n", namespace)
        function = _CHAIN_IMPLEMENTATIONS[symbols] = namespace["chain"]
    return function


@lower(kernel_ops.chain_compare, types.StringLiteral, types.VarArg(types.Any))
def lower_chain_compare(context, builder, sig, args):
    """The comparisons of a chain, each operand computed once (they are the arguments)."""
    symbols = tuple(sig.args[0].literal_value.split())
    return context.compile_internal(builder, _chain_implementation(symbols), sig, args)


@lower(kernel_ops.verify_finite, types.Any, types.StringLiteral)
def lower_verify_finite(context, builder, sig, args):
    """Print the place and the value when a float (or a value type of floats) is not finite:
    ``x - x`` is 0 only for finite x."""
    value_type, where = sig.args[0], sig.args[1].literal_value
    scalar = value_type.dtype if isinstance(value_type, ValueType) else value_type
    if not isinstance(scalar, types.Float):
        return context.get_dummy_value()
    components = [builder.extract_value(args[0], k) for k in range(value_type.size)] \
        if isinstance(value_type, ValueType) else [args[0]]
    finite = ir.Constant(ir.IntType(1), 1)
    for x in components:
        finite = builder.and_(finite, builder.fcmp_ordered("==", builder.fsub(x, x),
                                                           ir.Constant(x.type, 0.0)))
    with builder.if_then(builder.not_(finite), likely=False):
        fmt, values = print_format(context, builder, value_type, args[0])
        emit_printf(context, builder, escape(where) + ": non-finite value stored: " + fmt,
                    values)
    return context.get_dummy_value()


@lower(kernel_ops.constructor_argument, types.Any, types.Any, types.Any)
def lower_constructor_argument(context, builder, sig, args):
    return impl_ret_borrowed(context, builder, sig.return_type, args[0])


@lower(kernel_ops.unpack, types.Any)
def lower_unpack(context, builder, sig, args):
    (container_type,) = sig.args
    if isinstance(container_type, types.BaseTuple):
        return impl_ret_borrowed(context, builder, container_type, args[0])
    indices = range(static_length(container_type))
    return _read_items(context, builder, container_type, args[0], indices, sig.return_type)


@lower(kernel_ops.unpack_slice, types.Any, types.Any, types.Any, types.Any)
def lower_unpack_slice(context, builder, sig, args):
    indices = unpack_indices(*sig.args)
    return _read_items(context, builder, sig.args[0], args[0], indices, sig.return_type)


_SLICE_UNPACKERS = {}


def slice_unpacker(start, stop, step):
    """The function the rewrite calls for ``f(*x[start:stop:step])`` with literal bounds
    (ints or None): ``unpacker(x)`` is the tuple of the slice's items, the bounds baked in
    (so they stay constants through Numba's typing), declared on both targets once."""
    key = (start, stop, step)
    if key not in _SLICE_UNPACKERS:
        def unpacker(container):
            return kernel_ops.unpack_slice(container, start, stop, step)

        unpacker.__name__ = unpacker.__qualname__ = f"unpack_slice{key}"
        typing_registry.register_global(unpacker,
                                        types.Function(slice_unpack_template(unpacker, *key)))

        @lower(unpacker, types.Any)
        def lower_unpacker(context, builder, sig, args):
            indices = unpack_indices(sig.args[0], *(
                types.literal(b) if b is not None else types.none for b in key))
            return _read_items(context, builder, sig.args[0], args[0], indices, sig.return_type)

        registry.install()
        _SLICE_UNPACKERS[key] = unpacker
    return _SLICE_UNPACKERS[key]


_SLICE_STORERS = {}


def slice_storer(key):
    """The function the rewrite calls for ``x[key] = value`` where *key* is a constant index
    with a slice in it (``v[1:]``, ``m[:, 2]``, ``m[1:, :2]``: ints and slices of int or None
    bounds): ``storer(x, value)`` is *x* with the selected components replaced by *value*'s,
    the key baked in (constants through Numba's typing), declared on both targets once."""
    if repr(key) not in _SLICE_STORERS:  # (slices are not hashable before Python 3.12)
        def storer(container, value):
            return kernel_ops.store_item(container, key, value)

        storer.__name__ = storer.__qualname__ = f"store_slice{len(_SLICE_STORERS)}"
        namespace = {}
        exec(f"def array_store(a, v):\n    a[{slice_text(key)}] = v\n    return a",  # noqa: S102
             namespace)
        array_store = namespace["array_store"]
        typing_registry.register_global(storer, types.Function(slice_store_template(storer,
                                                                                   key)))

        @lower(storer, types.Any, types.Any)
        def lower_storer(context, builder, sig, args):
            container_type, value_type = sig.args
            if not isinstance(container_type, ValueType):  # an array
                return context.compile_internal(builder, array_store, sig, args)
            positions = slice_positions(container_type, key).reshape(-1)
            return _write_slots(builder, args[0], [int(p) for p in positions],
                                _split(builder, value_type, args[1]))

        registry.install()
        _SLICE_STORERS[repr(key)] = storer
    return _SLICE_STORERS[repr(key)]


# --------------------------------------------------------------------------
# type(x): the class of a value or struct (a constructor, no data)


@lowering_registry.lower_getattr(ValueType, "__class__")
@lowering_registry.lower_getattr(StructType, "__class__")
def lower_class_of(context, builder, typ, value):
    return context.get_dummy_value()
