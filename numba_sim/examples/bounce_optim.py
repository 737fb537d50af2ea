"""warp.sim's bounce optimisation (warp/examples/optim/example_bounce.py, warp-lang 1.9.1)
on numba_sim.physics: gradient descent on a particle's initial velocity so that, after
bouncing off the ground and a wall for 0.6 s, it ends at a target.

Same scene, parameters and optimiser as Warp's: one particle of mass 1 at (-0.5, 1, 0)
thrown at (5, -5, 0); a static box (half extents 0.25, 1, 1) at (2, 1, 0) and the ground,
contact ke 1e4, kd 10, kf 0, mu 0.2; 36 frames of 8 substeps (288 steps of 1/480 s);
loss = |x_final - (-2, 1.5, 0)|^2; ``qd -= 0.02 * dloss/dqd`` per iteration.  Contacts
are found once, before the tape (warp.sim's "one-shot contact creation"); the solver
recomputes each contact's depth from the positions every substep, so gradients flow
through the depth.  Every substep writes a fresh State (a tape replays them in backward).

    python -m numba_sim.examples.bounce_optim [--iters 250]
"""

import argparse

import numpy as np

import numba_sim as sim
from numba_sim import physics


@sim.kernel
def loss_kernel(pos: sim.array(dtype=sim.vec3), target: sim.vec3, loss: sim.array(dtype=float)):
    delta = pos[0] - target
    loss[0] = sim.dot(delta, delta)


@sim.kernel
def step_kernel(x: sim.array(dtype=sim.vec3), grad: sim.array(dtype=sim.vec3), alpha: float):
    tid = sim.tid()
    x[tid] = x[tid] - grad[tid] * alpha


class Example:
    """``step()``: one forward under a tape, backward, and a gradient step on the initial
    velocity; ``loss_history`` holds each iteration's loss (before its update)."""

    def __init__(self, device="cpu", sim_duration=0.6, fps=60, substeps=8, train_rate=0.02):
        self.frame_dt = 1.0 / fps
        frame_steps = int(sim_duration / self.frame_dt)
        self.sim_substeps = substeps
        self.sim_steps = frame_steps * substeps
        self.sim_dt = self.frame_dt / substeps
        self.train_rate = train_rate
        self.iter = 0
        self.loss_history = []

        ke, kf, kd, mu = 1.0e4, 0.0, 1.0e1, 0.2
        cfg = physics.ShapeConfig(ke=ke, kd=kd, kf=kf, mu=mu)
        builder = physics.ModelBuilder(up_axis="y", gravity=-9.80665)   # warp.sim's gravity
        builder.add_particle((-0.5, 1.0, 0.0), (5.0, -5.0, 0.0), 1.0)
        builder.add_shape_box(-1, xform=((2.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0)), hx=0.25,
                              hy=1.0, hz=1.0, cfg=cfg)
        builder.add_ground_plane(cfg=cfg)        # warp.sim's model.ground = True
        self.model = builder.finalize(device=device, requires_grad=True)
        m = self.model
        m.soft_contact_ke, m.soft_contact_kf, m.soft_contact_kd, m.soft_contact_mu = ke, kf, kd, mu
        m.soft_contact_margin = 10.0
        self.solver = physics.SolverSemiImplicit(m)
        self.target = sim.vec3(-2.0, 1.5, 0.0)
        self.loss = sim.zeros(1, dtype=np.float32, device=device, requires_grad=True)
        self.states = [m.state() for _ in range(self.sim_steps + 1)]
        # one-shot contact creation (a constant normal per contact: the ground and the wall)
        self.contacts = m.collide(self.states[0])
        self.tape = sim.Tape()

    def forward(self):
        for i in range(self.sim_steps):
            self.states[i].clear_forces()
            self.solver.step(self.states[i], self.states[i + 1], None, self.contacts,
                             self.sim_dt)
        sim.launch(loss_kernel, dim=1, inputs=[self.states[-1].particle_q, self.target,
                                               self.loss])
        return self.loss

    def gradient(self):
        """dloss/d(initial velocity) of the current initial velocity (and the loss)."""
        self.tape.reset()
        with self.tape:
            self.forward()
        self.tape.backward(loss=self.loss)
        return float(self.loss[0]), sim.grad(self.states[0].particle_qd).copy()

    def step(self):
        loss, _ = self.gradient()
        self.loss_history.append(loss)
        x = self.states[0].particle_qd
        sim.launch(step_kernel, dim=len(x), inputs=[x, sim.grad(x), self.train_rate])
        self.tape.zero()
        self.iter += 1
        return loss

    def check_grad(self, eps=1.0e-3):
        """(analytic, central-difference) gradients of the loss w.r.t. the initial velocity."""
        qd = self.states[0].particle_qd
        numeric = np.zeros(3)
        for k in range(3):
            old = float(qd[0, k])
            qd[0, k] = old + eps
            hi = float(self.forward()[0])
            qd[0, k] = old - eps
            lo = float(self.forward()[0])
            qd[0, k] = old
            numeric[k] = (hi - lo) / (2.0 * eps)
        _, analytic = self.gradient()
        self.tape.zero()
        return analytic[0], numeric


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=250)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    example = Example(device=args.device)
    analytic, numeric = example.check_grad()
    print(f"analytic grad: {analytic}\nnumeric grad:  {numeric}")
    for i in range(args.iters):
        loss = example.step()
        if i % 10 == 0 or i == args.iters - 1:
            print(f"iter {i:4d} loss {loss:.6f}")
    print("final initial velocity:", example.states[0].particle_qd[0])


if __name__ == "__main__":
    main()
