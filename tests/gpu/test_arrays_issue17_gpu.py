"""Issue 17's array features on a real GPU, compared with the CPU: ``lower_bound``, Warp's
``a.shape[i]`` (0 past the dims), arrays over a pointer (``a.ptr``,
``sim.array(ptr=...)``, ``sim.view`` of value elements as their floats) and local arrays (``sim.zeros`` in a kernel, in local memory)."""

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
cupy = pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")


@sim.kernel
def array_features(sorted_values: sim.array(dtype=float), queries: sim.array(dtype=float),
                   grid: sim.array2d(dtype=float), out: sim.array2d(dtype=float)):
    i = sim.tid()
    out[i, 0] = float(sim.lower_bound(sorted_values, queries[i]))
    row = grid[i]
    out[i, 1] = float(row.shape[0] * 10 + row.shape[1])
    view = sim.array(ptr=grid.ptr, shape=(grid.shape[0], 2), dtype=sim.vec2)
    out[i, 2] = sim.length_sq(view[i, 1])
    local = sim.zeros(shape=(2, 3), dtype=sim.vec3)
    for k in range(3):
        local[1, k] = local[1, k] + sim.vec3(float(i), float(k), 1.0)
    out[i, 3] = local[1, 2][1] + local[1, 1][0] + local[0, 0][2]
    flat = sim.view(view, float)  # the vec2 elements as their floats, (n, 2, 2)
    out[i, 0] = out[i, 0] + flat[i, 1, 0] * 0.0 + flat[i, 1, 1] * flat[i, 1, 1]


def test_array_features_on_cuda_match_the_cpu():
    rng = np.random.default_rng(7)
    sorted_values = np.sort(rng.uniform(-1, 1, 64)).astype(np.float32)
    queries = rng.uniform(-1.2, 1.2, 256).astype(np.float32)
    grid = rng.uniform(-1, 1, (256, 4)).astype(np.float32)
    results = {}
    for device in ("cpu", "cuda"):
        arrays = [sim.from_numpy(a, device=device) for a in (sorted_values, queries, grid)]
        out = sim.zeros((256, 4), dtype=float, device=device)
        sim.launch(array_features, dim=256, inputs=[*arrays, out], device=device)
        results[device] = sim.to_numpy(out)
    np.testing.assert_allclose(results["cuda"], results["cpu"], rtol=1e-6)
    np.testing.assert_array_equal(results["cpu"][:, 0],
                                  np.minimum(np.searchsorted(sorted_values, queries),
                                             63).astype(np.float32) + grid[:, 3] * grid[:, 3])
    np.testing.assert_array_equal(results["cpu"][:, 1], 40)
