"""The rigid-body part of a solver step (host side): argument checks, scratch arrays
and launches of ``rigid_kernels`` (SolverSemiImplicit) and ``xpbd_rigid_substep``
(SolverXPBD).  The solvers call ``step_bodies`` first in ``step``; launches go
through the solver's ``_launch`` (recorded launches, CPU graphs).
"""

import numba
import numpy as np

import numba_sim as sim
from numba_sim.physics import differentiable, rigid_kernels, xpbd_rigid_substep
from numba_sim.physics.kernels import make_struct
from numba_sim.physics.model import Contacts
from numba_sim.physics.rigid_contacts import rigid_contact_arrays
from numba_sim.physics.stepping import capturing


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
    body_f = acc = state_in.body_f
    if differentiable.taping():
        # fresh arrays, never one an earlier recorded launch reads: contact and joint forces
        # accumulate into a recorded copy of body_f (never into it), and the integration's
        # accumulator (which it reads, then clears) is fresh zeros nothing else writes, so
        # that what its adjoint replays is what it read (docs/autodiff.md)
        body_f = acc = xp.empty_like(state_in.body_f)
        solver._launch(differentiable.copy_spatial_kernel, m.body_count,
                       [state_in.body_f, acc])
        contact_f = xp.zeros_like(contact_f)
    else:
        acc = contact_f
    if contacts.rigid_contact_max:
        solver._launch(rigid_kernels.rigid_contact_force_kernel, contacts.rigid_contact_max, [
            state_in.body_q, state_in.body_qd, m.body_com, m.shape_body, m.shape_material_ke,
            m.shape_material_kd, m.shape_material_kf, m.shape_material_mu,
            *rigid_contact_arrays(contacts), acc])
    if m.joint_count:
        target_q, target_qd, joint_f = joint_inputs(solver, control)
        solver._launch(rigid_kernels.joint_force_kernel, m.joint_count, [
            state_in.body_q, state_in.body_qd, m.body_com, m.joint_type, m.joint_parent,
            m.joint_child, m.joint_X_p, m.joint_X_c, m.joint_axis, m.joint_qd_start,
            m.joint_linear_dofs, target_q, target_qd, joint_f, m.joint_target_ke, m.joint_target_kd, m.joint_limit_lower,
            m.joint_limit_upper, m.joint_limit_ke, m.joint_limit_kd, m.joint_attach_ke,
            m.joint_attach_kd, acc])
    solver._launch(rigid_kernels.integrate_bodies_kernel, m.body_count, [
        state_in.body_q, state_in.body_qd, body_f, contact_f, m.body_com,
        m.body_inv_mass, m.body_inertia, m.body_inv_inertia, solver._gravity(),
        solver.angular_damping, dt, state_out.body_q, state_out.body_qd])
    if not solver._cpu:
        sim.synchronize()


WORLDS_PER_CPU_THREAD = 16
"""On the CPU, the XPBD rigid substep takes consecutive worlds in blocks, up to this
many blocks per Numba thread (a thread per world of one pendulum cost 10% more CPU time
than one thread for all: each thread unpacks the model's arrays)."""


def world_groups(model, cpu):
    """The XPBD rigid substep's threads (groups) as spans of bodies and joints and each
    world's group: ``(body_start, joint_start, world_group)``, ``group_count + 1``
    entries each but the last (``num_worlds``).  One group per world (CUDA) or per block
    of consecutive worlds (CPU, ``WORLDS_PER_CPU_THREAD``) when the worlds never share a
    moving part (bodies are world-major with worlds >= 0 by construction; every joint's
    bodies in its own world, joints world-major), else one group for everything.  Worlds
    never collide (static global shapes belong to no body), so a group's thread meets
    each of its worlds' bodies, joints and contacts in the serial order: the same
    arithmetic."""
    bodies, joints, worlds = model.body_count, model.joint_count, model.num_worlds
    serial = (np.array([0, bodies]), np.array([0, joints]), np.zeros(worlds, np.int64))
    if worlds < 2:
        return serial
    body_world = sim.to_numpy(model.body_world).astype(np.int64)
    joint_world = sim.to_numpy(model.joint_world).astype(np.int64)
    if np.any(np.diff(body_world) < 0) or np.any(np.diff(joint_world) < 0) or \
            np.any(body_world < 0) or np.any(joint_world < 0):
        return serial
    for ends in (model.joint_parent, model.joint_child):
        ends = sim.to_numpy(ends).astype(np.int64)
        moved = ends >= 0
        if np.any(body_world[ends[moved]] != joint_world[moved]):
            return serial
    groups = worlds
    if cpu:
        groups = min(worlds, WORLDS_PER_CPU_THREAD * max(numba.config.NUMBA_NUM_THREADS, 1))
    bounds = np.arange(groups + 1) * worlds // groups          # each group's first world
    return (np.searchsorted(body_world, bounds, "left"),
            np.searchsorted(joint_world, bounds, "left"),
            np.repeat(np.arange(groups), np.diff(bounds)))


def _xpbd_model(solver):
    """The model's RigidModel struct, remade when a model attribute was assigned (or
    ``solver.rigid_world_threads`` changed)."""
    m = solver.model
    key = (m._version, solver.rigid_world_threads)
    entry = solver.__dict__.get("_rigid_model")
    if entry is None or entry[0] != key:
        body_start, joint_start, world_group = world_groups(m, solver._cpu)
        if not solver.rigid_world_threads:
            body_start, joint_start = body_start[[0, -1]], joint_start[[0, -1]]
            world_group = np.zeros_like(world_group)
        xp = m._xp
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
            shape_restitution=m.shape_material_restitution, body_world=m.body_world,
            world_group=xp.asarray(world_group.astype(np.int32)),
            group_count=len(body_start) - 1,
            group_body_start=xp.asarray(body_start.astype(np.int32)),
            group_joint_start=xp.asarray(joint_start.astype(np.int32)))
        entry = solver._rigid_model = (key, struct)
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


def _regroup(solver, contacts, groups):
    """Whether *contacts* need grouping by world again: a version of them (one
    ``collide``) not grouped yet for this solver, contacts that ``collide`` did not make
    (no version), or a capture (a graph replays after later collides)."""
    version = getattr(contacts, "rigid_contact_version", None)
    if version is None or capturing() or \
            (not solver._cpu and solver.model._xp.cuda.get_current_stream().is_capturing()):
        return True
    seen = _scratch(solver, "grouped", dict)
    key = (id(contacts), groups)       # as the RigidContacts scratch entry
    if seen.get(key) == (contacts, version):
        return False
    seen[key] = (contacts, version)
    return True


def step_xpbd(solver, state_in, state_out, control, contacts, dt):
    """One XPBD substep of the bodies, joints (with their drives) and rigid contacts:
    one launch, a thread per world or block of worlds where ``world_groups`` allows it
    (the contacts grouped so first, ``group_contacts_kernel``, once per ``collide``)."""
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
    model = _xpbd_model(solver)
    groups = model.group_count
    entry = _scratch(solver, ("contacts", id(contacts), groups), lambda: (contacts, make_struct(
        xpbd_rigid_substep.RigidContacts, count=contacts.rigid_contact_count,
        shape0=contacts.rigid_contact_shape0, shape1=contacts.rigid_contact_shape1,
        point0=contacts.rigid_contact_point0, point1=contacts.rigid_contact_point1,
        normal=contacts.rigid_contact_normal, thickness0=contacts.rigid_contact_thickness0,
        thickness1=contacts.rigid_contact_thickness1,
        lambda_n=xp.zeros(size, dtype=np.float32), vn=xp.zeros(size, dtype=np.float32),
        group_start=xp.zeros(groups + 1, dtype=np.int32),
        order=xp.zeros(size if groups > 1 else 1, dtype=np.int32))))
    if groups > 1 and contacts.rigid_contact_max and _regroup(solver, contacts, groups):
        solver._launch(xpbd_rigid_substep.group_contacts_kernel, 1, [
            entry[1], m.shape_body, m.body_world, model.world_group, groups])
    solver._launch(xpbd_rigid_substep.xpbd_rigid_substep_kernel, groups, [
        state_in.body_q, state_in.body_qd, state_in.body_f, model, entry[1],
        scratch, *joint_inputs(solver, control), solver._gravity(), solver.angular_damping, solver.iterations, dt,
        state_out.body_q, state_out.body_qd])
    if not solver._cpu:
        sim.synchronize()
