"""sim.Tape, the gradient registry, sim.launch(adjoint=True) and their error paths."""

import gc

import numpy as np
import pytest

import numba_sim as sim

f64 = sim.float64
A = sim.array(dtype=f64)


@sim.kernel
def square(x: A, y: A):
    i = sim.tid()
    y[i] = x[i] * x[i]


@sim.kernel
def total(y: A, loss: A):
    i = sim.tid()
    loss[0] += y[i] * f64(3.0)


@sim.kernel
def scaled(x: A, y: A, s: f64):
    i = sim.tid()
    y[i] = x[i] * s


@sim.kernel
def in_place(x: A):
    i = sim.tid()
    x[i] = x[i] * f64(2.0)


# -- the registry


def test_requires_grad_registers_a_zero_gradient_like_the_array():
    a = sim.zeros(4, dtype=sim.vec3, requires_grad=True)
    g = sim.grad(a)
    assert g.shape == (4, 3) and g.dtype == np.float32 and not g.any() and g is not a
    b = np.ones(3)
    assert sim.requires_grad(b) is b and sim.grad(b).shape == (3,)
    for made in (sim.empty(2, requires_grad=True), sim.ones(2, requires_grad=True),
                 sim.full(2, 1.5, requires_grad=True),
                 sim.from_numpy(np.arange(2.0), requires_grad=True),
                 sim.zeros_like(b, requires_grad=True)):
        assert sim.grad(made).shape == made.shape


def test_grad_of_an_array_without_one_is_a_key_error_naming_it():
    a = np.zeros(3)
    with pytest.raises(KeyError, match=r"shape \(3,\).*requires_grad"):
        sim.grad(a)
    with pytest.raises(KeyError):
        sim.grad(a[1:])  # a view has no gradient of its own
    with pytest.raises(TypeError, match="requires_grad: array"):
        sim.requires_grad([1.0, 2.0])
    with pytest.raises(ValueError, match="grad: expected an array like"):
        sim.autodiff.gradients.requires_grad(a, grad=np.zeros(4))


def test_registry_entries_go_with_their_arrays():
    from numba_sim.autodiff import gradients

    before = len(gradients._GRADIENTS)
    a = sim.zeros(3, requires_grad=True)
    assert len(gradients._GRADIENTS) == before + 1
    del a
    gc.collect()
    assert len(gradients._GRADIENTS) == before


# -- the tape


def test_tape_chains_launches_and_zero_and_reset():
    x = sim.from_numpy(np.array([1.0, 2.0, 3.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(3, dtype=f64, requires_grad=True)
    loss = sim.zeros(1, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(square, 3, inputs=[x, y])
        sim.launch(total, 3, inputs=[y, loss])
    assert len(tape.launches) == 2 and loss[0] == 3 * 14
    tape.backward(loss=loss)
    np.testing.assert_allclose(sim.grad(x), 6 * x)
    np.testing.assert_allclose(sim.grad(y), [3.0, 3.0, 3.0])
    tape.zero()
    assert not sim.grad(x).any() and not sim.grad(y).any() and not sim.grad(loss).any()
    tape.backward(loss=loss)  # zeroed, then again: the same gradient
    np.testing.assert_allclose(sim.grad(x), 6 * x)
    tape.reset()
    assert tape.launches == [] and not sim.grad(x).any()


def test_launches_outside_the_tape_are_not_recorded():
    x, y = sim.zeros(2, dtype=f64, requires_grad=True), sim.zeros(2, dtype=f64)
    tape = sim.Tape()
    sim.launch(square, 2, inputs=[x, y])
    with tape:
        sim.launch(square, 2, inputs=[x, y])
        command = sim.launch(square, 2, inputs=[x, y], record_cmd=True)
    sim.launch(square, 2, inputs=[x, y])
    assert len(tape.launches) == 1 and command is not None
    with tape:  # a recorded command is recorded when it runs under the tape
        command.launch()
    assert len(tape.launches) == 2 and tape.launches[1].kernel is square


def test_record_tape_false_runs_the_launch_unrecorded():
    x, y = sim.zeros(2, dtype=f64, requires_grad=True), sim.zeros(2, dtype=f64)
    x[...] = [1.0, 2.0]
    tape = sim.Tape()
    with tape:
        sim.launch(square, 2, inputs=[x, y], record_tape=False)
    assert tape.launches == [] and list(y) == [1.0, 4.0]


def test_gradients_flow_through_intermediate_arrays_without_registered_gradients():
    x = sim.from_numpy(np.array([1.0, 2.0, 3.0]), dtype=f64, requires_grad=True)
    scratch = np.zeros(3)  # no gradient registered: the tape registers one
    loss = sim.zeros(1, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(square, 3, inputs=[x, scratch])
        sim.launch(total, 3, inputs=[scratch, loss])
    tape.backward(loss=loss)
    np.testing.assert_allclose(sim.grad(x), 6 * x)


def test_backward_without_seeds_sweeps_the_gradients_as_set():
    # Warp's tape.backward(): the output gradients were written beforehand
    x = sim.from_numpy(np.array([1.0, 2.0, 3.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(3, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(square, 3, inputs=[x, y])
    sim.grad(y)[...] = [1.0, 0.0, 2.0]
    tape.backward()
    np.testing.assert_allclose(sim.grad(x), [2.0, 0.0, 12.0])


def test_backward_with_loss_and_grads_seeds_both_as_warp():
    x = sim.from_numpy(np.array([1.0, 2.0, 3.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(3, dtype=f64, requires_grad=True)
    loss = sim.zeros(1, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(square, 3, inputs=[x, y])
        sim.launch(total, 3, inputs=[y, loss])
    # d loss / d y = 3, plus the seed 1 on y[0]: the adjoint of square gets both
    tape.backward(loss=loss, grads=[(y, np.array([1.0, 0.0, 0.0]))])
    np.testing.assert_allclose(sim.grad(x), 2 * x * np.array([4.0, 3.0, 3.0]))


def test_backward_needs_loss_or_grads_and_names_what_is_wrong():
    tape = sim.Tape()
    with pytest.raises(ValueError, match="loss: expected a one-element array"):
        tape.backward(loss=np.zeros(3))
    with pytest.raises(TypeError, match=r"grads\[0\]: expected a pair"):
        tape.backward(grads=[np.zeros(3)])
    with pytest.raises(ValueError, match=r"grads\[0\]: the gradient's shape"):
        tape.backward(grads=[(np.zeros(3), np.zeros(4))])
    with pytest.raises(TypeError, match="check_inputs"):
        sim.Tape(check_inputs="yes")


def test_record_func_runs_in_the_reverse_sweep():
    x = sim.from_numpy(np.array([1.0, 2.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(square, 2, inputs=[x, y])
    order = []
    tape.record_func(lambda: order.append(sim.grad(x).copy()), [x])
    tape.backward(grads=[(y, np.ones(2))])
    assert len(order) == 1 and not order[0].any()  # ran before square's adjoint
    np.testing.assert_allclose(sim.grad(x), 2 * x)


# -- adjoint launches


def test_launch_adjoint_directly_as_warp():
    x = np.array([1.0, -2.0])
    y = np.zeros(2)
    adj_x, adj_y = np.zeros(2), np.array([1.0, 10.0])
    sim.launch(scaled, 2, inputs=[x, y, 3.0], adjoint=True, adj_inputs=[adj_x, adj_y, 0.0])
    np.testing.assert_allclose(adj_x, [3.0, 30.0])
    assert not y.any()  # the adjoint does not store
    adj_x[...] = 0
    sim.launch(scaled, 2, inputs=[x, y, 3.0], adjoint=True,
               adj_inputs=[None, adj_y, None])  # None: a scratch zero gradient
    assert not adj_x.any()


def test_adjoint_launch_none_uses_the_registered_gradient_as_warp():
    # Warp's adjoint reads / accumulates into the array's own .grad where adj_inputs has None
    x = sim.requires_grad(np.array([1.0, -2.0]))
    y = sim.requires_grad(np.zeros(2), grad=np.array([1.0, 10.0]))
    sim.launch(scaled, 2, inputs=[x, y, 3.0], adjoint=True, adj_inputs=[None, None, None])
    np.testing.assert_allclose(sim.grad(x), [3.0, 30.0])


def test_adjoint_launch_arguments_name_the_parameter():
    x, y = np.zeros(2), np.zeros(2)
    with pytest.raises(ValueError, match="adj_inputs: expected 3 entries"):
        sim.launch(scaled, 2, inputs=[x, y, 1.0], adjoint=True, adj_inputs=[None])
    with pytest.raises(ValueError, match="adj_outputs: expected 0 entries"):
        sim.launch(scaled, 2, inputs=[x, y, 1.0], adjoint=True, adj_outputs=[None])
    with pytest.raises(ValueError, match=r"adj_inputs\[1\].*'y'"):
        sim.launch(scaled, 2, inputs=[x, y, 1.0], adjoint=True,
                   adj_inputs=[None, np.zeros(5), None])
    with pytest.raises(TypeError, match="adj_inputs / adj_outputs: given without adjoint"):
        with sim.Tape():
            sim.launch(scaled, 2, inputs=[x, y, 1.0], adj_inputs=[None, None, None])
    command = sim.launch(scaled, 2, inputs=[x, y, 1.0], adjoint=True, record_cmd=True)
    with pytest.raises(IndexError, match="index"):
        command.set_param_at_index(7, x, adjoint=True)
    forward = sim.launch(scaled, 2, inputs=[x, y, 1.0], record_cmd=True)
    with pytest.raises(ValueError, match="not an adjoint launch"):
        forward.set_param_at_index(0, x, adjoint=True)


def test_recorded_adjoint_launches_take_gradients_and_set_adjoints():
    """Warp's record_cmd=True with adjoint=True, and Launch(kernel, device, adjoint=True):
    the adjoint's arguments are the registered gradients until set with adjoint=True."""
    x = sim.from_numpy(np.array([1.0, 2.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    sim.grad(y)[:] = 1.0
    command = sim.launch(square, 2, inputs=[x, y], adjoint=True, record_cmd=True)
    command.launch()
    command.launch()  # accumulates, as two adjoint launches
    np.testing.assert_allclose(sim.grad(x), [4.0, 8.0])
    empty = sim.Launch(square, "cpu", adjoint=True)
    empty.set_param_by_name("x", x)
    empty.set_param_by_name("y", y)
    empty.set_dim(2)
    sim.grad(x)[:] = 0.0
    empty.launch()
    np.testing.assert_allclose(sim.grad(x), [2.0, 4.0])
    other, other_grad = np.array([3.0, 4.0, 5.0]), np.zeros(3)
    empty.set_param_by_name("x", other)  # no gradient registered: a scratch adjoint ...
    empty.set_param_by_name("y", np.zeros(3))
    empty.set_param_by_name("x", other_grad, adjoint=True)  # ... until one is set
    empty.set_param_at_index(1, np.ones(3), adjoint=True)
    empty.set_dim(3)
    empty.launch()
    np.testing.assert_allclose(other_grad, 2.0 * other)


def test_enable_backward_false_skips_the_adjoint():
    @sim.kernel(enable_backward=False)
    def forward_only(x: A, y: A):
        i = sim.tid()
        y[i] = x[i]

    x, y = np.ones(2), np.zeros(2)
    sim.launch(forward_only, 2, inputs=[x, y])
    assert "_adjoint_kernels" not in forward_only.__dict__
    with pytest.raises(RuntimeError, match="enable_backward=False"):
        sim.launch(forward_only, 2, inputs=[x, y], adjoint=True)


def test_tape_skips_a_recorded_kernel_without_backward_with_warps_warning(capsys):
    @sim.kernel(enable_backward=False)
    def copied(x: A, y: A):
        i = sim.tid()
        y[i] = x[i]

    x = sim.from_numpy(np.ones(2), dtype=f64, requires_grad=True)
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(copied, 2, inputs=[x, y])
        sim.launch(square, 2, inputs=[y, y])
    tape.backward(grads=[(y, np.ones(2))])
    assert capsys.readouterr().err == (
        f"Warp UserWarning: Running the tape backwards may produce incorrect gradients because "
        f"recorded kernel {copied.key} is configured with the option 'enable_backward=False'.\n")
    assert not sim.grad(x).any()  # its adjoint skipped, the other one ran


def test_forward_launches_do_not_build_the_adjoint():
    @sim.kernel
    def cube(x: A, y: A):
        i = sim.tid()
        y[i] = x[i] * x[i] * x[i]

    x, y = np.ones(2), np.zeros(2)
    sim.launch(cube, 2, inputs=[x, y])
    tape = sim.Tape()
    with tape:
        sim.launch(cube, 2, inputs=[x, y])
    assert not cube.__dict__.get("_adjoint_kernels")
    tape.backward(grads=[(y, np.ones(2))])
    assert set(cube.__dict__["_adjoint_kernels"]) == {1}


def test_a_builtin_without_an_adjoint_is_a_compile_error_naming_it():
    @sim.kernel
    def noisy(x: sim.array(dtype=float), y: sim.array(dtype=float)):
        i = sim.tid()
        y[i] = sim.noise(sim.uint32(7), x[i] * 2.0)

    @sim.kernel
    def unknown_call(x: A, y: A):
        i = sim.tid()
        v = x[i]
        y[i] = (lambda a: a)(v)

    with pytest.raises(sim.autodiff.adjoint_kernel.AdjointError,
                       match=r"adjoint of .*noisy.*no adjoint for builtin 'noise'"):
        noisy.compile("cpu", [np.ones(2, np.float32), np.zeros(2, np.float32)], adjoint=True)
    x, y = np.ones(2), np.zeros(2)
    with pytest.raises(sim.autodiff.adjoint_kernel.AdjointError,
                       match="adjoint of .*unknown_call"):
        sim.launch(unknown_call, 2, inputs=[x, y], adjoint=True,
                   adj_inputs=[np.zeros(2), np.ones(2)])


def test_a_component_store_below_an_inline_array_slice_is_named():
    # arr[i].y = a is differentiated (test_autodiff_kernels); through a slice it is not
    @sim.kernel
    def component(x: sim.array(dtype=sim.vec3), y: sim.array(dtype=float)):
        i = sim.tid()
        y[i] = sim.length(x[i])
        x[0:2][i].y = 2.0 * y[i]

    x = np.ones((2, 3), np.float32)
    with pytest.raises(sim.autodiff.adjoint_kernel.AdjointError,
                       match=r"only a component of an array element .* assign the element"):
        sim.launch(component, 2, inputs=[x, np.zeros(2, np.float32)], adjoint=True)


# -- debug checks


def test_an_array_overwritten_before_backward_is_caught_in_checked_tapes():
    x = sim.from_numpy(np.array([1.0, 2.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    tape = sim.Tape(check_inputs=True)
    with tape:
        sim.launch(square, 2, inputs=[x, y])
    x[0] = 5.0
    with pytest.raises(RuntimeError, match=r"parameter 'x' of kernel .*square.* changed"):
        tape.backward(grads=[(y, np.ones(2))])
    x[0] = 1.0
    tape.backward(grads=[(y, np.ones(2))])  # restored: accepted
    np.testing.assert_allclose(sim.grad(x), 2 * x)


@sim.kernel
def sum_into(x: A, total: A):
    sim.atomic_add(total, 0, x[sim.tid()])


def test_an_array_only_accumulated_into_is_not_checked():
    """An atomic or ``+=`` into an array writes it and does not read it (Warp's rule): the
    launches after the first change it, and its adjoint needs none of its values."""
    x = sim.from_numpy(np.array([1.0, 2.0, 4.0]), dtype=f64, requires_grad=True)
    total = sim.zeros(1, dtype=f64, requires_grad=True)
    tape = sim.Tape(check_inputs=True)
    with tape:
        sim.launch(sum_into, 3, inputs=[x, total])
        sim.launch(sum_into, 3, inputs=[x, total])
    assert total[0] == 14.0
    tape.backward(grads=[(total, np.ones(1))])
    np.testing.assert_allclose(sim.grad(x), [2.0, 2.0, 2.0])
    x[1] = 3.0  # x is read: still checked
    tape.zero()
    with pytest.raises(RuntimeError, match=r"parameter 'x' of kernel .*sum_into.* changed"):
        tape.backward(grads=[(total, np.ones(1))])


def test_an_in_place_update_is_caught_in_debug_mode(monkeypatch):
    monkeypatch.setattr(sim.config, "mode", "debug")
    x = sim.from_numpy(np.array([1.0, 2.0]), dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(in_place, 2, inputs=[x])
    with pytest.raises(RuntimeError, match=r"parameter 'x' of kernel .*in_place"):
        tape.backward(grads=[(x, np.ones(2))])


def test_a_cpu_capture_of_forward_and_backward_replays_both():
    x = sim.from_numpy(np.array([1.0, 2.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with sim.capture("cpu") as graph:
        with tape:
            sim.launch(square, 2, inputs=[x, y])
        tape.backward(grads=[(y, np.ones(2))])
    assert not y.any() and not sim.grad(x).any()  # recorded, not run
    graph.launch()
    np.testing.assert_allclose(y, [1.0, 4.0])
    np.testing.assert_allclose(sim.grad(x), [2.0, 4.0])
    graph.launch()  # gradients accumulate, as in Warp, until zeroed
    np.testing.assert_allclose(sim.grad(x), [4.0, 8.0])


@sim.struct
class Scaling:
    k: f64
    scratch: A


@sim.struct
class Weights:
    scale: Scaling
    w: A
    counts: sim.array(dtype=sim.int32)


@sim.func
def scaled_square(p: Scaling, a: f64):
    return a * a * p.k


def test_struct_arrays_have_gradients_and_scalar_fields_are_constants():
    """Warp's rule: the float arrays a kernel reads through a struct (nested structs too)
    have gradients; its scalars are constants; a struct passed to a func is read."""
    @sim.kernel
    def with_struct(x: A, p: Weights, y: A):
        i = sim.tid()
        p.scale.scratch[i] = x[i] * p.w[i]
        y[i] = scaled_square(p.scale, p.scale.scratch[i]) + sim.float64(p.counts[i])

    p = Weights()
    p.scale = Scaling()
    p.scale.k, p.scale.scratch = 3.0, sim.zeros(2, dtype=f64, requires_grad=True)
    p.w = sim.from_numpy(np.array([0.5, 4.0]), dtype=f64, requires_grad=True)
    p.counts = np.array([1, 2], np.int32)
    x = sim.from_numpy(np.array([1.0, 2.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(with_struct, 2, inputs=[x, p, y])
    np.testing.assert_allclose(y, 3 * (x * p.w) ** 2 + p.counts)
    tape.backward(grads=[(y, np.ones(2))])
    w = p.w.copy()
    np.testing.assert_allclose(sim.grad(x), 6 * x * w * w)  # y = 3 (x w)^2
    np.testing.assert_allclose(sim.grad(p.w), 6 * x * x * w)
    gradients = sim.grad(p)  # Warp's tape.gradients[p]: a struct of the gradients
    assert type(gradients) is Weights and gradients.w is sim.grad(p.w)
    assert gradients.scale.scratch is sim.grad(p.scale.scratch) and gradients.counts is None
    tape.zero()
    assert not sim.grad(p.w).any() and not sim.grad(x).any()
    with pytest.raises(KeyError, match="no gradient registered for an array of this Scaling"):
        sim.grad(Scaling())


@sim.kernel
def vector_extremes(values: sim.array(dtype=sim.vec3d), low: sim.array(dtype=sim.vec3d),
                    high: sim.array(dtype=sim.vec3d)):
    i = sim.tid()
    sim.atomic_min(low, 0, values[i])
    sim.atomic_max(high, 0, values[i])


def test_vector_atomic_min_max_route_each_component_to_its_winner():
    """Warp's rule, component by component: each component's gradient goes to the value
    that holds that component's minimum (maximum), which differs between components."""
    values_np = np.array([[1.0, 5.0, 3.0], [2.0, 0.5, 9.0], [0.0, 7.0, 4.0]])
    values = sim.from_numpy(values_np, dtype=sim.vec3d, requires_grad=True)
    low = sim.full(1, sim.vec3d(1e9, 1e9, 1e9), requires_grad=True)
    high = sim.full(1, sim.vec3d(-1e9, -1e9, -1e9), requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(vector_extremes, 3, inputs=[values, low, high])
    np.testing.assert_array_equal(low[0], values_np.min(0))
    tape.backward(grads=[(low, np.array([[1.0, 2.0, 3.0]]))])
    expected = np.zeros((3, 3))
    expected[values_np.argmin(0), [0, 1, 2]] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(sim.grad(values), expected)
    tape.zero()
    tape.backward(grads=[(high, np.ones((1, 3)))])
    expected = np.zeros((3, 3))
    expected[values_np.argmax(0), [0, 1, 2]] = 1.0
    np.testing.assert_array_equal(sim.grad(values), expected)


def test_atomic_min_of_nan_routes_the_gradient_to_the_nan():
    """Warp's rule: a NaN held and a NaN given count as the winner (NaN != NaN otherwise)."""
    values = sim.from_numpy(np.array([[np.nan, 1.0, 2.0]]), dtype=sim.vec3d, requires_grad=True)
    low = sim.full(1, sim.vec3d(np.nan, 5.0, 0.0), requires_grad=True)
    high = sim.full(1, sim.vec3d(-1e9, -1e9, -1e9), requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(vector_extremes, 1, inputs=[values, low, high])
    tape.backward(grads=[(low, np.ones((1, 3)))])
    np.testing.assert_array_equal(sim.grad(values), [[1.0, 1.0, 0.0]])


@sim.struct
class Pair:
    a: A
    b: A


@sim.kernel
def pair_product(p: Pair, y: A):
    i = sim.tid()
    y[i] = p.a[i] * p.b[i]


def test_recorded_adjoint_launch_of_a_struct_takes_its_arrays_gradients():
    p = Pair()
    p.a = sim.from_numpy(np.array([1.0, 2.0]), dtype=f64, requires_grad=True)
    p.b = sim.from_numpy(np.array([3.0, 4.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    sim.grad(y)[:] = 1.0
    command = sim.Launch(pair_product, "cpu", adjoint=True)
    command.set_param_by_name("p", p)
    command.set_param_by_name("y", y)
    command.set_dim(2)
    command.launch()
    np.testing.assert_array_equal(sim.grad(p.a), [3.0, 4.0])
    np.testing.assert_array_equal(sim.grad(p.b), [1.0, 2.0])
