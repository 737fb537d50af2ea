"""Warp's rules for literals, keyword arguments and enums in the kernel language (issue 17).

- A float literal is float32, but keeps the value written: a float64 constructor (vec3d,
  mat22d, quatd, transformd, a fill) holds it to double precision, as Warp's typed
  constructors do; arithmetic sees the float32.
- Int literals given to a builtin adopt the type of its int variables (the scalar rule's):
  ``clamp(i, 0, 10)`` keeps i's type, ``mul(2, 3)`` is int32, in Python too.
- Warp's parameter names as keywords: ``transform(p=, q=)``, ``transform_point(xform=|mat=,
  point=)``, ``curlnoise(state=, xyz=)``; ``transform(p)`` has the identity rotation and
  ``transformation(t)`` copies.
- Members of int enums (``enum.IntEnum``, ``enum.IntFlag``) are int constants in kernels.
- ``sim.types.type_repr`` names types as Warp's messages do; ``sim.types.type_size`` counts
  an element's scalars as Warp's does.
"""

import enum

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.errors import KernelTypingError

PI, E, SQRT2 = 3.141592653589793, 2.718281828459045, 1.414213562373095


# --------------------------------------------------------------------------
# float literals


@sim.kernel
def float64_constructors(r: sim.array(dtype=sim.float64), d: sim.float64):
    v = sim.vec3d(3.141592653589793, 2.718281828459045, 1.414213562373095)
    r[0] = v[0]
    r[1] = v[1]
    w = sim.vec3d(-3.141592653589793, d, 1.00000005)
    r[2] = w[0]
    r[3] = w[2]
    r[4] = sim.mat22d(1.111111111111111, 2.0, 3.0, 4.0)[0, 0]
    r[5] = sim.quatd(0.707106781186547, 0.0, 0.0, 0.0)[0]
    t = sim.transformd(sim.vec3d(1.234567890123456, 0.0, 0.0), sim.quatd(0.0, 0.0, 0.0, 1.0))
    r[6] = sim.transform_get_translation(t)[0]
    r[7] = sim.vec3d(1.00000005)[2]
    x = 0.1
    r[8] = sim.vec3d(x, 0.0, 0.0)[0]


def test_float64_constructors_keep_the_literals_double_precision():
    r = np.zeros(9)
    sim.launch(float64_constructors, dim=1, inputs=[r, 2.0])
    assert r.tolist() == [PI, E, -PI, 1.00000005, 1.111111111111111, 0.707106781186547,
                          1.234567890123456, 1.00000005, 0.1]


@sim.kernel
def float32_arithmetic(f: sim.array(dtype=sim.float32), i: sim.array(dtype=sim.int32)):
    x = 0.1
    f[0] = x * 3.0
    f[1] = sim.vec3(3.141592653589793)[0]
    f[2] = -x
    z = 1.0
    for _ in range(3):
        z = z + x
    f[3] = z
    i[0] = int(2.75)
    i[1] = sim.int32(-2.75)


def test_float_literals_are_float32_in_arithmetic_and_conversions_to_int():
    f, i = np.zeros(4, np.float32), np.zeros(2, np.int32)
    sim.launch(float32_arithmetic, dim=1, inputs=[f, i])
    x = np.float32(0.1)
    assert f.tolist() == [x * np.float32(3.0), np.float32(PI), -x,
                          np.float32(np.float32(np.float32(1.0) + x) + x) + x]
    assert i.tolist() == [2, -2]


def test_float_literals_compile_and_link_for_cuda(offline_cuda):
    library = float64_constructors.compile("cuda", [np.zeros(9), 2.0], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
    library = func_with_literal_arguments.compile("cuda", [np.zeros(2, np.float32)], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


# --------------------------------------------------------------------------
# int literals given to builtins


def test_python_ints_given_to_builtins_are_literals_of_the_scalar_rule():
    v = -1234567890
    assert type(sim.mul(v, v)) is np.int32 and sim.mul(v, v) == np.int32(304084036)
    assert type(sim.mul(sim.int16(7), 3)) is np.int16
    assert sim.mul(sim.int16(v), v) == np.int16(-3004)  # v wraps to int16, as compiled
    assert type(sim.max(sim.uint8(3), 5)) is np.uint8
    assert type(sim.add(2**40, 1)) is np.int64  # a literal that needs int64
    assert type(sim.clamp(np.int64(3), 0, 10)) is np.int64


@sim.kernel
def int_literals(out: sim.array(dtype=sim.int32), wide: sim.array(dtype=sim.int64),
                 narrow: sim.array(dtype=sim.int16)):
    i = sim.tid()
    out[0] = sim.max(i, 0) + sim.mul(3, 4)
    narrow[0] = sim.clamp(sim.int16(-5), 0, 10)
    wide[0] = sim.add(2147483648, 1)  # an int64 literal (2147483647 + 1 would wrap)


def test_int_literals_in_kernels_adopt_the_variables_type():
    out, wide, narrow = np.zeros(1, np.int32), np.zeros(1, np.int64), np.zeros(1, np.int16)
    sim.launch(int_literals, dim=1, inputs=[out, wide, narrow])
    assert out[0] == 12 and narrow[0] == 0 and wide[0] == 2147483649


# --------------------------------------------------------------------------
# transforms: keywords, transform(p), transformation(t)


@sim.kernel
def transform_forms(o: sim.array(dtype=sim.transform), s: sim.array(dtype=sim.transform)):
    o[0] = sim.transform(p=sim.vec3(1.0, 2.0, 3.0))
    o[1] = sim.transform(p=sim.vec3(1.0, 2.0, 3.0), q=sim.quat(4.0, 5.0, 6.0, 7.0))
    o[2] = sim.types.transformation(s[0])
    o[3] = sim.transform(sim.vec3(1.0, 2.0, 3.0))


def test_transform_keywords_and_forms_in_kernels_and_python():
    o, s = np.zeros((4, 7), np.float32), np.arange(7, dtype=np.float32)[None]
    sim.launch(transform_forms, dim=1, inputs=[o, s])
    identity_p = [1, 2, 3, 0, 0, 0, 1]
    assert o.tolist() == [identity_p, [1, 2, 3, 4, 5, 6, 7], list(range(7)), identity_p]
    assert list(sim.transform(p=sim.vec3(1, 2, 3))) == identity_p
    assert list(sim.transform(sim.vec3(1, 2, 3))) == identity_p
    assert list(sim.transformation(sim.transform(p=sim.vec3(1, 2, 3)))) == identity_p


@sim.kernel
def transform_copy_of_another_dtype():
    sim.transformd(sim.transform(1.0))


def test_copying_a_transform_into_another_dtype_is_warps_error():
    message = ("copy constructing a transform requires matching source and target dtypes, "
               "got `float32` and `float64`")
    with pytest.raises(KernelTypingError, match=message):
        sim.launch(transform_copy_of_another_dtype, dim=1)
    with pytest.raises(TypeError, match=message):
        sim.transformd(sim.transform())


@sim.kernel
def keyword_builtins(o: sim.array(dtype=sim.vec3)):
    t = sim.transform(p=sim.vec3(1.0, 2.0, 3.0))
    o[0] = sim.transform_point(t, point=sim.vec3(1.0, 0.0, 0.0))
    o[1] = sim.transform_point(point=sim.vec3(1.0, 0.0, 0.0), xform=t)
    o[2] = sim.transform_vector(xform=t, vec=sim.vec3(1.0, 0.0, 0.0))
    o[3] = sim.curlnoise(xyz=sim.vec3(0.25, 0.5, 0.75), state=sim.uint32(42))
    o[4] = sim.curlnoise(sim.uint32(42), sim.vec3(0.25, 0.5, 0.75), octaves=sim.uint32(1))


def test_builtins_take_warps_parameter_names_as_keywords():
    o = np.zeros((5, 3), np.float32)
    sim.launch(keyword_builtins, dim=1, inputs=[o])
    noise = sim.curlnoise(np.uint32(42), sim.vec3(0.25, 0.5, 0.75))
    assert o[:3].tolist() == [[2, 2, 3], [2, 2, 3], [1, 0, 0]]
    assert o[3].tolist() == o[4].tolist() == list(noise)
    m, p = sim.identity(4, float), sim.vec3(1, 2, 3)
    assert sim.transform_point(point=p, xform=m) == p == sim.transform_point(point=p, mat=m)
    state = sim.rand_init(42)
    assert sim.curlnoise(xyz=p, state=state) == sim.curlnoise(state, p, sim.uint32(1), 2.0, 0.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'xyzw'"):
        sim.curlnoise(state, xyzw=p)


# --------------------------------------------------------------------------
# enums


class Color(enum.IntEnum):
    RED = 1
    GREEN = 2
    BLUE = 3


class Flag(enum.IntFlag):
    A = 1
    B = 2
    C = 4


@sim.kernel
def enum_members(ins: sim.array(dtype=sim.int32), outs: sim.array(dtype=sim.int32)):
    i = sim.tid()
    if ins[i] & Flag.A:
        outs[i] += Flag.A
    if ins[i] & Flag.C:
        outs[i] += Flag.C
    outs[i] += (Color.RED + Color.GREEN.value + int(Color.BLUE) + sim.static(Color.RED)) * 10


def test_int_enum_members_are_int_constants_in_kernels():
    ins = np.array([0, 1, 4, 5], np.int32)
    outs = np.zeros(4, np.int32)
    sim.launch(enum_members, dim=4, inputs=[ins, outs])
    assert outs.tolist() == [70, 71, 74, 75]


# --------------------------------------------------------------------------
# type_repr


@pytest.mark.parametrize("t, text", [
    (sim.float32, "float32"), (np.float64, "float64"), (sim.uint16, "uint16"), (float, "float"),
    (int, "int"), (bool, "bool"), (sim.vec3, "vec3f"), (sim.vec3ub, "vec3ub"),
    (sim.mat22d, "mat22d"), (sim.quat, "quatf"), (sim.transformd, "transformd"),
    (sim.types.vector(5, float), "vector(length=5, dtype=float32)"),
    (sim.types.vector(3, bool), "vector(length=3, dtype=bool)"),
    (sim.types.matrix((2, 5), sim.int8), "matrix(shape=(2, 5), dtype=int8)"),
    (sim.spatial_vector, "vector(length=6, dtype=float32)"), (str, "builtins.str"),
])
def test_type_repr_names_types_as_warp_does(t, text):
    assert sim.types.type_repr(t) == text


@sim.struct
class _Pair:
    a: float
    b: sim.vec3


@pytest.mark.parametrize("t, size", [
    (float, 1), (int, 1), (sim.uint8, 1), (np.float64, 1), (sim.vec3, 3), (sim.vec4ub, 4),
    (sim.mat33d, 9), (sim.types.matrix((2, 5), sim.int8), 10), (sim.quat, 4),
    (sim.transformd, 7), (sim.spatial_matrix, 36), (_Pair, 1),
])
def test_type_size_counts_scalars_as_warp_does(t, size):
    """Warp's ``types.type_size``: the scalars of one element (a struct counts as one)."""
    assert sim.types.type_size(t) == size


def test_type_size_of_something_not_a_type_names_dtype():
    with pytest.raises(TypeError, match=r"dtype must be one of the scalar types .* not 'vec3'"):
        sim.types.type_size("vec3")


def test_python_calls_no_overload_takes_say_so_in_warps_words_too():
    with pytest.raises(RuntimeError, match=r"min needs arguments of one type. Couldn't find a "
                                           r"function 'min' compatible with the arguments "
                                           r"'vec3f, vec3d'$") as info:
        sim.min(sim.vec3(3, 1, 2), sim.vec3d(3, 1, 2))
    assert isinstance(info.value, TypeError)
    assert sim.min(sim.vec3(3, 1, 2)) == 1.0 and sim.max(a=sim.vec3(3, 1, 2)) == 3.0


@sim.func
def scaled(x: float, factor: float):
    return x * factor


@sim.kernel
def func_with_literal_arguments(out: sim.array(dtype=sim.float32)):
    out[0] = scaled(2.0, 0.5) + scaled(out[1], 0.25)


def test_funcs_take_float_literals():
    out = np.array([0.0, 4.0], np.float32)
    sim.launch(func_with_literal_arguments, dim=1, inputs=[out])
    assert out[0] == 2.0


# --------------------------------------------------------------------------
# anonymous constructors: vectors and matrices of bools, quaternion(...), empty slices

VEC3BOOL = sim.types.vector(3, bool)
MAT00 = sim.types.matrix((0, 0), float)


@sim.kernel
def anonymous_constructors(out: sim.array(dtype=sim.int32), q: sim.array(dtype=sim.quat),
                           qd: sim.array(dtype=sim.quatd)):
    v = sim.types.vector(False, True, False)
    m = sim.types.matrix(False, False, True, False, shape=(2, 2))
    out[0] = sim.int32(v[1]) + sim.int32(m[1, 0]) * 2 + sim.int32(VEC3BOOL() == v)
    out[1] = sim.int32(sim.mat44(1.0)[4:] == MAT00()) + sim.int32(sim.mat44(1.0)[:, 9:] == MAT00())
    qd[0] = sim.types.quaternion(1.0, 2.0, 3.0, 4.0, dtype=sim.float64)
    q[0] = sim.types.quaternion(1.0, 2.0, 3.0, 4.0, dtype=float)
    q[1] = sim.quaternion(sim.vec3(1.0, 2.0, 3.0), 4.0)
    q[2] = sim.quaternion(qd[0], dtype=float)
    q[3] = sim.quaternion()


def test_anonymous_constructors_of_bools_quaternions_and_empty_slices():
    out, q, qd = np.zeros(2, np.int32), np.ones((4, 4), np.float32), np.zeros((1, 4))
    sim.launch(anonymous_constructors, dim=1, inputs=[out, q, qd])
    assert out.tolist() == [3, 2]
    assert qd.tolist() == [[1, 2, 3, 4]] and q.tolist() == [[1, 2, 3, 4]] * 3 + [[0, 0, 0, 0]]
    assert sim.vector(False, True) == [False, True]
    assert type(sim.vector(True, length=2)) is sim.types.vector(2, bool)
    assert type(sim.mat44(1.0)[4:]) is MAT00 and sim.mat44(1.0)[4:] == MAT00()
    assert type(sim.quaternion(1, 2, 3, 4, dtype=sim.float64)) is sim.quatd
    with pytest.raises(TypeError, match=r"quaternion\(int64, int64\): expected quaternion\(\)"):
        sim.quaternion(1, 2)
    with pytest.raises(TypeError, match="a quaternion's dtype is a float type, not int32"):
        sim.quaternion(dtype=sim.int32)
    with pytest.raises(TypeError, match="takes scalars or bools"):
        sim.vector(sim.vec3(), 1.0)


def test_bit_count_of_python_ints_counts_their_int32_bits():
    assert sim.bit_count(-1) == 32 and sim.bit_count(45) == 4
    with pytest.raises(RuntimeError, match="Couldn't find a function 'bit_count' compatible"):
        sim.bit_count(sim.float32(0))


def test_value_classes_have_warps_class_attributes():
    assert sim.vec3._shape_ == (3,) and sim.vec3._length_ == 3
    assert sim.types.matrix((2, 3), float)._shape_ == (2, 3)
    assert sim.mat22d._length_ == 4 and sim.mat22d._wp_scalar_type_ is sim.float64
    assert sim.vec3ub._wp_scalar_type_ is sim.uint8
    assert sim.types.vector(3, bool)._wp_scalar_type_ is sim.bool
    assert sim.quat(0, 0, 0, 1)._wp_scalar_type_ is sim.float32


@sim.kernel
def identities_of_dtype_none(q: sim.array(dtype=sim.quat), t: sim.array(dtype=sim.transform)):
    q[0] = sim.quat_identity(dtype=None)
    t[0] = sim.transform_identity(None)


def test_identities_take_dtype_none_for_float32():
    q, t = np.zeros((1, 4), np.float32), np.zeros((1, 7), np.float32)
    sim.launch(identities_of_dtype_none, dim=1, inputs=[q, t])
    assert q.tolist() == [[0, 0, 0, 1]] and t.tolist() == [[0, 0, 0, 0, 0, 0, 1]]
    assert type(sim.quat_identity(dtype=None)) is sim.quat
    assert type(sim.transform_identity(None)) is sim.transform


@sim.kernel
def bit_count_of_a_float(counts: sim.array(dtype=sim.int32), value: sim.float32):
    counts[0] = sim.bit_count(value)


def test_compiled_calls_no_overload_takes_say_so_in_warps_words_too():
    with pytest.raises(KernelTypingError, match=r"bit_count takes integers \(Warp's rule\), not "
                                                r"float32. Couldn't find function overload for "
                                                r"'bit_count' that matched inputs with types: "
                                                r"\[float32\]"):
        sim.launch(bit_count_of_a_float, dim=1, inputs=[np.zeros(1, np.int32), 1.0])
