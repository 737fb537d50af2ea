"""sim.ref[T]: pass-by-reference parameters of @sim.func (Warp's wp.ref[T])."""

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.kernel_language import KernelSourceError
from numba_sim.references import Reference


def test_the_annotation_is_warps_reference_type():
    r = sim.ref[sim.int32]
    assert isinstance(r, Reference) and r.dtype is sim.int32 and r.value_type is sim.int32
    assert r == sim.ref(sim.int32) and hash(r) == hash(sim.ref[sim.int32])
    assert r != sim.ref[sim.float32]
    assert repr(r) == "wp.ref[int32]" and repr(sim.ref[sim.vec3]) == "wp.ref[vec3]"
    with pytest.raises(TypeError, match="ref: expected a value type"):
        sim.ref[sim.ref[int]]


@sim.struct
class Counter:
    value: sim.int32
    scale: sim.vec3


@sim.func
def increment(x: sim.ref[sim.int32]):
    x += 1


@sim.func
def forward(x: sim.ref[sim.int32]):
    increment(x)  # a reference parameter passed on to another


@sim.func
def bump_counter(c: sim.ref[Counter]):
    c.value += 10
    c.scale.y = 2.0


@sim.func
def exchange(x: sim.ref[sim.float32], value: sim.float32) -> sim.float32:
    old, x = x, value
    return old


@sim.func
def swap(x: sim.ref[sim.float32], y: sim.ref[sim.float32]):
    x, y = y, x


@sim.func
def set_vec(v: sim.ref[sim.vec3], value: sim.vec3):
    v -= v
    v += value


@sim.kernel
def references(ints: sim.array(dtype=sim.int32), floats: sim.array(dtype=float),
               counters: sim.array(dtype=Counter)):
    i = sim.tid()
    local = sim.int32(0)
    increment(local)
    forward(local)
    ints[3 * i] = local
    increment(ints[3 * i + 1])                          # an array element
    c = Counter()
    bump_counter(c)
    ints[3 * i + 2] = c.value + int(c.scale.y)
    bump_counter(counters[i])                           # a struct array element
    x = sim.float32(9.0)
    floats[4 * i] = exchange(x, 2.0) + 1.0             # the value, then the write-back
    floats[4 * i + 1] = x
    swap(floats[4 * i + 2], floats[4 * i + 3])
    v = sim.vec3(1.0, 2.0, 3.0)
    swap(v.x, v[2])                                     # components
    set_vec(counters[i].scale, v)                       # a field of an array element
    if exchange(counters[i].scale.z, 5.0) > 0.0:        # in an if's condition
        counters[i].value += 100


def test_references_mutate_the_callers_storage():
    ints = np.zeros(6, np.int32)
    ints[1] = 40
    floats = np.tile(np.array([0, 0, 3, 4], np.float32), 2)
    counters = np.zeros(2, dtype=Counter.numpy_dtype)
    sim.launch(references, dim=2, inputs=[ints, floats, counters])
    np.testing.assert_array_equal(ints, [2, 41, 12, 2, 1, 12])
    np.testing.assert_array_equal(floats, [10, 2, 4, 3] * 2)
    np.testing.assert_array_equal(counters["value"], [110, 110])
    np.testing.assert_array_equal(counters["scale"], [[3, 2, 5]] * 2)


def test_a_func_with_references_still_runs_as_python():
    assert exchange.py_func(1.0, 2.0) == (1.0, 2.0)  # its result, then the references


@sim.func
def make_counter() -> Counter:
    return Counter()


@pytest.mark.parametrize("body, message", [
    ("increment(sim.int32(5))", "'sim.int32\\(5\\)' is a temporary value"),
    ("increment(make_counter().value)", "'make_counter\\(\\).value' is a temporary value"),
    ("increment(a[0] + 1)", "is a temporary value"),
    ("x = 0\n    increment(x)", "x = sim.int32\\(0\\) \\(Warp: x = wp.int32\\(0\\)\\)"),
    ("x = 1.0\n    exchange(x, 2.0)", "x = sim.float32\\(1.0\\)"),
    ("y = increment(a[0])", "returns no value"),
    ("while exchange(a[0], 1.0) > 0.0:\n        pass", "cannot be a while loop's condition"),
])
def test_arguments_that_are_not_storage_are_rejected_at_the_call(body, message, tmp_path):
    source = tmp_path / "bad_reference.py"
    source.write_text(
        "import numba_sim as sim\n\n"
        "@sim.kernel\n"
        f"def bad(a: sim.array(dtype=float)):\n    {body}\n\n"
        "bad.compile('cpu', [sim.zeros(1)])\n")  # a kernel's errors come when it is built
    namespace = {"__name__": "bad_reference", "__file__": str(source), "exchange": exchange,
                 "increment": increment, "make_counter": make_counter}
    with pytest.raises(KernelSourceError, match=f"sim.ref parameter|{message}") as info:
        exec(compile(source.read_text(), str(source), "exec"), namespace)
    assert info.match(message)
    assert "bad_reference.py" in str(info.value)


def test_overloads_taking_references_are_rejected_at_the_call(tmp_path):
    source = tmp_path / "overloaded_reference.py"
    source.write_text(
        "import numba_sim as sim\n\n"
        "@sim.func\ndef twice(x: sim.ref[sim.int32]):\n    x *= 2\n\n"
        "@sim.func\ndef twice(x: sim.ref[sim.float32]):\n    x *= 2.0\n\n"
        "@sim.kernel\ndef bad(a: sim.array(dtype=float)):\n    twice(a[0])\n\n"
        "bad.compile('cpu', [sim.zeros(1)])\n")
    namespace = {"__name__": "overloaded_reference", "__file__": str(source)}
    with pytest.raises(KernelSourceError, match="twice has overloads with sim.ref parameters"):
        exec(compile(source.read_text(), str(source), "exec"), namespace)


def test_overloads_differing_only_by_references_are_rejected(tmp_path):
    source = tmp_path / "refness_overload.py"
    source.write_text(
        "import numba_sim as sim\n\n"
        "@sim.func\ndef f(x: sim.int32) -> sim.int32:\n    return x\n\n"
        "@sim.func\ndef f(x: sim.ref[sim.int32]):\n    x += 1\n")
    namespace = {"__name__": "refness_overload", "__file__": str(source)}
    with pytest.raises(RuntimeError, match="'f' with signatures that differ only by sim.ref"):
        exec(compile(source.read_text(), str(source), "exec"), namespace)


def test_references_compile_for_cuda_offline():
    counters = np.zeros(2, dtype=Counter.numpy_dtype)
    library = references.compile("cuda", [np.zeros(6, np.int32), np.zeros(8, np.float32),
                                          counters], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
