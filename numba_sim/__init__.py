"""numba_sim: Warp's kernel language as a Numba plugin, on the CPU and CUDA.

``import numba_sim as sim``; the public names are those of API.md.
"""

from numba_sim import _checks

_checks.run_all()

from numba_sim import _registration  # noqa: E402
from numba_sim import builtins as _builtins  # noqa: E402
from numba_sim import scalars as _scalars  # noqa: E402
from numba_sim import spatial as _spatial  # noqa: E402
from numba_sim import config  # noqa: E402
from numba_sim.config import LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_WARNING  # noqa: E402
from numba_sim.arrays import (  # noqa: E402
    array, empty, empty_like, from_numpy, full, full_like, ones, ones_like, to_numpy, view,
    zeros, zeros_like,
)
from numba_sim.arrays import array1d, array2d, array3d, array4d, fixedarray  # noqa: E402
from numba_sim.array_copy import clone, copy  # noqa: E402
from numba_sim.host_compat import (  # noqa: E402
    Device, Module, ScopedDevice, ScopedTimer, constant, get_cuda_supported_archs, get_device,
    get_module, get_module_options, load_module, set_module_options,
)
from numba_sim.builtins import *  # noqa: E402,F401,F403
from numba_sim.cuda_args import cuda_args  # noqa: E402
from numba_sim.launch_capture import (  # noqa: E402
    Launch, ScopedCapture, capture, capture_begin, capture_end, capture_if, capture_launch,
    capture_while,
)
from numba_sim.kernel import Function, func, kernel, overload  # noqa: E402
from numba_sim.launcher import launch, synchronize  # noqa: E402
from numba_sim.scalars import *  # noqa: E402,F401,F403
from numba_sim.spatial import *  # noqa: E402,F401,F403
from numba_sim.structs import struct  # noqa: E402
from numba_sim.references import ref  # noqa: E402
from numba_sim.threads import tid  # noqa: E402
from numba_sim.types import PUBLIC_NAMES as _VALUE_CLASSES  # noqa: E402
from numba_sim.types import Float, Int, Scalar  # noqa: E402 (Warp's generic annotations)
from numba_sim.typing import value_access as _value_access  # noqa: E402

globals().update(_VALUE_CLASSES)
_registration.register()
_value_access.type_factories_as_builtins(_builtins)

from numba_sim.builtins import warp_math as _warp_math  # noqa: E402 (funcs: needs the above)
from numba_sim.builtins.warp_math import *  # noqa: E402,F401,F403
from numba_sim.map_kernels import map  # noqa: E402,A004 (Warp's wp.map)
from numba_sim.errors import (  # noqa: E402
    KernelTypingError, WarpCodegenError, WarpCodegenTypeError, WarpCodegenValueError)
from numba_sim.autodiff.custom_adjoints import adjoint, func_grad, func_replay  # noqa: E402
from numba_sim.autodiff.gradients import grad, requires_grad  # noqa: E402
from numba_sim.autodiff.tape import Tape  # noqa: E402

__version__ = "0.1.0"

__all__ = sorted(
    list(_VALUE_CLASSES) + list(_builtins.__all__) + list(_scalars.__all__)
    + list(_spatial.__all__) + list(_warp_math.__all__) + [
        "array", "capture", "config", "cuda_args", "empty", "from_numpy", "full", "func",
        "kernel", "launch", "overload", "ones", "struct", "synchronize", "tid", "to_numpy", "view",
        "zeros", "zeros_like", "empty_like", "ones_like", "full_like", "clone", "copy",
    ] + [
        "ScopedCapture", "capture_begin", "capture_end", "capture_if", "capture_launch",
        "capture_while",
    ] + ["Function", "map"] + [
        "Device", "ScopedDevice", "ScopedTimer", "array1d", "array2d", "array3d", "array4d",
        "constant", "get_cuda_supported_archs", "get_device",
    ] + ["fixedarray"] + ["ref"] + [
        "KernelTypingError", "WarpCodegenError", "WarpCodegenTypeError", "WarpCodegenValueError",
    ] + ["Float", "Int", "Scalar"] + [
        "LOG_DEBUG", "LOG_ERROR", "LOG_INFO", "LOG_WARNING", "Launch", "Module", "get_module",
        "get_module_options", "load_module", "set_module_options",
    ] + ["Tape", "adjoint", "func_grad", "func_replay", "grad", "requires_grad"]
)
