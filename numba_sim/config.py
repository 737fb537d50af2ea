"""Settings: ``sim.config.mode = "debug"`` (or ``NUMBA_SIM_DEBUG=1``) compiles kernels
with bounds-checked array access and NaN checks on stores; errors name the
kernel, the array parameter and the index.  Debug launches run serially on the
CPU (a raise inside a parallel loop serializes it) and, on CUDA, with
numba-cuda's ``debug=True``.  The default mode is "release".

Warp's other ``wp.config`` settings (``WARP_SETTINGS``) exist with Warp's defaults, so
that Warp code that reads or sets them runs; what each does here is in its entry (most
configure Warp's own C++/CUDA compiler, kernel cache or logger, which numba_sim does
not have).  Setting a name that is neither is an AttributeError.
"""

import enum
import os
import sys
import types

MODES = ("release", "debug")


class LaunchArrayAccessMode(enum.IntEnum):
    """Warp's ``wp.config.LaunchArrayAccessMode``."""

    RELAXED = 0
    CHECKED = 1
    STRICT = 2


class DeterministicMode(enum.IntEnum):
    """Warp's ``wp.DeterministicMode`` (the ``deterministic`` setting's values)."""

    NOT_GUARANTEED = 0
    RUN_TO_RUN = 1
    GPU_TO_GPU = 2


LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERROR = 10, 20, 30, 40
"""Warp's log levels (``wp.LOG_WARNING`` ...), the values of ``log_level``."""

_NO_COMPILER = "no effect: it configures Warp's C++/CUDA compiler; numba_sim compiles with Numba"
_NO_AUTODIFF = "no effect in numba_sim's autodiff (docs/autodiff.md)"
_NO_EFFECT = "no effect in numba_sim"

WARP_SETTINGS = {
    # name: (Warp 1.19's default, what it does in numba_sim)
    "enable_backward": (True, "the default of the module option enable_backward (kept for "
                              "the adjoint, as the kernel option)"),
    "max_unroll": (16, "the default of the module option max_unroll; no effect: Numba "
                       "compiles a loop as a loop (unrolling changes no result)"),
    "log_level": (LOG_INFO, "no effect: numba_sim does not log through Warp's logger"),
    "quiet": (False, "no effect: numba_sim prints no start-up banner"),
    "verbose": (False, _NO_EFFECT),
    "verbose_warnings": (False, _NO_EFFECT),
    "verify_fp": (False, "release-mode kernels launched while it is set (a build of their "
                         "own) print each non-finite value stored into an array parameter, "
                         "with the kernel's file and line, as Warp's; debug mode raises on "
                         "NaN stores instead"),
    "verify_cuda": (False, "no effect: numba-cuda reports CUDA errors when they happen"),
    "print_launches": (False, _NO_EFFECT),
    "verify_autograd_array_access": (False, "launches recorded on a tape mark the arrays "
                                            "their kernels read and write, and writing one "
                                            "an earlier recorded launch read prints Warp's "
                                            "warning (numba_sim/autodiff/array_access.py); "
                                            "sim.Tape(check_inputs=True) catches an "
                                            "overwrite at backward instead"),
    "enable_vector_component_overwrites": (False, _NO_AUTODIFF + ": component assignment "
                                                  "of local values is always differentiated"),
    "legacy_scalar_return_types": (False, "no effect: numba_sim returns the NumPy scalar "
                                          "types"),
    "cache_kernels": (True, "no effect: numba_sim's compiled kernels are cached by Numba "
                            "(numba_sim/cache.py)"),
    "kernel_cache_dir": (None, "no effect: numba_sim/cache.py names the cache directory"),
    "optimization_level": (None, _NO_COMPILER),
    "cpu_compiler_flags": (
        "-march=native -mllvm=-inline-threshold=9000 -mllvm=-inline-cold-callsite-threshold=3000"
        " -mllvm=-slp-recursion-max-depth=4", _NO_COMPILER),
    "cuda_output": (None, _NO_COMPILER),
    "ptx_target_arch": (None, _NO_COMPILER),
    "cuda_arch_suffix": (None, _NO_COMPILER),
    "lineinfo": (False, _NO_COMPILER),
    "line_directives": (True, _NO_COMPILER),
    "compile_time_trace": (False, _NO_COMPILER),
    "llvm_cuda": (False, _NO_COMPILER),
    "use_precompiled_headers": (True, _NO_COMPILER),
    "legacy_cpu_linker": (False, _NO_COMPILER),
    "enable_cpu_blocks": (False, _NO_EFFECT + ": CPU launches run on Numba's parallel loops"),
    "default_grid_stride": (True, _NO_EFFECT + ": each thread runs one index"),
    "enable_mathdx_gemm": (True, _NO_EFFECT + " (tiles are out of scope)"),
    "enable_mathdx_solver": (True, _NO_EFFECT + " (tiles are out of scope)"),
    "enable_mathdx_fft": (True, _NO_EFFECT + " (tiles are out of scope)"),
    "enable_tiles_in_stack_memory": (True, _NO_EFFECT + " (tiles are out of scope)"),
    "enable_graph_capture_module_load_by_default": (True, _NO_EFFECT),
    "enable_mempools_at_init": (True, _NO_EFFECT + ": CuPy allocates CUDA memory"),
    "track_memory": (False, _NO_EFFECT),
    "load_module_max_workers": (0, _NO_EFFECT),
    "launch_array_access_mode": (LaunchArrayAccessMode.RELAXED, _NO_EFFECT + ": a launch "
                                 "checks every array's device"),
    "deterministic": (DeterministicMode.NOT_GUARANTEED, _NO_EFFECT),
    "deterministic_max_records": (0, _NO_EFFECT),
    "deterministic_debug": (False, _NO_EFFECT),
}
"""Warp's ``wp.config`` settings other than ``mode``: Warp's default and what it does here."""

_ENUM_SETTINGS = {"launch_array_access_mode": LaunchArrayAccessMode,
                  "deterministic": DeterministicMode}


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

    def __setattr__(self, name, value):
        if not name.startswith("_") and name not in WARP_SETTINGS \
                and not hasattr(type(self), name):
            raise AttributeError(f"sim.config has no setting {name!r} (numba_sim's is 'mode'; "
                                 f"Warp's others: {', '.join(sorted(WARP_SETTINGS))})")
        kind = _ENUM_SETTINGS.get(name)
        if kind is not None and not isinstance(value, kind):
            raise ValueError(f"{name}: expected a {kind.__name__} value, got {value!r}")
        super().__setattr__(name, value)


_mode = "debug" if os.environ.get("NUMBA_SIM_DEBUG", "0").lower() in ("1", "true", "yes", "on") \
    else "release"
globals().update({name: default for name, (default, _) in WARP_SETTINGS.items()})

sys.modules[__name__].__class__ = _Config
