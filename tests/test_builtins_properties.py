"""Property tests (hypothesis) of the rotation and matrix builtins, compiled and in Python.

One compiled function per scalar type computes every property's quantities;
each test checks its own, for both float32 and float64, with tolerances in
multiples of the type's epsilon.
"""

import functools

import numba
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import numba_sim as sim

DTYPES = {"float32": np.float32, "float64": np.float64}
SUFFIX = {"float32": "", "float64": "d"}


@functools.cache
def quantities(dtype_name):
    """(compiled, python) functions returning every quantity the properties check."""
    def compute(q, r, v, t, tf, m2, m3, m4):
        rotated = sim.quat_rotate(q, v)
        zero_quat = q * (t - t)
        slerp_ends = (sim.quat_slerp(q, r, t - t), sim.quat_slerp(q, r, t - t + 1))
        return (
            sim.quat_to_matrix(q) @ v, rotated, sim.length(rotated), sim.length(v),
            sim.quat_rotate_inv(q, rotated),
            sim.quat_from_matrix(sim.quat_to_matrix(q)),
            sim.transform_multiply(tf, sim.transform_inverse(tf)),
            sim.transform_point(sim.transform_inverse(tf), sim.transform_point(tf, v)),
            sim.inverse(m2) @ m2, sim.inverse(m3) @ m3, sim.inverse(m4) @ m4,
            slerp_ends, sim.quat_slerp(q, r, t),
            sim.normalize(v * (t - t)), sim.normalize(zero_quat), sim.normalize(v),
        )

    return numba.njit(compute), compute


def unit_quaternions():
    components = st.tuples(*[st.floats(-1, 1, allow_nan=False)] * 4)
    return components.filter(lambda c: np.linalg.norm(c) > 0.2).map(
        lambda c: np.asarray(c) / np.linalg.norm(c))


def well_conditioned_matrices(n):
    """Strictly diagonally dominant n x n matrices (|m_ii| >= n > sum of |m_ij|, j != i):
    invertible, with condition numbers below about 2n, of either determinant sign."""
    entries = st.lists(st.floats(-1, 1, allow_nan=False), min_size=n * n, max_size=n * n)
    signs = st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n)
    return st.tuples(entries, signs).map(
        lambda d: np.reshape(d[0], (n, n)) * (1 - 1 / n) + n * np.diag(d[1]))


# components are 0 or at least 1e-6 in size: squares of smaller ones underflow (in float32), and
# lengths computed from underflowed squares are inexact in Warp as here
coordinates = st.floats(-100, 100, allow_nan=False).map(lambda x: x if abs(x) >= 1e-6 else 0.0)
vectors = st.lists(coordinates, min_size=3, max_size=3).map(np.asarray)


@st.composite
def inputs(draw, dtype_name):
    suffix = SUFFIX[dtype_name]
    dtype = DTYPES[dtype_name]
    cls = {name: getattr(sim, name + suffix) for name in ("quat", "vec3", "transform", "mat22",
                                                          "mat33", "mat44")}
    q, r = draw(unit_quaternions()), draw(unit_quaternions())
    assume(abs(np.dot(q, r)) < 0.9999)  # slerp between (nearly) equal rotations: axis undefined
    p, v = draw(vectors), draw(vectors)
    m = [draw(well_conditioned_matrices(n)) for n in (2, 3, 4)]
    t = dtype(draw(st.floats(0, 1)))
    values = dict(q=cls["quat"](*q), r=cls["quat"](*r), v=cls["vec3"](*v), t=t,
                  tf=cls["transform"](*p, *q), m2=cls["mat22"](*m[0].ravel()),
                  m3=cls["mat33"](*m[1].ravel()), m4=cls["mat44"](*m[2].ravel()))
    return values


def evaluations(dtype_name, values):
    compiled, python = quantities(dtype_name)
    args = [values[k] for k in ("q", "r", "v", "t", "tf", "m2", "m3", "m4")]
    return compiled(*args), python(*args)


def magnitude(v):
    """The size of a vector within a factor sqrt(n) (np.linalg.norm underflows for tiny ones)."""
    return float(np.abs(np.asarray(v, np.float64)).max())


def tolerance(dtype_name, multiple, scale=1.0):
    """*multiple* epsilons of the type times *scale*, plus the smallest normal number (results
    that underflow carry absolute errors of that size)."""
    info = np.finfo(DTYPES[dtype_name])
    return multiple * float(info.eps) * scale + float(info.tiny)


def assert_near(got, expected, tolerance, sign_free=False):
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    if sign_free:
        error = min(np.abs(got - expected).max(), np.abs(got + expected).max())
    else:
        error = np.abs(got - expected).max()
    assert error <= tolerance, (got, expected, error, tolerance)


PROPERTY_SETTINGS = settings(max_examples=30, deadline=None)


@pytest.mark.parametrize("dtype_name", DTYPES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_quat_to_matrix_rotates_as_quat_rotate_and_keeps_length(dtype_name, data):
    values = data.draw(inputs(dtype_name))
    scale = magnitude(values["v"])
    for r in evaluations(dtype_name, values):
        by_matrix, rotated, rotated_length, length, back = r[:5]
        assert_near(by_matrix, rotated, tolerance(dtype_name, 16, scale))
        assert_near(rotated_length, length, tolerance(dtype_name, 16, scale))
        assert_near(back, values["v"], tolerance(dtype_name, 32, scale))


@pytest.mark.parametrize("dtype_name", DTYPES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_quat_from_matrix_recovers_the_quaternion_up_to_sign(dtype_name, data):
    values = data.draw(inputs(dtype_name))
    for r in evaluations(dtype_name, values):
        assert_near(r[5], values["q"], tolerance(dtype_name, 16), sign_free=True)


@pytest.mark.parametrize("dtype_name", DTYPES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_transform_times_its_inverse_is_the_identity(dtype_name, data):
    values = data.draw(inputs(dtype_name))
    tf = np.asarray(values["tf"], np.float64)
    scale = magnitude(tf[:3]) + magnitude(values["v"])
    for r in evaluations(dtype_name, values):
        identity, round_trip = np.asarray(r[6]), r[7]
        assert_near(identity[:3], np.zeros(3), tolerance(dtype_name, 32, scale))
        assert_near(identity[3:], [0, 0, 0, 1], tolerance(dtype_name, 16), sign_free=True)
        assert_near(round_trip, values["v"], tolerance(dtype_name, 32, scale))


@pytest.mark.parametrize("dtype_name", DTYPES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_inverse_times_a_well_conditioned_matrix_is_the_identity(dtype_name, data):
    values = data.draw(inputs(dtype_name))
    for r in evaluations(dtype_name, values):
        for n, product, name in zip((2, 3, 4), r[8:11], ("m2", "m3", "m4")):
            condition = np.linalg.cond(np.asarray(values[name], np.float64))
            assert_near(product, np.eye(n), tolerance(dtype_name, 16 * n, condition))


@pytest.mark.parametrize("dtype_name", DTYPES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_quat_slerp_goes_from_a_to_b_along_unit_quaternions(dtype_name, data):
    values = data.draw(inputs(dtype_name))
    # the relative rotation's axis is ill-conditioned as q and r approach each other
    limit = tolerance(dtype_name, 64, 1 / np.sqrt(1 - np.dot(values["q"], values["r"]) ** 2))
    for r in evaluations(dtype_name, values):
        (start, end), middle = r[11], r[12]
        assert_near(start, values["q"], limit)
        assert_near(end, values["r"], limit, sign_free=True)
        assert_near(np.linalg.norm(np.asarray(middle, np.float64)), 1, tolerance(dtype_name, 16))


@pytest.mark.parametrize("dtype_name", DTYPES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_normalize_gives_unit_length_and_zero_for_zero(dtype_name, data):
    values = data.draw(inputs(dtype_name))
    v = np.asarray(values["v"])
    assume(np.dot(v, v) >= np.finfo(v.dtype).tiny)  # no underflow: tinier vectors normalize to 0
    for r in evaluations(dtype_name, values):
        zero_vector, zero_quat, unit = r[13], r[14], r[15]
        assert tuple(zero_vector) == (0, 0, 0)  # Warp: normalize of a zero vector is zero
        assert tuple(zero_quat) == (0, 0, 0, 1)  # ... of a zero quaternion, the identity
        assert_near(np.linalg.norm(np.asarray(unit, np.float64)), 1, tolerance(dtype_name, 4))
