"""Automatic differentiation (issue 24).

The builtins' adjoints (op_adjoints.py, op_overrides.py, op_scalars.py, trace.py) and the
adjoint kernels, gradients and tape (adjoint_kernel.py, adjoint_source.py, flatten.py,
activity.py, adjoint_helpers.py, adjoint_launch.py, custom_adjoints.py, gradients.py,
tape.py, launch_checks.py): docs/autodiff.md.
"""

from numba_sim import autodiff_hooks
from numba_sim.autodiff.op_adjoints import adjoint_attribute, adjoint_function  # noqa: F401
from numba_sim.autodiff.custom_adjoints import adjoint, func_grad, func_replay  # noqa: F401
from numba_sim.autodiff.gradients import grad, requires_grad  # noqa: F401
from numba_sim.autodiff.tape import Tape  # noqa: F401
from numba_sim.autodiff import copy_adjoints  # noqa: F401  (sim.copy's adjoint on a tape)
from numba_sim.autodiff.gradient_calls import gradient_call

autodiff_hooks.adjoint_function = adjoint_function
autodiff_hooks.adjoint_attribute = adjoint_attribute
autodiff_hooks.grad = grad
autodiff_hooks.gradient_call = gradient_call
