"""Warp's builtins, one module per family; each builtin declared once.

A family module only declares its public functions, in one of the two ways of
:mod:`numba_sim.builtins.forms`: :func:`~numba_sim.builtins.forms.builtin`
(a formula: an entry of the operation table, :mod:`numba_sim.operations`, which
a family may also fill by hand with ``make_builtin`` / ``define``) or
:func:`~numba_sim.builtins.forms.intrinsic_builtin` (not a formula: the random
builtins and the atomics, lowered by :mod:`numba_sim.lowering`), and lists them
in its ``__all__``; importing this package registers them all, and
``numba_sim`` re-exports every name listed here.
"""

import importlib

from numba_sim.threads import static

FAMILIES = ("scalar_math", "vector", "matrix", "quaternion", "transform", "spatial", "geometry",
            "atomics", "random",
            "debug", "noise", "linalg", "constants", "algorithms")

__all__ = []
for _family in FAMILIES:
    _module = importlib.import_module(f"numba_sim.builtins.{_family}")
    globals().update({name: getattr(_module, name) for name in _module.__all__})
    __all__ += list(_module.__all__)

__all__.append("static")  # a kernel-language form (the rewrite evaluates it), public as Warp's
