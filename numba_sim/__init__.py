"""numba_sim: Warp's kernel language as a Numba plugin, on the CPU and CUDA.

``import numba_sim as sim``; the public names are those of API.md.
"""

from numba_sim import _checks

_checks.run_all()

from numba_sim import registry as _registry  # noqa: E402
from numba_sim import operators as _operators  # noqa: E402,F401
from numba_sim.typing import value_access as _value_access_typing  # noqa: E402,F401
from numba_sim.typing import operations as _operations_typing  # noqa: E402
from numba_sim.lowering import value_access as _value_access_lowering  # noqa: E402,F401
from numba_sim.lowering import value_boxing as _value_boxing  # noqa: E402,F401
from numba_sim.lowering import operations as _operations_lowering  # noqa: E402
from numba_sim import builtins as _builtins  # noqa: E402
from numba_sim.builtins import *  # noqa: E402,F401,F403
from numba_sim.cuda_args import cuda_args  # noqa: E402
from numba_sim.types import PUBLIC_NAMES as _VALUE_CLASSES  # noqa: E402
from numba_sim.typing.arrays import view  # noqa: E402
from numba_sim import ir_rewrites as _ir_rewrites  # noqa: E402,F401
from numba_sim.lowering import arrays as _arrays_lowering  # noqa: E402,F401
from numba_sim.threads import tid  # noqa: E402
from numba_sim.arrays import (  # noqa: E402
    array, empty, from_numpy, full, ones, to_numpy, zeros, zeros_like,
)
from numba_sim.kernel import func, kernel  # noqa: E402
from numba_sim.structs import struct  # noqa: E402
from numba_sim.lowering import structs as _structs_lowering  # noqa: E402,F401
from numba_sim.typing import kernel_ops as _kernel_ops_typing  # noqa: E402,F401
from numba_sim import debug_checks as _debug_checks  # noqa: E402,F401
from numba_sim import config  # noqa: E402
from numba_sim import spatial as _spatial  # noqa: E402
from numba_sim.spatial import *  # noqa: E402,F401,F403
from numba_sim.lowering import kernel_ops as _kernel_ops_lowering  # noqa: E402,F401
from numba_sim.launcher import launch, synchronize  # noqa: E402
from numba_sim.cuda_runtime import capture  # noqa: E402
from numba_sim.scalars import *  # noqa: E402,F401,F403
from numba_sim import scalars as _scalars  # noqa: E402

globals().update(_VALUE_CLASSES)

_operations_typing.register_operations()
_operations_lowering.register_operations()
_registry.install()

from numba_sim import _cuda_hook  # noqa: E402

_cuda_hook.install()

__version__ = "0.1.0"

__all__ = sorted(
    list(_VALUE_CLASSES) + list(_builtins.__all__) + list(_scalars.__all__)
    + list(_spatial.__all__) + [
        "cuda_args", "view", "tid", "array", "empty", "from_numpy", "full", "ones", "to_numpy",
        "zeros", "zeros_like", "func", "kernel", "launch", "synchronize", "struct", "capture",
        "config",
    ]
)
