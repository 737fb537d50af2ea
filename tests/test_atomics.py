"""atomic_add/sub/min/max: exact under contention on every core, old values returned,
scalar and value-type arrays, 1-D to 4-D; Python semantics; CUDA offline; emit_atomic."""

import re

import numba
import numpy as np
import pytest
from numba.core import cgutils, types
from numba.core.extending import intrinsic

import numba_sim as sim
from numba_sim.errors import KernelTypingError
from numba_sim.lowering.atomics import emit_atomic

N = 100_000
VALUES = (np.random.default_rng(0).permutation(N) - N // 2).astype(np.int32)
"""One distinct value per thread, in [-N/2, N/2), shuffled."""


@intrinsic
def atomic_add_to_component(typingctx, arr, i, k, value):
    """``arr[i][k] += value`` atomically through emit_atomic (the kernel language's use)."""
    scalar = arr.dtype.dtype
    sig = scalar(arr, types.intp, types.intp, scalar)

    def codegen(context, builder, sig, args):
        array = context.make_array(sig.args[0])(context, builder, args[0])
        element = cgutils.get_item_pointer(context, builder, sig.args[0], array, [args[1]])
        component = builder.gep(element, [context.get_constant(types.int32, 0), args[2]])
        return emit_atomic(context, builder, "add", component, scalar, args[3])

    return sig, codegen


@sim.kernel
def contended_updates(values: sim.array(dtype=sim.int32), i32: sim.array(dtype=sim.int32),
                      u32: sim.array(dtype=sim.uint32), i64: sim.array(dtype=sim.int64),
                      u64: sim.array(dtype=sim.uint64), f32: sim.array(dtype=sim.float32),
                      f64: sim.array(dtype=sim.float64), v3: sim.array(dtype=sim.vec3),
                      v3d: sim.array(dtype=sim.vec3d), grid2: sim.array(dtype=sim.int32, ndim=2),
                      grid4: sim.array(dtype=float, ndim=4), old_i32: sim.array(dtype=sim.int32),
                      old_f64: sim.array(dtype=sim.float64), old_v3: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    v = values[i]
    old_i32[i] = sim.atomic_add(i32, 0, 1)
    sim.atomic_sub(i32, 1, 2)
    sim.atomic_min(i32, 2, v)
    sim.atomic_max(i32, 3, v)
    sim.atomic_add(u32, 0, 1)
    sim.atomic_sub(u32, 1, 1)  # wraps below zero, as uint32 does
    sim.atomic_min(u32, 2, sim.uint32(v + 60000))
    sim.atomic_max(u32, 3, sim.uint32(v + 60000))
    sim.atomic_add(i64, 0, sim.int64(v) * sim.int64(100000))
    sim.atomic_sub(i64, 1, 3)
    sim.atomic_min(i64, 2, sim.int64(v) * sim.int64(100000))
    sim.atomic_max(i64, 3, sim.int64(v) * sim.int64(100000))
    sim.atomic_add(u64, 0, 1)
    sim.atomic_min(u64, 2, sim.uint64(v + 60000) * sim.uint64(100000))
    sim.atomic_max(u64, 3, sim.uint64(v + 60000) * sim.uint64(100000))
    sim.atomic_add(f32, 0, 1.0)
    sim.atomic_sub(f32, 1, 0.5)
    sim.atomic_min(f32, 2, sim.float32(v))
    sim.atomic_max(f32, 3, sim.float32(v))
    old_f64[i] = sim.atomic_add(f64, 0, 0.25)
    sim.atomic_sub(f64, 1, 1)
    sim.atomic_min(f64, 2, sim.float64(v))
    sim.atomic_max(f64, 3, sim.float64(v))
    old_v3[i] = sim.atomic_add(v3, 0, sim.vec3(1.0, 2.0, 3.0))
    w = sim.vec3(sim.float32(v), sim.float32(-v), sim.float32(v) * sim.float32(0.5))
    sim.atomic_min(v3, 1, w)
    sim.atomic_max(v3, 2, w)
    atomic_add_to_component(v3, 3, i % 3, sim.float32(1.0))
    sim.atomic_sub(v3d, 0, sim.vec3d(1.0, 0.5, 0.25))
    sim.atomic_add(grid2, i % 4, i % 3, 1)
    sim.atomic_add(grid4, i % 2, i % 3, i % 5, i % 7, 1.0)


def fresh_arrays():
    return dict(
        values=VALUES, i32=np.zeros(4, np.int32), u32=np.zeros(4, np.uint32),
        i64=np.zeros(4, np.int64), u64=np.zeros(4, np.uint64), f32=np.zeros(4, np.float32),
        f64=np.zeros(4, np.float64), v3=np.zeros((4, 3), np.float32),
        v3d=np.zeros((1, 3), np.float64), grid2=np.zeros((4, 3), np.int32),
        grid4=np.zeros((2, 3, 5, 7), np.float32), old_i32=np.full(N, -1, np.int32),
        old_f64=np.full(N, -1.0), old_v3=np.zeros((N, 3), np.float32))


@pytest.fixture(scope="module")
def updated():
    arrays = fresh_arrays()
    sim.launch(contended_updates, dim=N, inputs=list(arrays.values()))
    return arrays


def test_counts_are_exact_under_contention(updated):
    assert updated["i32"][:2].tolist() == [N, -2 * N]
    assert updated["u32"][:2].tolist() == [N, 2**32 - N]
    assert updated["i64"][1] == -3 * N
    assert updated["u64"][0] == N
    assert updated["f32"][:2].tolist() == [N, -N / 2]
    assert updated["f64"][:2].tolist() == [N / 4, -N]
    np.testing.assert_array_equal(updated["v3"][0], [N, 2 * N, 3 * N])
    np.testing.assert_array_equal(updated["v3d"][0], [-N, -N / 2, -N / 4])
    expected2 = np.zeros((4, 3), np.int64)
    np.add.at(expected2, (np.arange(N) % 4, np.arange(N) % 3), 1)
    np.testing.assert_array_equal(updated["grid2"], expected2)
    expected4 = np.zeros((2, 3, 5, 7))
    i = np.arange(N)
    np.add.at(expected4, (i % 2, i % 3, i % 5, i % 7), 1)
    np.testing.assert_array_equal(updated["grid4"], expected4)
    np.testing.assert_array_equal(updated["v3"][3], [33334, 33333, 33333])  # via emit_atomic


def test_min_and_max(updated):
    lo, hi = int(VALUES.min()), int(VALUES.max())
    assert updated["i32"][2:].tolist() == [min(lo, 0), hi]
    assert updated["u32"][2:].tolist() == [0, hi + 60000]  # the initial 0 is the minimum
    assert updated["i64"][2:].tolist() == [lo * 100000, hi * 100000]
    assert updated["i64"][0] == int(VALUES.astype(np.int64).sum()) * 100000
    assert updated["u64"][2:].tolist() == [0, (hi + 60000) * 100000]
    assert updated["f32"][2:].tolist() == [lo, hi]
    assert updated["f64"][2:].tolist() == [lo, hi]
    np.testing.assert_array_equal(updated["v3"][1], [lo, -hi, lo / 2])
    np.testing.assert_array_equal(updated["v3"][2], [hi, -lo, hi / 2])


def test_old_values_are_returned(updated):
    # every thread saw a distinct old count: together exactly 0 .. N-1
    np.testing.assert_array_equal(np.sort(updated["old_i32"]), np.arange(N))
    np.testing.assert_array_equal(np.sort(updated["old_f64"]), np.arange(N) * 0.25)
    # a vector's old value is assembled from its components' old values, each component
    # updated atomically on its own (other threads may come between two components)
    old = updated["old_v3"]
    for k in range(3):
        np.testing.assert_array_equal(np.sort(old[:, k]), (k + 1) * np.arange(N))


@numba.njit
def one_of_each(i32, u32, i64, u64, f32, f64, v3_storage):
    v3 = sim.view(v3_storage, sim.vec3)
    sim.atomic_add(i32, 0, 1)
    sim.atomic_min(i32, 1, -1)
    sim.atomic_max(u32, 0, 1)
    sim.atomic_min(u32, 1, 1)
    sim.atomic_sub(i64, 0, 1)
    sim.atomic_max(i64, 1, 1)
    sim.atomic_max(u64, 0, 1)
    sim.atomic_add(f32, 0, 1.0)
    sim.atomic_min(f32, 1, -1.0)
    sim.atomic_max(f64, 0, 1.0)
    sim.atomic_sub(f64, 1, 1.0)
    return sim.atomic_max(v3, 0, sim.vec3(1.0, -2.0, 3.0))


def test_cpu_code_has_real_atomics():
    """Checks the instructions, whatever the number of cores of the test machine."""
    arrays = fresh_arrays()
    args = [arrays[k] for k in ("i32", "u32", "i64", "u64", "f32", "f64", "v3")]
    assert one_of_each(*args) == sim.vec3(0.0, 0.0, 0.0)
    assert [a[:2].tolist() for a in args[:6]] == [[1, -1], [1, 0], [-1, 1], [1, 0], [1, -1],
                                                  [1, -1]]
    assert arrays["v3"][0].tolist() == [1.0, 0.0, 3.0]
    # one atomic instruction per scalar update (x86 turns min/max and float forms into
    # compare-and-swap loops before the IR is shown)
    llvm = one_of_each.inspect_llvm(one_of_each.signatures[0])
    assert len(re.findall(r"= (?:atomicrmw|cmpxchg) ", llvm)) == 11 + 3


# --------------------------------------------------------------------------
# Python semantics and typing rules


def test_python_semantics_on_numpy_arrays():
    a = np.array([5, 7], np.int32)
    assert sim.atomic_add(a, 1, 3) == 7 and a.tolist() == [5, 10]
    assert sim.atomic_min(a, 0, -2) == 5 and sim.atomic_max(a, 0, 9) == -2 and a[0] == 9
    assert sim.atomic_sub(a, 0, 1) == 9 and a[0] == 8
    u = np.zeros(1, np.uint32)
    assert sim.atomic_sub(u, 0, 1) == 0 and u[0] == 2**32 - 1
    grid = np.zeros((2, 3), np.float64)
    assert sim.atomic_add(grid, 1, 2, 0.5) == 0.0 and grid[1, 2] == 0.5
    v = np.zeros((2, 3), np.float32)
    old = sim.atomic_add(v, 1, sim.vec3(1.0, 2.0, 3.0))
    assert old == sim.vec3(0.0, 0.0, 0.0) and v[1].tolist() == [1.0, 2.0, 3.0]
    assert sim.atomic_max(v, 1, sim.vec3(0.0, 5.0, 1.0)) == sim.vec3(1.0, 2.0, 3.0)
    assert v[1].tolist() == [1.0, 5.0, 3.0]
    with pytest.raises(TypeError, match="float value for an integer array"):
        sim.atomic_add(a, 0, 1.5)
    with pytest.raises(TypeError, match="shape"):
        sim.atomic_add(v, 0, 1.0)


@numba.njit
def atomic_in_njit(a, i, x):
    return sim.atomic_add(a, i, x)


def test_typing_rules():
    f = np.zeros(2, np.float32)
    assert atomic_in_njit(f, 1, 2) == 0.0 and f[1] == 2.0  # an int value for a float array
    errors = numba.core.errors.TypingError
    with pytest.raises(errors, match=r"float64 value for an array of int32 \(convert it"):
        atomic_in_njit(np.zeros(2, np.int32), 0, 1.5)
    with pytest.raises(errors, match="read-only"):
        readonly = np.zeros(2, np.float32)
        readonly.flags.writeable = False
        atomic_in_njit(readonly, 0, 1.0)
    with pytest.raises(errors, match="2-D array takes 2 integer indices"):
        atomic_in_njit(np.zeros((2, 2), np.float32), 0, 1.0)
    with pytest.raises(errors, match=r"atomic_add\(\) operations only work on arrays with "
                                     r"\[u\]int32, \[u\]int64, float16, bfloat16, float32, or "
                                     r"float64 as the underlying scalar types, but got int16 "
                                     r"\(with scalar type int16\)\n"):
        atomic_in_njit(np.zeros(2, np.int16), 0, 1)


@numba.njit
def exchange_in_njit(a, i, x):
    return sim.atomic_exch(a, i, x)


@numba.njit
def and_in_njit(a, i, x):
    return sim.atomic_and(a, i, x)


@numba.njit
def min_in_njit(a, i, x):
    return sim.atomic_min(a, i, x)


def test_unsupported_scalar_types_get_warps_sentence_per_atomic():
    """Warp 1.19 lists, per atomic, the scalar types it has (builtins.py): 8/16-bit ints have
    none; bitwise atomics take 32/64-bit ints only; numba_sim says so in Warp's words."""
    errors = numba.core.errors.TypingError
    tail = r"as the underlying scalar types, but got {0} \(with scalar type {0}\)\n"
    with pytest.raises(errors, match=r"atomic_min\(\) operations only work on arrays with "
                                     r"\[u\]int32, \[u\]int64, bfloat16, float32, or float64 "
                       + tail.format("uint8")):
        min_in_njit(np.zeros(2, np.uint8), 0, np.uint8(1))
    with pytest.raises(errors, match=r"atomic_exch\(\) operations only work on arrays with "
                                     r"\[u\]int32, \[u\]int64, float32, or float64 "
                       + tail.format("int8")):
        exchange_in_njit(np.zeros(2, np.int8), 0, np.int8(1))
    with pytest.raises(errors, match=r"atomic_and\(\) operations only work on arrays with "
                                     r"\[u\]int32 or \[u\]int64 " + tail.format("float32")):
        and_in_njit(np.zeros(2, np.float32), 0, np.float32(1))
    # float16: Warp's add has it, numba_sim has not: its own message, not Warp's list
    with pytest.raises(errors, match=r"atomic_add\(\) on an array of float16: Warp has "
                                     r"float16 atomics, numba_sim has none"):
        atomic_in_njit(np.zeros(2, np.float16), 0, np.float16(1))
    # the supported ones still work: 64-bit unsigned min, 32-bit and
    u = np.array([5, 7], np.uint64)
    assert min_in_njit(u, 1, np.uint64(3)) == 7 and u[1] == 3
    i = np.array([6, 3], np.int32)
    assert and_in_njit(i, 0, np.int32(3)) == 6 and i[0] == 2


@sim.kernel
def atomic_on_vec3ub(a: sim.array(dtype=sim.vec3ub)):
    sim.atomic_max(a, 0, sim.vec3ub(1))


@sim.kernel
def atomic_on_int16(a: sim.array(dtype=sim.int16)):
    sim.atomic_add(a, 0, sim.int16(1))


def test_a_kernel_error_ends_with_warps_sentence():
    """The kernel's message ends with Warp's sentence (Warp's tests anchor it with ``$``),
    and is a RuntimeError as Warp's."""
    with pytest.raises(RuntimeError) as raised:  # str(): the message, as unittest matches
        sim.launch(atomic_on_int16, dim=1, inputs=[np.zeros(2, np.int16)])
    assert re.search(r"float32, or float64 as the underlying scalar types, but got int16 "
                     r"\(with scalar type int16\)$", str(raised.value))


def test_unsupported_element_types_are_named_as_warp_names_them():
    with pytest.raises(KernelTypingError, match=r"atomic_max\(\) operations only work on arrays "
                                                r".* but got vec3ub \(with scalar type uint8\)"):
        sim.launch(atomic_on_vec3ub, dim=1, inputs=[sim.zeros(2, dtype=sim.vec3ub)])


def test_wrong_calls_say_how_to_call():
    @numba.njit
    def without_index(a):
        return sim.atomic_max(a)

    @numba.njit
    def with_keyword(a):
        return sim.atomic_max(a, 0, value=1.0)

    errors = numba.core.errors.TypingError
    with pytest.raises(errors, match=r"atomic_max\(arr, i\[, j, k, l\], value\): got 1 arguments"):
        without_index(np.zeros(2))
    with pytest.raises(errors, match=r"atomic_max\(\) takes no keyword arguments"):
        with_keyword(np.zeros(2))
    with pytest.raises(TypeError, match=r"atomic_add\(arr, i\[, j, k, l\], value\): got no "):
        sim.atomic_add()
    with pytest.raises(TypeError, match="missing index or value"):
        sim.atomic_add(np.zeros(2), 0)


# --------------------------------------------------------------------------
# CUDA, offline


def test_cuda_compiles_real_atomics(offline_cuda):
    ptx = contended_updates.inspect("cuda", "ptx", list(fresh_arrays().values()), cc=(7, 5))
    atomics = {line.split()[0] for line in ptx.splitlines()
               if line.strip().startswith(("atom.", "red."))}
    # numba-cuda's float min/max are compare-and-swap loops
    for expected in ("add.u32", "min.s32", "max.s32", "min.u32", "max.u32", "add.u64",
                     "min.s64", "max.s64", "min.u64", "max.u64", "add.f32", "add.f64",
                     "cas.b32", "cas.b64"):
        assert any(a.endswith(expected) for a in atomics), (expected, sorted(atomics))
    contended_updates.compile("cuda", list(fresh_arrays().values()), cc=(7, 5))  # links
