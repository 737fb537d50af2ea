"""Warp's host spellings that map cleanly onto numba_sim: ``sim.constant``,
``sim.get_device`` / ``sim.ScopedDevice`` and ``sim.ScopedTimer``.

numba_sim names devices by strings ("cpu", "cuda", "cuda:N"); `Device` is such a
string that also answers Warp's ``Device`` attributes (``is_cpu``, ``is_cuda``,
``ordinal``, ``alias``), so it is accepted wherever a device string is.
"""

import sys
import threading
import time

from numba_sim import arrays
from numba_sim.launcher import synchronize


def constant(x):
    """Warp's ``wp.constant(x)``: marks a global as a compile-time constant.

    numba_sim freezes every global a kernel reads when the kernel first compiles
    (as Warp does for constants), so this returns *x* itself; it is kept so that
    ported code reads the same.
    """
    return x


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
