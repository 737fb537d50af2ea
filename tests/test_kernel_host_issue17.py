"""Issue 17, the kernel and host layer: ``isinstance(x, sim.array)`` of host arrays,
``sim.map``'s cache and element types, and the checks Warp makes when a kernel or func is
defined or compiled (named in each test)."""

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import map_kernels


# --------------------------------------------------------------------------
# isinstance(x, sim.array)


def test_host_arrays_are_instances_of_sim_array():
    assert isinstance(np.zeros(3, np.float32), sim.array)
    assert isinstance(sim.array([1.0, 2.0], dtype=sim.float32), sim.array)
    assert isinstance(sim.array(dtype=sim.vec3), sim.array)  # the annotation too
    assert not isinstance([1.0, 2.0], sim.array)
    assert not isinstance(3.0, sim.array)
    # only sim.array: Warp's arrays are not instances of array2d either
    assert not isinstance(np.zeros((2, 2)), sim.array2d)
    assert isinstance(sim.array2d(dtype=float), sim.array)


# --------------------------------------------------------------------------
# sim.map: the cache, and the element types of arrays passed to builtins and lambdas


def test_map_cache_reuses_a_lambda_written_again():
    a = np.arange(3, dtype=np.float32)
    map_kernels.map_cache.clear()
    for _ in range(2):
        np.testing.assert_array_equal(sim.map(lambda x, y: x + y, a, a), 2 * a)
    assert len(map_kernels.map_cache) == 1
    sim.map(lambda x, y: x + y, np.arange(4, dtype=np.float32), np.ones(4, np.float32))
    assert len(map_kernels.map_cache) == 1  # another shape, same kernel
    sim.map(lambda x, y: x + y, a.astype(np.float64), a.astype(np.float64))
    assert len(map_kernels.map_cache) == 2  # another dtype
    sim.map(lambda x, y: x + y, a.reshape(3, 1), a)
    assert len(map_kernels.map_cache) == 3  # another broadcast pattern


def test_map_lambda_closure_values_are_part_of_the_key():
    a = np.arange(3, dtype=np.float32)
    results = []
    for offset in (1.0, 5.0):
        results.append(sim.map(lambda x: x + offset, a))
    np.testing.assert_array_equal(results[0], a + 1.0)
    np.testing.assert_array_equal(results[1], a + 5.0)


def test_map_builtin_takes_value_type_elements_of_an_array():
    tf = sim.transform(sim.vec3(1.0, 2.0, 3.0), sim.quat_identity())
    points = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    out = sim.map(sim.transform_point, tf, points)
    np.testing.assert_allclose(out, points + [1.0, 2.0, 3.0])
    lengths = sim.map(sim.length, points)  # length takes no scalar: the rows are vec3s
    np.testing.assert_allclose(lengths, np.linalg.norm(points, axis=1), rtol=1e-6)
    np.testing.assert_array_equal(sim.map(sim.abs, -points), points)  # scalars first
    with pytest.raises(TypeError, match="does not support the provided argument types"):
        sim.map(sim.length, np.zeros(3, np.float32))


# --------------------------------------------------------------------------
# A kernel's source errors: Warp's classes, raised when the kernel is built


def test_kernel_source_errors_are_raised_when_the_kernel_is_built():
    @sim.kernel
    def returns_none(a: sim.array(dtype=float)):
        return None  # a value-returning statement, as in Warp

    @sim.kernel
    def annotated(a: sim.array(dtype=float)) -> float:
        return

    @sim.kernel
    def bare(a: sim.array(dtype=float)) -> None:  # allowed
        return

    a = np.zeros(1, np.float32)
    sim.launch(bare, dim=1, inputs=[a])
    for kernel in (returns_none, annotated):
        with pytest.raises(sim.WarpCodegenTypeError, match="Warp kernels cannot return values"):
            sim.launch(kernel, dim=1, inputs=[a])
        with pytest.raises(SyntaxError, match="cannot return a value"):  # again, and compiling
            kernel.compile("cpu", [a])


def test_list_and_dict_constructs_are_rejected():
    @sim.kernel
    def builds_list(a: sim.array(dtype=float)):
        x = [1.0, 2.0]  # noqa: F841

    @sim.kernel
    def builds_dict(a: sim.array(dtype=float)):
        a[0] = {"a": 1.0}["a"]

    a = np.zeros(1, np.float32)
    with pytest.raises(RuntimeError, match=r"List constructs are not supported in kernels"):
        sim.launch(builds_list, dim=1, inputs=[a])
    with pytest.raises(sim.WarpCodegenError, match=r"Construct `ast.Dict` not supported"):
        sim.launch(builds_dict, dim=1, inputs=[a])
    with pytest.raises(RuntimeError, match=r"Construct `ast.Set` not supported"):
        @sim.func  # a func's errors come at its definition
        def builds_set(x: float):
            return len({x})


def test_kernel_options_are_checked_at_decoration():
    with pytest.raises(ValueError, match=r"valid C\+\+ identifier"):
        @sim.kernel(name="1invalid")
        def invalid_name():
            return
    with pytest.raises(TypeError, match="name must be a str"):
        sim.kernel(name=3)(lambda: None)
    with pytest.raises(ValueError, match="must be 'warp' or 'external_constant_params'"):
        @sim.kernel(enable_backward=False, entry_point_abi="external")
        def unknown_abi():
            return
    with pytest.raises(ValueError, match="requires enable_backward=False"):
        @sim.kernel(entry_point_abi="external_constant_params")
        def needs_forward_only():
            return

    def make(name):
        @sim.kernel(module="unique", name=name)
        def named(x: float):
            return
        return named

    first, second = make("kernel_a"), make("kernel_b")
    assert first.key == "kernel_a" and first.module.name != second.module.name


# --------------------------------------------------------------------------
# Attributes of modules and values, and constants of plain classes


class Constants:
    ONE = 1
    HALF = 0.5


CAPTURED = sim.vec3(1.0, 2.0, 3.0)


def test_missing_attributes_are_warps_attribute_errors():
    @sim.kernel
    def missing_module(a: sim.array(dtype=float)):
        a[0] = sim.foo.bar

    @sim.kernel
    def missing_function(a: sim.array(dtype=float)):
        a[0] = sim.types.tid()

    @sim.kernel
    def missing_component(a: sim.array(dtype=float)):
        a[0] = CAPTURED.foo

    a = np.zeros(1, np.float32)
    with pytest.raises(AttributeError, match=r"`foo` is not an attribute of `sim`") as info:
        sim.launch(missing_module, dim=1, inputs=[a])
    assert not isinstance(info.value, sim.WarpCodegenError)  # as Warp's, an AttributeError only
    assert info.value.filename == __file__ and info.value.lineno > 0
    with pytest.raises(AttributeError, match=r"Could not find function wp.types.tid: sim.types"):
        sim.launch(missing_function, dim=1, inputs=[a])
    with pytest.raises(AttributeError, match=r"`foo` is not an attribute of `CAPTURED`"):
        sim.launch(missing_component, dim=1, inputs=[a])


def test_numbers_of_plain_classes_are_constants():
    @sim.kernel
    def reads_class(a: sim.array(dtype=float), n: sim.array(dtype=sim.int32)):
        n[0] = 123 + Constants.ONE
        a[0] = Constants.HALF + CAPTURED.y

    a, n = np.zeros(1, np.float32), np.zeros(1, np.int32)
    sim.launch(reads_class, dim=1, inputs=[a, n])
    assert n[0] == 124 and a[0] == 2.5


# --------------------------------------------------------------------------
# Warp's rule: a dynamic loop cannot change a constant


def test_mutating_a_constant_in_a_dynamic_loop_is_an_error():
    @sim.kernel
    def dynamic(n: int, a: sim.array(dtype=float)):
        total = 0.0
        for i in range(n):
            total += a[i]

    a = np.ones(3, np.float32)
    with pytest.raises(sim.WarpCodegenError, match=r"Error mutating a constant total inside a "
                                                    r"dynamic loop, use the following syntax"):
        sim.launch(dynamic, dim=1, inputs=[3, a])

    @sim.kernel
    def long_static(a: sim.array(dtype=float)):
        total = 0.0
        for i in range(100):  # more than max_unroll iterations: not unrolled, dynamic
            total += 1.0
        a[0] = total

    with pytest.raises(sim.WarpCodegenError, match="Error mutating a constant total"):
        sim.launch(long_static, dim=1, inputs=[a])
    with pytest.raises(RuntimeError, match="Error mutating a constant count"):
        @sim.func
        def counts(n: int):
            count = 0
            while count < n:
                count += 1
            return count


COUNT = 3


def test_unrolled_loops_and_typed_locals_may_change():
    @sim.kernel
    def allowed(n: int, a: sim.array(dtype=float)):
        total = 0.0
        for i in range(COUNT):  # compile-time bounds: unrolled in Warp
            total += a[i]
        size = 2
        for i in reversed(range(size + 1)):  # a local constant bound
            total += 1.0
        typed = float(0.0)  # a variable, not a constant
        for i in range(n):
            typed += a[i]
            fresh = 0.0  # assigned in the loop: not a constant before it
            fresh += 1.0
        a[0] = total + typed

    a = np.ones(3, np.float32)
    sim.launch(allowed, dim=1, inputs=[3, a])
    assert a[0] == 9.0


def test_rebinding_a_function_valued_local_is_an_error():
    @sim.kernel
    def same(out: sim.array(dtype=float)):
        f = twice
        f = twice  # the same function: allowed
        out[0] = f(3.0)

    @sim.kernel
    def another(out: sim.array(dtype=float)):
        f = twice
        f = sim.sin
        out[0] = f(3.0)

    @sim.kernel
    def value(out: sim.array(dtype=float)):
        f = twice
        f = 1.0
        out[0] = f

    out = np.zeros(1, np.float32)
    sim.launch(same, dim=1, inputs=[out])
    assert out[0] == 6.0
    with pytest.raises(sim.WarpCodegenError, match="rebinding function-valued local `f` to "
                                                    "another function"):
        sim.launch(another, dim=1, inputs=[out])
    with pytest.raises(sim.WarpCodegenError, match="rebinding function-valued local.*non-function"):
        sim.launch(value, dim=1, inputs=[out])


# --------------------------------------------------------------------------
# Func: Warp's func, get_overload and Python-scope calls


@sim.func
def apply(g: sim.Function, x: float):
    return g(x)


@sim.func
def twice(x: float):
    return x * 2.0


def test_func_attributes_and_python_scope_calls():
    assert apply.func.__name__ == "apply" and apply.func is not apply.py_func
    assert apply.get_overload([twice, float], {}) is apply
    assert apply.get_overload([lambda x: x, float], {}) is None
    assert apply.get_overload([float], {}) is None  # too few arguments
    assert apply(twice, 3.0) == 6.0
    assert abs(apply(sim.sin, 0.5) - np.sin(0.5)) < 1e-6  # builtins are functions too
    with pytest.raises(RuntimeError, match=r"^Error calling function 'apply', no overload found"):
        apply(lambda x: x, 3.0)


# --------------------------------------------------------------------------
# Host memory operations in a CPU capture


def test_host_operations_are_recorded_by_a_cpu_capture():
    from numba_sim.launch_capture import host_operation

    a = np.zeros(4, np.float32)
    host_operation(lambda: a.__setitem__(Ellipsis, 1.0))  # outside a capture: runs now
    assert (a == 1.0).all()
    with sim.capture("cpu") as graph:
        host_operation(lambda: a.__setitem__(Ellipsis, 7.0))
    assert (a == 1.0).all()  # recorded, not run
    graph.launch()
    assert (a == 7.0).all()
    a[:] = 0.0
    graph.launch()
    assert (a == 7.0).all()
    with pytest.raises(TypeError, match="step: expected a callable"):
        host_operation(3)


# --------------------------------------------------------------------------
# The compatibility module's spellings of Warp's host names


def test_compat_spells_warps_kernel_class_and_internal_names():
    from warp_suite import _warp_compat as wpc

    made = wpc.Kernel(func=_compat_kernel_body)
    assert isinstance(made, wpc.Kernel) and not isinstance(_compat_kernel_body, wpc.Kernel)
    codegen_error, = wpc.warp_internal("warp._src.codegen", "WarpCodegenError")
    assert codegen_error is sim.WarpCodegenError
    map_cache, = wpc.warp_internal("warp._src.utils", "map_cache")
    assert map_cache is map_kernels.map_cache
    reference, = wpc.warp_internal("warp._src.types", "Reference")
    assert isinstance(sim.ref[sim.int32], reference)
    a = np.arange(3, dtype=np.float32)
    with sim.capture("cpu") as graph:
        wpc.zero_(a)
    assert a[2] == 2.0
    graph.launch()
    assert (a == 0.0).all()


def _compat_kernel_body(a: sim.array(dtype=float)):
    a[0] = 1.0


@sim.func
def twice_minus_ten(a: float):
    return 2.0 * a - 10.0


def test_map_outputs_have_gradients_when_an_input_does():
    """Warp's rule: sim.map of a differentiable input gives an output with a gradient, and a
    taped map differentiates like the kernel it makes."""
    a = sim.array(np.arange(4, dtype=np.float32), requires_grad=True)
    tape = sim.Tape()
    with tape:
        out = sim.map(twice_minus_ten, a)
    sim.grad(out)[:] = 1.0
    tape.backward()
    np.testing.assert_array_equal(sim.grad(a), np.full(4, 2.0, np.float32))
    with pytest.raises(KeyError):
        sim.grad(sim.map(twice_minus_ten, np.arange(4, dtype=np.float32)))
