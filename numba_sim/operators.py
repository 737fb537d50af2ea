"""Operators and constructors of the value types (Warp's rules), one table.

``+ -`` between values of one type; ``*`` with scalars, ``mat*vec``,
``vec*mat``, ``mat*mat``, ``quat*quat`` (Hamilton), ``transform*transform``;
``@`` for the matrix products; ``/`` by a scalar (and scalar / vector);
unary ``- +``; ``== !=``; ``& | ^ << >>`` and ``~`` on integer vectors and matrices
(componentwise, the scalar formulas of :mod:`numba_sim.kernel_ops`).  ``vec * vec`` is an error naming ``cw_mul`` and
``dot``.  Constructors follow API.md: ``vec3()`` zeros, ``vec3(s)`` fills,
``vec3(x, y, z)``, conversion from another vector of the same length,
``mat33(1, ..., 9)`` by rows, ``quat(xyz, w)``, ``transform(p, q)``,
``spatial_vector(w, v)`` from two vec3; ``transform()`` is all zeros in kernels and the
identity in Python, as in Warp (its kernels and its Python scope differ).  Vectors and matrices of any size and scalar type
(:func:`numba_sim.types.vector`, :func:`numba_sim.types.matrix`) get the same
rules; the constructor of one made on demand is declared when it is made.
"""

import operator

from numba.core import types
from numba.core.typing import signature

from numba_sim import algebra, registry
from numba_sim.lowering import operations as operations_lowering
from numba_sim.kernel_ops import SCALAR_FORMULAS
from numba_sim.operations import (
    PARAMS_ATTRIBUTE, Variant, copy_shape_message, define, fail, is_scalar, is_value, scalar_for,
    value_count_message,
)
from numba_sim.types import CLASSES, KIND_MAT, KIND_QUAT, KIND_TRANSFORM, KIND_VEC, on_new_spec
from numba_sim.typing import operations as operations_typing
from numba_sim.typing.value_types import VALUE_TYPES, ValueType, value_type_of

V, N = ValueType, types.Number
BINARY_PATTERNS = ((V, V), (V, N), (N, V))


def _binary(typer):
    """Adapt a two-argument typer to the variadic typer protocol."""

    def typer_any_arity(*args):
        if len(args) != 2 or not (is_value(args[0]) or is_value(args[1])):
            return None
        return typer(*args)

    return typer_any_arity


def _variant(typer, formula, patterns=BINARY_PATTERNS):
    return [Variant(_binary(typer), formula, pattern) for pattern in patterns]


# --------------------------------------------------------------------------
# + and -


def _same_type_typer(symbol):
    def typer(a, b):
        if is_value(a) and is_value(b):
            if a == b:
                return signature(a, a, b)
            fail(symbol, (a, b), f"both operands of '{symbol}' must have the same value type")
        if is_scalar(a) or is_scalar(b):
            value = a if is_value(a) else b
            fail(symbol, (a, b), f"'{symbol}' between {value} and a scalar is not supported "
                                 f"(Warp's rule); use {value}(s) to broadcast the scalar")
        return None

    return typer


define(operator.add, *_variant(_same_type_typer("+"), lambda sig, a, b: algebra.add(a, b)), name="+")
define(operator.sub, *_variant(_same_type_typer("-"), lambda sig, a, b: algebra.sub(a, b)), name="-")


# --------------------------------------------------------------------------
# * and @


def _scale_typer(a, b):
    if is_value(a) and is_scalar(b):
        return signature(a, a, scalar_for(a, b, "*", (a, b)))
    if is_scalar(a) and is_value(b):
        return signature(b, scalar_for(b, a, "*", (a, b)), b)
    return None


def _scale_formula(sig, a, b):
    return algebra.scale(a, b) if isinstance(sig.args[0], ValueType) else algebra.scale(b, a)


def _same_dtype(name, a, b):
    if a.dtype != b.dtype:
        fail(name, (a, b), f"both operands must have the same scalar type, not {a.dtype} "
                           f"and {b.dtype}; convert one first (e.g. vec3d(v))")


def _mat_vec_typer(name):
    def typer(a, b):
        if not (is_value(a, KIND_MAT) and is_value(b, KIND_VEC)):
            return None
        _same_dtype(name, a, b)
        rows, cols = a.shape
        if cols != b.size:
            fail(name, (a, b), f"a {rows}x{cols} matrix multiplies vectors of length {cols}")
        return signature(value_type_of(KIND_VEC, a.dtype, (rows,)), a, b)

    return typer


def _vec_mat_typer(name):
    def typer(a, b):
        if not (is_value(a, KIND_VEC) and is_value(b, KIND_MAT)):
            return None
        _same_dtype(name, a, b)
        rows, cols = b.shape
        if rows != a.size:
            fail(name, (a, b), f"a vector of length {a.size} multiplies matrices with {a.size} rows")
        return signature(value_type_of(KIND_VEC, a.dtype, (cols,)), a, b)

    return typer


def _mat_mat_typer(name):
    def typer(a, b):
        if not (is_value(a, KIND_MAT) and is_value(b, KIND_MAT)):
            return None
        _same_dtype(name, a, b)
        if a.shape[1] != b.shape[0]:
            fail(name, (a, b), f"inner dimensions differ ({a.shape[1]} and {b.shape[0]})")
        result = value_type_of(KIND_MAT, a.dtype, (a.shape[0], b.shape[1]))
        if result is None:
            fail(name, (a, b), "the product has no matrix type")
        return signature(result, a, b)

    return typer


def _same_kind_product_typer(kind):
    def typer(a, b):
        if is_value(a, kind) and is_value(b, kind):
            _same_dtype("*", a, b)
            return signature(a, a, b)
        return None

    return typer


def _product_error_typer(symbol):
    def typer(a, b):
        if is_value(a, KIND_VEC) and is_value(b, KIND_VEC) and symbol == "*":
            fail(symbol, (a, b), "'*' between two vectors is ambiguous: use cw_mul(a, b) for the "
                                 "componentwise product or dot(a, b) for the dot product")
        if is_value(a) and is_value(b):
            fail(symbol, (a, b), f"'{symbol}' is not defined between {a} and {b}")
        return None

    return typer


def _mat_vec_formula(sig, a, b):
    return algebra.mat_vec(a, b, *sig.args[0].shape)


def _vec_mat_formula(sig, a, b):
    return algebra.vec_mat(a, b, *sig.args[1].shape)


def _mat_mat_formula(sig, a, b):
    rows, inner = sig.args[0].shape
    return algebra.mat_mat(a, b, rows, inner, sig.args[1].shape[1])


_VV = ((V, V),)
define(
    operator.mul,
    *_variant(_scale_typer, _scale_formula, ((V, N), (N, V))),
    *_variant(_mat_vec_typer("*"), _mat_vec_formula, _VV),
    *_variant(_vec_mat_typer("*"), _vec_mat_formula, _VV),
    *_variant(_mat_mat_typer("*"), _mat_mat_formula, _VV),
    *_variant(_same_kind_product_typer(KIND_QUAT), lambda sig, a, b: algebra.quat_mul(a, b), _VV),
    *_variant(_same_kind_product_typer(KIND_TRANSFORM),
              lambda sig, a, b: algebra.transform_mul(a, b), _VV),
    *_variant(_product_error_typer("*"), None, _VV),
    name="*",
)
define(
    operator.matmul,
    *_variant(_mat_vec_typer("@"), _mat_vec_formula, _VV),
    *_variant(_vec_mat_typer("@"), _vec_mat_formula, _VV),
    *_variant(_mat_mat_typer("@"), _mat_mat_formula, _VV),
    *_variant(_product_error_typer("@"), None, _VV),
    name="@",
)


# --------------------------------------------------------------------------
# /


def _div_typer(a, b):
    if is_value(a) and is_scalar(b):
        return signature(a, a, scalar_for(a, b, "/", (a, b)))
    if is_scalar(a) and is_value(b, KIND_VEC, KIND_QUAT, KIND_MAT):
        return signature(b, scalar_for(b, a, "/", (a, b)), b)
    if is_value(a) and is_value(b):
        fail("/", (a, b), "'/' between two values is not defined: use cw_div(a, b) "
                          "for componentwise division")
    return None


def _div_formula(sig, a, b):
    if isinstance(sig.args[0], ValueType):
        return algebra.scale_div(a, b)
    return algebra.rdiv(a, b)


define(operator.truediv, *_variant(_div_typer, _div_formula), name="/")


# --------------------------------------------------------------------------
# unary and comparisons


def _unary_typer(*args):
    if len(args) == 1 and is_value(args[0]):
        return signature(args[0], args[0])
    return None


define(operator.neg, Variant(_unary_typer, lambda sig, a: algebra.neg(a), (V,)), name="-")
define(operator.pos, Variant(_unary_typer, lambda sig, a: a, (V,)), name="+")


def _compare_typer(symbol):
    def typer(a, b):
        if is_value(a) and is_value(b):
            if a != b:
                fail(symbol, (a, b), f"'{symbol}' compares values of the same type only")
            return signature(types.boolean, a, b)
        return None

    return typer


define(operator.eq, *_variant(_compare_typer("=="), lambda sig, a, b: algebra.equal(a, b), _VV),
       name="==")
define(operator.ne, *_variant(_compare_typer("!="), lambda sig, a, b: ~algebra.equal(a, b), _VV),
       name="!=")


# --------------------------------------------------------------------------
# Bitwise operators of integer vectors and matrices (Warp's bit_and ... lshift, invert)


def _integer_values(*args):
    return all(is_value(t, KIND_VEC, KIND_MAT) and isinstance(t.dtype, types.Integer)
               for t in args)


def _bitwise_typer(symbol):
    def typer(a, b):
        if not (is_value(a) and is_value(b)):
            return None
        if a == b and _integer_values(a):
            return signature(a, a, b)
        fail(symbol, (a, b), f"'{symbol}' takes two integer vectors or matrices of one type "
                             f"(Warp's rule)")

    return typer


def _componentwise(name):
    scalar = SCALAR_FORMULAS[name]
    return lambda sig, a, b: [scalar(x, y) for x, y in zip(a, b)]


for _name, _symbol in (("and_", "&"), ("or_", "|"), ("xor", "^"), ("lshift", "<<"),
                       ("rshift", ">>")):
    define(getattr(operator, _name), *_variant(_bitwise_typer(_symbol), _componentwise(_name),
                                                _VV), name=_symbol)


def _mod_typer(a, b):
    """``a % b`` of two vectors: componentwise (Warp's ``mod(vector, vector)``)."""
    if not (is_value(a, KIND_VEC) and is_value(b, KIND_VEC)):
        return None
    if a != b:
        fail("%", (a, b), "'%' takes two vectors of one type (Warp's rule)")
    return signature(a, a, b)


define(operator.mod, *_variant(_mod_typer, _componentwise("mod"), _VV), name="%")


def _invert_typer(*args):
    if len(args) == 1 and _integer_values(args[0]):
        return signature(args[0], args[0])
    return None


define(operator.invert, Variant(_invert_typer, lambda sig, a: [algebra.bit_invert(x) for x in a],
                                (V,)), name="~")


# --------------------------------------------------------------------------
# Constructors


def _flat_arity_message(spec):
    if spec.kind == KIND_MAT:
        return (f"{spec.name}() takes no argument (zeros), one scalar (fill), "
                f"{spec.size} scalars (by rows) or a {spec.shape[0]}x{spec.shape[1]} matrix")
    if spec.kind == KIND_TRANSFORM:
        return (f"{spec.name}() takes no argument (zeros in kernels, the identity in "
                "Python, as Warp), (p: vec3, q: quat), (p: vec3), "
                "7 scalars or a transform")
    extra = ", (xyz: vec3, w)" if spec.kind == KIND_QUAT else ""
    if _takes_two_vec3(spec):
        extra = ", (w: vec3, v: vec3)"
    return (f"{spec.name}() takes no argument (zeros), one scalar (fill), {spec.size} scalars"
            f"{extra} or a {spec.kind} of length {spec.size}")


def _constructor_typer(value_type):
    spec = value_type.spec
    dtype = value_type.dtype

    def typer(*args):
        name = spec.name
        if not args:
            return signature(value_type)
        if all(is_scalar(a) or isinstance(a, types.Boolean) for a in args) \
                and len(args) in (1, spec.size):  # Warp's vectors of bool take bools
            return signature(value_type, *[dtype] * len(args))
        if len(args) == 1 and is_value(args[0], spec.kind) and args[0].shape == spec.shape:
            if spec.kind == KIND_TRANSFORM and args[0].dtype != dtype:
                fail(name, args, f"copy constructing a transform requires matching source and "
                                 f"target dtypes, got `{args[0].dtype}` and `{dtype}`")
            return signature(value_type, args[0])
        if spec.kind == KIND_QUAT and len(args) == 2 and is_value(args[0], KIND_VEC) \
                and args[0].size == 3 and is_scalar(args[1]):
            return signature(value_type, value_type_of(KIND_VEC, dtype, (3,)), dtype)
        if _takes_two_vec3(spec) and len(args) == 2 and all(
                is_value(a, KIND_VEC) and a.size == 3 for a in args):
            if any(a.dtype != dtype for a in args):
                fail(name, args, f"{name}(w, v) takes two vec3 of {dtype}, as in Warp: write "
                                 f"{value_type_of(KIND_VEC, args[0].dtype, (6,))}(w, v) for "
                                 f"these, or convert the vectors first")
            return signature(value_type, *args)
        if spec.kind == KIND_TRANSFORM and len(args) in (1, 2) and is_value(args[0], KIND_VEC) \
                and args[0].size == 3 and (len(args) == 1 or is_value(args[1], KIND_QUAT)):
            # transform(p, q), and Warp's transform(p) (q: the identity rotation)
            return signature(value_type, value_type_of(KIND_VEC, dtype, (3,)),
                             *[value_type_of(KIND_QUAT, dtype, (4,))] * (len(args) - 1))
        if spec.kind == KIND_MAT and args and all(is_value(a, KIND_VEC) for a in args):
            fail(name, args, "matrices are not built from vectors by the constructor: use "
                             "matrix_from_rows(...) or matrix_from_cols(...)")
        if any(not (is_scalar(a) or is_value(a)) for a in args):
            return None
        if spec.kind in (KIND_VEC, KIND_MAT):  # Warp's sentences
            if len(args) == 1 and is_value(args[0], spec.kind):
                fail(name, args, copy_shape_message(spec.kind, spec.shape, args[0].shape))
            if all(is_scalar(a) for a in args):
                fail(name, args, value_count_message(spec.kind, spec.shape, len(args)))
        if spec.kind == KIND_TRANSFORM and all(is_scalar(a) for a in args):  # Warp's sentence
            fail(name, args, f"incompatible number of values given ({len(args)}) when "
                             f"constructing a transform; expected 0, 1, or 7")
        fail(name, args, _flat_arity_message(spec))

    return typer


def _takes_two_vec3(spec):
    """6-vectors of floats (Warp's spatial vectors) are also built from two vec3 (w, v)."""
    return spec.kind == KIND_VEC and spec.shape == (6,) and spec.is_float


def _constructor_formula(sig, *args):
    spec = sig.return_type.spec
    flat = []
    for arg, argtype in zip(args, sig.args):
        flat.extend(arg if isinstance(argtype, ValueType) else [arg])
    if not flat:  # zeros, a transform's too: Warp's kernels (its Python scope: the
        return [0] * spec.size  # identity, types._constructor_args)
    if spec.kind == KIND_TRANSFORM and len(flat) == 3:  # transform(p): identity rotation
        flat = flat + [algebra.zero_like(flat[0])] * 3 + [algebra.one_like(flat[0])]
    flat = [algebra.cast(x, spec.scalar_type) for x in flat]
    return flat * spec.size if len(flat) == 1 else flat


def _define_constructor(spec):
    define(CLASSES[spec], Variant(_constructor_typer(VALUE_TYPES[spec]), _constructor_formula),
           name=spec.name)
    if spec.kind == KIND_TRANSFORM:  # Warp's transform(p=..., q=...), in kernels too
        setattr(CLASSES[spec], PARAMS_ATTRIBUTE, ("p", "q"))


for _spec in list(CLASSES):
    _define_constructor(_spec)


@on_new_spec
def _declare_constructor(spec):
    """A vector or matrix type made on demand: its constructor joins the operation table,
    typed and lowered on both targets (as the table's are at import)."""
    _define_constructor(spec)
    operations_typing.register_operations()
    operations_lowering.register_operations()
    registry.install()
