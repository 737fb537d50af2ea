"""Every math, vector, matrix, quaternion and transform builtin on every type it
applies to: Python, compiled CPU code and a NumPy/SciPy reference agree.

The cases live in one table, :data:`GROUPS`: a group is a type (``vec3``,
``mat44d``, ``float32`` ...) with random inputs and the builtin calls that apply
to it, each with an independent NumPy/SciPy reference and a tolerance scaled by
the operation's conditioning (``tol`` multiples of the dtype's epsilon times
``scale``: ``|expected|`` for elementwise math, i.e. ulps; the condition number
for ``inverse`` and ``determinant``; the sizes of the operands for sums of
products).  From each group one function is generated that stores every
component of every result into a flat array, so a single compilation covers
the whole group; tests/test_builtins_cuda.py and tests/gpu/test_builtins_gpu.py
compile the same functions for CUDA.
"""

import functools
import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Callable

import numba
import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

import numba_sim as sim
from numba_sim.types import CLASSES, KIND_MAT, KIND_QUAT, KIND_TRANSFORM, KIND_VEC, VALUE_TABLE

TRIALS = 4


@dataclass
class Case:
    """One builtin call: *expr* (over the group's input names), its reference and tolerance.

    ``reference(e)`` gets the inputs as float64 NumPy values (attributes of *e*)
    and returns the expected result; ``scale(e, expected)`` (default ``|expected|``)
    times ``tol`` times the dtype's epsilon bounds the error.  ``agree`` is the
    same bound for compiled code against Python (0: bit-identical; libm-based
    functions may differ by an ulp between NumPy and the C library).
    ``sign_free``: a quaternion result may come back negated (the same rotation).
    """

    expr: str
    reference: Callable
    tol: float = 0
    scale: Callable = None
    agree: float = 0
    sign_free: bool = False


@dataclass
class Group:
    name: str
    dtype: type
    make_inputs: Callable  # rng -> {name: value}
    cases: list = field(default_factory=list)


def flat(value):
    """Any result (scalar, bool, value, tuple) as a 1-D float64 array."""
    if isinstance(value, tuple):
        return np.concatenate([flat(v) for v in value])
    return np.asarray(value, dtype=np.float64).reshape(-1)


class Env:
    """The inputs of one trial as float64 NumPy values, for the references."""

    def __init__(self, inputs):
        for name, value in inputs.items():
            setattr(self, name, np.asarray(value, dtype=np.float64))


def make(cls, values):
    return cls(*np.asarray(values).reshape(-1).tolist())


def norm(x):
    return float(np.linalg.norm(x))


def unit_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def rot(q):
    return Rotation.from_quat(q)


# --------------------------------------------------------------------------
# Scalars


def round_half_away(x):
    return float(Decimal(float(x)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def float_scalar_group(dtype):
    name = np.dtype(dtype).name
    S = f"sim.{name}"

    def inputs(rng):
        u = lambda lo, hi: dtype(rng.uniform(lo, hi))  # noqa: E731
        return dict(x=u(-3, 3), y=u(0.1, 3), z=u(-3, 3), t=u(0, 1), unit=u(-1, 1),
                    half=dtype(rng.integers(-12, 13) / 2), lo=dtype(-1), hi=dtype(1))

    ulp = dict(tol=2, agree=1)
    cases = [
        Case("sim.sqrt(y)", lambda e: np.sqrt(e.y), tol=1),
        Case("sim.cbrt(x)", lambda e: np.cbrt(e.x), **ulp),
        Case("sim.exp(x)", lambda e: np.exp(e.x), **ulp),
        Case("sim.log(y)", lambda e: np.log(e.y), **ulp),
        Case("sim.pow(y, x)", lambda e: e.y ** e.x, **ulp),
        Case("sim.sin(x)", lambda e: np.sin(e.x), **ulp),
        Case("sim.cos(x)", lambda e: np.cos(e.x), **ulp),
        Case("sim.tan(x)", lambda e: np.tan(e.x), **ulp),
        Case("sim.asin(unit)", lambda e: np.arcsin(e.unit), **ulp),
        Case("sim.acos(unit)", lambda e: np.arccos(e.unit), **ulp),
        Case("sim.atan(x)", lambda e: np.arctan(e.x), **ulp),
        Case("sim.atan2(x, z)", lambda e: np.arctan2(e.x, e.z), **ulp),
        Case("sim.sinh(x)", lambda e: np.sinh(e.x), **ulp),
        Case("sim.cosh(x)", lambda e: np.cosh(e.x), **ulp),
        Case("sim.tanh(x)", lambda e: np.tanh(e.x), **ulp),
        Case("sim.floor(x)", lambda e: np.floor(e.x)),
        Case("sim.ceil(x)", lambda e: np.ceil(e.x)),
        Case("sim.trunc(x)", lambda e: np.trunc(e.x)),
        Case("sim.round(x)", lambda e: round_half_away(e.x)),
        Case("sim.round(half)", lambda e: round_half_away(e.half)),
        Case("sim.radians(x)", lambda e: np.radians(e.x), tol=1),
        Case("sim.degrees(x)", lambda e: np.degrees(e.x), tol=1),
        Case("sim.abs(x)", lambda e: abs(e.x)),
        Case("sim.sign(x)", lambda e: -1.0 if e.x < 0 else 1.0),
        Case("sim.step(x)", lambda e: 1.0 if e.x < 0 else 0.0),
        Case("sim.min(x, z)", lambda e: min(e.x, e.z)),
        Case("sim.max(x, z)", lambda e: max(e.x, e.z)),
        Case("sim.clamp(x, lo, hi)", lambda e: np.clip(e.x, -1, 1)),
        Case("sim.lerp(x, z, t)", lambda e: e.x * (1 - e.t) + e.z * e.t, tol=2,
             scale=lambda e, r: abs(e.x) + abs(e.z)),
        Case("sim.smoothstep(lo, hi, x)",
             lambda e: (lambda s: s * s * (3 - 2 * s))(np.clip((e.x + 1) / 2, 0, 1)), tol=4,
             scale=lambda e, r: 1.0),
        Case("sim.isnan(x)", lambda e: False),
        Case("sim.isinf(x)", lambda e: False),
        Case("sim.isfinite(x)", lambda e: True),
        Case("sim.mul(x, z)", lambda e: e.x * e.z, tol=1),
        Case(f"sim.pow(x, {S}(2))", lambda e: e.x ** 2, **ulp),
    ]
    return Group(name, dtype, inputs, cases)


def int_scalar_group(dtype):
    def inputs(rng):
        i, j = (dtype(v) for v in rng.integers(-50, 50, 2))
        return dict(i=i, j=j, lo=dtype(-10), hi=dtype(10))

    cases = [
        Case("sim.min(i, j)", lambda e: min(e.i, e.j)),
        Case("sim.max(i, j)", lambda e: max(e.i, e.j)),
        Case("sim.clamp(i, lo, hi)", lambda e: np.clip(e.i, -10, 10)),
        Case("sim.abs(i)", lambda e: abs(e.i)),
        Case("sim.sign(i)", lambda e: -1 if e.i < 0 else 1),
        Case("sim.step(i)", lambda e: 1 if e.i < 0 else 0),
        Case("sim.mul(i, j)", lambda e: e.i * e.j),
    ]
    return Group(np.dtype(dtype).name, dtype, inputs, cases)


# --------------------------------------------------------------------------
# Vectors


def c_divide(a, b):
    return np.trunc(a / b)


def skew_reference(v):
    x, y, z = v
    return np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])


def vector_group(spec):
    cls = CLASSES[spec]
    n = spec.size
    dtype = spec.scalar_type

    def inputs(rng):
        if spec.is_float:
            a, b = rng.normal(size=(2, n))
            s, t = rng.uniform(0.5, 2), rng.uniform(0, 1)
        else:
            a, b = rng.integers(-9, 10, size=(2, n))
            b[b == 0] = 4
            s, t = rng.integers(-5, 6), 0
        return dict(a=make(cls, a), b=make(cls, b), s=dtype(s), t=dtype(t), zero=cls())

    sizes = lambda e, r: norm(e.a) * norm(e.b)  # noqa: E731
    cases = [
        Case("sim.dot(a, b)", lambda e: e.a @ e.b, tol=n, scale=sizes),
        Case("sim.length_sq(a)", lambda e: e.a @ e.a, tol=n),
        Case("sim.cw_mul(a, b)", lambda e: e.a * e.b, tol=1),
        Case("sim.cw_div(a, b)", (lambda e: e.a / e.b) if spec.is_float else
             (lambda e: c_divide(e.a, e.b)), tol=1),
        Case("sim.abs(a)", lambda e: abs(e.a)),
        Case("sim.sign(a)", lambda e: np.where(e.a < 0, -1, 1)),
        Case("sim.min(a, b)", lambda e: np.minimum(e.a, e.b)),
        Case("sim.max(a, b)", lambda e: np.maximum(e.a, e.b)),
        Case("sim.min(a)", lambda e: e.a.min()),
        Case("sim.max(a)", lambda e: e.a.max()),
        Case("sim.mul(a, s)", lambda e: e.a * e.s, tol=1),
        Case("sim.mul(s, a)", lambda e: e.a * e.s, tol=1),
    ]
    if n == 3:
        cases.append(Case("sim.cross(a, b)", lambda e: np.cross(e.a, e.b), tol=2, scale=sizes))
    if spec.is_float:
        cases += [
            Case("sim.length(a)", lambda e: norm(e.a), tol=n),
            Case("sim.normalize(a)", lambda e: e.a / norm(e.a), tol=n + 1, scale=lambda e, r: 1.0),
            Case("sim.normalize(zero)", lambda e: np.zeros(n)),
            Case("sim.outer(a, b)", lambda e: np.outer(e.a, e.b), tol=1),
            Case("sim.diag(a)", lambda e: np.diag(e.a)),
            Case("sim.lerp(a, b, t)", lambda e: e.a * (1 - e.t) + e.b * e.t, tol=2,
                 scale=lambda e, r: abs(e.a) + abs(e.b)),
            Case("sim.isnan(a)", lambda e: False),
            Case("sim.isinf(a)", lambda e: False),
            Case("sim.isfinite(a)", lambda e: True),
        ]
        if n == 3:
            cases.append(Case("sim.skew(a)", lambda e: skew_reference(e.a)))
    return Group(spec.name, dtype, inputs, cases)


# --------------------------------------------------------------------------
# Matrices


def cond(m):
    return float(np.linalg.cond(m))


def dtype_expressions(dtype):
    """Spellings of a dtype argument, all accepted by identity/quat_identity/transform_identity."""
    if dtype == np.float32:
        return ["", ", sim.float32", ", float", ", numba.float32"]
    return [", sim.float64", ", np.float64", ", numba.float64"]


def matrix_group(spec):
    cls = CLASSES[spec]
    n = spec.shape[0]
    dtype = spec.scalar_type
    vec = CLASSES[sim.types.vec_spec(n, spec.dtype)]
    vec3 = CLASSES[sim.types.vec_spec(3, spec.dtype)]

    def inputs(rng):
        a, b = rng.normal(size=(2, n, n))
        return dict(a=make(cls, a), b=make(cls, b), v=make(vec, rng.normal(size=n)),
                    p=make(vec3, rng.normal(size=3)), s=dtype(rng.uniform(0, 1)))

    rows = ", ".join(f"a[{i}]" for i in range(n))
    products = lambda e, r: abs(e.a) @ abs(e.b)  # noqa: E731
    cases = [
        Case("sim.transpose(a)", lambda e: e.a.T),
        Case("sim.determinant(a)", lambda e: np.linalg.det(e.a), tol=8 * n,
             scale=lambda e, r: abs(r) * cond(e.a)),
        Case("sim.inverse(a)", lambda e: np.linalg.inv(e.a), tol=8 * n,
             scale=lambda e, r: np.abs(r).max() * cond(e.a)),
        Case("sim.trace(a)", lambda e: np.trace(e.a), tol=n,
             scale=lambda e, r: np.abs(np.diag(e.a)).sum()),
        Case("sim.mul(a, b)", lambda e: e.a @ e.b, tol=n, scale=products),
        Case("sim.mul(a, v)", lambda e: e.a @ e.v, tol=n, scale=lambda e, r: abs(e.a) @ abs(e.v)),
        Case("sim.mul(v, a)", lambda e: e.v @ e.a, tol=n, scale=lambda e, r: abs(e.v) @ abs(e.a)),
        Case("sim.mul(a, s)", lambda e: e.a * e.s, tol=1),
        Case("sim.cw_mul(a, b)", lambda e: e.a * e.b, tol=1),
        Case("sim.cw_div(a, b)", lambda e: e.a / e.b, tol=1),
        Case("sim.lerp(a, b, s)", lambda e: e.a * (1 - e.s) + e.b * e.s, tol=2,
             scale=lambda e, r: abs(e.a) + abs(e.b)),
        Case("sim.isnan(a)", lambda e: False),
        Case("sim.isinf(a)", lambda e: False),
        Case("sim.isfinite(a)", lambda e: True),
        Case(f"sim.matrix_from_rows({rows})", lambda e: e.a),
        Case(f"sim.matrix_from_cols({rows})", lambda e: e.a.T),
    ]
    cases += [Case(f"sim.identity({n}{d})", lambda e: np.eye(n)) for d in dtype_expressions(dtype)]
    if n == 4:
        homogeneous = lambda e, w: (e.a @ np.append(e.p, w))[:3]  # noqa: E731
        cases += [
            Case("sim.transform_point(a, p)", lambda e: homogeneous(e, 1), tol=4,
                 scale=lambda e, r: (abs(e.a) @ np.append(abs(e.p), 1))[:3]),
            Case("sim.transform_vector(a, p)", lambda e: homogeneous(e, 0), tol=4,
                 scale=lambda e, r: (abs(e.a) @ np.append(abs(e.p), 0))[:3]),
        ]
    return Group(spec.name, dtype, inputs, cases)


# --------------------------------------------------------------------------
# Quaternions and transforms


def quat_group(spec):
    cls = CLASSES[spec]
    dtype = spec.scalar_type
    vec3 = CLASSES[sim.types.vec_spec(3, spec.dtype)]
    mat33 = CLASSES[sim.types.find_spec(KIND_MAT, spec.dtype, (3, 3))]
    mat44 = CLASSES[sim.types.find_spec(KIND_MAT, spec.dtype, (4, 4))]

    def inputs(rng):
        q, r = unit_quat(rng), unit_quat(rng)
        axis = rng.normal(size=3)
        m44 = np.eye(4)
        m44[:3, :3] = rot(q).as_matrix()
        m44[:3, 3] = rng.normal(size=3)
        return dict(q=make(cls, q), r=make(cls, r), v=make(vec3, rng.normal(size=3)),
                    axis=make(vec3, axis / np.linalg.norm(axis)), angle=dtype(rng.uniform(-3, 3)),
                    t=dtype(rng.uniform(0, 1)), s=dtype(rng.uniform(0.5, 2)),
                    roll=dtype(rng.uniform(-3, 3)), pitch=dtype(rng.uniform(-1.5, 1.5)),
                    yaw=dtype(rng.uniform(-3, 3)),
                    rot=make(mat33, rot(q).as_matrix()), rot4=make(mat44, m44), zero=cls())

    unit = lambda e, r: 1.0  # noqa: E731
    turn = dict(tol=16, scale=unit, agree=4, sign_free=True)
    name = spec.name
    cases = [
        Case("sim.dot(q, r)", lambda e: e.q @ e.r, tol=4, scale=unit),
        Case("sim.length(q)", lambda e: norm(e.q), tol=4),
        Case("sim.length_sq(q)", lambda e: e.q @ e.q, tol=4),
        Case("sim.normalize(q * s)", lambda e: e.q, tol=8, scale=unit),
        Case("sim.normalize(zero)", lambda e: [0, 0, 0, 1]),
        Case("sim.quat_inverse(q)", lambda e: e.q * [-1, -1, -1, 1]),
        Case("sim.mul(q, r)", lambda e: (rot(e.q) * rot(e.r)).as_quat(), tol=8, scale=unit,
             sign_free=True),
        Case("sim.lerp(q, r, t)", lambda e: e.q * (1 - e.t) + e.r * e.t, tol=2, scale=unit),
        Case("sim.isnan(q)", lambda e: False),
        Case("sim.isinf(q)", lambda e: False),
        Case("sim.isfinite(q)", lambda e: True),
        Case("sim.quat_from_axis_angle(axis, angle)",
             lambda e: Rotation.from_rotvec(e.axis * e.angle).as_quat(), **turn),
        Case("sim.quat_to_axis_angle(q)",
             lambda e: np.append(np.sign(e.q[3]) * e.q[:3] / norm(e.q[:3]),
                                 2 * math.atan2(norm(e.q[:3]), abs(e.q[3]))),
             tol=64, scale=unit, agree=4),
        Case("sim.quat_from_matrix(rot)", lambda e: e.q, tol=16, scale=lambda e, r: cond(e.rot),
             sign_free=True),
        Case("sim.quat_from_matrix(rot4)", lambda e: e.q, tol=16,
             scale=lambda e, r: cond(e.rot4[:3, :3]), sign_free=True),
        Case("sim.quat_to_matrix(q)", lambda e: rot(e.q).as_matrix(), tol=8, scale=unit),
        Case("sim.quat_rotate(q, v)", lambda e: rot(e.q).apply(e.v), tol=8,
             scale=lambda e, r: norm(e.v)),
        Case("sim.quat_rotate_inv(q, v)", lambda e: rot(e.q).inv().apply(e.v), tol=8,
             scale=lambda e, r: norm(e.v)),
        Case("sim.quat_slerp(q, r, t)",
             lambda e: Slerp([0, 1], Rotation.from_quat([e.q, e.r]))([float(e.t)]).as_quat()[0],
             **turn),
        Case("sim.quat_rpy(roll, pitch, yaw)",
             lambda e: Rotation.from_euler("xyz", [e.roll, e.pitch, e.yaw]).as_quat(), **turn),
    ]
    cases += [Case(f"sim.quat_identity({d[2:]})", lambda e: [0, 0, 0, 1])
              for d in dtype_expressions(dtype)]
    cases += [Case(f"sim.normalize(sim.{name}())", lambda e: [0, 0, 0, 1])]
    return Group(name, dtype, inputs, cases)


def transform_group(spec):
    cls = CLASSES[spec]
    dtype = spec.scalar_type
    vec3 = CLASSES[sim.types.vec_spec(3, spec.dtype)]

    def inputs(rng):
        f = np.append(rng.normal(size=3), unit_quat(rng))
        g = np.append(rng.normal(size=3), unit_quat(rng))
        return dict(f=make(cls, f), g=make(cls, g), v=make(vec3, rng.normal(size=3)),
                    s=dtype(rng.uniform(0, 1)))

    def composed(e):
        rotation = (rot(e.f[3:]) * rot(e.g[3:])).as_quat()
        return np.append(rot(e.f[3:]).apply(e.g[:3]) + e.f[:3], rotation)

    def inverse(e):
        return np.append(-rot(e.f[3:]).inv().apply(e.f[:3]), e.f[3:] * [-1, -1, -1, 1])

    sizes = lambda e, r: norm(e.v) + norm(e.f[:3]) + norm(e.g[:3])  # noqa: E731
    cases = [
        Case("sim.transform_point(f, v)", lambda e: rot(e.f[3:]).apply(e.v) + e.f[:3], tol=8,
             scale=sizes),
        Case("sim.transform_vector(f, v)", lambda e: rot(e.f[3:]).apply(e.v), tol=8, scale=sizes),
        Case("sim.transform_multiply(f, g)", composed, tol=8, scale=sizes),
        Case("sim.mul(f, g)", composed, tol=8, scale=sizes),
        Case("sim.transform_inverse(f)", inverse, tol=8, scale=sizes),
        Case("sim.transform_get_translation(f)", lambda e: e.f[:3]),
        Case("sim.transform_get_rotation(f)", lambda e: e.f[3:]),
        Case("sim.lerp(f, g, s)", lambda e: e.f * (1 - e.s) + e.g * e.s, tol=2,
             scale=lambda e, r: abs(e.f) + abs(e.g)),
    ]
    cases += [Case(f"sim.transform_identity({d[2:]})", lambda e: [0, 0, 0, 0, 0, 0, 1])
              for d in dtype_expressions(dtype)]
    return Group(spec.name, dtype, inputs, cases)


def _make_groups():
    groups = [float_scalar_group(np.float32), float_scalar_group(np.float64),
              int_scalar_group(np.int32), int_scalar_group(np.int64)]
    makers = {KIND_VEC: vector_group, KIND_MAT: matrix_group, KIND_QUAT: quat_group,
              KIND_TRANSFORM: transform_group}
    groups += [makers[spec.kind](spec) for spec in VALUE_TABLE if spec.name in SWEPT]
    return {g.name: g for g in groups}


SWEPT = {"vec2", "vec3", "vec4", "vec2d", "vec3d", "vec4d", "vec2i", "vec3i", "vec4i", "vec3s",
         "vec4l", "spatial_vector", "spatial_vectord", "mat22", "mat33", "mat44", "mat22d",
         "mat33d", "mat44d", "quat", "quatd", "transform", "transformd"}
"""The value types swept here (compile time dominates the suite): every float and int32 size,
two other integer types and the spatial vectors; tests/test_value_types_generic.py covers
the generic sizes and the spatial matrices."""


GROUPS = _make_groups()


# --------------------------------------------------------------------------
# One generated function per group


def _store_lines(value, expr, offset):
    """Source lines storing every storage component of a result into ``out[offset:]``
    (loops rather than one statement per component: compile time grows with statements)."""
    if isinstance(value, tuple):
        lines = []
        for i, item in enumerate(value):
            lines += _store_lines(item, f"{expr}[{i}]", offset)
            offset += len(flat(item))
        return lines
    if isinstance(value, sim.types.Value) and value.spec.kind == KIND_MAT:
        rows, cols = value.spec.shape
        return [f"for i_ in range({rows}):",
                f"    for j_ in range({cols}):",
                f"        out[{offset} + i_ * {cols} + j_] = {expr}[i_, j_]"]
    if isinstance(value, sim.types.Value):
        return [f"for i_ in range({value.spec.size}):", f"    out[{offset} + i_] = {expr}[i_]"]
    return [f"out[{offset}] = {expr}"]


def sample_inputs(group, trial=0):
    return group.make_inputs(np.random.default_rng([len(group.name), trial, 4]))


def python_results(group, inputs):
    namespace = {"sim": sim, "np": np, "numba": numba, **inputs}
    return [eval(case.expr, namespace) for case in group.cases]  # noqa: S307


@functools.cache
def generated(group_name):
    """``(source, python function, names, layout)`` storing all results of a group.

    The function takes ``(out, *inputs)`` and writes each result's components to
    ``out`` (float64) at the offsets of ``layout`` (a slice per case).
    """
    group = GROUPS[group_name]
    inputs = sample_inputs(group)
    names = list(inputs)
    lines = [f"def builtins_{group.name}(out, {', '.join(names)}):"]
    layout, offset = [], 0
    for case, result in zip(group.cases, python_results(group, inputs)):
        lines.append(f"    result_ = {case.expr}")
        lines += [f"    {line}" for line in _store_lines(result, "result_", offset)]
        size = len(flat(result))
        layout.append(slice(offset, offset + size))
        offset += size
    source = "\n".join(lines) + "\n"
    namespace = {"sim": sim, "np": np, "numba": numba}
    exec(compile(source, f"<builtins_{group.name}>", "exec"), namespace)  # noqa: S102
    return namespace[f"builtins_{group.name}"], names, layout, offset


@functools.cache
def compiled(group_name):
    return numba.njit(generated(group_name)[0])


def run_compiled(group, inputs):
    fn, names, layout, size = generated(group.name)
    out = np.full(size, -12345.0)
    compiled(group.name)(out, *[inputs[n] for n in names])
    return [out[s] for s in layout]


# --------------------------------------------------------------------------
# Checks


def eps_of(dtype):
    return float(np.finfo(dtype).eps) if np.issubdtype(dtype, np.floating) else 0.0


def close(got, expected, bound, sign_free=False):
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    if sign_free and np.abs(got + expected).max() < np.abs(got - expected).max():
        expected = -expected
    error = np.abs(got - expected)
    ok = (error <= bound) | (np.isnan(got) & np.isnan(expected)) | (got == expected)
    return bool(np.all(ok)), float(np.max(error, initial=0.0))


def bound(group, case, env, expected, tol):
    scale = case.scale(env, expected) if case.scale else np.abs(expected)
    return tol * eps_of(group.dtype) * np.asarray(scale, np.float64).reshape(-1)


@pytest.mark.parametrize("group_name", list(GROUPS))
def test_python_and_compiled_agree_with_reference(group_name):
    group = GROUPS[group_name]
    for trial in range(TRIALS):
        inputs = sample_inputs(group, trial)
        env = Env(inputs)
        in_compiled = run_compiled(group, inputs)
        for case, py, cpu in zip(group.cases, python_results(group, inputs), in_compiled):
            expected = flat(case.reference(env))
            limit = bound(group, case, env, expected, case.tol)
            ok, error = close(flat(py), expected, limit, case.sign_free)
            assert ok, (f"{group.name}: {case.expr} = {flat(py)}, reference {expected}, "
                        f"error {error:.3g} > {np.max(limit):.3g}")
            ok, error = close(cpu, flat(py), bound(group, case, env, expected, case.agree))
            assert ok, f"{group.name}: {case.expr}: compiled {cpu} != Python {flat(py)}"
