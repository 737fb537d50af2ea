"""Warp's host spellings that map cleanly onto numba_sim: ``sim.constant``,
``sim.get_device`` / ``sim.ScopedDevice``, ``sim.ScopedTimer`` and Warp's module API
(``sim.get_module``, ``sim.load_module``, ``sim.get_module_options``,
``sim.set_module_options``: kernel.py's `KernelModule`).

numba_sim names devices by strings ("cpu", "cuda", "cuda:N"); `Device` is such a
string that also answers Warp's ``Device`` attributes (``is_cpu``, ``is_cuda``,
``ordinal``, ``alias``), so it is accepted wherever a device string is.
"""

import os
import sys
import threading
import time
import types

import numpy as np

from numba_sim import arrays
from numba_sim.kernel import KernelModule
from numba_sim.launcher import synchronize
from numba_sim.types import Value


def constant(x):
    """Warp's ``wp.constant(x)``: marks a global as a compile-time constant.

    numba_sim freezes every global a kernel reads when the kernel first compiles
    (as Warp does for constants), so this returns *x* itself; it is kept so that
    ported code reads the same. As in Warp, *x* must be a value: a bool, int or float
    (NumPy's and numba_sim's scalar types too) or a vector, matrix, quaternion or
    transform; anything else is Warp's TypeError.
    """
    if not (isinstance(x, (bool, int, float, np.bool_, np.number, Value))):
        raise TypeError(f"Invalid constant type: {type(x)}")
    return x


def get_cuda_supported_archs():
    """Warp's ``wp.get_cuda_supported_archs()``: the CUDA compute architectures the installed
    NVRTC compiles for (``75`` for sm_75), sorted; empty when NVRTC cannot be loaded (no GPU
    is needed: it is the compiler's list)."""
    try:
        from numba.cuda.cudadrv import nvrtc  # numba-cuda, loaded only when asked

        ccs = nvrtc.get_supported_ccs()
    except Exception:  # noqa: BLE001 (no NVRTC: no architectures, as Warp says)
        return []
    return sorted(major * 10 + minor for major, minor in ccs)


class Device(str):
    """A device string ("cpu" or "cuda:N") with Warp's ``Device`` attributes."""

    __slots__ = ()

    def __new__(cls, name):
        kind, ordinal = arrays.parse_device(name)
        if kind == "cuda":
            ordinal = _current_cuda_ordinal() if ordinal is None else ordinal
            return super().__new__(cls, f"cuda:{ordinal}")
        return super().__new__(cls, "cpu")

    @property
    def alias(self):
        return str(self)

    @property
    def is_cpu(self):
        return self == "cpu"

    @property
    def is_cuda(self):
        return self != "cpu"

    @property
    def ordinal(self):
        """The CUDA ordinal, -1 for the CPU (as Warp)."""
        return -1 if self == "cpu" else int(self[5:])

    @property
    def arch(self):
        """Warp's ``Device.arch``: 0 on the CPU, else the compute capability as 10 * major
        + minor (CuPy's device attribute)."""
        if self == "cpu":
            return 0
        return int(arrays.cupy_module().cuda.Device(self.ordinal).compute_capability)

    def _cuda_attribute(self, name):
        return int(arrays.cupy_module().cuda.Device(self.ordinal).attributes[name])

    @property
    def sm_count(self):
        """Warp's ``Device.sm_count``: the GPU's multiprocessors, 0 on the CPU."""
        return 0 if self == "cpu" else self._cuda_attribute("MultiProcessorCount")

    @property
    def max_shared_memory_per_block(self):
        """Warp's ``Device.max_shared_memory_per_block`` in bytes, 0 on the CPU."""
        return 0 if self == "cpu" else self._cuda_attribute("MaxSharedMemoryPerBlock")

    def _memory_info(self):
        """(free, total) bytes: the host's physical memory (the OS's count) on the CPU, the
        GPU's (the CUDA runtime's) on CUDA."""
        if self == "cpu":
            page = os.sysconf("SC_PAGE_SIZE")
            return page * os.sysconf("SC_AVPHYS_PAGES"), page * os.sysconf("SC_PHYS_PAGES")
        cupy = arrays.cupy_module()
        with cupy.cuda.Device(self.ordinal):
            return cupy.cuda.runtime.memGetInfo()

    @property
    def free_memory(self):
        """Warp's ``Device.free_memory`` in bytes."""
        return int(self._memory_info()[0])

    @property
    def total_memory(self):
        """Warp's ``Device.total_memory`` in bytes."""
        return int(self._memory_info()[1])

    def __repr__(self):
        return f"Device({str(self)!r})"

    # str's own hash and equality: Device("cpu") == "cpu", usable as a dict key alike


def _current_cuda_ordinal():
    """CuPy's current device for a bare "cuda" (0 without CuPy, as Warp's default)."""
    cupy = arrays.cupy_or_none()
    if cupy is None:
        return 0
    try:
        return int(cupy.cuda.Device().id)
    except Exception:  # no driver: allocations on it fail with CuPy's own error
        return 0


def get_device(name=None):
    """Warp's ``wp.get_device``: the `Device` named by *name* ("cpu", "cuda",
    "cuda:N" or a `Device`); without a name, the current device (the innermost
    `ScopedDevice`'s, else "cpu", where numba_sim allocates by default)."""
    if name is None:
        name = arrays.current_device()
    if isinstance(name, Device):
        return name
    if not isinstance(name, str):
        raise TypeError(f"name: expected a device name ('cpu', 'cuda' or 'cuda:N') or None, "
                        f"got {name!r}")
    return Device(name)


class ScopedDevice:
    """``with sim.ScopedDevice("cuda:0"):`` — allocations without a ``device``
    (`sim.zeros`, `sim.array(data)`, ...) and `sim.get_device()` use this device
    inside the block; on CUDA, CuPy's current device is switched too (so CuPy
    allocations and launches on "cuda" follow it).  Blocks nest."""

    def __init__(self, device):
        self.device = get_device(device)
        self._cupy_device = None

    def __enter__(self):
        if self.device.is_cuda:
            self._cupy_device = arrays.cupy_module().cuda.Device(self.device.ordinal)
            self._cupy_device.__enter__()
        arrays._device_scope.append(self.device)
        return self.device

    def __exit__(self, exc_type, exc_value, traceback):
        arrays._device_scope.pop()
        if self._cupy_device is not None:
            self._cupy_device.__exit__(exc_type, exc_value, traceback)
            self._cupy_device = None
        return False


class ScopedTimer:
    """Warp's ``wp.ScopedTimer``: times the ``with`` block.

    On exit ``elapsed`` holds the milliseconds; with ``print`` (the default) the
    line ``"<name> took <ms> ms"`` is printed (indented by nesting), with ``dict``
    the time is appended to ``dict[name]``, with ``synchronize`` outstanding CUDA
    work is waited for on entry and exit (for honest GPU timings).  ``active=False``
    makes the timer do nothing.  Warp's profiling options (``detailed``, ``use_nvtx``,
    ``cuda_filter``, ...) are not supported and are TypeErrors.
    """

    _thread_local = threading.local()

    def __init__(self, name, active=True, print=True, dict=None, synchronize=False,
                 report_func=None):
        if not isinstance(name, str):
            raise TypeError(f"name: expected a str, got {name!r}")
        if dict is not None and not hasattr(dict, "setdefault"):
            raise TypeError(f"dict: expected a dict of lists or None, got {dict!r}")
        self.name = name
        self.active = bool(active)
        self.print = bool(print)
        self.dict = dict
        self.synchronize = bool(synchronize)
        self.report_func = report_func
        self.elapsed = 0.0
        self.extra_msg = ""
        self._start = None
        if dict is not None:
            dict.setdefault(name, [])

    @classmethod
    def _indent(cls, step=0):
        level = getattr(cls._thread_local, "indent", -1) + step
        cls._thread_local.indent = level
        return level

    def __enter__(self):
        if self.active:
            if self.synchronize:
                synchronize()
            if self.print:
                self._indent(+1)
            self._start = time.perf_counter_ns()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.active:
            return False
        if self.synchronize:
            synchronize()
        self.elapsed = (time.perf_counter_ns() - self._start) / 1e6
        if self.dict is not None:
            self.dict[self.name].append(self.elapsed)
        if self.print:
            indent = "    " * max(self._indent(), 0)
            line = f"{indent}{self.name} took {self.elapsed:.2f} ms{self.extra_msg}"
            if self.report_func is not None:
                self.report_func(line)
            else:
                sys.stdout.write(line + "\n")
            self._indent(-1)
        return False


# --------------------------------------------------------------------------
# Warp's module API


Module = KernelModule
"""Warp's ``wp.Module``."""


def get_module(name):
    """Warp's ``wp.get_module(name)``: the `KernelModule` of Python module *name* (made on
    first use): its kernels and Warp's module options."""
    return KernelModule.named(name)


def _module_named(module, caller_depth):
    """The `KernelModule` a module argument names: None (the caller's module: the frame
    *caller_depth* levels up), a `KernelModule`, a Python module or a module name."""
    if isinstance(module, KernelModule):
        return module
    if module is None:
        return KernelModule.named(sys._getframe(caller_depth).f_globals["__name__"])
    if isinstance(module, types.ModuleType):
        return KernelModule.named(module.__name__)
    if isinstance(module, str):
        return KernelModule.named(module)
    raise TypeError(f"module: expected None (the calling module), a module name, a module or "
                    f"sim.get_module(name), got {module!r}")


def get_module_options(module=None):
    """Warp's ``wp.get_module_options``: the options of *module* (the calling module by
    default), a dict that changes with them."""
    return _module_named(module, 2).options


def set_module_options(options, module=None):
    """Warp's ``wp.set_module_options``: update the options of *module* (the calling module
    by default).  Unknown names are a ValueError; ``mode`` is the mode its kernels compile
    in (None: ``sim.config.mode``); docs/warp-compatibility.md says what the others do."""
    _module_named(module, 2).set_options(options)


def load_module(module=None, device=None, recursive=False, block_dim=None, max_workers=None):
    """Warp's ``wp.load_module``: Warp compiles a module's kernels ahead of their launches;
    numba_sim compiles each kernel at its first launch, for the argument types it is
    launched with (a compiled kernel is kept in the disk cache), so this checks the
    arguments and that the module (with *recursive*, or one of its submodules) has
    kernels, as Warp does, and compiles nothing ahead."""
    found = _module_named(module, 2)
    for name in ([device] if isinstance(device, (str, type(None))) else list(device)):
        get_device(name)
    modules = [found] + ([m for name, m in KernelModule._named.items()
                          if name.startswith(found.name + ".")] if recursive else [])
    if not any(m.kernels for m in modules):
        raise RuntimeError(f"Module '{found.name}' does not contain any Warp kernels, "
                           "functions, or structs, or has not been imported yet.")
