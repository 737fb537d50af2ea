"""Warp's core examples run after a mechanical rename and give Warp's numbers (issue 17).

Each example is read from the installed warp-lang, renamed (``warp`` -> ``numba_sim``,
``wp`` -> ``sim``, as whole words; nothing else is edited), imported from a file, run for
30 frames on the CPU with no renderer, and its state arrays compared with Warp's own run
of the original in the same process.
"""

import importlib.util
import os
import re

import numpy as np
import pytest

wp = pytest.importorskip("warp")

FRAMES = 30

EXAMPLES = {
    # name: (constructor keywords, how a frame advances, state attributes compared)
    "example_wave": ({"stage_path": None}, "step", ["sim_grid0", "sim_grid1", "sim_verts"]),
    "example_fluid": ({}, "step", ["u0", "u1", "rho0", "rho1", "p0", "p1", "div"]),
    "example_mesh": ({"stage_path": None}, "step", ["positions", "velocities", "mesh.points"]),
    "example_raycast": ({"height": 128, "width": 128}, "render", ["pixels"]),
}
"""The examples of issue 17; the keywords are the examples' own (no renderer, a smaller
image), never edits."""

NEEDS_USD = {"example_mesh", "example_raycast"}

NOT_YET = {
    "example_fluid": "calls Warp's array method p0.zero_(): numba_sim's arrays are NumPy's, "
                     "which have no zero_() (issue 17: still open)",
}
"""Examples that do not run yet after the rename, with the reason (strict: one that starts
passing fails here until it is taken off the list)."""


def ported_source(source):
    """The mechanical rename, and nothing else."""
    return re.sub(r"\bwp\b", "sim", re.sub(r"\bwarp\b", "numba_sim", source))


def warp_example_path(name):
    return os.path.join(os.path.dirname(wp.__file__), "examples", "core", f"{name}.py")


def load_module(path, module_name):
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def state_of(example, attributes):
    arrays = {}
    for attribute in attributes:
        value = example
        for part in attribute.split("."):
            value = getattr(value, part)
        arrays[attribute] = np.array(value.numpy() if hasattr(value, "numpy") and not
                                     isinstance(value, np.ndarray) else value)
    return arrays


def run(module, keywords, advance, attributes):
    example = module.Example(**keywords)
    for _ in range(FRAMES):
        getattr(example, advance)()
    return state_of(example, attributes)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_renamed_warp_example_gives_warps_state(name, tmp_path, request):
    if name in NOT_YET:
        request.applymarker(pytest.mark.xfail(reason=NOT_YET[name], strict=True))
    if name in NEEDS_USD:
        pytest.importorskip("pxr", reason="the example loads bunny.usd (usd-core, the test extra)")
    keywords, advance, attributes = EXAMPLES[name]
    with open(warp_example_path(name)) as f:
        source = f.read()
    path = tmp_path / f"{name}_numba_sim.py"
    path.write_text(ported_source(source))
    ours = run(load_module(str(path), f"{name}_numba_sim"), keywords, advance, attributes)

    with wp.ScopedDevice("cpu"):
        theirs = run(load_module(warp_example_path(name), f"{name}_warp"), keywords, advance,
                     attributes)
    for attribute in attributes:
        assert ours[attribute].shape == theirs[attribute].shape, attribute
        np.testing.assert_array_equal(ours[attribute], theirs[attribute], err_msg=attribute)
