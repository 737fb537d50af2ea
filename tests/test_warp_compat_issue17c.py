"""Issue 17, Warp's kernel language (third round): Warp's constants in kernels (a local bound
once to a literal bounds a slice and gives float64 its double), typed constructors take
variables of their own scalar type only (Warp's rule), an undefined name is a KeyError and
a struct's missing field an AttributeError (as Warp's are), and an augmented assignment
evaluates its target's indices before its value (as Python does).

Kernels are module-level and launched once where they can be: Numba's compile time
dominates the suite.
"""

import re

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.errors import KernelTypingError


# --------------------------------------------------------------------------
# Locals bound once to a literal are Warp's constants


@sim.kernel
def constant_locals(out: sim.array(dtype=sim.float64)):
    n = 2
    x = 0.1
    v = sim.vec3(4.0, 5.0, 6.0)
    head = v[0:n]  # a constant slice bound
    out[0] = sim.float64(head[1])
    out[1] = sim.float64(x)  # the double written
    out[2] = sim.vec3d(x, 0.0, 0.0)[0]
    out[3] = sim.float64(len(head))


def test_locals_bound_once_to_a_literal_are_constants():
    out = np.zeros(4)
    sim.launch(constant_locals, dim=1, outputs=[out])
    assert out.tolist() == [5.0, 0.1, 0.1, 2.0]


def test_a_local_bound_twice_is_no_constant_bound():
    @sim.kernel
    def rebound(out: sim.array(dtype=float)):
        n = 2
        n = 3
        out[0] = sim.vec3(1.0, 2.0, 3.0)[0:n][0]

    with pytest.raises(KernelTypingError, match="slice"):
        sim.launch(rebound, dim=1, outputs=[np.zeros(1, np.float32)])


# --------------------------------------------------------------------------
# Typed constructors: variables of the constructor's scalar type (constants are converted)


SCALE = 2.5


@sim.kernel
def constructors_of_constants(x: sim.float64, out: sim.array(dtype=sim.float64)):
    n = 3
    a = sim.vec3d(x, -1.0, SCALE)  # a float64 variable, a literal, a global
    b = sim.vec3d(n, 0, 0.5)  # a local constant and int literals convert
    m = sim.mat22d(x, 0.0, 0.0, x)
    q = sim.quatd(0.0, 0.0, 0.0, x)
    c = sim.vec3d(sim.vec3(1.0, 2.0, 3.0))  # a value converts (Warp's copy constructor)
    out[0] = a[0] + a[1] + a[2] + b[0] + b[2] + m[1, 1] + q[3] + c[2]


def test_typed_constructors_convert_constants_and_values():
    out = np.zeros(1)
    sim.launch(constructors_of_constants, dim=1, inputs=[sim.float64(2.0)], outputs=[out])
    assert out[0] == 2.0 - 1.0 + 2.5 + 3.0 + 0.5 + 2.0 + 2.0 + 3.0


def _vector_of_float64(x: sim.float64):
    sim.vec2(x, x)


def _matrix_fill_of_float64(x: sim.float64):
    sim.mat22(x)


def _matrix_of_int(x: sim.float64):
    i = sim.tid()
    sim.mat22(x, 0.0, 0.0, i)


def _quat_of_float64(x: sim.float64):
    sim.quat(x, x, x, x)


@pytest.mark.parametrize("fn, message", [
    (_vector_of_float64, "all values used to initialize this vector are expected to be of the "
                         "type `float32`$"),
    (_matrix_fill_of_float64, "the value used to fill this matrix is expected to be of the type "
                              "`float32`$"),
    (_matrix_of_int, "all values used to initialize this matrix are expected to be of the type "
                     "`float32`$"),
    (_quat_of_float64, "all values used to initialize this quaternion are expected to be of the "
                       "type `float32`$"),
])
def test_typed_constructors_refuse_variables_of_another_type(fn, message):
    kernel = sim.kernel(fn)
    with pytest.raises(sim.WarpCodegenError) as info:
        sim.launch(kernel, dim=1, inputs=[sim.float64(1.0)])
    assert re.search(message, str(info.value))  # str: the message without the notes


def test_constructor_arguments_in_python_are_the_values():
    @sim.func
    def make(x: float):
        return sim.vec2(x, 1.0)

    assert make(2.0) == sim.vec2(2.0, 1.0)


def test_constructor_arguments_compile_for_cuda(offline_cuda):
    assert constructors_of_constants.compile("cuda", [sim.float64(1.0), np.zeros(1)], cc=(7, 5))


# --------------------------------------------------------------------------
# Warp's error classes: an undefined name, a struct's missing field


def test_an_undefined_name_is_a_key_error_naming_it():
    @sim.kernel
    def undefined():
        _ = typez(sim.tid())(0)  # noqa: F821

    with pytest.raises(KeyError, match=r"Referencing undefined symbol: typez") as info:
        sim.launch(undefined, dim=1)
    assert isinstance(info.value, KernelTypingError)
    assert "name 'typez' is not defined" in str(info.value)  # not KeyError's repr


def test_a_branch_static_drops_may_name_what_does_not_exist():
    def make(flag):
        @sim.kernel
        def k(a: sim.array(dtype=float)):
            if sim.static(flag):
                a[0] = undefined_helper(a[0])  # noqa: F821
            else:
                a[0] = 7.0
        return k

    a = np.zeros(1, np.float32)
    sim.launch(make(False), dim=1, inputs=[a])
    assert a[0] == 7.0
    with pytest.raises(KeyError, match="undefined_helper"):
        sim.launch(make(True), dim=1, inputs=[a])


@sim.struct
class Pair:
    a: float
    b: int


def test_a_missing_struct_field_is_an_attribute_error():
    @sim.kernel
    def missing(pair: Pair):
        _ = pair.nonexisting

    with pytest.raises(AttributeError) as info:
        sim.launch(missing, dim=1, inputs=[Pair()])
    assert re.search(r"`nonexisting` is not an attribute of 'pair' \([\w.]+\.Pair\)$",
                     str(info.value))
    assert isinstance(info.value, KernelTypingError)


# --------------------------------------------------------------------------
# An augmented assignment: the target's indices first, then the value


@sim.func
def bump(state: sim.array(dtype=int)) -> int:
    i = state[0]
    state[0] = i + 1
    return i


@sim.func
def read_state(state: sim.array(dtype=int)) -> float:
    return float(state[0]) * 100.0


@sim.kernel
def target_before_value(dst: sim.array(dtype=sim.mat33), state: sim.array(dtype=int)):
    dst[bump(state)][1] += sim.vec3(read_state(state), 0.0, 0.0)


def test_augmented_assignment_evaluates_the_target_first():
    dst = np.zeros((2, 3, 3), np.float32)
    state = np.zeros(1, np.int32)
    sim.launch(target_before_value, dim=1, inputs=[dst, state])
    expected = np.zeros((2, 3, 3), np.float32)
    expected[0, 1, 0] = 100.0
    np.testing.assert_array_equal(dst, expected)


# --------------------------------------------------------------------------
# Warp's subscript-style type hints


def test_subscript_hints_are_the_value_types():
    from typing import Literal, TypeVar, get_origin

    from numba_sim.types import Matrix, Quaternion, Transformation, Vector

    assert Vector[float, Literal[3]] is sim.vec3
    assert Vector[sim.float64, 5] is sim.types.vector(5, sim.float64)
    assert Matrix[float, Literal[2], Literal[4]] is sim.types.matrix((2, 4), sim.float32)
    assert Quaternion[sim.float64] is sim.quatd
    assert Transformation[float] is sim.transform
    scalar, length = TypeVar("T"), TypeVar("N", bound=int)
    assert get_origin(Vector[scalar, length]) is Vector  # a generic alias, for type checkers
    for bad, message in [((float,), "requires 2 parameters"), ((float, 0), "positive integer"),
                         ((float, Literal[2, 3]), "single Literal value")]:
        with pytest.raises(TypeError, match=message):
            Vector[bad if len(bad) > 1 else bad[0]]
    with pytest.raises(TypeError, match="requires 3 parameters"):
        Matrix[float, 3]


@sim.kernel
def hinted(points: sim.array(dtype=sim.types.Vector[sim.float32, 3]),
           out: sim.array(dtype=float)):
    i = sim.tid()
    out[i] = sim.length(points[i])


def test_a_subscript_hint_annotates_a_kernel():
    out = np.zeros(2, np.float32)
    sim.launch(hinted, dim=2, inputs=[np.full((2, 3), 2.0, np.float32), out])
    np.testing.assert_allclose(out, np.sqrt(12.0))


def test_a_matrix_shape_of_other_than_two_dimensions_is_warps_value_error():
    with pytest.raises(ValueError, match=r"exactly two dimensions, got 1 dimension in shape "
                                         r"\(2,\)"):
        sim.types.matrix((2,), sim.float32)
    with pytest.raises(TypeError):  # still a TypeError, as before
        sim.types.matrix((2, 2, 2), sim.float32)


# --------------------------------------------------------------------------
# div_approx, inverse_approx (Warp's approximate forms: exact here, as Warp's CPU code)


@sim.kernel
def approximations(m: sim.array(dtype=sim.mat33d), out: sim.array(dtype=sim.mat33d),
                   v: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    out[i] = sim.inverse_approx(m[i])
    v[i] = sim.div_approx(v[i], 2.0) + sim.div_approx(1.0, v[i]) * sim.div_approx(3.0, 4.0)


def test_approximate_division_and_inverse_are_exact_here():
    rng = np.random.default_rng(3)
    m = rng.uniform(1.0, 5.0, (2, 3, 3))
    out = np.zeros_like(m)
    v = np.full((2, 3), 4.0, np.float32)
    sim.launch(approximations, dim=2, inputs=[m, out, v])
    np.testing.assert_allclose(out, np.linalg.inv(m), rtol=1e-10)
    np.testing.assert_array_equal(v, np.full((2, 3), 2.0 + 0.25 * 0.75, np.float32))
    assert sim.div_approx(sim.vec2(1.0, 2.0), 2.0) == sim.vec2(0.5, 1.0)  # in Python too
    with pytest.raises(TypeError):
        sim.div_approx(3, 4)  # floats only, as Warp's


def test_approximations_compile_for_cuda(offline_cuda):
    arrays = [np.zeros((1, 3, 3)), np.zeros((1, 3, 3)), np.zeros((1, 3), np.float32)]
    assert approximations.compile("cuda", arrays, cc=(7, 5))


# --------------------------------------------------------------------------
# sim.static(len(local)): the length from the local's type


@sim.kernel
def static_lengths(v1: sim.vec2, out: sim.array(dtype=int)):
    v2 = sim.vec3()
    t = sim.transform_identity(float)
    m = sim.identity(n=sim.static(len(v1) + len(v2) + 1), dtype=float)
    out[0] = sim.static(len(t))
    out[1] = int(sim.trace(m))


def test_static_len_of_locals_of_known_types():
    out = np.zeros(2, np.int32)
    sim.launch(static_lengths, dim=1, inputs=[sim.vec2(), out])
    assert out.tolist() == [7, 6]


def test_static_len_of_a_local_of_unknown_type_stays_an_expression():
    @sim.kernel
    def unknown(a: sim.array(dtype=float)):
        x = a[0] * 2.0
        x = x + 1.0
        a[0] = float(sim.static(len(x)))

    with pytest.raises(sim.WarpCodegenError, match=r"no len takes \(float32\)"):
        sim.launch(unknown, dim=1, inputs=[np.zeros(1, np.float32)])


# --------------------------------------------------------------------------
# Types as values: Warp's type attributes (dtype, length) and the class of an array


@sim.kernel
def type_attributes(a: sim.array(dtype=sim.vec3d), s: sim.float32, out: sim.array(dtype=float)):
    v = sim.types.vector(length=2, dtype=type(s))  # a zero vec2 (Warp's builtin form)
    m = sim.identity(n=v.length, dtype=v.dtype) * s
    out[0] = sim.trace(m)
    copy = type(a).dtype(a[0]) * a.dtype.dtype(2.0)  # vec3d times a float64
    out[1] = float(copy[2])
    out[2] = float(type(a).ndim + sim.mat33.length + type(copy).length)
    zero = type(a[0])()
    out[3] = float(zero.length) + float(sim.vec3d.dtype(0.5))


def test_type_attributes_of_values_classes_and_arrays():
    out = np.zeros(4, np.float32)
    a = np.array([[1.0, 2.0, 3.0]])
    sim.launch(type_attributes, dim=1, inputs=[a, 3.0, out])
    assert out.tolist() == [6.0, 6.0, 1 + 9 + 3, 3.5]


def test_an_attribute_no_type_has_stays_an_error():
    @sim.kernel
    def no_shape():
        a = sim.vec3(0.0)
        _ = a.dtype.shape

    with pytest.raises(KernelTypingError, match="Unknown attribute 'shape'"):
        sim.launch(no_shape, dim=1)


def test_type_attributes_compile_for_cuda(offline_cuda):
    assert type_attributes.compile("cuda", [np.zeros((1, 3)), 1.0, np.zeros(4, np.float32)],
                                   cc=(7, 5))


# --------------------------------------------------------------------------
# A func's annotated scalar parameter takes a constant argument in its type


@sim.func
def doubled(x: int) -> int:
    return x + x  # int32: wraps, as in Warp


@sim.func
def as_given(x: sim.float64):
    return x


@sim.func
def halved(x: float):
    return x * 0.5


@sim.kernel
def constant_arguments(out: sim.array(dtype=sim.int64), d: sim.array(dtype=sim.float64)):
    out[0] = sim.int64(doubled(2147483647))
    out[1] = sim.int64(doubled(3))
    d[0] = as_given(0.1)  # the double written
    d[1] = sim.float64(halved(3))  # an int constant of a float parameter: a float32
    d[2] = sim.float64(halved(1.5))


def test_constant_arguments_take_the_annotated_type():
    out, d = np.zeros(2, np.int64), np.zeros(3)
    sim.launch(constant_arguments, dim=1, inputs=[out, d])
    assert out.tolist() == [-2, 6]
    assert d.tolist() == [0.1, 1.5, 0.75]
    from numba.core import types
    assert doubled.signatures == [(types.int32,)]  # one specialization for every literal
    assert halved.signatures == [(types.float32,)]


def test_constant_arguments_compile_for_cuda(offline_cuda):
    assert constant_arguments.compile("cuda", [np.zeros(2, np.int64), np.zeros(3)], cc=(7, 5))
    from numba_sim.kernel import _cuda_func_class
    device = doubled._CUDATypingContext__dispatcher
    assert isinstance(device, _cuda_func_class())
    from numba.core import types
    assert [tuple(s.args) for s in device.nopython_signatures] == [(types.int32,)]


# --------------------------------------------------------------------------
# sim.float(x) / sim.int(x): Warp's wp.float / wp.int, the float32 / int32 casts


@sim.kernel
def module_casts(out: sim.array(dtype=float), n: sim.array(dtype=int)):
    out[0] = sim.float(7) / sim.float(2)
    n[0] = sim.int(3.9) + sim.int(sim.float(1.5))


def test_module_float_and_int_are_the_casts():
    out, n = np.zeros(1, np.float32), np.zeros(1, np.int32)
    sim.launch(module_casts, dim=1, inputs=[out, n])
    assert out[0] == 3.5 and n[0] == 4
    assert out.dtype == np.float32


def test_other_missing_module_names_stay_errors():
    @sim.kernel
    def missing():
        _ = sim.floaty(1.0)

    with pytest.raises(AttributeError, match="Could not find function wp.floaty"):
        sim.launch(missing, dim=1)


# --------------------------------------------------------------------------
# sim.config.verify_fp: non-finite stores into array parameters are printed (Warp's)


@sim.struct
class Holder:
    field: float
    count: int


@sim.kernel
def fp_stores(values: sim.array(dtype=float), vectors: sim.array(dtype=sim.vec3),
              holders: sim.array(dtype=Holder), ints: sim.array(dtype=int), x: float):
    i = sim.tid()
    values[i] = x / 0.0  # inf, or nan for x = 0
    vectors[i] = sim.vec3(1.0, x * 1.0e38 * 1.0e38, 0.0)
    holders[i].field -= x * 3.0e38 * 3.0e38
    holders[i].count = 1
    ints[i] = 7


@pytest.fixture
def verify_fp():
    sim.config.verify_fp = True
    yield
    sim.config.verify_fp = False


def _fp_arrays():
    return (np.zeros(1, np.float32), np.zeros((1, 3), np.float32),
            np.zeros(1, Holder.numpy_dtype), np.zeros(1, np.int32))


def test_verify_fp_prints_non_finite_stores(verify_fp, capfd):
    arrays = _fp_arrays()
    sim.launch(fp_stores, dim=1, inputs=[*arrays, 1.0])
    out = capfd.readouterr().out
    lines = [line for line in out.splitlines() if "non-finite value stored" in line]
    assert len(lines) == 3, out  # the scalar, the vector and the struct field; not the ints
    assert "test_warp_compat_issue17c.py" in lines[0] and "fp_stores" in lines[0]
    assert lines[0].endswith("inf") and "1 inf 0" in lines[1] and lines[2].endswith("-inf")
    sim.launch(fp_stores, dim=1, inputs=[*_fp_arrays(), 0.0])
    assert "nan" in capfd.readouterr().out


def test_without_verify_fp_nothing_is_printed(capfd):
    sim.launch(fp_stores, dim=1, inputs=[*_fp_arrays(), 1.0])
    assert "non-finite" not in capfd.readouterr().out


def test_verify_fp_compiles_for_cuda(verify_fp, offline_cuda):
    arrays = [np.zeros(1, np.float32), np.zeros((1, 3), np.float32),
              np.zeros(1, Holder.numpy_dtype), np.zeros(1, np.int32), 1.0]
    assert fp_stores.compile("cuda", arrays, cc=(7, 5))
    assert "vprintf" in fp_stores.inspect("cuda", "llvm", arrays, cc=(7, 5)) if hasattr(
        fp_stores, "inspect") else True


def test_too_many_indices_into_an_array_view_is_warps_error():
    @sim.kernel
    def assign_view(out: sim.array(dtype=sim.mat44, ndim=2)):
        out[0][2, 2] = 6.0  # out[0] is a row of matrices: [2, 2] indexes it, not a matrix

    with pytest.raises(sim.WarpCodegenError,
                       match="Incorrect number of indices specified for array indexing: 2 for "
                             "an array of 1 dims"):
        sim.launch(assign_view, dim=(1, 1), outputs=[np.zeros((1, 1, 4, 4), np.float32)])


# --------------------------------------------------------------------------
# The generator: Warp's test modules imported by package or named by their path


def _port_tool():
    import importlib.util
    import sys
    from pathlib import Path

    if "port_warp_tests" not in sys.modules:
        path = Path(__file__).resolve().parent.parent / "tools" / "port_warp_tests.py"
        spec = importlib.util.spec_from_file_location("port_warp_tests", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["port_warp_tests"] = module
        spec.loader.exec_module(module)
    return sys.modules["port_warp_tests"]


def test_test_module_paths_and_package_imports_are_ported():
    port = _port_tool()
    source = ('import importlib\nimport sys\n'
              'from warp.tests import aux_test_square as square\n'
              'm = importlib.import_module("warp.tests.aux_test_unresolved_func")\n'
              'del sys.modules["warp.tests.aux_test_unresolved_func"]\n'
              'message = "warp.tests.aux_test_square failed"\n'
              'other = "warp.tests.aot.aux_test_hash_reload"\n')
    text, counts = port.rewrite_source(source)
    assert "from warp_suite import aux_test_square as square" in text
    assert 'import_module("warp_suite.aux_test_unresolved_func")' in text
    assert 'sys.modules["warp_suite.aux_test_unresolved_func"]' in text
    assert '"warp.tests.aux_test_square failed"' in text  # a message keeps Warp's words
    assert '"warp.tests.aot.aux_test_hash_reload"' in text  # not one module of the suite
    assert counts["warp_test_package_imports"] == 1


def test_compat_user_modules_are_numba_sims_modules_by_name():
    from warp_suite import _warp_compat as wpc

    modules = wpc.warp_module("_src").context.user_modules
    assert modules[__name__] is sim.get_module(__name__)


# --------------------------------------------------------------------------
# A func may return a local array of structs (no CPython wrapper: Python runs it as Python)


@sim.struct
class Slot:
    offset: int
    dist: float


@sim.func
def slots():
    arr = sim.zeros(shape=(2, 3), dtype=Slot)
    for i in range(2):
        for j in range(3):
            arr[i][j].offset = i * 3 + j
            arr[i][j].dist = float(arr[i][j].offset) / 5.0
    return arr


@sim.kernel
def read_slots(out: sim.array(dtype=float)):
    arr = slots()
    out[0] = arr[1][2].dist + float(arr[0][1].offset)


def test_a_func_returns_a_local_array_of_structs():
    out = np.zeros(1, np.float32)
    sim.launch(read_slots, dim=1, inputs=[out])
    assert out[0] == np.float32(1.0) + 1.0


# --------------------------------------------------------------------------
# kernel.adj: the record of the kernel's source and its sim.static expressions


def test_kernel_record_of_static_expressions():
    evaluations = []

    def inner():
        evaluations.append(1)
        return 3.0

    @sim.kernel
    def k(a: sim.array(dtype=float)):
        tid = sim.tid()
        a[tid] = sim.static(1.0 + sim.static(inner()))
        s = float(0.0)
        for i in range(2):
            s += sim.static(float(i) + sim.static(1.0 + 1.0))  # i: deferred, as in Warp
        a[tid] += s

    record = k.adj
    assert evaluations == [1]  # once, the inner static inside the outer one
    assert 4.0 in record.resolved_static_expressions.values()
    assert record.resolved_static_expressions["1.0 + 1.0"] == 2.0
    assert record.has_unresolved_static_expressions
    assert record.fun_name == "k" and "sim.static(inner())" in record.source
    assert not hasattr(record, "blocks")  # no generated code of Warp's
    out = np.zeros(1, np.float32)
    sim.launch(k, dim=1, inputs=[out])
    assert out[0] == 4.0 + 2.0 + 3.0


def test_a_kernel_without_deferred_statics():
    assert not constant_locals.adj.has_unresolved_static_expressions
    assert constant_locals.adj.resolved_static_expressions == {}


# --------------------------------------------------------------------------
# transform(...) in Python: p positional with q by keyword, either alone (Warp's)


def test_transform_keywords_in_python():
    p, q = (1.0, 2.0, 3.0), (4.0, 5.0, 6.0, 7.0)
    assert sim.transform(p, q=q) == sim.transform(p, q)
    assert sim.transform(q=q) == sim.transform((0.0, 0.0, 0.0), q)
    assert sim.transform(q=q, p=p) == sim.transform(p, q)
    with pytest.raises(TypeError, match=r"^got an unexpected keyword argument 'pos'$"):
        sim.transform(pos=sim.vec3(), rot=sim.quat())
    with pytest.raises(TypeError, match="multiple values for p"):
        sim.transform(p, p=p)
    with pytest.raises(TypeError, match="no keyword arguments except"):
        sim.vec3(x=1.0)


def test_func_has_overloads_for_type_checkers():
    import typing

    overloads = typing.get_overloads(sim.func)
    assert len(overloads) == 2  # @sim.func and @sim.func(...), as Warp's
    assert all("Callable" in str(o.__annotations__["return"]) for o in overloads)


def test_only_the_functions_own_single_bindings_are_constants():
    import ast

    from numba_sim.kernel_language import _literal_locals

    tree = ast.parse("def k(a, m=2):\n"
                     "    n = 3\n"
                     "    x = 0.5\n"
                     "    y = 1\n"
                     "    y = 2\n"
                     "    m = 4\n"
                     "    def helper():\n"
                     "        z = 3\n"
                     "    for i in range(2):\n"
                     "        w = 1\n"
                     "        w += 1\n")
    assert _literal_locals(tree.body[0]) == {"n": 3, "x": 0.5}


# --------------------------------------------------------------------------
# Warp's generic annotations: sim.Int, sim.Float, sim.Scalar, vector(n, Int), matrix(s, Float)


@sim.func
def total(v: sim.types.vector(3, sim.Scalar)) -> sim.Scalar:
    return v[0] + v[1] + v[2]


@sim.func
def kind_of(x: sim.Int):
    return 1


@sim.func
def kind_of(x: sim.Float):  # noqa: F811 (an overload, as Warp's)
    return 2


@sim.func
def trace_of(m: sim.types.matrix((2, 2), sim.Float)):
    return m[0, 0] + m[1, 1]


@sim.kernel
def generic_annotations(x: sim.Float, out: sim.array(dtype=sim.float64)):
    out[0] = sim.float64(total(sim.vec3s(1, 2, 3)))
    out[1] = total(sim.vec3d(0.5, 0.25, 0.25))
    out[2] = sim.float64(kind_of(sim.int16(1)) * 10 + kind_of(x))
    out[3] = sim.float64(trace_of(sim.mat22d(1.0, 2.0, 3.0, 4.0)) + sim.float64(x))


def test_generic_annotations_take_their_kinds():
    from typing import TypeVar

    assert isinstance(sim.Int, TypeVar) and isinstance(sim.Float, TypeVar)
    annotation = sim.types.vector(3, sim.Int)
    assert repr(annotation) == "vector(length=3, dtype=Int)"
    assert annotation.accepts(sim.vec3s.spec) and not annotation.accepts(sim.vec3.spec)
    assert sim.types.matrix((2, 2), sim.Float).accepts(sim.mat22d.spec)
    out = np.zeros(4)
    sim.launch(generic_annotations, dim=1, inputs=[sim.float64(0.5), out])
    assert out.tolist() == [6.0, 1.0, 12.0, 5.5]
    with pytest.raises(sim.WarpCodegenError, match="no overload"):
        sim.launch(sim.kernel(_kind_of_a_vector), dim=1)


def _kind_of_a_vector():
    kind_of(sim.vec3())


# --------------------------------------------------------------------------
# Warp's code_transformers: ast.NodeTransformers applied before the rewrite


def test_code_transformers_rewrite_the_tree_first():
    import ast

    from numba_sim.kernel import Kernel

    def raw(out: sim.array(dtype=float)):
        out[0] = 1.0

    class Doubled(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.copy_location(ast.Constant(node.value * 2), node) \
                if isinstance(node.value, float) else node

    plain, doubled = Kernel(raw), Kernel(raw, code_transformers=[Doubled()])
    out = np.zeros(1, np.float32)
    sim.launch(doubled, dim=1, inputs=[out])
    assert out[0] == 2.0
    sim.launch(plain, dim=1, inputs=[out])
    assert out[0] == 1.0  # the same source, its own build (and cache entry)
    from numba_sim import cache

    assert cache.kernel_fingerprint(plain) != cache.kernel_fingerprint(doubled)


@sim.kernel
def float_index_store(dst: sim.array(dtype=sim.float32), idx: sim.array(dtype=sim.float32)):
    dst[idx[0]] = 1.0


@sim.kernel
def float_index_update(dst: sim.array(dtype=sim.float32), idx: sim.array(dtype=sim.float32)):
    dst[idx[0]] += 1.0


@sim.kernel
def float_index_component_update(dst: sim.array(dtype=sim.vec3),
                                 idx: sim.array(dtype=sim.float32)):
    dst[idx[0]].x += 1.0


@sim.kernel
def integer_index_writes(dst: sim.array(dtype=sim.vec3), out: sim.array(dtype=sim.float32, ndim=2),
                         idx: sim.array(dtype=sim.int64)):
    i = idx[0]
    dst[i].x += 2.0
    dst[sim.uint8(1)][1] = 3.0
    out[i, 1] = 4.0
    out[1, 0] += 5.0


@pytest.mark.parametrize("kernel, vectors", [
    (float_index_store, False), (float_index_update, False),
    (float_index_component_update, True)])
def test_array_writes_take_integer_indices_as_warp(kernel, vectors):
    """A float index into an array write (``a[f] = v``, ``a[f] += v``, ``a[f].x += v``) is
    Warp's TypeError, not a silent truncation."""
    dst = np.zeros((2, 3) if vectors else 2, np.float32)
    with pytest.raises(TypeError, match=r"Array slot write indices must be integers or slices, "
                                        r"got \(float32\)"):
        sim.launch(kernel, dim=1, inputs=[dst, np.zeros(1, np.float32)])
    assert not dst.any()


def test_integer_indices_of_every_width_still_write():
    dst, out = np.zeros((2, 3), np.float32), np.zeros((2, 2), np.float32)
    sim.launch(integer_index_writes, dim=1, inputs=[dst, out, np.zeros(1, np.int64)])
    assert dst.tolist() == [[2, 0, 0], [0, 3, 0]] and out.tolist() == [[0, 4], [5, 0]]
