"""The instrument of issue 17: tools/port_warp_tests.py (the generator of tests/warp_suite/)
and the host compatibility module the ported files import."""

import ast
import importlib.util
import sys
import unittest
from pathlib import Path

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.kernel import Func, Kernel
from warp_suite import _warp_compat as wpc

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("port_warp_tests", REPO / "tools" / "port_warp_tests.py")
port = importlib.util.module_from_spec(_spec)
sys.modules["port_warp_tests"] = port
_spec.loader.exec_module(port)


def test_the_ported_suite_is_exactly_what_the_generator_writes():
    assert port.check() == []


WARP_SOURCE = '''\
"""doc mentions warp.foo and wp.bar"""
import numpy as np

import warp as wp
from warp.tests.unittest_utils import *
from warp._src.codegen import Var, codegen_func_forward as cff
import warp.examples


@wp.kernel
def k(a: wp.array(dtype=wp.vec3), b: wp.array2d[float]):
    i = wp.tid()
    a[i] = wp.normalize(a[i])


def helper(device):
    x = wp.zeros(3, dtype=wp.vec3, device=device)
    y = wp.Kernel(func=k.func)
    msg = "wp.vec3 stays"
    wp.types.vector(length=3, dtype=wp.float32)
    x.zero_()
    x.fill_(wp.vec3(1.0))
    x.assign(x.to("cpu").numpy())
    np.linalg.norm(x.numpy()[0]).numpy
    return wp.examples.get_asset_directory(), wp._src.context, msg


def renamed():
    import warp as uncommon_name
    return uncommon_name.abs(-1.0)
'''


def test_rewrites_apply_to_code_in_order_and_are_counted():
    text, counts = port.rewrite_source(WARP_SOURCE)
    ast.parse(text)
    assert '"""doc mentions warp.foo and wp.bar"""' in text          # strings untouched
    assert 'msg = "wp.vec3 stays"' in text
    assert "import numba_sim as sim\nfrom warp_suite import _warp_compat as wpc\n" in text
    assert "from warp_suite._warp_compat import *" in text
    assert "Var, cff = wpc.warp_internal('warp._src.codegen', 'Var', 'codegen_func_forward')" in text
    assert "pass  # port_warp_tests: a Warp submodule; its uses -> wpc.warp_module" in text
    assert "@sim.kernel\ndef k(a: sim.array(dtype=sim.vec3), b: sim.array2d[float]):" in text
    assert "y = wpc.Kernel(func=k.func)" in text
    assert "sim.types.vector(length=3, dtype=sim.float32)" in text
    assert "wpc.zero_(x)" in text and "wpc.fill_(x, sim.vec3(1.0))" in text
    assert "wpc.assign(x, sim.to_numpy(wpc.to_device(x, \"cpu\")))" in text  # innermost first
    assert "np.linalg.norm(sim.to_numpy(x)[0]).numpy" in text            # not a call: kept
    assert "wpc.warp_module('examples').get_asset_directory()" in text
    assert "wpc.warp_module('_src').context" in text
    assert "wp." not in text.replace('"wp.vec3 stays"', "").replace("and wp.bar", "")
    assert counts["method_numpy"] == 2 and counts["method_to"] == 1
    assert "    import numba_sim as uncommon_name\n" in text                # another alias
    assert "uncommon_name.abs(-1.0)" in text and counts["import_warp_as_other"] == 1
    assert counts["warp_submodule_imports"] == 2 and counts["host_names"] == 1


TEMPLATE_SOURCE = '''\
import warp as wp

TEMPLATE = """
import warp as wp

C = wp.{dtype}({value})

@wp.kernel
def k():
    print(wp.static(C), wp.zeros(1).numpy())
"""

SCRIPT = """\\
import warp as wp
from warp._src import context as ctx, types

@wp.func(module="unique")
def f(x: float):
    return x + 1.0
"""

SIMPLE = """
import warp as wp
wp.config.mode = "debug"
"""

MESSAGE = """wp.vec3 is not
import warp as wp in a sentence"""
'''


def test_python_sources_in_strings_are_code():
    """A string literal that is a module's source importing Warp (a template a test writes
    to a file and imports, or runs in a subprocess) gets the line rewrites; the compat import
    only where the source uses it; other strings keep Warp's names."""
    text, counts = port.rewrite_source(TEMPLATE_SOURCE)
    namespace = {}
    exec(compile(text.replace("import numba_sim as sim\nfrom warp_suite import _warp_compat as "
                              "wpc\n", "", 1), "<template>", "exec"), namespace)
    template = namespace["TEMPLATE"]
    assert "import numba_sim as sim\nfrom warp_suite import _warp_compat as wpc\n" not in template
    assert "C = sim.{dtype}({value})" in template and "@sim.kernel" in template
    # the line rewrites (2-7) only: rewrite 1 works on the syntax tree of the file's code
    assert "print(sim.static(C), sim.zeros(1).numpy())" in template
    assert "wpc" not in namespace["SIMPLE"]
    script = namespace["SCRIPT"]
    assert script.startswith("import numba_sim as sim\nfrom warp_suite import _warp_compat as "
                             "wpc\nctx, types = wpc.warp_internal('warp._src', 'context', "
                             "'types')\n\n@sim.func(module=\"unique\")")
    assert "wp.vec3 is not" in namespace["MESSAGE"]  # not a module's source (no import line)
    assert namespace["SIMPLE"] == '\nimport numba_sim as sim\nsim.config.mode = "debug"\n'
    assert counts["python_source_strings"] == 3


def _cases(source, names):
    return [{"class": "T", "name": n, "uses": [n.removesuffix("_cpu")], "no_devices": False}
            for n in names]


CLASSIFY_SOURCE = '''\
import warp as wp

TOL = {np.float16: 1e-3, np.float32: 1e-6}

@wp.kernel
def half_kernel(a: wp.array(dtype=wp.vec3h)):
    pass

@wp.func_grad(wp.normalize)
def adj_normalize(x: wp.vec3, adj: wp.vec3):
    pass

@wp.kernel
def plain(a: wp.array(dtype=float)):
    pass

def test_half(test, device):
    wp.launch(half_kernel, dim=1, inputs=[])

def test_grad(test, device):
    tape = wp.Tape()
    wp.launch(plain, dim=1, inputs=[])

def test_plain_float32(test, device):
    print(TOL)
    wp.launch(plain, dim=1, inputs=[])

def test_plain_float16(test, device):
    wp.launch(plain, dim=1, inputs=[])
'''


def test_out_of_scope_is_decided_by_what_a_case_uses():
    names = ["test_half_cpu", "test_grad_cpu", "test_plain_float32_cpu", "test_plain_float16_cpu"]
    result, dropped = port.classify("test_x.py", CLASSIFY_SOURCE, _cases(CLASSIFY_SOURCE, names))
    reasons = {c["name"]: (c["device"], c["out_of_scope"]) for c in result}
    assert reasons["test_half_cpu"] == ("cpu", "fp16")
    assert reasons["test_half_cuda_0"] == ("cuda", "fp16")                 # the CUDA twin
    assert reasons["test_grad_cpu"] == ("cpu", None)   # autodiff is in scope (issue 24)
    # a case parameterized by a dtype is fp16 by its name only (TOL lists every dtype)
    assert reasons["test_plain_float32_cpu"] == ("cpu", None)
    assert reasons["test_plain_float16_cpu"] == ("cpu", "fp16")
    # the definitions only out-of-scope cases use, or unused and out of scope themselves
    assert sorted((port._defined_name(stmt), why) for stmt, why in dropped) == [
        ("half_kernel", "fp16"), ("test_half", "fp16"), ("test_plain_float16", "fp16")]
    assert port.out_of_scope_reason("test_bf16.py", "test_anything", "") == "bf16"
    assert port.out_of_scope_reason("test_y.py", "test_tiles", "wp.tile_load(a)") == "tiles"


def test_generated_file_declares_its_out_of_scope_cases():
    names = ["test_half_cpu", "test_plain_float32_cpu"]
    text, entry = port.generate("test_x.py", CLASSIFY_SOURCE, _cases(CLASSIFY_SOURCE, names), "1.0")
    ast.parse(text)
    assert text.startswith("# Generated by tools/port_warp_tests.py from warp/tests/test_x.py")
    assert 'wpc.declare_out_of_scope(__name__, {\n    "T.test_half": "fp16",\n})' in text
    assert "half_kernel = wpc.out_of_scope_definition('half_kernel', 'fp16')" in text
    assert text.rstrip().endswith("wpc.mark_out_of_scope(globals())")
    assert entry["ported"] == "test_x.py" and entry["rewrites"]["out_of_scope_definitions"] == 2
    assert port.generate("test_x.py", CLASSIFY_SOURCE, _cases(CLASSIFY_SOURCE, ["test_half_cpu"]),
                         "1.0") == (None, "every case out of scope (fp16)")


# --------------------------------------------------------------------------
# The compat module: host translation only


def test_compat_array_methods_on_numpy_arrays():
    a = sim.zeros(2, dtype=sim.vec3)
    wpc.fill_(a, sim.vec3(1.0, 2.0, 3.0))
    np.testing.assert_array_equal(a, [[1, 2, 3], [1, 2, 3]])
    b = wpc.empty_like(a)
    wpc.assign(b, a)
    np.testing.assert_array_equal(b, a)
    wpc.zero_(a)
    assert not a.any() and b.any()
    assert wpc.to_device(b, "cpu") is b
    c = wpc.clone(b)
    assert c is not b and np.array_equal(c, b)
    d = np.zeros((4, 3), dtype=np.float32)
    sim.copy(d, b, dest_offset=1, count=2)  # numba_sim's own since issue 17
    np.testing.assert_array_equal(d, [[0, 0, 0], [1, 2, 3], [1, 2, 3], [0, 0, 0]])
    np.testing.assert_array_equal(wpc.full_like(b, 7.0), np.full((2, 3), 7.0))
    assert wpc.ones_like(b).sum() == 6
    assert wpc.dtype_from_numpy(np.dtype("int16")) is sim.int16
    assert wpc.dtype_to_numpy(sim.float32) == np.dtype(np.float32)
    e = wpc.empty_like(b, requires_grad=True)  # a zero gradient beside it (autodiff)
    assert sim.grad(e).shape == b.shape and not sim.grad(e).any()


def test_compat_registers_cases_like_warp():
    calls = []

    def body(test, device, value):
        calls.append((str(device), value))

    class T(unittest.TestCase):
        pass

    T.__module__ = "compat_probe"
    wpc.declare_out_of_scope("compat_probe", {"T.test_skipped": "autodiff"})
    wpc.add_function_test(T, "test_body", body, devices=wpc.get_test_devices(), value=3)
    wpc.add_function_test(T, "test_skipped", body, devices=wpc.get_test_devices(), value=4)
    wpc.add_function_test_register_kernel(T, "test_skipped", lambda *a, **k: 1 / 0,
                                          devices=wpc.get_test_devices())
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(T).run(result)
    assert calls == [("cpu", 3)] + ([("cuda:0", 3)] if wpc.is_cuda_available() else [])
    skipped = {test.id().rsplit(".", 1)[1]: why for test, why in result.skipped}
    assert skipped["test_skipped_cpu"] == "out of scope: autodiff"
    if not wpc.is_cuda_available():
        assert skipped["test_body_cuda_0"] == wpc.CUDA_SKIP_REASON
    assert not result.failures and not result.errors


def test_compat_check_output_fails_a_test_that_prints():
    class T(unittest.TestCase):
        def test_prints(self):
            with wpc.CheckOutput(self):
                print("expect_eq failed")

    result = unittest.TestResult()
    T("test_prints").run(result)
    assert len(result.failures) == 1 and "Unexpected output" in result.failures[0][1]


def test_warp_internals_are_placeholders_that_fail_when_used():
    codegen, = wpc.warp_internal("warp._src.codegen", "codegen")
    with pytest.raises(NotImplementedError, match="warp._src.codegen.codegen.Var is part of Warp"):
        codegen.Var()
    assert wpc.warp_module("_src").types.float_types == (sim.float32, sim.float64)
    assert wpc.warp_internal("warp._src.types", "np_dtype_to_warp_type")[0][np.dtype("int8")] \
        is sim.int8
    assert Path(wpc.warp_module("examples").get_asset_directory()).is_dir()


def test_compat_defines_no_kernel_language():
    """No builtin, type or kernel: the compat module's own functions are plain Python."""
    own = {name: value for name, value in vars(wpc).items()
           if getattr(value, "__module__", None) == wpc.__name__}
    assert own and not any(isinstance(value, (Kernel, Func)) for value in vars(wpc).values())
    source = (REPO / "tests" / "warp_suite" / "_warp_compat.py").read_text()
    for forbidden in ("@sim.func", "@sim.kernel", "@sim.struct", "import numba\n",
                      "from numba ", "from numba.", "numba_sim.builtins", "numba_sim.typing",
                      "numba_sim.lowering"):
        assert forbidden not in source, forbidden


# --------------------------------------------------------------------------
# Rewrite 0's guards, the out-of-scope type placeholders, .list(), the assets


GUARD_SOURCE = '''\
import unittest
import warp as wp
from warp.fem import Sample
from warp.tests.unittest_utils import *

devices = get_test_devices()

@wp.struct
class UsesWarpInternal:
    s: Sample

@wp.struct
class Plain:
    x: float

@wp.kernel
def plain_kernel(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 1.0

def test_plain(test, device):
    a = wp.zeros(2, dtype=float, device=device)
    wp.launch(plain_kernel, dim=2, inputs=[a], device=device)
    test.assertEqual(a.list(), [1.0, 1.0])

def test_internal(test, device):
    UsesWarpInternal()

class TestGuard(unittest.TestCase):
    pass

for dtype in (wp.float32, wp.float16, wp.bfloat16, wp.vec3h):
    if getattr(dtype, "_wp_scalar_type_", dtype) is not wp.float16:
        add_function_test(TestGuard, f"test_plain_{dtype.__name__}", test_plain, devices=devices)
add_function_test(TestGuard, "test_internal", test_internal, devices=devices)
add_kernel_test(TestGuard, kernel=plain_kernel, name="test_registered", dim=1,
                inputs=[UsesWarpInternal()], devices=devices)
'''


def _port_and_import(source, names, directory, module_name):
    """Port *source* (Warp's cases *names*) and import it from a file (kernels need one)."""
    cases = [{"class": "TestGuard", "name": n, "uses": [], "no_devices": False} for n in names]
    text, entry = port.generate("test_guard.py", source, cases, "1.0")
    path = directory / f"{module_name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return text, entry, module


def test_a_failing_module_level_definition_fails_only_the_cases_that_use_it(tmp_path):
    names = ["test_plain_float32_cpu", "test_plain_bfloat16_cpu", "test_internal_cpu",
             "test_registered_cpu"]
    text, entry, module = _port_and_import(GUARD_SOURCE, names, tmp_path, "guard_probe")
    assert entry["rewrites"]["guarded_definitions"] == 3   # the two structs and the kernel
    assert entry["rewrites"]["guarded_registrations"] == 1  # inputs=[UsesWarpInternal()]
    assert "except Exception as _error:\n    UsesWarpInternal = wpc.failed_definition(" in text
    assert "wpc.out_of_scope_type('bfloat16')" in text
    assert isinstance(module.UsesWarpInternal, wpc.FailedDefinition)
    assert isinstance(module.Plain, type)                   # a guard changes nothing that works
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(module.TestGuard).run(result)
    failed = {test.id().rsplit(".", 1)[1]: text for test, text in result.errors + result.failures}
    assert set(failed) == {"test_internal_cpu", "test_registered_cpu"}
    assert "UsesWarpInternal could not be defined: NotImplementedError: warp.fem.Sample" \
        in failed["test_internal_cpu"]
    assert "test_registered could not be registered: ModuleLevelDefinitionError: " \
        "UsesWarpInternal could not be defined" in failed["test_registered_cpu"]
    skipped = {test.id().rsplit(".", 1)[1]: why for test, why in result.skipped}
    assert skipped["test_plain_bfloat16_cpu"] == "out of scope: bf16"
    assert result.testsRun - len(result.skipped) == 3   # test_plain_float32 ran and passed


def test_guards_keep_multiline_strings_and_what_the_module_needs():
    source = ('import warp as wp\n\nTEXT = """line one\nline two"""\n\n'
              '@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    """doc\n    more"""\n'
              '    a[0] = 1.0\n\nK = wp.constant(2.0)\nprint(K)\n')
    tree = ast.parse(source)
    guarded = port.guardable(tree, port.definitions(tree), set())
    assert [port._defined_name(stmt) for stmt, _ in guarded] == ["k"]   # K: module code uses it
    text, counts = port.rewrite_source(source, (), guarded)
    assert '    def k(a: sim.array(dtype=float)):\n        """doc\n    more"""\n' in text
    assert 'TEXT = """line one\nline two"""' in text and counts["guarded_definitions"] == 1


def test_out_of_scope_types_are_placeholders_that_fail_only_when_used():
    f16, bf16, vec3h = (wpc.out_of_scope_type(n) for n in ("float16", "bfloat16", "vec3h"))
    assert f16 is wpc.out_of_scope_type("float16") is wpc.out_of_scope_type("half")
    assert (f16.__name__, vec3h.__name__, vec3h._wp_scalar_type_) == ("float16", "vec3h", f16)
    assert getattr(bf16, "_wp_scalar_type_", bf16) is bf16
    with pytest.raises(NotImplementedError, match=r"wp.bfloat16 is out of scope \(bf16\)"):
        bf16(1.0)
    with pytest.raises(NotImplementedError, match=r"wp.vec3h is out of scope \(fp16\)"):
        vec3h[0]
    with pytest.raises(ValueError, match="name: expected one of Warp's out-of-scope types"):
        wpc.out_of_scope_type("float32")
    assert wpc.warp_internal("warp._src.types", "float16")[0] is f16
    text, counts = port.rewrite_source("import warp as wp\nx = (wp.float16, wp.types.vec3h, "
                                       "wp.float32)\n")
    assert "x = (wpc.out_of_scope_type('float16'), wpc.out_of_scope_type('vec3h'), " \
           "sim.float32)" in text and counts["out_of_scope_types"] == 2


GRADIENT_SOURCE = '''\
import warp as wp

@wp.struct
class S:
    grad: float

@wp.kernel
def k(s: S, out: wp.array(dtype=float)):
    out[0] = s.grad

def test_g(test, device):
    a = wp.zeros(3, dtype=float, requires_grad=True)
    b.grad = wp.zeros_like(b)
    tape.backward(grads={out: wp.ones_like(out), c: g})
    assert_np_equal(a.grad.numpy(), tape.gradients[a].numpy())
    a.grad.zero_()
    f = wp.grad(wp.sin)
    b.requires_grad = a.requires_grad
'''


def test_gradient_spelling_is_rewritten_in_host_code_only():
    text, counts = port.rewrite_source(GRADIENT_SOURCE)
    assert "    grad: float" in text and "out[0] = s.grad" in text   # kernel code stays
    assert "sim.requires_grad(b, grad=sim.zeros_like(b))" in text
    assert "tape.backward(grads=[(out, wpc.ones_like(out)), (c, g)])" in text
    assert "assert_np_equal(sim.to_numpy(wpc.grad(a)), " \
           "sim.to_numpy(wpc.tape_gradients(tape)[a]))" in text
    assert "wpc.zero_(wpc.grad(a))" in text and "f = sim.grad(sim.sin)" in text
    assert counts["attribute_grad"] == 2 and counts["attribute_gradients"] == 1
    assert counts["attribute_grad_store"] == 1 and counts["backward_grads_pairs"] == 1
    a = sim.zeros(2, dtype=float, requires_grad=True)
    b = np.zeros(2)
    assert "wpc.set_requires_grad(b, wpc.has_grad(a))" in text
    assert wpc.grad(a) is sim.grad(a) and wpc.grad(b) is None
    assert wpc.has_grad(a) and not wpc.has_grad(b)
    wpc.set_requires_grad(b, False)
    assert wpc.grad(b) is None
    wpc.set_requires_grad(b, True)
    assert wpc.has_grad(b) and not sim.grad(b).any()
    with pytest.raises(NotImplementedError, match="requires_grad = False"):
        wpc.set_requires_grad(b, False)
    gradients = wpc.tape_gradients(sim.Tape())
    c = np.zeros(2)
    assert gradients[a] is sim.grad(a) and a in gradients and c not in gradients
    with pytest.raises(KeyError, match="no gradient"):
        gradients[c]


def test_element_shape_dtype_and_struct_dtype_spellings():
    """``a.dtype._shape_`` / ``a.dtype._length_`` (Warp's array of matrices / vectors) -> the
    trailing dims of numba_sim's array; ``S.numpy_dtype()`` -> numba_sim's attribute; a
    type's own ``_shape_`` (``dtype._shape_``) and kernel code stay as they are."""
    text, counts = port.rewrite_source(
        "import warp as wp\nr, c = m.dtype._shape_\nn = v[0:1].dtype._length_\n"
        "s = dtype._shape_\nd = np.zeros(2, dtype=S.numpy_dtype())\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    x = a.dtype._shape_\n")
    assert "r, c = wpc.element_shape(m)" in text and "n = wpc.element_length(v[0:1])" in text
    assert "s = dtype._shape_" in text and "x = a.dtype._shape_" in text
    assert "d = np.zeros(2, dtype=S.numpy_dtype)" in text
    assert counts["dtype_attribute_shape_"] == 1 and counts["dtype_attribute_length_"] == 1
    assert counts["method_numpy_dtype"] == 1
    m = sim.array(np.zeros((4, 3, 2)), dtype=sim.types.matrix((3, 2), float))
    assert wpc.element_shape(m) == sim.types.matrix((3, 2), float)._shape_ == (3, 2)
    assert wpc.element_length(sim.zeros(5, dtype=sim.vec4)) == sim.vec4._length_ == 4
    with pytest.raises(TypeError, match=r"at least 2 dims .* got shape \(5,\)"):
        wpc.element_shape(np.zeros(5))


def test_list_gives_python_values_as_warp():
    text, counts = port.rewrite_source("import warp as wp\ny = a.to('cpu').list()\n"
                                       "z = (a[::2].is_contiguous, np.is_contiguous)\n")
    assert "y = wpc.list_(wpc.to_device(a, 'cpu'))" in text and counts["method_list"] == 1
    assert "z = (wpc.is_contiguous(a[::2]), np.is_contiguous)" in text
    assert counts["attribute_is_contiguous"] == 1
    b = np.zeros((4, 3))
    assert wpc.is_contiguous(b) and not wpc.is_contiguous(b[::2])
    values = wpc.list_(np.arange(4, dtype=np.int32).reshape(2, 2))
    assert values == [0, 1, 2, 3] and all(type(v) is int for v in values)
    assert wpc.list_(np.array([True, False])) == [True, False]

    @sim.struct
    class ListProbe:
        i: int
        v: sim.vec3

    a = sim.zeros(2, dtype=ListProbe)
    a[1]["i"] = 7
    listed = wpc.list_(a)
    assert [type(s) for s in listed] == [ListProbe, ListProbe] and listed[1].i == 7
    assert listed[0].v == sim.vec3(0.0, 0.0, 0.0)
    with pytest.raises(TypeError, match="not one struct class's"):
        wpc.list_(np.zeros(2, dtype=[("zz", np.float32)]))


def test_the_assets_the_ported_files_read_are_copied_with_a_notice():
    source = ('import os\n# np.save("assets/old.npy")\n'
              'x = np.load(os.path.join(os.path.dirname(__file__), "assets/pnoise_golden.npy"))\n')
    assert port.referenced_assets(source, ["pnoise_golden.npy", "old.npy", "x.npy"]) \
        == {"pnoise_golden.npy"}
    notice = (REPO / "tests" / "warp_suite" / "assets" / "NOTICE.md").read_text()
    assert "Apache" in notice and "`pnoise_golden.npy`" in notice


def test_a_partial_report_keeps_the_other_files_outcomes(tmp_path, monkeypatch):
    """``--report test_b``: test_b's row, causes and known failures are replaced; test_a's
    stay those of the last full report; the table's totals add both."""
    case = {"class": "T", "device": "cpu", "out_of_scope": None}
    manifest = {"warp_version": "1.0", "left_out": {}, "files": {
        "test_a.py": {"ported": "test_a.py", "cases": [dict(case, name="test_x_cpu"),
                                                       dict(case, name="test_y_cpu")]},
        "test_b.py": {"ported": "test_b.py", "cases": [dict(case, name="test_z_cpu")]}}}
    (tmp_path / "manifest.json").write_text(port.json.dumps(manifest))
    doc = tmp_path / "doc.md"
    doc.write_text("before\n<!-- report:begin -->\nold\n<!-- report:end -->\nafter\n")
    for name, value in (("MANIFEST", "manifest.json"), ("KNOWN_FAILURES", "known.json"),
                        ("REPORT_RESULTS", "results.json")):
        monkeypatch.setattr(port, name, tmp_path / value)
    monkeypatch.setattr(port, "DOC", doc)
    monkeypatch.setattr(port, "REPO", tmp_path)
    outcomes = {"test_a.py": {"T.test_x_cpu": ("passed", ""), "T.test_y_cpu": ("failed", "E1")},
                "test_b.py": {"T.test_z_cpu": ("failed", "E2")}}
    monkeypatch.setattr(port, "run_file", lambda name, timeout: (name, outcomes[name], None, 1.0))
    with pytest.raises(SystemExit, match="run the full --report first"):
        port.report(only=["test_b"])
    port.report()
    assert port.json.loads((tmp_path / "known.json").read_text()) == {
        "test_a.py": {"T.test_y_cpu": "E1", "T.test_y_cuda_0": "E1"},
        "test_b.py": {"T.test_z_cpu": "E2", "T.test_z_cuda_0": "E2"}}
    outcomes["test_b.py"] = {"T.test_z_cpu": ("passed", "")}
    outcomes["test_a.py"] = None  # not run again: a run would fail the file
    port.report(only=["test_b"])
    assert port.json.loads((tmp_path / "known.json").read_text()) == {
        "test_a.py": {"T.test_y_cpu": "E1", "T.test_y_cuda_0": "E1"}}
    text = doc.read_text()
    assert "| test_a.py | 2 | 1 | 1 |" in text and "| test_b.py | 1 | 1 | 0 |" in text
    assert "**In-scope CPU cases: 3; passed 2 (66.7 %), failed 1.**" in text
    assert "re-run" in text and "test_b.py" in text and "E2" not in text and "E1" in text
    assert text.startswith("before\n") and text.endswith("<!-- report:end -->\nafter\n")
    # records from a report that did not keep them: seeded from known_failures.json and the doc
    (tmp_path / "results.json").unlink()
    outcomes["test_b.py"] = {"T.test_z_cpu": ("failed", "E3")}
    port.report(only=["test_b"])
    text = doc.read_text()
    assert "| test_a.py | 2 | 1 | 1 |" in text and "| test_b.py | 1 | 0 | 1 |" in text
    assert "E1" in text and "E3" in text
