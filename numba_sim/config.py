"""Settings: ``sim.config.mode = "debug"`` (or ``NUMBA_SIM_DEBUG=1``) compiles kernels
with bounds-checked array access and NaN checks on stores; errors name the
kernel, the array parameter and the index.  Debug launches run serially on the
CPU (a raise inside a parallel loop serializes it) and, on CUDA, with
numba-cuda's ``debug=True``.  The default mode is "release".
"""

import os
import sys
import types

MODES = ("release", "debug")


class _Config(types.ModuleType):
    @property
    def mode(self):
        return self._mode

    @mode.setter
    def mode(self, value):
        if value not in MODES:
            raise ValueError(f"mode: expected one of {MODES}, got {value!r}")
        self._mode = value

    @property
    def debug(self):
        return self._mode == "debug"


_mode = "debug" if os.environ.get("NUMBA_SIM_DEBUG", "0").lower() in ("1", "true", "yes", "on") \
    else "release"

sys.modules[__name__].__class__ = _Config
