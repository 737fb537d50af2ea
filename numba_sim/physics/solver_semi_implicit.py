"""``physics.SolverSemiImplicit``: forces, then symplectic Euler.

Per substep: springs, cloth triangles (warp.sim's membrane FEM with drag and
lift), bending edges, tetrahedra (stable neo-Hookean), particle-particle
penalty contacts through a ``HashGrid``, particle-shape penalty contacts; then
``v += (f / m + g) dt; x += v dt``.

How a substep runs:

* small models on the CPU: one launch of ``fused_substep_kernel``, which does
  every phase for every element on one thread.  A 20-particle rope costs one
  launch (about 10-20 us) per substep instead of seven;
* large models on the CPU, and CUDA: one launch per phase, one thread per
  element (every core; every GPU thread).
"""

import math

import numba
import numpy as np

import numba_sim as sim
from numba_sim.physics import batched
from numba_sim.physics import differentiable
from numba_sim.physics import kernels
from numba_sim.physics import rigid_step
from numba_sim.physics.model import Contacts, Control, Model, State
from numba_sim.physics.slots import ElementSlots
from numba_sim.physics.stepping import SubstepLaunches

FUSED_WORK_LIMIT = 16384
"""CPU models whose per-substep work (elements weighted by their vertices) is below
this run a substep as one serial launch."""


def check_step_arguments(call, model, state_in, state_out, control, contacts, dt):
    for name, state in (("state_in", state_in), ("state_out", state_out)):
        if not isinstance(state, State):
            raise ValueError(f"{call}: {name} must be a physics State, got {state!r}")
        if state.particle_q.shape != (model.particle_count, 3):
            raise ValueError(f"{call}: {name} has {state.particle_q.shape[0]} particles, the "
                             f"model {model.particle_count} (a State of another model?)")
    if control is not None:
        if not isinstance(control, Control):
            raise ValueError(f"{call}: control must be a physics Control or None, got {control!r}")
        for name, count in (("tri_activations", model.tri_count),
                            ("tet_activations", model.tet_count),
                            ("joint_target_q", model.joint_dof_count),
                            ("joint_target_qd", model.joint_dof_count),
                            ("joint_f", model.joint_dof_count)):
            if getattr(control, name).shape != (count,):
                raise ValueError(f"{call}: control.{name} has shape "
                                 f"{getattr(control, name).shape}, the model has {count} "
                                 "entries (a Control of another model?)")
    if contacts is not None:
        if not isinstance(contacts, Contacts):
            raise ValueError(f"{call}: contacts must be physics Contacts or None, got "
                             f"{contacts!r}")
        if contacts.model is not model:
            raise ValueError(f"{call}: contacts were made by another model (use "
                             "model.contacts() or model.collide() of this model)")
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ValueError(f"{call}: dt must be a number, got {dt!r}") from None
    if not (math.isfinite(dt) and dt > 0.0):
        raise ValueError(f"{call}: dt must be finite and > 0, got {dt!r}")
    return dt


class SolverSemiImplicit(SubstepLaunches):
    """Semi-implicit (symplectic) Euler with penalty forces (API-physics.md).

    ``angular_damping`` and ``friction_smoothing`` are warp.sim's rigid-body settings:
    bodies' angular velocities are damped by ``angular_damping`` (rigid_step.py); the
    rigid contacts' friction is the plain ``min(kf |v_t|, mu f_n)``, so
    ``friction_smoothing`` is accepted and not used yet.  Particles use neither.

    ``fuse``: None chooses (one serial launch per substep for small CPU models, and for
    any CPU model when numba runs one thread), True or False forces it (True on the CPU
    only).
    """

    DIFFERENTIABLE = True
    """steps run under a ``sim.Tape``: each substep then takes the per-kernel path with
    fresh force arrays (``step``; docs/autodiff.md, "Differentiable physics")"""

    def __init__(self, model, angular_damping=0.05, friction_smoothing=1.0, fuse=None):
        call = "SolverSemiImplicit"
        if not isinstance(model, Model):
            raise ValueError(f"{call}: model must be a physics Model, got {model!r}")
        self.model = model
        for name, value in (("angular_damping", angular_damping),
                            ("friction_smoothing", friction_smoothing)):
            value = float(value)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"{call}: {name} must be finite and >= 0, got {value!r}")
            setattr(self, name, value)
        xp = model._xp
        self._cpu = model._xp is np
        work = (model.particle_count + model.spring_count * 2 + model.tri_count * 3
                + model.edge_count * 4 + model.tet_count * 4)
        if fuse is None:
            # one thread runs the fused substep faster than the phases at any size (no slots
            # to write and sum); the physics is the same, only float32 orders differ
            fuse = self._cpu and (work < FUSED_WORK_LIMIT or numba.get_num_threads() == 1)
        elif fuse and not self._cpu:
            raise ValueError(f"{call}: fuse=True runs a substep on one CPU thread; the model is "
                             f"on {model.device!r}")
        self.fused = bool(fuse)
        n = model.particle_count
        self._f = xp.zeros((n, 3), dtype=np.float32)
        self._no_contacts = Contacts(model, soft_contact_max=0)
        self.particle_grid = None
        self._fused_key = None
        self._fused_model = None
        self._slots_key = None
        self._slots = None
        self._scratch_key = None
        self._scratch = None
        self._init_launches(self._cpu)

    def _particle_contacts(self):
        """Whether a step computes particle-particle contacts (``model.particle_collision``
        may change after finalize)."""
        m = self.model
        return bool(m.particle_collision and m.particle_count > 1 and m.particle_max_radius > 0.0)

    def _particle_grid(self):
        """The HashGrid of particle-particle contacts, or None when they are off (made at the
        first step that needs it)."""
        m = self.model
        if not self._particle_contacts():
            return None
        if self.particle_grid is None:
            # a periodic grid of about 8 cells per particle (a 128^3 grid costs 0.3 ms to
            # clear on every build, which would dominate small models)
            n = m.particle_count
            side = int(min(128, max(8, math.ceil((8.0 * n) ** (1.0 / 3.0)))))
            self.particle_grid = sim.HashGrid(side, side, side, device=m.device)
            self.particle_grid.reserve(n)
        return self.particle_grid

    def _fused_struct(self):
        """The model's arrays and parameters as one struct, remade when an attribute of the
        model was assigned (or its gravity changed) since the last step."""
        m = self.model
        key = (m._version, m.gravity.tobytes())
        if key == self._fused_key:
            return self._fused_model
        self._fused_model = kernels.make_struct(
            kernels.FusedModel,
            inv_mass=m.particle_inv_mass, flags=m.particle_flags, radius=m.particle_radius,
            world=m.particle_world, spring_indices=m.spring_indices,
            spring_rest=m.spring_rest_length, spring_stiffness=m.spring_stiffness,
            spring_damping=m.spring_damping, tri_indices=m.tri_indices, tri_poses=m.tri_poses,
            tri_materials=m.tri_materials, edge_indices=m.edge_indices,
            edge_rest=m.edge_rest_angle, edge_properties=m.edge_bending_properties,
            tet_indices=m.tet_indices, tet_poses=m.tet_poses, tet_materials=m.tet_materials,
            shape_ke=m.shape_material_ke, shape_kd=m.shape_material_kd,
            shape_kf=m.shape_material_kf, shape_mu=m.shape_material_mu,
            soft_ke=m.soft_contact_ke, soft_kd=m.soft_contact_kd, soft_kf=m.soft_contact_kf,
            soft_mu=m.soft_contact_mu, particle_ke=m.particle_ke, particle_kd=m.particle_kd,
            particle_kf=m.particle_kf, particle_mu=m.particle_mu, cohesion=m.particle_cohesion,
            max_radius=m.particle_max_radius, gravity=sim.vec3(*(float(g) for g in m.gravity)),
            v_max=m.particle_max_velocity)
        self._fused_key = key
        return self._fused_model

    def _element_slots(self):
        """The element-force slots of the one-kernel-per-phase path, remade when an
        attribute of the model was assigned since the last step."""
        if self._slots_key != self.model._version:
            self._slots = ElementSlots(self.model)
            self._slots_key = self.model._version
        return self._slots

    def _batch_scratch(self):
        """The fused substep's element rows (batched.py), remade when an attribute of the
        model was assigned since the last step."""
        if self._scratch_key != self.model._version:
            self._scratch = batched.make_scratch(self.model, ("edge", "tri"))
            self._scratch_key = self.model._version
        return self._scratch

    def _check_tape(self, call, state_in, state_out, control, contacts):
        """Under a recording tape: a fresh *state_out* (differentiable.claim), and what is
        not differentiated yet refused by name (rigid bodies of SolverXPBD, which calls
        this too; particle-particle contacts)."""
        m = self.model
        if m.body_count and not isinstance(self, SolverSemiImplicit):
            raise ValueError(
                f"{call}: the model has {m.body_count} rigid bodies; its rigid substep "
                "(xpbd_rigid_substep_kernel) updates the bodies' poses, its scratch and the "
                "contacts' multipliers in place over its iterations, which a sim.Tape's "
                "backward would replay with their final values; step bodies under a tape "
                "with physics.SolverSemiImplicit (docs/autodiff.md)")
        if self._particle_contacts():
            raise ValueError(
                f"{call}: particle-particle contacts rebuild one HashGrid every substep, which "
                "the tape's backward would query with the last substep's particles; set "
                "model.particle_collision = False to step under a sim.Tape")
        differentiable.claim(call, "state_out", state_out, (state_in, control, contacts))

    @staticmethod
    def _contact_struct(contacts):
        """The struct of *contacts*' arrays, made once per Contacts."""
        struct = contacts.__dict__.get("_fused_arrays")
        if struct is None:
            struct = contacts._fused_arrays = kernels.make_struct(
                kernels.ContactArrays, count=contacts.soft_contact_count,
                particle=contacts.soft_contact_particle, shape=contacts.soft_contact_shape,
                body_pos=contacts.soft_contact_body_pos, normal=contacts.soft_contact_normal)
        return struct

    def step(self, state_in, state_out, control, contacts, dt):
        """Advance by *dt*: forces from *state_in* (plus its external ``particle_f``),
        positions and velocities into *state_out* (which may be *state_in*)."""
        m = self.model
        dt = check_step_arguments("SolverSemiImplicit.step", m, state_in, state_out, control,
                                  contacts, dt)
        taping = differentiable.taping()
        if taping:
            self._check_tape("SolverSemiImplicit.step", state_in, state_out, control, contacts)
        if m.body_count:
            rigid_step.step_semi_implicit(self, state_in, state_out, control, contacts, dt)
        if m.particle_count == 0:
            return state_out
        contacts = self._no_contacts if contacts is None else contacts
        tri_act = m.tri_activations if control is None else control.tri_activations
        tet_act = m.tet_activations if control is None else control.tet_activations
        q, qd = state_in.particle_q, state_in.particle_qd
        self._check_capturable("SolverSemiImplicit.step")
        grid = self._particle_grid()
        if grid is not None:
            grid.build(q, 2.0 * m.particle_max_radius + m.particle_cohesion)
        grid_id = grid.id if grid is not None else 0
        grid_count = m.particle_count if grid is not None else 0
        contact_args = [m.shape_material_ke, m.shape_material_kd, m.shape_material_kf,
                        m.shape_material_mu, m.soft_contact_ke, m.soft_contact_kd,
                        m.soft_contact_kf, m.soft_contact_mu, contacts.soft_contact_count,
                        contacts.soft_contact_particle, contacts.soft_contact_shape,
                        contacts.soft_contact_body_pos, contacts.soft_contact_normal]
        if self.fused and not taping:
            self._launch(kernels.fused_substep_kernel, 1, [
                q, qd, state_in.particle_f, self._f, self._fused_struct(), tri_act, tet_act,
                grid_count, grid_id, self._contact_struct(contacts), self._batch_scratch(), dt,
                state_out.particle_q, state_out.particle_qd])
            return state_out
        f = self._f
        f_ext = state_in.particle_f
        launch = self._launch
        e = self._element_slots()
        slots = e.slots
        if taping:
            # fresh scratch every substep, never an array an earlier substep's adjoint
            # replays: element forces into new slots; contact forces accumulate into a copy
            # of particle_f (integrate_kernel reads its ``f`` and zeroes it: given fresh
            # zeros, what its adjoint replays is what it read)
            xp = m._xp
            slots = xp.zeros_like(e.slots)
            f = xp.zeros_like(self._f)
            if grid is not None or contacts.soft_contact_max:
                f_ext = xp.empty_like(self._f)
                launch(differentiable.copy_kernel, m.particle_count, [state_in.particle_f, f_ext])
        if m.spring_count:
            launch(kernels.spring_kernel, m.spring_count,
                   [q, qd, m.spring_indices, m.spring_rest_length, m.spring_stiffness,
                    m.spring_damping, e.base["spring"], e.dest, slots])
        if m.tri_count:
            launch(kernels.triangle_kernel, m.tri_count,
                   [q, qd, m.tri_indices, m.tri_poses, tri_act, m.tri_materials, e.base["tri"],
                    e.dest, slots])
        if m.edge_count:
            launch(kernels.bending_kernel, m.edge_count,
                   [q, qd, m.edge_indices, m.edge_rest_angle, m.edge_bending_properties,
                    e.base["edge"], e.dest, slots])
        if m.tet_count:
            launch(kernels.tetrahedron_kernel, m.tet_count,
                   [q, qd, m.tet_indices, m.tet_poses, tet_act, m.tet_materials, e.base["tet"],
                    e.dest, slots])
        if grid is not None:
            launch(kernels.particle_contact_kernel, m.particle_count,
                   [grid_id, q, qd, m.particle_radius, m.particle_flags, m.particle_world,
                    m.particle_ke, m.particle_kd, m.particle_kf, m.particle_mu,
                    m.particle_cohesion, m.particle_max_radius, f_ext if taping else f])
        if contacts.soft_contact_max:
            launch(kernels.soft_contact_kernel, contacts.soft_contact_max,
                   [q, qd, m.particle_radius, m.particle_flags, *contact_args,
                    f_ext if taping else f])
        launch(kernels.integrate_kernel, m.particle_count,
               [q, qd, f_ext, f, slots, e.start, m.particle_inv_mass,
                m.particle_flags,
                self._gravity(), dt, m.particle_max_velocity, state_out.particle_q,
                state_out.particle_qd])
        if not self._cpu:
            sim.synchronize()
        return state_out
