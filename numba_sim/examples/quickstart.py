"""Quickstart: particles falling onto a ground plane, with ``vec3`` in ``@njit`` code.

``python -m numba_sim.examples.quickstart [--particles N] [--steps N]``

Each particle is integrated with Warp-style value types inside plain Numba code
(semi-implicit Euler, a bouncy ground at y = 0), the same step runs as Python
for one particle to show that both compute the same numbers, and the end state
is summarized.
"""

import argparse
import time

import numba
import numpy as np

import numba_sim as sim

GRAVITY = sim.vec3(0.0, -9.8, 0.0)


@numba.njit
def step(p, v, dt):
    """One step of one particle: gravity, then a damped bounce on the ground."""
    v = v + GRAVITY * dt
    p = p + v * dt
    if p.y < 0.0:
        p = sim.vec3(p.x, -p.y, p.z)
        v = sim.vec3(v.x, -v.y, v.z) * 0.8
    return p, v


@numba.njit(parallel=True)
def simulate(positions, velocities, dt, steps):
    """Advance every particle *steps* times; positions/velocities are (n, 3) float32."""
    for i in numba.prange(positions.shape[0]):
        p = sim.vec3(positions[i, 0], positions[i, 1], positions[i, 2])
        v = sim.vec3(velocities[i, 0], velocities[i, 1], velocities[i, 2])
        for _ in range(steps):
            p, v = step(p, v, dt)
        for k in range(3):
            positions[i, k] = p[k]
            velocities[i, k] = v[k]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--particles", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=240)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(42)
    positions = rng.uniform(0.0, 2.0, (args.particles, 3)).astype(np.float32)
    velocities = np.zeros_like(positions)
    first_p, first_v = sim.vec3(*positions[0]), sim.vec3(*velocities[0])
    dt = np.float32(1.0 / 60.0)

    start = time.perf_counter()
    simulate(positions, velocities, dt, args.steps)
    elapsed = time.perf_counter() - start

    p, v = first_p, first_v
    for _ in range(args.steps):
        p, v = step.py_func(p, v, dt)  # the same step, run as Python
    assert np.allclose(np.asarray(p), positions[0], atol=1e-4), (p, positions[0])

    print(f"{args.particles} particles, {args.steps} steps in {elapsed:.2f} s "
          f"(including compilation), threading layer {numba.threading_layer()}")
    print(f"particle 0: compiled {sim.vec3(*positions[0])}, Python {p}")
    heights = positions[:, 1]
    print(f"heights after {args.steps / 60:.1f} s: min {heights.min():.3f}, "
          f"mean {heights.mean():.3f}, max {heights.max():.3f}")
    print(f"mean speed {np.linalg.norm(velocities, axis=1).mean():.3f} m/s")


if __name__ == "__main__":
    main()
