"""``module.hash_module()``: Warp's content hash of a module (numba_sim/module_hash.py)."""

import importlib.util
import os
import tempfile

import numba_sim as sim

SOURCE = """
import numba_sim as sim

C = {constant}

@sim.struct
class Params:
    scale: {field}

@sim.func
def helper(x: float):
    return x * {factor}

@sim.kernel
def k(out: sim.array(dtype=float), p: Params):
    out[0] = helper(p.scale) + sim.static(C)
"""


def _module(name, constant="1.0", field="float", factor="2.0"):
    """The numba_sim module of a Python module loaded from a temporary file that is removed
    right after (as Warp's tests do): the hash must not need the file."""
    fd, path = tempfile.mkstemp(suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(SOURCE.format(constant=constant, field=field, factor=factor))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.remove(path)
    return sim.get_module(module.__name__)


def test_the_same_content_hashes_the_same_in_modules_of_other_names():
    first = _module("module_hash_a").hash_module()
    assert _module("module_hash_b").hash_module() == first
    assert len(first) == 64


def test_the_module_keeps_its_kernels_after_the_python_module_is_gone():
    import gc

    module = _module("module_hash_gone")
    gc.collect()
    assert [k.__name__ for k in module.definitions.values()] == ["k"]
    assert module.hash_module() != sim.Module("module_hash_empty").hash_module()


def test_what_the_kernel_reads_changes_the_hash():
    base = _module("module_hash_base").hash_module()
    assert _module("module_hash_constant", constant="2.0").hash_module() != base
    assert _module("module_hash_vector", constant="sim.vec3(1.0)").hash_module() != base
    assert _module("module_hash_vector2", constant="sim.vec3(2.0)").hash_module() != \
        _module("module_hash_vector3", constant="sim.vec3(1.0)").hash_module()
    # a func the kernel calls, by its content; a struct parameter, by its fields
    assert _module("module_hash_func", factor="3.0").hash_module() != base
    assert _module("module_hash_struct", field="sim.float64").hash_module() != base


def test_a_kernel_defined_again_under_its_name_replaces_the_earlier():
    module = sim.Module("module_hash_redefined")

    def define(scale):
        @sim.kernel(module=module)
        def redefined(out: sim.array(dtype=float)):
            out[0] = scale

        return redefined

    define(1.0)
    one = module.hash_module()
    define(2.0)
    assert module.hash_module() != one
    assert len(module.definitions) == 1
    define(1.0)
    assert module.hash_module() == one


def test_scalar_types_have_warps_length():
    assert all(t._length_ == 1 for t in (sim.int8, sim.uint64, sim.float32, sim.float64))
    assert sim.vec3._length_ == 3


def test_tables_and_arrays_a_kernel_reads_count_by_content():
    import numpy as np

    from numba_sim.module_hash import describe

    assert describe({"v": 5.0}) != describe({"v": 6.0})
    assert describe({"a": 1, "b": 2}) == describe({"b": 2, "a": 1})
    table = np.arange(4.0)
    before = describe(table)
    table[0] = 7.0
    assert describe(table) != before and "0x" not in before
    assert describe(np.zeros(2, np.float32)) != describe(np.zeros(2, np.float64))


def test_a_func_taking_a_function_parameter_hashes():
    """A ``sim.Function`` annotation is the func class itself, which is described as a
    class, not taken for a func (it has a func's attributes, as properties)."""
    from numba_sim.func_overloads import is_func
    from numba_sim.module_hash import describe

    assert not is_func(sim.Function)
    assert describe(sim.Function).endswith("Func")  # (raised AttributeError when taken for one)
