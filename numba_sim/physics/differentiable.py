"""Stepping under a ``sim.Tape`` (docs/autodiff.md, "Differentiable physics").

A tape records each launch with its arrays by reference and replays it in ``backward``
with their contents *then*; so a differentiable step must never overwrite an array that
an earlier recorded launch reads.  This module holds what the solvers need for that:

* :func:`taping`: whether a tape records now (``numba_sim.autodiff_hooks.tapes``);
* :func:`claim`: the check that a step writes into a fresh State (and a collide into a
  fresh Contacts) while a tape records -- stepping ``state_0 -> state_1 -> state_0``
  under a tape is a ValueError naming the argument, not silently wrong gradients;
* :func:`refuse`: solvers whose steps update arrays in place (XPBD's iterations) raise
  a clear error under a tape instead of recording launches whose adjoints would replay
  the final values;
* ``copy_kernel``: a recorded copy (its adjoint is generated), so that forces can be
  accumulated into a fresh array without touching ``state.particle_f`` (and
  ``copy_spatial_kernel`` the same for ``state.body_f``).
"""

import contextlib
import weakref

import numba_sim as sim
from numba_sim import autodiff_hooks

_USED = weakref.WeakKeyDictionary()
"""tape -> [its launches list when the entry was made, WeakSet of the States and Contacts
read or written by its recorded steps]; a ``tape.reset()`` (a new launches list) starts a
new set."""


def taping():
    """Whether a ``sim.Tape`` is recording launches now."""
    return bool(autodiff_hooks.tapes)


@contextlib.contextmanager
def paused():
    """No tape records inside (``model.collide`` under a tape: its contacts are constants
    of the recorded steps, as warp.sim's one-shot collide before the tape)."""
    saved = list(autodiff_hooks.tapes)
    autodiff_hooks.tapes.clear()
    try:
        yield
    finally:
        autodiff_hooks.tapes[:] = saved


def _used(tape):
    entry = _USED.get(tape)
    if entry is None or entry[0] is not tape.launches:
        entry = _USED[tape] = [tape.launches, weakref.WeakSet()]
    return entry[1]


_FRESH = ("states = [model.state() for _ in range(steps + 1)]; "
          "solver.step(states[i], states[i + 1], ...)")


def claim(call, name, written, read=()):
    """Before a step (or collide) under a tape writes into *written* (a State or Contacts):
    a ValueError naming *name* when an earlier recorded step of a recording tape read or
    wrote it (its backward would replay the overwritten values); then remember *written*
    and everything in *read* as used by the tape."""
    for other in read:
        if other is written:
            raise ValueError(
                f"{call}: {name} is also the step's input while a sim.Tape records; the "
                f"step would overwrite the values its adjoint replays. Step into a fresh "
                f"state: {_FRESH}")
    for tape in autodiff_hooks.tapes:
        used = _used(tape)
        if written in used:
            raise ValueError(
                f"{call}: {name} was already read or written by a step recorded on this "
                f"sim.Tape; writing it again overwrites values the tape's backward replays. "
                f"Write each step into a fresh one: {_FRESH} (and model.collide(state) "
                f"into a fresh Contacts, or collide once before the steps)")
        used.add(written)
        for other in read:
            if other is not None:
                used.add(other)


_REASONS = {
    "SolverXPBD": (
        "its iterations update the positions in place (apply_deltas_kernel: x += delta, "
        "then delta = 0) and accumulate the constraints' Lagrange multipliers in place, so "
        "every iteration's constraint kernels would be replayed in backward with the final "
        "positions and multipliers; differentiating it needs a fresh position, delta and "
        "multiplier array per iteration (as warp.sim's XPBDIntegrator allocates when "
        "model.requires_grad)"),
}


def refuse(solver):
    """A RuntimeError for a solver that does not support stepping under a tape."""
    name = type(solver).__name__
    reason = _REASONS.get(name, "its substeps have not been made to write fresh arrays (a "
                          "tape's backward replays each recorded launch with its arrays' "
                          "final contents)")
    return RuntimeError(
        f"{name}.step: cannot run under a sim.Tape: {reason}. Use physics.SolverSemiImplicit "
        f"for differentiable simulation (docs/autodiff.md, 'Differentiable physics')")


@sim.kernel
def copy_kernel(src: sim.array(dtype=sim.vec3), dst: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    dst[i] = src[i]


@sim.kernel
def copy_spatial_kernel(src: sim.array(dtype=sim.spatial_vector),
                        dst: sim.array(dtype=sim.spatial_vector)):
    i = sim.tid()
    dst[i] = src[i]
