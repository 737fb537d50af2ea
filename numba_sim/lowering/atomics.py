"""Atomic read-modify-write of one scalar in memory, on the CPU and CUDA targets.

:func:`emit_atomic` is the one place that emits atomics; the ``atomic_*``
builtins (:mod:`numba_sim.builtins.atomics`, lowered by :func:`lower_atomic`)
and the kernel language's atomic ``arr[i] += x`` / ``arr[i][k] += x`` use it.

CPU: LLVM ``atomicrmw`` (``add sub min max umin umax and or xor`` on integers, ``fadd``
``fmin fmax`` on floats; the x86 backend turns the float forms into
compare-and-swap loops).  ``fmin``/``fmax`` follow ``minnum``/``maxnum``: a
NaN operand is ignored.

CUDA: what numba-cuda emits for ``cuda.atomic.*``: ``atomicrmw`` on
integers, ``llvm.nvvm.atomic.load.add.f32/f64`` for float addition and
numba-cuda's compare-and-swap helpers for float min/max (a NaN on either side
leaves memory unchanged).  NVVM accepts only a subset of LLVM IR (no
``fneg``, no float ``atomicrmw`` here), so float subtraction is the addition of
``-0.0 - value`` on both targets (``a - b == a + (-b)`` exactly in IEEE).

All atomics are relaxed (``monotonic``), like CUDA's ``atomicAdd`` and Warp's.

One thread: a CPU launcher that runs every thread of a launch one after the other on the
calling thread (the *serial* launcher, launcher.py) needs no atomics, and an x86
compare-and-swap loop per float component costs more than a small element's arithmetic.
:func:`emit_atomic` lowers the updates that such a launcher's own code makes (its kernel body
and the funcs inlined into it) as a plain load, operation and store, with the same result and
the same old value returned.  It knows such a launcher by its function's name
(:data:`SERIAL_LAUNCHER_PREFIX`, :func:`emits_serial_launcher`); everything else (the parallel
launcher, funcs compiled on their own, which a parallel launcher may call, CUDA) keeps real
atomics.  A serial launch holds the GIL (launchers are not ``nogil``), so no other thread of
the process runs kernel code beside it.  Compare-and-swap and exchange stay atomic.

Compare-and-swap (:func:`emit_compare_and_swap`) and exchange
(:func:`emit_exchange`) work on the bits: LLVM ``cmpxchg`` and ``atomicrmw
xchg`` on the integer of the scalar's width (a float is compared bit for bit,
as Warp's CUDA ``atomicCAS`` does: ``-0.0`` does not match ``0.0``, a NaN
matches the same NaN), on both targets.
"""

import re

from llvmlite import ir
from numba.core import cgutils, types

from numba_sim.native import is_cuda_context
from numba_sim.typing.value_types import ValueType

ATOMIC_OPS = ("add", "sub", "min", "max", "and", "or", "xor")

BITWISE_OPS = ("and", "or", "xor")
"""The atomics of integers only (LLVM ``atomicrmw and/or/xor`` on both targets)."""

SUPPORTED_TYPES = (types.int32, types.uint32, types.int64, types.uint64, types.float32,
                   types.float64)
"""Scalar types with atomics on both targets."""

_INTEGER_RMW = {"add": ("add", "add"), "sub": ("sub", "sub"), "min": ("min", "umin"),
                "max": ("max", "umax"), "and": ("and", "and"), "or": ("or", "or"),
                "xor": ("xor", "xor")}
_CPU_FLOAT_RMW = {"add": "fadd", "min": "fmin", "max": "fmax"}
_ORDERING = "monotonic"

SERIAL_LAUNCHER_PREFIX = "__serial_launch_"
"""How launcher.py names the Python function of a serial CPU launcher (its parallel
launcher is ``__launch_<kernel>``)."""

_SERIAL_LAUNCHER_NAME = re.compile(rf"_ZN9numba_sim8launcher\d+{SERIAL_LAUNCHER_PREFIX}")
"""The start of the LLVM name Numba gives such a function (``numba_sim.launcher.<name>``
mangled: the prefix must follow the module path, so a kernel whose own name contains it does
not make its parallel launcher serial)."""


def emits_serial_launcher(context, builder):
    """Whether *builder* emits the code of a serial CPU launcher (see the module docstring)."""
    return not is_cuda_context(context) and \
        _SERIAL_LAUNCHER_NAME.match(builder.function.name) is not None


def _emit_plain(context, builder, op, pointer, scalar_type, value):
    """``old = *pointer; *pointer = old <op> value; return old`` (one thread: no atomics),
    with the results of the atomic forms (float min/max: ``minnum``/``maxnum``)."""
    old = builder.load(pointer)
    if isinstance(scalar_type, types.Integer):
        if op in ("min", "max"):
            less = builder.icmp_signed("<", old, value) if scalar_type.signed else \
                builder.icmp_unsigned("<", old, value)
            new = builder.select(less, old, value) if op == "min" else \
                builder.select(less, value, old)
        else:
            new = getattr(builder, {"and": "and_", "or": "or_"}.get(op, op))(old, value)
    elif op == "add":
        new = builder.fadd(old, value)
    else:
        intrinsic = "llvm.minnum" if op == "min" else "llvm.maxnum"
        function = builder.module.declare_intrinsic(
            intrinsic, [old.type], ir.FunctionType(old.type, [old.type, old.type]))
        new = builder.call(function, [old, value])
    builder.store(new, pointer)
    return old


def emit_atomic(context, builder, op, pointer, scalar_type, value):
    """Atomically update ``*pointer`` with *value* and return the old value.

    *op* is one of :data:`ATOMIC_OPS` (``"and"``, ``"or"`` and ``"xor"`` on integers only);
    *pointer* an LLVM
    pointer to the scalar's data type (generic address space on CUDA);
    *scalar_type* the Numba scalar type, one of :data:`SUPPORTED_TYPES`;
    *value* an LLVM value of that type.  Returns the LLVM value that
    ``*pointer`` held before the update.  Works in any lowering function,
    on the CPU and the CUDA target; in a serial CPU launcher's own code the update is a
    plain one (:func:`emits_serial_launcher`).
    """
    if op not in ATOMIC_OPS:
        raise ValueError(f"atomic op must be one of {ATOMIC_OPS}, not {op!r}")
    if scalar_type not in SUPPORTED_TYPES:
        raise TypeError(f"no atomic {op} on {scalar_type}: supported are "
                        f"{', '.join(map(str, SUPPORTED_TYPES))}")
    if op in BITWISE_OPS and not isinstance(scalar_type, types.Integer):
        raise TypeError(f"no atomic {op} on {scalar_type}: bitwise atomics take integers")
    if op == "sub" and not isinstance(scalar_type, types.Integer):
        op, value = "add", builder.fsub(context.get_constant(scalar_type, -0.0), value)
    if emits_serial_launcher(context, builder):
        return _emit_plain(context, builder, op, pointer, scalar_type, value)
    if isinstance(scalar_type, types.Integer):
        signed, unsigned = _INTEGER_RMW[op]
        return builder.atomic_rmw(signed if scalar_type.signed else unsigned, pointer, value,
                                  _ORDERING)
    if is_cuda_context(context):
        return _cuda_float_atomic(builder, op, pointer, scalar_type, value)
    return builder.atomic_rmw(_CPU_FLOAT_RMW[op], pointer, value, _ORDERING)


def _as_bits(context, builder, pointer, scalar_type, *values):
    """*pointer* and *values* as the integer of *scalar_type*'s width."""
    if isinstance(scalar_type, types.Integer):
        return (pointer, *values)
    bits = ir.IntType(scalar_type.bitwidth)
    pointer = builder.bitcast(pointer, bits.as_pointer(pointer.type.addrspace))
    return (pointer, *(builder.bitcast(v, bits) for v in values))


def _check_supported(name, scalar_type):
    if scalar_type not in SUPPORTED_TYPES:
        raise TypeError(f"no atomic {name} on {scalar_type}: supported are "
                        f"{', '.join(map(str, SUPPORTED_TYPES))}")


def emit_compare_and_swap(context, builder, pointer, scalar_type, compare, value):
    """Atomically ``if *pointer == compare: *pointer = value`` (bitwise comparison);
    returns the old value (LLVM values of *scalar_type*, one of :data:`SUPPORTED_TYPES`)."""
    _check_supported("compare-and-swap", scalar_type)
    pointer, compare_bits, value_bits = _as_bits(context, builder, pointer, scalar_type,
                                                 compare, value)
    pair = builder.cmpxchg(pointer, compare_bits, value_bits, _ORDERING, _ORDERING)
    old = builder.extract_value(pair, 0)
    return old if isinstance(scalar_type, types.Integer) else builder.bitcast(
        old, context.get_value_type(scalar_type))


def emit_exchange(context, builder, pointer, scalar_type, value):
    """Atomically ``*pointer = value``; returns the old value."""
    _check_supported("exchange", scalar_type)
    pointer, value_bits = _as_bits(context, builder, pointer, scalar_type, value)
    old = builder.atomic_rmw("xchg", pointer, value_bits, _ORDERING)
    return old if isinstance(scalar_type, types.Integer) else builder.bitcast(
        old, context.get_value_type(scalar_type))


def lower_atomic(op):
    """The lowering of the builtin ``atomic_<op>(arr, i[, j, k, l], value)`` (*op* one of
    :data:`ATOMIC_OPS`, ``"exch"``, or ``"cas"``: ``atomic_cas(arr, i..., compare, value)``).

    Its signature is ``dtype(array, intp..., dtype)`` (``cas``: two dtypes) (the builtin's typer
    converts indices and value).  A scalar element is one atomic update; a
    value-type element is updated component by component, each atomically, and
    the old value is assembled from the components' old values.
    """
    operands = 2 if op == "cas" else 1
    if op == "cas":
        def emit(context, builder, pointer, scalar_type, compare, value):
            return emit_compare_and_swap(context, builder, pointer, scalar_type, compare, value)
    elif op == "exch":
        emit = emit_exchange
    else:
        def emit(context, builder, pointer, scalar_type, value):
            return emit_atomic(context, builder, op, pointer, scalar_type, value)

    def lower(context, builder, sig, args):
        array_type, dtype = sig.args[0], sig.return_type
        array = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, array,
                                           args[1:-operands], wraparound=True)
        values = args[-operands:]
        if not isinstance(dtype, ValueType):
            return emit(context, builder, pointer, dtype, *values)
        old = ir.Constant(context.get_value_type(dtype), ir.Undefined)
        for k in range(dtype.size):
            component = cgutils.gep_inbounds(builder, pointer, 0, k)
            previous = emit(context, builder, component, dtype.dtype,
                            *(builder.extract_value(v, k) for v in values))
            old = builder.insert_value(old, previous, k)
        return old

    lower.__name__ = f"lower_atomic_{op}"
    return lower


def _cuda_float_atomic(builder, op, pointer, scalar_type, value):
    from numba.cuda import nvvmutils

    bits = 32 if scalar_type == types.float32 else 64
    declare = getattr(nvvmutils, f"declare_atomic_{op}_float{bits}")
    return builder.call(declare(builder.module), (pointer, value))
