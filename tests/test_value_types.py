"""Every value type of the table: Python, compiled CPU code and NumPy agree.

One compiled function per type exercises all of its operations (compile time
dominates the suite), called on random inputs.
"""

import copy
import functools

import numba

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import numba_sim as sim
from numba_sim.types import CLASSES, KIND_MAT, KIND_QUAT, KIND_TRANSFORM, KIND_VEC, VALUE_TABLE

ALL_SPECS = {spec.name: spec for spec in VALUE_TABLE}
COMPILED = {"vec2", "vec3", "vec4", "vec2d", "vec3d", "vec4d", "vec2i", "vec3i", "vec4i",
            "vec3b", "vec4ub", "vec2s", "vec3us", "vec4ui", "vec2l", "vec3ul", "spatial_vector",
            "spatial_vectord", "quat", "quatd", "mat22", "mat33", "mat44", "mat22d", "mat33d",
            "mat44d", "spatial_matrix", "transform", "transformd"}
"""The types compiled here: every float and int32 size, one of each other integer type and the
spatial types (compile time dominates the suite; the other integer types share their code)."""
SPECS = {name: spec for name, spec in ALL_SPECS.items() if name in COMPILED}
VECTOR_LIKE = [n for n, s in SPECS.items() if s.kind in (KIND_VEC, KIND_QUAT)]
MATRICES = [n for n, s in SPECS.items() if s.kind == KIND_MAT]
TRANSFORMS = [n for n, s in SPECS.items() if s.kind == KIND_TRANSFORM]


def random_storage(spec, rng, low=-4.0, high=4.0):
    if spec.is_float:
        return rng.uniform(low, high, spec.shape).astype(spec.dtype)
    low = 1 if spec.dtype.kind == "u" else -9
    values = rng.integers(low, 10, spec.shape).astype(spec.dtype)
    values[values == 0] = 3  # nonzero, so that the values divide
    return values


def make(spec, storage):
    return CLASSES[spec](*np.asarray(storage).reshape(-1).tolist())


def assert_value(result, cls, expected, rtol=1e-6):
    assert type(result) is cls, (type(result), cls)
    np.testing.assert_allclose(np.asarray(result), np.asarray(expected, dtype=cls.spec.dtype),
                               rtol=rtol, atol=rtol)


def c_div(a, b):
    """C's truncating integer division."""
    return (np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)).astype(np.result_type(a))


# --------------------------------------------------------------------------
# vectors and quaternions


@functools.cache
def vector_ops(name):
    cls = sim.__dict__[name]

    def ops(a, b, s, i, comps):
        return (
            a + b, a - b, a * s, s * a, a / s, -a, +a,
            a == b, a != b, a == a,
            a[0], a[i], a.x, a.y, len(a),
            cls(), cls(s), cls(*comps), cls(a),
        )

    return numba.njit(ops), ops


@pytest.mark.parametrize("name", VECTOR_LIKE)
def test_vector_like_agrees_with_numpy(name):
    spec = SPECS[name]
    cls = CLASSES[spec]
    rng = np.random.default_rng(len(name) * spec.size)
    compiled, python = vector_ops(name)
    for trial in range(3):
        a_np, b_np = random_storage(spec, rng), random_storage(spec, rng)
        s = spec.scalar_type(3 if not spec.is_float else rng.uniform(0.5, 2.0))
        i = int(rng.integers(0, spec.size))
        a, b = make(spec, a_np), make(spec, b_np)
        comps = tuple(b_np.tolist())
        for result in (compiled(a, b, s, i, comps), python(a, b, s, i, comps)):
            (add, sub, mul, rmul, div, neg, pos, eq, ne, self_eq, c0, ci, x, y, n,
             zeros, fill, from_comps, copy) = result
            assert_value(add, cls, a_np + b_np)
            assert_value(sub, cls, a_np - b_np)
            assert_value(mul, cls, a_np * s)
            assert_value(rmul, cls, s * a_np)
            assert_value(div, cls, a_np / s if spec.is_float else c_div(a_np, s))
            assert_value(neg, cls, -a_np)
            assert_value(pos, cls, a_np)
            assert eq == bool(np.all(a_np == b_np)) and ne == (not eq) and self_eq
            assert c0 == a_np[0] and ci == a_np[i] and x == a_np[0] and y == a_np[1]
            assert n == spec.size
            assert_value(zeros, cls, np.zeros(spec.shape))
            assert_value(fill, cls, np.full(spec.shape, s))
            assert_value(from_comps, cls, b_np)
            assert_value(copy, cls, a_np)


@pytest.mark.parametrize("name", ["vec3", "vec4d", "vec2i", "quat"])
def test_scalar_dtypes_follow_the_value(name):
    """A scalar meets a value type as the value's dtype: ``vec3 * 0.5`` stays vec3."""
    spec = SPECS[name]
    cls = CLASSES[spec]
    compiled, _ = vector_ops(name)
    a = make(spec, np.arange(1, spec.size + 1))
    for s in (2, np.float32(2), np.float64(2), np.int64(2)) if spec.is_float else (2, np.int64(2)):
        assert type(a * s) is cls and type(s * a) is cls
        assert type(compiled(a, a, s, 0, tuple(range(spec.size)))[2]) is cls


# --------------------------------------------------------------------------
# matrices


@functools.cache
def matrix_ops(name):
    cls = sim.__dict__[name]

    def ops(a, b, v, s, i, j, comps):
        return (
            a + b, a - b, a * s, s * a, a / s, -a,
            a @ b, a * b, a @ v, a * v, v @ a, v * a,
            a[i], a[i, j], a[0, 1], a[1][0], len(a),
            a == b, a == a,
            cls(), cls(s), cls(*comps), cls(a),
        )

    return numba.njit(ops), ops


@pytest.mark.parametrize("name", MATRICES)
def test_matrix_agrees_with_numpy(name):
    spec = SPECS[name]
    cls = CLASSES[spec]
    n = spec.shape[0]
    vec_cls = CLASSES[sim.types.vec_spec(n, spec.dtype)]
    rng = np.random.default_rng(n)
    compiled, python = matrix_ops(name)
    a_np, b_np = random_storage(spec, rng), random_storage(spec, rng)
    v_np = rng.uniform(-2, 2, n).astype(spec.dtype)
    s = spec.scalar_type(1.5)
    i, j = int(rng.integers(0, n)), int(rng.integers(0, n))
    a, b, v = make(spec, a_np), make(spec, b_np), vec_cls(*v_np.tolist())
    comps = tuple(b_np.reshape(-1).tolist())
    tol = 1e-5 if spec.dtype == np.float32 else 1e-12
    for result in (compiled(a, b, v, s, i, j, comps), python(a, b, v, s, i, j, comps)):
        (add, sub, mul, rmul, div, neg, mm, mm_star, mv, mv_star, vm, vm_star,
         row, elem, e01, e10, length, eq, self_eq, zeros, fill, from_comps, copy) = result
        assert_value(add, cls, a_np + b_np)
        assert_value(sub, cls, a_np - b_np)
        assert_value(mul, cls, a_np * s, tol)
        assert_value(rmul, cls, s * a_np, tol)
        assert_value(div, cls, a_np / s, tol)
        assert_value(neg, cls, -a_np)
        assert_value(mm, cls, a_np @ b_np, tol)
        assert_value(mm_star, cls, a_np @ b_np, tol)
        assert_value(mv, vec_cls, a_np @ v_np, tol)
        assert_value(mv_star, vec_cls, a_np @ v_np, tol)
        assert_value(vm, vec_cls, v_np @ a_np, tol)
        assert_value(vm_star, vec_cls, v_np @ a_np, tol)
        assert_value(row, vec_cls, a_np[i])
        assert elem == a_np[i, j] and e01 == a_np[0, 1] and e10 == a_np[1, 0]
        assert length == n and self_eq and eq == bool(np.all(a_np == b_np))
        assert_value(zeros, cls, np.zeros(spec.shape))
        assert_value(fill, cls, np.full(spec.shape, s))
        assert_value(from_comps, cls, b_np)
        assert_value(copy, cls, a_np)


# --------------------------------------------------------------------------
# quaternion and transform products against SciPy's rotations


@functools.cache
def products():
    def ops(q, r, t, u):
        return q * r, t * u, t.p, t.q, sim.transformd(t.p, t.q), sim.quatd(t.p, q.w)

    return numba.njit(ops), ops


def random_unit_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def as_matrix(p, q):
    m = np.eye(4)
    m[:3, :3] = Rotation.from_quat(q).as_matrix()
    m[:3, 3] = p
    return m


def test_quat_and_transform_products_match_scipy():
    rng = np.random.default_rng(7)
    compiled, python = products()
    for trial in range(5):
        q_np, r_np = random_unit_quat(rng), random_unit_quat(rng)
        p1, p2 = rng.uniform(-3, 3, 3), rng.uniform(-3, 3, 3)
        q, r = sim.quatd(*q_np), sim.quatd(*r_np)
        t = sim.transformd(*p1, *q_np)
        u = sim.transformd(*p2, *r_np)
        expected_q = (Rotation.from_quat(q_np) * Rotation.from_quat(r_np)).as_quat()
        expected_t = as_matrix(p1, q_np) @ as_matrix(p2, r_np)
        for qr, tu, tp, tq, rebuilt, from_xyz_w in (compiled(q, r, t, u), python(q, r, t, u)):
            assert type(qr) is sim.quatd and type(tu) is sim.transformd
            got = np.asarray(qr)
            assert np.allclose(got, expected_q, atol=1e-12) or np.allclose(got, -expected_q, atol=1e-12)
            tu_np = np.asarray(tu)
            np.testing.assert_allclose(as_matrix(tu_np[:3], tu_np[3:]), expected_t, atol=1e-12)
            assert type(tp) is sim.vec3d and type(tq) is sim.quatd
            np.testing.assert_array_equal(np.asarray(rebuilt), np.asarray(t))
            np.testing.assert_array_equal(np.asarray(from_xyz_w), [*p1, q_np[3]])


# --------------------------------------------------------------------------
# layouts (Warp's memory order)


def test_layouts_follow_warp():
    m = sim.mat33(1, 2, 3, 4, 5, 6, 7, 8, 9)
    assert tuple(m[0]) == (1, 2, 3) and m[0, 2] == 3 and m[2, 0] == 7
    assert np.asarray(m).shape == (3, 3) and np.asarray(m).dtype == np.float32
    assert np.asarray(sim.quat(1, 2, 3, 4))[-1] == 4 and sim.quat(1, 2, 3, 4).w == 4
    t = sim.transform(sim.vec3(1, 2, 3), sim.quat(0, 0, 0, 1))
    np.testing.assert_array_equal(np.asarray(t), [1, 2, 3, 0, 0, 0, 1])
    assert tuple(sim.transform()) == (0, 0, 0, 0, 0, 0, 1)  # Warp's Python default: identity
    assert tuple(sim.quat()) == (0, 0, 0, 0)  # as Warp
    assert np.asarray(sim.vec3d(1, 2, 3)).dtype == np.float64
    assert np.asarray(sim.vec3i(1, 2, 3)).dtype == np.int32
    assert sim.vec3f is sim.vec3 and sim.mat33f is sim.mat33 and sim.quatf is sim.quat


@pytest.mark.parametrize("name", sorted(ALL_SPECS))
def test_python_class_protocols(name):
    spec = ALL_SPECS[name]
    cls = CLASSES[spec]
    v = make(spec, np.arange(1, spec.size + 1).reshape(spec.shape))
    assert repr(v).startswith(f"{spec.warp_name}([")  # Warp's: vec3f([1.0, 2.0, 3.0])
    assert v == make(spec, np.asarray(v)) and v == np.asarray(v).tolist()
    with pytest.raises(TypeError, match="unhashable"):  # mutable, as Warp's
        hash(v)
    np.testing.assert_array_equal(np.asarray(v), np.arange(1, spec.size + 1).reshape(spec.shape))
    w = copy.copy(v)
    w[0] = w[0] * 2  # in place, the copy only
    assert w[0] == 2 * v[0] and w != v
    with pytest.raises(AttributeError, match="no attribute 'xy'"):  # components only, as Warp
        v.xy = 1.0
    import pickle

    assert pickle.loads(pickle.dumps(v)) == v
    assert cls() == make(spec, np.zeros(spec.shape)) or spec.kind == KIND_TRANSFORM


def test_matrix_products_match_warp_bit_for_bit():
    """Warp accumulates matrix products with fused multiply-adds; so do we (and Python mode)."""
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    rng = np.random.default_rng(11)
    a = rng.normal(size=(64, 3, 3)).astype(np.float32)
    b = rng.normal(size=(64, 3, 3)).astype(np.float32)

    @wp.kernel
    def warp_product(x: wp.array(dtype=wp.mat33), y: wp.array(dtype=wp.mat33),
                     z: wp.array(dtype=wp.mat33)):
        i = wp.tid()
        z[i] = x[i] @ y[i]

    out = wp.zeros(len(a), dtype=wp.mat33, device="cpu")
    wp.launch(warp_product, dim=len(a), device="cpu",
              inputs=[wp.array(a, dtype=wp.mat33, device="cpu"),
                      wp.array(b, dtype=wp.mat33, device="cpu"), out])
    expected = out.numpy()
    compiled, python = matrix_ops("mat33")
    for i in range(len(a)):
        x, y = sim.mat33(*a[i].ravel()), sim.mat33(*b[i].ravel())
        v = sim.vec3(1, 2, 3)
        for result in (compiled(x, y, v, np.float32(1), 0, 0, tuple(range(9))),
                       python(x, y, v, np.float32(1), 0, 0, tuple(range(9)))):
            np.testing.assert_array_equal(np.asarray(result[6]), expected[i])  # a @ b
            np.testing.assert_array_equal(np.asarray(result[7]), expected[i])  # a * b


@sim.kernel
def default_transforms(t: sim.array(dtype=sim.transform), td: sim.array(dtype=sim.transformd)):
    a = sim.transform()
    a[6] += 7.0
    t[0] = a
    td[0] = sim.transformd()


def test_default_transform_is_zeros_in_kernels_as_warp():
    """Warp's kernels give ``transform()`` all zeros (its Python scope: the identity)."""
    t, td = np.full((1, 7), 5.0, np.float32), np.full((1, 7), 5.0)
    sim.launch(default_transforms, dim=1, inputs=[t, td])
    assert t.tolist() == [[0, 0, 0, 0, 0, 0, 7]] and td.tolist() == [[0] * 7]
    assert tuple(sim.transformd()) == (0, 0, 0, 0, 0, 0, 1)
