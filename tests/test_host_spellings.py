"""Warp's host spellings in numba_sim: ``sim.array(data, ...)``, ``sim.array2d`` ...,
Warp's allocation keywords, ``sim.constant``, ``sim.get_device`` / ``sim.ScopedDevice``
and ``sim.ScopedTimer`` (API.md, "Arrays"); each compared with what Warp does."""

import time

import numpy as np
import pytest
import warp as wp

import numba_sim as sim
from numba_sim import arrays

wp.config.quiet = True

SCALE = sim.constant(2.5)


@sim.kernel
def scale_points(points: sim.array(dtype=sim.vec3), grid: sim.array2d(dtype=float),
                 out: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    out[i] = points[i] * SCALE + sim.vec3(grid[i, 0], grid[i, 1], 0.0)


def test_constant_returns_its_argument():
    value = sim.vec3(1.0, 2.0, 3.0)
    assert sim.constant(value) is value
    with pytest.raises(TypeError, match=r"Invalid constant type: <class 'list'>$"):
        sim.constant([1, 2])  # Warp's rule: values only
    assert sim.constant(3.5) == 3.5 and SCALE == 2.5


def test_arrays_built_from_data_launch_like_warp():
    data = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    points = sim.array(data, dtype=sim.vec3, device=sim.get_device("cpu"))
    grid = sim.array2d([[0.5, 1.5], [2.5, 3.5]], dtype=float)
    out = sim.zeros(2, dtype=sim.vec3, device=sim.get_device())
    sim.launch(scale_points, dim=2, inputs=[points, grid, out], device=sim.get_device("cpu"))

    wp_points = wp.array(data, dtype=wp.vec3, device="cpu")
    expected = wp_points.numpy() * np.float32(2.5)
    expected[:, :2] += np.array([[0.5, 1.5], [2.5, 3.5]], dtype=np.float32)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("data, dtype", [
    ([0, 0, 0], "vec3"),                         # one element's storage: one element
    ([0, 1, 2, 3, 4, 5], "vec3"),                # flat storage: two elements
    ([[1, 2, 3]], "vec3"),
    (np.arange(12.0).reshape(4, 3), "vec3"),
    (np.arange(18.0).reshape(2, 9), "mat33"),    # flattened matrices
    (np.arange(18.0).reshape(2, 3, 3), "mat33"),
    (np.arange(9.0).reshape(3, 3), "mat33"),     # one matrix
    (np.arange(8.0).reshape(2, 4), "quat"),
    ([1.5, 2.5], int),
    ([1.0, 2.0], None),                          # the data's own dtype: float64
    ([1, 2], None),                              # int64
    ([[1.0, 2.0], [3.0, 4.0]], float),
])
def test_array_from_data_matches_warp(data, dtype):
    sim_dtype = getattr(sim, dtype) if isinstance(dtype, str) else dtype
    wp_dtype = getattr(wp, dtype) if isinstance(dtype, str) else dtype
    ours = sim.array(data, dtype=sim_dtype) if dtype is not None else sim.array(data)
    theirs = (wp.array(data, dtype=wp_dtype, device="cpu") if dtype is not None
              else wp.array(data, device="cpu")).numpy()
    assert type(ours) is np.ndarray and ours.flags.c_contiguous
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)  # same shape (storage trailing) and values


def test_array_from_value_objects_and_shape():
    ours = sim.array([sim.vec3(1, 2, 3), sim.vec3(4, 5, 6)], dtype=sim.vec3)
    np.testing.assert_array_equal(ours, [[1, 2, 3], [4, 5, 6]])
    reshaped = sim.array(np.arange(12.0), dtype=sim.vec3, shape=(2, 2))
    assert reshaped.shape == (2, 2, 3) and reshaped.dtype == np.float32
    theirs = wp.array(np.arange(6.0), dtype=float, shape=(2, 3), device="cpu").numpy()
    np.testing.assert_array_equal(sim.array(np.arange(6.0), dtype=float, shape=(2, 3)), theirs)


def test_array_copy_keyword():
    source = np.arange(6, dtype=np.float32)
    assert not np.shares_memory(sim.array(source, dtype=float), source)
    assert np.shares_memory(sim.array(source, dtype=float, copy=False), source)


def test_array_with_a_shape_allocates():
    a = sim.array(shape=(2, 3), dtype=sim.vec3)
    assert a.shape == (2, 3, 3) and a.dtype == np.float32
    b = sim.array(sim.mat22, shape=4)
    assert b.shape == (4, 2, 2)
    assert sim.array3d(shape=(1, 2, 3), dtype=int).dtype == np.int32


def test_annotations_keep_their_meaning():
    assert sim.array(sim.vec3) == sim.array(dtype=sim.vec3) == sim.array[sim.vec3]
    assert sim.array() == sim.array(dtype=float)
    assert sim.array2d[float] == sim.array(dtype=float, ndim=2)
    assert sim.array3d(dtype=sim.vec3) == sim.array(dtype=sim.vec3, ndim=3)
    assert sim.array4d(dtype=sim.vec3).storage == (np.float32, 5)
    assert sim.array1d[sim.mat33] == sim.array(dtype=sim.mat33)
    assert isinstance(sim.array2d(dtype=float), sim.array)
    assert hash(sim.array2d[float]) == hash(sim.array(dtype=float, ndim=2))


@pytest.mark.parametrize("call, error, words", [
    (lambda: sim.array([0, 0, 0, 0], dtype=sim.vec3), ValueError, ["data", "multiple of 3"]),
    (lambda: sim.array(5.0, dtype=float), ValueError, ["data", "scalar"]),
    (lambda: sim.array(np.arange(6.0), dtype=float, shape=(4,)), ValueError, ["shape"]),
    (lambda: sim.array2d([1.0, 2.0], dtype=float), ValueError, ["ndim", "2"]),
    (lambda: sim.array([1.0], dtype=float, strides=(4,)), TypeError, ["strides"]),
    (lambda: sim.array([1.0], dtype=float, device="gpu"), ValueError, ["device", "gpu"]),
    (lambda: sim.array([1.0], dtype="not a dtype"), TypeError, ["dtype"]),
    (lambda: sim.array(device="cpu"), TypeError, ["device", "data or a shape"]),
    (lambda: sim.array(sim.vec3, dtype=float), TypeError, ["dtype given twice"]),
    (lambda: sim.array2d(dtype=float, ndim=3), ValueError, ["ndim", "array2d"]),
    (lambda: sim.array(dtype=float, ndim=5), ValueError, ["ndim"]),
    (lambda: sim.ones(3, pinned="yes"), TypeError, ["pinned"]),
    (lambda: sim.full(3, 1.0, requires_grad=1), TypeError, ["requires_grad"]),
])
def test_bad_host_arguments_name_the_parameter(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value)


def test_allocation_helpers_take_warps_keywords():
    for factory in (sim.zeros, sim.empty, sim.ones):
        a = factory(3, dtype=sim.vec3, device="cpu", requires_grad=False, pinned=True)
        assert a.shape == (3, 3) and a.dtype == np.float32
    np.testing.assert_array_equal(sim.full(2, 7, dtype=int, pinned=False), [7, 7])
    np.testing.assert_array_equal(sim.zeros(shape=(2,), dtype=float), wp.zeros(
        shape=(2,), dtype=float, device="cpu").numpy())


def test_like_helpers_follow_their_source_and_its_gradient():
    """Warp's empty_like / ones_like / full_like / clone (and zeros_like): the source's
    shape, dtype and device; requires_grad=None gives a gradient when the source has one."""
    a = sim.array(np.arange(6.0).reshape(3, 2), dtype=sim.vec2, requires_grad=True)
    plain = sim.zeros(4, dtype=sim.int32)
    for factory in (sim.zeros_like, sim.empty_like, sim.ones_like, sim.clone):
        made = factory(a)
        assert made.shape == a.shape and made.dtype == a.dtype and made is not a
        assert sim.grad(made).shape == a.shape  # a's gradient: so has the result
        assert factory(a, requires_grad=False) is not None
        with pytest.raises(KeyError):
            sim.grad(factory(plain))
    np.testing.assert_array_equal(sim.ones_like(plain), np.ones(4))
    np.testing.assert_array_equal(sim.full_like(a, sim.vec2(1.0, 2.0)), [[1.0, 2.0]] * 3)
    np.testing.assert_array_equal(sim.full_like(plain, 7), [7] * 4)
    copied = sim.clone(a[::2])
    assert copied.flags.c_contiguous
    np.testing.assert_array_equal(copied, a[::2])
    copied[0, 0] = 99.0
    assert a[0, 0] == 0.0  # a copy, not a view
    with pytest.raises(TypeError, match="a: expected a NumPy or CuPy array"):
        sim.ones_like([1.0, 2.0])
    with pytest.raises(TypeError, match="requires_grad"):
        sim.empty_like(a, requires_grad="yes")


def test_get_device_and_its_attributes():
    cpu = sim.get_device("cpu")
    wp_cpu = wp.get_device("cpu")
    assert cpu == "cpu" and str(cpu) == "cpu" and cpu.alias == wp_cpu.alias
    assert (cpu.is_cpu, cpu.is_cuda, cpu.ordinal) == (wp_cpu.is_cpu, wp_cpu.is_cuda,
                                                       wp_cpu.ordinal)
    assert sim.get_device() == "cpu" and sim.get_device(None).is_cpu
    assert sim.get_device(cpu) is cpu
    gpu = sim.get_device("cuda:1")
    assert gpu.is_cuda and not gpu.is_cpu and gpu.ordinal == 1 and gpu == "cuda:1"
    assert sim.get_device("cuda").alias.startswith("cuda:")
    assert {cpu: 1}["cpu"] == 1 and repr(cpu) == "Device('cpu')"
    with pytest.raises(ValueError, match="device"):
        sim.get_device("gpu")
    with pytest.raises(TypeError, match="name"):
        sim.get_device(0)


def test_scoped_device_sets_the_allocation_default():
    assert arrays.current_device() == "cpu"
    with sim.ScopedDevice("cpu") as device:
        assert device == "cpu" and sim.get_device() == "cpu"
        assert isinstance(sim.zeros(2), np.ndarray)
        assert isinstance(sim.array([1.0, 2.0]), np.ndarray)
        with sim.ScopedDevice(sim.get_device("cpu")):
            assert sim.get_device().is_cpu
    assert arrays._device_scope == []
    with pytest.raises(ValueError, match="device"):
        sim.ScopedDevice("tpu")


@pytest.mark.skipif(arrays.cupy_or_none() is not None, reason="CuPy is installed")
def test_scoped_cuda_device_without_cupy_says_how_to_install_it():
    with pytest.raises(ImportError, match="CuPy"):
        with sim.ScopedDevice("cuda:0"):
            pass
    assert arrays._device_scope == []
    with pytest.raises(ImportError, match="CuPy"):
        sim.array([1.0], dtype=float, device="cuda")


def test_scoped_timer_prints_like_warp(capsys):
    timings = {}
    with sim.ScopedTimer("outer", dict=timings) as outer:
        with sim.ScopedTimer("inner"):
            time.sleep(0.01)
        outer.extra_msg = " (extra)"
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("    inner took ") and lines[0].endswith(" ms")
    assert lines[1].startswith("outer took ") and lines[1].endswith(" ms (extra)")
    assert outer.elapsed >= 10.0 and timings == {"outer": [outer.elapsed]}
    assert float(lines[1].split()[2]) == pytest.approx(outer.elapsed, abs=0.01)


def test_scoped_timer_quiet_inactive_and_synchronized(capsys):
    with sim.ScopedTimer("quiet", print=False, synchronize=True) as quiet:
        time.sleep(0.002)
    with sim.ScopedTimer("off", active=False) as off:
        time.sleep(0.002)
    reports = []
    with sim.ScopedTimer("reported", report_func=reports.append):
        pass
    assert capsys.readouterr().out == ""
    assert quiet.elapsed >= 2.0 and off.elapsed == 0.0
    assert len(reports) == 1 and reports[0].startswith("reported took ")
    with pytest.raises(TypeError, match="name"):
        sim.ScopedTimer(3)
    with pytest.raises(TypeError, match="dict"):
        sim.ScopedTimer("t", dict=[])
    with pytest.raises(TypeError):
        sim.ScopedTimer("t", use_nvtx=True)
