"""Issue 17's builtins: div, mod, floordiv, nonzero, rint, log2, log10, where, select, bit_and, bit_or,
bit_xor, invert, atomic_exch, atomic_cas: Warp's numbers bit for bit on the CPU, the same in
Python mode, and an offline CUDA compile-and-link.

The scalar expressions are written once over a module name ``M`` (as in
tests/test_builtins_warp.py); the Warp kernel uses ``wp.`` and ours ``sim.``.
"""

import importlib.util
import math
import sys

import numpy as np
import pytest

import numba_sim as sim

N = 64

FLOAT_EXPRESSIONS = [  # over float32 a, b and int32 n
    "M.div(a, b)", "M.mod(a, b)", "M.nonzero(a)", "M.rint(a)", "M.log2(M.abs(a))",
    "M.log10(M.abs(a))", "M.where(a > b, a, b)", "M.where(n, a, b)", "M.div(a, 3.0)",
    "M.div(M.vec3(a, b, 1.0), b)[0]", "M.div(b, M.vec3(a, b, 1.0))[2]",
    "M.mod(M.vec3(a, b, 1.0), M.vec3(b, a, b))[1]", "M.where(a < 0.0, M.vec3(a), M.vec3(b))[1]",
    "M.div(M.mat22(a, b, a, b), a)[1, 1]", "M.floordiv(a, b)", "M.floordiv(a, -2.0)",
]
INT_EXPRESSIONS = [  # over int32 n, k (k never 0)
    "M.div(n, k)", "M.mod(n, k)", "M.nonzero(n)", "M.bit_and(n, k)", "M.bit_or(n, k)",
    "M.bit_xor(n, k)", "M.invert(n)", "M.where(n > k, n, k)", "M.div(M.vec3i(n, k, 7), k)[0]",
    "M.mod(M.vec3i(n, k, 7), M.vec3i(k, k, k))[2]",
    "M.bit_xor(M.vec3i(n, k, 7), M.vec3i(k, n, n))[1]", "M.invert(M.vec3i(n, k, 7))[2]",
    "M.floordiv(n, k)", "M.floordiv(n, -3)",
]


def kernel_source(module):
    lines = [
        f"def more_builtins(s: {module}.array(dtype={module}.float32, ndim=2),"
        f" ints: {module}.array(dtype={module}.int32, ndim=2),"
        f" out: {module}.array(dtype={module}.float32, ndim=2),"
        f" iout: {module}.array(dtype={module}.int32, ndim=2)):",
        f"    i = {module}.tid()",
        "    a = s[i, 0]", "    b = s[i, 1]", "    n = ints[i, 0]", "    k = ints[i, 1]",
    ]
    lines += [f"    out[i, {j}] = {e.replace('M.', module + '.')}"
              for j, e in enumerate(FLOAT_EXPRESSIONS)]
    lines += [f"    iout[i, {j}] = {e.replace('M.', module + '.')}"
              for j, e in enumerate(INT_EXPRESSIONS)]
    return "\n".join(lines) + "\n"


def load_kernel(tmp_path, name, source, decorator):
    path = tmp_path / f"{name}.py"
    header = "import warp as wp" if decorator.startswith("wp.") else "import numba_sim as sim"
    path.write_text(f"{header}\n@{decorator}\n{source}")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.more_builtins


def inputs():
    rng = np.random.default_rng(17)
    s = rng.uniform(-5, 5, (N, 2)).astype(np.float32)
    s[:8, 0] = [0.5, -0.5, 2.5, -2.5, 0.0, -0.0, np.inf, np.nan]
    s[:4, 1] = [0.0, -1.5, 3.0, np.inf]
    ints = rng.integers(-100, 100, (N, 2)).astype(np.int32)
    ints[:, 1] = np.where(ints[:, 1] == 0, 3, ints[:, 1])
    ints[:3, 0] = [0, -2**31, 2**31 - 1]
    return s, ints


@pytest.fixture(scope="module")
def numba_sim_results(tmp_path_factory):
    kernel = load_kernel(tmp_path_factory.mktemp("ours"), "numba_sim_more_builtins",
                         kernel_source("sim"), "sim.kernel")
    s, ints = inputs()
    out = np.zeros((N, len(FLOAT_EXPRESSIONS)), np.float32)
    iout = np.zeros((N, len(INT_EXPRESSIONS)), np.int32)
    sim.launch(kernel, dim=N, inputs=[s, ints, out, iout])
    return kernel, out, iout


def same_bits(a, b):
    return (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))


def test_builtins_match_warp_bit_for_bit(numba_sim_results, tmp_path):
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    kernel = load_kernel(tmp_path, "warp_more_builtins", kernel_source("wp"), "wp.kernel")
    s, ints = inputs()
    arrays = [wp.array(s, dtype=wp.float32, device="cpu"),
              wp.array(ints, dtype=wp.int32, device="cpu"),
              wp.zeros((N, len(FLOAT_EXPRESSIONS)), dtype=wp.float32, device="cpu"),
              wp.zeros((N, len(INT_EXPRESSIONS)), dtype=wp.int32, device="cpu")]
    wp.launch(kernel, dim=N, inputs=arrays, device="cpu")
    _, out, iout = numba_sim_results
    expected, iexpected = arrays[2].numpy(), arrays[3].numpy()
    for j, expression in enumerate(FLOAT_EXPRESSIONS):
        ok = same_bits(out[:, j], expected[:, j])
        if "log" in expression:  # the C library's log2f / log10f: one ulp across builds
            ok |= np.abs(out[:, j].view(np.int32) - expected[:, j].view(np.int32)) <= 1
        assert ok.all(), (expression, np.flatnonzero(~ok)[:5], out[~ok, j][:5],
                          expected[~ok, j][:5])
    for j, expression in enumerate(INT_EXPRESSIONS):
        if expression.startswith(("M.div(n", "M.mod(n", "M.floordiv(n")):
            rows = ints[:, 0] != -2**31  # INT_MIN / -1 is undefined in C
        else:
            rows = slice(None)
        np.testing.assert_array_equal(iout[rows, j], iexpected[rows, j], err_msg=expression)


def test_python_mode_matches_compiled(numba_sim_results):
    _, out, iout = numba_sim_results
    s, ints = inputs()
    with np.errstate(all="ignore"):
        for i in range(N):
            namespace = {"M": sim, "a": s[i, 0], "b": s[i, 1], "n": ints[i, 0], "k": ints[i, 1]}
            for j, expression in enumerate(FLOAT_EXPRESSIONS):
                got = np.float32(eval(expression, namespace))  # noqa: S307
                assert same_bits(got, out[i, j]) | ("log" in expression
                                                    and abs(got - out[i, j]) <= 1e-6 * abs(got)), \
                    (expression, i, got, out[i, j])
            if ints[i, 0] == -2**31:
                continue
            for j, expression in enumerate(INT_EXPRESSIONS):
                assert eval(expression, namespace) == iout[i, j], (expression, i)  # noqa: S307


@sim.kernel
def floor_divisions(a8: sim.array(dtype=sim.int8), b8: sim.array(dtype=sim.int8),
                    u8: sim.array(dtype=sim.uint8), v8: sim.array(dtype=sim.uint8),
                    a64: sim.array(dtype=sim.int64), b64: sim.array(dtype=sim.int64),
                    x: sim.array(dtype=sim.float64), y: sim.array(dtype=sim.float64),
                    o8: sim.array(dtype=sim.int8), ou8: sim.array(dtype=sim.uint8),
                    o64: sim.array(dtype=sim.int64), ox: sim.array(dtype=sim.float64)):
    i = sim.tid()
    o8[i] = sim.floordiv(a8[i], b8[i])
    ou8[i] = sim.floordiv(u8[i], v8[i])
    o64[i] = sim.floordiv(a64[i], b64[i])
    ox[i] = sim.floordiv(x[i], y[i])


def test_floordiv_rounds_toward_negative_infinity_for_every_width():
    """Warp's floordiv (builtin.h): signed ints round toward -inf (NumPy's ``//``), unsigned
    ints truncate, floats are floor(a / b) -- also for 8-bit ints, which C promotes."""
    a = np.array([-7, 7, -7, 7, -1, -8, 5, -5, 0, 6, 9, -9, -128, 127], np.int8)
    b = np.array([2, -2, -2, 2, 2, 4, 3, -3, -3, -3, -1, 1, 3, -128], np.int8)
    u, v = np.array([255, 7, 0, 200] * 3 + [1, 2], np.uint8), np.arange(1, 15, dtype=np.uint8)
    a64, b64 = a.astype(np.int64) * 10**12, b.astype(np.int64)
    x = np.array([-7.5, 7.5, -0.5, 1e300, -3.0, 3.0, 0.0, -0.0, 5.0, -5.0, 1.0, 2.0, 9, -9])
    y = np.array([2.0, -2.0, 3.0, 1e-300, 3.0, -3.0, 1.0, 2.0, 0.5, 0.5, 3.0, 4.0, 2, 2])
    outs = [np.zeros(14, t) for t in (np.int8, np.uint8, np.int64, np.float64)]
    sim.launch(floor_divisions, dim=14, inputs=[a, b, u, v, a64, b64, x, y, *outs])
    np.testing.assert_array_equal(outs[0], np.floor_divide(a, b))
    np.testing.assert_array_equal(outs[1], u // v)
    np.testing.assert_array_equal(outs[2], np.floor_divide(a64, b64))
    with np.errstate(over="ignore"):  # 1e300 / 1e-300 is inf, in the kernel too
        np.testing.assert_array_equal(outs[3], np.floor(x / y))
    assert np.signbit(outs[3][7])  # floor(-0.0 / 2.0) keeps the sign
    for i in range(14):  # Python mode, the same numbers and types
        assert sim.floordiv(a[i], b[i]) == outs[0][i] and type(sim.floordiv(a[i], b[i])) is np.int8
        assert sim.floordiv(u[i], v[i]) == outs[1][i]
        assert sim.floordiv(x[i], y[i]) == outs[3][i]
    assert sim.floordiv(np.int16(-7), 2) == -4 and type(sim.floordiv(np.int16(-7), 2)) is np.int16
    with pytest.raises(TypeError, match=r"floordiv\(vec3, float32\)"):
        sim.floordiv(sim.vec3(1.0), np.float32(2.0))
    with pytest.raises(ZeroDivisionError):
        sim.floordiv(np.int32(1), np.int32(0))
    library = floor_divisions.compile("cuda", [a, b, u, v, a64, b64, x, y, *outs], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


def test_select_is_where_with_warps_deprecated_argument_order():
    @sim.kernel
    def selects(c: sim.array(dtype=sim.int32), out: sim.array(dtype=float),
                vout: sim.array(dtype=sim.vec3)):
        i = sim.tid()
        out[i] = sim.select(c[i], 1.0, 2.0)
        vout[i] = sim.select(c[i] > 0, sim.vec3(1.0), sim.vec3(2.0))

    c = np.array([0, 5, -1], np.int32)
    out, vout = np.zeros(3, np.float32), np.zeros((3, 3), np.float32)
    sim.launch(selects, dim=3, inputs=[c, out, vout])
    assert out.tolist() == [1.0, 2.0, 2.0]
    assert vout[:, 0].tolist() == [1.0, 2.0, 1.0]
    assert sim.select(False, 1, 2) == 1 and sim.where(False, 1, 2) == 2


def test_wrong_calls_name_the_problem():
    with pytest.raises(TypeError, match="bit_and takes integers"):
        sim.bit_and(np.float32(1.0), np.float32(2.0))
    with pytest.raises(TypeError, match="of one type"):
        sim.where(True, sim.vec3(1.0), sim.vec2(1.0))
    with pytest.raises(TypeError, match="condition must be a bool or an integer"):
        sim.where(np.float32(1.0), 1, 2)
    with pytest.raises(TypeError, match="rint"):
        sim.rint(np.int32(3))
    with pytest.raises(ZeroDivisionError):
        sim.mod(np.int32(1), np.int32(0))
    assert sim.rint(np.float32(2.5)) == 2.0 and sim.rint(np.float32(-3.5)) == -4.0
    assert sim.log2(np.float64(8.0)) == 3.0 and type(sim.log10(np.float32(10.0))) is np.float32
    assert math.isnan(sim.mod(np.float32(1.0), np.float32(0.0)))


# --------------------------------------------------------------------------
# atomic_exch and atomic_cas


@sim.kernel
def exchanges(ints: sim.array(dtype=sim.int32), floats: sim.array(dtype=sim.float64, ndim=2),
              vectors: sim.array(dtype=sim.vec3), olds: sim.array(dtype=sim.int32),
              winners: sim.array(dtype=sim.int32), vold: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    olds[i] = sim.atomic_exch(ints, 0, i + 1)
    if sim.atomic_cas(ints, 1, 0, i + 1) == 0:
        winners[0] = i + 1
    sim.atomic_cas(floats, 0, 1, -0.0, 5.0)  # bitwise: -0.0 does not match 0.0
    sim.atomic_cas(floats, 0, 0, 0.0, 7.0)
    vold[i] = sim.atomic_cas(vectors, 0, sim.vec3(1.0, 9.0, 3.0), sim.vec3(4.0))


def exchange_inputs(n):
    return [np.zeros(2, np.int32), np.zeros((1, 2)), np.array([[1, 2, 3]], np.float32),
            np.zeros(n, np.int32), np.zeros(1, np.int32), np.zeros((n, 3), np.float32)]


def test_atomic_exchange_and_compare_and_swap():
    n = 1000
    ints, floats, vectors, olds, winners, vold = arrays = exchange_inputs(n)
    sim.launch(exchanges, dim=n, inputs=arrays)
    # every thread's exchange saw a distinct old value: 0 and all others but the last stored
    assert sorted(olds.tolist() + [int(ints[0])]) == list(range(n + 1))
    assert ints[1] == winners[0] and 1 <= winners[0] <= n  # exactly one thread won the CAS
    assert floats.tolist() == [[7.0, 0.0]]
    assert vectors.tolist() == [[4.0, 2.0, 4.0]]  # componentwise
    assert vold[0].tolist() in ([1, 2, 3], [4, 2, 4])


def test_atomic_exchange_and_compare_and_swap_in_python():
    a = np.array([1.0, -0.0], np.float32)
    assert sim.atomic_exch(a, 0, 3) == 1.0 and a[0] == 3.0
    assert sim.atomic_cas(a, 1, np.float32(0.0), np.float32(2.0)) == 0.0 and a[1] == 0.0
    assert sim.atomic_cas(a, 1, np.float32(-0.0), np.float32(2.0)) == 0.0 and a[1] == 2.0
    v = np.array([[1, 2, 3]], np.float32)
    assert sim.atomic_cas(v, 0, sim.vec3(1.0, 0.0, 3.0), sim.vec3(9.0)) == sim.vec3(1.0, 2.0, 3.0)
    assert v.tolist() == [[9, 2, 9]]
    with pytest.raises(TypeError, match="float value for an integer array"):
        sim.atomic_exch(np.zeros(1, np.int32), 0, 1.5)


def test_atomics_on_small_integers_are_rejected_as_in_warp():
    @sim.kernel
    def small(a: sim.array(dtype=sim.int16)):
        sim.atomic_exch(a, 0, sim.int16(1))

    with pytest.raises(Exception, match=r"atomic_exch\(\) operations only work on arrays with .* "
                                        r"but got int16 \(with scalar type int16\)"):
        sim.launch(small, dim=1, inputs=[np.zeros(1, np.int16)])


def test_builtins_compile_and_link_for_cuda(numba_sim_results):
    kernel = numba_sim_results[0]
    s, ints = inputs()
    args = [s, ints, np.zeros((N, len(FLOAT_EXPRESSIONS)), np.float32),
            np.zeros((N, len(INT_EXPRESSIONS)), np.int32)]
    for k, a in ((kernel, args), (exchanges, exchange_inputs(4))):
        library = k.compile("cuda", a, cc=(7, 5))
        assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
