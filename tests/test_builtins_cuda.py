"""Every builtin on every type compiles for CUDA and links offline (no GPU needed).

The functions of tests/test_builtins.py (one per type, calling every builtin
that applies to it) are compiled as CUDA device functions, called from a
kernel, and linked to cubins for sm_75 (the oldest supported architecture) and
sm_90.  A few are also compiled as kernels themselves.
"""

import numpy as np
import pytest
from numba import cuda, types
from numba.core.typing.typeof import typeof
from test_builtins import GROUPS, generated, sample_inputs

ELF = b"\x7fELF"


def argtypes_of(group_name):
    _, names, _, _ = generated(group_name)
    inputs = sample_inputs(GROUPS[group_name])
    return (types.float64[::1],) + tuple(typeof(inputs[n]) for n in names)


def kernel_calling_device_function(group_name):
    fn, names, _, _ = generated(group_name)
    namespace = {"device_function": cuda.jit(device=True)(fn)}
    args = ", ".join(names)
    exec(f"def kernel(out, {args}):\n    device_function(out, {args})\n", namespace)  # noqa: S102
    return namespace["kernel"]


@pytest.mark.parametrize("group_name", list(GROUPS))
def test_builtins_link_from_a_device_function_for_sm75_and_sm90(offline_cuda, group_name):
    library = offline_cuda.compile(kernel_calling_device_function(group_name),
                                   argtypes_of(group_name), cc=(7, 5))
    for cc in ((7, 5), (9, 0)):
        assert bytes(library.get_cubin(cc=cc).code)[:4] == ELF


@pytest.mark.parametrize("group_name", ["float32", "vec3i", "quat", "transform"])
def test_builtins_link_in_a_kernel_body(offline_cuda, group_name):
    fn = generated(group_name)[0]
    assert offline_cuda.cubin(fn, argtypes_of(group_name), cc=(7, 5))[:4] == ELF


def test_float32_math_calls_single_precision_libdevice(offline_cuda):
    """float32 builtins call libdevice's float functions (sinf, not sin) on the GPU."""
    library = offline_cuda.compile(generated("float32")[0], argtypes_of("float32"), cc=(7, 5))
    llvm = library.get_llvm_str()
    for name in ("__nv_sinf", "__nv_cbrtf", "__nv_atan2f", "__nv_powf"):
        assert name in llvm, name
    for name in ("@__nv_sin(", "@__nv_cbrt(", "@cbrtf("):
        assert name not in llvm, name


def test_float32_builtins_stay_in_single_precision_on_the_gpu(offline_cuda):
    """No accidental FP64: the formulas' constants take the argument's type.  (The float64
    math of float32 builtins is Warp's own: degrees/radians and the 4x4 determinant/inverse
    use double intermediates, and libdevice's sinf/cosf reduce large arguments in double.)"""
    import numba_sim as sim
    from numba_sim.typing.value_types import value_type_by_name as value_type

    def kernel(out, x, v, q, t, m):
        axis, angle = sim.quat_to_axis_angle(q)
        r = sim.quat_rotate_inv(q, v) + axis * angle + sim.quat_to_matrix(q) @ v
        w = sim.transform_point(sim.transform_inverse(t), sim.normalize(v))
        p = sim.quat_from_matrix(sim.inverse(m)) * sim.determinant(m) * sim.round(x)
        out[0] = r.x + w.y + p.z + sim.cbrt(x) + sim.pow(x, 2) + sim.clamp(x, 0, 1) \
            + sim.lerp(x, x, x) + sim.smoothstep(x, np.float32(1), x) + sim.acos(x) + sim.exp(x)

    argtypes = (types.float32[::1], types.float32, value_type("vec3"), value_type("quat"),
                value_type("transform"), value_type("mat33"))
    ptx = offline_cuda.compile(kernel, argtypes, cc=(7, 5)).get_asm_str(cc=(7, 5))
    assert ".f64" not in ptx
