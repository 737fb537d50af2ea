"""The seed's particle system: particles under gravity bouncing on the ground.

The integrate kernel of API.md plus a damped bounce, on every CPU core or on
the GPU.

    numba-sim run particles [--device cpu|cuda] [--frames N] [--out particles.png]
"""

import numpy as np

import numba_sim as sim


@sim.kernel
def integrate(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
    i = sim.tid()
    v[i] = v[i] + sim.vec3(0.0, -9.8, 0.0) * dt
    x[i] = x[i] + v[i] * dt


@sim.kernel
def bounce(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), restitution: float):
    i = sim.tid()
    if x[i].y < 0.0:
        x[i].y = -x[i].y
        v[i].y = -v[i].y * restitution


class Example:
    """``n`` particles in a block above the ground; ``step()`` advances one frame."""

    title = "particles bouncing on the ground"

    def __init__(self, device="cpu", n=100_000, substeps=8, seed=42):
        self.frame_dt = 1.0 / 60.0
        self.substeps = substeps
        self.sim_time = 0.0
        self.restitution = 0.8
        rng = np.random.default_rng(seed)
        positions = rng.uniform((-1.0, 0.5, -1.0), (1.0, 2.5, 1.0), (n, 3))
        velocities = rng.normal(0.0, 0.5, (n, 3))
        self.x = sim.from_numpy(positions, dtype=sim.vec3, device=device)
        self.v = sim.from_numpy(velocities, dtype=sim.vec3, device=device)

    def step(self):
        dt = self.frame_dt / self.substeps
        n = self.x.shape[0]
        for _ in range(self.substeps):
            sim.launch(integrate, dim=n, inputs=[self.x, self.v, dt])
            sim.launch(bounce, dim=n, inputs=[self.x, self.v, self.restitution])
        self.sim_time += self.frame_dt

    def positions(self):
        """A copy of the particle positions (a recorded frame must not change with the next step)."""
        return np.array(sim.to_numpy(self.x))

    def radius(self):
        return 0.01
