"""Imports every family's typing and lowering, then installs numba_sim in Numba's targets.

Order matters only in one place: the operation table (operators, builtins and
the debug checks define entries in it) must be complete before its typing and
lowering are registered.
"""

from numba_sim import _cuda_hook, registry


def register():
    from numba_sim import builtins, debug_checks, ir_rewrites, operators  # noqa: F401
    from numba_sim.lowering import arrays, kernel_ops, structs  # noqa: F401
    from numba_sim.lowering import operations as operations_lowering
    from numba_sim.lowering import value_access, value_boxing  # noqa: F401
    from numba_sim.typing import arrays as array_typing  # noqa: F401
    from numba_sim.typing import kernel_ops as kernel_ops_typing  # noqa: F401
    from numba_sim.typing import operations as operations_typing
    from numba_sim.typing import value_access as value_access_typing  # noqa: F401
    from numba_sim import spatial  # noqa: F401  (registers its own families)

    operations_typing.register_operations()
    operations_lowering.register_operations()
    registry.install()
    _cuda_hook.install()
