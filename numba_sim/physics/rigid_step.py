"""The rigid-body part of a solver step (host side): argument checks, scratch arrays
and launches of ``rigid_kernels`` (SolverSemiImplicit) and ``xpbd_rigid_substep``
(SolverXPBD).  The solvers call ``step_bodies`` first in ``step``; launches go
through the solver's ``_launch`` (recorded launches, CPU graphs).
"""

import numpy as np

import numba_sim as sim
from numba_sim.physics import rigid_kernels, xpbd_rigid_substep
from numba_sim.physics.kernels import make_struct
from numba_sim.physics.model import Contacts
from numba_sim.physics.rigid_contacts import rigid_contact_arrays


def _check_states(call, model, states):
    for name, state in states:
        if state.body_q.shape != (model.body_count, 7):
            raise ValueError(f"{call}: {name} has {state.body_q.shape[0]} bodies, the model "
                             f"{model.body_count} (a State of another model?)")


def _scratch(solver, key, make):
    cache = solver.__dict__.setdefault("_rigid_scratch", {})
    value = cache.get(key)
    if value is None:
        if len(cache) >= 16:  # per-Contacts entries: keep a bounded few
            cache.clear()
        value = cache[key] = make()
    return value


def _contacts(solver, contacts):
    """*contacts*, or an empty set of the solver's own."""
    if contacts is None:
        return _scratch(solver, "no_contacts",
                        lambda: Contacts(solver.model, soft_contact_max=0, rigid_contact_max=0))
    return contacts


def step_semi_implicit(solver, state_in, state_out, control, contacts, dt):
    """Penalty rigid contacts and joint springs, then symplectic Euler of the bodies."""
    m = solver.model
    call = "SolverSemiImplicit.step"
    _check_states(call, m, (("state_in", state_in), ("state_out", state_out)))
    contacts = _contacts(solver, contacts)
    xp = m._xp
    contact_f = _scratch(solver, "contact_f",
                         lambda: xp.zeros((m.body_count, 6), dtype=np.float32))
    if contacts.rigid_contact_max:
        solver._launch(rigid_kernels.rigid_contact_force_kernel, contacts.rigid_contact_max, [
            state_in.body_q, state_in.body_qd, m.body_com, m.shape_body, m.shape_material_ke,
            m.shape_material_kd, m.shape_material_kf, m.shape_material_mu,
            *rigid_contact_arrays(contacts), contact_f])
    if m.joint_count:
        target_q, target_qd, joint_f = joint_inputs(solver, control)
        solver._launch(rigid_kernels.joint_force_kernel, m.joint_count, [
            state_in.body_q, state_in.body_qd, m.body_com, m.joint_type, m.joint_parent,
            m.joint_child, m.joint_X_p, m.joint_X_c, m.joint_axis, m.joint_qd_start,
            m.joint_linear_dofs, target_q, target_qd, joint_f, m.joint_target_ke, m.joint_target_kd, m.joint_limit_lower,
            m.joint_limit_upper, m.joint_limit_ke, m.joint_limit_kd, m.joint_attach_ke,
            m.joint_attach_kd, contact_f])
    solver._launch(rigid_kernels.integrate_bodies_kernel, m.body_count, [
        state_in.body_q, state_in.body_qd, state_in.body_f, contact_f, m.body_com,
        m.body_inv_mass, m.body_inertia, m.body_inv_inertia, solver._gravity(),
        solver.angular_damping, dt, state_out.body_q, state_out.body_qd])
    if not solver._cpu:
        sim.synchronize()


def _xpbd_model(solver):
    """The model's RigidModel struct, remade when a model attribute was assigned."""
    m = solver.model
    entry = solver.__dict__.get("_rigid_model")
    if entry is None or entry[0] != m._version:
        struct = make_struct(
            xpbd_rigid_substep.RigidModel, body_count=m.body_count, com=m.body_com,
            inv_mass=m.body_inv_mass, inertia=m.body_inertia, inv_inertia=m.body_inv_inertia,
            joint_count=m.joint_count, joint_type=m.joint_type, joint_parent=m.joint_parent,
            joint_child=m.joint_child, joint_X_p=m.joint_X_p, joint_X_c=m.joint_X_c,
            joint_axis=m.joint_axis, joint_qd_start=m.joint_qd_start,
            joint_linear_dofs=m.joint_linear_dofs,
            joint_lower=m.joint_limit_lower, joint_upper=m.joint_limit_upper,
            joint_target_ke=m.joint_target_ke, joint_target_kd=m.joint_target_kd,
            shape_body=m.shape_body, shape_mu=m.shape_material_mu,
            shape_restitution=m.shape_material_restitution)
        entry = solver._rigid_model = (m._version, struct)
    return entry[1]


def joint_inputs(solver, control):
    """(joint_target_q, joint_target_qd, joint_f) of *control*; without one, the model's
    targets, and zeros for the target velocities and the forces."""
    m = solver.model
    if control is not None:
        return control.joint_target_q, control.joint_target_qd, control.joint_f
    zeros = _scratch(solver, "zero_per_dof",
                     lambda: m._xp.zeros(max(m.joint_dof_count, 1), dtype=np.float32))
    return m.joint_target_q, zeros, zeros


def step_xpbd(solver, state_in, state_out, control, contacts, dt):
    """One XPBD substep of the bodies, joints (with their drives) and rigid contacts
    (one launch)."""
    m = solver.model
    _check_states("SolverXPBD.step", m, (("state_in", state_in), ("state_out", state_out)))
    contacts = _contacts(solver, contacts)
    xp = m._xp
    n = m.body_count
    dofs = max(m.joint_dof_count, 1)
    scratch = _scratch(solver, "bodies", lambda: make_struct(
        xpbd_rigid_substep.RigidScratch, xs=xp.zeros((n, 3), dtype=np.float32),
        qs=xp.zeros((n, 4), dtype=np.float32), x_pred=xp.zeros((n, 3), dtype=np.float32),
        q_pred=xp.zeros((n, 4), dtype=np.float32),
        drive_lambda=xp.zeros(dofs, dtype=np.float32),
        drive_start=xp.zeros(dofs, dtype=np.float32),
        wrench=xp.zeros((n, 6), dtype=np.float32)))
    size = max(contacts.rigid_contact_max, 1)
    entry = _scratch(solver, ("contacts", id(contacts)), lambda: (contacts, make_struct(
        xpbd_rigid_substep.RigidContacts, count=contacts.rigid_contact_count,
        shape0=contacts.rigid_contact_shape0, shape1=contacts.rigid_contact_shape1,
        point0=contacts.rigid_contact_point0, point1=contacts.rigid_contact_point1,
        normal=contacts.rigid_contact_normal, thickness0=contacts.rigid_contact_thickness0,
        thickness1=contacts.rigid_contact_thickness1,
        lambda_n=xp.zeros(size, dtype=np.float32), vn=xp.zeros(size, dtype=np.float32))))
    solver._launch(xpbd_rigid_substep.xpbd_rigid_substep_kernel, 1, [
        state_in.body_q, state_in.body_qd, state_in.body_f, _xpbd_model(solver), entry[1],
        scratch, *joint_inputs(solver, control), solver._gravity(), solver.angular_damping, solver.iterations, dt,
        state_out.body_q, state_out.body_qd])
    if not solver._cpu:
        sim.synchronize()
