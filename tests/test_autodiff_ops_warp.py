"""The builtin adjoints against Warp's own on the CPU: for each builtin below, a tiny
Warp kernel ``out[0] = wp.<builtin>(a[0], ...)`` runs under ``wp.Tape``, backward from a
random ``adj_ret``, and the gradients of its inputs equal numba_sim's
``adjoint_function(<builtin>)(*args, adj_ret)`` (Python mode, float32), within float32
rounding.  All kernels live in one generated module: one Warp compile."""

import importlib.util
import zlib

import numpy as np
import pytest

import numba_sim as sim
from numba_sim.autodiff import adjoint_function

wp = pytest.importorskip("warp")

# builtin name, argument kinds, result kind (kinds: f = float32, v = vec3, q = quat,
# t = transform, m = mat33, m2 = mat22, v2 = vec2, v4 = vec4)
BUILTINS = [
    ("normalize", "v", "v"), ("length", "v", "f"), ("length_sq", "v", "f"),
    ("dot", "vv", "f"), ("cross", "vv", "v"), ("cw_mul", "vv", "v"), ("cw_div", "vv", "v"),
    ("quat_rotate", "qv", "v"), ("quat_rotate_inv", "qv", "v"), ("quat_inverse", "q", "q"),
    ("quat_to_matrix", "q", "m"), ("quat_from_axis_angle", "vf", "q"), ("mul", "qq", "q"),
    ("transform_point", "tv", "v"), ("transform_vector", "tv", "v"),
    ("transform_multiply", "tt", "t"), ("transform_inverse", "t", "t"),
    ("inverse", "m", "m"), ("inverse", "m2", "m2"), ("determinant", "m", "f"),
    ("transpose", "m", "m"), ("trace", "m", "f"), ("outer", "vv", "m"), ("skew", "v", "m"),
    ("mul", "mv", "v"), ("mul", "mm", "m"), ("atan2", "ff", "f"), ("clamp", "fff", "f"),
    ("sin", "f", "f"), ("cos", "f", "f"), ("tan", "f", "f"), ("exp", "f", "f"),
    ("log", "f", "f"), ("sqrt", "f", "f"), ("pow", "ff", "f"), ("acos", "f", "f"),
    ("asin", "f", "f"), ("atan", "f", "f"), ("tanh", "f", "f"), ("sinh", "f", "f"),
    ("abs", "f", "f"), ("min", "ff", "f"), ("max", "ff", "f"), ("div", "ff", "f"),
    ("lerp", "vvf", "v"), ("smoothstep", "fff", "f"), ("normalize", "q", "q"),
    ("length", "v4", "f"), ("normalize", "v2", "v2"), ("degrees", "f", "f"),
    ("cbrt", "f", "f"), ("log2", "f", "f"),
]

WARP_TYPES = {"f": "wp.float32", "v": "wp.vec3", "q": "wp.quat", "t": "wp.transform",
              "m": "wp.mat33", "m2": "wp.mat22", "v2": "wp.vec2", "v4": "wp.vec4"}
SIM_TYPES = {"f": np.float32, "v": sim.vec3, "q": sim.quat, "t": sim.transform,
             "m": sim.mat33, "m2": sim.mat22, "v2": sim.vec2, "v4": sim.vec4}
SIZES = {"f": 1, "v": 3, "q": 4, "t": 7, "m": 9, "m2": 4, "v2": 2, "v4": 4}


def _split_kinds(text):
    kinds, i = [], 0
    while i < len(text):
        if text[i:i + 2] in ("m2", "v2", "v4"):
            kinds.append(text[i:i + 2])
            i += 2
        else:
            kinds.append(text[i])
            i += 1
    return kinds


def _module_source():
    lines = ["import warp as wp", ""]
    for number, (name, args, result) in enumerate(BUILTINS):
        kinds = _split_kinds(args)
        params = ", ".join(f"a{i}: wp.array(dtype={WARP_TYPES[k]})" for i, k in enumerate(kinds))
        call = ", ".join(f"a{i}[0]" for i in range(len(kinds)))
        lines += ["@wp.kernel",
                  f"def k{number}({params}, out: wp.array(dtype={WARP_TYPES[result]})):",
                  f"    out[0] = wp.{name}({call})", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def warp_kernels(tmp_path_factory):
    wp.config.quiet = True
    wp.init()
    path = tmp_path_factory.mktemp("warp_adjoints") / "numba_sim_adjoint_kernels.py"
    path.write_text(_module_source())
    spec = importlib.util.spec_from_file_location("numba_sim_adjoint_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _random(kind, rng):
    if kind == "q":
        q = rng.normal(size=4)
        return (q / np.linalg.norm(q)).astype(np.float32)
    if kind == "t":
        q = rng.normal(size=4)
        return np.concatenate([rng.uniform(-1, 1, 3), q / np.linalg.norm(q)]).astype(np.float32)
    if kind in ("m", "m2"):
        n = 3 if kind == "m" else 2
        return (np.eye(n) + 0.3 * rng.uniform(-1, 1, (n, n))).ravel().astype(np.float32)
    return rng.uniform(0.2, 0.9, SIZES[kind]).astype(np.float32)


def _sim_value(kind, data):
    if kind == "f":
        return np.float32(data[0])
    return SIM_TYPES[kind](*[float(x) for x in data])


def _components(value):
    return np.asarray(value._components() if hasattr(value, "_components") else [value],
                      dtype=np.float64)


@pytest.mark.parametrize("number", range(len(BUILTINS)),
                         ids=[f"{n}({a})" for n, a, _ in BUILTINS])
def test_adjoint_matches_warps(warp_kernels, number):
    name, args, result = BUILTINS[number]
    kinds = _split_kinds(args)
    rng = np.random.default_rng(zlib.crc32(f"{name}{args}".encode()))
    data = [_random(k, rng) for k in kinds]
    adj_ret = rng.normal(size=SIZES[result]).astype(np.float32)

    def warp_array(kind, values):
        dtype = eval(WARP_TYPES[kind], {"wp": wp})
        return wp.array(values.reshape(1, -1) if kind != "f" else values, dtype=dtype,
                        requires_grad=True, device="cpu")

    inputs = [warp_array(k, d) for k, d in zip(kinds, data)]
    out = warp_array(result, np.zeros(SIZES[result], dtype=np.float32))
    tape = wp.Tape()
    with tape:
        wp.launch(getattr(warp_kernels, f"k{number}"), dim=1, inputs=inputs, outputs=[out],
                  device="cpu")
    tape.backward(grads={out: warp_array(result, adj_ret)})
    theirs = [a.grad.numpy().astype(np.float64).ravel() for a in inputs]

    ours = adjoint_function(getattr(sim, name))(
        *[_sim_value(k, d) for k, d in zip(kinds, data)], _sim_value(result, adj_ret))
    for index, (mine, warp_grad) in enumerate(zip(ours, theirs)):
        mine = _components(mine)
        scale = 1 + np.abs(warp_grad).max()
        assert np.allclose(mine, warp_grad, rtol=2e-5, atol=2e-5 * scale), (
            f"{name}({args}) argument {index}: numba_sim {mine} vs Warp {warp_grad}")
