"""numba_sim.optim: Warp's SGD and Adam (docs/autodiff.md, "Optimisers and gradient checks").

The updates are checked against independent NumPy statements of the algorithms (PyTorch's
SGD, Kingma and Ba's Adam) in float64, and both optimisers minimise a quadratic through
the tape to its known minimum.
"""

import numpy as np
import pytest

import numba_sim as sim
import numba_sim.optim as optim
from numba_sim.autodiff.gradients import has_grad

TARGET = np.array([0.5, -1.25, 2.0, 0.75, -0.3, 1.1], dtype=np.float64)
WEIGHTS = np.array([1.0, 2.0, 0.5, 3.0, 1.5, 0.8], dtype=np.float64)


@sim.kernel
def weighted_quadratic(x: sim.array(dtype=float), target: sim.array(dtype=float),
                       weights: sim.array(dtype=float), loss: sim.array(dtype=float)):
    i = sim.tid()
    d = x[i] - target[i]
    sim.atomic_add(loss, 0, 0.5 * weights[i] * d * d)


@sim.kernel
def vec3_distance(x: sim.array(dtype=sim.vec3), target: sim.vec3, loss: sim.array(dtype=float)):
    i = sim.tid()
    d = x[i] - target
    sim.atomic_add(loss, 0, sim.dot(d, d))


def sgd_reference(params, grads, lr, momentum, dampening, weight_decay, nesterov):
    """torch.optim.SGD, step by step, in float64."""
    x, b = params.copy(), None
    for g in grads:
        g = g + weight_decay * x
        if momentum != 0.0:
            b = g.copy() if b is None else momentum * b + (1.0 - dampening) * g
            g = g + momentum * b if nesterov else b
        x = x - lr * g
    return x


def adam_reference(params, grads, lr, beta1, beta2, eps):
    """Adam (Kingma and Ba, algorithm 1), in float64."""
    x, m, v = params.copy(), np.zeros_like(params), np.zeros_like(params)
    for t, g in enumerate(grads, start=1):
        m = beta1 * m + (1.0 - beta1) * g
        v = beta2 * v + (1.0 - beta2) * g * g
        x = x - lr * (m / (1.0 - beta1 ** t)) / (np.sqrt(v / (1.0 - beta2 ** t)) + eps)
    return x


@pytest.fixture(scope="module")
def random_steps():
    rng = np.random.default_rng(7)
    return rng.normal(size=(3, 4)), [rng.normal(size=(3, 4)) for _ in range(6)]


@pytest.mark.parametrize("options", [
    dict(momentum=0.0),
    dict(momentum=0.9, dampening=0.25),
    dict(momentum=0.8, nesterov=True, weight_decay=0.05),
])
def test_sgd_follows_the_algorithm(random_steps, options):
    start, grads = random_steps
    params = start.copy()
    opt = optim.SGD([params], lr=0.05, **options)
    for g in grads:
        opt.step([g.copy()])
    full = dict(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False) | options
    np.testing.assert_allclose(params, sgd_reference(start, grads, 0.05, **full),
                               rtol=1e-12, atol=1e-14)
    assert opt.t == len(grads)


def test_adam_follows_the_algorithm(random_steps):
    start, grads = random_steps
    params = start.copy()
    opt = optim.Adam([params], lr=0.01, betas=(0.8, 0.99), eps=1e-6)
    for g in grads:
        opt.step([g])
    np.testing.assert_allclose(params, adam_reference(start, grads, 0.01, 0.8, 0.99, 1e-6),
                               rtol=1e-12, atol=1e-14)


def _minimise(opt, x, steps):
    target, weights = TARGET.astype(np.float32), WEIGHTS.astype(np.float32)
    loss = sim.zeros(1, dtype=float, requires_grad=True)
    tape = sim.Tape()
    for _ in range(steps):
        tape.reset()
        loss[0] = 0
        with tape:
            sim.launch(weighted_quadratic, len(x), inputs=[x, target, weights, loss])
        tape.backward(loss=loss)
        opt.step([sim.grad(x)])
    return float(loss[0])


def test_sgd_with_momentum_minimises_a_quadratic():
    x = sim.zeros(len(TARGET), dtype=float, requires_grad=True)
    last_loss = _minimise(optim.SGD([x], lr=0.1, momentum=0.5), x, 150)
    np.testing.assert_allclose(x, TARGET, atol=1e-4)
    assert last_loss < 1e-7


def test_adam_minimises_a_quadratic_of_vec3():
    target = sim.vec3(1.0, -2.0, 0.5)
    x = sim.from_numpy(np.zeros((4, 3), dtype=np.float32), dtype=sim.vec3, requires_grad=True)
    opt = optim.Adam([x], lr=0.05)
    loss = sim.zeros(1, dtype=float, requires_grad=True)
    tape = sim.Tape()
    for _ in range(400):
        tape.reset()
        loss[0] = 0
        with tape:
            sim.launch(vec3_distance, len(x), inputs=[x, target, loss])
        tape.backward(loss=loss)
        opt.step([sim.grad(x)])
    np.testing.assert_allclose(x, np.tile([1.0, -2.0, 0.5], (4, 1)), atol=2e-3)


def test_a_value_type_array_is_updated_componentwise(random_steps):
    """Adam of a (n, 3) vec3 array is Adam of its scalars (Warp's vec3 kernel: cw_mul,
    componentwise sqrt, cw_div)."""
    start, grads = random_steps
    as_vectors = start[:, :3].astype(np.float32)
    as_scalars = as_vectors.reshape(-1).copy()
    opt_vectors, opt_scalars = optim.Adam([as_vectors], lr=0.1), optim.Adam([as_scalars], lr=0.1)
    for g in grads:
        g = g[:, :3].astype(np.float32)
        opt_vectors.step([g])
        opt_scalars.step([g.reshape(-1)])
    np.testing.assert_array_equal(as_vectors.reshape(-1), as_scalars)


def test_float32_updates_are_float32_arithmetic():
    params = np.array([1.0, 2.0], dtype=np.float32)
    optim.SGD([params], lr=0.1).step([np.array([0.1, 0.2], dtype=np.float32)])
    expected = np.float32([1.0, 2.0]) - np.float32(0.1) * np.float32([0.1, 0.2])
    assert params.dtype == np.float32
    np.testing.assert_array_equal(params, expected)


def test_state_follows_set_params_and_reset():
    a = np.zeros(3, dtype=np.float32)
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    opt.step([np.ones(3, dtype=np.float32)])
    buffer = opt.b[0]
    np.testing.assert_array_equal(buffer, 1.0)
    opt.set_params([np.zeros(3, dtype=np.float32)])
    assert opt.b[0] is buffer  # same shape and dtype: the momentum is kept
    opt.set_params([np.zeros(4, dtype=np.float32)])
    assert opt.b[0].shape == (4,) and not opt.b[0].any()
    opt.reset_internal_state()
    assert opt.t == 0
    adam = optim.Adam([a])
    adam.step([np.ones(3, dtype=np.float32)])
    assert adam.m[0].any() and adam.v[0].any()
    adam.reset_internal_state()
    assert not adam.m[0].any() and not adam.v[0].any() and adam.t == 0


def test_buffers_have_no_gradient_of_their_own():
    x = sim.zeros(3, dtype=float, requires_grad=True)
    opt = optim.Adam([x])
    assert not has_grad(opt.m[0])


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam])
def test_errors_name_what_is_wrong(cls):
    name = cls.__name__
    with pytest.raises(RuntimeError, match=rf"{name} parameters must be set before calling step"):
        cls().step([])
    params = np.zeros(2, dtype=np.float32)
    opt = cls([params])
    with pytest.raises(TypeError, match=f"{name} gradient dtype must match parameter dtype "
                                        "float32, got int32"):
        opt.step([np.zeros(2, dtype=np.int32)])
    with pytest.raises(ValueError, match=rf"{name} gradient shape must match parameter shape "
                                         r"\(2,\), got \(3,\)"):
        opt.step([np.zeros(3, dtype=np.float32)])
    with pytest.raises(ValueError, match=r"grad: expected a list of 1 gradient"):
        opt.step(np.zeros(2, dtype=np.float32))
    with pytest.raises(RuntimeError, match=r"params\[0\]: unsupported dtype int32"):
        cls([np.zeros(2, dtype=np.int32)])
    with pytest.raises(ValueError, match=r"params\[1\]: expected a C-contiguous array"):
        cls([params, np.zeros((4, 4), dtype=np.float32)[:, 0]])
    with pytest.raises(TypeError, match=r"params\[0\]: expected a NumPy or CuPy array"):
        cls([[1.0, 2.0]])


def test_cupy_arrays_are_updated_on_the_gpu():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA device")
    except Exception:
        pytest.skip("no usable CUDA device")
    start = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    grads = [np.array([0.5, 0.25, -1.0], dtype=np.float32)] * 3
    on_gpu, on_cpu = cupy.asarray(start), start.copy()
    gpu, cpu = optim.Adam([on_gpu], lr=0.1), optim.Adam([on_cpu], lr=0.1)
    for g in grads:
        gpu.step([cupy.asarray(g)])
        cpu.step([g])
    np.testing.assert_allclose(cupy.asnumpy(on_gpu), on_cpu, rtol=1e-6)
