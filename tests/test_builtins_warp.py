"""The builtins give Warp's numbers: the same expressions, run by Warp's CPU backend and
by numba_sim's compiled code, agree bit for bit (skipped where Warp is not installed).

Each expression is written once over a module name ``M``; the Warp kernel uses
``wp.`` and ours ``sim.`` (porting is swapping the module name).  Both backends
call the C library for transcendental functions, so those may differ by one ulp
only where the two were built against different libraries.
"""

import importlib.util
import sys

import numba
import numpy as np
import pytest

import numba_sim as sim

N = 256

# (expression, transcendental), over scalars a, b, c; vec3 v, u; quat q, r; mat22 m2; mat33 m3;
# mat44 m4; T is the transform type
EXPRESSIONS = [
    ("M.sin(a)", 1), ("M.cos(a)", 1), ("M.tan(a)", 1), ("M.exp(a)", 1), ("M.log(M.abs(a))", 1),
    ("M.sqrt(M.abs(a))", 0), ("M.cbrt(a)", 1), ("M.pow(M.abs(a), b)", 1), ("M.asin(a)", 1),
    ("M.acos(a)", 1), ("M.atan(a)", 1), ("M.atan2(a, b)", 1), ("M.sinh(a)", 1), ("M.cosh(a)", 1),
    ("M.tanh(a)", 1), ("M.floor(a)", 0), ("M.ceil(a)", 0), ("M.round(a)", 0), ("M.trunc(a)", 0),
    ("M.radians(a)", 0), ("M.degrees(a)", 0), ("M.sign(a)", 0), ("M.step(a)", 0),
    ("M.min(a, b)", 0), ("M.max(a, b)", 0), ("M.clamp(a, b, c)", 0), ("M.lerp(a, b, c)", 0),
    ("M.smoothstep(b, c, a)", 0), ("M.abs(a)", 0),
    ("M.dot(v, u)", 0), ("M.cross(v, u)[1]", 0), ("M.length(v)", 0), ("M.length_sq(v)", 0),
    ("M.normalize(v)[0]", 0), ("M.cw_mul(v, u)[2]", 0), ("M.cw_div(v, u)[0]", 0),
    ("M.outer(v, u)[1, 2]", 0), ("M.min(v)", 0), ("M.max(v, u)[1]", 0), ("M.lerp(v, u, c)[2]", 0),
    ("M.transpose(m3)[0, 1]", 0), ("M.determinant(m2)", 0), ("M.determinant(m3)", 0),
    ("M.determinant(m4)", 0), ("M.inverse(m2)[0, 1]", 0), ("M.inverse(m3)[1, 2]", 0),
    ("M.inverse(m3)[2, 0]", 0), ("M.inverse(m4)[0, 0]", 0), ("M.inverse(m4)[1, 3]", 0),
    ("M.inverse(m4)[3, 2]", 0), ("M.trace(m3)", 0), ("M.diag(v)[1, 1]", 0), ("M.skew(v)[0, 2]", 0),
    ("M.mul(m3, v)[1]", 0), ("M.mul(v, m3)[2]", 0),
    ("M.matrix_from_rows(v, u, v)[1, 0]", 0), ("M.matrix_from_cols(v, u, v)[1, 0]", 0),
    ("M.quat_rotate(q, v)[0]", 0), ("M.quat_rotate_inv(q, v)[2]", 0),
    ("M.quat_to_matrix(q)[0, 1]", 0), ("M.quat_from_matrix(M.quat_to_matrix(q))[0]", 0),
    ("M.quat_from_matrix(m3)[3]", 0), ("M.quat_from_matrix(m4)[1]", 0),
    ("M.quat_inverse(q)[0]", 0), ("M.normalize(q * a)[2]", 0), ("M.length(q)", 0),
    ("M.quat_slerp(q, r, c)[1]", 1), ("M.quat_rpy(a, b, c)[2]", 1),
    ("M.quat_from_axis_angle(M.normalize(v), a)[3]", 1),
    ("M.transform_point(M.transform_inverse(T(v, q)), u)[0]", 0),
    ("M.transform_vector(T(v, q), u)[1]", 0),
    ("M.transform_multiply(T(v, q), T(u, r))[4]", 0), ("M.transform_point(m4, v)[2]", 0),
    ("M.transform_vector(m4, v)[0]", 0), ("M.transform_get_translation(T(v, q))[2]", 0),
    ("M.transform_get_rotation(T(v, q))[3]", 0), ("M.lerp(q, r, c)[0]", 0),
]

TYPE_NAMES = {  # Warp's and numba_sim's names of the types, per dtype
    np.float32: dict(S="float32", V="vec3", Q="quat", M2="mat22", M3="mat33", M4="mat44",
                     T="transform"),
    np.float64: dict(S="float64", V="vec3d", Q="quatd", M2="mat22d", M3="mat33d", M4="mat44d",
                     T="transformd"),
}


def warp_kernel_source(dtype):
    names = TYPE_NAMES[dtype]
    lines = [
        "import warp as wp",
        "T = wp.{T}".format(**names),
        "@wp.kernel",
        "def builtins_kernel(s: wp.array2d(dtype=wp.{S}), vs: wp.array2d(dtype=wp.{V}),"
        " qs: wp.array2d(dtype=wp.{Q}), m2s: wp.array(dtype=wp.{M2}),"
        " m3s: wp.array(dtype=wp.{M3}), m4s: wp.array(dtype=wp.{M4}),"
        " out: wp.array2d(dtype=wp.{S})):".format(**names),
        "    i = wp.tid()",
        "    a = s[i, 0]", "    b = s[i, 1]", "    c = s[i, 2]",
        "    v = vs[i, 0]", "    u = vs[i, 1]", "    q = qs[i, 0]", "    r = qs[i, 1]",
        "    m2 = m2s[i]", "    m3 = m3s[i]", "    m4 = m4s[i]",
    ]
    lines += [f"    out[i, {k}] = {expr.replace('M.', 'wp.')}"
              for k, (expr, _) in enumerate(EXPRESSIONS)]
    return "\n".join(lines) + "\n"


def numba_sim_source(dtype):
    names = TYPE_NAMES[dtype]
    lines = [
        "def builtins_loop(s, vs, qs, m2s, m3s, m4s, out):",
        "    vs, qs = sim.view(vs, V), sim.view(qs, Q)",
        "    m2s, m3s, m4s = sim.view(m2s, M2), sim.view(m3s, M3), sim.view(m4s, M4)",
        "    for i in range(s.shape[0]):",
        "        a, b, c = s[i, 0], s[i, 1], s[i, 2]",
        "        v, u, q, r = vs[i, 0], vs[i, 1], qs[i, 0], qs[i, 1]",
        "        m2, m3, m4 = m2s[i], m3s[i], m4s[i]",
    ]
    lines += [f"        out[i, {k}] = {expr.replace('M.', 'sim.')}"
              for k, (expr, _) in enumerate(EXPRESSIONS)]
    namespace = {"sim": sim, **{key: getattr(sim, name) for key, name in names.items()}}
    exec(compile("\n".join(lines) + "\n", "<builtins_loop>", "exec"), namespace)  # noqa: S102
    return numba.njit(namespace["builtins_loop"])


def random_inputs(dtype):
    rng = np.random.default_rng(19)
    s = rng.uniform(-3, 3, (N, 3))
    s[:8, 0] = [0.5, -0.5, 2.5, -2.5, np.nan, np.inf, -0.0, 1.5]  # rounding, NaN, clamping
    q = rng.normal(size=(N, 2, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    arrays = (s, rng.normal(size=(N, 2, 3)), q, rng.normal(size=(N, 2, 2)),
              rng.normal(size=(N, 3, 3)), rng.normal(size=(N, 4, 4)))
    return [x.astype(dtype) for x in arrays]


def run_warp(wp, dtype, inputs, tmp_path):
    path = tmp_path / f"numba_sim_warp_reference_{np.dtype(dtype).name}.py"
    path.write_text(warp_kernel_source(dtype))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    names = TYPE_NAMES[dtype]
    types = [getattr(wp, names[k]) for k in ("S", "V", "Q", "M2", "M3", "M4")]
    arrays = [wp.array(x, dtype=t, device="cpu") for x, t in zip(inputs, types)]
    out = wp.zeros((N, len(EXPRESSIONS)), dtype=types[0], device="cpu")
    wp.launch(module.builtins_kernel, dim=N, inputs=[*arrays, out], device="cpu")
    return out.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_builtins_match_warp_bit_for_bit(dtype, tmp_path):
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    inputs = random_inputs(dtype)
    expected = run_warp(wp, dtype, inputs, tmp_path)
    got = np.zeros_like(expected)
    numba_sim_source(dtype)(*inputs, got)
    int_type = np.int32 if dtype == np.float32 else np.int64
    for k, (expr, transcendental) in enumerate(EXPRESSIONS):
        a, b = got[:, k], expected[:, k]
        same = (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
        ulps = np.abs(a.view(int_type).astype(np.int64) - b.view(int_type).astype(np.int64))
        allowed = 1 if transcendental else 0
        bad = ~same & ~(ulps <= allowed)
        assert not bad.any(), (expr, np.flatnonzero(bad)[:5], a[bad][:5], b[bad][:5])
