"""Builtins benchmark (issue 4): value types vs the same math by hand, in one run.

1M applications of ``quat_rotate`` + ``transform_point`` + ``inverse(mat33)``
in a serial ``@njit`` loop, inputs read from float32 arrays (``sim.view``), a
checksum of every output component accumulated and printed so that nothing
folds away; against the same formulas (Warp's) written with scalar locals.
The two take turns, round after round; the medians and their ratio are
printed (target: <= 1.05), and written as a table with ``--json FILE``
(``python -m benchmarks``). The checksums are checked equal.

    python benchmarks/bench_builtins.py [--n 1000000] [--repeat 15] [--json FILE]
"""

import argparse
import os
import sys

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import Table, finish, interleaved_medians, load_average, ms  # noqa: E402

import numba_sim as sim  # noqa: E402


@numba.njit
def with_value_types(q, p, t, m):
    quats, points = sim.view(q, sim.quat), sim.view(p, sim.vec3)
    transforms, matrices = sim.view(t, sim.transform), sim.view(m, sim.mat33)
    checksum = 0.0
    for i in range(q.shape[0]):
        r = sim.quat_rotate(quats[i], points[i])
        w = sim.transform_point(transforms[i], points[i])
        inv = sim.inverse(matrices[i])
        checksum += r.x + r.y + r.z + w.x + w.y + w.z
        for j in range(3):
            checksum += inv[j, 0] + inv[j, 1] + inv[j, 2]
    return checksum


@numba.njit
def rotate_by_hand(qx, qy, qz, qw, x, y, z):
    two, one = np.float32(2.0), np.float32(1.0)
    c = two * qw * qw - one
    d = two * (qx * x + qy * y + qz * z)
    return (x * c + qx * d + (qy * z - qz * y) * qw * two,
            y * c + qy * d + (qz * x - qx * z) * qw * two,
            z * c + qz * d + (qx * y - qy * x) * qw * two)


@numba.njit
def by_hand(q, p, t, m):
    checksum = 0.0
    for i in range(q.shape[0]):
        x, y, z = p[i, 0], p[i, 1], p[i, 2]
        rx, ry, rz = rotate_by_hand(q[i, 0], q[i, 1], q[i, 2], q[i, 3], x, y, z)
        wx, wy, wz = rotate_by_hand(t[i, 3], t[i, 4], t[i, 5], t[i, 6], x, y, z)
        wx, wy, wz = t[i, 0] + wx, t[i, 1] + wy, t[i, 2] + wz
        checksum += rx + ry + rz + wx + wy + wz

        m00, m01, m02 = m[i, 0, 0], m[i, 0, 1], m[i, 0, 2]
        m10, m11, m12 = m[i, 1, 0], m[i, 1, 1], m[i, 1, 2]
        m20, m21, m22 = m[i, 2, 0], m[i, 2, 1], m[i, 2, 2]
        det = m00 * (m11 * m22 - m12 * m21) + m01 * (m12 * m20 - m10 * m22) \
            + m02 * (m10 * m21 - m11 * m20)
        if det != 0:
            rcp = np.float32(1.0) / det
            checksum += (m11 * m22 - m12 * m21) * rcp + (m02 * m21 - m01 * m22) * rcp \
                + (m01 * m12 - m02 * m11) * rcp
            checksum += (m12 * m20 - m10 * m22) * rcp + (m00 * m22 - m02 * m20) * rcp \
                + (m02 * m10 - m00 * m12) * rcp
            checksum += (m10 * m21 - m11 * m20) * rcp + (m01 * m20 - m00 * m21) * rcp \
                + (m00 * m11 - m01 * m10) * rcp
    return checksum


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    t = np.concatenate([rng.normal(size=(n, 3)), q[::-1]], axis=1).astype(np.float32)
    return (q, rng.normal(size=(n, 3)).astype(np.float32), np.ascontiguousarray(t),
            rng.normal(size=(n, 3, 3)).astype(np.float32))


def run(n, repeat):
    data = inputs(n)
    sums = {}

    def runner(name, fn):
        def call():
            sums[name] = fn(*data)
        return call

    times = interleaved_medians({"value types": runner("value types", with_value_types),
                                 "by hand": runner("by hand", by_hand)}, repeat)
    assert np.isclose(sums["value types"], sums["by hand"], rtol=1e-6), \
        "the two versions compute different sums"
    table = Table(f"{n:,} x (quat_rotate + transform_point + inverse(mat33)), serial @njit",
                  ["task", "value types", "by hand", "value types / by hand"])
    table.add("rotate + transform + inverse", ms(times["value types"]), ms(times["by hand"]),
              f"{times['value types'] / times['by hand']:.3f}")
    table.note(f"target: value types / by hand <= 1.05; checksums equal "
               f"({sums['value types']:.6e}, {sums['by hand']:.6e})")
    return [table]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", help="also write the tables to this file (python -m benchmarks)")
    args = parser.parse_args(argv)
    before = load_average()
    finish(run(args.n, args.repeat), args, before)


if __name__ == "__main__":
    main()
