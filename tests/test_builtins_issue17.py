"""Issue 17's builtins and kernel forms give Warp's numbers: ``bit_count``, ``frac``,
``copysign``, ``argmin``/``argmax``, ``ddot``, Warp's math helpers (``quat_from_euler``,
``quat_to_rpy``, the twist angles, ``smooth_normalize`` and the norms), ``poisson`` and
``sample_cdf``, the bitwise atomics and ``&= |= ^=`` on array elements, the bitwise operators
of integer vectors, ``sim.types.vector(...)`` called in a kernel and names used without the
module (``vec3(...)``).

Each kernel is written once over a module name ``M`` and run by Warp's CPU backend and by
numba_sim (the Warp half is skipped where Warp is not installed).  The kernels are compiled
once per module (Numba's compile time dominates the suite).
"""

import importlib.util
import sys

import numpy as np
import pytest

import numba_sim as sim

N = 64

SCALAR_KERNEL = '''
@M.kernel
def scalar_kernel(i8: M.array(dtype=M.int8), i16: M.array(dtype=M.int16),
                  u32: M.array(dtype=M.uint32), i64: M.array(dtype=M.int64),
                  u64: M.array(dtype=M.uint64), s: M.array2d(dtype=M.float32),
                  vs: M.array2d(dtype=M.vec3), qs: M.array(dtype=M.quat),
                  ms: M.array2d(dtype=M.mat33), ints: M.array2d(dtype=M.int32),
                  out: M.array2d(dtype=M.float32)):
    i = M.tid()
    a = s[i, 0]
    b = s[i, 1]
    v = vs[i, 0]
    u = vs[i, 1]
    q = qs[i]
    axis = M.normalize(u)
    out[i, 0] = float(M.bit_count(i8[i]))
    out[i, 1] = float(M.bit_count(i16[i]))
    out[i, 2] = float(M.bit_count(u32[i]))
    out[i, 3] = float(M.bit_count(i64[i]))
    out[i, 4] = float(M.bit_count(u64[i]))
    out[i, 5] = M.frac(a)
    out[i, 6] = M.copysign(a, b)
    out[i, 7] = float(M.argmin(v))
    out[i, 8] = float(M.argmax(v))
    out[i, 9] = M.ddot(ms[i, 0], ms[i, 1])
    out[i, 10] = M.quat_to_rpy(q)[0]
    out[i, 11] = M.quat_to_rpy(q)[2]
    out[i, 12] = M.quat_from_euler(v, 0, 1, 2)[1]
    out[i, 13] = M.quat_from_euler(v, 2, 1, 0)[3]
    out[i, 14] = M.quat_to_euler(q, 1, 0, 1)[2]
    out[i, 15] = M.quat_twist_angle(axis, q)
    out[i, 16] = M.quat_twist_angle_signed(axis, q)
    out[i, 17] = M.quat_twist(axis, q)[0]
    out[i, 18] = M.smooth_normalize(v)[1]
    out[i, 19] = M.norm_l1(v)
    out[i, 20] = M.norm_huber(v)
    out[i, 21] = M.norm_pseudo_huber(v, 2.0)
    out[i, 22] = float(M.argmin(M.vec3i(ints[i, 0], ints[i, 1], ints[i, 2])))
    out[i, 23] = float(M.ddot(mat22i(ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3]),
                              mat22i(ints[i, 3], ints[i, 2], ints[i, 1], ints[i, 0])))
'''

RANDOM_KERNEL = '''
@M.kernel
def random_kernel(seed: int, cdf: M.array(dtype=M.float32), out: M.array2d(dtype=M.int32)):
    i = M.tid()
    state = M.rand_init(seed, i)
    out[i, 0] = int(M.poisson(state, 3.0))
    out[i, 1] = int(M.poisson(state, 42.0))
    out[i, 2] = int(M.poisson(state, 0.0))
    out[i, 3] = M.sample_cdf(state, cdf)
    out[i, 4] = int(M.poisson(state, 10.5))
'''

ATOMIC_KERNEL = '''
@M.kernel
def atomic_kernel(words: M.array2d(dtype=M.uint32), bits: M.array(dtype=M.int64),
                  vecs: M.array2d(dtype=M.vec3ui), small: M.array(dtype=M.int16),
                  old: M.array(dtype=M.uint32)):
    i = M.tid()
    mask = M.uint32(1) << M.uint32(i % 32)
    word = i // 32
    words[0, word] &= ~mask
    words[1, word] |= mask
    words[2, word] ^= mask
    M.atomic_and(words, 3, word, ~mask)
    M.atomic_or(words, 4, word, mask)
    old[i] = M.atomic_xor(words, 5, word, mask) & mask
    M.atomic_or(bits, 0, M.int64(1) << M.int64(i % 64))
    vmask = M.vec3ui(M.uint32(1)) << M.vec3ui(M.uint32(i % 32), M.uint32((i + 1) % 32),
                                             M.uint32((i + 2) % 32))
    vecs[0, word] |= vmask
    M.atomic_xor(vecs, 1, word, vmask)
    vecs[2, word] &= ~vmask
    if i == 0:
        small[0] |= M.int16(6)
'''

FORMS_KERNEL = '''
@M.kernel
def forms_kernel(out: M.array(dtype=M.float32)):
    v = vec3(1.0, 2.0, 3.0)
    w = M.types.vector(4.0, 5.0, 6.0)
    z = M.types.vector(length=2, dtype=float)
    m = M.types.matrix(shape=(2, 2), dtype=float)
    out[0] = dot(v, w)
    out[1] = z[1] + m[1, 1]
    expect_eq(v[2], 3.0)
'''

SOURCES = {"scalar_kernel": SCALAR_KERNEL, "random_kernel": RANDOM_KERNEL,
           "atomic_kernel": ATOMIC_KERNEL, "forms_kernel": FORMS_KERNEL}


def _kernels(module_name, tmp_path):
    """The four kernels over the module *module_name*, loaded from a file (both backends
    read the source of their kernels).  ``vec3``, ``dot`` and ``expect_eq`` are not imported:
    both resolve them in their own module (Warp's rule)."""
    header = (f"import {module_name} as M\n"
              f"mat22i = M.types.matrix(shape=(2, 2), dtype=M.int32)\n")
    path = tmp_path / f"{module_name}_issue17_kernels.py"
    path.write_text(header + "".join(SOURCES.values()))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _inputs():
    rng = np.random.default_rng(17)
    ints = {dtype: rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, N, dtype=dtype,
                                endpoint=True)
            for dtype in (np.int8, np.int16, np.uint32, np.int64, np.uint64)}
    s = rng.uniform(-4, 4, (N, 2)).astype(np.float32)
    s[:6, 0] = [2.5, -2.5, -0.0, np.inf, np.nan, 7.0]
    s[:6, 1] = [-0.0, 0.0, -1.0, 1.0, -2.0, np.nan]
    vs = rng.normal(size=(N, 2, 3)).astype(np.float32)
    vs[0, 0] = [np.nan, 2.0, 1.0]
    vs[1, 0] = [np.nan, np.nan, np.nan]
    vs[2, 0] = [1.0, 1.0, 0.5]
    vs[3, 0] = [0.0, 0.0, 0.0]
    qs = rng.normal(size=(N, 4))
    qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).astype(np.float32)
    ms = rng.normal(size=(N, 2, 3, 3)).astype(np.float32)
    small_ints = rng.integers(-50, 50, (N, 4)).astype(np.int32)
    small_ints[0] = [3, 3, 1, 1]
    return ints, s, vs, qs, ms, small_ints


def _run(backend, kernels, device="cpu"):
    M = backend
    ints, s, vs, qs, ms, small_ints = _inputs()
    arrays = [M.array(ints[t], dtype=d, device=device) for t, d in (
        (np.int8, M.int8), (np.int16, M.int16), (np.uint32, M.uint32), (np.int64, M.int64),
        (np.uint64, M.uint64))]
    out = M.zeros((N, 24), dtype=M.float32, device=device)
    M.launch(kernels.scalar_kernel, dim=N, inputs=[
        *arrays, M.array(s, dtype=M.float32, device=device),
        M.array(vs, dtype=M.vec3, device=device), M.array(qs, dtype=M.quat, device=device),
        M.array(ms, dtype=M.mat33, device=device),
        M.array(small_ints, dtype=M.int32, device=device), out], device=device)

    cdf = np.cumsum(np.arange(1, 11, dtype=np.float32))
    cdf /= cdf[-1]
    draws = M.zeros((N, 5), dtype=M.int32, device=device)
    M.launch(kernels.random_kernel, dim=N, inputs=[
        7, M.array(cdf, dtype=M.float32, device=device), draws], device=device)

    threads = 96
    words = M.array(np.full((6, 3), 0x5A5A5A5A, dtype=np.uint32), dtype=M.uint32, device=device)
    bits = M.zeros(1, dtype=M.int64, device=device)
    vecs = M.array(np.full((3, 3, 3), 0xF0F0F0F0, dtype=np.uint32), dtype=M.vec3ui,
                   device=device)
    small = M.array(np.array([9], dtype=np.int16), dtype=M.int16, device=device)
    old = M.zeros(threads, dtype=M.uint32, device=device)
    M.launch(kernels.atomic_kernel, dim=threads, inputs=[words, bits, vecs, small, old],
             device=device)

    forms = M.zeros(2, dtype=M.float32, device=device)
    M.launch(kernels.forms_kernel, dim=1, inputs=[forms], device=device)
    results = [out, draws, words, bits, vecs, small, old, forms]
    return [r.numpy() if hasattr(r, "numpy") else sim.to_numpy(r) for r in results]


@pytest.fixture(scope="module")
def numba_sim_results(tmp_path_factory):
    return _run(sim, _kernels("numba_sim", tmp_path_factory.mktemp("sim")))


@pytest.fixture(scope="module")
def warp_results(tmp_path_factory):
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    return _run(wp, _kernels("warp", tmp_path_factory.mktemp("wp")))


def _same(a, b):
    return (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))


def test_scalar_builtins_match_warp(numba_sim_results, warp_results):
    got, expected = numba_sim_results[0], warp_results[0]
    exact = [0, 1, 2, 3, 4, 5, 6, 7, 8, 22, 23]
    for k in exact:
        assert _same(got[:, k], expected[:, k]).all(), (k, got[:8, k], expected[:8, k])
    # ddot: one fused multiply-add per step, as Warp; the quaternion helpers call libm
    np.testing.assert_allclose(got[:, 9:22], expected[:, 9:22], rtol=2e-6, atol=2e-6)


def test_scalar_builtins_by_hand(numba_sim_results):
    out = numba_sim_results[0]
    ints, s, vs, _, ms, small_ints = _inputs()
    counts = [[bin(int(x) & ((1 << (8 * np.dtype(t).itemsize)) - 1)).count("1") for x in ints[t]]
              for t in (np.int8, np.int16, np.uint32, np.int64, np.uint64)]
    np.testing.assert_array_equal(out[:, :5], np.array(counts).T)
    with np.errstate(invalid="ignore"):  # inf - trunc(inf) is NaN, as in Warp
        np.testing.assert_array_equal(out[:, 5], s[:, 0] - np.trunc(s[:, 0]))
    assert out[0, 5] == 0.5 and out[1, 5] == -0.5 and np.isnan(out[3, 5])
    np.testing.assert_array_equal(np.signbit(out[:, 6]), np.signbit(s[:, 1]))
    assert list(out[:4, 7]) == [2, 0, 2, 0] and list(out[:4, 8]) == [1, 0, 0, 0]
    np.testing.assert_allclose(out[:, 9], np.einsum("nij,nij->n", ms[:, 0], ms[:, 1]),
                               rtol=1e-5, atol=1e-5)
    assert out[0, 22] == 2 and out[0, 23] == 3 * 1 + 3 * 1 + 1 * 3 + 1 * 3


def test_poisson_and_sample_cdf_match_warp(numba_sim_results, warp_results):
    got, expected = numba_sim_results[1], warp_results[1]
    np.testing.assert_array_equal(got, expected)
    assert (got[:, 2] == 0).all() and got[:, 3].min() >= 0 and got[:, 3].max() <= 9


def test_bitwise_atomics_and_augmented_assignment_match_warp(numba_sim_results, warp_results):
    for got, expected in zip(numba_sim_results[2:7], warp_results[2:7]):
        np.testing.assert_array_equal(got, expected)
    words, bits, vecs, small, old = numba_sim_results[2:7]
    start = 0x5A5A5A5A
    assert (words[0] == 0).all() and (words[1] == 0xFFFFFFFF).all()
    assert (words[2] == start ^ 0xFFFFFFFF).all() and (words[3] == 0).all()
    assert bits[0] == -1 and small[0] == 15
    assert (vecs[0] == 0xFFFFFFFF).all() and (vecs[2] == 0).all()
    np.testing.assert_array_equal(old[:32] != 0, ((start >> np.arange(32)) & 1) != 0)


def test_type_factories_and_package_names_in_kernels(numba_sim_results, warp_results):
    np.testing.assert_array_equal(numba_sim_results[7], warp_results[7])
    np.testing.assert_array_equal(numba_sim_results[7], [32.0, 0.0])


def test_python_mode_of_the_new_builtins():
    assert sim.bit_count(sim.int8(-1)) == 8 and sim.bit_count(sim.uint64(2**64 - 1)) == 64
    assert sim.frac(sim.float32(-2.25)) == sim.float32(-0.25)
    assert sim.argmin(sim.vec3(3.0, 1.0, 2.0)) == 1 and sim.argmax(sim.vec3i(1, 5, 5)) == 1
    assert sim.ddot(sim.mat22(1.0, 2.0, 3.0, 4.0), sim.mat22(1.0, 1.0, 1.0, 1.0)) == 10.0
    rpy = sim.quat_to_rpy(sim.quat_rpy(sim.float32(0.1), sim.float32(0.2), sim.float32(0.3)))
    np.testing.assert_allclose(list(rpy), [0.1, 0.2, 0.3], rtol=1e-6)


def test_bad_input_is_rejected_with_the_parameter_named():
    with pytest.raises(TypeError, match="bit_count takes integers"):
        sim.bit_count(sim.float32(1.0))
    with pytest.raises(TypeError, match="bitwise atomics take arrays of integers"):
        sim.atomic_or(np.zeros(2, np.float32), 0, 1)
    with pytest.raises(TypeError, match="expected a 1-D float32 array for the cdf"):
        sim.sample_cdf(sim.rand_init(1), np.zeros(3, np.float64))
