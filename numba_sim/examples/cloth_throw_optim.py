"""warp.sim's cloth-throw optimisation (warp/examples/optim/example_cloth_throw.py,
warp-lang 1.9.1) on numba_sim.physics: gradient descent on the initial velocities of a
cloth's particles so that, 2 s after it is thrown, its centre of mass is at a target.

Same scene, parameters and optimiser as Warp's: a 16 x 16-cell cloth grid (289 particles
of mass 1, cells 1/16 m) at the origin, turned -45 degrees about x, thrown at
(0.1, 0.1, 0); triangles ke = ka = 1e4, kd 100, drag 5, lift 10; bending edges warp.sim's
default (ke 100, kd 0); no ground; 120 frames of 16 substeps (1920 steps of 1/960 s);
loss = |centre of mass - (8, 0, 0)|^2; ``qd -= 5 * dloss/dqd`` per iteration.  The cloth
starts flat, so every bending edge starts at the dihedral angle 0: the gradient is finite
because ``forces.dihedral_angle`` is ``atan2``-based (an ``acos`` angle's derivative is
infinite there).  Particle-particle contacts are off: in Warp's example they do nothing
(its particle hash grid is never built, so ``eval_particle_forces_kernel`` returns at once).
Every substep writes a fresh State (a tape replays them in backward).

    python -m numba_sim.examples.cloth_throw_optim [--iters 64]
"""

import argparse
import math

import numpy as np

import numba_sim as sim
from numba_sim import physics


@sim.kernel
def com_kernel(positions: sim.array(dtype=sim.vec3), n: int, com: sim.array(dtype=sim.vec3)):
    tid = sim.tid()
    sim.atomic_add(com, 0, positions[tid] / float(n))


@sim.kernel
def loss_kernel(com: sim.array(dtype=sim.vec3), target: sim.vec3, loss: sim.array(dtype=float)):
    delta = com[0] - target
    loss[0] = sim.dot(delta, delta)


@sim.kernel
def step_kernel(x: sim.array(dtype=sim.vec3), grad: sim.array(dtype=sim.vec3), alpha: float):
    tid = sim.tid()
    x[tid] = x[tid] - grad[tid] * alpha


class Example:
    """``step()``: one forward under a tape, backward, and a gradient step on the initial
    velocities; ``loss_history`` holds each iteration's loss (before its update).
    *sim_duration*, *substeps* and *dim* shorten the run (tests); the defaults are Warp's."""

    def __init__(self, device="cpu", sim_duration=2.0, fps=60, substeps=16, train_rate=5.0,
                 dim=16):
        if not sim_duration > 0.0:
            raise ValueError(f"Example: sim_duration must be > 0, got {sim_duration!r}")
        self.frame_dt = 1.0 / fps
        frame_steps = int(round(sim_duration / self.frame_dt))
        if frame_steps < 1:
            raise ValueError(f"Example: sim_duration ({sim_duration!r}) is shorter than one "
                             f"frame (1/{fps} s)")
        self.sim_substeps = substeps
        self.sim_steps = frame_steps * substeps
        self.sim_dt = self.frame_dt / substeps
        self.train_rate = train_rate
        self.iter = 0
        self.loss_history = []

        builder = physics.ModelBuilder(up_axis="y", gravity=-9.80665)   # warp.sim's gravity
        builder.default_particle_radius = 0.01
        half = -math.pi * 0.25 * 0.5                 # quat_from_axis_angle((1, 0, 0), -pi/4)
        builder.add_cloth_grid(pos=(0.0, 0.0, 0.0), rot=(math.sin(half), 0.0, 0.0, math.cos(half)),
                               vel=(0.1, 0.1, 0.0), dim_x=dim, dim_y=dim, cell_x=1.0 / dim,
                               cell_y=1.0 / dim, mass=1.0, tri_ke=1.0e4, tri_ka=1.0e4,
                               tri_kd=100.0, tri_lift=10.0, tri_drag=5.0)
        self.model = builder.finalize(device=device, requires_grad=True)
        self.model.particle_collision = False        # no-ops in Warp's example (see above)
        self.solver = physics.SolverSemiImplicit(self.model)
        self.target = sim.vec3(8.0, 0.0, 0.0)
        self.com = sim.zeros(1, dtype=sim.vec3, device=device, requires_grad=True)
        self.loss = sim.zeros(1, dtype=np.float32, device=device, requires_grad=True)
        self.states = [self.model.state() for _ in range(self.sim_steps + 1)]
        self.tape = sim.Tape()

    def forward(self):
        for i in range(self.sim_steps):
            self.states[i].clear_forces()
            self.solver.step(self.states[i], self.states[i + 1], None, None, self.sim_dt)
        self.com.fill(0.0)
        n = self.model.particle_count
        sim.launch(com_kernel, dim=n, inputs=[self.states[-1].particle_q, n, self.com])
        sim.launch(loss_kernel, dim=1, inputs=[self.com, self.target, self.loss])
        return self.loss

    def gradient(self):
        """(loss, dloss/d(initial velocities)) at the current initial velocities."""
        self.tape.reset()
        with self.tape:
            self.forward()
        self.tape.backward(loss=self.loss)
        return float(self.loss[0]), np.array(sim.grad(self.states[0].particle_qd))

    def step(self):
        loss, _ = self.gradient()
        self.loss_history.append(loss)
        x = self.states[0].particle_qd
        sim.launch(step_kernel, dim=len(x), inputs=[x, sim.grad(x), self.train_rate])
        self.tape.zero()
        self.iter += 1
        return loss

    def taped_loss(self):
        """The loss of the current initial velocities by the path the gradient takes (the
        per-kernel substeps of a recording tape, not the fused one: the same function, and
        no second compile)."""
        self.tape.reset()
        with self.tape:
            loss = float(self.forward()[0])
        self.tape.reset()
        return loss

    def directional_check(self, directions, eps=0.1):
        """For each *direction* (arrays shaped like the initial velocities, made unit): (the
        gradient's component along it, its central difference ``(L(qd + eps d) - L(qd - eps
        d)) / 2 eps``)."""
        _, grad = self.gradient()
        self.tape.zero()
        qd = self.states[0].particle_qd
        base = np.array(qd)
        out = []
        for d in directions:
            d = np.asarray(d, dtype=np.float64)
            if d.shape != base.shape:
                raise ValueError(f"directional_check: a direction has shape {d.shape}, the "
                                 f"initial velocities {base.shape}")
            d = d / np.linalg.norm(d)
            qd[:] = (base + eps * d).astype(np.float32)
            hi = self.taped_loss()
            qd[:] = (base - eps * d).astype(np.float32)
            lo = self.taped_loss()
            qd[:] = base
            out.append((float(np.sum(grad * d)), (hi - lo) / (2.0 * eps)))
        return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=64)   # Warp's --train_iters
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    example = Example(device=args.device)
    for i in range(args.iters):
        loss = example.step()
        if i % 4 == 0 or i == args.iters - 1:
            print(f"iter {i:4d} loss {loss:.6f}")
    print("final centre of mass:", np.asarray(example.com)[0])


if __name__ == "__main__":
    main()
