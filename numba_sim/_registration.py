"""Imports every family's typing and lowering, then installs numba_sim in Numba's targets.

Importing a typing or lowering module declares its family in numba_sim's registries
(registry.py); :func:`register` then installs them into both targets.  Order matters in
one place: the operation table (operators, builtins and the debug checks define entries in
it) must be complete before its typing and lowering are registered, so that happens in
:func:`register`, which ``numba_sim/__init__.py`` calls last.
"""

from numba_sim import _cuda_hook, registry
from numba_sim import builtins, debug_checks, operators  # noqa: F401 (operation table entries)
# value types, views, structs and the kernel language's operators
from numba_sim.lowering import arrays, kernel_ops, structs  # noqa: F401
from numba_sim.lowering import operations as operations_lowering
from numba_sim.lowering import type_attributes, value_access, value_boxing  # noqa: F401
from numba_sim.typing import arrays as array_typing  # noqa: F401
from numba_sim.typing import kernel_ops as kernel_ops_typing  # noqa: F401
from numba_sim.typing import operations as operations_typing
from numba_sim.typing import value_access as value_access_typing  # noqa: F401
# spatial structures (HashGrid, Bvh, Mesh): the typing and lowering of their queries (each
# lowering module imports its typing module); numba_sim/spatial is the host side only
from numba_sim.lowering import bvh as _bvh_lowering  # noqa: F401
from numba_sim.lowering import hash_grid as _hash_grid_lowering  # noqa: F401
from numba_sim.lowering import mesh as _mesh_lowering  # noqa: F401


def register():
    """Register the operation table's typing and lowering, and install everything in the
    CPU target (and in numba-cuda's once ``numba.cuda`` is imported)."""
    operations_typing.register_operations()
    operations_lowering.register_operations()
    registry.install()
    _cuda_hook.install()
