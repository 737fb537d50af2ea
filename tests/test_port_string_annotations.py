"""tools/port_warp_tests.py rewrites the string annotations of functions, which are code
(``def f(a: "wp.array(dtype=T)")``), and leaves every other string literal as it is."""

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("port_warp_tests",
                                               REPO / "tools" / "port_warp_tests.py")
port = sys.modules.get("port_warp_tests") or importlib.util.module_from_spec(_spec)
if "port_warp_tests" not in sys.modules:
    sys.modules["port_warp_tests"] = port
    _spec.loader.exec_module(port)

SOURCE = '''\
import warp as wp


def make(dtype):
    def fn(out: "wp.array(dtype=dtype)", n: "int", *rest: "wp.vec3",
           **kw: "wp.float32") -> "wp.vec3":
        """Docstrings keep wp.names."""
        message = "wp.launch failed"
        return out

    return fn


async def later(x: "wp.mat33"):
    pass
'''


def test_string_annotations_are_rewritten_as_code():
    text, counts = port.rewrite_source(SOURCE)
    assert 'out: "sim.array(dtype=dtype)"' in text
    assert '*rest: "sim.vec3"' in text and '**kw: "sim.float32"' in text
    assert '-> "sim.vec3"' in text and 'x: "sim.mat33"' in text
    assert '"""Docstrings keep wp.names."""' in text
    assert '"wp.launch failed"' in text
    assert counts["wp"] == 5


def test_non_ascii_lines_keep_the_annotation_positions():
    source = 'import warp as wp\n\n\ndef f(é: "wp.vec3", a: "wp.mat33", b="é wp.x"): pass\n'
    text, _ = port.rewrite_source(source)
    assert 'é: "sim.vec3", a: "sim.mat33", b="é wp.x"' in text
