"""The builtin adjoints compiled: one function per family of the operation table calls
the adjoint of every float64 variant of the family (tests/autodiff_op_cases.py) on seeded
inputs and writes each argument's adjoint into an output array; the CPU results equal
Python mode's, and the same functions compile and link for CUDA offline (a GPU runs
them in tests/gpu/test_autodiff_ops_gpu.py)."""

import numpy as np
import pytest
from numba import njit
from numba.core import types

import numba_sim as sim
from autodiff_op_cases import (
    NO_ADJOINT, components, enumerate_cases, is_float_argument, random_adjoint, random_value,
)
from numba_sim.autodiff import adjoint_function
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
