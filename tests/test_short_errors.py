"""A kernel that does not type-check says so in a few lines: kernel, file:line, expression, message."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_sim as sim
from numba_sim.errors import KernelTypingError


@sim.func
def reads_a_missing_attribute(a: sim.vec3):
    return a.foo


@sim.kernel
def vec_times_vec(x: sim.array(dtype=sim.vec3), y: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    y[i] = x[i] * x[i]


@sim.kernel
def attribute_in_a_func(x: sim.array(dtype=sim.vec3), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i] = reads_a_missing_attribute(x[i])


@sim.kernel
def unknown_name(x: sim.array(dtype=sim.vec3), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i] = no_such_helper(x[i])  # noqa: F821


@sim.kernel
def dot_of_one(x: sim.array(dtype=sim.vec3), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i] = sim.dot(x[i])


@sim.kernel
def vec_into_floats(x: sim.array(dtype=sim.vec3), y: sim.array(dtype=float)):
    i = sim.tid()
    y[i] = x[i]


VECS = np.zeros((4, 3), np.float32)
FLOATS = np.zeros(4, np.float32)
CASES = [
    (vec_times_vec, [VECS, VECS], "use cw_mul(a, b)", "y[i] = x[i] * x[i]", "vec_times_vec"),
    (attribute_in_a_func, [VECS, FLOATS], "Unknown attribute 'foo' of type vec3", "return a.foo",
     "reads_a_missing_attribute"),
    (unknown_name, [VECS, FLOATS], "name 'no_such_helper' is not defined",
     "y[i] = no_such_helper(x[i])", "unknown_name"),
    (dot_of_one, [VECS, FLOATS], "dot(vec3): expected dot(vector, vector)",
     "y[i] = sim.dot(x[i])", "dot_of_one"),
    (vec_into_floats, [VECS, FLOATS], "cannot store a vec3 into an element of array(float32",
     "y[i] = x[i]", "vec_into_floats"),
]


def _line_of(expression):
    with open(__file__) as f:
        return next(n for n, line in enumerate(f, 1)
                    if line.split("#")[0].strip() == expression)


@pytest.mark.parametrize("kernel, inputs, message, expression, function", CASES,
                         ids=[case[0].__name__ for case in CASES])
def test_typing_error_is_short_and_points_at_the_expression(kernel, inputs, message, expression,
                                                             function):
    with pytest.raises(KernelTypingError) as info:
        sim.launch(kernel, dim=4, inputs=inputs)
    text = str(info.value)
    assert len(text.splitlines()) <= 8, text
    # as in a Python traceback: the place first, the message last (Warp's tests anchor it with $)
    assert text.splitlines()[-1].startswith(f"kernel {kernel.__name__}: ")
    assert message in text.splitlines()[-1]
    assert text.startswith('File "')
    assert any("numba_message" in note for note in info.value.__notes__)
    assert f'File "{__file__}", line {_line_of(expression)}, in {function}' in text
    assert expression in text
    assert "candidate implementations" not in text and "Overload" not in text
    # still a Numba TypingError, with Numba's own text kept
    assert isinstance(info.value, TypingError)
    assert "nopython" in info.value.numba_message
    assert info.value.lineno == _line_of(expression)


def test_compile_and_inspect_say_it_as_briefly():
    with pytest.raises(KernelTypingError, match="use cw_mul"):
        vec_times_vec.inspect("cpu", "llvm", [VECS, VECS])


def test_inspect_with_an_unknown_kind_says_bad_kind_on_every_device_before_compiling():
    for device in ("cpu", "cuda"):
        with pytest.raises(ValueError, match="bad kind 'sass'"):
            vec_times_vec.inspect(device, "sass", [VECS, VECS])


def test_verbose_errors_keep_numbas_full_message(tmp_path):
    script = tmp_path / "verbose.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import numba_sim as sim

        @sim.kernel
        def k(x: sim.array(dtype=sim.vec3)):
            i = sim.tid()
            x[i] = x[i] * x[i]

        sim.launch(k, dim=1, inputs=[np.zeros((1, 3), np.float32)])
    """))
    for verbose, expected in (("1", "candidate implementations"), ("0", "kernel k: ")):
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                timeout=300,
                                env=dict(os.environ, NUMBA_SIM_VERBOSE_ERRORS=verbose))
        assert result.returncode != 0 and expected in result.stderr, result.stderr[-2000:]


@sim.kernel
def unpacks_two_indices(x: sim.array(dtype=float)):
    i, j = sim.tid()
    x[i] = float(j)


def test_unpacking_more_indices_than_the_launch_has_says_so_in_words():
    with pytest.raises(KernelTypingError) as info:
        sim.launch(unpacks_two_indices, dim=4, inputs=[FLOATS.copy()])
    assert "sim.tid() is unpacked into 2 indices but the launch has 1 dimension" in str(info.value)
    assert "i, j = sim.tid()" in str(info.value)
    values = np.zeros(4, np.float32)
    sim.launch(unpacks_two_indices, dim=(4, 1), inputs=[values])  # the 2-D launch it asks for
    assert np.array_equal(values, np.zeros(4))


@pytest.mark.parametrize("inputs, fix", [
    ([np.zeros((4, 3)), FLOATS], "convert it with .astype(np.float32)"),
    ([VECS, [1.0, 2.0]], "make one with sim.from_numpy(..., dtype=np.float32)"),
    ([[[0.0, 0.0, 0.0]], FLOATS], "make one with sim.from_numpy(..., dtype=sim.vec3)"),
])
def test_dtype_errors_suggest_the_fix(inputs, fix):
    with pytest.raises(TypeError) as info:
        sim.launch(dot_of_one, dim=1, inputs=inputs)
    assert str(info.value).endswith(fix)


def test_a_list_for_an_array_also_says_it_in_warps_words():
    with pytest.raises(TypeError) as info:
        sim.launch(dot_of_one, dim=1, inputs=[[[0.0, 0.0, 0.0]], FLOATS])
    assert re.search(r"expects an array of type array\(ndim=1, dtype=vec3f\), but passed value "
                     r"has type list\)", str(info.value))
