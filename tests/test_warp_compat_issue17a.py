"""Issue 17 (Warp's ported tests): kernel-language and host features found missing by them.

Slice assignment of values (``v[1:] = ...``, ``m[:, 1] += ...``), ``vec % vec``, typed
constructors' ``shape=`` / ``length=`` / ``dtype=`` keywords, Warp's sentences for bad
constructor calls at the end of the error (Warp's tests anchor them with ``$``), printf's
argument limit, release-mode asserts, a random state loaded from an array, ``uint32(rand_init())``,
``empty(n=...)``, ``constant`` of a non-value, ``from_numpy`` with ``shape=``, and launch
arguments Warp rejects (a scalar for a vector parameter, None for a struct).
"""

import re

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.errors import KernelTypingError

vec2 = sim.types.vector(2, float)
mat32 = sim.types.matrix((3, 2), float)
mat32d = sim.types.matrix((3, 2), sim.float64)


# --------------------------------------------------------------------------
# Slice assignment and vec % vec (one kernel, compiled once)


@sim.kernel
def slice_assignments(vecs: sim.array(dtype=sim.vec4), mats: sim.array(dtype=sim.mat44),
                      quats: sim.array(dtype=sim.quat), xforms: sim.array(dtype=sim.transform),
                      flat: sim.array(dtype=float)):
    v = sim.vec4(1.0, 2.0, 3.0, 4.0)
    v[1:] = sim.vec3(5.0, 6.0, 7.0)
    v[::-2] += vec2(10.0, 20.0)  # positions 3 and 1
    vecs[0] = v
    w = sim.vec4(7.0, 8.0, -9.0, 10.0)
    w[:] %= sim.vec4(4.0, 3.0, 4.0, 3.0)
    vecs[1] = w
    m = sim.mat44()
    m[:, 1] = sim.vec4(1.0, 2.0, 3.0, 4.0)
    m[1:, 2:] = mat32(9.0)
    m[3, 1:] += sim.vec3(1.0, 1.0, 1.0)
    mats[0] = m
    q = sim.quat(1.0, 2.0, 3.0, 4.0)
    q[:2] = vec2(8.0, 9.0)
    quats[0] = q
    t = sim.transform_identity()
    t[:3] = sim.vec3(1.0, 2.0, 3.0)
    xforms[0] = t
    flat[1:3] = 5.0  # arrays keep NumPy's slice assignment


@pytest.fixture(scope="module")
def sliced():
    out = (np.zeros((2, 4), np.float32), np.zeros((1, 4, 4), np.float32),
           np.zeros((1, 4), np.float32), np.zeros((1, 7), np.float32), np.zeros(4, np.float32))
    sim.launch(slice_assignments, dim=1, inputs=list(out))
    return out


def test_vector_slices_are_assigned_and_updated_in_place(sliced):
    np.testing.assert_array_equal(sliced[0][0], [1.0, 25.0, 6.0, 17.0])


def test_vector_modulo_is_componentwise_as_warps_mod(sliced):
    np.testing.assert_array_equal(sliced[0][1], [3.0, 2.0, -1.0, 1.0])  # fmod: sign of a
    assert sim.vec3i(5, 7, -9) % sim.vec3i(3, 4, 4) == sim.vec3i(2, 3, -1)


def test_matrix_quat_transform_and_array_slices(sliced):
    expected = np.zeros((4, 4), np.float32)
    expected[:, 1] = [1, 2, 3, 4]
    expected[1:, 2:] = 9
    expected[3, 1:] += 1
    np.testing.assert_array_equal(sliced[1][0], expected)
    np.testing.assert_array_equal(sliced[2][0], [8.0, 9.0, 3.0, 4.0])
    np.testing.assert_array_equal(sliced[3][0], [1, 2, 3, 0, 0, 0, 1])
    np.testing.assert_array_equal(sliced[4], [0, 5, 5, 0])


@sim.kernel
def stores_a_vec3d_slice(out: sim.array(dtype=sim.vec4)):
    v = sim.vec4(1.0, 2.0, 3.0, 4.0)
    v[1:] = sim.vec3d(5.0, 6.0, 7.0)
    out[0] = v


@sim.kernel
def stores_a_scalar_slice(out: sim.array(dtype=sim.vec4)):
    v = sim.vec4(1.0, 2.0, 3.0, 4.0)
    v[1:] = sim.float64(5.0)
    out[0] = v


@sim.kernel
def stores_a_short_slice(out: sim.array(dtype=sim.vec4)):
    v = sim.vec4(1.0, 2.0, 3.0, 4.0)
    v[1:] = sim.vec2(5.0, 6.0)
    out[0] = v


@pytest.mark.parametrize("kernel, message", [
    (stores_a_vec3d_slice,
     r"The provided vector is expected to be of length 3 with dtype float32\.$"),
    (stores_a_scalar_slice,
     r"The provided value is expected to be a vector of length 3, with dtype float32\.$"),
    (stores_a_short_slice,
     r"The length of the provided vector \(2\) isn't compatible with the given slice "
     r"\(expected 3\)\.$"),
], ids=lambda x: getattr(x, "__name__", "message"))
def test_slice_assignment_errors_are_warps_sentences(kernel, message):
    with pytest.raises(ValueError) as info:  # KernelTypingError is Warp's ValueError too
        sim.launch(kernel, dim=1, inputs=[np.zeros((1, 4), np.float32)])
    assert re.search(message, str(info.value)), str(info.value)  # $: the message ends it


# --------------------------------------------------------------------------
# Typed constructors take Warp's keywords when they say what the type says


@sim.kernel
def typed_keywords(out: sim.array(dtype=mat32d), vecs: sim.array(dtype=sim.vec3)):
    c = mat32d(2.0)
    out[0] = mat32d(c, shape=(3, 2), dtype=sim.float64)
    vecs[0] = sim.vec3(1.0, length=3)


def test_typed_constructor_keywords_in_kernels_and_python():
    out, vecs = np.zeros((1, 3, 2)), np.zeros((1, 3), np.float32)
    sim.launch(typed_keywords, dim=1, inputs=[out, vecs])
    np.testing.assert_array_equal(out[0], np.full((3, 2), 2.0))
    np.testing.assert_array_equal(vecs[0], [1, 1, 1])
    assert mat32d(1.0, shape=(3, 2)) == mat32d(1.0)
    with pytest.raises(TypeError, match="Remove the extraneous `shape` parameter"):
        mat32d(1.0, shape=(2, 2))


def test_typed_constructor_keyword_that_disagrees_is_an_error_at_the_line():
    @sim.kernel
    def disagrees(out: sim.array(dtype=mat32d)):
        out[0] = mat32d(1.0, shape=(2, 3))

    with pytest.raises(SyntaxError, match=r"a mat32d has shape \(3, 2\)"):
        sim.launch(disagrees, dim=1, inputs=[np.zeros((1, 3, 2))])


# --------------------------------------------------------------------------
# Errors: the message is the last line, in Warp's words where it says the same


@sim.kernel
def zeros_of_no_length():
    sim.types.vector()


@sim.kernel
def matrix_of_no_shape():
    sim.types.matrix(1.0, 2.0, 3.0)


@sim.kernel
def two_values_for_five():
    sim.types.vector(1.0, 2.0, length=5)


@sim.kernel
def three_values_for_four():
    sim.mat22(1.0, 2.0, 3.0)


@sim.kernel
def vec3_of_a_vec2():
    sim.vec3(sim.vec2(1.0, 2.0))


@sim.kernel
def mat33_of_a_mat22():
    sim.mat33(sim.mat22())


@sim.kernel
def transform_of_two():
    sim.transform(1.0, 2.0)


@sim.kernel
def vector_of_mixed_types():
    sim.types.vector(1.0, 2)


@sim.kernel
def expects_different_types():
    sim.expect_eq(sim.vec3(), sim.vec2())


@pytest.mark.parametrize("kernel, message", [
    (zeros_of_no_length,
     "the `length` argument must be specified when zero-initializing a vector$"),
    (matrix_of_no_shape,
     "the `shape` argument must be specified when initializing a matrix by value$"),
    (two_values_for_five,
     r"incompatible number of values given \(2\) when constructing a vector of length 5$"),
    (three_values_for_four,
     r"incompatible number of values given \(3\) when constructing a matrix of shape \(2, 2\)$"),
    (vec3_of_a_vec2,
     "incompatible vector of length 3 given when copy constructing a vector of length 2$"),
    (mat33_of_a_mat22, r"incompatible matrix of shape \(3, 3\) given when copy "
                       r"constructing a matrix of shape \(2, 2\)$"),
    (transform_of_two, r"incompatible number of values given \(2\) when constructing "
                       r"a transform; expected 0, 1, or 7$"),
    (vector_of_mixed_types,
     "all values given when constructing a vector must have the same type$"),
    (expects_different_types, "Can't test equality for objects with different types$"),
], ids=lambda x: getattr(x, "__name__", "message"))
def test_constructor_errors_end_with_warps_sentence(kernel, message):
    with pytest.raises(KernelTypingError) as info:
        sim.launch(kernel, dim=1, inputs=[])
    # (pytest's match= also reads the exception's notes: the hint at Numba's full text)
    assert re.search(message, str(info.value)), str(info.value)
    lines = str(info.value).splitlines()
    assert lines[-1].startswith(f"kernel {kernel.__name__}: ") and len(lines) <= 8
    assert lines[0].startswith(f'File "{__file__}", line ')


def test_printf_takes_at_most_32_values():
    @sim.kernel
    def prints_33():
        sim.printf("%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d\n",
                   0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                   19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32)

    message = "the maximum number of variadic arguments that can be passed to `printf` is 32$"
    with pytest.raises(KernelTypingError) as info:
        sim.launch(prints_33, dim=1, inputs=[])
    assert re.search(message, str(info.value)), str(info.value)
    with pytest.raises(TypeError, match=message):
        sim.printf("%d" * 33, *range(33))


# --------------------------------------------------------------------------
# Asserts: compiled out of release kernels, as in Warp; checked in debug mode


@sim.kernel
def asserts_ones(a: sim.array(dtype=int)):
    i = sim.tid()
    assert a[i] == 1, "must be 1"
    a[i] = 5


def test_assert_is_dropped_in_release_and_raised_in_debug(monkeypatch):
    values = np.zeros(2, np.int32)
    sim.launch(asserts_ones, dim=2, inputs=[values])
    np.testing.assert_array_equal(values, [5, 5])
    monkeypatch.setattr(sim.config, "mode", "debug")
    with pytest.raises(AssertionError, match="must be 1"):
        sim.launch(asserts_ones, dim=2, inputs=[np.zeros(2, np.int32)])


# --------------------------------------------------------------------------
# Random states: an array element is copied into a state; uint32(rand_init()) is the state


@sim.kernel
def draws_from_stored_states(states: sim.array(dtype=sim.uint32), out: sim.array(dtype=float),
                             again: sim.array(dtype=float), local: sim.array(dtype=float)):
    i = sim.tid()
    out[i] = sim.randf(states[i])
    again[i] = sim.randf(states[i])  # the element was not advanced: the same draw
    s = sim.uint32(sim.rand_init(7, i))
    first = sim.randf(s)
    local[i] = sim.randf(s) - first  # s advanced in place between the draws


def test_states_loaded_from_arrays_and_cast_states():
    states = np.array([962669792, 1029222154], np.uint32)
    out, again, local = (np.zeros(2, np.float32) for _ in range(3))
    sim.launch(draws_from_stored_states, dim=2, inputs=[states, out, again, local])
    expected = [sim.randf(sim.typing.random_state.RandomState(s)) for s in states]
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(again, out)
    np.testing.assert_array_equal(states, [962669792, 1029222154])
    for i in range(2):
        state = sim.rand_init(7, i)
        first = sim.randf(state)
        assert local[i] == np.float32(sim.randf(state) - first)


# --------------------------------------------------------------------------
# Host spellings


def test_empty_takes_warps_older_n_keyword_and_no_shape():
    assert sim.empty(n=3, dtype=sim.vec3).shape == (3, 3)
    assert sim.zeros().shape == (0,) and sim.ones(n=2).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="not both"):
        sim.empty(3, n=3)


def test_constant_takes_values_only():
    assert sim.constant(sim.int16(3)) == 3 and sim.constant(True) is True
    with pytest.raises(TypeError, match=r"Invalid constant type: <class 'tuple'>$"):
        sim.constant((1, 2, 3))


def test_from_numpy_is_warps_array_of_the_data():
    flat = np.array([1.0, 2.0, 3.0], np.float32)
    one = sim.from_numpy(flat, dtype=sim.vec3)
    assert one.shape == (1, 3) and not np.shares_memory(one, flat)
    grid = sim.from_numpy(np.arange(6.0).reshape(2, 3), dtype=sim.float32, shape=(6,))
    assert grid.shape == (6,) and grid.dtype == np.float32


@sim.struct
class Params:
    scale: float


@sim.kernel
def takes_a_vec3(v: sim.vec3, out: sim.array(dtype=sim.vec3)):
    out[0] = v


@sim.kernel
def takes_params(p: Params, out: sim.array(dtype=float)):
    out[0] = p.scale


def test_launch_rejects_what_warp_rejects():
    out = np.zeros((1, 3), np.float32)
    for value in (123, 1.5, sim.float32(1.5)):
        with pytest.raises(RuntimeError, match="argument 'v' expects vec3f but got a single value"):
            sim.launch(takes_a_vec3, dim=1, inputs=[value, out])
    with pytest.raises(ValueError, match="Failed to convert argument for param v to vec3f"):
        sim.launch(takes_a_vec3, dim=1, inputs=[None, out])
    sim.launch(takes_a_vec3, dim=1, inputs=[(1.0, 2.0, 3.0), out])  # containers convert
    np.testing.assert_array_equal(out[0], [1, 2, 3])
    with pytest.raises(RuntimeError, match="argument 'p' expects Params but got None"):
        sim.launch(takes_params, dim=1, inputs=[None, np.zeros(1, np.float32)])


def test_cuda_supported_archs_are_nvrtcs_list():
    archs = sim.get_cuda_supported_archs()
    assert archs == sorted(archs) and all(type(arch) is int for arch in archs)
    try:
        from numba.cuda.cudadrv import nvrtc

        expected = sorted(10 * major + minor for major, minor in nvrtc.get_supported_ccs())
    except Exception:  # noqa: BLE001 (no NVRTC here)
        expected = []
    assert archs == expected


def test_slices_and_stored_states_compile_for_cuda_offline(sliced):
    assert slice_assignments.compile("cuda", list(sliced), cc=(7, 5)) is not None
    states = np.zeros(2, np.uint32)
    floats = [np.zeros(2, np.float32) for _ in range(3)]
    assert draws_from_stored_states.compile("cuda", [states, *floats], cc=(7, 5)) is not None


@sim.func
def sets_a_tail(v: sim.vec4, tail: sim.vec3):
    v[1:] = tail
    v[:2] += vec2(1.0, 1.0)
    return v


def test_slice_assignment_in_a_func_run_as_python():
    assert sets_a_tail(sim.vec4(1.0, 2.0, 3.0, 4.0), sim.vec3(5.0, 6.0, 7.0)) == \
        sim.vec4(2.0, 6.0, 6.0, 7.0)


# --------------------------------------------------------------------------
# capture_while / capture_if


@sim.kernel
def count_down(counter: sim.array(dtype=sim.int32), out: sim.array(dtype=sim.int32)):
    sim.atomic_sub(counter, 0, 1)
    sim.atomic_add(out, 0, 1)


def test_capture_while_runs_now_or_loops_at_each_replay():
    counter, out = np.array([3], np.int32), np.zeros(1, np.int32)

    def body(n):
        sim.launch(count_down, dim=n, inputs=[counter, out])

    sim.capture_while(counter, while_body=body, n=1)  # no capture: runs now
    assert out[0] == 3 and counter[0] == 0
    out[0] = 0
    counter[0] = 2
    with sim.ScopedCapture(device="cpu") as capture:
        sim.capture_while(counter, while_body=body, n=1)
    assert out[0] == 0 and counter[0] == 2  # recorded, not run
    for start in (2, 4):
        counter[0], out[0] = start, 0
        sim.capture_launch(capture.graph)
        assert out[0] == start and counter[0] == 0


def test_capture_if_chooses_a_branch_now_or_at_each_replay():
    flag, out = np.array([1], np.int32), np.zeros(1, np.int32)

    def on_true(value):
        out[0] += value

    sim.capture_if(flag, on_true=on_true, on_false=None, value=5)
    assert out[0] == 5
    counter = np.array([0], np.int32)
    with sim.ScopedCapture(device="cpu") as capture:
        sim.capture_if(flag, on_true=lambda: sim.launch(count_down, dim=1, inputs=[counter, out]))
    assert out[0] == 5
    sim.capture_launch(capture.graph)
    assert out[0] == 6 and counter[0] == -1
    flag[0] = 0
    sim.capture_launch(capture.graph)
    assert out[0] == 6
    with pytest.raises(TypeError, match="int32 with a single element"):
        sim.capture_while(np.zeros(1, np.float32), while_body=lambda: None)


@sim.kernel
def stores_a_vec3_into_a_component(y: sim.array(dtype=sim.vec3), src: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    y[i].y = src[i]


def test_a_value_that_does_not_fit_a_component_is_warps_type_error():
    vecs = np.zeros((1, 3), np.float32)
    with pytest.raises(TypeError) as info:
        sim.launch(stores_a_vec3_into_a_component, dim=1, inputs=[vecs, vecs])
    assert str(info.value).endswith(
        "Composite slot assignment expects value of type float32, got vec3f"), str(info.value)


@sim.kernel
def draws_from_a_tuple_of_states(out: sim.array(dtype=float)):
    s = sim.rand_init(3)
    pair = (s, s)
    a = sim.randf(pair[0])  # a state in a tuple stays the state: the draw advances s
    out[0] = sim.randf(s) - a


def test_a_state_taken_from_a_tuple_is_still_advanced_in_place():
    out = np.zeros(1, np.float32)
    sim.launch(draws_from_a_tuple_of_states, dim=1, inputs=[out])
    state = sim.rand_init(3)
    first = sim.randf(state)
    assert out[0] == np.float32(sim.randf(state) - first) and out[0] != 0
