"""Numba types, data models and typing templates of numba_sim, by family."""
