"""``sim.Function`` parameters take funcs and plain builtins, not the kernel language's
special forms (numba_sim/function_targets.py, Warp's rule)."""

import numpy as np
import pytest

import numba_sim as sim


@sim.func
def apply_unary(g: sim.Function, x: float):
    return g(x)


@sim.func
def apply_twice(x: float, g: sim.Function):
    return g(g(x))


@sim.kernel
def applies_sin(out: sim.array(dtype=float)):
    out[0] = apply_unary(sim.sin, 0.5) + apply_twice(0.25, g=sim.abs)


@sim.kernel
def applies_printf(out: sim.array(dtype=float)):
    out[0] = apply_unary(sim.printf, 0.5)


@sim.kernel
def applies_an_atomic(out: sim.array(dtype=float)):
    out[0] = apply_twice(0.5, g=sim.atomic_add)


def test_a_plain_builtin_is_a_function_argument():
    out = np.zeros(1, np.float32)
    sim.launch(applies_sin, dim=1, inputs=[out])
    assert out[0] == pytest.approx(np.sin(0.5) + 0.25, rel=1e-6)


@pytest.mark.parametrize("kernel, parameter, callee, form", [
    (applies_printf, "g", "apply_unary", "printf"),
    (applies_an_atomic, "g", "apply_twice", "atomic_add"),
])
def test_a_special_form_is_not(kernel, parameter, callee, form):
    with pytest.raises(sim.WarpCodegenError, match=f"parameter '{parameter}' of '{callee}' "
                                                   f"received unsupported built-in function "
                                                   f"'{form}'"):
        sim.launch(kernel, dim=1, inputs=[np.zeros(1, np.float32)])
