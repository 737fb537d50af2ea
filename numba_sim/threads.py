"""``sim.tid()``: the index of the launched thread; ``sim.static(expr)``: a value
computed when the kernel is compiled.

Inside a ``@sim.kernel`` every ``tid()`` call is rewritten into the kernel's
hidden thread-index parameter (see kernel_language.py), so a call that reaches
Numba's typing — or runs as Python — is outside a kernel: a clear error.
"""

from numba.core.errors import TypingError
from numba.core.typing.templates import AbstractTemplate

from numba_sim.registry import typing_registry

OUTSIDE_KERNEL = ("sim.tid() is only legal inside a @sim.kernel (it is the index of the "
                  "launched thread); pass the index to funcs and plain Numba code as an argument")


def tid():
    """The thread index (int32; a tuple of int32 for multi-dimensional launches).

    ``i = sim.tid()`` is the leading index; ``i, j = sim.tid()`` unpacks a 2-D launch.
    """
    raise RuntimeError(OUTSIDE_KERNEL)


@typing_registry.register_global(tid)
class TidOutsideKernel(AbstractTemplate):
    def generic(self, args, kws):
        raise TypingError(OUTSIDE_KERNEL)


def static(expr):
    """Warp's ``wp.static``: inside a kernel or func, ``sim.static(expr)`` is evaluated once,
    when the body is compiled, in the function's globals and closure, and replaced by its
    value (a constant, or an object such as a func or a type).  Outside a kernel it returns
    *expr*."""
    return expr
