"""@sim.kernel, @sim.func, tid() and sim.launch on the CPU; every kernel also
compiles and links for CUDA offline through kernel.compile."""

import threading

import numba
import numpy as np
import pytest

import numba_sim as sim
from numba_sim.launcher import launcher_for

GRAVITY = sim.vec3(0.0, -9.8, 0.0)
DT = 1.0 / 60.0


# --------------------------------------------------------------------------
# The seed's particle update, on 1-D to 4-D launches


@sim.kernel
def integrate_1d(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
    i = sim.tid()
    v[i] = v[i] + GRAVITY * dt
    x[i] = x[i] + v[i] * dt


@sim.kernel
def integrate_2d(x: sim.array(dtype=sim.vec3, ndim=2), v: sim.array(dtype=sim.vec3, ndim=2),
                 dt: float):
    i, j = sim.tid()
    v[i, j] = v[i, j] + GRAVITY * dt
    x[i, j] = x[i, j] + v[i, j] * dt


@sim.kernel
def integrate_3d(x: sim.array(dtype=sim.vec3, ndim=3), v: sim.array(dtype=sim.vec3, ndim=3),
                 dt: float):
    i, j, k = sim.tid()
    v[i, j, k] = v[i, j, k] + GRAVITY * dt
    x[i, j, k] = x[i, j, k] + v[i, j, k] * dt


@sim.kernel
def integrate_4d(x: sim.array(dtype=sim.vec3, ndim=4), v: sim.array(dtype=sim.vec3, ndim=4),
                 dt: float):
    i, j, k, l = sim.tid()
    v[i, j, k, l] = v[i, j, k, l] + GRAVITY * dt
    x[i, j, k, l] = x[i, j, k, l] + v[i, j, k, l] * dt


INTEGRATE = {1: integrate_1d, 2: integrate_2d, 3: integrate_3d, 4: integrate_4d}
SHAPES = {1: (1000,), 2: (7, 33), 3: (3, 5, 7), 4: (2, 3, 4, 5)}


def particles(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, shape + (3,)).astype(np.float32)
    v = rng.uniform(-1, 1, shape + (3,)).astype(np.float32)
    return x, v


def integrate_numpy(x, v, dt):
    dt = np.float32(dt)
    v = v + np.asarray(GRAVITY) * dt
    return x + v * dt, v


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_particle_update_matches_numpy(ndim):
    x, v = particles(SHAPES[ndim])
    expected_x, expected_v = integrate_numpy(x, v, DT)
    sim.launch(INTEGRATE[ndim], dim=SHAPES[ndim], inputs=[x, v, DT])
    np.testing.assert_array_equal(v, expected_v)
    np.testing.assert_array_equal(x, expected_x)


def test_large_launch_matches_numpy_on_the_parallel_path():
    x, v = particles((100_003,), seed=1)
    expected_x, expected_v = integrate_numpy(x, v, DT)
    sim.launch(integrate_1d, dim=x.shape[0], inputs=[x, v, DT])
    np.testing.assert_array_equal(x, expected_x)
    np.testing.assert_array_equal(v, expected_v)


@sim.kernel
def index_grid(out: sim.array(dtype=sim.int32, ndim=2), leading: sim.array(dtype=sim.int32, ndim=2)):
    i, j = sim.tid()
    out[i, j] = i * 100 + j
    first = sim.tid()  # a single target takes the leading index (Warp's rule)
    leading[i, j] = first


def test_tid_is_row_major_and_a_single_target_is_the_leading_index():
    out = np.zeros((4, 6), np.int32)
    leading = np.zeros((4, 6), np.int32)
    sim.launch(index_grid, dim=(4, 6), inputs=[out, leading])
    rows, cols = np.indices((4, 6))
    np.testing.assert_array_equal(out, rows * 100 + cols)
    np.testing.assert_array_equal(leading, rows)


@sim.kernel
def negated_tid(out: sim.array(dtype=sim.int64)):
    i = sim.tid()
    out[i] = -i  # a uint64 index (prange's) would wrap to about 1.8e19


def test_tid_is_a_signed_int():
    out = np.zeros(5000, np.int64)
    sim.launch(negated_tid, dim=5000, inputs=[out])
    np.testing.assert_array_equal(out, -np.arange(5000))


# --------------------------------------------------------------------------
# Every core


@sim.kernel
def record_thread(ids: sim.array(dtype=sim.int32)):
    i = sim.tid()
    ids[i] = numba.get_thread_id()


def test_parallel_launcher_runs_on_several_threads():
    """The parallel launcher spreads a large launch over several threads.  Which launcher a
    launch takes is the policy's choice (cpu_scheduling.py: a busy machine keeps launches on
    one thread), tested with a simulated clock in test_contention.py; here the parallel
    launcher is called itself.  TBB's work stealing may leave a launch to the calling thread
    alone while the other cores are taken, so a few launches are tried."""
    if numba.get_num_threads() < 2:
        pytest.skip("one Numba thread")
    ids = np.full(4_000_000, -1, np.int32)
    parallel = launcher_for(record_thread, "cpu", 1).parallel
    used = 0
    for _ in range(20):
        ids[:] = -1
        parallel((ids.shape[0],), ids)
        assert (ids >= 0).all()
        used = max(used, len(np.unique(ids)))
        if used >= 2:
            break
    assert used >= 2


def test_launch_of_either_launcher_covers_every_thread():
    ids = np.full(1_000_000, -1, np.int32)
    for _ in range(8):  # past the policy's first trial: both launchers have run
        ids[:] = -1
        sim.launch(record_thread, dim=ids.shape[0], inputs=[ids])
        assert (ids >= 0).all() and (ids < numba.get_num_threads()).all()


def test_launches_from_four_python_threads_at_once():
    results, errors = {}, []
    start = threading.Barrier(4)

    def worker(k):
        try:
            start.wait()
            for repeat in range(5):
                x, v = particles((20_000 + k,), seed=k)
                expected_x, _ = integrate_numpy(x, v, DT)
                sim.launch(integrate_1d, dim=x.shape[0], inputs=[x, v, DT])
                results[(k, repeat)] = np.array_equal(x, expected_x)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 20 and all(results.values())


# --------------------------------------------------------------------------
# funcs, njit helpers, closures, value arguments, unannotated parameters


@sim.func
def damp(v: sim.vec3, factor: float):
    return v * factor


@numba.njit
def clamp_below(y, floor):
    return max(y, floor)


@sim.kernel
def with_helpers(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), offset: sim.vec3,
                 factor: float):
    i = sim.tid()
    w = damp(v[i], factor) + offset
    p = x[i] + w
    x[i] = sim.vec3(p.x, clamp_below(p.y, 0.0), p.z)


def test_kernel_calls_funcs_njit_helpers_and_takes_value_arguments():
    x, v = particles((500,), seed=3)
    offset = sim.vec3(0.5, -2.0, 0.25)
    expected = x + v * np.float32(0.5) + np.asarray(offset)
    expected[:, 1] = np.maximum(expected[:, 1], 0)
    sim.launch(with_helpers, dim=500, inputs=[x, v, offset, 0.5])
    np.testing.assert_allclose(x, expected, rtol=1e-6, atol=1e-6)


def test_func_runs_as_python_and_in_plain_njit():
    assert damp(sim.vec3(1, 2, 3), 2.0) == sim.vec3(2, 4, 6)

    @numba.njit
    def use(v):
        return damp(v, 0.5)

    assert use(sim.vec3(2, 4, 6)) == sim.vec3(1, 2, 3)


def make_scaler(scale):
    @sim.func
    def scaled(a):
        return a * scale

    @sim.kernel
    def apply(values: sim.array(dtype=float)):
        i = sim.tid()
        values[i] = scaled(values[i]) + scale

    return apply


def test_kernels_and_funcs_defined_inside_functions_keep_their_closures():
    values = np.arange(10, dtype=np.float32)
    sim.launch(make_scaler(3.0), dim=10, inputs=[values])
    np.testing.assert_array_equal(values, np.arange(10) * 3.0 + 3.0)


@sim.kernel
def unannotated(values, scale, out):
    i = sim.tid()
    out[i] = values[i, 0] * scale + values[i, 1]


def test_unannotated_parameters_are_typed_from_the_arguments():
    values = np.arange(20, dtype=np.float64).reshape(10, 2)
    out = np.zeros(10, np.float64)
    sim.launch(unannotated, dim=10, inputs=[values, 3], outputs=[out])
    np.testing.assert_array_equal(out, values[:, 0] * 3 + values[:, 1])


def test_view_in_plain_njit_code():
    @numba.njit
    def total_length(points):
        p = sim.view(points, sim.vec3)
        s = 0.0
        for i in range(p.shape[0]):
            s += sim.length(p[i])
        p[0] = sim.vec3(1.0, 2.0, 3.0)
        return s, len(p)

    points = np.random.default_rng(0).normal(size=(50, 3)).astype(np.float32)
    expected = np.linalg.norm(points, axis=1).sum()
    s, n = total_length(points)
    assert n == 50 and abs(s - expected) < 1e-3
    np.testing.assert_array_equal(points[0], [1, 2, 3])  # zero-copy


@sim.kernel
def scale_components(points: sim.array(dtype=sim.vec3), scale: float):
    i = sim.tid()
    flat = sim.view(points, float)  # (n, 3) float32, the same memory
    for k in range(3):
        flat[i, k] = flat[i, k] * scale


def test_view_of_value_elements_as_their_scalars():
    points = np.arange(12, dtype=np.float32).reshape(4, 3)
    sim.launch(scale_components, dim=4, inputs=[points, 2.0])
    np.testing.assert_array_equal(points, np.arange(12).reshape(4, 3) * 2.0)

    @numba.njit
    def components(m):
        flat = sim.view(sim.view(m, sim.mat22), sim.float32)
        flat[1, 0, 1] = 7.0
        return flat.shape

    matrices = np.zeros((3, 2, 2), np.float32)
    assert components(matrices) == (3, 2, 2)
    assert matrices[1, 0, 1] == 7.0 and matrices.sum() == 7.0
    assert sim.view(points, float) is points  # Python: NumPy arrays hold the scalars


def test_view_of_value_elements_as_their_scalars_compiles_for_cuda(private_device_code_cache):
    points = np.zeros((4, 3), np.float32)
    library = scale_components.compile("cuda", [points, 2.0], cc=(7, 5))  # links a cubin
    assert ".entry" in library.get_asm_str(cc=(7, 5))


def test_view_as_scalars_names_what_it_needs():
    @numba.njit
    def as_float32(points):
        return sim.view(sim.view(points, sim.vec3d), sim.float32).shape

    with pytest.raises(numba.core.errors.TypingError,
                       match="viewing as float32 needs a C-contiguous array of value types "
                             "of float32"):
        as_float32(np.zeros((2, 3)))

    @numba.njit
    def as_int(points):
        return sim.view(points, sim.int32)

    with pytest.raises(numba.core.errors.TypingError, match="viewing as int32 needs"):
        as_int(np.zeros(4, np.float32))


def test_host_helpers_have_trailing_storage_dims():
    assert sim.zeros(5, dtype=sim.vec3).shape == (5, 3)
    assert sim.zeros((2, 4), dtype=sim.mat33).shape == (2, 4, 3, 3)
    assert sim.empty(3, dtype=sim.transform).shape == (3, 7)
    assert sim.ones(3, dtype=sim.quatd).dtype == np.float64
    assert sim.zeros(4).dtype == np.float32 and sim.zeros(4, dtype=int).dtype == np.int32
    full = sim.full(3, sim.vec3(1, 2, 3), dtype=sim.vec3)
    np.testing.assert_array_equal(full, [[1, 2, 3]] * 3)
    np.testing.assert_array_equal(sim.zeros_like(full), np.zeros((3, 3)))
    copy = sim.from_numpy([[1, 2, 3]], dtype=sim.vec3)
    assert copy.dtype == np.float32 and copy.shape == (1, 3)
    assert sim.to_numpy(copy) is copy
    with pytest.raises(ValueError, match="not a multiple of 3, the storage of vec3"):
        sim.from_numpy(np.zeros((2, 4)), dtype=sim.vec3)
    with pytest.raises(ValueError, match="device"):
        sim.zeros(3, device="gpu")


def test_array_annotation_spellings():
    assert sim.array[sim.vec3] == sim.array(dtype=sim.vec3, ndim=1)
    assert sim.array(dtype=float).dtype == np.float32
    assert sim.array(dtype=int).dtype == np.int32
    with pytest.raises(ValueError, match="ndim"):
        sim.array(dtype=float, ndim=5)


# --------------------------------------------------------------------------
# Launch errors


class FakeCudaArray:
    """Anything with __cuda_array_interface__ counts as a CUDA array."""

    def __init__(self, shape, dtype=np.float32):
        self.shape, self.dtype, self.ndim = shape, np.dtype(dtype), len(shape)
        self.__cuda_array_interface__ = {"shape": shape, "typestr": self.dtype.str,
                                         "data": (0, False), "version": 3, "strides": None}


@pytest.mark.parametrize(
    "inputs, error, fragments",
    [
        ([np.zeros((4, 3), np.float32), np.zeros((4, 3), np.float32)], TypeError,
         ["takes 3 arguments", "(x, v, dt)", "2 given"]),
        ([np.zeros((4, 3), np.float64), np.zeros((4, 3), np.float32), 0.1], TypeError,
         ["'x'", "float32", "float64", "(4, 3)", "cpu"]),
        ([np.zeros((4, 4), np.float32), np.zeros((4, 3), np.float32), 0.1], ValueError,
         ["'x'", "ending in (3,)", "(4, 4)"]),
        ([np.zeros((4, 3), np.float32), np.zeros((3, 4), np.float32).T, 0.1], ValueError,
         ["'v'", "C-contiguous"]),
        ([np.zeros((4, 3), np.float32), [1, 2, 3], 0.1], TypeError, ["'v'", "list"]),
        ([np.zeros((4, 3), np.float32), np.zeros((4, 3), np.float32), "fast"], TypeError,
         ["'dt'", "float32 scalar", "fast"]),
        ([np.zeros((4, 3), np.float32), FakeCudaArray((4, 3)), 0.1], ValueError,
         ["'v' is on cuda", "'x' is on cpu", "one device"]),
    ],
)
def test_bad_launch_arguments_name_the_parameter(inputs, error, fragments):
    with pytest.raises(error) as info:
        sim.launch(integrate_1d, dim=4, inputs=inputs)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def test_bad_dims():
    x, v = particles((4,))
    with pytest.raises(ValueError, match="2\\^31 - 1"):
        sim.launch(integrate_2d, dim=(2**16, 2**16), inputs=[x[None], v[None], DT])
    with pytest.raises(TypeError, match="dim"):
        sim.launch(integrate_1d, dim="4", inputs=[x, v, DT])
    with pytest.raises(ValueError, match=">= 0"):
        sim.launch(integrate_1d, dim=-1, inputs=[x, v, DT])
    with pytest.raises(ValueError, match="device='cuda'.*'x' is on cpu"):
        sim.launch(integrate_1d, dim=4, inputs=[x, v, DT], device="cuda")
    with pytest.raises(TypeError, match="expected a @sim.kernel"):
        sim.launch(lambda: None, dim=1)
    sim.launch(integrate_1d, dim=0, inputs=[x, v, DT])  # an empty launch does nothing


def test_dim_equal_to_a_value_arrays_host_shape_warns():
    x, v = particles((8,))
    with pytest.warns(UserWarning, match=r"launch with dim=\(8,\)"):
        sim.launch(integrate_2d, dim=x[None].shape[:2] + (3,), inputs=[x[None], v[None], DT]) \
            if False else sim.launch(integrate_1d, dim=x.shape, inputs=[x, v, DT])


def test_calling_a_kernel_directly_is_an_error():
    with pytest.raises(TypeError, match="sim.launch"):
        integrate_1d(1, 2, 3)


# --------------------------------------------------------------------------
# Errors at definition and compile time, with the user's file and line


def test_kernel_returning_a_value_is_rejected_with_file_and_line():
    @sim.kernel
    def returns(a: sim.array(dtype=float)):  # defined: Warp reports it when it builds the kernel
        return a[0]

    with pytest.raises(SyntaxError) as info:
        sim.launch(returns, dim=1, inputs=[np.zeros(1, np.float32)])
    assert "cannot return a value" in str(info.value)
    assert isinstance(info.value, sim.WarpCodegenTypeError)  # Warp's class for it
    assert info.value.filename == __file__ and info.value.lineno > 0
    assert "return a[0]" in info.value.text


def test_tid_in_a_func_is_rejected_at_definition():
    with pytest.raises(SyntaxError, match="only legal inside a @sim.kernel"):
        @sim.func
        def uses_tid():
            return sim.tid()


def test_tid_in_plain_njit_is_a_typing_error():
    @numba.njit
    def plain():
        return sim.tid()

    with pytest.raises(numba.core.errors.TypingError, match="only legal inside a @sim.kernel"):
        plain()
    with pytest.raises(RuntimeError, match="only legal inside a @sim.kernel"):
        sim.tid()


@sim.kernel
def unsupported(values: sim.array(dtype=float)):
    i = sim.tid()
    values[i] = len(values.tolist())  # NumPy's tolist, which Numba does not type


def test_unsupported_construct_reports_the_users_file_and_line():
    values = np.zeros(2, np.float32)
    with pytest.raises(numba.core.errors.TypingError) as info:
        sim.launch(unsupported, dim=2, inputs=[values])
    assert "test_kernels.py" in str(info.value)


# --------------------------------------------------------------------------
# CUDA: every kernel of this module compiles and links offline


CUDA_CASES = [
    (integrate_1d, lambda: list(particles((4,))) + [DT], 1),
    (integrate_2d, lambda: list(particles((2, 2))) + [DT], 2),
    (integrate_3d, lambda: list(particles((2, 2, 2))) + [DT], 3),
    (integrate_4d, lambda: list(particles((2, 2, 2, 2))) + [DT], 4),
    (index_grid, lambda: [np.zeros((2, 2), np.int32)] * 2, 2),
    (with_helpers, lambda: list(particles((4,))) + [sim.vec3(), 0.5], 1),
    (make_scaler(2.0), lambda: [np.zeros(4, np.float32)], 1),
    (unannotated, lambda: [np.zeros((4, 2)), 3, np.zeros(4)], 1),
]


@pytest.mark.parametrize("kernel, inputs, ndim", CUDA_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_kernels_compile_and_link_for_cuda_offline(kernel, inputs, ndim):
    library = kernel.compile("cuda", inputs(), cc=(7, 5), ndim=ndim)
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


def test_inspect_gives_generated_code():
    inputs = list(particles((4,))) + [DT]
    assert "define" in integrate_1d.inspect("cpu", "llvm", inputs)
    assert integrate_1d.inspect("cpu", "asm", inputs)
    ptx = integrate_1d.inspect("cuda", "ptx", inputs, cc=(7, 5))
    assert ".entry" in ptx and ".f64" not in ptx
    assert integrate_1d.inspect("cuda", "cubin", inputs, cc=(9, 0))[:4] == b"\x7fELF"
    with pytest.raises(ValueError, match="kind"):
        integrate_1d.inspect("cpu", "ptx", inputs)


def test_inspect_without_argument_types_gives_every_compiled_signature():
    @sim.kernel
    def scale(a: sim.array(dtype=float, ndim=2), b, factor: float):
        i, j = sim.tid()
        a[i, j] = a[i, j] * factor + b[i, j]

    with pytest.raises(ValueError, match=r"scale: nothing is compiled for cpu yet"):
        scale.inspect("cpu", "llvm")
    a = np.ones((3, 4), np.float32)
    sim.launch(scale, dim=(3, 4), inputs=[a, np.ones((3, 4), np.float32), 2.0])
    sim.launch(scale, dim=(3, 4), inputs=[a, np.ones((3, 4), np.float64), 2.0])
    code = scale.inspect("cpu", "llvm")
    assert len(code) == 2 and all("define" in text for text in code.values())
    dims, _, b_type, factor_type = next(iter(code))
    assert str(dims) == "UniTuple(int64 x 2)" and str(factor_type) == "float32"
    assert {str(signature[2].dtype) for signature in code} == {"float32", "float64"}
    with pytest.raises(ValueError, match=r"nothing is compiled for cuda yet"):
        scale.inspect("cuda", "ptx", cc=(7, 5))


def test_warp_decorator_options_are_accepted_and_unknown_ones_named():
    @sim.kernel(enable_backward=False, module="unique", launch_bounds=256)
    def fill(a: sim.array(dtype=float)):
        i = sim.tid()
        a[i] = 2.0

    a = np.zeros(4, np.float32)
    sim.launch(fill, 4, [a])
    assert a.tolist() == [2.0] * 4 and fill.enable_backward is False

    @sim.func(module="unique", inline=True)
    def twice(x: float):
        return x * 2.0

    assert twice(1.5) == 3.0
    with pytest.raises(TypeError, match=r"@sim.kernel: unknown option 'enable_backwards' "
                                        r"\(Warp's options are .*enable_backward"):
        sim.kernel(enable_backwards=False)
    with pytest.raises(TypeError, match=r"@sim.func: unknown options 'inlined', 'name_'"):
        sim.func(inlined=True, name_="x")
