"""Bad builtin calls fail at compile time (and in Python) with messages naming the types."""

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_sim as sim
from numba_sim.operations import OPERATIONS
from numba_sim.types import KIND_MAT, ValueSpec
from numba_sim.typing.value_types import ValueType

V2, V3, V3D, V3I, V4 = sim.vec2(), sim.vec3(1, 2, 3), sim.vec3d(), sim.vec3i(1, 2, 3), sim.vec4()
Q, QD, T = sim.quat(0, 0, 0, 1), sim.quatd(0, 0, 0, 1), sim.transform()
M33 = sim.mat33()
M23, M55 = sim.types.matrix((2, 3), np.float32)(), sim.types.matrix((5, 5), np.float32)()
SV, SVD = sim.spatial_vector(), sim.spatial_vectord()

CASES = [
    (lambda v: sim.normalize(v), (V3I,), ["normalize", "vec3i", "integer"]),
    (lambda v: sim.length(v), (V3I,), ["length", "vec3i", "integer"]),
    (lambda a, b: sim.cross(a, b), (V2, V2), ["cross", "vec2", "3-vectors"]),
    (lambda v: sim.determinant(v), (V4,), ["determinant(vec4)", "2x2, 3x3 or 4x4 matrix"]),
    (lambda v: sim.inverse(v), (V3,), ["inverse(vec3)", "2x2, 3x3 or 4x4 matrix"]),
    (lambda m: sim.determinant(m), (M55,), ["determinant(mat55)", "2x2, 3x3 or 4x4 matrix"]),
    (lambda m: sim.trace(m), (M23,), ["trace(mat23)", "square matrix"]),
    (lambda x: sim.sin(x), (3,), ["sin(int64)", "floating-point", "float32(x)"]),
    (lambda v: sim.sqrt(v), (V3,), ["sqrt(vec3)", "sqrt(scalar)"]),
    (lambda x, y: sim.atan2(x, y), (1, 2), ["atan2(int64, int64)", "floating-point"]),
    (lambda q, v: sim.quat_rotate(q, v), (QD, V3), ["quat_rotate(quatd, vec3)", "one scalar type"]),
    (lambda a, b: sim.min(a, b), (V3, V3D), ["min(vec3, vec3d)", "one type"]),
    (lambda a, b: sim.lerp(a, b, a), (V3, V3),
     ["lerp(vec3, vec3, vec3)", "lerp(vector, vector, scalar)"]),
    (lambda a, b: sim.mul(a, b), (V3, V3), ["cw_mul", "dot", "vec3"]),
    (lambda a, b: sim.outer(a, b), (V2, Q), ["outer(vec2, quat)", "outer(vector, vector)"]),
    (lambda a, b: sim.matrix_from_rows(a, b), (V3, V2),
     ["matrix_from_rows(vec3, vec2)", "one type"]),
    (lambda a, b: a @ b, (M23, M23), ["mat23, mat23", "inner dimensions differ (3 and 2)"]),
    (lambda v: sim.spatial_top(v), (V3,), ["spatial_top(vec3)", "spatial_top(spatial_vector)"]),
    (lambda v: sim.spatial_bottom(v), (sim.types.vector(6, np.int32)(),),
     ["spatial_bottom(vec6i)", "floating-point"]),
    (lambda a, b: sim.spatial_dot(a, b), (SV, SVD), ["spatial_dot(spatial_vector, spatial_vectord)",
                                                     "one type"]),
    (lambda t, p: sim.transform_set_translation(t, p), (T, V3),
     ["transform_set_translation(transform, vec3)", "xform.p = p",
      "transform_set_translation_copy(xform, p)"]),
    (lambda t, q: sim.transform_set_rotation(t, q), (T, Q),
     ["transform_set_rotation(transform, quat)", "xform.q = q"]),
    (lambda p, q: sim.transformation(p, q), (V3, QD), ["transformation(vec3, quatd)",
                                                        "one scalar type"]),
    (lambda: sim.quat_identity(dtype=np.int32), (),
     ["quat_identity", "int32", "float32 or float64"]),
    (lambda: sim.quat_identity(dtype=np.float32, n=3), (), ["unexpected keyword argument 'n'"]),
    (lambda a, b: sim.matrix_from_cols(a, b), (V3, V3D),
     ["matrix_from_cols(vec3, vec3d)", "one type"]),
    (lambda q, a: sim.quat_to_axis_angle(q, a, 0.0), (Q, V3),
     ["quat_to_axis_angle(quat, vec3, float64)", "axis, angle = quat_to_axis_angle(q)"]),
    (lambda t, v: sim.transform_point(t, v), (T, V4),
     ["transform_point(transform, vec4)", "transform_point(transform, vec3)",
      "transform_point(mat44, vec3)"]),
    (lambda m: sim.quat_from_matrix(m), (sim.mat22(),),
     ["quat_from_matrix(mat22)", "mat33 or mat44"]),
    (lambda x: sim.isnan(x), (T,), ["isnan(transform)"]),
    (lambda v: sim.abs(v), (Q,), ["abs(quat)", "abs(vector)"]),
    (lambda n: sim.identity(n), (3,), ["identity", "compile-time constant", "int64"]),
    (lambda: sim.identity(0), (), ["identity", "n must be at least 1"]),
    (lambda: sim.quat_identity(np.int32), (), ["quat_identity", "int32", "float32 or float64"]),
    (lambda v: sim.transform_identity(v), (V3,), ["transform_identity", "dtype", "vec3"]),
]


@pytest.mark.parametrize("fn, args, fragments", CASES,
                         ids=[fragments[0].split("(")[0] for _, _, fragments in CASES])
def test_compile_time_errors_name_the_types(fn, args, fragments):
    with pytest.raises(TypingError) as info:
        numba.njit(fn)(*args)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize("call, fragment", [
    (lambda: sim.normalize(V3I), "integer"),
    (lambda: sim.cross(V2, V2), "3-vectors"),
    (lambda: sim.sin(3), "floating-point"),
    (lambda: sim.quat_rotate(QD, V3), "one scalar type"),
    (lambda: sim.determinant(M55), "2x2, 3x3 or 4x4 matrix"),
    (lambda: sim.transform_set_rotation(T, V3), "expected a transform and a quat"),
    (lambda: sim.transform_set_translation(T, sim.vec3d()), "a vec3 of its scalar type"),
    (lambda: sim.quat_identity(dtype=np.int32), "float32 or float64"),
    (lambda: sim.identity(3, dtyp=np.float32), "unexpected keyword argument 'dtyp'"),
    (lambda: sim.quat_to_axis_angle(Q, V3, 0.0), "axis, angle = quat_to_axis_angle(q)"),
])
def test_python_errors_match_compiled_ones(call, fragment):
    with pytest.raises(TypeError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_non_square_matrix_shapes_are_rejected_by_name():
    """determinant and inverse take Warp's 2x2 to 4x4 matrices, trace any square one."""
    mat23 = ValueType(ValueSpec(KIND_MAT, (2, 3), np.dtype(np.float32)))
    for builtin in (sim.determinant, sim.inverse, sim.trace):
        expected = rf"{builtin.__name__}\(mat23\).*(square matrix|3x3 or 4x4 matrix)"
        with pytest.raises(TypingError, match=expected):
            OPERATIONS[builtin].resolve((mat23,))


def test_warps_in_place_transform_setters_update_python_values():
    """Python values are mutable, so Warp's in-place builtins work there (compiled: the errors
    above, naming xform.p = p)."""
    t = sim.transform_identity()
    assert sim.transform_set_translation(t, sim.vec3(1, 2, 3)) is None
    assert list(t) == [1, 2, 3, 0, 0, 0, 1]
    sim.transform_set_rotation(xform=t, q=sim.quat(0, 1, 0, 0))
    assert list(t) == [1, 2, 3, 0, 1, 0, 0]
