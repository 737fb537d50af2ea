"""Bad uses of value types fail at compile time with messages naming the types."""

import numba
import pytest
from numba.core.errors import TypingError

import numba_sim as sim


def compile_error(fn, *args):
    with pytest.raises(TypingError) as info:
        numba.njit(fn)(*args)
    return str(info.value)


V3, V4 = sim.vec3(1, 2, 3), sim.vec4(1, 2, 3, 4)
M33 = sim.mat33(1, 2, 3, 4, 5, 6, 7, 8, 9)


@pytest.mark.parametrize(
    "fn, args, expected",
    [
        (lambda a, b: a * b, (V3, V3), ["cw_mul", "dot", "vec3"]),
        (lambda a, b: a + b, (V3, V4), ["vec3", "vec4", "same value type"]),
        (lambda a, b: a @ b, (M33, V4), ["mat33", "vec4", "length 3"]),
        (lambda a, b: a / b, (V3, V3), ["cw_div"]),
        (lambda a: a + 1.0, (V3,), ["vec3", "scalar"]),
        (lambda a: sim.vec3(a, a), (1.0,), ["vec3", "3 scalars"]),
        (lambda a: sim.mat22(a, a, a), (1.0,), ["mat22", "4 scalars"]),
        (lambda a, b: sim.mat22(a, b), (sim.vec2(), sim.vec2()), ["matrix_from_rows", "matrix_from_cols"]),
        (lambda a: a[3], (V3,), ["index 3 is out of range", "vec3"]),
        (lambda a: a[1, 3], (M33,), ["index 3 is out of range", "mat33"]),
        (lambda a: a[1, 1], (V3,), ["vec3 takes one index"]),
        (lambda a: sim.cross(a, a), (sim.vec2(),), ["cross", "vec2", "3-vectors"]),
        (lambda a: sim.normalize(a), (sim.vec3i(1, 2, 3),), ["normalize", "vec3i", "integer"]),
        (lambda a, b: sim.dot(a, b), (V3, sim.vec3d()), ["dot", "vec3", "vec3d"]),
        (lambda a: a * 0.5, (sim.vec3i(),), ["vec3i", "integer scalars"]),
        (lambda a: a.w, (V3,), ["vec3", "w"]),
    ],
    ids=lambda x: None if callable(x) else None,
)
def test_compile_time_errors_name_the_types(fn, args, expected):
    message = compile_error(fn, *args)
    for fragment in expected:
        assert fragment in message, (fragment, message)


def test_component_assignment_names_the_alternative():
    def assign(v):
        v[0] = 1.0
        return v

    message = compile_error(assign, V3)
    assert "immutable" in message and "vec3(" in message and "@sim.kernel" in message


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda: V3 * V3, "cw_mul"),
        (lambda: V3 + V4, "same value type"),
        (lambda: sim.vec3(1, 2), "3 scalars"),
        (lambda: sim.cross(sim.vec2(), sim.vec2()), "3-vectors"),
        (lambda: M33 @ V4, "length 3"),
    ],
)
def test_python_errors_match_compiled_ones(call, expected):
    with pytest.raises(TypeError, match=expected):
        call()


def test_python_index_errors():
    with pytest.raises(IndexError, match="out of range"):
        V3[3]
    with pytest.raises(AttributeError, match="no attribute 'w'"):
        V3.w
