"""Runnable examples: ``python -m numba_sim.examples.NAME``."""
