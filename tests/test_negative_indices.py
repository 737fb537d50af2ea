"""Negative component indices count from the end in kernels, as in Warp (v[-1] is the last)."""

import numpy as np

import numba_sim as sim


@sim.kernel
def negative_components(out: sim.array(dtype=sim.vec4), rows: sim.array(dtype=sim.mat22),
                        k: int):
    v = sim.vec4(1.0, 2.0, 3.0, 4.0)
    v[-1] = 10.0          # constant index
    w = v[-2]
    v[k] = v[k] + 0.5     # runtime index (k = -3: the second component)
    out[0] = sim.vec4(v[0], v[1], w, v[3])
    out[1] = sim.vec4(v[k], v[-4], 0.0, 0.0)
    a = sim.mat22(1.0, 2.0, 3.0, 4.0)
    a[-1] = sim.vec2(7.0, 8.0)
    a[0, -1] = 5.0
    a[k + 2, k + 3] += 100.0  # runtime (-1, 0): the last row's first element
    rows[0] = a


def test_negative_indices_read_and_write_from_the_end():
    out = np.zeros((2, 4), np.float32)
    rows = np.zeros((1, 2, 2), np.float32)
    sim.launch(negative_components, dim=1, inputs=[out, rows, -3])
    np.testing.assert_array_equal(out[0], [1.0, 2.5, 3.0, 10.0])
    np.testing.assert_array_equal(out[1], [2.5, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(rows[0], [[1.0, 5.0], [107.0, 8.0]])
