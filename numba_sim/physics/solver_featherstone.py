"""``physics.SolverFeatherstone``: reduced-coordinate articulations (featherstone.py),
one thread per articulation, and ``physics.eval_fk`` / ``physics.eval_ik``.

The state of a Featherstone model is ``joint_q`` / ``joint_qd``; a step reads them
from ``state_in``, writes them to ``state_out`` and leaves ``state_out.body_q`` /
``body_qd`` by forward kinematics.  Rigid contacts (``model.collide``) act as penalty
forces (``rigid_kernels.rigid_contact_force_kernel``, the semi-implicit solver's) at
``state_in``'s body poses, mapped into the joints with ``body_f``.

Articulations are the model's joint trees: a joint whose parent is the world starts
one, and the joints below it follow it (each joint after its parent's joint, the
joints of one tree contiguous: the order ``ModelBuilder`` produces when each robot is
added whole).  Every body needs a joint (``add_joint_free`` for a floating body).
"""

import numpy as np

import numba_sim as sim
from numba_sim.physics import featherstone, rigid_kernels
from numba_sim.physics.builder_rigid import FREE
from numba_sim.physics.kernels import make_struct
from numba_sim.physics.model import Model
from numba_sim.physics.rigid_contacts import rigid_contact_arrays
from numba_sim.physics.rigid_step import joint_inputs
from numba_sim.physics.solver_semi_implicit import check_step_arguments
from numba_sim.physics.stepping import SubstepLaunches, capturing


def articulations(model, call):
    """(articulation_start, H_start, joint_parent_joint) of *model*'s joint trees (host
    arrays), or a ValueError naming what Featherstone cannot take."""
    parent = sim.to_numpy(model.joint_parent).astype(np.int64)
    child = sim.to_numpy(model.joint_child).astype(np.int64)
    jtype = sim.to_numpy(model.joint_type)
    qd_start = sim.to_numpy(model.joint_qd_start).astype(np.int64)
    joint_of_body = np.full(model.body_count, -1, dtype=np.int64)
    joint_of_body[child] = np.arange(model.joint_count)
    loose = np.flatnonzero(joint_of_body < 0)
    if len(loose):
        raise ValueError(f"{call}: bodies {loose[:8].tolist()} have no joint; Featherstone "
                         "needs a joint for every body (add_joint_free for a floating one)")
    parent_joint = np.where(parent >= 0, joint_of_body[np.maximum(parent, 0)], -1)
    starts = []
    for k in range(model.joint_count):
        if parent[k] < 0:
            starts.append(k)
            continue
        if jtype[k] == FREE:
            raise ValueError(f"{call}: joint {k} is a FREE joint under body {parent[k]}; "
                             "Featherstone takes free joints from the world only")
        if parent_joint[k] >= k or parent_joint[k] < starts[-1]:
            raise ValueError(f"{call}: joint {k} comes before its parent's joint or apart "
                             "from its tree (add each articulation's joints root first, "
                             "one articulation at a time)")
    starts.append(model.joint_count)
    starts = np.asarray(starts, dtype=np.int64)
    dofs = qd_start[starts[1:]] - qd_start[starts[:-1]]
    H_start = np.concatenate([[0], np.cumsum(dofs * dofs)])
    return starts, H_start, parent_joint


def _articulation_model(model, call):
    """The model's ArticulationModel struct (remade when a model attribute was assigned)."""
    entry = model.__dict__.get("_articulation_model")
    if entry is None or entry[0] != model._version:
        starts, H_start, parent_joint = articulations(model, call)
        struct = _joint_struct(model, starts, H_start, parent_joint)
        # (into __dict__: assigning a model attribute bumps its version)
        entry = model.__dict__["_articulation_model"] = (model._version, struct,
                                                         len(starts) - 1, int(H_start[-1]))
    return entry[1:]


def _joint_struct(model, starts, H_start, parent_joint):
    xp = model._xp
    i32 = np.int32
    return make_struct(
        featherstone.ArticulationModel,
        articulation_start=xp.asarray(starts, dtype=i32), H_start=xp.asarray(H_start, dtype=i32),
        joint_type=model.joint_type, joint_parent=model.joint_parent,
        joint_child=model.joint_child, joint_parent_joint=xp.asarray(parent_joint, dtype=i32),
        joint_X_p=model.joint_X_p, joint_X_c=model.joint_X_c, joint_axis=model.joint_axis,
        joint_q_start=model.joint_q_start, joint_qd_start=model.joint_qd_start,
        joint_linear_dofs=model.joint_linear_dofs, joint_armature=model.joint_armature, joint_target_ke=model.joint_target_ke,
        joint_target_kd=model.joint_target_kd, joint_limit_lower=model.joint_limit_lower,
        joint_limit_upper=model.joint_limit_upper, joint_limit_ke=model.joint_limit_ke,
        joint_limit_kd=model.joint_limit_kd, body_com=model.body_com,
        body_mass=model.body_mass, body_inertia=model.body_inertia)


def _articulation_scratch(model, h_size):
    xp = model._xp
    dofs = max(model.joint_dof_count, 1)
    bodies = max(model.body_count, 1)

    def vectors(n):
        return xp.zeros((n, 3), dtype=np.float32)

    return make_struct(
        featherstone.ArticulationScratch, X_l=xp.zeros((bodies, 7), dtype=np.float32),
        S_w=vectors(dofs), S_v=vectors(dofs),
        rhs=xp.zeros(dofs, dtype=np.float32), qdd=xp.zeros(dofs, dtype=np.float32),
        v_w=vectors(bodies), v_v=vectors(bodies), a_w=vectors(bodies), a_v=vectors(bodies),
        f_n=vectors(bodies), f_f=vectors(bodies), I_m=xp.zeros(bodies, dtype=np.float32),
        I_h=vectors(bodies), I_r=xp.zeros((bodies, 3, 3), dtype=np.float32),
        H=xp.zeros(max(h_size, 1), dtype=np.float32))


def eval_fk(model, joint_q, joint_qd, state):
    """Set ``state.body_q`` / ``body_qd`` from joint coordinates and velocities (forward
    kinematics of every articulation)."""
    call = "eval_fk"
    _check_kinematics(call, model, joint_q, joint_qd, state)
    struct, count, h_size = _articulation_model(model, call)
    if count:
        sim.launch(featherstone.eval_fk_kernel, dim=count, inputs=[
            struct, _articulation_scratch(model, 0), joint_q, joint_qd, state.body_q,
            state.body_qd])
    return state


def eval_ik(model, state, joint_q, joint_qd):
    """Set *joint_q* / *joint_qd* from ``state.body_q`` / ``body_qd`` (each joint's child
    frame read in its parent frame: hinge angles, slides, ball quaternions and angular
    velocities in the parent joint frame, free poses and the centre of mass's velocity);
    what the maximal-coordinate solvers leave of a model's joints."""
    call = "eval_ik"
    _check_kinematics(call, model, joint_q, joint_qd, state)
    if model.joint_count:
        # any joint tree (no articulation order needed: each joint reads its two bodies)
        none = np.zeros(1, dtype=np.int64)
        struct = _joint_struct(model, none, none, np.zeros(model.joint_count, np.int64))
        sim.launch(featherstone.eval_ik_kernel, dim=model.joint_count, inputs=[
            struct, state.body_q, state.body_qd, joint_q, joint_qd])
    return joint_q, joint_qd


def _check_kinematics(call, model, joint_q, joint_qd, state):
    if not isinstance(model, Model):
        raise ValueError(f"{call}: model must be a physics Model, got {model!r}")
    for name, value, size in (("joint_q", joint_q, model.joint_coord_count),
                              ("joint_qd", joint_qd, model.joint_dof_count)):
        if getattr(value, "shape", None) != (size,):
            raise ValueError(f"{call}: {name} must have shape ({size},), got "
                             f"{getattr(value, 'shape', type(value).__name__)}")
    if state.body_q.shape != (model.body_count, 7):
        raise ValueError(f"{call}: state has {state.body_q.shape[0]} bodies, the model "
                         f"{model.body_count} (a State of another model?)")


class SolverFeatherstone(SubstepLaunches):
    """Reduced coordinates (API-physics.md): forward kinematics, composite-rigid-body
    mass matrix, recursive Newton-Euler bias forces and a Cholesky solve per
    articulation, then semi-implicit Euler of ``joint_qd`` and ``joint_q``.

    ``angular_damping`` damps the angular velocities of ball and free joints (warp.sim's
    default 0.05; hinges and sliders are not damped).  ``update_mass_matrix_interval``
    (warp.sim's ``update_mass_matrix_every``) is accepted; the mass matrix is rebuilt
    every step, which costs little next to the rest of a step.
    """

    FRAME_GRAPHS = False
    """(a CPU graph inlines every substep's step kernel, a large one: LLVM takes minutes;
    ``step_frame`` runs a frame without contacts as one launch instead)"""

    def __init__(self, model, angular_damping=0.05, update_mass_matrix_interval=1,
                 update_mass_matrix_every=None):
        call = "SolverFeatherstone"
        if not isinstance(model, Model):
            raise ValueError(f"{call}: model must be a physics Model, got {model!r}")
        if model.particle_count:
            raise NotImplementedError(
                f"{call}: the model has {model.particle_count} particles; SolverFeatherstone "
                "steps articulations only (use SolverSemiImplicit or SolverXPBD)")
        angular_damping = float(angular_damping)
        if not (np.isfinite(angular_damping) and angular_damping >= 0.0):
            raise ValueError(f"{call}: angular_damping must be finite and >= 0, got "
                             f"{angular_damping!r}")
        interval = update_mass_matrix_interval if update_mass_matrix_every is None else \
            update_mass_matrix_every
        if isinstance(interval, bool) or not isinstance(interval, (int, np.integer)) or \
                interval < 1:
            raise ValueError(f"{call}: update_mass_matrix_interval must be an int >= 1, got "
                             f"{interval!r}")
        self.model = model
        self.angular_damping = angular_damping
        self.update_mass_matrix_interval = int(interval)
        self._cpu = model._xp is np
        self._init_launches(self._cpu)
        struct, self._count, h_size = _articulation_model(model, call)
        self._scratch = _articulation_scratch(model, h_size)
        self._contact_f = model._xp.zeros((max(model.body_count, 1), 6), dtype=np.float32)

    def _particle_contacts(self):
        return False

    def step(self, state_in, state_out, control, contacts, dt):
        """Advance the joint coordinates by *dt* from *state_in* (plus its external
        ``body_f``) into *state_out* (which may be *state_in*)."""
        m = self.model
        call = "SolverFeatherstone.step"
        dt = check_step_arguments(call, m, state_in, state_out, control, contacts, dt)
        self._launch_steps(state_in, state_out, control, contacts, dt, 1)
        return state_out

    def step_frame(self, state_0, state_1, control, contacts, dt, substeps):
        """``substeps`` steps of ``dt`` from ``state_0``; returns the state holding the
        result (``state_0`` when ``substeps`` is even, as ``SubstepLaunches.step_frame``).
        Without rigid contacts (none given, or a CPU model's ``collide`` found none) the
        whole frame is one launch, integrating in place in the returned state (the other
        one is left as it was); with contacts (penalty forces at every substep's poses)
        the substeps alternate between the states."""
        name = "SolverFeatherstone.step_frame"
        if isinstance(substeps, bool) or not isinstance(substeps, (int, np.integer)) \
                or substeps < 1:
            raise ValueError(f"{name}: substeps must be an int >= 1, got {substeps!r}")
        substeps = int(substeps)
        if self._has_contacts(contacts):
            return super().step_frame(state_0, state_1, control, contacts, dt, substeps)
        out = (state_0, state_1)[substeps % 2]
        dt = check_step_arguments(name, self.model, state_0, out, control, contacts, dt)
        self._launch_steps(state_0, out, control, None, dt, substeps)
        return out

    def _has_contacts(self, contacts):
        """Whether *contacts* may hold rigid contacts: a CPU model reads the count its
        ``collide`` left (no forces from 0 contacts: the frame is the same without them);
        a CUDA model's count stays on the device, and a CPU capture would keep the count
        of its recording, so there any capacity counts."""
        if contacts is None or not contacts.rigid_contact_max:
            return False
        if self._cpu and not capturing():
            return int(contacts.rigid_contact_count[0]) > 0
        return True

    def _launch_steps(self, state_in, state_out, control, contacts, dt, substeps):
        m = self.model
        call = "SolverFeatherstone.step"
        for name, state in (("state_in", state_in), ("state_out", state_out)):
            if state.joint_q.shape != (m.joint_coord_count,):
                raise ValueError(f"{call}: {name} has {state.joint_q.shape[0]} joint "
                                 f"coordinates, the model {m.joint_coord_count}")
        if not self._count:
            return
        struct, _, _ = _articulation_model(m, call)
        if contacts is not None and contacts.rigid_contact_max:
            self._launch(rigid_kernels.rigid_contact_force_kernel, contacts.rigid_contact_max, [
                state_in.body_q, state_in.body_qd, m.body_com, m.shape_body,
                m.shape_material_ke, m.shape_material_kd, m.shape_material_kf,
                m.shape_material_mu, *rigid_contact_arrays(contacts), self._contact_f])
        target_q, target_qd, joint_f = joint_inputs(self, control)
        self._launch(featherstone.featherstone_step_kernel, self._count, [
            struct, self._scratch, state_in.body_f, self._contact_f, state_in.joint_q,
            state_in.joint_qd, joint_f, target_q, target_qd, self._gravity(),
            self.angular_damping, dt, substeps, state_out.joint_q, state_out.joint_qd,
            state_out.body_q, state_out.body_qd])
        if not self._cpu:
            sim.synchronize()
