"""Lowering of numba_sim's families for both the CPU and the CUDA target."""
