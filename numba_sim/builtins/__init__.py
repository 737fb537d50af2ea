"""Warp's builtins, one module per family; each defined once in the operation table."""

from numba_sim.builtins import geometry, vector  # noqa: F401
