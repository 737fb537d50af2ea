"""numba_sim.autograd: Warp's jacobian, jacobian_fd, gradcheck, gradcheck_tape
(docs/autodiff.md, "Optimisers and gradient checks").

Jacobians are checked against the analytic ones, and gradcheck against a custom adjoint
that is known wrong.
"""

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.autograd import gradcheck, gradcheck_tape, jacobian, jacobian_fd


@sim.kernel
def coupled(a: sim.array(dtype=sim.float64), b: sim.array(dtype=sim.vec3d),
            out: sim.array(dtype=sim.vec2d)):
    i = sim.tid()
    out[i] = sim.vec2d(a[i] * b[i][0] * b[i][1], sim.sin(a[i]) + b[i][2] * b[i][2])


@sim.kernel
def square(x: sim.array(dtype=float), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i] = x[i] * x[i]


@sim.kernel
def triple(y: sim.array(dtype=float), z: sim.array(dtype=float)):
    i = sim.tid()
    z[i] = 3.0 * y[i]


@sim.func
def cube(x: float):
    return x * x * x


@sim.func_grad(cube)
def adj_cube_wrong(x: float, adj: float):
    sim.adjoint[x] += 2.0 * x * x * adj  # should be 3 x^2


@sim.kernel
def cube_kernel(x: sim.array(dtype=float), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i] = cube(x[i])


@sim.kernel(enable_backward=False)
def square_no_backward(x: sim.array(dtype=float), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i] = x[i] * x[i]


A = np.array([0.5, -1.2])
B = np.array([[1.0, 2.0, -0.5], [0.3, -0.7, 1.5]])


def coupled_arguments():
    a = sim.from_numpy(A, dtype=sim.float64, requires_grad=True)
    b = sim.from_numpy(B, dtype=sim.vec3d, requires_grad=True)
    out = sim.zeros(2, dtype=sim.vec2d, requires_grad=True)
    return a, b, out


def analytic_coupled():
    """d out / d a (4 x 2) and d out / d b (4 x 6); rows: out[0].x, out[0].y, out[1].x, ..."""
    da, db = np.zeros((4, 2)), np.zeros((4, 6))
    for i in range(2):
        x, y, z = B[i]
        da[2 * i, i], da[2 * i + 1, i] = x * y, np.cos(A[i])
        db[2 * i, 3 * i:3 * i + 2] = A[i] * y, A[i] * x
        db[2 * i + 1, 3 * i + 2] = 2 * z
    return da, db


def test_kernel_jacobians_are_the_analytic_ones():
    a, b, out = coupled_arguments()
    da, db = analytic_coupled()
    jacobians = jacobian(coupled, dim=2, inputs=[a, b], outputs=[out])
    assert sorted(jacobians) == [(0, 0), (1, 0)]
    assert jacobians[0, 0].shape == (4, 2) and jacobians[1, 0].shape == (4, 6)
    np.testing.assert_allclose(jacobians[0, 0], da, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jacobians[1, 0], db, rtol=1e-12, atol=1e-14)
    fd = jacobian_fd(coupled, dim=2, inputs=[a, b], outputs=[out], eps=1e-6)
    np.testing.assert_allclose(fd[0, 0], da, atol=1e-8)
    np.testing.assert_allclose(fd[1, 0], db, atol=1e-8)
    np.testing.assert_array_equal(a, A)  # the perturbed inputs are put back
    np.testing.assert_array_equal(out, 0.0)  # the kernel's outputs went to copies


def test_masks_and_limits():
    a, b, out = coupled_arguments()
    by_name = jacobian(coupled, dim=2, inputs=[a, b], outputs=[out], input_output_mask=[("b", "out")],
                       max_outputs_per_var=3)
    assert sorted(by_name) == [(1, 0)]
    assert np.isnan(by_name[1, 0][3:]).all() and not np.isnan(by_name[1, 0][:3]).any()
    by_index = jacobian_fd(coupled, dim=2, inputs=[a, b], outputs=[out],
                           input_output_mask=[(0, 0)], max_inputs_per_var=1)
    assert sorted(by_index) == [(0, 0)]
    assert np.isnan(by_index[0, 0][:, 1:]).all() and not np.isnan(by_index[0, 0][:, 0]).any()
    with pytest.raises(ValueError, match="input_output_mask: 'c' is not an argument of coupled"):
        jacobian(coupled, dim=2, inputs=[a, b], outputs=[out], input_output_mask=[("c", "out")])


def test_a_function_of_two_launches():
    """The intermediate array's gradient is zeroed between rows (each row is one backward
    pass), so the Jacobian of z = 3 x^2 is diag(6 x)."""
    x = sim.from_numpy(np.array([1.0, -2.0, 0.5], dtype=np.float32), requires_grad=True)

    def pipeline(x):
        y = sim.zeros_like(x)  # has a gradient, as x has (Warp's zeros_like)
        z = sim.zeros_like(x)
        sim.launch(square, len(x), inputs=[x, y])
        sim.launch(triple, len(x), inputs=[y, z])
        return z

    expected = np.diag(6.0 * np.array([1.0, -2.0, 0.5]))
    np.testing.assert_allclose(jacobian(pipeline, inputs=[x])[0, 0], expected, rtol=1e-6)
    np.testing.assert_allclose(jacobian_fd(pipeline, inputs=[x], eps=1e-3)[0, 0], expected,
                               rtol=1e-3)
    assert gradcheck(pipeline, inputs=[x], show_summary=False)


def test_inputs_a_function_mutates_are_restored():
    x0 = np.array([1.0, 2.0], dtype=np.float32)
    x = sim.from_numpy(x0, requires_grad=True)

    def mutating(x):
        x += 1.0  # on the host, before the launch reads it
        y = sim.zeros_like(x)
        sim.launch(square, len(x), inputs=[x, y])
        return y

    fd = jacobian_fd(mutating, inputs=[x], eps=1e-3)[0, 0]
    np.testing.assert_allclose(fd, np.diag(2.0 * (x0 + 1.0)), rtol=1e-3)
    np.testing.assert_array_equal(x, x0)
    jacobian(mutating, inputs=[x])
    np.testing.assert_array_equal(x, x0)


def test_gradcheck_flags_a_wrong_custom_adjoint(capsys):
    x = sim.from_numpy(np.array([1.0, 2.0, -1.5], dtype=np.float32), requires_grad=True)
    y = sim.zeros(3, dtype=float, requires_grad=True)
    ad = jacobian(cube_kernel, dim=3, inputs=[x], outputs=[y])[0, 0]
    np.testing.assert_allclose(ad, np.diag(2.0 * np.asarray(x) ** 2), rtol=1e-6)  # the wrong one
    assert not gradcheck(cube_kernel, dim=3, inputs=[x], outputs=[y], raise_exception=False)
    printed = capsys.readouterr().out
    assert "FAIL" in printed and "Gradient check for kernel cube_kernel failed" in printed
    with pytest.raises(ValueError, match="Gradient check failed for kernel cube_kernel, input 0, "
                                         "output 0: finite difference and autodiff"):
        gradcheck(cube_kernel, dim=3, inputs=[x], outputs=[y], show_summary=False)
    assert gradcheck(square, dim=3, inputs=[x], outputs=[y])
    assert "Gradient check for kernel square passed" in capsys.readouterr().out


def test_gradcheck_tape_checks_each_recorded_kernel():
    x = sim.from_numpy(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    y = sim.zeros(2, dtype=float, requires_grad=True)
    z = sim.zeros(2, dtype=float, requires_grad=True)
    w = sim.zeros(2, dtype=float, requires_grad=True)
    with sim.Tape() as tape:
        sim.launch(square, 2, inputs=[x], outputs=[y])
        sim.launch(triple, 2, inputs=[y], outputs=[z])
        sim.launch(cube_kernel, 2, inputs=[z], outputs=[w])
    assert not gradcheck_tape(tape, raise_exception=False, show_summary=False)
    assert gradcheck_tape(tape, blacklist_kernels=["cube_kernel"], show_summary=False)
    assert gradcheck_tape(tape, whitelist_kernels=[square.key, "triple"], show_summary=False)
    assert not gradcheck_tape(tape, skip_to_launch_index=2, raise_exception=False,
                              show_summary=False)
    with pytest.raises(TypeError, match="tape: expected a sim.Tape"):
        gradcheck_tape([])
    with sim.Tape() as tape:
        sim.launch(square, 2, inputs=[x, y])
    with pytest.raises(ValueError, match="launch 0 of .*square was recorded with no outputs"):
        gradcheck_tape(tape)


def test_backward_disabled_kernels():
    x = sim.from_numpy(np.array([1.0, 3.0], dtype=np.float32), requires_grad=True)
    y = sim.zeros(2, dtype=float, requires_grad=True)
    with pytest.raises(ValueError, match="Kernel must have backward pass enabled to compute "
                                         "Jacobians"):
        jacobian(square_no_backward, dim=2, inputs=[x], outputs=[y])
    fd = jacobian_fd(square_no_backward, dim=2, inputs=[x], outputs=[y], eps=1e-3)[0, 0]
    np.testing.assert_allclose(fd, np.diag([2.0, 6.0]), rtol=1e-3)
    with sim.Tape() as tape:
        sim.launch(square_no_backward, 2, inputs=[x], outputs=[y])
    assert gradcheck_tape(tape, show_summary=False)  # nothing to check


def test_argument_errors():
    x = sim.from_numpy(np.array([1.0], dtype=np.float32), requires_grad=True)
    with pytest.raises(ValueError, match="A list of output arguments must be provided"):
        jacobian(square, dim=1, inputs=[x])
    with pytest.raises(ValueError, match="The inputs argument must be provided"):
        gradcheck(square, dim=1)
    with pytest.raises(TypeError, match="inputs: expected a list"):
        jacobian_fd(square, dim=1, inputs=x, outputs=[x])
    with pytest.raises(TypeError, match="function: expected it to return an array"):
        jacobian(lambda x: 3.0, inputs=[x])
