"""sim.config.verify_autograd_array_access: Warp's write-after-read warning across the
launches recorded on a tape (numba_sim/autodiff/array_access.py)."""

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.autodiff import array_access

WARNING = ("is being written to but has already been read from in a previous launch. This "
           "may corrupt gradient computation in the backward pass.")


@sim.kernel
def square(x: sim.array(dtype=float), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i] = x[i] * x[i]


@sim.kernel
def overwrite(z: sim.array(dtype=float), x: sim.array(dtype=float)):
    i = sim.tid()
    x[i] = z[i]


@sim.kernel
def write_then_read(a: sim.array(dtype=float), b: sim.array(dtype=float),
                    c: sim.array(dtype=float)):
    i = sim.tid()
    a[i] = c[i] * c[i]
    b[i] = a[i]


@sim.kernel
def copy_into(z: sim.array(dtype=float), x: sim.array(dtype=float)):  # only launched with it off
    i = sim.tid()
    x[i] = z[i]


@sim.func
def load(a: sim.array(dtype=float), i: int):
    return a[i]


@sim.func
def store(c: sim.array(dtype=float), i: int):
    c[i] = 1.0


@sim.func
def nested(a: sim.array(dtype=float), c: sim.array(dtype=float), i: int):
    store(c, i)
    return load(a, i)


@sim.kernel
def through_funcs(a: sim.array(dtype=float), c: sim.array(dtype=float),
                  d: sim.array(dtype=float), e: sim.array(dtype=float),
                  f: sim.array(dtype=float)):
    i = sim.tid()
    d[i] = nested(a, c, i)
    e[i] += 1.0
    sim.atomic_add(f, 0, 1.0)


@sim.func
def apply(g: sim.Function, a: sim.array(dtype=float), i: int):
    return g(a, i)


@sim.kernel
def through_function_parameter(a: sim.array(dtype=float), b: sim.array(dtype=float)):
    i = sim.tid()
    b[i] = apply(load, a, i) + apply(load, b, i) * 0.0


@sim.kernel
def read_then_write(a: sim.array(dtype=float), b: sim.array(dtype=float)):
    i = sim.tid()
    b[i] = a[i] * a[i]
    if a[i] > 0.0:
        a[i] = 1.0


@sim.kernel
def in_place_after_read(x: sim.array(dtype=float)):
    i = sim.tid()
    x[i] = 1.0
    a = x[i]
    x[i] += a


SAME_KERNEL = ("is being written to after it has been read from within the same kernel. "
               "This may corrupt gradient computation in the backward pass.")


@pytest.fixture
def verify():
    saved = sim.config.verify_autograd_array_access
    sim.config.verify_autograd_array_access = True
    yield
    sim.config.verify_autograd_array_access = saved


def _arrays(n=3):
    x = sim.requires_grad(np.arange(1.0, n + 1.0, dtype=np.float32))
    return x, sim.zeros_like(x), sim.zeros_like(x)


def test_overwrite_after_read_warns_naming_kernel_and_parameter(verify, capsys):
    x, y, z = _arrays()
    with sim.Tape():
        sim.launch(square, 3, inputs=[x], outputs=[y])
        sim.launch(overwrite, 3, inputs=[z], outputs=[x])
    err = capsys.readouterr().err
    assert err.count(WARNING) == 1
    assert "passed to argument x in kernel overwrite at " in err
    assert f"{__file__}:" in err
    np.testing.assert_array_equal(x, 0.0)  # the launch still ran


def test_no_warning_without_overwrite_after_read(verify, capsys):
    x, y, z = _arrays()
    c = sim.zeros_like(x)
    with sim.Tape():
        sim.launch(square, 3, inputs=[x], outputs=[y])
        sim.launch(square, 3, inputs=[x], outputs=[z])  # read twice, other outputs
        sim.launch(write_then_read, 3, inputs=[c, y, x])  # writes c, then reads it back
    assert WARNING not in capsys.readouterr().err
    assert array_access.is_read(x) and array_access.is_read(c)
    assert not array_access.is_read(y) and not array_access.is_read(z)


def test_write_of_a_read_array_inside_one_launch_then_write_warns(verify, capsys):
    a, b, c = _arrays(5)
    with sim.Tape():
        sim.launch(write_then_read, 5, inputs=[a, b, c])  # reads a after writing it
        sim.launch(overwrite, 5, inputs=[b], outputs=[a])
    assert WARNING in capsys.readouterr().err


def test_off_by_default_marks_nothing_and_analyses_nothing(capsys):
    assert sim.config.verify_autograd_array_access is False
    x, y, z = _arrays()
    with sim.Tape():
        sim.launch(copy_into, 3, inputs=[x], outputs=[y])
        sim.launch(copy_into, 3, inputs=[z], outputs=[x])
    assert WARNING not in capsys.readouterr().err
    assert not array_access.is_read(x) and not array_access.is_read(z)
    assert "_sim_array_access" not in copy_into.__dict__  # no per-launch analysis either


def test_backward_consumes_reads_and_gradients_are_right(verify, capsys):
    x, y, _ = _arrays()
    tape = sim.Tape()
    with tape:
        sim.launch(square, 3, inputs=[x], outputs=[y])
    assert array_access.is_read(x)
    tape.backward(grads=[(y, np.ones(3, dtype=np.float32))])
    np.testing.assert_allclose(sim.grad(x), 2.0 * x)  # d(x^2)/dx
    assert not array_access.is_read(x)
    with sim.Tape():  # a fresh tape's write after the backward: nothing pending
        sim.launch(overwrite, 3, inputs=[y], outputs=[x])
    assert WARNING not in capsys.readouterr().err


def test_reset_clears_reads_without_backward(verify, capsys):
    x, y, z = _arrays()
    tape = sim.Tape()
    with tape:
        sim.launch(square, 3, inputs=[x], outputs=[y])
    tape.reset()
    assert not array_access.is_read(x)
    with tape:
        sim.launch(overwrite, 3, inputs=[z], outputs=[x])
    assert WARNING not in capsys.readouterr().err


def test_pending_tape_still_warns_another_tape(verify, capsys):
    x, y, z = _arrays()
    with sim.Tape():
        sim.launch(square, 3, inputs=[x], outputs=[y])
    with sim.Tape():
        sim.launch(overwrite, 3, inputs=[z], outputs=[x])
    assert WARNING in capsys.readouterr().err


def test_access_modes_follow_funcs_atomics_and_in_place_updates():
    read, written = array_access.access_modes(through_funcs)
    assert read == {"a"}  # via nested -> load; e[i] += 1 and atomic_add are writes only
    assert written == {"c", "d", "e", "f"}
    assert array_access.access_modes(write_then_read) == ({"a", "c"}, {"a", "b"})


def test_access_modes_follow_a_func_passed_for_a_function_parameter():
    assert array_access.access_modes(through_function_parameter) == ({"a", "b"}, {"b"})


def test_funcs_mark_arrays_at_launch(verify):
    a, c, d = _arrays()
    e, f = sim.zeros_like(a), sim.zeros_like(a)
    with sim.Tape():
        sim.launch(through_funcs, 3, inputs=[a, c, d, e, f])
    assert [array_access.is_read(v) for v in (a, c, d, e, f)] == [True] + [False] * 4
    np.testing.assert_array_equal(c, 1.0)
    np.testing.assert_array_equal(d, a)


def test_reading_a_view_marks_the_viewed_array(verify):
    base = sim.requires_grad(np.arange(1.0, 5.0, dtype=np.float32))
    out = sim.zeros(2, dtype=float)
    tape = sim.Tape()
    with tape:
        sim.launch(square, 2, inputs=[base[:2]], outputs=[out])
    assert array_access.is_read(base)
    tape.reset()
    assert not array_access.is_read(base)


def test_read_mark_errors_and_weakness():
    with pytest.raises(TypeError, match="array: expected a NumPy or CuPy array"):
        array_access.set_read([1.0], True)
    with pytest.raises(TypeError, match="value: expected a bool"):
        array_access.set_read(np.zeros(1), "yes")
    a = np.zeros(2)
    array_access.set_read(a, True)
    key = id(a)
    del a
    assert key not in array_access._READ  # the registry does not keep arrays alive


def test_write_after_read_inside_one_kernel_warns_once_naming_the_line(capsys):
    assert array_access.access_modes(read_then_write) == ({"a"}, {"a", "b"})
    err = capsys.readouterr().err
    assert err.count(SAME_KERNEL) == 1
    line = read_then_write.py_func.__code__.co_firstlineno + 5  # a[i] = 1.0
    assert f"argument a in kernel read_then_write at {__file__}:{line} " in err
    array_access.access_modes(read_then_write)  # analysed once
    assert SAME_KERNEL not in capsys.readouterr().err
    array_access.access_modes(in_place_after_read)  # x[i] += a after a = x[i]
    assert capsys.readouterr().err.count(SAME_KERNEL) == 1
    for kernel in (write_then_read, through_funcs):  # written, then read: no warning
        kernel.__dict__.pop("_sim_array_access", None)  # analysed again here
        array_access.access_modes(kernel)
    assert SAME_KERNEL not in capsys.readouterr().err
