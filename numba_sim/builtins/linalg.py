"""Small dense linear algebra: Warp's ``svd3``, ``svd2``, ``qr3`` and ``eig3``
(warp/native/svd.h), for float32 and float64 matrices.

Warp writes the results into output arguments (``wp.svd3(A, U, sigma, V)``); Numba
cannot write into a caller's local variables, and numba_sim's values are immutable, so
the builtins return a tuple: ``U, sigma, V = svd3(A)``.  Inside a ``@sim.kernel`` /
``@sim.func`` the kernel rewrite turns Warp's statement ``svd3(A, U, sigma, V)`` into
that assignment (numba_sim.kernel_language), so Warp code ports unchanged.

* ``svd3(A)``: (U, sigma, V) with ``A = U diag(sigma) V^T``, sigma sorted in decreasing
  order (Jacobi eigenanalysis of ``A^T A``, 4 sweeps in float32 and 8 in float64, then a
  Givens QR; Eric Jang's algorithm, as Warp);
* ``svd2(A)``: the same for a 2x2 matrix, in closed form;
* ``qr3(A)``: (Q, R), Q orthogonal and R upper triangular, by three Givens rotations;
* ``eig3(A)``: (Q, d) for a symmetric A (its lower triangle is read): the eigenvectors
  as Q's columns and the eigenvalues ``d = diag(Q^T A Q)``, unsorted.

The operations are Warp's, in its order, so the CPU gives Warp's CPU numbers bit for
bit.  Warp's CUDA code takes the approximate ``rsqrt`` where its CPU code computes
``1 / sqrt(x)``; numba_sim computes ``1 / sqrt(x)`` on both targets.
"""

import ast
import copy

from numba.core import types

from numba_sim import algebra
from numba_sim.builtins.forms import Form, Value, builtin
from numba_sim.builtins.quaternion import quat_to_axis_angle
from numba_sim.types import KIND_MAT, KIND_VEC
from numba_sim.typing.value_types import value_type_of

MAT22 = Value("mat22", (KIND_MAT,), ((2, 2),))
MAT33 = Value("mat33", (KIND_MAT,), ((3, 3),))


def _results(*parts):
    """Result rule: a tuple of (kind, shape) value types in the argument's scalar type."""
    def result(dtype, argtypes):
        return types.Tuple(tuple(value_type_of(kind, dtype, shape) for kind, shape in parts))

    return result


_MAT = {2: (KIND_MAT, (2, 2)), 3: (KIND_MAT, (3, 3))}
_VEC = {2: (KIND_VEC, (2,)), 3: (KIND_VEC, (3,))}

svd3 = builtin(
    "svd3",
    "svd3(A): (U, sigma, V) with A = U diag(sigma) V^T for a 3x3 matrix, sigma decreasing\n"
    "(Warp's algorithm; Warp's svd3(A, U, sigma, V) statement works in kernels too).",
    Form((MAT33,), _results(_MAT[3], _VEC[3], _MAT[3]), lambda sig, a: algebra.svd3(a)),
)
svd2 = builtin(
    "svd2",
    "svd2(A): (U, sigma, V) with A = U diag(sigma) V^T for a 2x2 matrix (Warp's closed\n"
    "form; Warp's svd2(A, U, sigma, V) statement works in kernels too).",
    Form((MAT22,), _results(_MAT[2], _VEC[2], _MAT[2]), lambda sig, a: algebra.svd2(a)),
)
qr3 = builtin(
    "qr3",
    "qr3(A): (Q, R) with A = Q R, Q orthogonal, R upper triangular, for a 3x3 matrix\n"
    "(Givens rotations; Warp's qr3(A, Q, R) statement works in kernels too).",
    Form((MAT33,), _results(_MAT[3], _MAT[3]), lambda sig, a: algebra.qr_decomposition(a)),
)
eig3 = builtin(
    "eig3",
    "eig3(A): (Q, d) for a symmetric 3x3 matrix (its lower triangle is read): the\n"
    "eigenvectors as Q's columns, the eigenvalues d = diag(Q^T A Q) (Jacobi; Warp's\n"
    "eig3(A, Q, d) statement works in kernels too).",
    Form((MAT33,), _results(_MAT[3], _VEC[3]), lambda sig, a: algebra.eig3(a)),
)

OUTPUT_FORMS = {svd3: 3, svd2: 3, qr3: 2, eig3: 2, quat_to_axis_angle: 2}
"""The builtins whose Warp statement form ``f(A, out...)`` the kernel rewrite turns into
``out... = f(A)``, with their number of outputs."""


def output_form_assignment(statement, resolve):
    """Warp's statement ``f(A, out...)`` (an ``ast.Expr`` calling a builtin of OUTPUT_FORMS)
    as the assignment ``out... = f(A)``, or None for any other statement.  *resolve* maps
    the call's function node to its object.  The kernel rewrite (kernel_language.py) and
    the adjoint's flattening (autodiff/flatten.py) both read the statement this way."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(call, ast.Call) or call.keywords:
        return None
    try:
        outputs = OUTPUT_FORMS.get(resolve(call.func))
    except TypeError:  # an unhashable callee
        return None
    if outputs is None or len(call.args) != 1 + outputs:
        return None
    targets = []
    for target in call.args[1:]:
        target = copy.deepcopy(target)
        for child in ast.walk(target):
            if hasattr(child, "ctx"):
                child.ctx = ast.Load()
        target.ctx = ast.Store()
        targets.append(target)
    return ast.copy_location(ast.Assign(
        targets=[ast.copy_location(ast.Tuple(elts=targets, ctx=ast.Store()), statement)],
        value=ast.copy_location(ast.Call(func=call.func, args=call.args[:1], keywords=[]),
                                call)), statement)

__all__ = ["svd3", "svd2", "qr3", "eig3"]
