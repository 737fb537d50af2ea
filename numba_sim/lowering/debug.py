"""Printing from kernels, and the expectations' failure counter, on the CPU and CUDA targets.

:func:`emit_printf` is the one place that prints: the C library's ``printf``
on the CPU (followed by ``fflush(NULL)``, so the text reaches file descriptor 1
at once, in order with Python's own output when that is flushed too), CUDA's
``vprintf`` on the GPU (the text appears when the device synchronizes).
:func:`print_format` gives Warp's ``print`` format of each type
(warp/native/builtin.h): ``%g`` for floats, ``%d``/``%u``/``%lld``/``%llu`` for
integers, ``True``/``False``, a vector as ``1 2 3 `` (its components, each
followed by a space), a quaternion as ``x y z w``, a matrix as one such line
per row, a transform as ``(p) (q)``; components of value types are printed as
float32, as Warp does.

Failed expectations (``expect_eq`` ...) on the CPU add one to a process-wide
64-bit counter, :data:`FAILURES`, through the symbol ``numba_sim_expect_failures``
(registered with LLVM at import, so compiled code loaded from the disk cache
finds it too).  Compiled CUDA code prints only: a GPU has no path back to the
host counter.
"""

import ctypes

from llvmlite import binding, ir
from numba.core import cgutils, types

from numba_sim.native import is_cuda_context
from numba_sim.types import KIND_MAT, KIND_QUAT, KIND_TRANSFORM
from numba_sim.typing.value_types import ValueType

FAILURES_SYMBOL = "numba_sim_expect_failures"
FAILURES = ctypes.c_int64(0)
"""The number of failed expectations so far in this process (CPU and Python mode)."""
binding.add_symbol(FAILURES_SYMBOL, ctypes.addressof(FAILURES))

_CHAR_POINTER = ir.IntType(8).as_pointer()
_I32 = ir.IntType(32)


def escape(text):
    """*text* as literal printf format text."""
    return text.replace("%", "%%")


def emit_printf(context, builder, fmt, values):
    """Print ``printf(fmt, *values)``; *values* are LLVM values already as C passes
    variadic arguments (double, int, long long, char pointers)."""
    module = builder.module
    if is_cuda_context(context):
        vprintf = cgutils.get_or_insert_function(
            module, ir.FunctionType(_I32, [_CHAR_POINTER, _CHAR_POINTER]), "vprintf")
        fmt_pointer = context.insert_string_const_addrspace(builder, fmt)
        if values:
            packed = cgutils.alloca_once_value(builder, cgutils.make_anonymous_struct(builder,
                                                                                    values))
            arguments = builder.bitcast(packed, _CHAR_POINTER)
        else:
            arguments = ir.Constant(_CHAR_POINTER, None)
        builder.call(vprintf, (fmt_pointer, arguments))
        return
    printf = cgutils.get_or_insert_function(
        module, ir.FunctionType(_I32, [_CHAR_POINTER], var_arg=True), "printf")
    builder.call(printf, [context.insert_const_string(module, fmt), *values])
    fflush = cgutils.get_or_insert_function(module, ir.FunctionType(_I32, [_CHAR_POINTER]),
                                            "fflush")
    builder.call(fflush, [ir.Constant(_CHAR_POINTER, None)])


def string_pointer(context, builder, text):
    """A C string constant (a generic pointer on CUDA)."""
    if is_cuda_context(context):
        return context.insert_string_const_addrspace(builder, text)
    return context.insert_const_string(builder.module, text)


def _as_double(context, builder, value, numba_type, through_float32=False):
    if through_float32 and numba_type != types.float32:
        value = context.cast(builder, value, numba_type, types.float32)
        numba_type = types.float32
    return context.cast(builder, value, numba_type, types.float64)


def scalar_format(context, builder, numba_type, value):
    """(format, values) of one scalar as Warp prints it, without the newline."""
    if isinstance(numba_type, types.Boolean):
        text = builder.select(value, string_pointer(context, builder, "True"),
                              string_pointer(context, builder, "False"))
        return "%s", [text]
    if isinstance(numba_type, types.Float):
        return "%g", [_as_double(context, builder, value, numba_type)]
    if isinstance(numba_type, types.Integer):
        if numba_type.bitwidth == 64:
            return ("%lld" if numba_type.signed else "%llu"), [value]
        widened = context.cast(builder, value, numba_type,
                               types.int32 if numba_type.signed else types.uint32)
        return ("%d" if numba_type.signed else "%u"), [widened]
    raise TypeError(f"no print format for {numba_type}")


def print_format(context, builder, numba_type, value):
    """(format, values) of *value* as Warp's ``print`` writes it, newline(s) included."""
    if isinstance(numba_type, types.StringLiteral):
        return escape(numba_type.literal_value) + "\n", []
    if not isinstance(numba_type, ValueType):
        fmt, values = scalar_format(context, builder, numba_type, value)
        return fmt + "\n", values
    components = [_as_double(context, builder, builder.extract_value(value, k), numba_type.dtype,
                             through_float32=True) for k in range(numba_type.size)]
    if numba_type.kind == KIND_QUAT:
        return "%g %g %g %g\n", components
    if numba_type.kind == KIND_TRANSFORM:
        return "(%g %g %g) (%g %g %g %g)\n", components
    if numba_type.kind == KIND_MAT or len(numba_type.shape) == 2:
        rows, columns = numba_type.shape
        return ("%g " * columns + "\n") * rows, components
    return "%g " * numba_type.size + "\n", components


def count_failure(context, builder):
    """Add one to :data:`FAILURES` (CPU; compiled CUDA code has no counter)."""
    if is_cuda_context(context):
        return
    module = builder.module
    counter = module.globals.get(FAILURES_SYMBOL)
    if counter is None:
        counter = ir.GlobalVariable(module, ir.IntType(64), FAILURES_SYMBOL)
        counter.linkage = "external"
    builder.atomic_rmw("add", counter, ir.Constant(ir.IntType(64), 1), "monotonic")
