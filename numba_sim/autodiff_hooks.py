"""Where the launcher, kernels and allocation meet autodiff without importing it.

``numba_sim.launcher.launch`` reads :data:`tapes` on every launch (a launch with no tape
recording costs one list test), and hands a launch to :data:`intercept` while one records or
when it is an ``adjoint=True`` launch.  The other names are filled in when
``numba_sim.autodiff`` is imported (``import numba_sim`` does), so that these low layers need
not import it: this module imports nothing.
"""

tapes = []
"""The ``sim.Tape`` s inside whose ``with`` block launches run, innermost last."""

intercept = None
"""``intercept(kernel, dim, inputs, outputs, device, stream, record_cmd, adjoint, adj_inputs,
adj_outputs)``: numba_sim/autodiff/adjoint_launch.py."""

register_gradient = None
"""``register_gradient(array)``: numba_sim/autodiff/gradients.py's ``requires_grad``."""
has_gradient = None
"""``has_gradient(array)``: numba_sim/autodiff/gradients.py's ``has_grad``."""
gradient_or_scratch = None
"""numba_sim.autodiff.adjoint_launch.gradient_or_scratch: an array's adjoint argument by default."""
record_copy = None
"""``record_copy(tape, dest, src, dest_window, src_window)``: numba_sim/autodiff/copy_adjoints.py."""
grad = None
"""``sim.grad`` (numba_sim/autodiff/gradients.py): the kernel rewrite knows ``sim.grad(f)(x)`` by it."""
gradient_call = None
"""numba_sim/autodiff/gradient_calls.py's ``gradient_call``, the rewrite of ``sim.grad(f)(x)``."""
"""``record_copy(tape, dest, src, dest_window, src_window)``: numba_sim/autodiff/copy_adjoints.py."""

adjoint_compile_arguments = None
"""``(kernel, argtypes_or_inputs, ndim) -> (adjoint kernel, its arguments)``, for
``kernel.compile`` / ``kernel.inspect`` with ``adjoint=True``."""

adjoint_source_text = None
"""``(kernel, ndim) -> str``: an adjoint kernel's generated source."""

adjoint_function = None
adjoint_attribute = None
"""numba_sim/autodiff/op_adjoints.py's builtin adjoints, for the adjoint generator (set by
``numba_sim/autodiff/__init__.py``, so that the generator's modules do not import the
operation table's adjoints, which import ``numba_sim`` itself)."""
