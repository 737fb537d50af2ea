"""Atomics and random numbers on a real GPU, compared with the CPU.

Atomics: exact counts and old values under a million contending threads.
Random: randi/randu/randf are bit-identical to the CPU (and so to Warp); the
others use libdevice instead of libm and may be contracted to FMAs, so they
agree to float32 rounding.
"""

import numpy as np
import pytest
from numba import cuda

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")

N = 1 << 20


@sim.kernel
def contended(values: sim.array(dtype=sim.int32), counts: sim.array(dtype=sim.int32),
              sums: sim.array(dtype=sim.float64), extremes: sim.array(dtype=float),
              v3: sim.array(dtype=sim.vec3), old_counts: sim.array(dtype=sim.int32),
              old_v3: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    v = values[i]
    old_counts[i] = sim.atomic_add(counts, 0, 1)
    sim.atomic_sub(counts, 1, 1)
    sim.atomic_min(counts, 2, v)
    sim.atomic_max(counts, 3, v)
    sim.atomic_add(sums, 0, 0.25)
    sim.atomic_min(extremes, 0, sim.float32(v))
    sim.atomic_max(extremes, 1, sim.float32(v))
    old_v3[i] = sim.atomic_add(v3, 0, sim.vec3(1.0, 2.0, 3.0))


def test_atomics_under_contention_on_the_gpu():
    values = (np.random.default_rng(1).permutation(N) - N // 2).astype(np.int32)
    device = {
        "values": cuda.to_device(values), "counts": cuda.to_device(np.zeros(4, np.int32)),
        "sums": cuda.to_device(np.zeros(1, np.float64)),
        "extremes": cuda.to_device(np.zeros(2, np.float32)),
        "v3": cuda.to_device(np.zeros((1, 3), np.float32)),
        "old_counts": cuda.to_device(np.full(N, -1, np.int32)),
        "old_v3": cuda.to_device(np.zeros((N, 3), np.float32)),
    }
    sim.launch(contended, dim=N, inputs=list(device.values()))
    sim.synchronize()
    host = {name: array.copy_to_host() for name, array in device.items()}
    assert host["counts"].tolist() == [N, -N, int(values.min()), int(values.max())]
    assert host["sums"][0] == N / 4
    assert host["extremes"].tolist() == [values.min(), values.max()]
    np.testing.assert_array_equal(host["v3"][0], [N, 2 * N, 3 * N])
    np.testing.assert_array_equal(np.sort(host["old_counts"]), np.arange(N))
    for k in range(3):
        np.testing.assert_array_equal(np.sort(host["old_v3"][:, k]), (k + 1) * np.arange(N))


@sim.func
def draw_in_func(s):
    return sim.randf(s)


@sim.kernel
def draws(seed: int, ints: sim.array(dtype=sim.int32, ndim=2),
          uints: sim.array(dtype=sim.uint32, ndim=2), floats: sim.array(dtype=float, ndim=2)):
    i = sim.tid()
    s = sim.rand_init(seed, i)
    uints[i, 0] = s
    for k in range(8):
        floats[i, k] = sim.randf(s)
    floats[i, 8] = draw_in_func(s)  # advances s in place, on the device too
    ints[i, 0] = sim.randi(s)
    ints[i, 1] = sim.randi(s, -5, 17)
    uints[i, 1] = sim.randu(s)
    uints[i, 2] = sim.randu(s, 3, 1000)
    floats[i, 9] = sim.randf(s, -2.0, 3.0)
    floats[i, 10] = sim.randn(s)
    a = sim.sample_unit_sphere(s)
    b = sim.sample_unit_sphere_surface(s)
    c = sim.sample_unit_cube(s)
    for k in range(3):
        floats[i, 11 + k] = a[k]
        floats[i, 14 + k] = b[k]
        floats[i, 17 + k] = c[k]
    uints[i, 3] = s


def test_random_numbers_on_the_gpu_match_the_cpu():
    count = 4096
    shapes = [((count, 2), np.int32), ((count, 4), np.uint32), ((count, 20), np.float32)]
    cpu = [np.zeros(shape, dtype) for shape, dtype in shapes]
    sim.launch(draws, dim=count, inputs=[7, *cpu])
    gpu = [cuda.to_device(np.zeros(shape, dtype)) for shape, dtype in shapes]
    sim.launch(draws, dim=count, inputs=[7, *gpu])
    sim.synchronize()
    ints, uints, floats = (array.copy_to_host() for array in gpu)
    np.testing.assert_array_equal(ints, cpu[0])
    np.testing.assert_array_equal(uints, cpu[1])
    np.testing.assert_array_equal(floats[:, :9], cpu[2][:, :9])  # randf, bit for bit
    np.testing.assert_allclose(floats[:, 9:], cpu[2][:, 9:], rtol=1e-5, atol=1e-6)
