"""Warp's builtins, one module per family; each defined once in the operation table.

A family module defines its public functions with
:func:`numba_sim.operations.make_builtin` / :func:`numba_sim.operations.define`
and lists them in its ``__all__``; importing this package registers them all,
and ``numba_sim`` re-exports every name listed here.
"""

import importlib

FAMILIES = ("scalar_math", "vector", "matrix", "quaternion", "transform", "geometry", "atomics", "random")

__all__ = []
for _family in FAMILIES:
    _module = importlib.import_module(f"numba_sim.builtins.{_family}")
    globals().update({name: getattr(_module, name) for name in _module.__all__})
    __all__ += list(_module.__all__)
