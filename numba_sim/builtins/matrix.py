"""Matrix builtins: outer, transpose, determinant, inverse, trace, diag, identity,
skew, mul, matrix_from_rows, matrix_from_cols.

``determinant`` and ``inverse`` use Warp's closed forms (2x2, 3x3, and USD's
4x4 cofactors with their double intermediates), so they round as Warp does;
``inverse`` of a matrix Warp considers singular is the zero matrix, as in Warp.

``identity(n, dtype=float32)``: *n* must be a compile-time constant (a literal,
as Warp requires); *dtype* is a scalar type (``sim.float32``, ``np.float64``,
``numba.float32``, a NumPy dtype, or Python's ``float`` meaning float32).
``dtype`` may be given by keyword, as in Warp: ``identity(3, dtype=float64)``.
"""

import operator

from numba.core import types
from numba.core.typing import signature

from numba_sim import algebra
from numba_sim.builtins.forms import (
    MATRIX, SMALL_SQUARE_MATRIX, SQUARE_MATRIX, VEC3, VECTOR, Form, builtin, common_scalar,
    constant_builtin, constant_dtype, constant_int, custom_builtin, keyword_builtin, missing_type,
    same_type, scalar_result, value_result,
)
from numba_sim.builtins.vector import (
    constant_size, keyword_dtype, shown, values_formula, values_signature,
)
from numba_sim.kernel_ops import SCALAR_FORMULAS
from numba_sim.operations import OPERATIONS, fail, is_scalar, is_value
from numba_sim.types import KIND_MAT, KIND_VEC
from numba_sim.typing.value_types import value_type_of


def _matrix_result(rows_of, cols_of):
    def result(dtype, argtypes):
        shape = (rows_of(argtypes), cols_of(argtypes))
        return value_type_of(KIND_MAT, dtype, shape) or missing_type(KIND_MAT, dtype, shape)

    return result


def _square(sig):
    return sig.args[0].shape[0]


outer = builtin(
    "outer", "outer(a, b): the outer product a b^T of two vectors (a matrix).",
    Form((VECTOR, VECTOR), _matrix_result(lambda a: a[0].size, lambda a: a[1].size),
         lambda sig, a, b: algebra.outer(a, b), floats_only=False),
)

transpose = builtin(
    "transpose", "transpose(m): the transposed matrix.",
    Form((MATRIX,), _matrix_result(lambda a: a[0].shape[1], lambda a: a[0].shape[0]),
         lambda sig, a: algebra.transpose(a, *sig.args[0].shape), floats_only=False),
)

determinant = builtin(
    "determinant", "determinant(m): the determinant of a 2x2, 3x3 or 4x4 float matrix.",
    Form((SMALL_SQUARE_MATRIX,), scalar_result,
         lambda sig, a: algebra.determinant(a, _square(sig))),
    hint="determinant takes a 2x2, 3x3 or 4x4 matrix (Warp's)",
)

inverse = builtin(
    "inverse",
    "inverse(m): the inverse of a 2x2, 3x3 or 4x4 float matrix; the zero matrix when the\n"
    "determinant is zero (Warp's rule). Ill-conditioned matrices lose accuracy in proportion\n"
    "to their condition number.",
    Form((SMALL_SQUARE_MATRIX,), same_type, lambda sig, a: algebra.inverse(a, _square(sig))),
    hint="inverse takes a 2x2, 3x3 or 4x4 matrix (Warp's)",
)

inverse_approx = builtin(
    "inverse_approx",
    "inverse_approx(m): Warp's approximate inverse of a 2x2, 3x3 or 4x4 float matrix (the GPU's\n"
    "approximate division in Warp's CUDA code); here the same as inverse() on both targets, as\n"
    "Warp's CPU code is.",
    Form((SMALL_SQUARE_MATRIX,), same_type, lambda sig, a: algebra.inverse(a, _square(sig))),
    hint="inverse_approx takes a 2x2, 3x3 or 4x4 matrix (Warp's)",
)

trace = builtin(
    "trace", "trace(m): the sum of the diagonal of a square matrix.",
    Form((SQUARE_MATRIX,), scalar_result, lambda sig, a: algebra.trace(a, _square(sig)),
         floats_only=False),
    hint="trace takes a square matrix",
)

diag = builtin(
    "diag", "diag(v): the square matrix with the components of v on its diagonal.",
    Form((VECTOR,), _matrix_result(lambda a: a[0].size, lambda a: a[0].size),
         lambda sig, v: algebra.diagonal_matrix(v), floats_only=False),
)

skew = builtin(
    "skew", "skew(v): the 3x3 skew-symmetric matrix with skew(v) @ u == cross(v, u).",
    Form((VEC3,), value_result(KIND_MAT, (3, 3)), lambda sig, v: algebra.skew(v),
         floats_only=False),
)


def _vectors_typer(name, by_rows):
    def typer(*args):
        if not args or not all(is_value(a, KIND_VEC) for a in args):
            fail(name, args, f"{name} takes vectors of one type")
        if any(a != args[0] for a in args):
            fail(name, args, f"{name} needs vectors of one type")
        count, size = len(args), args[0].size
        shape = (count, size) if by_rows else (size, count)
        result = value_type_of(KIND_MAT, args[0].dtype, shape)
        if result is None:
            fail(name, args, missing_type(KIND_MAT, args[0].dtype, shape))
        return signature(result, *args)

    return typer


def _vectors_builtin(name, by_rows, formula):
    what = "row" if by_rows else "column"
    return custom_builtin(name, f"{name}(v0, v1, ...): the matrix with each vector as a {what}.",
                          _vectors_typer(name, by_rows), lambda sig, *vectors: formula(vectors))


matrix_from_rows = _vectors_builtin("matrix_from_rows", True, algebra.matrix_from_rows)
matrix_from_cols = _vectors_builtin("matrix_from_cols", False, algebra.matrix_from_cols)


# --------------------------------------------------------------------------
# mul, add, sub: Warp's function forms of * + -, computed by the operators' own formulas


def _function_form(name, op, symbol):
    """The builtin *name*(a, b): ``a <symbol> b`` as the operator computes it (the kernel
    operator's scalar formula for two scalars, the value operator's formula otherwise)."""
    scalar = SCALAR_FORMULAS[name]

    def operands(argtypes):
        return OPERATIONS[op].resolve(argtypes)

    def typer(*args):  # int literals as literals (the scalar rule's), others plain
        args = tuple(a if isinstance(a, types.IntegerLiteral) else types.unliteral(a)
                     for a in args)
        if len(args) == 2 and all(is_scalar(a) for a in args):
            dtype = common_scalar(name, args, floats_only=False)
            return signature(dtype, dtype, dtype)
        sig = operands(args)[0] if len(args) == 2 else None
        if sig is None:
            fail(name, args, f"{name}(a, b) takes two scalars, or the operands of '{symbol}' (a "
                             f"scalar, vector, matrix, quaternion or transform)")
        return sig

    def formula(sig, a, b):
        if not any(is_value(t) for t in sig.args):
            return scalar(a, b)
        return operands(sig.args)[1].formula(sig, a, b)

    return custom_builtin(
        name, f"{name}(a, b): a {symbol} b, as the operator computes it (Warp's function form "
              f"of '{symbol}').", typer, formula, literal_args=True)


mul = _function_form("mul", operator.mul, "*")
add = _function_form("add", operator.add, "+")
sub = _function_form("sub", operator.sub, "-")


# --------------------------------------------------------------------------
# identity


def _identity_typer(*args):
    if not 1 <= len(args) <= 2:
        fail("identity", args, "identity takes (n, dtype=float32)")
    n = constant_int("identity", args, 0, "n")
    if n < 1:
        fail("identity", args, f"n must be at least 1, not {n}")
    dtype = constant_dtype("identity", args, 1)
    result = value_type_of(KIND_MAT, dtype, (n, n))
    if result is None:
        fail("identity", args, missing_type(KIND_MAT, dtype, (n, n)))
    return signature(result, *args)


identity = constant_builtin(
    "identity",
    "identity(n, dtype=float32): the n x n identity matrix; n is a compile-time constant.",
    _identity_typer,
    lambda sig: algebra.identity_matrix(sig.return_type.shape[0], sig.return_type.spec.scalar_type),
    params=("n", "dtype"),
)



# --------------------------------------------------------------------------
# matrix(...): Warp's constructor of any shape, in kernels


def _matrix_typer(args, kws):
    shape = kws.get("shape")
    if shape is not None:
        if not isinstance(shape, types.BaseTuple) or len(shape) != 2:
            fail("matrix", shown(args), f"shape must be a (rows, cols) tuple of compile-time "
                                        f"constant ints, not {shape}")
        shape = tuple(constant_size("matrix", args, n, f"shape[{i}]") for i, n in enumerate(shape))
    if args and all(is_value(a, KIND_VEC) for a in args):
        fail("matrix", shown(args), "matrices are not built from vectors here: use "
                                    "matrix_from_rows(...) or matrix_from_cols(...)")
    return values_signature("matrix", KIND_MAT, args, shape, keyword_dtype("matrix", args, kws),
                            "matrix")


matrix = keyword_builtin(
    "matrix",
    "matrix(*values, shape=None, dtype=None): Warp's matrix of any shape, in kernels:\n"
    "matrix(shape=(r, c), dtype=float32) zeros, matrix(s, shape=(r, c)) fills,\n"
    "matrix(a, b, ..., shape=(r, c)) by rows, matrix(m) converts. shape is a compile-time\n"
    "constant. The type itself, for annotations and arrays: sim.types.matrix(shape, dtype).",
    ("shape", "dtype"), _matrix_typer, values_formula,
)



def _ddot(sig, a, b):
    result = algebra.zero_like(a[0])
    for x, y in zip(a, b):
        result = algebra.muladd(x, y, result)
    return result


ddot = builtin(
    "ddot", "ddot(a, b): the double dot product of two matrices of one type: the sum of\n"
    "a[i, j] * b[i, j] (row by row, each step a fused multiply-add, as Warp's muladd).",
    Form((MATRIX, MATRIX), scalar_result, _ddot, floats_only=False, same_values=True),
)

__all__ = ["add", "sub", "ddot", "outer", "transpose", "determinant", "inverse", "inverse_approx", "trace", "diag", "identity", "skew",
           "mul", "matrix_from_rows", "matrix_from_cols", "matrix"]
