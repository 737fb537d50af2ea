"""Vector builtins: dot, cross, length, length_sq, normalize, cw_mul, cw_div."""

from numba.core.typing import signature

from numba_sim import algebra
from numba_sim.operations import Variant, define, fail, is_value, make_builtin
from numba_sim.types import KIND_MAT, KIND_QUAT, KIND_VEC


def _two_same(name, kinds, describe):
    def typer(*args):
        if len(args) != 2:
            fail(name, args, f"{name} takes 2 arguments, {len(args)} given")
        a, b = args
        if not (is_value(a, *kinds) and a == b):
            fail(name, args, f"{name} needs two {describe} of the same type")
        return a, b

    return typer


def _one(name, kinds, describe, float_only=False):
    def typer(*args):
        if len(args) != 1 or not is_value(args[0], *kinds):
            fail(name, args, f"{name} takes one {describe}")
        if float_only and not args[0].spec.is_float:
            fail(name, args, f"{name} needs floating-point components; {args[0]} has integer "
                             f"components (convert with e.g. vec3(v))")
        return args[0]

    return typer


def _builtin(name, doc, typer, formula):
    fn = make_builtin(name, doc)
    define(fn, Variant(typer, formula), name=name)
    return fn


_vector_pair = _two_same("dot", (KIND_VEC, KIND_QUAT), "vectors (or quaternions)")
dot = _builtin(
    "dot", "dot(a, b): the dot product of two vectors or quaternions of one type.",
    lambda *args: signature(_vector_pair(*args)[0].dtype, *args),
    lambda sig, a, b: algebra.dot(a, b),
)


def _cross_typer(*args):
    a, _ = _two_same("cross", (KIND_VEC,), "vec3 values")(*args)
    if a.size != 3:
        fail("cross", args, "cross is defined for 3-vectors only")
    return signature(a, *args)


cross = _builtin("cross", "cross(a, b): the cross product of two 3-vectors.",
                 _cross_typer, lambda sig, a, b: algebra.cross(a, b))

_float_vector = _one("length", (KIND_VEC, KIND_QUAT), "floating-point vector", float_only=True)
length = _builtin(
    "length", "length(v): the Euclidean length of a vector or quaternion.",
    lambda *args: signature(_float_vector(*args).dtype, *args),
    lambda sig, a: algebra.length(a),
)
_any_vector = _one("length_sq", (KIND_VEC, KIND_QUAT), "vector")
length_sq = _builtin(
    "length_sq", "length_sq(v): the squared length, dot(v, v).",
    lambda *args: signature(_any_vector(*args).dtype, *args),
    lambda sig, a: algebra.length_sq(a),
)
_normalizable = _one("normalize", (KIND_VEC, KIND_QUAT), "floating-point vector", float_only=True)
normalize = _builtin(
    "normalize", "normalize(v): v / length(v), or the zero vector when the length is 0 (Warp).",
    lambda *args: signature(_normalizable(*args), *args),
    lambda sig, a: algebra.normalize(a),
)

_cw_pair = _two_same("cw_mul", (KIND_VEC, KIND_MAT), "vectors or matrices")
cw_mul = _builtin("cw_mul", "cw_mul(a, b): the componentwise product.",
                  lambda *args: signature(_cw_pair(*args)[0], *args),
                  lambda sig, a, b: algebra.cw_mul(a, b))
_cw_div_pair = _two_same("cw_div", (KIND_VEC, KIND_MAT), "vectors or matrices")
cw_div = _builtin("cw_div", "cw_div(a, b): the componentwise quotient.",
                  lambda *args: signature(_cw_div_pair(*args)[0], *args),
                  lambda sig, a, b: algebra.cw_div(a, b))

__all__ = ["dot", "cross", "length", "length_sq", "normalize", "cw_mul", "cw_div"]
