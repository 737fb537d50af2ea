"""noise, pnoise and curlnoise: Warp's numbers bit for bit on the CPU and in Python mode, and
an offline CUDA compile-and-link."""

import importlib.util
import sys

import numpy as np
import pytest

import numba_sim as sim

N = 96

EXPRESSIONS = [  # over the uint32 seed s, the float x and the vec4 q (its first axes: v2, v3)
    "M.noise(s, x)", "M.noise(s, v2)", "M.noise(s, v3)", "M.noise(s, q)",
    "M.pnoise(s, x, 3)", "M.pnoise(s, v2, 3, 4)", "M.pnoise(s, v3, 3, 4, 5)",
    "M.pnoise(s, q, 3, 4, 5, 2)",
    "M.curlnoise(s, v2)[0]", "M.curlnoise(s, v2, M.uint32(3), 2.5, 0.25)[1]",
    "M.curlnoise(s, v3)[0]", "M.curlnoise(s, v3, M.uint32(2))[2]",
    "M.curlnoise(s, v3, M.uint32(2), 1.5)[1]", "M.curlnoise(s, q)[1]",
    "M.curlnoise(s, q, M.uint32(2), 2.0, 0.5)[2]",
]


def kernel_source(module):
    lines = [
        f"def noise_kernel(seeds: {module}.array(dtype={module}.uint32),"
        f" points: {module}.array(dtype={module}.vec4),"
        f" out: {module}.array(dtype={module}.float32, ndim=2)):",
        f"    i = {module}.tid()",
        "    s = seeds[i]", "    q = points[i]", "    x = q[0]",
        f"    v2 = {module}.vec2(q[0], q[1])", f"    v3 = {module}.vec3(q[0], q[1], q[2])",
    ]
    lines += [f"    out[i, {k}] = {e.replace('M.', module + '.')}"
              for k, e in enumerate(EXPRESSIONS)]
    return "\n".join(lines) + "\n"


def load(tmp_path, module, decorator):
    name = f"noise_kernel_{module}"
    path = tmp_path / f"{name}.py"
    header = "import warp as wp" if decorator.startswith("wp.") else "import numba_sim as sim"
    path.write_text(f"{header}\n@{decorator}\n"
                    + kernel_source(module))
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded.noise_kernel


def inputs():
    rng = np.random.default_rng(23)
    seeds = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    points = rng.uniform(-20, 20, (N, 4)).astype(np.float32)
    points[:4] = [[0, 0, 0, 0], [1, 2, 3, 4], [-0.5, 0.5, -1.5, 2.5], [7.999, -3.001, 0.25, 1e-7]]
    return seeds, points


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    kernel = load(tmp_path_factory.mktemp("ours"), "sim", "sim.kernel")
    seeds, points = inputs()
    out = np.zeros((N, len(EXPRESSIONS)), np.float32)
    sim.launch(kernel, dim=N, inputs=[seeds, points, out])
    return kernel, out


def test_noise_matches_warp_bit_for_bit(ours, tmp_path):
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    kernel = load(tmp_path, "wp", "wp.kernel")
    seeds, points = inputs()
    out = wp.zeros((N, len(EXPRESSIONS)), dtype=wp.float32, device="cpu")
    wp.launch(kernel, dim=N, inputs=[wp.array(seeds, dtype=wp.uint32, device="cpu"),
                                     wp.array(points, dtype=wp.vec4, device="cpu"), out],
              device="cpu")
    expected, got = out.numpy(), ours[1]
    for k, expression in enumerate(EXPRESSIONS):
        np.testing.assert_array_equal(got[:, k].view(np.uint32), expected[:, k].view(np.uint32),
                                      err_msg=expression)
    assert np.abs(got[:, :4]).max() <= 1.0 and np.abs(got[:, 0]).max() > 0.1


def test_python_mode_gives_the_compiled_numbers(ours):
    got = ours[1]
    seeds, points = inputs()
    for i in range(0, N, 7):
        q = sim.vec4(*points[i])
        namespace = {"M": sim, "s": int(seeds[i]), "q": q, "x": points[i, 0],
                     "v2": sim.vec2(*points[i, :2]), "v3": sim.vec3(*points[i, :3])}
        for k, expression in enumerate(EXPRESSIONS):
            value = np.float32(eval(expression, namespace))  # noqa: S307
            assert value.view(np.uint32) == got[i, k].view(np.uint32), (expression, i)


def test_noise_is_periodic_and_continuous():
    values = [sim.pnoise(7, np.float32(x), 4) for x in (0.25, 4.25, 8.25, -3.75)]
    assert values[0] == values[1] == values[2] == values[3]
    assert abs(sim.noise(7, np.float32(2.0)) - sim.noise(7, np.float32(2.0001))) < 1e-3
    assert sim.noise(7, np.float32(3.0)) == 0.0  # zero at the lattice points


def test_wrong_calls_name_the_accepted_forms():
    with pytest.raises(TypeError, match=r"noise\(a uint32 state, a float\) or"):
        sim.noise(1.5, 1.0)
    with pytest.raises(TypeError, match="pnoise"):
        sim.pnoise(1, sim.vec3(1.0), 2)
    with pytest.raises(TypeError, match="curlnoise"):
        sim.curlnoise(1, np.float32(1.0))


def test_noise_compiles_and_links_for_cuda(ours):
    seeds, points = inputs()
    library = ours[0].compile("cuda", [seeds, points, np.zeros((N, len(EXPRESSIONS)),
                                                               np.float32)], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
