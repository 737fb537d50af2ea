"""Chained comparisons in kernels and funcs, as Warp's: ``a < b < c`` evaluates each operand
once, left to right, and its comparators have one type (two numbers count as one, by the
scalar rule; a bool compares with bools) -- Warp's "Cannot chain comparisons of unequal
types" otherwise (kernel_ops.chain_compare)."""

import numpy as np
import pytest

import numba_sim as sim


@sim.func
def counted(counter: sim.array(dtype=int), value: float):
    sim.atomic_add(counter, 0, 1)
    return value


@sim.kernel
def chains(a: sim.array(dtype=float), counter: sim.array(dtype=int), out: sim.array(dtype=int)):
    i = sim.tid()
    r = 0
    if 0 <= i < a.shape[0]:  # int32 and int64 comparators: numbers
        r += 1
    if 0.0 < a[i] <= 2.0 < 3.0:
        r += 10
    x = sim.int32(10)
    if 5 < x == 10 != 11:
        r += 100
    if 9.0 > counted(counter, a[i]) > 8.0:  # evaluated once, though the first test fails
        r += 1000
    v = sim.vec3(a[i])
    if v == sim.vec3(a[i]) == v:
        r += 10000
    out[i] = r


@sim.kernel
def int_bool_chain(out: sim.array(dtype=int)):
    x = sim.int32(10)
    y = 10
    z = True
    if x == y == z:
        out[0] = 1


@sim.func
def in_range(lo: float, x: float, hi: float, flag: bool):
    return lo <= x < hi == flag


def test_a_chain_compares_each_pair_and_evaluates_each_operand_once():
    a = np.array([1.0, 2.5], np.float32)
    counter = np.zeros(1, np.int32)
    out = np.zeros(2, np.int32)
    sim.launch(chains, dim=2, inputs=[a, counter, out])
    np.testing.assert_array_equal(out, [10111, 10101])
    assert counter[0] == 2


def test_a_chain_of_an_int_and_a_bool_is_warps_type_error():
    with pytest.raises(TypeError, match=r"Cannot chain comparisons of unequal types: "
                                        r"int64 == bool\.|int32 == bool\."):
        sim.launch(int_bool_chain, dim=1, inputs=[np.zeros(1, np.int32)])


def test_in_python_mode_too():
    with pytest.raises(TypeError, match="Cannot chain comparisons of unequal types"):
        in_range(0.0, 0.5, 1.0, True)
