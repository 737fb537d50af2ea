"""sim.copy (Warp's wp.copy) and its adjoint on a tape; sim.clone on a tape."""

import numpy as np
import pytest

import numba_sim as sim

f64 = sim.float64
A = sim.array(dtype=f64)


@sim.kernel
def total(x: A, loss: A):
    i = sim.tid()
    sim.atomic_add(loss, 0, x[i])


@sim.kernel
def doubled(x: A, y: A):
    i = sim.tid()
    y[i] = 2.0 * x[i]


def test_copy_windows_and_whole_arrays():
    dest = np.zeros(5)
    sim.copy(dest, np.arange(3.0), dest_offset=1)
    np.testing.assert_array_equal(dest, [0, 0, 1, 2, 0])
    sim.copy(dest, np.arange(5.0) + 10, dest_offset=3, src_offset=1, count=2)
    np.testing.assert_array_equal(dest, [0, 0, 1, 11, 12])
    vectors = sim.zeros(2, dtype=sim.vec3)
    sim.copy(vectors, np.arange(6, dtype=np.float32))  # Warp's flat copy of the data
    np.testing.assert_array_equal(vectors, [[0, 1, 2], [3, 4, 5]])
    column = np.zeros((3, 2))
    sim.copy(column[:, 1], np.ones(3))  # a non-contiguous destination
    np.testing.assert_array_equal(column, [[0, 1]] * 3)


@pytest.mark.parametrize("source, keywords, message", [
    ([1.0, 2.0], {}, "Copy source and destination must be arrays"),
    (np.ones(2), {"src_offset": -1}, "Source offset must be non-negative"),
    (np.ones(2), {"count": 1.5}, "must be integers"),
    (np.ones(2, np.float32), {}, "Incompatible array data types"),
    (np.ones(3), {}, "larger than destination size"),
    (np.ones(3), {"count": 2, "src_offset": 2}, "exceeds the source size"),
    (np.ones(3), {"count": 2, "dest_offset": 1}, "exceeds the destination size"),
])
def test_bad_copies_raise_warps_errors_and_change_nothing(source, keywords, message):
    dest = np.zeros(2)
    with pytest.raises(RuntimeError, match=message):
        sim.copy(dest, source, **keywords)
    assert not dest.any()


def test_non_contiguous_copies_of_other_shapes_are_refused():
    dest = np.zeros((3, 4))[:, :2]
    with pytest.raises(RuntimeError, match="Incompatible array shapes"):
        sim.copy(dest, np.ones((2, 6))[:, :3])
    with pytest.raises(RuntimeError, match="only supported for 1-D non-contiguous"):
        sim.copy(dest, np.ones((3, 4))[:, :2], count=1)


def test_copy_adjoint_accumulates_into_the_source_and_consumes_the_destination():
    x = sim.from_numpy(np.arange(1.0, 5.0), dtype=f64, requires_grad=True)
    window = sim.zeros(2, dtype=f64, requires_grad=True)
    dead = sim.zeros(4, dtype=f64, requires_grad=True)
    loss = sim.zeros(1, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(doubled, 4, inputs=[x, dead])  # overwritten below: its adjoint is consumed
        sim.copy(window, x, src_offset=1, count=2)
        sim.copy(dead, x)
        sim.launch(total, 2, inputs=[window, loss])
        sim.launch(total, 4, inputs=[dead, loss])
    tape.backward(loss)
    np.testing.assert_array_equal(sim.grad(x), [1.0, 2.0, 2.0, 1.0])
    assert not sim.grad(dead).any() and not sim.grad(window).any()


def test_copy_adjoint_reaches_the_array_a_view_views():
    base = sim.from_numpy(np.ones((3, 4)), dtype=f64, requires_grad=True)
    dest = sim.zeros(2, dtype=f64, requires_grad=True)
    loss = sim.zeros(1, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.copy(dest, base[:, 2], src_offset=1, count=2)
        sim.launch(total, 2, inputs=[dest, loss])
    tape.backward(loss)
    expected = np.zeros((3, 4))
    expected[1:, 2] = 1.0
    np.testing.assert_array_equal(sim.grad(base), expected)


def test_clone_of_a_view_takes_a_gradient_that_flows_back():
    x = sim.from_numpy(np.ones((2, 3)), dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        cloned = sim.clone(x[:, 1:])
    tape.backward(grads=[(cloned, np.full((2, 2), 3.0))])
    np.testing.assert_array_equal(sim.grad(x), [[0, 3, 3], [0, 3, 3]])


def test_overlapping_copy_warns_and_copies_the_gradient_back():
    y = sim.from_numpy(np.arange(1.0, 5.0), dtype=f64, requires_grad=True)
    loss = sim.zeros(1, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.copy(y, y, dest_offset=1, src_offset=0, count=3)
        sim.launch(total, 4, inputs=[y, loss])
    with pytest.warns(UserWarning, match="overlapping copy cannot yet be fully tracked"):
        tape.backward(loss)
    np.testing.assert_array_equal(sim.grad(y), np.ones(4))  # Warp's fallback
