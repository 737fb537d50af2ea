"""Every value type compiles into a CUDA kernel and a device function, takes
part in kernel arguments, and links offline to a cubin (no GPU needed)."""

import pytest
from numba import cuda, types

import numba_sim as sim
from numba_sim.types import CLASSES, KIND_MAT, KIND_QUAT, KIND_TRANSFORM, VALUE_TABLE
from numba_sim.typing.value_types import VALUE_TYPES


def _vector_kernel(cls):
    @cuda.jit(device=True)
    def combine(a, b, s):
        return (a + b) * s - (-a) / s + s * b

    @cuda.jit(device=True)
    def kernel(out, a, b, s, i):
        c = combine(a, b, s)
        out[0] = c[i] + c.x + c[0] + cls(s)[1] + cls()[0]
        if a == b or a != c:
            out[1] = sim.length_sq(c)

    return kernel


def _float_vector_kernel(cls):
    base = _vector_kernel(cls)

    @cuda.jit(device=True)
    def kernel(out, a, b, s, i):
        base(out, a, b, s, i)
        out[2] = sim.dot(a, b) + sim.length(a) + sim.normalize(b)[i] + sim.cw_mul(a, b)[0] \
            + sim.cw_div(a, b)[0]

    return kernel


def _vec3_kernel(cls):
    base = _float_vector_kernel(cls)

    def kernel(out, a, b, s, i):
        base(out, a, b, s, i)
        out[3] = sim.cross(a, b)[i]

    return kernel


def _matrix_kernel(cls, vec_cls):
    @cuda.jit(device=True)
    def combine(a, b, s):
        return (a @ b) * s + a * b - (-a) / s

    def kernel(out, a, b, s, i):
        m = combine(a, b, s)
        v = m @ m[i] + m[0] * m
        out[0] = v[i] + m[i, 1] + m[1][0] + cls(s)[0, 0] + vec_cls(s)[0]

    return kernel


def _product_kernel(cls):
    def kernel(out, a, b, s, i):
        c = a * b * s
        out[0] = c[i] + cls()[0]

    return kernel


def _transform_kernel(cls):
    def kernel(out, a, b, s, i):
        c = a * b
        out[0] = c[i] + c.p[0] + c.q.w + cls(c.p, c.q)[i]

    return kernel


def kernel_for(spec):
    cls = CLASSES[spec]
    if spec.kind == KIND_MAT:
        return _matrix_kernel(cls, CLASSES[sim.types.row_spec(spec)])
    if spec.kind == KIND_QUAT:
        return _product_kernel(cls)
    if spec.kind == KIND_TRANSFORM:
        return _transform_kernel(cls)
    if spec.is_float:
        return _vec3_kernel(cls) if spec.size == 3 else _float_vector_kernel(cls)
    return _vector_kernel(cls)


def argtypes_for(spec):
    value = VALUE_TYPES[spec]
    scalar = value.dtype
    return (types.Array(scalar, 1, "C"), value, value, scalar, types.int32)


LINKED = {"vec2", "vec3", "vec4", "vec2d", "vec3d", "vec4d", "vec2i", "vec3i", "vec4i", "vec4ub",
          "vec2ul", "spatial_vector", "spatial_vectord", "mat22", "mat33", "mat44", "mat22d",
          "mat33d", "mat44d", "spatial_matrixd", "quat", "quatd", "transform", "transformd"}
"""The types linked here (a CUDA compile each): every float and int32 size, two other integer
types and the spatial types; the other integer types share their code."""


@pytest.mark.parametrize("spec", [s for s in VALUE_TABLE if s.name in LINKED], ids=lambda s: s.name)
def test_value_type_kernel_links_to_cubin(offline_cuda, spec):
    cubin = offline_cuda.cubin(kernel_for(spec), argtypes_for(spec), cc=(7, 5))
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("name", ["vec3", "mat44d", "transform"])
def test_value_type_kernel_links_for_sm90(offline_cuda, name):
    spec = sim.types.SPEC_BY_NAME[name]
    cubin = offline_cuda.cubin(kernel_for(spec), argtypes_for(spec), cc=(9, 0))
    assert cubin[:4] == b"\x7fELF"


def test_float32_kernels_have_no_double_math(offline_cuda):
    """vec3 arithmetic with Python float literals stays in float32 on the GPU."""
    spec = sim.types.SPEC_BY_NAME["vec3"]
    library = offline_cuda.compile(kernel_for(spec), argtypes_for(spec), cc=(7, 5))
    ptx = library.get_asm_str(cc=(7, 5))
    assert ".f64" not in ptx


@pytest.mark.parametrize("spec", VALUE_TABLE, ids=lambda s: s.name)
def test_kernel_arguments_marshal_as_flat_scalars(spec):
    """``sim.cuda_args`` turns a value into the scalars its data model passes."""
    value = CLASSES[spec](*range(1, spec.size + 1)) if spec.kind != KIND_MAT else \
        CLASSES[spec](*range(1, spec.size + 1))
    ty, val = sim.cuda_args.prepare_args(VALUE_TYPES[spec], value, stream=0, retr=[])
    assert ty == types.UniTuple(VALUE_TYPES[spec].dtype, spec.size)
    assert val == tuple(float(x) if spec.is_float else int(x) for x in range(1, spec.size + 1))
    # the data model flattens a value argument into exactly these scalars
    from numba.core.datamodel import default_manager

    model = default_manager.lookup(VALUE_TYPES[spec])
    assert len(model.get_argument_type()) == spec.size
    # other arguments pass through unchanged
    assert sim.cuda_args.prepare_args(types.float32, 1.5, stream=0, retr=[]) == (types.float32, 1.5)


def test_plain_cuda_jit_kernel_with_value_arguments_compiles(offline_cuda):
    """The documented form for plain numba-cuda kernels: extensions=[sim.cuda_args]."""

    @cuda.jit(extensions=[sim.cuda_args])
    def scale(out, v, s):
        w = sim.normalize(v) * s
        out[0] = w.x
        out[1] = w.y
        out[2] = w.z

    assert scale.extensions == [sim.cuda_args]
    vec3 = VALUE_TYPES[sim.types.SPEC_BY_NAME["vec3"]]
    argtypes = (types.float32[::1], vec3, types.float32)
    library = offline_cuda.compile(scale.py_func, argtypes, cc=(7, 5))
    ptx = library.get_asm_str(cc=(7, 5))
    kernel_params = [line for line in ptx.splitlines() if ".param .f32" in line]
    assert len(kernel_params) == 4  # v as three floats, then s
    assert offline_cuda.cubin(scale.py_func, argtypes, cc=(9, 0))[:4] == b"\x7fELF"
