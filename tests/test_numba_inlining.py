"""numba_inlining: Numba's inlining copies a callee's IR in time linear in its size, and
the inlined code computes what it computed before."""

import copy

import numba
import numpy as np
import pytest
from numba.core import ir

import numba_sim as sim  # noqa: F401 (installs the block copier)
from numba_sim import numba_inlining

BRANCHES = 60


def _many_blocks_source():
    """A callee with BRANCHES branches and as many locals: BRANCHES x 3 blocks."""
    lines = ["def callee(x):", "    acc = 0.0"]
    for i in range(BRANCHES):
        lines += [f"    v{i} = x * {i + 1}.0", f"    if v{i} > {i}.5:",
                  f"        acc += v{i}", "    else:", f"        acc -= v{i}"]
    lines.append("    return acc")
    return "\n".join(lines)


def _compile_pair():
    namespace = {}
    exec(_many_blocks_source(), namespace)
    callee = numba.njit(inline="always")(namespace["callee"])

    def caller(x):
        return callee(x) + 1.0

    return numba.njit(caller), namespace["callee"]


@pytest.fixture
def var_copies(monkeypatch):
    """Counts the variables Numba deep-copies while it compiles."""
    counter = [0]
    original = ir.Var.__deepcopy__

    def counting(self, memo):
        counter[0] += 1
        return original(self, memo)

    monkeypatch.setattr(ir.Var, "__deepcopy__", counting)
    return counter


def test_inlining_modules_get_the_block_copier():
    import numba.core.inline_closurecall as inlining

    assert isinstance(inlining.copy, numba_inlining.BlockCopier)
    assert inlining.copy.copy is copy.copy  # the rest of the copy module is the module's
    import numba.cuda.core.inline_closurecall as cuda_inlining  # imported late: hooked

    assert isinstance(cuda_inlining.copy, numba_inlining.BlockCopier)


def test_an_inlined_callee_is_copied_in_linear_time_and_computes_the_same(var_copies):
    caller, python_callee = _compile_pair()
    for x in (-3.0, 0.25, 7.0, 41.5):
        assert caller(x) == pytest.approx(python_callee(x) + 1.0, rel=1e-15)
    # two copies of the callee (Numba keeps an unmutated one), each variable and each of
    # its uses copied once: measured 1,810.  Numba's per-block copies copy the whole scope
    # once per block: 327,610 (blocks x variables)
    assert var_copies[0] < 5_000, var_copies[0]


def test_the_copier_defers_to_copy_deepcopy_outside_numba_inlining():
    block = ir.Block(ir.Scope(None, ir.unknown_loc), ir.unknown_loc)
    copied = numba_inlining.BlockCopier().deepcopy(block)
    assert copied is not block and isinstance(copied, ir.Block)
    data = {"a": [np.arange(3)]}
    again = numba_inlining.BlockCopier().deepcopy(data)
    assert np.array_equal(again["a"][0], data["a"][0])
    assert again["a"] is not data["a"] and again["a"][0] is not data["a"][0]
