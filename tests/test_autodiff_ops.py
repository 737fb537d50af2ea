"""The builtin adjoints (numba_sim.autodiff.adjoint_function) against central finite
differences in float64, over every variant of the operation table
(tests/autodiff_op_cases.py), plus the conventions and the error path."""

import operator
import zlib

import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_sim as sim
from autodiff_op_cases import (
    EXCLUDED, NO_ADJOINT, STEP, TOLERANCE, components, enumerate_cases,
    finite_difference_vjp, is_float_argument, random_adjoint, random_value, table_names,
)
from numba_sim.autodiff import adjoint_attribute, adjoint_function
from numba_sim.types import SPEC_BY_NAME, VALUE_TABLE


CASES = enumerate_cases()
DIFFERENTIABLE = [c for c in CASES if c.differentiable and c.name not in NO_ADJOINT
                  and c.name not in EXCLUDED]
CONSTANT = [c for c in CASES if not c.differentiable and c.name not in NO_ADJOINT]


def _rng(case, trial=0):
    return np.random.default_rng(zlib.crc32(f"{case!r}/{trial}".encode()))


def _inputs(case, rng):
    return [random_value(t, rng) for t in case.argtypes]


@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=repr)
def test_adjoint_matches_finite_differences(case):
    rng = _rng(case)
    args = _inputs(case, rng)
    adj_ret = random_adjoint(case.return_type, rng)
    adjoints = adjoint_function(case.key)(*args, adj_ret)
    assert len(adjoints) == len(args)
    for index, (argtype, adjoint) in enumerate(zip(case.argtypes, adjoints)):
        if not is_float_argument(argtype):
            assert np.all(components(adjoint) == 0), f"{case}: argument {index} is not a float"
            continue
        expected, scale = finite_difference_vjp(case.key, args, adj_ret, index,
                                                STEP[case.single_precision])
        got = components(adjoint)
        error = np.abs(got - expected)
        assert np.all(error <= TOLERANCE[case.single_precision] * (1 + scale)), (
            f"{case}: argument {index}: adjoint {got} vs finite differences {expected}")


@pytest.mark.parametrize("case", CONSTANT, ids=repr)
def test_non_differentiable_variant_gives_zeros(case):
    """Variants without a float argument or a float result (comparisons, bit operations,
    integer values, predicates, argmin): every adjoint is a zero of its argument's type."""
    rng = _rng(case)
    args = _inputs(case, rng)
    adjoints = adjoint_function(case.key)(*args, random_adjoint(case.return_type, rng))
    for arg, adjoint in zip(args, adjoints):
        assert np.all(components(adjoint) == 0)
        assert type(adjoint) is type(arg) or isinstance(arg, (bool, np.integer, int))


def test_every_operation_is_covered_or_listed():
    """A new builtin cannot silently lack an adjoint: each table operation has a
    differentiable case above, or only non-differentiable ones, or is listed with a
    reason (EXCLUDED: no case; NO_ADJOINT: a TypingError naming it)."""
    covered = {c.name for c in CASES}
    # Constructors of value types made on demand (sim.types.vector(5, ...), by this or any
    # other test of the process) come from the one factory whose fixed-table constructors
    # have cases; which of them exist depends on what ran before.
    on_demand = {name for name in table_names() if name in SPEC_BY_NAME
                 and SPEC_BY_NAME[name] not in VALUE_TABLE}
    missing = [name for name in table_names() if name not in covered | on_demand
               and name not in EXCLUDED and name not in NO_ADJOINT]
    assert not missing, f"operations with no adjoint case and no reason listed: {missing}"
    stale = [name for name in list(EXCLUDED) + list(NO_ADJOINT) if name not in table_names()]
    assert not stale, f"listed operations that are not in the table: {stale}"


# --------------------------------------------------------------------------
# Conventions (Warp's, see docs/autodiff.md)


ONE = np.float64(1.0)


def test_normalize_and_length_of_zero_vector_give_zero():
    zero = sim.vec3d(0.0, 0.0, 0.0)
    (g,) = adjoint_function(sim.normalize)(zero, sim.vec3d(1.0, 2.0, 3.0))
    assert list(g) == [0.0, 0.0, 0.0]
    (g,) = adjoint_function(sim.length)(zero, np.float64(1.0))
    assert list(g) == [0.0, 0.0, 0.0]
    (g,) = adjoint_function(sim.sqrt)(np.float64(0.0), np.float64(1.0))
    assert g == 0.0


def test_min_max_clamp_ties_route_as_warp():
    a = np.float64(0.5)
    assert adjoint_function(sim.min)(a, a, ONE) == (0.0, 1.0)
    assert adjoint_function(sim.max)(a, a, ONE) == (0.0, 1.0)
    assert adjoint_function(sim.min)(np.float64(np.nan), a, ONE) == (0.0, 1.0)
    assert adjoint_function(sim.min)(a, np.float64(np.nan), ONE) == (1.0, 0.0)
    # clamp(x, lo, hi) = min(max(lo, x), hi): inside, below, above, at the bounds
    clamp = adjoint_function(sim.clamp)
    lo, hi = np.float64(0.0), np.float64(1.0)
    assert clamp(np.float64(0.5), lo, hi, ONE) == (1.0, 0.0, 0.0)
    assert clamp(np.float64(-1.0), lo, hi, ONE) == (0.0, 1.0, 0.0)
    assert clamp(np.float64(2.0), lo, hi, ONE) == (0.0, 0.0, 1.0)
    assert clamp(lo, lo, hi, ONE) == (1.0, 0.0, 0.0)
    assert clamp(hi, lo, hi, ONE) == (0.0, 0.0, 1.0)


def test_abs_acos_asin_atan2_at_their_edges():
    one = np.float64(1.0)
    assert adjoint_function(sim.abs)(np.float64(0.0), one) == (1.0,)
    assert adjoint_function(sim.abs)(np.float64(-2.0), one) == (-1.0,)
    for fn in (sim.acos, sim.asin):
        assert adjoint_function(fn)(one, one) == (0.0,)
        assert adjoint_function(fn)(np.float64(1.5), one) == (0.0,)
    assert adjoint_function(sim.atan2)(np.float64(0.0), np.float64(0.0), one) == (0.0, 0.0)


def test_division_by_zero_is_warps():
    """Warp's adj_div: adj_a += g / b, adj_b -= g * ret / b (inf and nan, not an error)."""
    ga, gb = adjoint_function(sim.div)(np.float64(1.0), np.float64(0.0), np.float64(1.0))
    assert ga == np.inf and gb == -np.inf  # ret = inf: -(1 * inf) / 0


def test_inverse_of_singular_matrix_gives_zero():
    (g,) = adjoint_function(sim.inverse)(sim.mat22d(1.0, 2.0, 2.0, 4.0),
                                         sim.mat22d(1.0, 0.0, 0.0, 1.0))
    assert list(np.ravel(g)) == [0.0] * 4


# --------------------------------------------------------------------------
# Component access, scalars, casts


def test_component_access_adjoints():
    v = sim.vec3d(1.0, 2.0, 3.0)
    m = sim.mat33d(*range(9))
    get = adjoint_function(operator.getitem)
    assert list(get(v, np.int32(1), np.float64(5.0))[0]) == [0.0, 5.0, 0.0]
    assert list(get(v, -1, np.float64(5.0))[0]) == [0.0, 0.0, 5.0]
    assert np.ravel(get(m, (1, 2), np.float64(5.0))[0]).tolist() == [0, 0, 0, 0, 0, 5, 0, 0, 0]
    row = get(m, 2, sim.vec3d(1.0, 2.0, 3.0))[0]
    assert np.ravel(row).tolist() == [0, 0, 0, 0, 0, 0, 1, 2, 3]
    assert list(adjoint_attribute("y")(v, np.float64(4.0))[0]) == [0.0, 4.0, 0.0]
    t = sim.transformd(sim.vec3d(1.0, 2.0, 3.0), sim.quatd(0.0, 0.0, 0.0, 1.0))
    (g,) = adjoint_attribute("q")(t, sim.quatd(1.0, 2.0, 3.0, 4.0))
    assert list(g) == [0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]
    (g,) = adjoint_attribute("p")(t, sim.vec3d(1.0, 2.0, 3.0))
    assert list(g) == [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0]


def test_scalar_arithmetic_and_casts():
    x, y, g = np.float32(3.0), np.float32(2.0), np.float32(1.0)
    assert adjoint_function(operator.mul)(x, y, g) == (2.0, 3.0)
    assert adjoint_function(operator.truediv)(x, y, g) == (0.5, -0.75)
    assert adjoint_function(operator.pow)(x, y, g) == pytest.approx((6.0, 9 * np.log(3)))
    assert adjoint_function(operator.neg)(x, g) == (-1.0,)
    dx, di = adjoint_function(operator.add)(x, np.int32(2), g)
    assert dx == 1.0 and di == 0 and type(di) is np.int32
    (d,) = adjoint_function(sim.float64)(np.float32(2.0), np.float64(3.0))
    assert d == 3.0 and type(d) is np.float32
    assert adjoint_function(float)(np.int32(2), 1.0) == (0,)
    assert adjoint_function(np.float32) is adjoint_function(sim.float32)


def test_constant_builtins_have_zero_adjoints():
    """identity(n, dtype), quat_identity(dtype): a zero for the size, None for the dtype."""
    import numba

    adj_identity = adjoint_function(sim.identity)
    assert adj_identity(3, sim.float32, sim.mat33()) == (0, None)

    @numba.njit
    def compiled(g):
        return adj_identity(3, np.float32, g)

    assert compiled(sim.mat33()) == (0, None)
    assert adjoint_function(sim.quat_identity)(sim.float64, sim.quatd()) == (None,)


# --------------------------------------------------------------------------
# Errors


def test_builtin_without_adjoint_is_named():
    with pytest.raises(TypingError, match="no adjoint for builtin 'randf'"):
        adjoint_function(sim.randf)


def test_builtin_without_adjoint_is_a_compile_error_naming_it():
    import numba

    from numba_sim.autodiff import op_overrides

    # a formula computed by native code, with its hand-written adjoint taken away
    key = sim.triangle_closest_point
    saved = op_overrides.overridden_keys().pop(key)
    try:
        adj = adjoint_function(key)

        @numba.njit
        def uses(a, g):
            return adj(a, a, a, a, g)

        with pytest.raises(TypingError, match="no adjoint for builtin 'triangle_closest_point'"):
            uses(sim.vec3(1.0, 0.0, 0.0), sim.vec2(1.0, 0.0))
    finally:
        op_overrides.overridden_keys()[key] = saved


# --------------------------------------------------------------------------
# The geometry builtins native code computes (float32 vec3 only)

GEOMETRY = [
    (sim.closest_point_on_segment, 3, sim.vec3),
    (sim.triangle_closest_point, 4, sim.vec2),
    (sim.closest_point_edge_edge, 4, sim.vec3),
]


def _region(builtin, args):
    """Which case of the algorithm *args* fall in: for the segment, whether the closest
    point is an end; otherwise which of the first two weights / parameters are 0 or 1."""
    out = components(builtin(*args))
    if builtin is sim.closest_point_on_segment:
        return tuple(bool(np.all(out == components(end))) for end in args[:2])
    return tuple((w == 0, w == 1) for w in out[:2])


@pytest.mark.parametrize("builtin, points, result", GEOMETRY, ids=lambda x: getattr(
    x, "__name__", ""))
def test_geometry_adjoints_match_finite_differences(builtin, points, result):
    """Adjoints derived from op_geometry's formulas against central differences of the
    native builtin (float32: step 1e-3, tolerance 2e-3 of the terms' scale), for points in
    every region (spread widely around a unit triangle / segments)."""
    rng = np.random.default_rng(3)
    adj = adjoint_function(builtin)
    regions = set()
    for trial in range(40):
        args = [sim.vec3(*rng.uniform(-1.0, 2.0, 3)) for _ in range(points)]
        if builtin is sim.closest_point_edge_edge:
            args.append(np.float32(1e-6))
        adj_ret = result(*rng.normal(size=len(result()._components())))
        got = adj(*args, adj_ret)
        regions.add(_region(builtin, args))
        for index in range(points):
            expected, scale = finite_difference_vjp(builtin, args, adj_ret, index, 1e-3,
                                                    floor=1.0)
            error = np.abs(components(got[index]) - expected)
            assert np.all(error <= 2e-3 * (1 + scale)), (
                f"{builtin.__name__} trial {trial} argument {index}: adjoint "
                f"{components(got[index])} vs finite differences {expected}")
    assert len(regions) >= 3, regions


def test_quat_to_axis_angle_adjoint_is_warps_zero_without_a_vector_part():
    adjoint = adjoint_function(sim.quat_to_axis_angle)
    seed = (sim.vec3d(1.0, 2.0, 3.0), np.float64(1.0))
    (at_identity,) = adjoint(sim.quatd(0.0, 0.0, 0.0, 1.0), seed)
    assert np.array_equal(np.asarray(at_identity), np.zeros(4))  # the derived one: NaN
    (at_null,) = adjoint(sim.quatd(0.0, 0.0, 0.0, 0.0), seed)
    assert np.array_equal(np.asarray(at_null), np.zeros(4))
