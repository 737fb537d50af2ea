"""Every builtin's adjoint, derived from its formula in the operation table.

``adjoint_function(K)`` returns, for an operation key *K* (a builtin such as
:func:`numba_sim.dot`, a Python operator such as ``operator.add``, a value-type
constructor such as ``sim.vec3``, a scalar cast such as ``np.float32``), a function
``adj(*args, adj_ret)`` that returns a tuple with one adjoint per argument, each of the
argument's coerced Numba type (integer and bool arguments get a zero of their type;
compile-time constant arguments such as a dtype get ``None``).  Operations whose result
is a tuple take a tuple of result adjoints.  The function is an entry of the operation
table itself (:func:`numba_sim.operations.define`), so it is typed and lowered by the
same machinery: it can be called in ``@sim.kernel`` / ``@sim.func`` bodies, in plain
``@njit`` / ``@cuda.jit`` code, and in Python on NumPy scalars and value instances.

Its formula runs the forward formula on traced scalars (:mod:`numba_sim.autodiff.trace`)
and sweeps the trace in reverse (:mod:`numba_sim.autodiff.op_derived`), unless
:mod:`numba_sim.autodiff.op_overrides` holds a hand-written adjoint for the variant.
Nothing is derived at import (this module imports nothing): an adjoint function is made
at its first ``adjoint_function`` call and derived when it is typed and lowered (or, in
Python, run).  A builtin without an adjoint (an intrinsic such as ``randf``, or a formula
computed by native code) is a TypingError ``numba_sim: no adjoint for builtin '<name>'``.

Keys that are not table entries but plain Numba arithmetic get the same treatment from a
small table of scalar formulas (:mod:`numba_sim.autodiff.op_scalars`: ``+ - * / // % **``,
unary
``- +``, comparisons and bit operators on int and float scalars; ``float``, ``int`` and
the NumPy / numba_sim scalar types as casts).  Component access has adjoints too:
``adjoint_function(operator.getitem)`` is ``adj(value, index, adj_ret)`` for ``v[i]``,
``m[i]`` (a row) and ``m[i, j]`` (runtime or constant indices, negative ones counting from
the end), and ``adjoint_attribute(name)`` is ``adj(value, adj_ret)`` for ``v.x`` ... ``q.w``
and transform ``.p`` / ``.q``.
"""


def adjoint_function(key):
    """The adjoint function of the operation *key* (made at the first call, then cached);
    a TypingError naming the builtin when it has none."""
    from numba_sim.autodiff import op_derived  # at first use: keeps numba_sim's import light

    return op_derived.adjoint_function(key)


def adjoint_attribute(name):
    """The adjoint function ``adj(value, adj_ret) -> (adj_value,)`` of ``value.<name>``."""
    from numba_sim.autodiff import op_derived

    return op_derived.adjoint_attribute(name)
