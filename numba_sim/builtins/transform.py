"""Transform builtins: a transform is (p: vec3, q: quat), mapping x to p + q x q^-1
(Warp's formulas from warp/native/spatial.h).

``transform_point`` / ``transform_vector`` also take a mat44 (Warp's forms:
``(m @ (x, 1))[:3]`` and ``(m @ (x, 0))[:3]``, no perspective divide).
``transform_identity(dtype=float32)`` takes a scalar type (also by keyword).

``transformation(p, q)`` is Warp's newer way to build a transform (``transformation(p)``:
identity rotation; ``transformation(t)``: a copy; ``transformation()``: all zeros, as
Warp's kernels give; or 1 or 7 scalars).  Warp's ``transform_set_translation(xform, p)`` and
``transform_set_rotation(xform, q)`` change ``xform`` in place: in Python (whose values are
mutable) they do; compiled values cannot, so there they are errors naming ``xform.p = p``
(kernel language) and the value-returning ``transform_set_translation_copy`` /
``transform_set_rotation_copy``.
``position, rotation, scale = transform_decompose(m)`` returns Warp's tuple.
"""

from numba.core import types

from numba_sim import algebra
from numba_sim.builtins.forms import (
    MAT44, QUAT, SCALAR, TRANSFORM, VEC3, Form, builtin, constant_builtin, custom_builtin,
    dtype_only_typer, same_type, value_result,
)
from numba_sim.operations import fail
from numba_sim.types import KIND_MAT, KIND_QUAT, KIND_TRANSFORM, KIND_VEC
from numba_sim.typing.value_types import value_type_of

_VEC3_RESULT = value_result(KIND_VEC, (3,))
_TRANSFORM_RESULT = value_result(KIND_TRANSFORM, (7,))
_MAT44_RESULT = value_result(KIND_MAT, (4, 4))


transform_identity = constant_builtin(
    "transform_identity",
    "transform_identity(dtype=float32): the identity transform (p = 0, q = (0, 0, 0, 1)).",
    dtype_only_typer("transform_identity", KIND_TRANSFORM, (7,), "transform"),
    lambda sig: algebra.transform_identity(sig.return_type.spec.scalar_type),
)

transform_point = builtin(
    "transform_point",
    "transform_point(xform, point): the point moved by xform (rotated, then translated);\n"
    "transform_point(mat, point): (mat @ (point, 1))[:3] for a mat44 mat.",
    Form((TRANSFORM, VEC3), _VEC3_RESULT, lambda sig, t, p: algebra.transform_point(t, p)),
    Form((MAT44, VEC3), _VEC3_RESULT,
         lambda sig, m, p: algebra.matrix_transform_point(m, p, algebra.one_like(p[0]))),
)

transform_vector = builtin(
    "transform_vector",
    "transform_vector(xform, vec): the direction vec rotated by xform (no translation);\n"
    "transform_vector(mat, vec): (mat @ (vec, 0))[:3] for a mat44 mat.",
    Form((TRANSFORM, VEC3), _VEC3_RESULT, lambda sig, t, v: algebra.transform_vector(t, v)),
    Form((MAT44, VEC3), _VEC3_RESULT,
         lambda sig, m, v: algebra.matrix_transform_point(m, v, algebra.zero_like(v[0]))),
)

transform_multiply = builtin(
    "transform_multiply",
    "transform_multiply(a, b): the transform applying b, then a (the same as a * b).",
    Form((TRANSFORM, TRANSFORM), same_type, lambda sig, a, b: algebra.transform_mul(a, b)),
)

transform_inverse = builtin(
    "transform_inverse", "transform_inverse(t): the transform undoing t.",
    Form((TRANSFORM,), same_type, lambda sig, t: algebra.transform_inverse(t)),
)

transform_get_translation = builtin(
    "transform_get_translation", "transform_get_translation(t): t.p.",
    Form((TRANSFORM,), _VEC3_RESULT, lambda sig, t: t[0:3]),
)

transform_get_rotation = builtin(
    "transform_get_rotation", "transform_get_rotation(t): t.q, as stored (not normalized).",
    Form((TRANSFORM,), value_result(KIND_QUAT, (4,)), lambda sig, t: t[3:7]),
)



# --------------------------------------------------------------------------
# transformation(...): Warp's builder of transforms


class _NoArguments:
    """``transformation()``: the zero transform of float32 (Warp's kernels' rule)."""

    def usage(self, name):
        return f"{name}()"

    def typer(self, name):
        def typer(*args):
            if args:
                return None
            return value_type_of(KIND_TRANSFORM, types.float32, (7,))()

        return typer

    @staticmethod
    def formula(sig):
        return [0.0] * 7


def _with_identity_rotation(sig, p):
    zero, one = algebra.zero_like(p[0]), algebra.one_like(p[0])
    return list(p) + [zero, zero, zero, one]


transformation = builtin(
    "transformation",
    "transformation(p, q): the transform of translation p (vec3) and rotation q (quat, not\n"
    "normalized), of their scalar type; transformation(p): with the identity rotation;\n"
    "transformation(7 scalars) or (1 scalar, filling); transformation(t): a copy of the\n"
    "transform t; transformation(): all zeros (Warp).",
    Form((VEC3, QUAT), _TRANSFORM_RESULT, lambda sig, p, q: list(p) + list(q)),
    Form((TRANSFORM,), same_type, lambda sig, t: list(t)),
    Form((VEC3,), _TRANSFORM_RESULT, _with_identity_rotation),
    Form((SCALAR,) * 7, _TRANSFORM_RESULT,
         lambda sig, *xs: [algebra.cast(x, sig.return_type.spec.scalar_type) for x in xs]),
    Form((SCALAR,), _TRANSFORM_RESULT, lambda sig, x: [x] * 7),
    _NoArguments(),
)


# --------------------------------------------------------------------------
# translation and rotation parts


def _in_place_typer(name, part, copy_name):
    def typer(*args):
        fail(name, args, f"Warp's {name}(xform, {part}) changes xform in place, which values "
                         f"cannot do here: write xform.{part} = {part} (in a @sim.kernel or "
                         f"@sim.func), or xform = {copy_name}(xform, {part})")

    return typer


def _in_place_python(name, part, kind):
    """Python scope: Warp's in-place update of a (mutable) Python transform."""
    def python(xform, value):
        spec = getattr(xform, "spec", None)
        value_spec = getattr(value, "spec", None)
        if spec is None or spec.kind != KIND_TRANSFORM or value_spec is None \
                or value_spec.kind != kind or value_spec.dtype != spec.dtype \
                or value_spec.size != (3 if kind == KIND_VEC else 4):
            wanted = "vec3" if kind == KIND_VEC else "quat"
            raise TypeError(f"{name}(xform, {part}): expected a transform and a {wanted} of its "
                            f"scalar type, got {type(xform).__name__} and {type(value).__name__}")
        setattr(xform, part, value)

    return python


transform_set_translation = custom_builtin(
    "transform_set_translation",
    "transform_set_translation(xform, p): Warp's in-place update; in Python it sets xform.p;\n"
    "compiled, an error naming xform.p = p and transform_set_translation_copy.",
    _in_place_typer("transform_set_translation", "p", "transform_set_translation_copy"), None,
    python=_in_place_python("transform_set_translation", "p", KIND_VEC),
)

transform_set_rotation = custom_builtin(
    "transform_set_rotation",
    "transform_set_rotation(xform, q): Warp's in-place update; in Python it sets xform.q;\n"
    "compiled, an error naming xform.q = q and transform_set_rotation_copy.",
    _in_place_typer("transform_set_rotation", "q", "transform_set_rotation_copy"), None,
    python=_in_place_python("transform_set_rotation", "q", KIND_QUAT),
)

transform_set_translation_copy = builtin(
    "transform_set_translation_copy",
    "transform_set_translation_copy(xform, p): xform with its translation replaced by p.",
    Form((TRANSFORM, VEC3), same_type, lambda sig, t, p: list(p) + list(t[3:7])),
)

transform_set_rotation_copy = builtin(
    "transform_set_rotation_copy",
    "transform_set_rotation_copy(xform, q): xform with its rotation replaced by q.",
    Form((TRANSFORM, QUAT), same_type, lambda sig, t, q: list(t[0:3]) + list(q)),
)


# --------------------------------------------------------------------------
# transforms and 4x4 matrices (Warp's helpers of warp/_src/math.py)

transform_to_matrix = builtin(
    "transform_to_matrix",
    "transform_to_matrix(xform): the 4x4 matrix [[R(q), p], [0, 0, 0, 1]] of xform = (p, q).",
    Form((TRANSFORM,), _MAT44_RESULT, lambda sig, t: algebra.transform_to_matrix(t)),
)

transform_from_matrix = builtin(
    "transform_from_matrix",
    "transform_from_matrix(m): the transform of a 4x4 rigid matrix: p from the last column,\n"
    "q = quat_from_matrix(m).",
    Form((MAT44,), _TRANSFORM_RESULT, lambda sig, m: algebra.transform_from_matrix(m)),
)

transform_compose = builtin(
    "transform_compose",
    "transform_compose(position, rotation, scale): the 4x4 matrix\n"
    "[[R(rotation) diag(scale), position], [0, 0, 0, 1]].",
    Form((VEC3, QUAT, VEC3), _MAT44_RESULT,
         lambda sig, p, q, s: algebra.transform_compose(p, q, s)),
)


def _decompose_result(dtype, argtypes):
    vec3 = value_type_of(KIND_VEC, dtype, (3,))
    return types.Tuple((vec3, value_type_of(KIND_QUAT, dtype, (4,)), vec3))


transform_decompose = builtin(
    "transform_decompose",
    "position, rotation, scale = transform_decompose(m): the inverse of transform_compose for\n"
    "a 4x4 matrix (scale: the lengths of the columns of the 3x3 block).",
    Form((MAT44,), _decompose_result, lambda sig, m: algebra.transform_decompose(m)),
)

__all__ = ["transform_identity", "transform_point", "transform_vector", "transform_multiply",
           "transform_inverse", "transform_get_translation", "transform_get_rotation",
           "transformation", "transform_set_translation", "transform_set_rotation",
           "transform_set_translation_copy", "transform_set_rotation_copy", "transform_to_matrix",
           "transform_from_matrix", "transform_compose", "transform_decompose"]
