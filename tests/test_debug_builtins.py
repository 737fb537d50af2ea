"""print, printf and expect_eq / expect_neq / expect_near: Warp's output, character for
character, on the CPU and in Python mode; failures counted, so that a ported Warp test
fails under pytest (numba_sim.testing); an offline CUDA compile-and-link."""

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numba_sim as sim

# One body for Warp and numba_sim (the module name swapped): prints, then expectations
# that fail for x = 1.0 and pass for nothing else.
BODY = """
def debug_kernel(a: M.array(dtype=M.float32)):
    i = M.tid()
    x = a[i]
    print(x)
    print(i)
    print(M.int64(-5))
    print(M.uint32(7))
    print(x > 1.0)
    print(M.vec3(x, 2.5, -0.125))
    print(M.vec3i(1, -2, 3))
    print(M.mat22(1.0, 2.0, 3.0, 1.0e-7))
    print(M.quat(0.0, 0.5, 0.0, 1.0))
    print(M.transform(M.vec3(1.0, 2.0, 3.0), M.quat(0.0, 0.0, 0.0, 1.0)))
    print(M.float64(123456789.0))
    M.printf("printf %d %f %g %s|\\n", i, x, M.float64(0.1), "text")
    M.expect_eq(x, 1.5)
    M.expect_eq(i, 0)
    M.expect_neq(i, 0)
    M.expect_eq(M.vec3(x), M.vec3(1.0, 1.0, 2.0))
    M.expect_near(x, 1.25, 0.1)
    M.expect_near(x, 1.05, 0.1)
    M.expect_near(M.vec3(x), M.vec3(1.0, 1.5, 0.5), 0.25)
    M.expect_near(M.quat(x, 0.0, 0.0, 1.0), M.quat(x, 0.0, 0.0, 1.0))
"""


def load(tmp_path, module, decorator):
    name = f"debug_kernel_{module}"
    path = tmp_path / f"{name}.py"
    header = "import warp as wp" if decorator.startswith("wp.") else "import numba_sim as sim"
    path.write_text(f"{header}\nM = {module}\n@{decorator}\n"
                    + textwrap.dedent(BODY))
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded.debug_kernel, str(path)


def without_locations(text):
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith("\t At: "))


@pytest.fixture(scope="module")
def our_kernel(tmp_path_factory):
    return load(tmp_path_factory.mktemp("ours"), "sim", "sim.kernel")


def test_print_and_expectations_match_warp_character_for_character(our_kernel, tmp_path, capfd):
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    warp_kernel, _ = load(tmp_path, "wp", "wp.kernel")
    wp.init()
    capfd.readouterr()  # Warp's banner
    wp.launch(warp_kernel, dim=1, inputs=[wp.array([1.0], dtype=wp.float32, device="cpu")],
              device="cpu")
    wp.synchronize()
    expected = "".join(line for line in capfd.readouterr().out.splitlines(keepends=True)
                       if not line.startswith("Module "))  # Warp's module-load report
    kernel, path = our_kernel
    before = sim.expect_failure_count()
    sim.launch(kernel, dim=1, inputs=[np.array([1.0], np.float32)])
    got = capfd.readouterr().out
    assert sim.expect_failure_count() - before == 5
    assert without_locations(got) == expected
    assert "Error, expect_eq() failed:" in got and "Max absolute difference" in got
    locations = [line.split(":")[-1].strip() for line in got.splitlines()
                 if line.startswith("\t At: ")]
    assert len(locations) == 5
    assert all(line.startswith(f"\t At: {path}:") for line in got.splitlines()
               if line.startswith("\t At: "))
    assert sim.reset_expect_failures() >= 5 and sim.expect_failure_count() == 0


def test_passing_expectations_print_nothing(our_kernel, capfd):
    @sim.kernel
    def passing(a: sim.array(dtype=float)):
        i = sim.tid()
        sim.expect_eq(a[i], 2.0)
        sim.expect_neq(i, 100)
        sim.expect_near(a[i], 2.0 + 1.0e-7)
        sim.expect_near(a[i], 2.25, tolerance=0.5)
        sim.expect_near(sim.vec3(a[i], 0.0, 0.0), sim.vec3(2.0, 0.0, 0.0))
        sim.expect_near(sim.mat22(a[i], 0.0, 0.0, 1.0), sim.mat22(2.0, 0.0, 0.0, 1.0))
        sim.expect_eq(i == 100, False)

    before = sim.expect_failure_count()
    sim.launch(passing, dim=100, inputs=[np.full(100, 2.0, np.float32)])
    assert sim.expect_failure_count() == before
    assert capfd.readouterr().out == ""


def test_python_mode_prints_what_compiled_code_prints(capfd):
    @sim.func
    def report(x: float, v: sim.vec3, m: sim.mat22, t: sim.transform):
        print(x)
        print(v)
        print(m)
        print(t)
        print(x, "and", v)
        sim.printf("%d %.3f %u\n", 3, x, sim.uint8(200))
        sim.expect_near(x, 0.0, tolerance=0.5)
        sim.expect_eq(v, sim.vec3(0.0))

    @sim.kernel
    def call_report(xs: sim.array(dtype=float)):
        i = sim.tid()
        report(xs[i], sim.vec3(1.0, 2.0, 3.0), sim.mat22(1.0, 2.0, 3.0, 4.0),
               sim.transform(sim.vec3(1.0), sim.quat_identity()))

    before = sim.expect_failure_count()
    sim.launch(call_report, dim=1, inputs=[np.array([1.5], np.float32)])
    compiled = capfd.readouterr().out
    report(np.float32(1.5), sim.vec3(1.0, 2.0, 3.0), sim.mat22(1.0, 2.0, 3.0, 4.0),
           sim.transform(sim.vec3(1.0), sim.quat_identity()))
    python = capfd.readouterr().out
    assert sim.expect_failure_count() - before == 4
    assert python == compiled
    assert compiled.startswith("1.5\n1 2 3 \n1 2 \n3 4 \n(1 1 1) (0 0 0 1)\n1.5 and 1 2 3 \n"
                               "3 1.500 200\nError, expect_near() failed with tolerance 0.5\n")


def test_wrong_debug_calls_are_typing_errors():
    @sim.kernel
    def bad_printf(fmt_source: sim.array(dtype=float)):
        sim.printf(sim.vec3(1.0))

    @sim.kernel
    def bad_expect(a: sim.array(dtype=float)):
        sim.expect_eq(sim.vec3(1.0), sim.vec2(1.0))

    @sim.kernel
    def bad_near(a: sim.array(dtype=sim.int32)):
        sim.expect_near(a[0], 1)

    for kernel, message in ((bad_printf, "fmt must be a string literal"),
                            (bad_expect, "Can't test equality for objects with different types"),
                            (bad_near, "compares floating-point values")):
        with pytest.raises(Exception, match=message):
            kernel.compile("cpu", [np.zeros(1, np.int32 if kernel is bad_near else np.float32)])


def test_debug_builtins_compile_and_link_for_cuda(our_kernel):
    kernel, _ = our_kernel
    library = kernel.compile("cuda", [np.zeros(1, np.float32)], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
    assert "vprintf" in library.get_llvm_str()


PORTED_TEST = """
import numpy as np
import numba_sim as sim


@sim.kernel
def check(a: sim.array(dtype=float)):
    i = sim.tid()
    sim.expect_eq(a[i], 1.0)


def test_violated():
    sim.launch(check, dim=2, inputs=[np.array([1.0, 2.0], np.float32)])


def test_kept():
    sim.launch(check, dim=2, inputs=[np.ones(2, np.float32)])
"""


def test_a_ported_warp_test_that_violates_an_expectation_fails_under_pytest(tmp_path):
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["numba_sim.testing"]\n')
    (tmp_path / "test_ported.py").write_text(PORTED_TEST)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
        env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert "1 failed, 1 passed" in result.stdout, result.stdout + result.stderr
    assert "FAILED test_ported.py::test_violated" in result.stdout
    assert "1 failed expectation (expect_eq, expect_neq or expect_near)" in result.stdout
    assert "Error, expect_eq() failed:\n\t Expected: 1\n\t Actual: 2\n" in result.stdout
