"""svd3, svd2, qr3 and eig3: Warp's numbers bit for bit on the CPU (float32 and float64),
Warp's output-argument statements in kernels, the decompositions' identities, Python mode,
and an offline CUDA compile-and-link."""

import importlib.util
import sys

import numpy as np
import pytest

import numba_sim as sim

N = 64

BODY = """
def decompositions(a3: M.array(dtype=M.MAT33), a2: M.array(dtype=M.MAT22),
                   u3: M.array(dtype=M.MAT33), s3: M.array(dtype=M.VEC3),
                   v3: M.array(dtype=M.MAT33), u2: M.array(dtype=M.MAT22),
                   s2: M.array(dtype=M.VEC2), v2: M.array(dtype=M.MAT22),
                   q3: M.array(dtype=M.MAT33), r3: M.array(dtype=M.MAT33),
                   e3: M.array(dtype=M.MAT33), d3: M.array(dtype=M.VEC3)):
    i = M.tid()
    U = M.MAT33()
    sigma = M.VEC3()
    V = M.MAT33()
    M.svd3(a3[i], U, sigma, V)
    u3[i] = U
    s3[i] = sigma
    v3[i] = V
    U2 = M.MAT22()
    sigma2 = M.VEC2()
    V2 = M.MAT22()
    M.svd2(a2[i], U2, sigma2, V2)
    u2[i] = U2
    s2[i] = sigma2
    v2[i] = V2
    Q = M.MAT33()
    R = M.MAT33()
    M.qr3(a3[i], Q, R)
    q3[i] = Q
    r3[i] = R
    symmetric = a3[i] + M.transpose(a3[i])
    E = M.MAT33()
    d = M.VEC3()
    M.eig3(symmetric, E, d)
    e3[i] = E
    d3[i] = d
"""

NAMES = {np.float32: dict(MAT33="mat33", MAT22="mat22", VEC3="vec3", VEC2="vec2"),
         np.float64: dict(MAT33="mat33d", MAT22="mat22d", VEC3="vec3d", VEC2="vec2d")}
SHAPES = [(3, 3), (2, 2), (3, 3), (3,), (3, 3), (2, 2), (2,), (2, 2), (3, 3), (3, 3), (3, 3),
          (3,)]


def load(tmp_path, module, decorator, dtype):
    name = f"decompositions_{module}_{np.dtype(dtype).name}"
    source = BODY
    for key, value in NAMES[dtype].items():
        source = source.replace(f"M.{key}", f"M.{value}")
    path = tmp_path / f"{name}.py"
    header = "import warp as wp" if decorator.startswith("wp.") else "import numba_sim as sim"
    path.write_text(f"{header}\nM = {module}\n@{decorator}\n"
                    + source)
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded.decompositions


def inputs(dtype):
    rng = np.random.default_rng(29)
    a3 = rng.normal(size=(N, 3, 3))
    a3[0] = np.eye(3)
    a3[1] = [[1, 2, 3], [2, 4, 6], [1, 0, 1]]  # rank 2
    a3[2] = 0.0
    a2 = rng.normal(size=(N, 2, 2))
    a2[0] = 2 * np.eye(2)  # a repeated singular value
    a2[1] = [[1, 2], [2, 4]]  # rank 1
    arrays = [a3, a2] + [np.zeros((N,) + shape) for shape in SHAPES[2:]]
    return [x.astype(dtype) for x in arrays]


@pytest.fixture(scope="module", params=[np.float32, np.float64], ids=["float32", "float64"])
def ours(request, tmp_path_factory):
    dtype = request.param
    kernel = load(tmp_path_factory.mktemp("ours"), "sim", "sim.kernel", dtype)
    arrays = inputs(dtype)
    sim.launch(kernel, dim=N, inputs=arrays)
    return dtype, kernel, arrays


def test_decompositions_match_warp_bit_for_bit(ours, tmp_path):
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    dtype, _, got = ours
    kernel = load(tmp_path, "wp", "wp.kernel", dtype)
    arrays = inputs(dtype)
    types = [getattr(wp, NAMES[dtype][k]) for k in
             ("MAT33", "MAT22", "MAT33", "VEC3", "MAT33", "MAT22", "VEC2", "MAT22", "MAT33",
              "MAT33", "MAT33", "VEC3")]
    warp_arrays = [wp.array(x, dtype=t, device="cpu") for x, t in zip(arrays, types)]
    wp.launch(kernel, dim=N, inputs=warp_arrays, device="cpu")
    width = np.uint32 if dtype == np.float32 else np.uint64
    names = ["u3", "s3", "v3", "u2", "s2", "v2", "q3", "r3", "e3", "d3"]
    for name, ours_array, theirs in zip(names, got[2:], warp_arrays[2:]):
        expected = theirs.numpy()
        np.testing.assert_array_equal(ours_array.view(width), expected.view(width), err_msg=name)


def test_decompositions_are_decompositions(ours):
    dtype, _, (a3, a2, u3, s3, v3, u2, s2, v2, q3, r3, e3, d3) = ours
    tolerance = 2e-5 if dtype == np.float32 else 1e-12
    eye3 = np.broadcast_to(np.eye(3), (N, 3, 3))

    def close(x, y, atol=tolerance * 10):
        np.testing.assert_allclose(x, y, atol=atol)

    # 4 Jacobi sweeps in float32 (Warp's choice) leave up to ~1e-3 of A^T A off the diagonal
    jacobi = 1e-2 if dtype == np.float32 else 1e-10
    close(u3 @ (s3[:, :, None] * np.swapaxes(v3, 1, 2)), a3, jacobi)
    close(u2 @ (s2[:, :, None] * np.swapaxes(v2, 1, 2)), a2)
    close(np.swapaxes(v3, 1, 2) @ v3, eye3)
    assert (np.abs(s3[:, 0]) >= np.abs(s3[:, 1]) - tolerance).all()
    close(q3 @ r3, a3)
    close(np.swapaxes(q3, 1, 2) @ q3, eye3)
    close(np.tril(r3, -1), 0)
    symmetric = a3 + np.swapaxes(a3, 1, 2)
    close(np.sort(d3, axis=1), np.linalg.eigvalsh(symmetric.astype(np.float64)), jacobi)
    close(e3 @ (d3[:, :, None] * np.swapaxes(e3, 1, 2)), symmetric, jacobi)


def test_python_mode_gives_the_compiled_numbers(ours):
    dtype, _, (a3, a2, u3, s3, v3, u2, s2, v2, q3, r3, e3, d3) = ours
    names = NAMES[dtype]
    mat33, mat22 = getattr(sim, names["MAT33"]), getattr(sim, names["MAT22"])
    for i in range(0, N, 9):
        a = mat33(*a3[i].reshape(-1))
        u, s, v = sim.svd3(a)
        assert np.array_equal(np.asarray(u), u3[i]) and np.array_equal(np.asarray(s), s3[i])
        assert np.array_equal(np.asarray(v), v3[i])
        u, s, v = sim.svd2(mat22(*a2[i].reshape(-1)))
        assert np.array_equal(np.asarray(s), s2[i]) and np.array_equal(np.asarray(u), u2[i])
        q, r = sim.qr3(a)
        assert np.array_equal(np.asarray(q), q3[i]) and np.array_equal(np.asarray(r), r3[i])
        e, d = sim.eig3(a + sim.transpose(a))
        assert np.array_equal(np.asarray(e), e3[i]) and np.array_equal(np.asarray(d), d3[i])


def test_wrong_arguments_name_the_accepted_forms():
    with pytest.raises(TypeError, match=r"svd3\(mat33\)"):
        sim.svd3(sim.mat22())
    with pytest.raises(TypeError, match=r"expected qr3\(mat33\)"):
        sim.qr3(sim.vec3i(1, 2, 3))


def test_decompositions_compile_and_link_for_cuda(ours):
    dtype, kernel, _ = ours
    library = kernel.compile("cuda", inputs(dtype), cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


# --------------------------------------------------------------------------
# Gradients: Warp's statement form differentiates as the tuple form, and eig3's adjoint is
# Warp's spectral formula (exact at repeated eigenvalues)


@sim.kernel
def qr_statement_loss(a: sim.array(dtype=sim.mat33d), out: sim.array(dtype=sim.float64)):
    Q = sim.mat33d()
    R = sim.mat33d()
    sim.qr3(a[0], Q, R)
    out[0] = 2.0 * Q[0, 1] + R[1, 2]


@sim.kernel
def qr_tuple_loss(a: sim.array(dtype=sim.mat33d), out: sim.array(dtype=sim.float64)):
    Q, R = sim.qr3(a[0])
    out[0] = 2.0 * Q[0, 1] + R[1, 2]


@sim.kernel
def eigenvalue_loss(a: sim.array(dtype=sim.mat33d), out: sim.array(dtype=sim.float64)):
    i = sim.tid()
    E = sim.mat33d()
    d = sim.vec3d()
    sim.eig3(a[i], E, d)
    out[i] = sim.dot(d, d)


@sim.kernel
def eigenvector_loss(a: sim.array(dtype=sim.mat33d), w: sim.array(dtype=sim.mat33d),
                     out: sim.array(dtype=sim.float64)):
    i = sim.tid()
    E, d = sim.eig3(a[i])
    out[i] = sim.ddot(sim.mat33d(sim.abs(E[0, 0]), sim.abs(E[0, 1]), sim.abs(E[0, 2]),
                                 sim.abs(E[1, 0]), sim.abs(E[1, 1]), sim.abs(E[1, 2]),
                                 sim.abs(E[2, 0]), sim.abs(E[2, 1]), sim.abs(E[2, 2])), w[0])


def _gradient(kernel, a, *extra):
    a = sim.array(a, dtype=sim.mat33d, requires_grad=True)
    out = sim.zeros(a.shape[0], dtype=sim.float64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(kernel, dim=a.shape[0], inputs=[a, *extra], outputs=[out])
    tape.backward(grads=[(out, np.ones_like(out))])
    return out.copy(), sim.grad(a).copy()


def test_statement_form_has_the_tuple_forms_gradient():
    a = (0.5 * (np.random.default_rng(3).standard_normal((1, 3, 3)) + np.eye(3)))
    loss, statement = _gradient(qr_statement_loss, a)
    _, tuple_form = _gradient(qr_tuple_loss, a)
    assert np.abs(statement).max() > 0.1
    np.testing.assert_array_equal(statement, tuple_form)
    h = 1e-6
    for i, j in ((0, 0), (1, 2), (2, 1)):
        plus, minus = a.copy(), a.copy()
        plus[0, i, j] += h
        minus[0, i, j] -= h
        numeric = (_gradient(qr_tuple_loss, plus)[0] - _gradient(qr_tuple_loss, minus)[0]) / (2 * h)
        np.testing.assert_allclose(statement[0, i, j], numeric[0], atol=1e-6)


def test_eigenvalue_gradient_is_exact_at_repeated_eigenvalues():
    rotation = np.array(((1.0, 2.0, 2.0), (2.0, 1.0, -2.0), (-2.0, 2.0, -1.0))) / 3.0
    a = np.array([np.diag([2.0, 2.0, 3.0]), np.eye(3), np.zeros((3, 3)),
                  rotation @ np.diag([2.0, 2.0, 3.0]) @ rotation.T, np.diag([1.0, 2.0, 3.0])])
    loss, gradient = _gradient(eigenvalue_loss, a)
    np.testing.assert_allclose(loss, np.sum(a * a, axis=(1, 2)), atol=1e-12)
    np.testing.assert_allclose(gradient, 2.0 * a, atol=1e-10)  # d trace(A^2) / dA


def test_eigenvector_gradient_matches_central_differences():
    rng = np.random.default_rng(5)
    b = rng.standard_normal((2, 3, 3))
    a = b + np.swapaxes(b, 1, 2)  # symmetric, distinct eigenvalues
    w = sim.array(rng.standard_normal((1, 3, 3)), dtype=sim.mat33d)
    _, gradient = _gradient(eigenvector_loss, a, w)
    h = 1e-6
    for k, i, j in ((0, 1, 0), (1, 2, 2), (1, 2, 1)):
        plus, minus = a.copy(), a.copy()
        plus[k, i, j] += h  # eig3 reads the lower triangle: a symmetric perturbation
        minus[k, i, j] -= h
        numeric = (_gradient(eigenvector_loss, plus, w)[0] -
                   _gradient(eigenvector_loss, minus, w)[0])[k] / (2 * h)
        symmetric = gradient[k, i, j] + (gradient[k, j, i] if i != j else 0.0)
        np.testing.assert_allclose(symmetric, numeric, rtol=1e-4, atol=1e-6)
