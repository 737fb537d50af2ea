"""Spatial algebra, the transform helpers and the generic vector and matrix sizes give Warp's
numbers: the same statements, run by Warp's CPU backend, by numba_sim's compiled code and
by numba_sim's Python mode, agree bit for bit (the Warp half is skipped where Warp is not
installed).

The statements are written once over a module name ``M`` (``wp.`` for Warp, ``sim.`` for
numba_sim) and the type names below; every value is built from one scalar array, so the
same source runs on both sides.
"""

import importlib.util
import sys

import numba
import numpy as np
import pytest

import numba_sim as sim

N = 64

# (name, constructor, number of scalars taken from the row)
VALUES = [
    ("v", "V", 3), ("u", "V", 3), ("q", "Q", 4), ("sv", "SV", 6), ("sw", "SV", 6),
    ("m3", "M3", 9), ("m4", "M4", 16), ("x5", "V5", 5), ("y5", "V5", 5), ("m23", "M23", 6),
    ("m34", "M34", 12), ("m55", "M55", 25), ("a", None, 1),
]

SETUP = [
    "q = M.normalize(q)",
    "t = M.transformation(v, q)",
    "sm = M.spatial_adjoint(m3, M.skew(v) @ m3)",
    "dp, dq, ds = M.transform_decompose(M.transform_compose(v, q, u))",
]

EXPRESSIONS = [
    "M.spatial_dot(sv, sw)", "M.spatial_cross(sv, sw)[0]", "M.spatial_cross(sv, sw)[4]",
    "M.spatial_cross_dual(sv, sw)[1]", "M.spatial_cross_dual(sv, sw)[5]",
    "M.spatial_top(sv)[2]", "M.spatial_bottom(sv)[0]", "sm[4, 1]", "sm[3, 3]", "sm[0, 4]",
    "(sm @ sv)[3]", "(sm * sw)[5]", "M.transpose(sm)[1, 4]", "(sm @ sm)[5, 0]",
    "M.transform_twist(t, sv)[1]", "M.transform_twist(t, sv)[4]",
    "M.transform_wrench(t, sv)[0]", "M.transform_wrench(t, sv)[5]",
    "M.velocity_at_point(sv, u)[2]", "SVC(v, u)[4]", "M.length(sv)", "M.normalize(sv)[3]",
    "M.transformation(v, q)[3]", "M.transformation(v)[6]", "t.p[1] + t.q[2]",
    "M.transform_to_matrix(t)[1, 2]", "M.transform_to_matrix(t)[2, 3]",
    "M.transform_from_matrix(M.transform_to_matrix(t))[5]",
    "M.transform_from_matrix(m4)[4]",
    "M.transform_compose(v, q, u)[0, 1]", "M.transform_compose(v, q, u)[1, 3]",
    "dp[1]", "dq[0]", "dq[3]", "ds[2]",
    "M.dot(x5, y5)", "M.length(x5)", "M.length_sq(y5)", "M.normalize(x5)[3]", "(x5 * a)[4]",
    "(x5 + y5)[1]", "(x5 / a)[2]", "M.cw_mul(x5, y5)[2]", "M.cw_div(x5, y5)[0]",
    "M.outer(x5, v)[4, 2]", "M.outer(v, x5)[2, 4]",
    "(m23 @ m34)[1, 3]", "M.mul(m23, m34)[0, 2]", "(M.transpose(m34) @ v)[3]", "(v @ m34)[2]",
    "(m23 @ v)[1]", "M.transpose(m23)[2, 1]", "M.cw_mul(m23, m23)[1, 2]", "(m23 * a)[0, 1]",
    "M.trace(m55)", "(m55 @ x5)[4]", "(x5 @ m55)[0]", "(m55 @ m55)[3, 2]",
    "M.transpose(m55)[1, 4]", "M.diag(x5)[3, 3]", "m55[4][2]", "M.identity(n=5, dtype=S)[2, 2]",
    "M.quat_identity(dtype=S)[3]", "M.transform_identity(dtype=S)[6]",
    "M.vector(a, a, a, a, x5[1])[4]", "M.vector(length=5, dtype=S)[3]", "M.vector(a, length=6)[5]",
    "M.vector(x5)[2]", "(M.matrix(a, shape=(2, 3)) @ m34)[1, 2]", "M.matrix(m55)[3, 4]",
    "M.matrix(a, a, a, a, a, x5[0], shape=(3, 2))[2, 1]", "M.matrix(shape=(4, 2), dtype=S)[3, 1]",
]

WARP_FLOAT32_ONLY = ("M.transform_twist", "M.transform_wrench", "M.velocity_at_point")
"""Warp's helpers of warp/_src/math.py annotated with float32 types (numba_sim's take both)."""

TYPE_NAMES = {
    np.float32: dict(S="float32", V="vec3", Q="quat", M3="mat33", M4="mat44", SV="spatial_vector"),
    np.float64: dict(S="float64", V="vec3d", Q="quatd", M3="mat33d", M4="mat44d",
                     SV="spatial_vectord"),
}


def _prelude(module, dtype):
    """Type names, as module-level assignments of the generated source."""
    names = TYPE_NAMES[dtype]
    lines = [f"{key} = {module}.{name}" for key, name in names.items()]
    lines += [f"V5 = {module}.types.vector(5, {module}.{names['S']})",
              f"M23 = {module}.types.matrix((2, 3), {module}.{names['S']})",
              f"M34 = {module}.types.matrix((3, 4), {module}.{names['S']})",
              f"M55 = {module}.types.matrix((5, 5), {module}.{names['S']})"]
    # numba_sim builds a spatial vector from two vec3 with the class of their scalar type
    # (Warp: wp.spatial_vector(w, v), float32 only, or its components)
    if module == "sim":
        lines.append(f"SVC = sim.{names['SV']}")
    return lines


def _warp_skips(dtype):
    """The expressions Warp does not have for *dtype*."""
    if dtype == np.float32:
        return set()
    return {k for k, expr in enumerate(EXPRESSIONS) if expr.startswith(WARP_FLOAT32_ONLY)}


def _body(module, indent, skips=()):
    lines, column = [], 0
    for name, constructor, count in VALUES:
        items = ", ".join(f"f[i, {column + k}]" for k in range(count))
        lines.append(f"{name} = {constructor}({items})" if constructor else f"{name} = {items}")
        column += count
    lines += SETUP
    lines += [f"out[i, {k}] = {expr}" for k, expr in enumerate(EXPRESSIONS) if k not in skips]
    if module == "wp":
        components = "SV(v[0], v[1], v[2], u[0], u[1], u[2])"
        lines = [line.replace("SVC(v, u)", components) for line in lines]
    return [indent + line.replace("M.", f"{module}.") for line in lines]


COLUMNS = sum(count for _, _, count in VALUES)


def warp_source(dtype):
    return "\n".join(["import warp as wp", *_prelude("wp", dtype), "@wp.kernel",
                      "def spatial_kernel(f: wp.array2d(dtype=S), out: wp.array2d(dtype=S)):",
                      "    i = wp.tid()", *_body("wp", "    ", _warp_skips(dtype))]) + "\n"


def numba_sim_function(dtype):
    source = "\n".join([*_prelude("sim", dtype), "def spatial_loop(f, out):",
                        "    for i in range(f.shape[0]):", *_body("sim", "        ")]) + "\n"
    namespace = {"sim": sim}
    exec(compile(source, "<spatial_loop>", "exec"), namespace)  # noqa: S102
    return namespace["spatial_loop"]


def random_inputs(dtype):
    rng = np.random.default_rng(23)
    f = rng.uniform(-2, 2, (N, COLUMNS))
    f[:, -1] = rng.uniform(0.5, 2, N)  # a: a divisor
    f[0, :] = 1.0  # singular matrices, zero spatial products
    return f.astype(dtype)


@pytest.fixture(scope="module", params=[np.float32, np.float64], ids=["float32", "float64"])
def results(request, tmp_path_factory):
    """(inputs, numba_sim compiled, numba_sim Python mode on a few rows, Warp or None)."""
    dtype = request.param
    inputs = random_inputs(dtype)
    python = numba_sim_function(dtype)
    compiled = np.zeros((N, len(EXPRESSIONS)), dtype)
    numba.njit(python)(inputs, compiled)
    in_python = np.zeros((4, len(EXPRESSIONS)), dtype)
    python(inputs[:4], in_python)
    warp_out = None
    if importlib.util.find_spec("warp") is not None:
        import warp as wp

        wp.config.quiet = True
        path = tmp_path_factory.mktemp("warp") / f"numba_sim_spatial_{np.dtype(dtype).name}.py"
        path.write_text(warp_source(dtype))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        f = wp.array(inputs, device="cpu")
        out = wp.zeros((N, len(EXPRESSIONS)), dtype=module.S, device="cpu")
        wp.launch(module.spatial_kernel, dim=N, inputs=[f, out], device="cpu")
        warp_out = out.numpy()
    return dtype, compiled, in_python, warp_out


def _mismatches(got, expected):
    same = (got == expected) & (np.signbit(got) == np.signbit(expected))
    same |= np.isnan(got) & np.isnan(expected)
    return [(EXPRESSIONS[k], np.flatnonzero(~same[:, k])[:4], got[~same[:, k], k][:4],
             expected[~same[:, k], k][:4]) for k in range(got.shape[1]) if not same[:, k].all()]


def test_python_mode_matches_compiled_code_bit_for_bit(results):
    _, compiled, in_python, _ = results
    assert not _mismatches(in_python, compiled[:4])


def test_spatial_transform_and_generic_sizes_match_warp_bit_for_bit(results):
    dtype, compiled, _, warp_out = results
    if warp_out is None:
        pytest.skip("warp is not installed")
    for k in _warp_skips(dtype):
        warp_out[:, k] = compiled[:, k]
    assert not _mismatches(compiled, warp_out)
