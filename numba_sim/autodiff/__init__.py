"""Automatic differentiation (issue 24).

Keep the imports here light: ``numba_sim.launcher`` imports ``autodiff.recording`` (and so
this package) on its own import.
"""

from numba_sim.autodiff.op_adjoints import adjoint_attribute, adjoint_function  # noqa: F401
from numba_sim.autodiff.custom_adjoints import adjoint, func_grad, func_replay  # noqa: F401
from numba_sim.autodiff.gradients import grad, requires_grad  # noqa: F401
from numba_sim.autodiff.tape import Tape  # noqa: F401
