"""Redefinition, as in a notebook: a ``@sim.func`` defined again reaches the kernels that call it.

Warp recompiles a module whose functions changed; Numba keeps what a dispatcher compiled. So
every ``@sim.func`` and ``@sim.kernel`` definition is noted here, and defining one again under
a name already seen (a notebook cell run twice, a module reloaded) bumps a generation counter.
A launch compares the kernel's generation with the counter (one integer comparison, the only
per-launch cost); when they differ, :func:`refresh` lists the funcs the kernel reaches now
(through its names, and theirs) and, if they are not the objects its launchers were built
with, drops the launchers and the compiled code of those funcs, so that the next launch
compiles against the definitions the names hold now (through the disk cache, whose
fingerprint of a kernel covers the sources it reaches).
"""

from numba.core.dispatcher import Dispatcher

from numba_sim import cache
from numba_sim.func_overloads import FuncOverloads
from numba_sim.kernel_language import function_namespace

_defined = set()
current = [0]
"""The generation: bumped whenever a func or kernel is defined again under a known name."""


def note_definition(fn):
    """Note the definition of the func or kernel *fn*; a repeated one bumps the generation."""
    key = (fn.__module__, fn.__qualname__)
    if key in _defined:
        current[0] += 1
    _defined.add(key)


def built(kernel):
    """Called when a launcher of *kernel* is built: what it reaches now is what it uses."""
    if kernel.reached is None:
        kernel.reached = _reached(kernel.py_func)


def refresh(kernel):
    """Bring *kernel* (and its overloads) up to the current generation (see the docstring)."""
    for each in (kernel, *kernel.overloads):
        each.generation = current[0]
        if each.reached is None:
            continue  # never launched: it compiles against the current definitions anyway
        reached = _reached(each.py_func)
        if [id(f) for f in reached] != [id(f) for f in each.reached]:
            each.launchers.clear()
            each.fast_launch = None
            for dispatcher in reached:
                dispatcher._reset_overloads()  # compiled again, against the new names, when called
            each.reached = reached


def _reached(function, seen=None):
    """The Numba dispatchers (``@sim.func``s, ``@njit`` functions) that *function* reaches
    through its names, depth first, each once (numba_sim's own builtins left out)."""
    seen = set() if seen is None else seen
    found = []
    namespace = function_namespace(function)
    for name in sorted(cache.code_names(function.__code__)):
        value = namespace.get(name)
        for member in value.members if isinstance(value, FuncOverloads) else [value]:
            if isinstance(member, Dispatcher) and id(member) not in seen \
                    and not member.py_func.__module__.startswith("numba_sim."):
                seen.add(id(member))
                found.append(member)
                found += _reached(member.py_func, seen)
    return found


__all__ = ["note_definition", "built", "refresh", "current"]
