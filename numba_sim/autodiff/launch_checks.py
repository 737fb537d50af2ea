"""Debug check of a tape: an array overwritten between a forward launch and the backward.

The adjoint of a launch replays it with the arrays as they are at ``backward``; if one of
the arrays its kernel reads changed since the launch (a later launch wrote it, or the
kernel updated it in place), the gradient is silently wrong.  With checks on, the tape keeps
a checksum of each such array taken before the launch ran, and ``backward`` compares.
"""

import hashlib

import numpy as np

from numba_sim import arrays
from numba_sim.autodiff.array_access import array_modes


def _digest(array):
    host = arrays.to_numpy(array) if arrays.device_of(array) == "cuda" else array
    return hashlib.blake2b(np.ascontiguousarray(host).view(np.uint8).data, digest_size=16).digest()


class InputChecksums:
    """Checksums of the arrays a launch reads, taken before it ran."""

    def __init__(self, kernel, items):
        self.kernel = kernel
        self.items = items
        """(parameter name, array, digest)."""

    @classmethod
    def of_launch(cls, kernel, args):
        read = array_modes(kernel)[0]
        items = [(p.name, a, _digest(a)) for p, a in zip(kernel.parameters, args)
                 if p.name in read and arrays.device_of(a) is not None]
        return cls(kernel, items)

    def check(self):
        for name, array, digest in self.items:
            if _digest(array) != digest:
                raise RuntimeError(
                    f"Tape.backward: the array passed as parameter {name!r} of kernel "
                    f"{self.kernel.key} changed between its forward launch and the backward "
                    f"(overwritten by a later launch or updated in place), so its adjoint "
                    f"would replay it with other values; keep a copy of it or use another "
                    f"array")
