"""Warp's semantics at the edges, pinned: rounding, signs, NaN and infinities, singular
matrices, zero vectors, and the types results come back in (Python and compiled)."""

import math

import numba
import numpy as np
import pytest

import numba_sim as sim

NAN, INF = math.nan, math.inf
HALF_PI = math.pi / 2


@numba.njit
def edge_cases(x, zero, one):
    return (sim.round(x), sim.sign(x), sim.step(x), sim.abs(x), sim.floor(x), sim.trunc(x),
            sim.min(x, one), sim.min(one, x), sim.max(x, one), sim.clamp(x, zero, one),
            sim.asin(x), sim.acos(x), sim.isnan(x), sim.isinf(x), sim.isfinite(x))


FIELDS = ("round sign step abs floor trunc min_x_1 min_1_x max_x_1 clamp_0_1 asin acos "
          "isnan isinf isfinite").split()

# x: the expected value of each field (Warp's C++ semantics; see warp/native/builtin.h)
EDGES = {
    0.5: (1, 1, 0, 0.5, 0, 0, 0.5, 0.5, 1, 0.5, math.asin(0.5), math.acos(0.5), 0, 0, 1),
    -0.5: (-1, -1, 1, 0.5, -1, -0.0, -0.5, -0.5, 1, 0, -math.asin(0.5), math.acos(-0.5), 0, 0, 1),
    2.5: (3, 1, 0, 2.5, 2, 2, 1, 1, 2.5, 1, HALF_PI, 0, 0, 0, 1),  # away from zero, not to even
    -2.5: (-3, -1, 1, 2.5, -3, -2, -2.5, -2.5, 1, 0, -HALF_PI, math.pi, 0, 0, 1),
    -0.0: (-0.0, 1, 0, 0.0, -0.0, -0.0, -0.0, -0.0, 1, 0.0, -0.0, HALF_PI, 0, 0, 1),
    NAN: (NAN, 1, 0, NAN, NAN, NAN, 1, 1, 1, 0, -HALF_PI, math.pi, 1, 0, 0),
    INF: (INF, 1, 0, INF, INF, INF, 1, 1, INF, 1, HALF_PI, 0, 0, 1, 0),
    -INF: (-INF, -1, 1, INF, -INF, -INF, -INF, -INF, 1, 0, -HALF_PI, math.pi, 0, 1, 0),
    1e30: (1e30, 1, 0, 1e30, 1e30, 1e30, 1, 1, 1e30, 1, HALF_PI, 0, 0, 0, 1),
}


def bits_equal(a, b, dtype):
    a, b = dtype(a), dtype(b)
    return (np.isnan(a) and np.isnan(b)) or (a == b and np.signbit(a) == np.signbit(b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_edge_values_follow_warp(dtype):
    cases = dict(EDGES)
    below_half = np.nextafter(dtype(0.5), dtype(0))  # floor(x + 0.5) would give 1
    cases[below_half] = (0, 1, 0, below_half, 0, 0, below_half, below_half, 1, below_half,
                         math.asin(below_half), math.acos(below_half), 0, 0, 1)
    for x, expected in cases.items():
        x = dtype(x)
        args = (x, dtype(0), dtype(1))
        for results in (edge_cases(*args), edge_cases.py_func(*args)):
            for field, got, want in zip(FIELDS, results, expected):
                if field.startswith("is"):
                    assert got == bool(want), (x, field, got)
                elif field in ("asin", "acos"):
                    assert np.isclose(got, want, rtol=2e-7), (x, field, got, want)
                else:
                    assert bits_equal(got, want, dtype), (dtype.__name__, x, field, got, want)
    compiled_types = edge_cases.nopython_signatures[-1].return_type.types
    python_types = [type(r) for r in edge_cases.py_func(dtype(1), dtype(0), dtype(1))]
    assert python_types == [dtype] * 12 + [bool] * 3
    assert [str(t) for t in compiled_types] == [np.dtype(dtype).name] * 12 + ["bool"] * 3


@numba.njit
def singular_and_zero(m2, m3, m4, v, q):
    return (sim.inverse(m2), sim.inverse(m3), sim.inverse(m4), sim.determinant(m3),
            sim.normalize(v), sim.normalize(q), sim.quat_to_axis_angle(sim.quat_identity()),
            sim.isnan(sim.vec3(0.0, NAN, 0.0)), sim.isinf(sim.mat22(0.0, 0.0, -INF, 0.0)),
            sim.isfinite(sim.quat(0.0, 0.0, 0.0, NAN)))


def test_singular_matrices_invert_to_zero_and_zero_vectors_normalize_as_warp():
    m2 = sim.mat22(1, 2, 2, 4)
    m3 = sim.mat33(1, 2, 3, 2, 4, 6, 0, 1, 1)
    m4 = sim.mat44(*np.outer([1, 2, 3, 4], [1, -1, 2, 0.5]).ravel())
    args = (m2, m3, m4, sim.vec3(), sim.quat())
    for inv2, inv3, inv4, det3, v, q, (axis, angle), has_nan, has_inf, finite in (
            singular_and_zero(*args), singular_and_zero.py_func(*args)):
        assert inv2 == sim.mat22() and inv3 == sim.mat33() and inv4 == sim.mat44()
        assert det3 == 0
        assert v == sim.vec3()
        assert q == sim.quat(0, 0, 0, 1)  # Warp: the identity quaternion
        assert axis == sim.vec3() and angle == 0
        assert has_nan and has_inf and not finite


@numba.njit
def result_types(x32, i32, i64, v, q):
    return (sim.pow(x32, 2), sim.min(i32, x32), sim.max(i32, i64), sim.lerp(v, v, 0.5),
            sim.quat_from_axis_angle(v, 0.5), sim.sin(x32), sim.mul(x32, 2), sim.degrees(x32),
            sim.quat_to_axis_angle(q), sim.clamp(i32, 0, 10))


def test_result_types_keep_float32_and_follow_the_values():
    """Scalars meet at the widest float (an int never promotes float32 to float64); int
    literals adopt the type of the int variables (clamp(i32, 0, 10) is int32, as in Warp)."""
    args = (np.float32(1.0), np.int32(-3), np.int64(7), sim.vec3(1, 0, 0), sim.quat(0, 0, 0, 1))
    expected = ("float32", "float32", "int64", "vec3", "quat", "float32", "float32", "float32",
                "Tuple(vec3, float32)", "int32")
    results = result_types(*args)
    assert [str(t) for t in result_types.nopython_signatures[0].return_type.types] == list(expected)
    in_python = result_types.py_func(*args)
    assert [numba.typeof(r).name for r in in_python] == list(expected)
    for results in (results, in_python):
        assert results[7] == np.float32(57.29577951308232)  # x * RAD_TO_DEG, rounded once


@pytest.mark.parametrize("dtype_arg, expected", [
    ((), sim.mat33), ((float,), sim.mat33), ((sim.float32,), sim.mat33),
    ((np.float64,), sim.mat33d), ((numba.float64,), sim.mat33d),
    ((np.dtype("float64"),), sim.mat33d),
])
def test_identity_dtype_spellings_in_python(dtype_arg, expected):
    m = sim.identity(3, *dtype_arg)
    assert type(m) is expected and m == expected(1, 0, 0, 0, 1, 0, 0, 0, 1)
    quat_type = sim.quat if expected is sim.mat33 else sim.quatd
    transform_type = sim.transform if expected is sim.mat33 else sim.transformd
    assert sim.quat_identity(*dtype_arg) == quat_type(0, 0, 0, 1)
    assert sim.transform_identity(*dtype_arg) == transform_type(0, 0, 0, 0, 0, 0, 1)
