"""Runnable demos, each a module with an ``Example`` class whose ``step()`` advances
one frame: ``numba-sim run NAME`` or ``python -m numba_sim run NAME``.

* ``particles``: the seed's particle system (gravity and a bouncy ground);
* ``dem``: Warp's example_dem, a granular flow of 65,536 particles with HashGrid contacts;
* ``sph``: Warp's example_sph, an SPH fluid;
* ``cloth``: warp.sim's example_cloth on ``numba_sim.physics`` (a sheet draping a sphere);
* ``softbody``: soft blocks of three stiffnesses dropped onto a sphere (``numba_sim.physics``);
* ``pendulum``: chains of 1, 2, 3 and 5 links swinging (``physics.SolverFeatherstone``);
* ``ant``: an MJCF quadruped trotting on sinusoidal joint targets (``physics.SolverXPBD``).
"""

import importlib
import os

EXAMPLES = {
    "particles": "numba_sim.examples.particles",
    "dem": "numba_sim.examples.dem",
    "sph": "numba_sim.examples.sph",
    "cloth": "numba_sim.examples.cloth",
    "softbody": "numba_sim.examples.softbody",
    "pendulum": "numba_sim.examples.pendulum",
    "ant": "numba_sim.examples.ant",
}


def get_asset_directory():
    """The directory of the demos' assets (Warp's ``warp.examples.get_asset_directory()``:
    Warp's examples that load ``bunny.usd`` run unchanged after the rename)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")


def load(name):
    """The ``Example`` class of the demo *name*."""
    if name not in EXAMPLES:
        raise ValueError(f"unknown example {name!r}; choose one of {', '.join(EXAMPLES)}")
    return importlib.import_module(EXAMPLES[name]).Example
