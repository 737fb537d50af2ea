"""Warp's random numbers: bit-identical sequences, in-place state, CPU, Python and CUDA (offline).

The expected values were produced by warp-lang 1.19 on the CPU (the kernel in
``warp_reference_draws`` below, launched on the eight seed/offset cases), and
are compared with a live Warp run when warp-lang is installed.
"""

import numba
import numpy as np
import pytest

import numba_sim as sim
from numba_sim.typing.random_state import RandomState

SEEDS = np.array([0, 42, -7, 1, 12345, 2147483647, -1, 99], np.int32)
OFFSETS = np.array([0, 0, 0, 0, 678, 2147483647, 5, -3], np.int32)
USE_OFFSET = np.array([0, 0, 0, 1, 1, 1, 1, 1], np.int32)
CASES = len(SEEDS)
FLOATS = 35
EXACT_FLOATS = slice(0, 11)
"""randf x 10 and randf(s, -2, 3): bit-identical; then randn and the sample_* (2 ulp)."""

# Warp 1.19, CPU: ints = randi, randi(-5, 17); uints = state after rand_init, randu,
# randu(3, 1000), final state; floats (as bits) = 10 x randf, randf(-2, 3), randn,
# sample_unit_sphere, _sphere_surface, _cube, _hemisphere_surface, _hemisphere (3 each),
# sample_triangle, _unit_ring, _unit_disk, _unit_square (2 each).
WARP_INTS = np.array([
    [1602715791, 5],
    [2137158931, 3],
    [-25088157, 7],
    [-245262565, 11],
    [1298342705, 14],
    [-2024669999, 0],
    [-451652407, 12],
    [-678618568, 5],
], dtype=np.int32)
WARP_UINTS = np.array([
    [129708002, 1422042726, 598, 3463679776],
    [1223963391, 1358090546, 544, 371724910],
    [70193650, 3606697865, 332, 2747038620],
    [1583546800, 3976269795, 191, 850133385],
    [1553669038, 799816671, 35, 3260829299],
    [3652441283, 2032270143, 453, 2877248288],
    [1119586954, 1117727902, 594, 418034318],
    [1438361577, 1809113731, 564, 2490363746],
], dtype=np.uint32)
WARP_FLOAT_BITS = np.array([
    [0x3e42f80c, 0x3effbb68, 0x3f0d3248, 0x3e5b7fcc, 0x3e3f1cb0, 0x3f214494, 0x3ea5ba30, 0x3f6071a5,
     0x3ee47114, 0x3dca1188, 0x3fe9b206, 0xbf88003d, 0x3edfa9a7, 0xbdd41bbb, 0x3f1fdff1, 0xbf5a66af,
     0x3ef612ad, 0x3e4fce8f, 0xbeb7a022, 0xbef21968, 0xbeccbd38, 0x3f000bcb, 0xbf2e884e, 0x3f08ab78,
     0x3f06d9f5, 0x3f50a186, 0x3e3c5f96, 0x3c269940, 0x3e0e7b67, 0xbf67c643, 0x3ed9688c, 0xbf6c5f22,
     0xbeb212f5, 0xbe005188, 0x3e9ce71e],
    [0x3f260470, 0x3f6eaf3b, 0x3f2c68d5, 0x3f5ab356, 0x3f04f6f7, 0x3d497780, 0x3edee712, 0x3e993f5e,
     0x3cca2280, 0x3e981e44, 0x3facf492, 0x3ef59cde, 0x3ee65fd7, 0x3e8e130f, 0x3dbfd78d, 0x3e5a1f3c,
     0x3f6372c4, 0x3ed021b4, 0xbea696c2, 0x3e7d950c, 0x3ea0add4, 0x3df8be8b, 0x3f5b4858, 0x3f006437,
     0x3ec01d40, 0x3effae97, 0x3d3f51e1, 0x3da67cb8, 0x3f1183b7, 0xbf14da91, 0x3f504672, 0xbd5378b9,
     0xbf535c07, 0x3ee960e4, 0xbed3afdc],
    [0x3ee389b8, 0x3ed171a8, 0x3f43724e, 0x3f4460ef, 0x3eee2c48, 0x3f00f80c, 0x3dd1a468, 0x3dee0798,
     0x3f43b27e, 0x3f32495f, 0x401f7844, 0xc00f5124, 0x3f149e3a, 0x3cb04926, 0xbe6d3930, 0xbf31a8d3,
     0x3e0acfe9, 0xbf350586, 0x3dc7c128, 0xbeab0a9c, 0x3cc6b0e0, 0x3f65fcee, 0x3e83e6b6, 0x3eb61f09,
     0xbecc47db, 0x3e19663c, 0x3e7b0fbc, 0x3ebf74d4, 0x3e009139, 0xbd64dcf5, 0xbf7f999e, 0xbf32887a,
     0xbc857e84, 0x3dc91088, 0x3e0ef1ec],
    [0x3f4b8b5b, 0x3eefa718, 0x3f650def, 0x3f4ef54a, 0x3f47fe60, 0x3f31b807, 0x3f692dab, 0x3e8cad5e,
     0x3f73d04d, 0x3e6e80d4, 0xbf0ec3f4, 0xbd555309, 0x3e9981ee, 0x3dce3c6d, 0x3eb8d5d1, 0xbe252363,
     0xbf2fafe9, 0x3f359078, 0x3e84fd4c, 0xbe4f9870, 0xbd981ae8, 0xbf7e9926, 0x3d9e45d4, 0x3d9012cd,
     0x3e127dce, 0x3ec0c299, 0x3f07888e, 0x3e359d44, 0x3f1972a5, 0x3f0f348e, 0xbf5432d7, 0x3f022abd,
     0x3d214d1a, 0x3d586690, 0xbe9aa7fe],
    [0x3ee034d6, 0x3f5d23a8, 0x3f23a545, 0x3e8d920c, 0x3f6c2f37, 0x3f68345d, 0x3f6d3c57, 0x3f1e1938,
     0x3e93cb88, 0x3ce64340, 0xbfde216a, 0x3e342bd5, 0xbe57199c, 0xbf36f11a, 0x3d7f4f67, 0xbc607984,
     0xbe915d24, 0xbf7570c4, 0xbddeecf0, 0x3e11890c, 0x3d5514c0, 0xbf6eaa1b, 0xbea2c288, 0x3e30c064,
     0xbe619122, 0xbe76ca80, 0x3f039d64, 0x3efba0c8, 0x3e7ffd66, 0xbf1b397c, 0xbf4b924b, 0xbead2f31,
     0x3ee1ffd2, 0x3eb2712e, 0x3e84b89c],
    [0x3f7e431e, 0x3eab1890, 0x3efc88e4, 0x3e3f5204, 0x3f7fb101, 0x3f0055cc, 0x3f4fb0be, 0x3e2364fc,
     0x3ebe83f2, 0x3f64ac38, 0xbcebab00, 0xbf79325b, 0x3ef22ae7, 0x3edcc1b2, 0x3e1e0e65, 0xbe2b0a89,
     0xbf1ce037, 0xbf45bb1f, 0x3d5b1d40, 0x3c8af0e0, 0xbbcdc000, 0x3ef7b3e6, 0xbf293614, 0x3f12d924,
     0xbe743e2c, 0xbe36dff4, 0x3f251a80, 0x3f24022b, 0x3e495b2a, 0xbd5f818e, 0xbf7f9e5c, 0xbf6bf486,
     0xbeadd4ec, 0x3e6dac7c, 0x3e2dfd4c],
    [0x3e9a8ce2, 0x3eab87b0, 0x3e4ecbec, 0x3f55afa5, 0x3cbc3d80, 0x3e6e9fdc, 0x3e1eb514, 0x3f0837d5,
     0x3f345e36, 0x3f28eab5, 0xbf8fa820, 0xbeb9f71c, 0xbe93c59c, 0x3e810f69, 0x3e827d0d, 0xbf773150,
     0x3e245f0f, 0x3e518073, 0x3eb3482c, 0x3e5a8464, 0x3e66ee98, 0x3ea0f43b, 0xbf3a1efd, 0x3f1c438f,
     0xbf37beba, 0xbe6ec740, 0x3e95aa2f, 0x3e79a720, 0x3f37caee, 0xbf71f276, 0xbea74da1, 0xbd523b80,
     0xbe624356, 0x3eff9800, 0xbece2a9c],
    [0x3f5258f6, 0x3e868cdc, 0x3e97980a, 0x3e898510, 0x3da0a760, 0x3efcba76, 0x3f6961aa, 0x3ee166ee,
     0x3f039911, 0x3f504728, 0x401e85b8, 0xbf8ea784, 0xbf1fa3e8, 0xbcc5f6d1, 0x3eb24e07, 0xbf795c7e,
     0xbe539054, 0xbdbce3b4, 0x3e9ea78c, 0xbd841c90, 0xbe1b6348, 0xbf041754, 0x3ef003ef, 0x3f3789a8,
     0xbee6b52f, 0xbed764a6, 0x3f0c46c3, 0x3f1c0146, 0x3e62e89e, 0x3e9be8ef, 0x3f73d79b, 0xbe92edf2,
     0xbf2d609f, 0x3eeceb32, 0x3da37f78],
], dtype=np.uint32)


def ulp_distance(a, b):
    """Distance in float32 units in the last place, elementwise."""
    def ordered(x):
        bits = np.asarray(x, np.float32).view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)

    return np.abs(ordered(a) - ordered(b))


def assert_matches_warp(ints, uints, floats, warp_ints, warp_uints, warp_float_bits):
    np.testing.assert_array_equal(ints, warp_ints)
    np.testing.assert_array_equal(uints, warp_uints)
    warp_floats = warp_float_bits.view(np.float32)
    np.testing.assert_array_equal(floats[:, EXACT_FLOATS].view(np.uint32),
                                  warp_float_bits[:, EXACT_FLOATS])
    assert ulp_distance(floats, warp_floats).max() <= 2, floats - warp_floats


# --------------------------------------------------------------------------
# The draws, as a @sim.func (compiled in the kernel, and run as Python)


@sim.func
def draw_program(t, seeds, offsets, use_offset, ints, uints, floats):
    s = sim.rand_init(seeds[t])
    if use_offset[t] != 0:
        s = sim.rand_init(seeds[t], offsets[t])
    uints[t, 0] = s
    for k in range(10):
        floats[t, k] = sim.randf(s)
    ints[t, 0] = sim.randi(s)
    ints[t, 1] = sim.randi(s, -5, 17)
    uints[t, 1] = sim.randu(s)
    uints[t, 2] = sim.randu(s, 3, 1000)
    floats[t, 10] = sim.randf(s, -2.0, 3.0)
    floats[t, 11] = sim.randn(s)
    a = sim.sample_unit_sphere(s)
    b = sim.sample_unit_sphere_surface(s)
    c = sim.sample_unit_cube(s)
    d = sim.sample_unit_hemisphere_surface(s)
    e = sim.sample_unit_hemisphere(s)
    for k in range(3):
        floats[t, 12 + k] = a[k]
        floats[t, 15 + k] = b[k]
        floats[t, 18 + k] = c[k]
        floats[t, 21 + k] = d[k]
        floats[t, 24 + k] = e[k]
    f = sim.sample_triangle(s)
    g = sim.sample_unit_ring(s)
    h = sim.sample_unit_disk(s)
    q = sim.sample_unit_square(s)
    for k in range(2):
        floats[t, 27 + k] = f[k]
        floats[t, 29 + k] = g[k]
        floats[t, 31 + k] = h[k]
        floats[t, 33 + k] = q[k]
    uints[t, 3] = s


@sim.kernel
def draw_kernel(seeds: sim.array(dtype=sim.int32), offsets: sim.array(dtype=sim.int32),
                use_offset: sim.array(dtype=sim.int32), ints: sim.array(dtype=sim.int32, ndim=2),
                uints: sim.array(dtype=sim.uint32, ndim=2), floats: sim.array(dtype=float, ndim=2)):
    draw_program(sim.tid(), seeds, offsets, use_offset, ints, uints, floats)


def empty_outputs():
    return (np.zeros((CASES, 2), np.int32), np.zeros((CASES, 4), np.uint32),
            np.zeros((CASES, FLOATS), np.float32))


def draw_inputs():
    return [SEEDS, OFFSETS, USE_OFFSET, *empty_outputs()]


@pytest.fixture(scope="module")
def cpu_draws():
    inputs = draw_inputs()
    sim.launch(draw_kernel, dim=CASES, inputs=inputs)
    return inputs[3:]


def test_kernel_draws_are_warps_numbers(cpu_draws):
    assert_matches_warp(*cpu_draws, WARP_INTS, WARP_UINTS, WARP_FLOAT_BITS)


def test_python_draws_are_warps_numbers():
    ints, uints, floats = empty_outputs()
    for t in range(CASES):
        draw_program(t, SEEDS, OFFSETS, USE_OFFSET, ints, uints, floats)
    assert_matches_warp(ints, uints, floats, WARP_INTS, WARP_UINTS, WARP_FLOAT_BITS)


def test_ten_draws_from_one_state_are_the_next_ten_numbers():
    # the state after each draw is the PCG hash of the one before (Warp's rand_pcg)
    state = sim.rand_init(SEEDS[4], OFFSETS[4])
    assert int(state) == WARP_UINTS[4, 0]
    for k in range(10):
        before = int(state)
        assert sim.randf(state).view(np.uint32) == WARP_FLOAT_BITS[4, k]
        assert int(state) != before
    # randu draws the state itself
    state = sim.rand_init(SEEDS[4], OFFSETS[4])
    drawn = [int(sim.randu(state)) for _ in range(10)]
    assert [np.uint32(u >> 8) * np.float32(2.0**-24) for u in drawn] == list(
        WARP_FLOAT_BITS[4, :10].view(np.float32))


# --------------------------------------------------------------------------
# The state advances in place across calls


@sim.func
def draw_in_func(s):
    return sim.randf(s)


@numba.njit
def draw_in_njit(s):
    return sim.randf(s)


@numba.njit
def make_state(seed, offset):
    return sim.rand_init(seed, offset)  # returned by value; the caller gets a slot of its own


@sim.kernel
def draws_across_calls(seeds: sim.array(dtype=sim.int32), offsets: sim.array(dtype=sim.int32),
                       out: sim.array(dtype=float, ndim=2)):
    i = sim.tid()
    s = make_state(seeds[i], offsets[i])
    out[i, 0] = sim.randf(s)
    out[i, 1] = draw_in_func(s)
    out[i, 2] = draw_in_njit(s)
    alias = s  # the same state, as in Warp
    out[i, 3] = sim.randf(alias)
    out[i, 4] = sim.randf(s)


WITH_OFFSET = USE_OFFSET == 1


def test_state_advances_across_func_and_njit_calls_in_a_kernel():
    out = np.zeros((int(WITH_OFFSET.sum()), 5), np.float32)
    sim.launch(draws_across_calls, dim=out.shape[0],
               inputs=[SEEDS[WITH_OFFSET], OFFSETS[WITH_OFFSET], out])
    np.testing.assert_array_equal(out.view(np.uint32), WARP_FLOAT_BITS[WITH_OFFSET, :5])


def test_state_advances_across_calls_from_python():
    s = make_state(SEEDS[5], OFFSETS[5])  # a compiled function returns a Python RandomState
    assert isinstance(s, RandomState) and int(s) == WARP_UINTS[5, 0]
    got = [sim.randf(s), draw_in_func(s), draw_in_njit(s), sim.randf(s)]
    np.testing.assert_array_equal(np.array(got, np.float32).view(np.uint32),
                                  WARP_FLOAT_BITS[5, :4])


# --------------------------------------------------------------------------
# Errors


def test_a_plain_uint32_is_not_a_state():
    @numba.njit
    def draw_from_uint(u):
        return sim.randf(u)

    with pytest.raises(numba.core.errors.TypingError, match=r"rand_init\(seed\[, offset\]\)"):
        draw_from_uint(np.uint32(7))
    with pytest.raises(TypeError, match="rand_init"):
        sim.randf(np.uint32(7))
    with pytest.raises(TypeError, match=r"randi\(a random state\) or randi\(a random state, an "
                                        r"int, an int\)"):
        sim.randi(sim.rand_init(1), 3)


def test_rand_init_takes_integers():
    @numba.njit
    def init_from_float(x):
        return sim.randf(sim.rand_init(x))

    with pytest.raises(numba.core.errors.TypingError, match="got float64 for an int"):
        init_from_float(1.5)


def test_wrong_calls_name_the_accepted_calls():
    @numba.njit
    def float_range(low):
        return sim.randi(sim.rand_init(1), low, 10)

    @numba.njit
    def with_keyword():
        return sim.randf(state=sim.rand_init(1))

    errors = numba.core.errors.TypingError
    with pytest.raises(errors, match=r"randi\(RandomState, float64, int64\): expected "
                                     r"randi\(a random state\) or randi\(a random state, an "
                                     r"int, an int\), got float64 for an int"):
        float_range(1.5)
    with pytest.raises(errors, match=r"randf\(\) takes no keyword arguments"):
        with_keyword()
    with pytest.raises(TypeError, match=r"sample_unit_disk\(\): expected "
                                        r"sample_unit_disk\(a random state\)$"):
        sim.sample_unit_disk()
    with pytest.raises(TypeError, match=r"randf\(int, float, float\): expected .*; the state "
                                        r"is made by rand_init"):
        sim.randf(3, 0.0, 1.0)


# --------------------------------------------------------------------------
# CUDA, offline


@sim.kernel
def uniform_draws(seed: int, out: sim.array(dtype=sim.vec3), ints: sim.array(dtype=sim.int32)):
    i = sim.tid()
    s = sim.rand_init(seed, i)
    out[i] = sim.sample_unit_cube(s) * sim.randf(s, -1.0, 1.0) + sim.vec3(sim.randf(s), 0.0, 0.0)
    ints[i] = sim.randi(s, 0, 10) + sim.int32(sim.randu(s) % sim.uint32(7)) + sim.randi(s)


def test_cuda_compiles_float32_only(offline_cuda):
    ptx = draw_kernel.inspect("cuda", "ptx", draw_inputs(), cc=(7, 5))
    # libdevice's sinf/cosf reduce huge arguments in double, but no float32 value is widened
    assert "cvt.f64.f32" not in ptx
    uniform_ptx = uniform_draws.inspect(
        "cuda", "ptx", [1, np.zeros((4, 3), np.float32), np.zeros(4, np.int32)], cc=(7, 5))
    assert ".f64" not in uniform_ptx
    pcg_multiplies = [line for line in uniform_ptx.splitlines() if "747796405" in line]
    assert pcg_multiplies and all(".s32" in line for line in pcg_multiplies)  # 32-bit PCG
    draw_kernel.compile("cuda", draw_inputs(), cc=(7, 5))  # links


def test_state_passing_compiles_for_cuda(offline_cuda):
    """A state passed to device functions, and one returned by one, on CUDA."""
    out = np.zeros((2, 5), np.float32)
    draws_across_calls.compile("cuda", [SEEDS[:2], OFFSETS[:2], out], cc=(7, 5))


# --------------------------------------------------------------------------
# warp-lang itself, when installed


@pytest.fixture(scope="module")
def warp_reference_draws():
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def draws(seeds: wp.array(dtype=wp.int32), offsets: wp.array(dtype=wp.int32),
              use_offset: wp.array(dtype=wp.int32), ints: wp.array2d(dtype=wp.int32),
              uints: wp.array2d(dtype=wp.uint32), floats: wp.array2d(dtype=wp.float32)):
        t = wp.tid()
        s = wp.rand_init(seeds[t])
        if use_offset[t] != 0:
            s = wp.rand_init(seeds[t], offsets[t])
        uints[t, 0] = s
        for k in range(10):
            floats[t, k] = wp.randf(s)
        ints[t, 0] = wp.randi(s)
        ints[t, 1] = wp.randi(s, -5, 17)
        uints[t, 1] = wp.randu(s)
        uints[t, 2] = wp.randu(s, wp.uint32(3), wp.uint32(1000))
        floats[t, 10] = wp.randf(s, -2.0, 3.0)
        floats[t, 11] = wp.randn(s)
        a = wp.sample_unit_sphere(s)
        b = wp.sample_unit_sphere_surface(s)
        c = wp.sample_unit_cube(s)
        d = wp.sample_unit_hemisphere_surface(s)
        e = wp.sample_unit_hemisphere(s)
        for k in range(3):
            floats[t, 12 + k] = a[k]
            floats[t, 15 + k] = b[k]
            floats[t, 18 + k] = c[k]
            floats[t, 21 + k] = d[k]
            floats[t, 24 + k] = e[k]
        f = wp.sample_triangle(s)
        g = wp.sample_unit_ring(s)
        h = wp.sample_unit_disk(s)
        q = wp.sample_unit_square(s)
        for k in range(2):
            floats[t, 27 + k] = f[k]
            floats[t, 29 + k] = g[k]
            floats[t, 31 + k] = h[k]
            floats[t, 33 + k] = q[k]
        uints[t, 3] = s

    outputs = [wp.zeros((CASES, 2), dtype=wp.int32, device="cpu"),
               wp.zeros((CASES, 4), dtype=wp.uint32, device="cpu"),
               wp.zeros((CASES, FLOATS), dtype=wp.float32, device="cpu")]
    inputs = [wp.array(a, device="cpu") for a in (SEEDS, OFFSETS, USE_OFFSET)]
    wp.launch(draws, dim=CASES, inputs=inputs, outputs=outputs, device="cpu")
    return [a.numpy() for a in outputs]


def test_pinned_values_are_warps(warp_reference_draws):
    ints, uints, floats = warp_reference_draws
    np.testing.assert_array_equal(ints, WARP_INTS)
    np.testing.assert_array_equal(uints, WARP_UINTS)
    assert ulp_distance(floats, WARP_FLOAT_BITS.view(np.float32)).max() <= 2


def test_kernel_draws_match_live_warp(cpu_draws, warp_reference_draws):
    ints, uints, floats = warp_reference_draws
    assert_matches_warp(*cpu_draws, ints, uints, floats.view(np.uint32))
