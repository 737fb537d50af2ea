"""The port of warp.sim's cloth-throw optimisation (numba_sim/examples/cloth_throw_optim.py,
issue 24): its gradient against central differences and against warp.sim 1.9.1's own
example (run in its venv on the CPU, same shortened horizon), and the loss curve against
Warp's.  The cloth starts flat (every bending edge at the dihedral angle 0), where an
``acos`` bending angle gave NaN gradients."""

import json
import os
import subprocess

import numpy as np
import pytest

from numba_sim.examples.cloth_throw_optim import Example

WARP_SIM_PYTHON = os.environ.get("WARP_SIM_PYTHON", "/work/venvs/warp191/bin/python")
DURATION = 0.25          # s: 15 frames of 16 substeps (Warp's example: 2 s); same dt
ITERS = 4

# Warp's own Example, its horizon cut to the same substeps (forward() runs self.sim_steps
# substeps and takes the loss of self.states[-1]); the first gradient from its forward
# under a wp.Tape, then ITERS of its step() (loss before each update).
WARP_SCRIPT = r"""
import json, sys
import warp as wp
wp.config.quiet = True
from warp.examples.optim.example_cloth_throw import Example
steps, iters = int(sys.argv[1]), int(sys.argv[2])
with wp.ScopedDevice("cpu"):
    ex = Example(stage_path=None)
    ex.sim_steps = steps
    ex.states = ex.states[:steps + 1]
    tape = wp.Tape()
    with tape:
        ex.forward()
    tape.backward(ex.loss)
    grad = ex.states[0].particle_qd.grad.numpy().tolist()
    tape.zero()
    losses = []
    for _ in range(iters):
        ex.step()
        losses.append(float(ex.loss.numpy()[0]))
print("RESULT " + json.dumps({"grad": grad, "losses": losses}))
"""


def run_warp(process):
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err[-2000:]
    line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


@pytest.fixture(scope="module")
def runs():
    example = Example(sim_duration=DURATION)
    warp = None
    if os.path.exists(WARP_SIM_PYTHON):     # runs beside ours
        warp = subprocess.Popen([WARP_SIM_PYTHON, "-c", WARP_SCRIPT, str(example.sim_steps),
                                 str(ITERS)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    rng = np.random.default_rng(3)
    loss0, grad0 = example.gradient()
    example.tape.zero()
    # the gradient, and a random one (a random sign per component would leave it almost
    # orthogonal to the gradient, nearly the same on every particle: the loss would not move
    # above its float32 rounding)
    directions = [grad0, rng.uniform(0.0, 1.0, grad0.shape) * [-1.0, 0.5, -0.5]]
    checks = example.directional_check(directions)
    losses = [example.step() for _ in range(ITERS)]
    return {"example": example, "loss0": loss0, "grad0": grad0, "checks": checks,
            "losses": losses, "warp": run_warp(warp) if warp is not None else None}


def test_scene_is_warps():
    example = Example(sim_duration=1.0 / 60.0, substeps=1)
    m = example.model
    assert (m.particle_count, m.tri_count, m.edge_count) == (289, 512, 736)
    q = np.asarray(m.particle_q)
    normal = np.cross(q[1] - q[0], q[17] - q[0])
    # the grid's plane turned -45 degrees about x: its normal (0, 1, 1) / sqrt(2)
    np.testing.assert_allclose(normal / np.linalg.norm(normal), [0, np.sqrt(0.5), np.sqrt(0.5)],
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(example.states[0].particle_qd), 0.1 * np.tile(
        [1.0, 1.0, 0.0], (289, 1)), atol=1e-7)
    assert example.sim_steps == 1 and Example().sim_steps == 1920


def test_gradient_is_finite_and_matches_central_differences(runs):
    assert np.isfinite(runs["grad0"]).all()
    # the loss falls by |g| per unit step along -g: the derivative along g is |g|
    along, numeric = runs["checks"][0]
    assert along == pytest.approx(np.linalg.norm(runs["grad0"]), rel=1e-5)
    assert numeric == pytest.approx(along, rel=1e-2)
    along, numeric = runs["checks"][1]          # a random direction
    assert abs(numeric) > 0.2 * np.linalg.norm(runs["grad0"])
    assert numeric == pytest.approx(along, rel=1e-2)


def test_the_loss_falls_every_iteration(runs):
    losses = runs["losses"]
    assert losses[0] == pytest.approx(runs["loss0"], rel=1e-6)
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < losses[0] - 0.5


def test_gradient_and_loss_curve_are_warp_sims(runs):
    if runs["warp"] is None:
        pytest.skip(f"no warp.sim 1.9.1 venv at {WARP_SIM_PYTHON} (set WARP_SIM_PYTHON)")
    warp_grad = np.array(runs["warp"]["grad"])
    assert np.linalg.norm(runs["grad0"] - warp_grad) < 1e-3 * np.linalg.norm(warp_grad)
    np.testing.assert_allclose(runs["losses"], runs["warp"]["losses"], rtol=1e-4)
    # the same trend: each iteration lowers the loss by Warp's amount
    np.testing.assert_allclose(np.diff(runs["losses"]), np.diff(runs["warp"]["losses"]),
                               rtol=1e-3)


def test_bad_arguments_are_errors_naming_them(runs):
    with pytest.raises(ValueError, match="sim_duration must be > 0"):
        Example(sim_duration=0.0)
    with pytest.raises(ValueError, match="sim_duration .* is shorter than one frame"):
        Example(sim_duration=0.001)
    with pytest.raises(ValueError, match=r"directional_check: a direction has shape \(3,\)"):
        runs["example"].directional_check([np.ones(3)])
