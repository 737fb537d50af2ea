"""Value types as Python values behave as Warp's (issue 17): construction from sequences,
slicing, in-place assignment, integer wrap-around, printing, bool components, empty
vectors, and the error messages Warp's own tests match.  Warp itself is the reference
where it is installed; one module-scoped kernel checks the same forms compiled."""

import ctypes

import numpy as np
import pytest

import numba_sim as sim

wp = pytest.importorskip("warp")
wp.config.quiet = True

vec3bool = sim.types.vector(3, dtype=bool)
mat22bool = sim.types.matrix((2, 2), dtype=sim.bool)
mat23 = sim.types.matrix((2, 3), float)


@pytest.mark.parametrize("make", [
    lambda m: m.vec3((1, 2, 3)), lambda m: m.vec3([1, 2, 3]),
    lambda m: m.vec3(np.array([1, 2, 3])), lambda m: m.vec3i(7),
    lambda m: m.mat22(((1, 2), (3, 4))), lambda m: m.mat22(np.eye(2)),
    lambda m: m.mat22((1, 2), (3, 4)), lambda m: m.vec3ub(-2, 300, 1),
    lambda m: m.vec3b(200), lambda m: m.vec2ul(-1, 5),
    lambda m: m.transformf((1.0, 2.0, 3.0), (0.0, 0.0, 0.0, 1.0)),
    lambda m: m.transformd(p=(1, 2, 3)), lambda m: m.quatd(0.5, 0.5, 0.5, 0.5),
], ids=lambda f: "")
def test_construction_matches_warp(make):
    ours, theirs = make(sim), make(wp)
    np.testing.assert_array_equal(np.asarray(ours).reshape(-1), np.array(theirs).reshape(-1))
    assert str(ours) == str(theirs)
    if not hasattr(theirs, "get_row"):  # Warp prints matrices with object's repr
        assert repr(ours) == repr(theirs)


def test_slices_and_rows_match_warp():
    data = [float(x) for x in range(1, 10)]
    ours, theirs = sim.mat33(*data), wp.mat33(*data)
    for key in [0, -1, (1, 2), (-1, 0)]:
        assert np.all(np.asarray(ours[key]) == np.asarray(theirs[key])), key
    v, w = sim.vec4(1, 2, 3, 4), wp.vec4(1, 2, 3, 4)
    for key in [slice(1, None), slice(None, None, -1), slice(None, None, 2), slice(5, None),
                slice(1, None, -2), slice(-123, 123)]:
        assert list(v[key]) == list(w[key]), key
        assert type(v[key]).spec.length == len(w[key])
    assert type(v[1:]) is sim.vec3 and type(ours[0]) is sim.vec3 and len(v[5:]) == 0
    np.testing.assert_array_equal(np.asarray(ours[1:]), [[4, 5, 6], [7, 8, 9]])
    np.testing.assert_array_equal(np.asarray(ours[:, 1]), [2, 5, 8])
    np.testing.assert_array_equal(np.asarray(ours.get_col(-1)), [3, 6, 9])


def test_assignment_in_place():
    v = sim.vec4(1, 2, 3, 4)
    v[0] = 5
    v.y = 6
    v[2:] = (7, 8)
    assert v == (5, 6, 7, 8) and v.x == 5
    v[::2] = 0
    assert v == [0, 6, 0, 8]
    m = mat23(1, 2, 3, 4, 5, 6)
    row = m[0]
    row[1] = 100  # a row is a copy, as Warp's
    m[0, 1] = 9
    m[1] = (10, 11, 12)
    m.set_col(0, -1)
    m.set_row(-1, sim.vec3(7, 8, 9))
    assert tuple(map(tuple, np.asarray(m).tolist())) == ((-1, 9, 3), (7, 8, 9))
    t = sim.transform()
    t.p = (1, 2, 3)
    assert tuple(t) == (1, 2, 3, 0, 0, 0, 1)
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)


def test_integers_wrap_as_warp():
    values = (-1234567890, -1234567890)
    for name in ("vec2b", "vec2s", "vec2i", "vec2l", "vec2ub", "vec2us", "vec2ui", "vec2ul"):
        ours = getattr(sim, name)(*values)
        assert list(ours) == list(getattr(wp, name)(*values)), name
        ours[0] = 300
        theirs = getattr(wp, name)(*values)
        theirs[0] = 300
        assert list(ours) == list(theirs), name


def test_operators_python_mode():
    assert sim.vec3(1, 2, 3) % sim.vec3(2, 2, 2) == (1, 0, 1)
    assert sim.vec3i(7, -7, 8) % sim.vec3i(3, 3, 3) == list(wp.vec3i(7, -7, 8) % wp.vec3i(3, 3, 3))
    assert np.float32(24) / sim.mat22(1, 2, 3, 4) == ((24, 12), (8, 6))
    assert sim.vec3(0, 0, 0) != sim.vec2(0, 0) and sim.vec2(1, 2) == sim.vec2d(1, 2)
    assert sim.mat22(1, 2, 3, 4) == ((1, 2), (3, 4)) and sim.vec2(1, 2) != "ab"


def test_bool_and_empty_types():
    assert tuple(vec3bool()) == (False, False, False) and tuple(vec3bool(True)) == (True,) * 3
    assert tuple(vec3bool(True, False, True)) == (True, False, True)
    assert tuple(mat22bool(True, False, True, False)) == ((True, False), (True, False))
    assert vec3bool is sim.types.vector(3, sim.bool) and np.asarray(vec3bool()).dtype == np.bool_
    assert len(sim.types.vector(0, float)()) == 0
    assert sim.types.matrix((0, 3), float)().spec.size == 0
    with pytest.raises(TypeError, match="length must be an int >= 0, not -1"):
        sim.types.vector(-1, float)


def test_from_ptr_and_types_equal():
    data = np.array([1.5, 2.5, 3.5], dtype=np.float32)
    assert sim.vec3.from_ptr(data.ctypes.data) == (1.5, 2.5, 3.5)
    assert sim.mat22d.from_ptr(ctypes.addressof((ctypes.c_double * 4)(1, 2, 3, 4))) \
        == ((1, 2), (3, 4))
    assert sim.types.types_equal(type(sim.transform_identity()), sim.transformf)
    assert sim.types.types_equal(sim.types.vector(3, float), sim.vec3)
    assert sim.types.types_equal(float, sim.float32) and not sim.types.types_equal(sim.vec3,
                                                                                 sim.vec3d)


@pytest.mark.parametrize("call, error, message", [
    (lambda: sim.vec3(1, 2), ValueError,
     r"vec3\(\) takes .* 3 scalars\. Invalid number of arguments in vector constructor, "
     r"expected 3 elements, got 2$"),
    (lambda: sim.mat22(1, 2, 3), ValueError,
     r"Invalid number of arguments in matrix constructor, expected 4 elements, got 3$"),
    (lambda: sim.mat22((1, 2, 3), (3, 4, 5)), TypeError,
     r"Invalid argument in matrix constructor, expected row of length 2, got \(1, 2, 3\)$"),
    (lambda: sim.vec3.from_ptr(0), RuntimeError, "NULL pointer exception"),
    (lambda: sim.vec3(1, 2, 3)[None], KeyError, "Invalid key None, expected int or slice"),
    (lambda: sim.mat22()[None], KeyError, "Invalid key None, expected int or pair of ints"),
    (lambda: sim.mat22()[0, 1, 2], KeyError, "Invalid key, expected one or two indices, got 3"),
    (lambda: sim.mat22().set_row(2, (0, 0)), IndexError, r"Invalid row index$"),
    (lambda: sim.vec3(1, 2, 3)[3], IndexError, "index 3 is out of range for vec3"),
    (lambda: sim.vec3(1, 2, 3).foo, AttributeError, r"'vec3f' object has no attribute 'foo'$"),
    (lambda: setattr(sim.vec3(), "xy", 1), AttributeError, r"no attribute 'xy'$"),
    (lambda: sim.vec3i().__setitem__(0, "123.0"), TypeError,
     r"Expected to assign a `int32` value but got `str` instead"),
    (lambda: sim.vec3i().__setitem__(slice(None, 1), (sim.vec3i(),)), TypeError,
     r"Expected to assign a slice from a sequence of `int32` values but got `vec3i` instead"),
    (lambda: sim.vec3i().__setitem__(slice(None, 1), (1, 2)), ValueError,
     r"Can only assign sequence of same size"),
    (lambda: sim.vec3(**{"p": 1}), TypeError, "no keyword arguments except a transform's"),
])
def test_errors_in_warps_words(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --------------------------------------------------------------------------
# compiled: one kernel for the kernel-side forms


@sim.func
def _compiled_forms(out: sim.array(dtype=float), flags: sim.array(dtype=mat22bool)):
    v = sim.vec4(1.0, 2.0, 3.0, 4.0)
    m = sim.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    tail = v[1:]
    out[0] = tail[0] + tail[2]  # 2 + 4
    out[1] = sim.float32(len(v[5:]) + len(m[3:]))  # empty slices
    col = m[1:, 2]
    out[2] = col[0] * 10.0 + col[1]  # 6, 9
    block = m[:2, 1:]
    out[3] = block[1, 0]  # 5
    even = v[::2]
    out[5] = even[1]  # 3
    b = mat22bool(True, False, False, True)
    b[0, 1] = True
    flags[0] = b


@sim.kernel
def _compiled_forms_kernel(out: sim.array(dtype=float), flags: sim.array(dtype=mat22bool)):
    _compiled_forms(out, flags)
    anon = sim.types.vector(1.0, 2.0, 3.0)  # in a kernel, the type factory is Warp's vector()
    out[4] = anon[2]


@pytest.fixture(scope="module")
def compiled_forms():
    out = sim.zeros(6, dtype=float)
    flags = sim.zeros(1, dtype=mat22bool)
    sim.launch(_compiled_forms_kernel, 1, inputs=[out, flags])
    return out, flags


def test_kernel_slices_bool_and_anonymous_vectors(compiled_forms):
    out, flags = compiled_forms
    np.testing.assert_array_equal(out, [6.0, 0.0, 69.0, 5.0, 3.0, 3.0])
    np.testing.assert_array_equal(flags[0], [[True, True], [False, True]])
    py_out, py_flags = np.zeros(6, np.float32), np.zeros((1, 2, 2), np.bool_)
    _compiled_forms(py_out, py_flags)  # the same func as Python
    py_out[4] = 3.0
    np.testing.assert_array_equal(py_out, out)
    np.testing.assert_array_equal(py_flags, flags)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                  "uint64", "float32", "float64"])
def test_scalar_types_convert_as_warp(name):
    ours, theirs = getattr(sim, name), getattr(wp, name)
    for value in (-1234567890123456789, -1234567890, 300, -2, 7):
        assert ours._type_(value).value == theirs._type_(value).value
        assert ours(value) == ours._type_(value).value, value  # ints wrap, as Warp's ctypes
    assert type(ours(3)) is np.dtype(ours).type and isinstance(np.dtype(ours).type(1), ours)
    assert ours == np.dtype(ours).type and np.dtype(name) == ours and ours != "x"
    assert {np.dtype(name): 1}[ours] == 1 and sim.zeros(1, dtype=ours).dtype == np.dtype(name)
