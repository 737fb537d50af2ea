"""``physics.eval_jacobian`` and ``physics.eval_mass_matrix``: per articulation, the
Jacobian of its links' velocities and its joint-space mass matrix at ``state.joint_q``
(the reduced coordinates ``SolverFeatherstone`` integrates; after a maximal-coordinate
solver, ``eval_ik`` first), one thread per articulation, from the same forward
kinematics and composite-rigid-body code as ``SolverFeatherstone``'s step
(``featherstone.py``).

Layouts (newton's): ``J`` is ``(articulation_count, 6 * max_links, max_dofs)``; the rows
``6 l .. 6 l + 5`` of articulation ``a`` are the velocity of the child of its ``l``-th
joint in ``body_qd``'s layout (linear velocity of the centre of mass, angular velocity,
world), per unit rate of each of its dofs (the columns, in the articulation's dof
order), so ``body_qd = J qd`` link by link.  ``H`` is ``(articulation_count, max_dofs,
max_dofs)``, ``H = sum_l J_l^T M_l J_l`` plus the joints' armature on the diagonal.
Smaller articulations are zero-padded.
"""

import numpy as np

import numba_sim as sim
from numba_sim.physics import featherstone
from numba_sim.physics.featherstone import ArticulationModel, ArticulationScratch
from numba_sim.physics.rigid_kernels import FLOATS, SPATIAL, TRANSFORMS
from numba_sim.physics.solver_featherstone import (
    _articulation_model, _articulation_scratch, _check_kinematics, articulations,
)


@sim.kernel
def eval_jacobian_kernel(model: ArticulationModel, scratch: ArticulationScratch,
                         joint_q: FLOATS, joint_qd: FLOATS, body_q: TRANSFORMS,
                         body_qd: SPATIAL, max_links: int, max_dofs: int, J: FLOATS):
    a = sim.tid()
    m_joint_child = model.joint_child
    m_joint_parent_joint = model.joint_parent_joint
    m_joint_qd_start = model.joint_qd_start
    m_body_com = model.body_com
    s_S_w = scratch.S_w
    s_S_v = scratch.S_v
    s_X_l = scratch.X_l
    first = model.articulation_start[a]
    last = model.articulation_start[a + 1]
    featherstone.forward_kinematics(model, first, last, joint_q, joint_qd, body_q, body_qd,
                                    scratch)
    dof0 = m_joint_qd_start[first]
    for k in range(first, last):
        child = m_joint_child[k]
        c = sim.transform_point(s_X_l[child], m_body_com[child])   # (from the origin)
        base = (a * max_links + k - first) * 6 * max_dofs
        l = k
        while l >= 0:
            for d in range(m_joint_qd_start[l], m_joint_qd_start[l + 1]):
                sw = s_S_w[d]
                v = s_S_v[d] + sim.cross(sw, c)        # the centre of mass's velocity
                for r in range(3):
                    J[base + r * max_dofs + d - dof0] = v[r]
                    J[base + (r + 3) * max_dofs + d - dof0] = sw[r]
            l = m_joint_parent_joint[l]


@sim.kernel
def eval_mass_matrix_kernel(model: ArticulationModel, scratch: ArticulationScratch,
                            joint_q: FLOATS, joint_qd: FLOATS, body_q: TRANSFORMS,
                            body_qd: SPATIAL, max_dofs: int, H: FLOATS):
    a = sim.tid()
    m_joint_child = model.joint_child
    m_joint_parent = model.joint_parent
    m_joint_qd_start = model.joint_qd_start
    s_I_m = scratch.I_m
    s_I_h = scratch.I_h
    s_I_r = scratch.I_r
    s_H = scratch.H
    s_X_l = scratch.X_l
    first = model.articulation_start[a]
    last = model.articulation_start[a + 1]
    featherstone.forward_kinematics(model, first, last, joint_q, joint_qd, body_q, body_qd,
                                    scratch)
    for k in range(first, last):
        child = m_joint_child[k]
        mass, h, I = featherstone.body_inertia_world(model, child, s_X_l[child])
        s_I_m[child] = mass
        s_I_h[child] = h
        s_I_r[child] = I
    for kk in range(last - first):          # composite inertias, leaves to root
        k = last - 1 - kk
        parent = m_joint_parent[k]
        child = m_joint_child[k]
        if parent >= 0:
            s_I_m[parent] = s_I_m[parent] + s_I_m[child]
            s_I_h[parent] = s_I_h[parent] + s_I_h[child]
            s_I_r[parent] = s_I_r[parent] + s_I_r[child]
    featherstone.mass_matrix(model, scratch, a)
    dof0 = m_joint_qd_start[first]
    dofs = m_joint_qd_start[last] - dof0
    H0 = model.H_start[a]
    for r in range(dofs):
        for c in range(dofs):
            H[(a * max_dofs + r) * max_dofs + c] = s_H[H0 + r * dofs + c]


def _layout(model, call, state):
    """(struct, scratch, articulation count, max links, max dofs, scratch poses) of
    *model*'s articulations at *state*."""
    if not hasattr(state, "joint_q"):
        raise ValueError(f"{call}: state must be a physics State, got {state!r}")
    _check_kinematics(call, model, state.joint_q, state.joint_qd, state)
    struct, count, h_size = _articulation_model(model, call)
    starts, _, _ = articulations(model, call)
    qd_start = sim.to_numpy(model.joint_qd_start).astype(np.int64)
    links = int(np.diff(starts).max()) if count else 0
    dofs = int((qd_start[starts[1:]] - qd_start[starts[:-1]]).max()) if count else 0
    xp = model._xp
    poses = (xp.zeros((max(model.body_count, 1), 7), dtype=np.float32),
             xp.zeros((max(model.body_count, 1), 6), dtype=np.float32))
    return struct, _articulation_scratch(model, h_size), count, links, dofs, poses


def _output(call, name, given, shape, xp):
    if given is None:
        return xp.zeros(shape, dtype=np.float32)
    if getattr(given, "shape", None) != shape or given.dtype != np.float32 or \
            not given.flags.c_contiguous:
        raise ValueError(f"{call}: {name} must be a contiguous float32 array of shape "
                         f"{shape}, got {getattr(given, 'shape', type(given).__name__)}")
    given[...] = 0.0
    return given


def eval_jacobian(model, state, J=None):
    """Per articulation, the Jacobian of its links' velocities (``body_qd``'s layout) with
    respect to its joint rates at ``state.joint_q``: ``(articulation_count, 6 * max_links,
    max_dofs)`` float32 (filled into *J* when given)."""
    call = "eval_jacobian"
    struct, scratch, count, links, dofs, poses = _layout(model, call, state)
    J = _output(call, "J", J, (count, 6 * links, dofs), model._xp)
    if count and dofs:
        sim.launch(eval_jacobian_kernel, dim=count, inputs=[
            struct, scratch, state.joint_q, state.joint_qd, *poses, links, dofs, J.reshape(-1)])
    return J


def eval_mass_matrix(model, state, H=None):
    """Per articulation, the joint-space mass matrix at ``state.joint_q`` (the composite-
    rigid-body algorithm of ``SolverFeatherstone``, armature included): ``(articulation_count,
    max_dofs, max_dofs)`` float32 (filled into *H* when given)."""
    call = "eval_mass_matrix"
    struct, scratch, count, _, dofs, poses = _layout(model, call, state)
    H = _output(call, "H", H, (count, dofs, dofs), model._xp)
    if count and dofs:
        sim.launch(eval_mass_matrix_kernel, dim=count, inputs=[
            struct, scratch, state.joint_q, state.joint_qd, *poses, dofs, H.reshape(-1)])
    return H
