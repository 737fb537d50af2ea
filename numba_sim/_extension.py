"""Entry point for Numba's ``numba_extensions`` group: importing numba_sim
registers its types, typing and lowering in the CPU and CUDA targets."""


def init():
    import sys

    import numba_sim  # noqa: F401

    if "numba.cuda" in sys.modules:
        numba_sim.registry.install_cuda()
