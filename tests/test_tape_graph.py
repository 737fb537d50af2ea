"""Tape scopes and Tape.visualize (Warp's): the scope markers, and the GraphViz diagram of
the recorded launches (repeats folded, scopes as clusters, arrays read and written)."""

import numpy as np
import pytest

import numba_sim as sim


@sim.kernel
def scale(x: sim.array(dtype=float), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i] = 2.0 * x[i]


@sim.kernel
def accumulate(y: sim.array(dtype=float), total: sim.array(dtype=float)):
    i = sim.tid()
    sim.atomic_add(total, 0, y[i])


def _recorded():
    x = sim.array(np.ones(4), dtype=float, requires_grad=True)
    y = sim.zeros(4, dtype=float, requires_grad=True)
    total = sim.zeros(1, dtype=float, requires_grad=True)
    tape = sim.Tape()
    with tape:
        tape.record_scope_begin("steps", {"note": 1})
        for _ in range(5):
            sim.launch(scale, dim=4, inputs=[x], outputs=[y])
            sim.launch(accumulate, dim=4, inputs=[y], outputs=[total])
        tape.record_scope_end()
        sim.launch(accumulate, dim=4, inputs=[y], outputs=[total])
    return tape, x, y, total


def test_scope_markers_are_warps():
    tape, *_ = _recorded()
    assert tape.scopes == [(0, "steps", {"note": 1}), (10, None, None)]
    tape.record_scope_begin("empty")
    tape.record_scope_end()  # nothing recorded inside: dropped
    assert len(tape.scopes) == 2
    with pytest.raises(RuntimeError, match="ended tape scope, but scope not present"):
        tape.record_scope_end()
    tape.reset()
    assert tape.scopes == [] and tape.launches == []


def test_diagram_folds_repeats_inside_scopes(tmp_path):
    tape, x, y, total = _recorded()
    path = tmp_path / "tape.dot"
    code = tape.visualize(str(path), array_labels=[(x, "positions")])
    assert path.read_text() == code
    assert code.startswith('digraph " " {') and code.rstrip().endswith("}")
    assert code.count("repeated 5x") == 1 and code.count('label="steps"') == 1
    # the scope's two kernels drawn once, the last launch after the scope once more
    assert code.count("<b>scale</b>") == 1 and code.count("<b>accumulate</b>") == 2
    assert "label=<positions>" in code and "label=<y>" in code and "label=<total>" in code
    assert "array: dtype=float32, shape=(4,)" in code
    # x is read by scale (edge into k0), y written by it and read by accumulate
    assert "a0 -> k0;" in code and "k0 -> a1;" in code and "a1 -> k1;" in code
    unfolded = tape.visualize(simplify_graph=False)
    assert unfolded.count("<b>scale</b>") == 5 and "repeated" not in unfolded
    flat = tape.visualize(ignore_graph_scopes=True)
    assert "steps" not in flat and "repeated 5x" in flat


def test_diagram_hides_read_only_arrays_unless_tracked():
    tape, x, y, total = _recorded()
    hidden = tape.visualize(hide_readonly_arrays=True)
    assert "label=<x>" not in hidden and "label=<y>" in hidden
    tracked = tape.visualize(hide_readonly_arrays=True, track_inputs=[x],
                             track_input_names=["inputs"])
    assert "label=<inputs>" in tracked
    with pytest.raises(ValueError, match="graph_direction"):
        tape.visualize(graph_direction="up")
