"""``physics.SolverXPBD``: extended position-based dynamics for particles.

Per step (one substep): predict ``x* = x + (v + (f / m + g) dt) dt``; then
``iterations`` passes over particle-particle contacts (HashGrid), particle-shape
contacts, distance constraints (springs), bending edges and tetrahedra
(``numba_sim/physics/xpbd_constraints.py``), the multipliers starting from zero
each step; finally ``v = (x - x0) / dt``.  Triangles are ignored, as in warp.sim
and newton (XPBD cloth needs springs).

Small CPU models run a whole substep in one serial launch and apply each
correction at once (Gauss-Seidel); large models and CUDA run one kernel per
constraint type with the corrections summed and applied after each pass
(Jacobi, as warp.sim); on one CPU thread the Jacobi springs and bending edges run as
gather / vectorized compute / scatter loops instead (physics/batched.py, the same bits),
and a model of springs and bending edges only runs its whole substep in one launch
(``xpbd_constraints.batched_substep_kernel``).

Under a ``sim.Tape`` a substep takes the Jacobi path of one thread per constraint with
fresh arrays for every position, correction and multiplier it writes (``_step_taped``),
so that the tape's backward replays each launch with the values it read.
"""

import numba
import numpy as np

import numba_sim as sim
from numba_sim.physics import batched
from numba_sim.physics import differentiable
from numba_sim.physics import xpbd_constraints as xc
from numba_sim.physics.kernels import make_struct
from numba_sim.physics import rigid_step
from numba_sim.physics.model import Contacts, Model
from numba_sim.physics.stepping import SubstepLaunches
from numba_sim.physics.solver_semi_implicit import (
    FUSED_WORK_LIMIT, SolverSemiImplicit, check_step_arguments,
)


BATCHED_WORK_LIMIT = 4 * FUSED_WORK_LIMIT
"""CPU models above FUSED_WORK_LIMIT and below this run their Jacobi substep on one thread
(batched loops) even when numba has several: a frame of the 21 x 21 XPBD cloth (work 19,848)
took 7.7 ms that way against 11.8 ms in parallel launches on 2 threads (load 5.6)."""


class SolverXPBD(SubstepLaunches):
    """XPBD (API-physics.md): springs as compliant distance constraints (compliance
    ``1 / ke``), bending edges, neo-Hookean tetrahedra, contacts with friction.

    Rigid bodies, joints and rigid contacts follow Müller et al. 2020 (xpbd_rigid.py);
    ``angular_damping`` damps the bodies' angular velocities.
    ``fuse``: None chooses (one serial Gauss-Seidel launch per substep for small CPU
    models), True or False forces it (True on the CPU only).
    """

    DIFFERENTIABLE = True
    """steps run under a ``sim.Tape``: each substep then takes the Jacobi path of one
    thread per constraint with fresh arrays for everything it writes (``_step_taped``)"""

    def __init__(self, model, iterations=2, angular_damping=0.0, fuse=None):
        call = "SolverXPBD"
        if not isinstance(model, Model):
            raise ValueError(f"{call}: model must be a physics Model, got {model!r}")
        if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or \
                iterations < 1:
            raise ValueError(f"{call}: iterations must be an int >= 1, got {iterations!r}")
        angular_damping = float(angular_damping)
        if not (np.isfinite(angular_damping) and angular_damping >= 0.0):
            raise ValueError(f"{call}: angular_damping must be finite and >= 0, got "
                             f"{angular_damping!r}")
        self.model = model
        self.iterations = int(iterations)
        self.angular_damping = angular_damping
        xp = model._xp
        cpu = xp is np
        work = (model.particle_count + model.spring_count * 2 + model.edge_count * 4
                + model.tet_count * 8) * self.iterations
        if fuse is None:
            fuse = cpu and work < FUSED_WORK_LIMIT
        elif fuse and not cpu:
            raise ValueError(f"{call}: fuse=True runs a substep on one CPU thread; the model is "
                             f"on {model.device!r}")
        self.fused = bool(fuse)
        self.batched = cpu and not self.fused and (numba.get_num_threads() == 1
                                                   or work < BATCHED_WORK_LIMIT)
        # Jacobi on one thread: springs and bending edges as batched loops (batched.py; the
        # same bits as their one-thread-per-element kernels run serially)
        self._batch_rows = None
        self.batched_one_launch = True   # batched, springs and edges only: a substep is one
        #   launch (xpbd_constraints.batched_substep_kernel); False: one launch per pass
        self.rigid_world_threads = True   # bodies: one thread per world where they allow
        #   (rigid_step.world_groups); False runs every world on one thread
        self._cpu = cpu
        n = model.particle_count
        self._x0 = xp.zeros((n, 3), dtype=np.float32)
        self._x_pred = xp.zeros((n, 3), dtype=np.float32)
        self._delta = xp.zeros((n, 3), dtype=np.float32)
        self._spring_lambdas = xp.zeros(model.spring_count, dtype=np.float32)
        self._edge_lambdas = xp.zeros(model.edge_count, dtype=np.float32)
        self._tet_lambdas = xp.zeros((model.tet_count, 2), dtype=np.float32)
        self._lambda_count = max(model.spring_count, model.edge_count, model.tet_count)
        self._no_contacts = Contacts(model, soft_contact_max=0)
        self.particle_grid = None
        self._fused_key = None
        self._fused_model = None
        self._init_launches(cpu)
        if self.fused:
            self._scratch = make_struct(xc.XpbdScratch, x0=self._x0, x_pred=self._x_pred,
                                        spring_lambdas=self._spring_lambdas,
                                        edge_lambdas=self._edge_lambdas,
                                        tet_lambdas=self._tet_lambdas)

    _particle_contacts = SolverSemiImplicit._particle_contacts
    _particle_grid = SolverSemiImplicit._particle_grid

    def _fused_struct(self):
        """The model's arrays and parameters as one struct, remade when an attribute of the
        model was assigned (or its gravity changed) since the last step."""
        m = self.model
        key = (m._version, m.gravity.tobytes())
        if key != self._fused_key:
            self._fused_model = make_struct(
                xc.XpbdModel, inv_mass=m.particle_inv_mass, flags=m.particle_flags,
                radius=m.particle_radius, world=m.particle_world, spring_indices=m.spring_indices,
                spring_rest=m.spring_rest_length, spring_stiffness=m.spring_stiffness,
                spring_damping=m.spring_damping, edge_indices=m.edge_indices,
                edge_rest=m.edge_rest_angle, edge_properties=m.edge_bending_properties,
                tet_indices=m.tet_indices, tet_poses=m.tet_poses, tet_materials=m.tet_materials,
                shape_mu=m.shape_material_mu, soft_mu=m.soft_contact_mu,
                particle_mu=m.particle_mu, max_radius=m.particle_max_radius,
                gravity=sim.vec3(*(float(g) for g in m.gravity)), v_max=m.particle_max_velocity)
            self._fused_key = key
        return self._fused_model

    def _check_tape(self, call, state_in, state_out, control, contacts):
        """Under a recording tape: no rigid bodies, no particle-particle contacts, a fresh
        *state_out* (as SolverSemiImplicit)."""
        SolverSemiImplicit._check_tape(self, call, state_in, state_out, control, contacts)

    def step(self, state_in, state_out, control, contacts, dt):
        """Advance by *dt* from *state_in* (plus its external ``particle_f``) into
        *state_out* (which may be *state_in*, except under a ``sim.Tape``)."""
        m = self.model
        dt = check_step_arguments("SolverXPBD.step", m, state_in, state_out, control, contacts,
                                  dt)
        taping = differentiable.taping()
        if taping:
            self._check_tape("SolverXPBD.step", state_in, state_out, control, contacts)
        if m.body_count:
            rigid_step.step_xpbd(self, state_in, state_out, control, contacts, dt)
        if m.particle_count == 0:
            return state_out
        contacts = self._no_contacts if contacts is None else contacts
        tet_act = m.tet_activations if control is None else control.tet_activations
        q, qd = state_in.particle_q, state_in.particle_qd
        x = state_out.particle_q
        self._check_capturable("SolverXPBD.step")
        grid = self._particle_grid()
        if grid is not None:
            grid.build(q, 2.0 * m.particle_max_radius)
        grid_id = grid.id if grid is not None else 0
        contact_arrays = [contacts.soft_contact_count, contacts.soft_contact_particle,
                          contacts.soft_contact_shape, contacts.soft_contact_body_pos,
                          contacts.soft_contact_normal]
        if taping:
            self._step_taped(q, qd, state_in.particle_f, tet_act, contacts, contact_arrays,
                             dt, state_out)
            return state_out
        if self.fused:
            self._launch(xc.fused_xpbd_substep_kernel, 1, [
                q, qd, state_in.particle_f, self._fused_struct(), self._scratch, tet_act,
                self.iterations, m.particle_count if grid is not None else 0, grid_id,
                *contact_arrays, dt, x, state_out.particle_qd])
            return state_out
        n = m.particle_count
        x0, delta = self._x0, self._delta
        launch = self._launch
        if self.batched and self.batched_one_launch and grid is None \
                and not contacts.soft_contact_max and not m.tet_count:
            # springs and bending edges only: the whole substep in one launch
            launch(xc.batched_substep_kernel, 1, [
                q, qd, state_in.particle_f, m.particle_inv_mass, m.particle_flags,
                self._gravity(), dt, m.spring_indices, m.spring_rest_length,
                m.spring_stiffness, m.spring_damping, m.edge_indices, m.edge_rest_angle,
                m.edge_bending_properties, self.iterations, m.particle_max_velocity, x0,
                self._x_pred, self._spring_lambdas, self._edge_lambdas,
                self._batch_scratch(), delta, x, state_out.particle_qd])
            return state_out
        launch(xc.predict_kernel, n,
               [q, qd, state_in.particle_f, m.particle_inv_mass, m.particle_flags,
                self._gravity(), dt, x0, x, self._x_pred, state_out.particle_qd])
        launch(xc.zero_lambdas_kernel, self._lambda_count,
               [self._spring_lambdas, self._edge_lambdas, self._tet_lambdas])
        for _ in range(self.iterations):
            self._iteration(x, x0, tet_act, grid_id if grid is not None else None, contacts,
                            contact_arrays, dt, self._spring_lambdas, self._edge_lambdas,
                            self._tet_lambdas, self._spring_lambdas, self._edge_lambdas,
                            self._tet_lambdas, delta, True, x)
        launch(xc.finish_kernel, n,
               [x, self._x_pred, state_out.particle_qd, m.particle_flags, dt,
                m.particle_max_velocity, state_out.particle_qd])
        if not self._cpu:
            sim.synchronize()
        return state_out

    def _batch_scratch(self):
        if self._batch_rows is None:
            self._batch_rows = batched.make_scratch(self.model, ("spring", "bend"))
        return self._batch_rows

    def _iteration(self, x, x0, tet_act, grid_id, contacts, contact_arrays, dt, spring_lambdas,
                   edge_lambdas, tet_lambdas, spring_out, edge_out, tet_out, delta, clear,
                   x_out):
        """One pass over the constraints from the positions *x*: corrections summed into
        *delta* (Jacobi), multipliers ``*_out = *_lambdas + dlambda`` (the same arrays
        outside a tape), then ``x_out = x + delta``."""
        m = self.model
        launch = self._launch
        if grid_id is not None:
            launch(xc.particle_contact_constraint_kernel, m.particle_count,
                   [grid_id, x, x0, m.particle_inv_mass, m.particle_radius, m.particle_flags,
                    m.particle_world, m.particle_mu, m.particle_max_radius, delta])
        if contacts.soft_contact_max:
            launch(xc.shape_contact_constraint_kernel, contacts.soft_contact_max,
                   [x, x0, m.particle_inv_mass, m.particle_radius, m.particle_flags,
                    m.shape_material_mu, m.soft_contact_mu, *contact_arrays, delta])
        batched_pass = self.batched and not differentiable.taping()
        if batched_pass and (m.spring_count or m.edge_count):
            # (in place only: the batched rows are scratch shared by every pass)
            launch(xc.batched_jacobi_kernel, 1,
                   [x, x0, m.particle_inv_mass, m.spring_indices, m.spring_rest_length,
                    m.spring_stiffness, m.spring_damping, m.edge_indices,
                    m.edge_rest_angle, m.edge_bending_properties, dt, spring_lambdas,
                    edge_lambdas, self._batch_scratch(), delta])
        if m.spring_count and not batched_pass:
            launch(xc.distance_kernel, m.spring_count,
                   [x, x0, m.particle_inv_mass, m.spring_indices, m.spring_rest_length,
                    m.spring_stiffness, m.spring_damping, dt, spring_lambdas, spring_out,
                    delta])
        if m.edge_count and not batched_pass:
            launch(xc.bending_constraint_kernel, m.edge_count,
                   [x, m.particle_inv_mass, m.edge_indices, m.edge_rest_angle,
                    m.edge_bending_properties, dt, edge_lambdas, edge_out, delta])
        if m.tet_count:
            launch(xc.tetrahedron_constraint_kernel, m.tet_count,
                   [x, m.particle_inv_mass, m.tet_indices, m.tet_poses, tet_act,
                    m.tet_materials, dt, tet_lambdas, tet_out, delta])
        launch(xc.apply_deltas_kernel, m.particle_count, [x, delta, clear, x_out])

    def _step_taped(self, q, qd, f_ext, tet_act, contacts, contact_arrays, dt, state_out):
        """The Jacobi substep of one thread per constraint, every array it writes fresh
        (start and predicted positions, v*, each iteration's positions, corrections and
        multipliers), so that no recorded launch's inputs are overwritten before the tape's
        backward replays them; the last iteration writes ``state_out.particle_q``.  (As
        warp.sim's XPBDIntegrator when ``model.requires_grad``.)"""
        m = self.model
        xp = m._xp
        n = m.particle_count

        def fresh(array):
            return xp.zeros_like(array)

        x0, x, x_pred, v_pred = (fresh(self._x0) for _ in range(4))
        self._launch(xc.predict_kernel, n,
                     [q, qd, f_ext, m.particle_inv_mass, m.particle_flags, self._gravity(), dt,
                      x0, x, x_pred, v_pred])
        lambdas = [fresh(self._spring_lambdas), fresh(self._edge_lambdas),
                   fresh(self._tet_lambdas)]
        for k in range(self.iterations):
            out = [fresh(a) for a in lambdas]
            x_out = state_out.particle_q if k == self.iterations - 1 else fresh(x)
            self._iteration(x, x0, tet_act, None, contacts, contact_arrays, dt, *lambdas, *out,
                            fresh(self._delta), False, x_out)
            x, lambdas = x_out, out
        self._launch(xc.finish_kernel, n,
                     [x, x_pred, v_pred, m.particle_flags, dt, m.particle_max_velocity,
                      state_out.particle_qd])
        if not self._cpu:
            sim.synchronize()
