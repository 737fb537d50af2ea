"""The kernel language's scalar rule, checked three ways for every pair of scalar types.

For every pair of the kernel language's scalar types and every binary operator
(``+ - * / // % ** & | ^ << >>`` and the comparisons):

* Python mode (the operators of numba_sim.kernel_ops on NumPy scalars, as a
  ``@sim.func`` run as Python computes) and compiled code (the same calls in
  ``@njit``, as the kernel rewrite emits them) give the same result type and
  the same value, on edge values and on drawn ones, with int literals on
  either side;
* on two operands of one type, both give Warp's numbers (Warp's CPU backend).

float16 is left out of the compiled comparisons (Numba's CPU target has no
float16) but is checked against Warp in Python mode.  Integer division by zero
and ``INT_MIN / -1`` of int32/int64 are undefined in Warp (the CPU traps) and
in compiled code: the values fed to compiled code and to Warp avoid them, and
Python mode's answers for them are checked on their own.  One ``@njit``
function per operator covers all type pairs, and one Warp module all types,
to keep compile time small.
"""

import importlib.util
import itertools
import operator
import re
import sys

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.core.errors import TypingError
from numba.np import numpy_support

import numba_sim as sim
from numba_sim import kernel_ops, scalar_rule
from numba_sim.typing.kernel_ops import binary_signature

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float32, np.float64]
DTYPES = INTS + FLOATS  # the compiled scalar types (Numba's CPU target has no float16)

KERNEL_OPERATORS = list(kernel_ops.BINARY)
COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
OPERATORS = KERNEL_OPERATORS + list(COMPARISONS)
DIVISIONS = {"truediv", "floordiv", "mod"}
SHIFTS = {"lshift", "rshift"}

BIG_LITERAL = 3_000_000_001  # int64 as a literal; nonzero, and not -1, in every narrower type


def is_float(dtype):
    return np.dtype(dtype).kind == "f"


def takes(name, a, b):
    """Whether operator *name* takes dtypes *a* and *b* (else it is an error in both modes)."""
    return name in COMPARISONS or scalar_rule.operator_error(name, a, b) is None


def call(name, left, right):
    """Source of ``left <name> right`` as the rewritten kernel code spells it."""
    if name in COMPARISONS:
        return f"({left} {COMPARISONS[name]} {right})"
    return f"ops.{name}({left}, {right})"


def expressions(name):
    """The expressions one compiled function evaluates for operator *name*.

    ``x<i>`` / ``y<j>`` are the left / right operand of dtype ``DTYPES[i]`` / ``DTYPES[j]``.
    """
    exprs = [call(name, f"x{i}", f"y{j}") for (i, a), (j, b) in
             itertools.product(enumerate(DTYPES), repeat=2) if takes(name, a, b)]
    for i, dtype in enumerate(DTYPES):
        for literal in (3, BIG_LITERAL):
            literal_dtype = scalar_rule.literal_dtype(literal)
            if takes(name, dtype, literal_dtype):
                exprs += [call(name, f"x{i}", literal), call(name, literal, f"y{i}")]
    if takes(name, np.int32, np.int32):
        exprs += [call(name, 7, 2), call(name, -7, 2), call(name, 7, -2),
                  call(name, -7, BIG_LITERAL), call(name, 1, 31)]
    return exprs


_COMPILED = {}


def compiled(name):
    """(expressions, njit function of the row values returning every expression's value)."""
    if name not in _COMPILED:
        exprs = expressions(name)
        params = ", ".join([f"a{i}" for i in range(len(DTYPES))]
                           + [f"b{i}" for i in range(len(DTYPES))])
        lines = [f"def evaluate(k, {params}):"]
        lines += [f"    x{i} = a{i}[k]\n    y{i} = b{i}[k]" for i in range(len(DTYPES))]
        lines.append("    return (" + ", ".join(exprs) + ",)")
        namespace = {"ops": kernel_ops}
        exec(compile("\n".join(lines), f"<scalar_rule_{name}>", "exec"), namespace)  # noqa: S102
        _COMPILED[name] = exprs, numba.njit(namespace["evaluate"])
    return _COMPILED[name]


# --------------------------------------------------------------------------
# Values


def edges(dtype):
    """Edge values of *dtype*: signs, zero, small divisors and shift counts, the extremes."""
    if is_float(dtype):
        info = np.finfo(dtype)
        return [0.0, -0.0, 1.0, -1.0, 2.5, -7.0, 2.0, -0.5, 3.0, np.inf, -np.inf, np.nan,
                float(info.max), float(info.tiny), 1e10, -2.0**31]
    info = np.iinfo(dtype)
    values = [0, 1, 2, 7, 3, int(info.max), int(info.max) - 1, 8, 31, 63]
    if info.min < 0:
        values += [-1, -7, -2, int(info.min), int(info.min) + 1, -9]
    return values


def safe_for_compiled_code(name, row):
    """*row* (x values, y values) without integer division by zero or INT_MIN / -1."""
    xs, ys = list(row[0]), list(row[1])
    if name in DIVISIONS:
        ys = [y if is_float(d) or y != 0 else 1 for d, y in zip(DTYPES, ys)]
        if any(y == -1 for d, y in zip(DTYPES, ys) if np.dtype(d).kind == "i"):
            xs = [x + 1 if d in (np.int32, np.int64) and x == np.iinfo(d).min else x
                  for d, x in zip(DTYPES, xs)]
    return xs, ys


def edge_rows():
    """Rows pairing the k-th edge of each left type with the m-th edge of each right type."""
    lists = [edges(d) for d in DTYPES]
    length = max(len(values) for values in lists)
    return [([values[k % len(values)] for values in lists],
             [values[m % len(values)] for values in lists])
            for k in range(length) for m in range(length)]


def value_strategy(dtype):
    if is_float(dtype):
        width = np.dtype(dtype).itemsize * 8
        return st.one_of(st.sampled_from(edges(dtype)), st.floats(width=width))
    info = np.iinfo(dtype)
    return st.one_of(st.sampled_from(edges(dtype)), st.integers(int(info.min), int(info.max)))


ROW = st.tuples(st.tuples(*[value_strategy(d) for d in DTYPES]),
                st.tuples(*[value_strategy(d) for d in DTYPES]))


# --------------------------------------------------------------------------
# Comparing results


def type_name(value):
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    return np.dtype(type(value)).name


def ulps(a, b, dtype):
    signed = {2: np.int16, 4: np.int32, 8: np.int64}[np.dtype(dtype).itemsize]
    return abs(int(np.array(a, dtype).view(signed)) - int(np.array(b, dtype).view(signed)))


def same_value(got, expected, dtype, tolerance=0):
    """*got* (a boxed compiled value, or a NumPy scalar) is *expected* of *dtype*."""
    if not is_float(dtype):
        return int(got) == int(expected)
    got, expected = np.array(got, dtype), np.array(expected, dtype)
    if np.isnan(got) or np.isnan(expected):
        return bool(np.isnan(got) and np.isnan(expected))
    if got == expected:
        return bool(np.signbit(got) == np.signbit(expected))
    return tolerance > 0 and np.isfinite(got) and np.isfinite(expected) \
        and ulps(got, expected, dtype) <= tolerance


def python_mode(codes, xs, ys):
    """The value of each compiled expression in *codes*, in Python mode, for one row."""
    namespace = {"ops": kernel_ops}
    with np.errstate(all="ignore"):
        namespace.update({f"x{i}": d(x) for i, (d, x) in enumerate(zip(DTYPES, xs))})
        namespace.update({f"y{i}": d(y) for i, (d, y) in enumerate(zip(DTYPES, ys))})
        return [eval(code, namespace) for code in codes]  # noqa: S307


def check_rows(name, rows):
    exprs, evaluate = compiled(name)
    codes = [compile(expr, expr, "eval") for expr in exprs]
    tolerance = 1 if name == "pow" else 0
    rows = [safe_for_compiled_code(name, row) for row in rows]
    with np.errstate(all="ignore"):
        a_arrays = [np.array([row[0][i] for row in rows], d) for i, d in enumerate(DTYPES)]
        b_arrays = [np.array([row[1][i] for row in rows], d) for i, d in enumerate(DTYPES)]
    return_types = None
    failures = []
    for k, (xs, ys) in enumerate(rows):
        results = evaluate(k, *a_arrays, *b_arrays)
        if return_types is None:
            return_types = [str(t) for t in evaluate.nopython_signatures[0].return_type]
        for expr, got, got_type, expected in zip(exprs, results, return_types,
                                                 python_mode(codes, xs, ys)):
            if type_name(expected) != got_type or not same_value(
                    got, expected, np.dtype(type(expected)), tolerance):
                failures.append((expr, xs, ys, f"compiled {got!r}: {got_type}",
                                 f"python {expected!r}: {type_name(expected)}"))
    assert not failures, f"{len(failures)} disagreements, e.g. {failures[:3]}"
    return len(rows) * len(exprs)


@pytest.mark.parametrize("name", OPERATORS)
def test_python_mode_and_compiled_agree_on_edge_values(name):
    assert check_rows(name, edge_rows()) > 0


@pytest.mark.parametrize("name", OPERATORS)
@settings(max_examples=6, deadline=None)
@given(rows=st.lists(ROW, min_size=1, max_size=4))
def test_python_mode_and_compiled_agree_on_drawn_values(name, rows):
    check_rows(name, rows)


def test_every_type_pair_and_operator_is_compared():
    pairs = list(itertools.product(DTYPES, repeat=2))
    cases = [(name, a, b) for name in OPERATORS for a, b in pairs if takes(name, a, b)]
    errors = [(name, a, b) for name in OPERATORS for a, b in pairs if not takes(name, a, b)]
    compared = sum(len([e for e in expressions(name) if re.search(r"x\d.*y\d", e)])
                   for name in OPERATORS)
    assert compared == len(cases)
    assert len(cases) + len(errors) == len(OPERATORS) * len(DTYPES) ** 2  # errors: next tests


def test_unary_minus_agrees():
    sources = [f"ops.neg(x{i})" for i in range(len(DTYPES))]
    sources += ["ops.neg(3)", f"ops.neg({BIG_LITERAL})"]
    namespace = {"ops": kernel_ops}
    params = ", ".join(f"x{i}" for i in range(len(DTYPES)))
    exec(f"def negate({params}):\n    return ({', '.join(sources)},)", namespace)  # noqa: S102
    negate = numba.njit(namespace["negate"])
    lists = [edges(d) for d in DTYPES]
    for k in range(max(len(v) for v in lists)):
        with np.errstate(all="ignore"):
            xs = [d(v[k % len(v)]) for d, v in zip(DTYPES, lists)]
        results = negate(*xs)
        types = [str(t) for t in negate.nopython_signatures[0].return_type]
        for expr, got, got_type in zip(sources, results, types):
            namespace = {"ops": kernel_ops, **{f"x{i}": x for i, x in enumerate(xs)}}
            expected = eval(expr, namespace)  # noqa: S307
            assert type_name(expected) == got_type, expr
            assert same_value(got, expected, type(expected)), expr


@sim.func
def every_operator(a: int, b: int, u: sim.uint8, v: sim.uint8, x: float, y: float, n: sim.int64):
    return (a + b, a - b, a * b, a / b, a // b, a % b, a & b, a | b, a ^ b, a << 3, a >> 1,
            -a, a * 3, 7 // 2, -7 % 3, u + v, u - v, u * v, u / v, u // v, u % v, u << 2,
            u >> 1, u + 1, u ^ v, x + y, x - y, x * y, x / y, x // y, x % y, x ** y, x * 2,
            a * x, n + a, n * x, u + a, n // b, (a < b), (u >= v), (x != y))


@sim.kernel
def every_operator_kernel(ints: sim.array(dtype=sim.int32), small: sim.array(dtype=sim.uint8),
                          floats: sim.array(dtype=float), out: sim.array(dtype=float)):
    i = sim.tid()
    result = every_operator(ints[i], ints[i + 1], small[i], small[i + 1], floats[i],
                            floats[i + 1], sim.int64(i))
    out[i] = float(result[4]) + result[31]


def test_the_rewritten_operators_agree_and_lower_for_cuda():
    @numba.njit
    def compiled(a, b, u, v, x, y, n):
        return every_operator(a, b, u, v, x, y, n)

    for args in [(-7, 2, 250, 7, -7.5, 2.0, -9), (7, -2, 3, 250, 7.25, -0.5, 2**40)]:
        args = [t(x) for t, x in zip((np.int32, np.int32, np.uint8, np.uint8, np.float32,
                                      np.float32, np.int64), args)]
        expected = every_operator(*args)
        got = compiled(*args)
        types = [str(t) for t in compiled.nopython_signatures[0].return_type]
        assert [type_name(e) for e in expected] == types
        for k, (g, e) in enumerate(zip(got, expected)):
            assert same_value(g, e, np.dtype(type(e)), 1 if k == 31 else 0), (k, g, e)
    assert types[:15] == ["int32"] * 15 and types[15:25] == ["uint8"] * 10
    assert types[25:34] == ["float32"] * 9
    assert types[34:38] == ["int64", "float32", "int32", "int64"]
    inputs = [np.arange(4, dtype=np.int32), np.arange(4, dtype=np.uint8),
              np.ones(4, np.float32), np.zeros(4, np.float32)]
    ptx = every_operator_kernel.inspect("cuda", "ptx", inputs, cc=(7, 5))
    assert ".f64" not in ptx


# --------------------------------------------------------------------------
# The rule itself, and its errors


@pytest.mark.parametrize("a, b, expected", [
    (np.float32, np.int64, np.float32), (np.int32, np.uint32, np.uint32),
    (np.int64, np.uint32, np.int64), (np.uint64, np.int64, np.uint64),
    (np.int8, np.int8, np.int8), (np.float16, np.float32, np.float32),
    (np.float16, np.int64, np.float16), (np.float32, np.float64, np.float64),
])
def test_the_rule(a, b, expected):
    for x, y in ((a, b), (b, a)):
        assert type(kernel_ops.add(x(1), y(2))) is expected
        assert binary_signature(None, "add", numpy_support.from_dtype(np.dtype(x)),
                                numpy_support.from_dtype(np.dtype(y)))[0].return_type \
            == numpy_support.from_dtype(np.dtype(expected))


def test_literals_adopt_the_other_type_and_python_floats_are_float64():
    wrapped = kernel_ops.add(np.uint8(250), 10)
    assert type(wrapped) is np.uint8 and wrapped == 4
    assert type(kernel_ops.mul(np.float16(2), 3)) is np.float16
    assert type(kernel_ops.add(2, 3)) is np.int32 and type(kernel_ops.add(2, 2**40)) is np.int64
    assert type(kernel_ops.add(np.int32(1), 2**40)) is np.int32  # adopts, and wraps as compiled
    assert type(kernel_ops.mul(np.float32(2), 1.5)) is np.float64  # a float global is float64
    assert type(kernel_ops.neg(2)) is np.int32


@pytest.mark.parametrize("name", ["truediv", "floordiv", "mod"])
def test_integer_division_by_zero_raises_in_python_mode(name):
    for dtype in INTS:
        with pytest.raises(ZeroDivisionError):
            getattr(kernel_ops, name)(dtype(7), dtype(0))
    assert np.isinf(kernel_ops.truediv(np.float32(1), np.float32(0)))
    assert np.isnan(kernel_ops.mod(np.float32(1), np.float32(0)))


def test_int_min_by_minus_one_wraps_in_python_mode():
    for dtype in (np.int8, np.int16, np.int32, np.int64):  # C defines it for int8/int16
        low = dtype(np.iinfo(dtype).min)
        assert kernel_ops.truediv(low, dtype(-1)) == low == kernel_ops.floordiv(low, dtype(-1))
        assert kernel_ops.mod(low, dtype(-1)) == 0


def test_warp_examples():
    ops = kernel_ops
    i = np.int32
    def divisions(a, b):
        return ops.floordiv(a, b), ops.mod(a, b), ops.truediv(a, b)

    assert divisions(i(-7), i(2)) == (-4, -1, -3) and divisions(i(7), i(-2)) == (-4, 1, -3)
    assert divisions(np.float32(-7), np.float32(2)) == (-4, -1, -3.5)
    assert ops.lshift(i(1), i(32)) == 0 and ops.rshift(i(-8), i(40)) == -1
    assert ops.rshift(i(-8), i(1)) == -4
    assert ops.rshift(np.uint32(2**31), np.uint32(31)) == 1


def error_pairs():
    return [(name, a, b) for name in KERNEL_OPERATORS for a, b in
            itertools.product(DTYPES + [np.float16], repeat=2) if not takes(name, a, b)]


def test_errors_name_both_types_and_the_cast_in_both_modes():
    pairs = error_pairs()
    assert len(pairs) == 5 * (11**2 - 8**2) + 8**2  # bitwise with a float, ** on two ints
    for name, a, b in pairs:
        with pytest.raises(TypeError) as python_error:
            getattr(kernel_ops, name)(a(1), b(2))
        message = str(python_error.value)
        assert np.dtype(a).name in message and np.dtype(b).name in message
        assert ("float32(a) ** b" if name == "pow" else "convert the float first") in message
        with pytest.raises(TypingError) as typing_error:
            binary_signature(None, name, numpy_support.from_dtype(np.dtype(a)),
                             numpy_support.from_dtype(np.dtype(b)))
        assert message in str(typing_error.value)
    assert "int32(a) & b" in scalar_rule.operator_error("and_", np.float32, np.int32)
    assert "a << int64(b)" in scalar_rule.operator_error("lshift", np.int64, np.float64)
    assert "float32(a) ** b" in scalar_rule.operator_error("pow", np.int32, np.int64)


def test_errors_reach_the_user_when_compiled():
    @numba.njit
    def bitwise(a, b):
        return kernel_ops.xor(a, b)

    with pytest.raises(TypingError, match=r"int64\(a\) \^ b"):
        bitwise(np.float32(1), np.int64(2))

    @numba.njit
    def power(a):
        return kernel_ops.pow(a, 2)

    with pytest.raises(TypingError, match=r"float32\(a\) \*\* b"):
        power(np.int32(3))


def test_augmented_assignment_converts_the_value_to_the_element_type():
    @numba.njit
    def update(ints, floats, value, scale):
        kernel_ops.update_item(ints, 0, "mul", value)
        kernel_ops.update_item(ints, 1, "floordiv", 2)
        kernel_ops.update_item(floats, 0, "mod", scale)
        kernel_ops.update_item(ints, 2, "rshift", 1)

    values = np.array([-3, -7, -9], np.int32), np.array([7.5], np.float32)
    compiled_values = [v.copy() for v in values]
    update(*compiled_values, np.float32(2.5), 2.0)
    for index, op, value in ((0, "mul", np.float32(2.5)), (1, "floordiv", 2), (2, "rshift", 1)):
        kernel_ops.update_item(values[0], index, op, value)
    kernel_ops.update_item(values[1], 0, "mod", 2.0)
    assert values[0].tolist() == compiled_values[0].tolist() == [-6, -4, -5]
    assert values[1].tolist() == compiled_values[1].tolist() == [1.5]
    with pytest.raises(TypeError, match="bitwise"):
        kernel_ops.update_item(values[1], 0, "and_", 1)


# --------------------------------------------------------------------------
# Warp


WARP_DTYPES = DTYPES + [np.float16]
WARP_NAMES = {np.dtype(d).name: d for d in WARP_DTYPES}


def warp_operators(dtype):
    return [name for name in OPERATORS if takes(name, dtype, dtype)]


def warp_expression(name, left, right):
    symbol = COMPARISONS.get(name) or scalar_rule.SYMBOLS[name]
    return f"{left} {symbol} {right}"


def warp_module_source():
    lines = ["import warp as wp"]
    for dtype in WARP_DTYPES:
        type_name = np.dtype(dtype).name
        array = f"wp.array(dtype=wp.{type_name})"
        lines += [
            "@wp.kernel",
            f"def ops_{type_name}(a: {array}, b: {array}, divisor: {array}, count: {array},"
            f" out: wp.array2d(dtype=wp.{type_name}), truth: wp.array2d(dtype=wp.int32)):",
            "    i = wp.tid()",
        ]
        for k, name in enumerate(warp_operators(dtype)):
            right = "divisor[i]" if name in DIVISIONS else "count[i]" if name in SHIFTS else "b[i]"
            expr = warp_expression(name, "a[i]", right)
            if name in COMPARISONS:
                lines.append(f"    truth[i, {k}] = wp.where({expr}, 1, 0)")
            else:
                lines.append(f"    out[i, {k}] = {expr}")
    return "\n".join(lines) + "\n"


def warp_inputs(dtype):
    """(a, b, divisor, count): the edge pairs, with Warp's undefined cases made defined."""
    with np.errstate(over="ignore"):  # float16's edges overflow to inf
        a, b = (np.array(v, dtype) for v in zip(*itertools.product(edges(dtype), repeat=2)))
    if is_float(dtype):
        return a, b, b, b
    divisor = np.where(b == 0, 1, b).astype(dtype)
    if np.iinfo(dtype).min < 0 and np.dtype(dtype).itemsize >= 4:
        divisor = np.where((a == np.iinfo(dtype).min) & (divisor == -1), 3, divisor).astype(dtype)
    bits = max(np.dtype(dtype).itemsize * 8, 32)  # C shifts narrow types as int: counts up to 31
    count = (b.astype(np.int64) % bits).astype(dtype)
    return a, b, divisor, count


@pytest.fixture(scope="session")
def warp_results(tmp_path_factory):
    """Warp's results on the edge pairs: one module, one kernel per dtype, compiled once."""
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    path = tmp_path_factory.mktemp("warp") / "numba_sim_scalar_rule_reference.py"
    path.write_text(warp_module_source())
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    results = {}
    for dtype in WARP_DTYPES:
        type_name = np.dtype(dtype).name
        inputs = warp_inputs(dtype)
        warp_type = getattr(wp, type_name)
        arrays = [wp.array(x, dtype=warp_type, device="cpu") for x in inputs]
        n, count = len(inputs[0]), len(warp_operators(dtype))
        out = wp.zeros((n, count), dtype=warp_type, device="cpu")
        truth = wp.zeros((n, count), dtype=wp.int32, device="cpu")
        wp.launch(getattr(module, f"ops_{type_name}"), dim=n, inputs=[*arrays, out, truth],
                  device="cpu")
        results[type_name] = inputs, out.numpy(), truth.numpy()
    return results


@pytest.mark.parametrize("type_name", list(WARP_NAMES))
def test_same_type_results_match_warp(warp_results, type_name):
    dtype = WARP_NAMES[type_name]
    (a, b, divisor, count), out, truth = warp_results[type_name]
    failures = []
    for k, name in enumerate(warp_operators(dtype)):
        right = divisor if name in DIVISIONS else count if name in SHIFTS else b
        for row, (x, y) in enumerate(zip(a, right)):
            with np.errstate(all="ignore"):
                if name in COMPARISONS:
                    ours, theirs = bool(getattr(operator, name)(x, y)), bool(truth[row, k])
                    ok = ours == theirs
                else:
                    ours, theirs = getattr(kernel_ops, name)(x, y), out[row, k]
                    ok = type(ours) is dtype and same_value(ours, theirs, dtype,
                                                            1 if name == "pow" else 0)
            if not ok:
                failures.append((name, x, y, ours, theirs))
    assert not failures, f"{len(failures)} differ from Warp, e.g. {failures[:5]}"
