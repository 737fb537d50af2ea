"""Automatic differentiation (issue 24)."""

from numba_sim.autodiff.op_adjoints import adjoint_attribute, adjoint_function  # noqa: F401
