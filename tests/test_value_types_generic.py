"""The rest of Warp's value types: every predefined alias of warp/types.py (integer vectors,
spatial vectors and matrices, ``spatial_transform``), vectors and matrices of any size and
scalar type made on demand (``sim.types.vector(5, float32)``, ``sim.types.matrix((2, 3),
float64)``), and the keyword ``dtype=`` of ``identity`` / ``quat_identity`` /
``transform_identity``.  Spatial algebra against Warp: tests/test_spatial_warp.py.
"""

import pickle

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_sim as sim
from numba_sim.types import VALUE_TABLE

F32, F64 = np.float32, np.float64

WARP_ALIASES = {  # warp/types.py's predefined value types (float16 aside): (kind, shape, dtype)
    **{f"vec{n}{suffix}": ("vec", (n,), dtype) for n in (2, 3, 4) for suffix, dtype in (
        ("b", np.int8), ("ub", np.uint8), ("s", np.int16), ("us", np.uint16), ("i", np.int32),
        ("ui", np.uint32), ("l", np.int64), ("ul", np.uint64), ("f", F32), ("d", F64), ("", F32))},
    **{f"mat{n}{n}{suffix}": ("mat", (n, n), dtype) for n in (2, 3, 4)
       for suffix, dtype in (("", F32), ("f", F32), ("d", F64))},
    "quat": ("quat", (4,), F32), "quatf": ("quat", (4,), F32), "quatd": ("quat", (4,), F64),
    "transform": ("transform", (7,), F32), "transformf": ("transform", (7,), F32),
    "transformd": ("transform", (7,), F64),
    "spatial_vector": ("vec", (6,), F32), "spatial_vectorf": ("vec", (6,), F32),
    "spatial_vectord": ("vec", (6,), F64), "spatial_matrix": ("mat", (6, 6), F32),
    "spatial_matrixf": ("mat", (6, 6), F32), "spatial_matrixd": ("mat", (6, 6), F64),
    "spatial_transform": ("transform", (7,), F32), "spatial_transformd": ("transform", (7,), F64),
}


@pytest.mark.parametrize("name", sorted(WARP_ALIASES))
def test_warp_aliases_exist_with_warp_layouts(name):
    kind, shape, dtype = WARP_ALIASES[name]
    cls = getattr(sim, name)
    assert (cls.spec.kind, cls.spec.shape, cls.spec.dtype) == (kind, shape, np.dtype(dtype))
    assert np.asarray(cls()).shape == shape and np.asarray(cls()).dtype == dtype


def test_the_aliases_are_warps_own():
    wp = pytest.importorskip("warp")
    for cls in wp._src.types.vector_types:
        name = cls.__name__
        if name.endswith("h"):  # float16: out of scope
            continue
        ours = getattr(sim, name)
        assert ours.spec.shape == tuple(cls._shape_), name
        scalar = wp._src.types.warp_type_to_np_dtype[cls._wp_scalar_type_]
        assert ours.spec.dtype == np.dtype(scalar), name
    assert sim.spatial_vector is sim.spatial_vectorf and sim.spatial_matrix is sim.spatial_matrixf


def test_type_factories_give_one_class_per_type():
    v5 = sim.types.vector(5, sim.float32)
    assert v5 is sim.types.vector(5, np.float32) is sim.types.vector(length=5, dtype=float)
    assert v5 is sim.types.vector(5, numba.float32) is sim.types.vector(5, np.dtype("float32"))
    assert sim.types.vector(3, sim.float32) is sim.vec3 and sim.types.vector(2, int) is sim.vec2i
    assert sim.types.vector(4, np.uint8) is sim.vec4ub
    assert sim.types.vector(6, np.float64) is sim.spatial_vectord
    assert sim.types.matrix((6, 6), float) is sim.spatial_matrix
    assert sim.types.matrix((3, 3), np.float64) is sim.mat33d
    assert sim.types.quaternion(np.float64) is sim.quatd
    assert sim.types.transformation(float) is sim.transform is sim.spatial_transform
    m23 = sim.types.matrix((2, 3), np.int16)
    assert m23.__name__ == "mat23s" and sim.types.mat23s is m23 and len(m23()) == 2
    assert sim.types.vector(7, np.uint64).__name__ == "vec7ul"
    assert not hasattr(sim, "vec5")  # generic types are not public names of numba_sim
    assert all(spec.name in dir(sim) for spec in VALUE_TABLE)


@pytest.mark.parametrize("call, fragment", [
    (lambda: sim.types.vector(-1, float), "length must be an int >= 0"),  # 0: Warp's empty
    (lambda: sim.types.vector(2.0, float), "length must be an int >= 0"),
    (lambda: sim.types.vector(True, float), "length must be an int >= 0"),
    (lambda: sim.types.vector(3, np.float16), "dtype must be one of the scalar types"),
    (lambda: sim.types.vector(3, "vec3"), "dtype must be one of the scalar types"),
    (lambda: sim.types.vector(3, sim.vec3), "dtype must be one of the scalar types"),
    (lambda: sim.types.matrix(3, float), r"shape must be a \(rows, cols\) tuple"),
    (lambda: sim.types.matrix((2, -3), float), r"shape\[1\] must be an int >= 0"),
    (lambda: sim.types.quaternion(np.int32), "float32, float64"),
    (lambda: sim.types.transformation(np.int8), "float32, float64"),
])
def test_type_factories_reject_bad_arguments_by_name(call, fragment):
    with pytest.raises(TypeError, match=fragment):
        call()


def test_generic_values_are_real_values():
    v5 = sim.types.vector(5, np.float64)
    m32 = sim.types.matrix((3, 2), np.int32)
    a, m = v5(1, 2, 3, 4, 5), m32(1, 2, 3, 4, 5, 6)
    assert repr(a) == "vec5d([float64(1.0), float64(2.0), float64(3.0), float64(4.0), float64(5.0)])"
    assert repr(m) == "mat32i([[1, 2], [3, 4], [5, 6]])" and str(m) == "[[1, 2],\n [3, 4],\n [5, 6]]"
    assert pickle.loads(pickle.dumps(a)) == a and pickle.loads(pickle.dumps(m)) == m
    assert type(m[1]) is sim.vec2i and m[2, 1] == 6 and a.w == 4
    assert type(m.__matmul__(sim.vec2i(1, 1))) is sim.vec3i
    np.testing.assert_array_equal(np.asarray(sim.transpose(m)), [[1, 3, 5], [2, 4, 6]])
    assert a == v5(*range(1, 6)) and a == [1, 2, 3, 4, 5] and a != [1, 2, 3, 4]
    with pytest.raises(TypeError, match="mat32i"):
        _ = m @ m


# --------------------------------------------------------------------------
# compiled: integer types, generic shapes (one function each; compile time dominates)


VEC4UB = sim.types.vector(4, np.uint8)  # type factories run in Python (module level in kernels)
VEC5 = sim.types.vector(5, np.float32)


def _integer_ops(a, b, m, k, n):
    return (a + b, a - b, a * np.uint8(3), sim.cw_mul(a, b), sim.cw_div(a, b), sim.dot(a, b),
            -a, a[k], VEC4UB(np.uint8(200)),
            m @ n, sim.transpose(m), m * 2, sim.outer(a, a)[3, 3], sim.trace(n @ m),
            sim.identity(3, np.int64), sim.identity(n=2, dtype=np.int16))


def test_integer_types_wrap_and_truncate_as_c():
    a, b = sim.vec4ub(250, 7, 9, 255), sim.vec4ub(10, 2, 4, 2)
    m = sim.types.matrix((2, 3), np.int64)(1, -2, 3, -4, 5, -6)
    n = sim.types.matrix((3, 2), np.int64)(7, 8, 9, 10, 11, 12)
    compiled = numba.njit(_integer_ops)(a, b, m, 3, n)
    python = _integer_ops(a, b, m, 3, n)
    a_np, b_np = np.asarray(a), np.asarray(b)
    expected = [a_np + b_np, a_np - b_np, a_np * np.uint8(3), a_np * b_np, a_np // b_np,
                np.uint8(np.sum(a_np * b_np, dtype=np.uint8)), -a_np, 255, np.full(4, 200),
                np.asarray(m) @ np.asarray(n), np.asarray(m).T, np.asarray(m) * 2, 1,
                np.trace(np.asarray(n) @ np.asarray(m)), np.eye(3), np.eye(2)]
    with np.errstate(over="ignore"):
        for got in (compiled, python):
            for value, want in zip(got, expected):
                np.testing.assert_array_equal(np.asarray(value), want)
            assert type(got[0]) is sim.vec4ub and type(got[9]) is sim.types.matrix((2, 2), np.int64)
            assert type(got[14]) is sim.types.matrix((3, 3), np.int64)
            assert type(got[15]) is sim.types.matrix((2, 2), np.int16)


def test_generic_types_made_during_typing_are_complete():
    """A result type first made while compiling (a 7x2 product) has its constructor, boxing
    and component access."""
    def product(a, b):
        c = sim.outer(a, b)
        return c, type_of_c(c[6, 1], c[6, 0]), len(c), c[3]

    type_of_c = sim.types.vector(2, np.float64)
    a = sim.types.vector(7, np.float64)(*range(7))
    c, rebuilt, length, row = numba.njit(product)(a, sim.vec2d(1, 2))
    assert type(c).__name__ == "mat72d" and length == 7 and rebuilt == sim.vec2d(12, 6)
    assert type(row) is sim.vec2d and row == sim.vec2d(3, 6)
    mat72d = type(c)
    assert numba.njit(lambda: mat72d(2.0))() == mat72d(2.0)


def test_dtype_keywords_of_constant_builtins():
    assert sim.quat_identity(dtype=sim.float64) == sim.quatd(0, 0, 0, 1)
    assert sim.transform_identity(dtype=np.float64) == sim.transformd(0, 0, 0, 0, 0, 0, 1)
    assert sim.identity(n=2, dtype=float) == sim.mat22(1, 0, 0, 1)

    @numba.njit
    def made():
        return (sim.quat_identity(dtype=sim.float64), sim.transform_identity(dtype=np.float32),
                sim.identity(4, dtype=sim.float64), sim.identity(n=5, dtype=np.int8))

    q, t, m4, m5 = made()
    assert type(q) is sim.quatd and type(t) is sim.transform and type(m4) is sim.mat44d
    assert m5 == sim.types.matrix((5, 5), np.int8)(*np.eye(5).ravel().tolist())
    with pytest.raises(TypingError, match="multiple values for argument 'dtype'"):
        numba.njit(lambda: sim.quat_identity(np.float32, dtype=np.float32))()


def test_vector_and_matrix_builtins_build_any_size():
    """Warp's vector(...) / matrix(...) kernel forms: sizes by keyword, dtypes inferred."""
    def made(x):
        return (sim.vector(x, x, x, x, x), sim.vector(length=3, dtype=np.float64),
                sim.vector(x, length=4), sim.matrix(x, x, x, x, x, x, shape=(2, 3)),
                sim.matrix(shape=(2, 2), dtype=np.int32), sim.vector(sim.vec3(x), dtype=np.float64),
                sim.matrix(sim.mat22(x)))

    x = np.float32(1.5)
    ints = lambda: (sim.vector(1, 2, 3), sim.matrix(1, 2, 3, 4, shape=(2, 2)))  # noqa: E731
    for got in (ints(), numba.njit(ints)()):  # integer constants are int32, as in Warp
        assert got == (sim.vec3i(1, 2, 3), sim.types.matrix((2, 2), np.int32)(1, 2, 3, 4))
    for got in (numba.njit(made)(x), made(x)):
        expected = (sim.types.vector(5, F32)(1.5), sim.vec3d(), sim.vec4(1.5),
                    sim.types.matrix((2, 3), F32)(1.5), sim.types.matrix((2, 2), np.int32)(0),
                    sim.vec3d(1.5),
                    sim.mat22(1.5))
        for value, want in zip(got, expected):
            assert type(value) is type(want) and value == want


@pytest.mark.parametrize("call, fragment", [
    (lambda: sim.vector(1.0), "the `length` argument must be specified when filling a vector with a value"),
    (lambda: sim.vector(1.0, 2.0, length=3), r"incompatible number of values given \(2\) when constructing a vector of length 3"),
    (lambda: sim.vector(length=0), "length must be at least 1"),
    (lambda: sim.vector(1.0, lenght=3), "unexpected keyword argument 'lenght'"),
    (lambda: sim.vector(sim.vec2(), length=3), "incompatible vector of length 3 given when copy constructing a vector of length 2"),
    (lambda: sim.matrix(1.0, 2.0), "the `shape` argument must be specified when initializing a matrix by value"),
    (lambda: sim.matrix(1.0, shape=3), r"shape must be a \(rows, cols\) tuple"),
    (lambda: sim.matrix(sim.vec2(), sim.vec2()), "matrix_from_rows"),
    (lambda: sim.matrix(shape=(2, 2), dtype=sim.vec3), "dtype must be a scalar type"),
])
def test_vector_and_matrix_builtins_reject_bad_calls(call, fragment):
    with pytest.raises(TypeError, match=fragment):
        call()
    with pytest.raises(TypingError, match=fragment):
        numba.njit(call)()


def test_vector_sizes_must_be_compile_time_constants():
    with pytest.raises(TypingError, match="length must be a compile-time constant int"):
        numba.njit(lambda n: sim.vector(1.0, length=n))(3)


# --------------------------------------------------------------------------
# the kernel language, on the CPU and compiled for CUDA


@sim.func
def _rigid_velocity(x: sim.spatial_vector, r: sim.vec3):
    return sim.velocity_at_point(x, r)


@sim.kernel
def _spatial_kernel(twists: sim.array(dtype=sim.spatial_vector),
                    frames: sim.array(dtype=sim.transform),
                    inertias: sim.array(dtype=sim.spatial_matrix),
                    out_twists: sim.array(dtype=sim.spatial_vector),
                    out_points: sim.array(dtype=sim.vec3),
                    out_mats: sim.array(dtype=sim.mat44)):
    i = sim.tid()
    x = twists[i]
    t = frames[i]
    moved = sim.transform_twist(t, x)
    moved[5] = moved[5] + 1.0
    out_twists[i] = inertias[i] @ moved + sim.spatial_cross(x, moved) * 0.5
    v5 = VEC5(1.0, 2.0, 3.0, 4.0, sim.spatial_dot(x, moved))
    out_points[i] = _rigid_velocity(x, sim.spatial_top(moved)) + sim.vec3(sim.length(v5))
    t2 = sim.transform_set_rotation_copy(t, sim.quat_identity(dtype=sim.float32))
    t2.p = sim.vec3(1.0, 2.0, 3.0)
    out_mats[i] = sim.transform_to_matrix(t2) * sim.transform_to_matrix(t)


def _spatial_inputs():
    rng = np.random.default_rng(5)
    n = 8
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    frames = np.concatenate([rng.normal(size=(n, 3)), q], axis=1).astype(np.float32)
    return [rng.normal(size=(n, 6)).astype(np.float32), frames,
            rng.normal(size=(n, 6, 6)).astype(np.float32), np.zeros((n, 6), np.float32),
            np.zeros((n, 3), np.float32), np.zeros((n, 4, 4), np.float32)]


def test_spatial_kernel_matches_its_python_run():
    inputs = _spatial_inputs()
    sim.launch(_spatial_kernel, dim=8, inputs=inputs, device="cpu")
    twists, frames, inertias = inputs[:3]
    for i in range(8):
        x, t = sim.spatial_vector(*twists[i].tolist()), sim.transform(*frames[i].tolist())
        moved = sim.transform_twist(t, x)
        moved = sim.spatial_vector(*np.asarray(moved)[:5].tolist(), moved[5] + np.float32(1.0))
        inertia = sim.spatial_matrix(*inertias[i].ravel().tolist())
        expected = inertia @ moved + sim.spatial_cross(x, moved) * np.float32(0.5)
        np.testing.assert_array_equal(inputs[3][i], np.asarray(expected))
        v5 = VEC5(1, 2, 3, 4, sim.spatial_dot(x, moved))
        point = sim.velocity_at_point(x, sim.spatial_top(moved)) + sim.vec3(sim.length(v5))
        np.testing.assert_array_equal(inputs[4][i], np.asarray(point))
        t2 = sim.transform(sim.vec3(1, 2, 3), sim.quat(0, 0, 0, 1))
        mats = sim.transform_to_matrix(t2) * sim.transform_to_matrix(t)
        np.testing.assert_array_equal(inputs[5][i], np.asarray(mats))


def test_spatial_kernel_compiles_for_cuda_offline():
    pytest.importorskip("numba.cuda")
    library = _spatial_kernel.compile("cuda", _spatial_inputs(), cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
    assert ".f64" not in library.get_asm_str(cc=(7, 5))


# --------------------------------------------------------------------------
# Warp 1.9's articulation builtins (checked bit for bit against warp.sim 1.9.1's
# eval_rigid_jacobian / eval_rigid_mass when written; here against NumPy)


@sim.kernel
def _articulation_kernel(S: sim.array(dtype=sim.spatial_vector),
                         parents: sim.array(dtype=int), qd_start: sim.array(dtype=int),
                         inertias: sim.array(dtype=sim.spatial_matrix),
                         J: sim.array(dtype=float), M: sim.array(dtype=float)):
    sim.spatial_jacobian(S, parents, qd_start, 0, 4, 0, J)
    sim.spatial_jacobian(S, parents, qd_start, 4, 3, 500, J)
    sim.spatial_mass(inertias, 0, 4, 0, M)
    sim.spatial_mass(inertias, 4, 3, 600, M)


def _articulations():
    rng = np.random.default_rng(3)
    parents = np.array([-1, 0, 1, 1, -1, 4, 5], np.int32)  # two trees: 0-3 and 4-6
    qd_start = np.concatenate([[0], np.cumsum([6, 1, 2, 1, 3, 1, 1])]).astype(np.int32)
    S = rng.normal(size=(qd_start[-1], 6)).astype(np.float32)
    inertias = rng.normal(size=(7, 6, 6)).astype(np.float32)
    return S, parents, qd_start, inertias


def _reference(S, parents, qd_start):
    J, M = np.full(1000, -1.0, np.float32), np.full(1000, -1.0, np.float32)
    for first, count, j_start in ((0, 4, 0), (4, 3, 500)):
        dof0, dofs = qd_start[first], qd_start[first + count] - qd_start[first]
        block = J[j_start:j_start + 6 * count * dofs].reshape(6 * count, dofs)
        for i in range(count):
            j = first + i
            while j != -1:  # joint i's rows hold the subspaces of its own and its ancestors' dofs
                for d in range(qd_start[j], qd_start[j + 1]):
                    block[6 * i:6 * i + 6, d - dof0] = S[d]
                j = parents[j]
    return J, M


def test_articulation_jacobian_and_mass_matrix():
    S, parents, qd_start, inertias = _articulations()
    J_expected, M_expected = _reference(S, parents, qd_start)
    for first, count, m_start in ((0, 4, 0), (4, 3, 600)):
        block = M_expected[m_start:m_start + 36 * count * count].reshape(6 * count, 6 * count)
        for b in range(count):
            block[6 * b:6 * b + 6, 6 * b:6 * b + 6] = inertias[first + b]
    J, M = np.full(1000, -1.0, np.float32), np.full(1000, -1.0, np.float32)
    sim.launch(_articulation_kernel, dim=1, inputs=[S, parents, qd_start, inertias, J, M],
               device="cpu")
    np.testing.assert_array_equal(J, J_expected)
    np.testing.assert_array_equal(M, M_expected)
    J, M = np.full(1000, -1.0, np.float32), np.full(1000, -1.0, np.float32)  # Python mode
    sim.spatial_jacobian(S, parents, qd_start, 0, 4, 0, J)
    sim.spatial_jacobian(S, parents, qd_start, 4, 3, 500, J)
    sim.spatial_mass(inertias, 0, 4, 0, M)
    sim.spatial_mass(inertias, 4, 3, 600, M)
    np.testing.assert_array_equal(J, J_expected)
    np.testing.assert_array_equal(M, M_expected)


def test_articulation_builtins_reject_bad_arguments():
    S, parents, qd_start, inertias = _articulations()
    J = np.zeros(100, np.float64)
    with pytest.raises(TypeError, match="argument 1 must have shape"):
        sim.spatial_mass(S, 0, 1, 0, J)

    def wrong_output(S, parents, qd_start, J):
        sim.spatial_jacobian(sim.view(S, sim.spatial_vector), parents, qd_start, 0, 1, 0, J)

    with pytest.raises(TypingError, match="writable 1-D array of float32"):
        numba.njit(wrong_output)(S, parents, qd_start, J)
    with pytest.raises(TypingError, match="argument 2 must be a 1-D int array"):
        numba.njit(wrong_output)(S, J, qd_start, J)


def test_articulation_builtins_compile_for_cuda_offline():
    pytest.importorskip("numba.cuda")
    S, parents, qd_start, inertias = _articulations()
    inputs = [S, parents, qd_start, inertias, np.zeros(1000, np.float32),
              np.zeros(1000, np.float32)]
    library = _articulation_kernel.compile("cuda", inputs, cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
