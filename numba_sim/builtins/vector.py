"""Vector builtins: dot, cross, length, length_sq, normalize, cw_mul, cw_div.

Quaternions take dot, length, length_sq and normalize (floating-point only, as
in Warp); ``normalize`` of a zero quaternion is the identity quaternion, of a
zero vector the zero vector (Warp's rules).
"""

import numpy as np
from numba.core import types
from numba.core.typing import signature

from numba_sim import algebra
from numba_sim.builtins.forms import (
    MATRIX, QUAT, VEC3, VECTOR, Form, builtin, common_scalar, dtype_argument, keyword_builtin,
    missing_type, same_type, scalar_result,
)
from numba_sim.operations import (
    copy_shape_message, fail, is_scalar, is_value, value_count_message,
)
from numba_sim.types import KIND_VEC
from numba_sim.typing.value_types import value_type_of

dot = builtin(
    "dot", "dot(a, b): the dot product of two vectors (or quaternions) of one type.",
    Form((VECTOR, VECTOR), scalar_result, lambda sig, a, b: algebra.dot(a, b),
         floats_only=False, same_values=True),
    Form((QUAT, QUAT), scalar_result, lambda sig, a, b: algebra.dot(a, b), same_values=True),
)

cross = builtin(
    "cross", "cross(a, b): the cross product of two 3-vectors.",
    Form((VEC3, VEC3), same_type, lambda sig, a, b: algebra.cross(a, b),
         floats_only=False, same_values=True),
    hint="cross is defined for 3-vectors only",
)

length = builtin(
    "length", "length(v): the Euclidean length of a floating-point vector or quaternion.",
    Form((VECTOR,), scalar_result, lambda sig, a: algebra.length(a)),
    Form((QUAT,), scalar_result, lambda sig, a: algebra.length(a)),
)

length_sq = builtin(
    "length_sq", "length_sq(v): the squared length, dot(v, v).",
    Form((VECTOR,), scalar_result, lambda sig, a: algebra.length_sq(a), floats_only=False),
    Form((QUAT,), scalar_result, lambda sig, a: algebra.length_sq(a)),
)

normalize = builtin(
    "normalize",
    "normalize(v): v / length(v); the zero vector when the length is 0 (Warp).\n\n"
    "For a quaternion: q * (1 / length(q)), or the identity quaternion when the length is 0.",
    Form((VECTOR,), same_type, lambda sig, a: algebra.normalize(a)),
    Form((QUAT,), same_type, lambda sig, a: algebra.quat_normalize(a)),
)

cw_mul = builtin(
    "cw_mul", "cw_mul(a, b): the componentwise product of two vectors or matrices of one type.",
    Form((VECTOR, VECTOR), same_type, lambda sig, a, b: algebra.cw_mul(a, b),
         floats_only=False, same_values=True),
    Form((MATRIX, MATRIX), same_type, lambda sig, a, b: algebra.cw_mul(a, b),
         floats_only=False, same_values=True),
)

cw_div = builtin(
    "cw_div",
    "cw_div(a, b): the componentwise quotient of two vectors or matrices of one type\n"
    "(integer components divide as in C, truncating toward zero).",
    Form((VECTOR, VECTOR), same_type, lambda sig, a, b: algebra.cw_div(a, b),
         floats_only=False, same_values=True),
    Form((MATRIX, MATRIX), same_type, lambda sig, a, b: algebra.cw_div(a, b),
         floats_only=False, same_values=True),
)



# --------------------------------------------------------------------------
# vector(...) and matrix(...): Warp's constructors of any size, in kernels


def shown(args):
    """Argument types as messages name them (``int64``, not ``Literal[int](3)``)."""
    return tuple(types.unliteral(a) for a in args)


def keyword_dtype(name, args, kws):
    """The scalar type of the ``dtype=`` keyword (None when absent)."""
    if "dtype" not in kws:
        return None
    dtype = dtype_argument(kws["dtype"])
    if dtype is None:
        fail(name, shown(args), f"dtype must be a scalar type such as float32, float64 or "
                                f"float, not {kws['dtype']}")
    return dtype


def constant_size(name, args, value, describe):
    """A positive compile-time int (a literal) given for *describe*."""
    if not isinstance(value, types.IntegerLiteral):
        fail(name, shown(args), f"{describe} must be a compile-time constant int (a literal "
                                f"such as 5), not {value}")
    if value.literal_value < 1:
        fail(name, shown(args), f"{describe} must be at least 1, not {value.literal_value}")
    return value.literal_value


def values_signature(name, kind, args, shape, dtype, result_name):
    """The signature of a constructor call of *kind* from scalars or one value ``args``:
    ``()`` zeros, one scalar fills, ``size`` scalars by rows, one value converts.
    *shape* / *dtype*: from the keywords, or None to take them from the arguments."""
    if len(args) == 1 and is_value(args[0], kind):
        if shape is not None and args[0].shape != shape:
            fail(name, shown(args), copy_shape_message(kind, shape, args[0].shape))
        shape, dtype = args[0].shape, dtype or args[0].dtype
    elif args and all(isinstance(a, types.Boolean) for a in args):  # Warp's vectors of bool
        dtype = dtype or types.boolean
    elif args and not all(is_scalar(a) for a in args):
        fail(name, shown(args), f"{name}() takes scalars or bools (or one {result_name} to "
                                f"convert), not "
                                f"{', '.join(str(a) for a in shown(args) if not is_scalar(a))}")
    elif args:  # integer constants are int32 (Warp's rule)
        scalars = [types.int32 if isinstance(a, types.IntegerLiteral) else types.unliteral(a)
                   for a in args]
        if dtype is None and len(set(scalars)) > 1:  # Warp's rule and words
            fail(name, shown(args), f"all values given when constructing a {result_name} must "
                                    f"have the same type")
        dtype = dtype or common_scalar(name, scalars, False)
    else:
        dtype = dtype or types.float32
    if shape is None:  # Warp's sentences
        keyword, what = ("`length`", "vector") if kind == KIND_VEC else ("`shape`", "matrix")
        how = ("zero-initializing a" if not args else "filling a" if len(args) == 1
               else "initializing a")
        fail(name, shown(args), f"the {keyword} argument must be specified when {how} {what}"
                                f"{' with a value' if len(args) == 1 else ''}"
                                f"{' by value' if len(args) > 1 else ''}")
    size = shape[0] if kind == KIND_VEC else shape[0] * shape[1]
    if len(args) not in (0, 1, size):
        fail(name, shown(args), value_count_message(kind, shape, len(args)))
    result = value_type_of(kind, dtype, shape)
    if result is None:
        fail(name, shown(args), missing_type(kind, dtype, shape))
    coerced = [types.unliteral(a) if is_value(a) else result.dtype for a in args]
    return signature(result, *coerced)


def values_formula(sig, *args):
    """Zeros, a fill, the scalars converted, or a value's components converted."""
    spec = sig.return_type.spec
    if not args:
        return [0] * spec.size
    flat = list(args[0]) if is_value(sig.args[0]) else list(args)
    flat = [algebra.cast(x, spec.scalar_type) for x in flat]
    return flat * spec.size if len(flat) == 1 else flat


def _vector_typer(args, kws):
    length = kws.get("length")
    if length is not None:
        length = (constant_size("vector", args, length, "length"),)
    elif len(args) > 1:
        length = (len(args),)
    return values_signature("vector", KIND_VEC, args, length,
                            keyword_dtype("vector", args, kws), "vector")


vector = keyword_builtin(
    "vector",
    "vector(*values, length=None, dtype=None): Warp's vector of any length, in kernels:\n"
    "vector(length=n, dtype=float32) zeros, vector(s, length=n) fills, vector(a, b, c, ...)\n"
    "(length and dtype from the values), vector(v) converts. length is a compile-time\n"
    "constant. The type itself, for annotations and arrays: sim.types.vector(length, dtype).",
    ("length", "dtype"), _vector_typer, values_formula,
)



def _arg_extremum(better):
    """Warp's argmin / argmax: the index (uint32) of the first extreme component, NaN
    components skipped (0 when all are NaN)."""
    def formula(sig, a):
        index = algebra.cast(algebra.zero_like(a[0]), np.uint32)
        best, best_index = a[0], index
        for k, x in enumerate(a[1:], start=1):
            take = ~algebra.is_nan(x) & (algebra.is_nan(best) | better(x, best))
            best = algebra.select(take, x, best)
            best_index = algebra.select(take, index + k, best_index)
        return best_index

    return formula


argmin = builtin(
    "argmin", "argmin(v): the index (uint32) of the smallest component of a vector (the first\n"
    "one on ties); NaN components are skipped, 0 when all are NaN.",
    Form((VECTOR,), lambda dtype, argtypes: types.uint32,
         _arg_extremum(lambda x, best: x < best), floats_only=False),
)
argmax = builtin(
    "argmax", "argmax(v): the index (uint32) of the largest component of a vector (the first\n"
    "one on ties); NaN components are skipped, 0 when all are NaN.",
    Form((VECTOR,), lambda dtype, argtypes: types.uint32,
         _arg_extremum(lambda x, best: x > best), floats_only=False),
)

__all__ = ["dot", "cross", "length", "length_sq", "normalize", "cw_mul", "cw_div", "vector",
           "argmin", "argmax"]
