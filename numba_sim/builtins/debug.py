"""Debugging from kernels: ``print``, ``printf`` and the expectations ``expect_eq``,
``expect_neq``, ``expect_near`` (Warp's "Utility" builtins), on the CPU and CUDA.

``print(x)`` inside a ``@sim.kernel`` / ``@sim.func`` prints as Warp's
``print``: ``%g`` for floats, integers in decimal, ``True``/``False``, a vector
as its components each followed by a space (``1 2 3 ``), a quaternion as
``x y z w``, a matrix one row per line, a transform as ``(p) (q)``, each
followed by a newline (the kernel rewrite turns Python's ``print`` into
:func:`kernel_print`).  Several arguments are printed on one line, separated by
spaces; string literals print as themselves.  ``printf(fmt, *args)`` is C's
``printf`` with a string-literal format; floats are passed as double, as C
does.  Compiled code prints through the C library (CPU, flushed at once) or
CUDA's ``vprintf`` (GPU: the text appears when the device synchronizes); run as
Python, through Python's ``print``.

``expect_eq(a, b)``, ``expect_neq(a, b)`` and ``expect_near(a, b,
tolerance=1e-6)`` compare scalars or values of one type and, when the
expectation fails, print Warp's message (``Error, expect_eq() failed:`` with
the expected and actual values), followed by the call's ``file:line`` inside a
kernel or func, and go on.  ``expect_near`` of values compares the largest
absolute component difference with the tolerance, taken with Warp's ``max``
(a NaN difference is ignored, so NaN passes, as in Warp).

Failures are also counted, process-wide: :func:`expect_failure_count` reads the
count of CPU kernels and Python mode, :func:`reset_expect_failures` sets it
back to 0 (compiled CUDA code prints only).  So a ported Warp test fails
under pytest when it violates an expectation: with ``pytest_plugins =
["numba_sim.testing"]`` in a ``conftest.py``, every test that leaves the count
higher than it found it fails, naming the count.
"""

import re
import threading

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing import signature
from numba.core.typing.templates import AbstractTemplate

from numba_sim import algebra
from numba_sim.builtins.forms import common_scalar
from numba_sim.lowering import debug as _lowering
from numba_sim.lowering.operations import components
from numba_sim.operations import is_scalar, is_value
from numba_sim.registry import lowering_registry, typing_registry
from numba_sim.types import KIND_MAT, KIND_QUAT, KIND_TRANSFORM, Value

_PYTHON_LOCK = threading.Lock()


# --------------------------------------------------------------------------
# The failure count


def expect_failure_count():
    """The number of failed ``expect_eq`` / ``expect_neq`` / ``expect_near`` calls in this
    process so far: in CPU kernels and funcs, and run as Python (not on a GPU)."""
    return int(_lowering.FAILURES.value)


def reset_expect_failures():
    """Set :func:`expect_failure_count` back to 0; returns the count it had."""
    with _PYTHON_LOCK:
        count = int(_lowering.FAILURES.value)
        _lowering.FAILURES.value = 0
    return count


# --------------------------------------------------------------------------
# Python semantics: Warp's formats, Python's print


def _format_scalar(x):
    if isinstance(x, (bool, np.bool_)):
        return "True" if x else "False"
    if isinstance(x, (float, np.floating)):
        return "%g" % float(x)
    return "%d" % int(x)


def python_format(value):
    """*value* as Warp's ``print`` writes it, newline(s) included."""
    if isinstance(value, str):
        return value + "\n"
    if not isinstance(value, Value):
        return _format_scalar(value) + "\n"
    parts = ["%g" % float(np.float32(x)) for x in value._components()]
    spec = value.spec
    if spec.kind == KIND_QUAT:
        return " ".join(parts) + "\n"
    if spec.kind == KIND_TRANSFORM:
        return f"({' '.join(parts[:3])}) ({' '.join(parts[3:])})\n"
    if spec.kind == KIND_MAT or len(spec.shape) == 2:
        columns = spec.shape[1]
        return "".join("".join(p + " " for p in parts[r:r + columns]) + "\n"
                       for r in range(0, len(parts), columns))
    return "".join(p + " " for p in parts) + "\n"


def _line(items):
    """One ``print`` of several items: Warp's format of each, on one line."""
    if len(items) == 1:
        return items[0]
    return " ".join(item.rstrip("\n").replace("\n", " ") for item in items) + "\n"


_C_CONVERSION = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(?:hh|h|ll|l|z|j|t|L)?([diouxXeEfgGcs%])")


PRINTF_MAX_ARGS = 32
"""The most values one printf takes after its format (Warp's limit)."""


def _check_printf_count(count, error=TypingError):
    if count > PRINTF_MAX_ARGS:
        raise error(f"printf(fmt, *args) with {count} values: the maximum number of "
                          f"variadic arguments that can be passed to `printf` is "
                          f"{PRINTF_MAX_ARGS}")


def _python_printf(fmt, *args):
    """C's printf, in Python: length modifiers dropped, ``%u`` as ``%d``."""
    _check_printf_count(len(args), TypeError)
    def python_conversion(match):
        flags, conversion = match.group(1), match.group(2)
        if conversion == "%":
            return "%%"
        return f"%{flags}{'d' if conversion == 'u' else conversion}"

    converted = _C_CONVERSION.sub(python_conversion, fmt)
    values = tuple(float(a) if isinstance(a, (float, np.floating)) else
                   int(a) if isinstance(a, (int, np.integer)) else a for a in args)
    print(converted % values, end="", flush=True)


def _python_expect(kind, actual, expected, tolerance=None, where=None):
    a = _python_components(actual)
    b = _python_components(expected)
    if kind == "near":
        tolerance = np.asarray(a[0]).dtype.type(tolerance)
        diff, failed = _near(a, b, tolerance, isinstance(actual, Value))
    else:
        equal = all(bool(x == y) for x, y in zip(a, b))
        failed = not equal if kind == "eq" else equal
    if failed:
        text = _failure_text_python(kind, actual, expected, tolerance,
                                    diff if kind == "near" else None, where)
        with _PYTHON_LOCK:
            _lowering.FAILURES.value += 1
        print(text, end="", flush=True)


def _python_components(value):
    if isinstance(value, Value):
        return [value.spec.scalar_type(x) for x in value._components()]
    return [value]


def _near(a, b, tolerance, is_value_type):
    """(difference, failed) of expect_near: Warp's formulas (formula scalars)."""
    if not is_value_type:
        diff = algebra.absolute(a[0] - b[0])
    else:
        diff = algebra.zero_like(a[0])
        for x, y in zip(a, b):
            diff = algebra.maximum(diff, algebra.absolute(x - y))
    return diff, diff > tolerance


def _failure_text_python(kind, actual, expected, tolerance, diff, where):
    if kind == "near":
        label = "Max absolute difference" if isinstance(actual, Value) else "Absolute difference"
        text = (f"Error, expect_near() failed with tolerance {python_format(tolerance)}"
                f"    Expected: {python_format(expected)}    Actual: {python_format(actual)}"
                f"    {label}: {python_format(diff)}")
    else:
        text = (f"Error, expect_{kind}() failed:\n\t Expected: {python_format(expected)}"
                f"\t Actual: {python_format(actual)}")
    return text + (f"\t At: {where}\n" if where else "")


# --------------------------------------------------------------------------
# Typing


def _location(name, args):
    """(the arguments without a trailing location literal, the location or None)."""
    if args and isinstance(args[-1], (types.StringLiteral, types.UnicodeType)):
        if not isinstance(args[-1], types.StringLiteral):
            raise TypingError(f"{name}: the location must be a string literal")
        return args[:-1], args[-1]
    return args, None


def _printable(argtype):
    return is_scalar(argtype) or isinstance(argtype, types.Boolean) or is_value(argtype) \
        or isinstance(argtype, types.StringLiteral)


def _expect_typer(kind):
    name = f"expect_{kind}"
    usage = f"{name}(a, b, tolerance=1e-6)" if kind == "near" else f"{name}(a, b)"

    def typer(*args):
        values, where = _location(name, args)
        expected_count = (2, 3) if kind == "near" else (2,)
        if len(values) not in expected_count:
            raise TypingError(f"{usage}: got {len(values)} arguments")
        a, b = (types.unliteral(t) for t in values[:2])
        if is_value(a) or is_value(b):
            if a != b:
                raise TypingError(f"{usage} with {a} and {b}: Can't test equality for objects "
                                  f"with different types")
            common = a
        elif is_scalar(a) and is_scalar(b) or (kind != "near" and a == b == types.boolean):
            common = a if a == b else common_scalar(name, (a, b), floats_only=False)
        else:
            raise TypingError(f"{usage}: expected scalars or values of one type, got {a} and {b}")
        extra = ()
        if kind == "near":
            scalar = common.dtype if is_value(common) else common
            if not isinstance(scalar, types.Float):
                raise TypingError(f"{usage}: compares floating-point values, not {common}")
            if len(values) == 3:
                tolerance = types.unliteral(values[2])
                if not is_scalar(tolerance):
                    raise TypingError(f"{usage}: the tolerance must be a number, not {tolerance}")
                extra = (scalar,)
        return signature(types.none, common, common, *extra, *((where,) if where else ()))

    return typer


def _print_typer(*args):
    for argtype in args:
        if not _printable(argtype):
            raise TypingError(f"print in a kernel prints numbers, booleans, value types and "
                              f"string literals, not {argtype}")
    return signature(types.none, *[a if isinstance(a, types.StringLiteral) else
                                   types.unliteral(a) for a in args])


def _printf_typer(*args):
    if not args or not isinstance(args[0], types.StringLiteral):
        raise TypingError(f"printf(fmt, *args): fmt must be a string literal, got "
                          f"{args[0] if args else 'nothing'}")
    _check_printf_count(len(args) - 1)
    rest = []
    for argtype in args[1:]:
        if isinstance(argtype, types.StringLiteral):
            rest.append(argtype)
            continue
        if isinstance(argtype, types.IntegerLiteral) and -2**31 <= argtype.literal_value < 2**31:
            rest.append(types.int32)  # an int literal is int32, as in Warp (a %d takes it)
            continue
        argtype = types.unliteral(argtype)
        if not (is_scalar(argtype) or isinstance(argtype, types.Boolean)):
            raise TypingError(f"printf(fmt, *args): prints numbers and string literals, not "
                              f"{argtype} (print value types with print())")
        rest.append(argtype)
    return signature(types.none, args[0], *rest)


def _declare(fn, typer, lower):
    """Typing (literal strings kept) and lowering of *fn*, in numba_sim's registries."""
    name = fn.__name__

    class Template(AbstractTemplate):
        key = fn
        prefer_literal = True

        def generic(self, args, kws):
            if kws:
                raise TypingError(f"{name}() takes no keyword arguments in compiled code (inside "
                                  f"a kernel or func, write them as in Warp)")
            return typer(*args)

    Template.__name__ = f"Typing_{name}"
    typing_registry.register_global(fn, types.Function(Template))
    lowering_registry.lower(fn, types.VarArg(types.Any))(lower)


# --------------------------------------------------------------------------
# Lowering


def _lower_print(context, builder, sig, args):
    pieces = [_lowering.print_format(context, builder, t, v) for t, v in zip(sig.args, args)]
    if len(pieces) == 1:
        fmt, values = pieces[0]
    else:
        fmt = " ".join(p[0].rstrip("\n").replace("\n", " ") for p in pieces) + "\n"
        values = [v for p in pieces for v in p[1]]
    _lowering.emit_printf(context, builder, fmt or "\n", values)
    return context.get_dummy_value()


def _lower_printf(context, builder, sig, args):
    values = []
    for argtype, value in zip(sig.args[1:], args[1:]):
        if isinstance(argtype, types.StringLiteral):
            value = _lowering.string_pointer(context, builder, argtype.literal_value)
        elif isinstance(argtype, types.Float):
            value = context.cast(builder, value, argtype, types.float64)
        elif isinstance(argtype, (types.Integer, types.Boolean)) and argtype.bitwidth < 32:
            value = context.cast(builder, value, argtype,
                                 types.uint32 if isinstance(argtype, types.Boolean)
                                 or not argtype.signed else types.int32)
        values.append(value)
    _lowering.emit_printf(context, builder, sig.args[0].literal_value, values)
    return context.get_dummy_value()


def _as_list(x):
    return x if isinstance(x, list) else [x]


def _lower_expect(kind):
    def lower(context, builder, sig, args):
        where = sig.args[-1].literal_value if isinstance(sig.args[-1], types.StringLiteral) \
            else None
        actual_type = sig.args[0]
        a = _as_list(components(context, builder, args[0], actual_type))
        b = _as_list(components(context, builder, args[1], actual_type))
        scalar = actual_type.dtype if is_value(actual_type) else actual_type
        if kind == "near":
            tolerance = (args[2] if len(sig.args) > 2 and not isinstance(
                sig.args[2], types.StringLiteral) else context.get_constant(scalar, 1e-6))
            diff, failed = _near(a, b, components(context, builder, tolerance, scalar),
                                 is_value(actual_type))
        else:
            equal = algebra.equal(a, b)
            failed = ~equal if kind == "eq" else equal
        with builder.if_then(failed.value, likely=False):
            expected_fmt, expected_values = _lowering.print_format(context, builder, actual_type,
                                                                   args[1])
            actual_fmt, actual_values = _lowering.print_format(context, builder, actual_type,
                                                               args[0])
            if kind == "near":
                tolerance_fmt, tolerance_values = _lowering.print_format(context, builder, scalar,
                                                                         tolerance)
                diff_fmt, diff_values = _lowering.print_format(context, builder, scalar,
                                                               diff.value)
                label = "Max absolute difference" if is_value(actual_type) else \
                    "Absolute difference"
                fmt = (f"Error, expect_near() failed with tolerance {tolerance_fmt}"
                       f"    Expected: {expected_fmt}    Actual: {actual_fmt}"
                       f"    {label}: {diff_fmt}")
                values = tolerance_values + expected_values + actual_values + diff_values
            else:
                fmt = (f"Error, expect_{kind}() failed:\n\t Expected: {expected_fmt}"
                       f"\t Actual: {actual_fmt}")
                values = expected_values + actual_values
            if where:
                fmt += f"\t At: {_lowering.escape(where)}\n"
            _lowering.emit_printf(context, builder, fmt, values)
            _lowering.count_failure(context, builder)
        return context.get_dummy_value()

    lower.__name__ = f"lower_expect_{kind}"
    return lower


# --------------------------------------------------------------------------
# The builtins


def kernel_print(*args):
    """Python's ``print`` inside a kernel or func (the rewrite calls this): Warp's format."""
    print(_line([python_format(a) for a in args]) if args else "", end="", flush=True)


def printf(fmt, *args):
    """printf(fmt, *args): C's printf; *fmt* must be a string literal in compiled code."""
    _python_printf(fmt, *args)


def expect_eq(a, b, *where):
    """expect_eq(a, b): print an error (Warp's message, with the call's file:line) and count
    a failure if a != b; scalars or values of one type."""
    _python_expect("eq", a, b, where=where[0] if where else None)


def expect_neq(a, b, *where):
    """expect_neq(a, b): print an error and count a failure if a == b."""
    _python_expect("neq", a, b, where=where[0] if where else None)


def expect_near(a, b, tolerance=1e-6, *where):
    """expect_near(a, b, tolerance=1e-6): print an error and count a failure if a and b (float
    scalars, vectors, quaternions or matrices) differ by more than *tolerance* (for values:
    the largest absolute component difference)."""
    if isinstance(tolerance, str):
        tolerance, where = 1e-6, (tolerance,)
    _python_expect("near", a, b, tolerance, where=where[0] if where else None)


for _fn in (kernel_print, printf, expect_eq, expect_neq, expect_near):
    _fn.__module__ = "numba_sim"

_declare(kernel_print, _print_typer, _lower_print)
_declare(printf, _printf_typer, _lower_printf)
_declare(expect_eq, _expect_typer("eq"), _lower_expect("eq"))
_declare(expect_neq, _expect_typer("neq"), _lower_expect("neq"))
_declare(expect_near, _expect_typer("near"), _lower_expect("near"))

EXPECTATIONS = (expect_eq, expect_neq, expect_near)
"""The builtins the kernel rewrite gives the call's location (a last string literal)."""

__all__ = ["printf", "expect_eq", "expect_neq", "expect_near", "expect_failure_count",
           "reset_expect_failures"]
