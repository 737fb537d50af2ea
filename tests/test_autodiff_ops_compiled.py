"""The builtin adjoints compiled: one function per family of the operation table calls
the adjoint of every float64 variant of the family (tests/autodiff_op_cases.py) on seeded
inputs and writes each argument's adjoint into an output array; the CPU results equal
Python mode's, and the same functions compile and link for CUDA offline (a GPU runs
them in tests/gpu/test_autodiff_ops_gpu.py)."""

import operator

import numpy as np
import pytest
from numba import njit
from numba.core import types

import numba_sim as sim
from autodiff_op_cases import (
    NO_ADJOINT, components, enumerate_cases, is_float_argument, random_adjoint, random_value,
)
from numba_sim.autodiff import adjoint_attribute, adjoint_function
from numba_sim.typing.value_types import ValueType


def _family(case):
    if isinstance(case.key, type):
        return "constructors"
    kinds = {t.spec.kind for t in case.argtypes + (case.return_type,)
             if isinstance(t, ValueType)}
    for family in ("transform", "quat", "mat"):
        if family in kinds:
            return family
    return "vec" if kinds else "scalar"


CHUNK = 24
"""Cases per compiled function: LLVM's time grows faster than the function's size (one
function of 206 matrix adjoints took 700 s here, 24 take seconds)."""


def _float64_cases():
    """One differentiable float64 variant per operation and family, in chunks of CHUNK."""
    families, seen = {}, set()
    for case in enumerate_cases():
        if not case.differentiable or case.single_precision or case.name in NO_ADJOINT \
                or any(isinstance(t, types.BaseTuple) for t in case.argtypes):
            continue
        family = _family(case)
        if (family, case.name) in seen:
            continue
        seen.add((family, case.name))
        families.setdefault(family, []).append(case)
    return {f"{family}_{start // CHUNK}": cases[start:start + CHUNK]
            for family, cases in families.items() for start in range(0, len(cases), CHUNK)}


FAMILIES = _float64_cases()


def _literal(value, namespace):
    """Source text that builds *value* in compiled code (its class put in *namespace*:
    value types made on demand, such as mat23d, are no attributes of numba_sim)."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, np.integer):
        return f"np.int32({int(value)})"
    if hasattr(value, "_components"):
        parts = ", ".join(repr(float(x)) for x in value._components())
        name = f"value_class_{type(value).__name__}"
        namespace[name] = type(value)
        return f"{name}({parts})"
    if isinstance(value, tuple):
        return "(" + "".join(_literal(v, namespace) + ", " for v in value) + ")"
    return repr(float(value))


def _stores(expression, numba_type, offset):
    """Statements writing the components of *expression* (of *numba_type*) into
    ``out[offset:]``; returns (lines, new offset)."""
    if not isinstance(numba_type, ValueType):
        return [f"out[{offset}] = {expression}"], offset + 1
    shape = numba_type.spec.shape
    if len(shape) == 2:
        rows, cols = shape
        lines = [f"out[{offset + r * cols + c}] = {expression}[{r}, {c}]"
                 for r in range(rows) for c in range(cols)]
    else:
        lines = [f"out[{offset + k}] = {expression}[{k}]" for k in range(numba_type.size)]
    return lines, offset + numba_type.size


def generated(family):
    """(compiled-code source's function, Python-mode expected output) for *family*."""
    lines, expected, offset = ["def adjoints(out):"], [], 0
    namespace = {"sim": sim, "np": np}
    for number, case in enumerate(FAMILIES[family]):
        rng = np.random.default_rng(number)
        args = [random_value(t, rng) for t in case.argtypes]
        adj_ret = random_adjoint(case.return_type, rng)
        fn = adjoint_function(case.key)
        namespace[f"adj{number}"] = fn
        call = ", ".join(_literal(a, namespace) for a in args + [adj_ret])
        lines.append(f"    r{number} = adj{number}({call})")
        results = fn(*args, adj_ret)
        for index, (argtype, result) in enumerate(zip(case.argtypes, results)):
            if not is_float_argument(argtype):
                continue
            stores, offset = _stores(f"r{number}[{index}]", argtype, offset)
            lines += ["    " + s for s in stores]
            expected.append(components(result))
    exec(compile("\n".join(lines), f"<adjoints of family {family}>", "exec"), namespace)
    return namespace["adjoints"], np.concatenate(expected)


@pytest.fixture(scope="module")
def sources():
    return {family: generated(family) for family in FAMILIES}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_compiled_adjoints_equal_python_mode(sources, family):
    fn, expected = sources[family]
    out = np.full(len(expected), np.nan)
    njit(fn)(out)
    assert np.allclose(out, expected, rtol=1e-12, atol=1e-12), (
        f"{family}: worst at {np.argmax(np.abs(out - expected))}")


@pytest.mark.parametrize("family", list(FAMILIES))
def test_adjoints_compile_and_link_for_cuda(sources, family, offline_cuda):
    fn, expected = sources[family]
    cubin = offline_cuda.cubin(fn, (types.float64[::1],))
    assert cubin[:4] == b"\x7fELF"


# --------------------------------------------------------------------------
# float32, in a kernel (Warp's usual precision and the kernel generator's use)

ADJ_NORMALIZE = adjoint_function(sim.normalize)
ADJ_QUAT_ROTATE = adjoint_function(sim.quat_rotate)
ADJ_TRANSFORM_POINT = adjoint_function(sim.transform_point)
ADJ_INVERSE = adjoint_function(sim.inverse)
ADJ_QUAT_FROM_MATRIX = adjoint_function(sim.quat_from_matrix)
ADJ_ATAN2 = adjoint_function(sim.atan2)
ADJ_MUL = adjoint_function(operator.mul)
ADJ_GETITEM = adjoint_function(operator.getitem)
ADJ_P = adjoint_attribute("p")


@sim.func
def _chain_adjoints(v: sim.vec3, q: sim.quat, m: sim.mat33, s: float):
    """Adjoints of a small chain, called from a func: (d v, d q, d m, d s)."""
    t = sim.transform(v, q)
    (d_t, d_p) = ADJ_TRANSFORM_POINT(t, v, sim.vec3(1.0, 2.0, 3.0))
    (d_tp,) = ADJ_P(t, sim.vec3(0.5, 0.5, 0.5))
    (d_v,) = ADJ_NORMALIZE(v, d_p + d_t.p + d_tp.p)
    (d_q, d_v2) = ADJ_QUAT_ROTATE(q, v, d_v)
    (d_m,) = ADJ_INVERSE(m, sim.outer(d_v2, v))
    (d_m2,) = ADJ_QUAT_FROM_MATRIX(m, d_q)
    (d_y, d_x) = ADJ_ATAN2(s, s * 2.0, d_v2[1])
    (d_v3, d_s) = ADJ_MUL(v, s, d_v2)
    (d_m3, d_ij) = ADJ_GETITEM(m, (1, 2), d_y + d_x)
    return d_v3 + d_v, d_q, d_m + d_m2 + d_m3, d_s


@sim.kernel
def _chain_kernel(v: sim.array(dtype=sim.vec3), q: sim.array(dtype=sim.quat),
                  m: sim.array(dtype=sim.mat33), s: sim.array(dtype=float),
                  out_v: sim.array(dtype=sim.vec3), out_q: sim.array(dtype=sim.quat),
                  out_m: sim.array(dtype=sim.mat33), out_s: sim.array(dtype=float)):
    i = sim.tid()
    d_v, d_q, d_m, d_s = _chain_adjoints(v[i], q[i], m[i], s[i])
    out_v[i] = d_v
    out_q[i] = d_q
    out_m[i] = d_m
    out_s[i] = d_s


def test_float32_adjoints_in_a_kernel_equal_python_mode():
    rng = np.random.default_rng(7)
    n = 4
    v = rng.uniform(0.2, 0.9, (n, 3)).astype(np.float32)
    q = rng.normal(size=(n, 4))
    q = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
    m = (np.eye(3) + 0.3 * rng.uniform(-1, 1, (n, 3, 3))).astype(np.float32)
    s = rng.uniform(0.2, 0.9, n).astype(np.float32)
    outs = [np.zeros_like(v), np.zeros_like(q), np.zeros_like(m), np.zeros_like(s)]
    sim.launch(_chain_kernel, n, inputs=[v, q, m, s] + outs)
    for i in range(n):
        expected = _chain_adjoints(sim.vec3(*v[i]), sim.quat(*q[i]), sim.mat33(*m[i].ravel()),
                                   np.float32(s[i]))
        for got, want in zip(outs, expected):
            want = np.asarray(components(want), dtype=np.float64)
            assert np.allclose(np.ravel(got[i]), want, rtol=1e-5, atol=1e-5 * (1 + np.abs(
                want).max())), f"element {i}: kernel {np.ravel(got[i])} vs Python {want}"


# --------------------------------------------------------------------------
# Real branches: each side of quat_from_matrix (trace >= 0, else the largest diagonal
# element: x, y or z), and inverse's singular side, compiled and in Python


def _rotation(axis, angle):
    q = np.concatenate([np.sin(angle / 2) * np.asarray(axis, float), [np.cos(angle / 2)]])
    return np.asarray(sim.quat_to_matrix(sim.quatd(*q))._components()).reshape(3, 3)


BRANCH_MATRICES = [_rotation((1, 1, 0) / np.sqrt(2), 0.7)] + [
    _rotation(np.eye(3)[k] + 0.05, 2.9) for k in range(3)]
"""One rotation per side of quat_from_matrix: a small angle (the trace), and rotations by
2.9 rad about axes near x, y, z (the largest diagonal element)."""

ADJ_INVERSE_D = adjoint_function(sim.inverse)


@njit
def _branch_adjoints(m, g_q, g_m):
    return ADJ_QUAT_FROM_MATRIX(m, g_q)[0], ADJ_INVERSE_D(m, g_m)[0]


@pytest.mark.parametrize("side", range(len(BRANCH_MATRICES) + 1))
def test_branch_sides_compiled_equal_python(side):
    singular = side == len(BRANCH_MATRICES)
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]]) if singular \
        else BRANCH_MATRICES[side]
    m = sim.mat33d(*a.ravel())
    g_q, g_m = sim.quatd(0.3, -0.2, 0.5, 0.1), sim.mat33d(*np.arange(9.0) / 9)
    compiled = _branch_adjoints(m, g_q, g_m)
    python = (ADJ_QUAT_FROM_MATRIX(m, g_q)[0], ADJ_INVERSE_D(m, g_m)[0])
    for got, want in zip(compiled, python):
        assert np.allclose(components(got), components(want), rtol=1e-12, atol=1e-12)
    if singular:
        assert not np.any(components(compiled[1]))
    else:  # and the derived adjoint of the side taken is the derivative
        step = 1e-6
        fd = np.zeros(9)
        for k in range(9):
            plus, minus = a.ravel().copy(), a.ravel().copy()
            plus[k] += step
            minus[k] -= step
            fd[k] = np.dot(components(g_q), (
                components(sim.quat_from_matrix(sim.mat33d(*plus)))
                - components(sim.quat_from_matrix(sim.mat33d(*minus))))) / (2 * step)
        assert np.allclose(components(compiled[0]), fd, atol=1e-7)


def test_float32_kernel_compiles_and_links_for_cuda(offline_cuda):
    arrays = [np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32),
              np.zeros((2, 3, 3), np.float32), np.zeros(2, np.float32)]
    library = _chain_kernel.compile("cuda", arrays + [a.copy() for a in arrays], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


ADJ_SEGMENT = adjoint_function(sim.closest_point_on_segment)
ADJ_TRIANGLE = adjoint_function(sim.triangle_closest_point)
ADJ_EDGE_EDGE = adjoint_function(sim.closest_point_edge_edge)


@njit
def _geometry_adjoints(a, b, c, p, g3, g2):
    return (ADJ_SEGMENT(a, b, p, g3), ADJ_TRIANGLE(a, b, c, p, g2),
            ADJ_EDGE_EDGE(a, b, c, p, np.float32(1e-6), g3))


def test_geometry_adjoints_compiled_equal_python():
    """The adjoints of the native geometry builtins (derived from op_geometry's formulas,
    real branches) compiled, against Python mode, over points in their regions."""
    rng = np.random.default_rng(5)
    for trial in range(12):
        a, b, c, p = (sim.vec3(*rng.uniform(-1.0, 2.0, 3)) for _ in range(4))
        g3, g2 = sim.vec3(*rng.normal(size=3)), sim.vec2(*rng.normal(size=2))
        compiled = _geometry_adjoints(a, b, c, p, g3, g2)
        python = (ADJ_SEGMENT(a, b, p, g3), ADJ_TRIANGLE(a, b, c, p, g2),
                  ADJ_EDGE_EDGE(a, b, c, p, np.float32(1e-6), g3))
        for got, want in zip(compiled, python):
            assert np.allclose(components(got), components(want), rtol=1e-5, atol=1e-5), trial
