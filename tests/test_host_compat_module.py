"""Warp's module API (``sim.get_module``, ``sim.load_module``, ``sim.get_module_options``,
``sim.set_module_options``, ``sim.Module``), Warp's ``wp.config`` settings, and Warp's
``Launch`` (a recorded launch whose grid and arguments can be changed)."""

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import config


@sim.kernel
def fill_index(out: sim.array(dtype=int)):
    i = sim.tid()
    out[i] = i


@sim.kernel
def scale_vec(v: sim.vec3, s: float, out: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    out[i] = v * s


def test_a_module_holds_its_kernels_and_warp_options():
    module = sim.get_module(__name__)
    assert module is sim.get_module(__name__) is fill_index.module is scale_vec.module
    assert isinstance(module, sim.Module) and module.name == __name__
    assert {fill_index, scale_vec} <= set(module.kernels)
    options = sim.get_module_options()  # the calling module's
    assert options is module.options
    assert options["mode"] is None and options["max_unroll"] == 16 and options["block_dim"] == 256
    assert module.compile_mode() == config.mode
    sim.set_module_options({"mode": "debug", "max_unroll": 4})
    try:
        assert module.compile_mode() == "debug" and options["max_unroll"] == 4
    finally:
        sim.set_module_options({"mode": None, "max_unroll": 16})
    with pytest.raises(ValueError, match="unknown module option 'bogus'"):
        sim.set_module_options({"bogus": 1})
    with pytest.raises(ValueError, match="mode: expected None or one of"):
        sim.set_module_options({"mode": "fast"})
    with pytest.raises(TypeError, match="options: expected a dict"):
        sim.set_module_options([("mode", "debug")])
    with pytest.raises(TypeError, match="module: expected None"):
        sim.get_module_options(3)
    with pytest.raises(TypeError, match="name: expected a module name"):
        sim.get_module(3)


def test_a_unique_module_takes_module_options():
    @sim.kernel(module="unique", module_options={"mode": "debug"})
    def unique(out: sim.array(dtype=int)):
        out[0] = 1

    assert unique.module is not sim.get_module(__name__)
    assert unique.module.compile_mode() == "debug"
    assert sim.get_module_options()["mode"] is None
    with pytest.raises(ValueError, match='module_options requires module="unique"'):
        sim.kernel(unique.py_func, module_options={"mode": "debug"})
    with pytest.raises(ValueError, match="unknown module option 'nope'"):
        sim.kernel(unique.py_func, module="unique", module_options={"nope": 1})


def test_load_module_checks_the_module_and_the_devices():
    sim.load_module(device="cpu")  # this module: it has kernels
    sim.load_module(__name__, device=["cpu"])
    sim.load_module(sim.get_module(__name__))
    with pytest.raises(RuntimeError, match="Module 'no_such_module' does not contain any"):
        sim.load_module("no_such_module")
    with pytest.raises(ValueError):
        sim.load_module(device="tpu")


def test_warp_config_settings_have_warp_defaults_and_reject_unknown_names():
    assert config.log_level == sim.LOG_INFO == 20 and sim.LOG_WARNING == 30
    assert config.verify_autograd_array_access is False
    assert config.cache_kernels is True and config.max_unroll == 16
    saved = config.log_level
    config.log_level = 30
    try:
        assert config.log_level == 30
    finally:
        config.log_level = saved
    with pytest.raises(AttributeError, match="sim.config has no setting 'log_levle'"):
        config.log_levle = 30
    with pytest.raises(ValueError, match="launch_array_access_mode: expected a "
                                         "LaunchArrayAccessMode"):
        config.launch_array_access_mode = 1
    config.launch_array_access_mode = config.LaunchArrayAccessMode.STRICT
    config.launch_array_access_mode = config.LaunchArrayAccessMode.RELAXED
    assert all(len(entry) == 2 and entry[1] for entry in config.WARP_SETTINGS.values())


def test_a_recorded_launch_takes_new_dims_and_arguments():
    out = sim.zeros(10, dtype=int)
    cmd = sim.launch(fill_index, dim=10, inputs=[out], record_cmd=True)
    cmd.set_dim(5)
    cmd.launch()
    np.testing.assert_array_equal(out, [0, 1, 2, 3, 4, 0, 0, 0, 0, 0])
    other = sim.zeros(3, dtype=int)
    cmd.set_param_by_name("out", other)
    cmd.set_dim(3)
    cmd.launch()
    np.testing.assert_array_equal(other, [0, 1, 2])
    cmd.set_dim(4)
    with pytest.raises(ValueError, match="parameter 'out'"):  # the launch's checks
        cmd.launch()
    with pytest.raises(ValueError, match="Argument 'nope' not found"):
        cmd.set_param_by_name("nope", out)
    with pytest.raises(IndexError, match="index: expected a parameter position from 0 to 0"):
        cmd.set_param_at_index(1, out)


def test_launch_made_from_a_kernel_and_a_device():
    cmd = sim.Launch(scale_vec, "cpu")  # zero arguments, no threads
    cmd.launch()
    out = sim.zeros(2, dtype=sim.vec3)
    cmd.set_params([sim.vec3(1.0, 2.0, 3.0), 2.0, out])
    cmd.set_dim(2)
    cmd.launch()
    np.testing.assert_array_equal(out, [[2, 4, 6], [2, 4, 6]])
    with pytest.raises(RuntimeError, match="argument 'v' expects vec3f but got a single value"):
        cmd.set_param_at_index(0, 123)
    adjoint = sim.Launch(scale_vec, "cpu", adjoint=True)  # recorded adjoint launches: Warp's
    assert adjoint.kernel.forward_kernel is scale_vec
    with pytest.raises(ValueError, match="not an adjoint launch"):
        cmd.set_param_at_index(0, sim.vec3(), adjoint=True)


def test_device_properties_as_warp():
    cpu = sim.get_device("cpu")
    assert cpu.sm_count == 0 and cpu.max_shared_memory_per_block == 0
    assert 0 < cpu.free_memory <= cpu.total_memory


def test_hash_module_follows_what_the_kernels_read():
    def make(value):
        @sim.kernel
        def reads_constant(out: sim.array(dtype=float)):
            out[0] = SCALE

        SCALE = sim.constant(value)
        return reads_constant

    kernel = make(1.0)
    module = sim.get_module(kernel.__module__)
    assert kernel.__module__ == __name__ and kernel in module.kernels
    first = module.hash_module()
    assert module.hash_module() == first and len(first) == 64
    kernel.py_func.__closure__[0].cell_contents = 2.0  # as redefining the constant does
    second = module.hash_module()
    assert second != first
    kernel.py_func.__closure__[0].cell_contents = 1.0
    assert module.hash_module() == first
