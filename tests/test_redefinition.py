"""A @sim.func defined again (a notebook cell run twice) reaches the kernels that call it."""

import itertools
import linecache

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import redefinition

_cells = itertools.count()


class Notebook:
    """Cells run one after the other in one namespace, as Jupyter runs them."""

    def __init__(self):
        self.namespace = {"__name__": f"notebook_{next(_cells)}", "sim": sim, "np": np}

    def run(self, source):
        name = f"<cell {next(_cells)}>"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        exec(compile(source, name, "exec"), self.namespace)
        return self.namespace


KERNEL = """
@sim.kernel
def apply(a: sim.array(dtype=float)):
    i = sim.tid()
    a[i] = outer(a[i])
"""


def launch(notebook):
    values = np.ones(3, np.float32)
    sim.launch(notebook.namespace["apply"], dim=3, inputs=[values])
    return values[0]


def test_a_redefined_func_reaches_the_kernel_through_another_func():
    notebook = Notebook()
    notebook.run("@sim.func\ndef inner(x: float):\n    return x + 1.0\n")
    notebook.run("@sim.func\ndef outer(x: float):\n    return inner(x) * 2.0\n")
    notebook.run(KERNEL)
    assert launch(notebook) == 4.0
    notebook.run("@sim.func\ndef inner(x: float):\n    return x + 10.0\n")
    assert launch(notebook) == 22.0
    notebook.run("@sim.func\ndef outer(x: float):\n    return inner(x) * 3.0\n")
    assert launch(notebook) == 33.0


def test_nothing_is_recompiled_when_what_the_kernel_reaches_is_unchanged():
    notebook = Notebook()
    notebook.run("@sim.func\ndef outer(x: float):\n    return x + 1.0\n")
    notebook.run(KERNEL)
    assert launch(notebook) == 2.0
    kernel = notebook.namespace["apply"]
    launchers = dict(kernel.launchers)
    generation = redefinition.current[0]
    notebook.run("@sim.func\ndef unrelated(x: float):\n    return x\n")
    notebook.run("@sim.func\ndef unrelated(x: float):\n    return x - 1.0\n")
    assert redefinition.current[0] == generation + 1
    assert launch(notebook) == 2.0
    assert kernel.generation == redefinition.current[0]
    assert all(kernel.launchers[key] is launcher for key, launcher in launchers.items())


def test_a_kernel_never_launched_before_the_redefinition_uses_the_new_func():
    notebook = Notebook()
    notebook.run("@sim.func\ndef outer(x: float):\n    return x + 1.0\n")
    notebook.run(KERNEL)
    notebook.run("@sim.func\ndef outer(x: float):\n    return x + 5.0\n")
    assert launch(notebook) == 6.0


nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")


def test_redefinition_in_a_jupyter_kernel(tmp_path):
    cells = [
        "import numpy as np\nimport numba_sim as sim\n",
        "@sim.func\ndef outer(x: float):\n    return x + 1.0\n",
        KERNEL + "a = np.ones(2, np.float32)\nsim.launch(apply, dim=2, inputs=[a])\n"
                 "assert a[0] == 2.0, a\n",
        "@sim.func\ndef outer(x: float):\n    return x * 100.0\n",
        "a = np.ones(2, np.float32)\nsim.launch(apply, dim=2, inputs=[a])\n"
        "assert a[0] == 100.0, a\nprint('redefined', a[0])\n",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for cell in notebook.cells for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"], outputs
    assert any("redefined 100.0" in o.get("text", "") for o in outputs)
