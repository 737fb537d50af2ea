"""``physics.eval_jacobian`` and ``physics.eval_mass_matrix`` (issue 19), per
articulation: the Jacobian against the bodies' velocities from ``eval_fk`` and against
finite differences of ``eval_fk``'s poses, the mass matrix against ``J^T M J`` + armature,
the kinetic energy ``qd^T H qd / 2`` and the accelerations a Featherstone step gives."""

import math

import numpy as np
import pytest

from numba_sim import physics
from numba_sim.physics.checks import quat_multiply, quat_rotate

G = 9.81


def robot():
    """Articulation 0: a revolute, a prismatic and a D6 (slide y, turn about z then x),
    armature on the hinge; articulation 1: a ball joint; articulation 2: a free body."""
    b = physics.ModelBuilder(gravity=-G)
    links = []
    for k in range(3):
        links.append(b.add_body(xform=((0.0, 0.4 * k + 0.2, 1.0), None)))
        b.add_shape_box(links[-1], hx=0.04, hy=0.2, hz=0.05)
    b.add_joint_revolute(-1, links[0], parent_xform=((0.0, 0.0, 1.0), None),
                         child_xform=((0.0, -0.2, 0.0), None), axis=(1.0, 0.0, 0.2),
                         armature=0.05)
    b.add_joint_prismatic(links[0], links[1], parent_xform=((0.0, 0.2, 0.0), None),
                          child_xform=((0.0, -0.2, 0.0), None), axis=(0.0, 1.0, 0.0))
    b.add_joint_d6(links[1], links[2], linear_axes=[(0.0, 1.0, 0.0)],
                   angular_axes=[(0.0, 0.0, 1.0), (1.0, 0.0, 0.0)],
                   parent_xform=((0.0, 0.2, 0.0), None), child_xform=((0.0, -0.2, 0.0), None))
    ball = b.add_body(xform=((1.0, 0.0, 0.7), None))
    b.add_shape_capsule(ball, radius=0.05, half_height=0.25)
    b.add_joint_ball(-1, ball, parent_xform=((1.0, 0.0, 1.0), None),
                     child_xform=((0.0, 0.0, 0.3), None))
    free = b.add_body(xform=((2.0, 0.0, 1.0), None))
    b.add_shape_box(free, hx=0.1, hy=0.05, hz=0.2)
    b.add_joint_free(free)
    return b.finalize()


@pytest.fixture(scope="module")
def model():
    return robot()


def posed(model, seed=5):
    rng = np.random.default_rng(seed)
    state = model.state()
    q = state.joint_q
    q[:5] = (0.4, 0.1, -0.05, 0.6, -0.3)
    ball = rng.normal(size=4)
    q[5:9] = ball / np.linalg.norm(ball)
    rot = rng.normal(size=4)
    q[12:16] = rot / np.linalg.norm(rot)
    state.joint_qd[:] = rng.normal(size=model.joint_dof_count)
    physics.eval_fk(model, state.joint_q, state.joint_qd, state)
    return state


def test_the_jacobian_maps_joint_rates_to_the_body_velocities(model):
    state = posed(model)
    J = physics.eval_jacobian(model, state)
    assert J.shape == (3, 18, 6)
    dofs = [(0, 5, [0, 1, 2]), (5, 8, [3]), (8, 14, [4])]   # (first dof, end, bodies)
    for a, (d0, d1, bodies) in enumerate(dofs):
        qd = state.joint_qd[d0:d1].astype(np.float64)
        v = J[a, :, :d1 - d0].astype(np.float64) @ qd
        np.testing.assert_allclose(v[:6 * len(bodies)].reshape(-1, 6),
                                   state.body_qd[bodies], atol=2e-5)
        assert not J[a, 6 * len(bodies):].any() and not J[a, :, d1 - d0:].any()   # padding


def com_and_rotation(model, q):
    state = model.state()
    state.joint_q[:] = q
    physics.eval_fk(model, state.joint_q, state.joint_qd, state)
    X = state.body_q.astype(np.float64)
    com = np.array([quat_rotate(x[3:], c) + x[:3]
                    for x, c in zip(X, model.body_com.astype(np.float64))])
    return com, X[:, 3:]


def test_the_jacobian_is_the_derivative_of_the_forward_kinematics(model):
    """Articulation 0 (one coordinate per dof): central differences of ``eval_fk``'s
    centres of mass and rotations (float32: to 1e-3 at a 1e-3 step)."""
    state = posed(model)
    J = physics.eval_jacobian(model, state).astype(np.float64)
    eps = 1e-3
    for i in range(5):
        plus, minus = state.joint_q.copy(), state.joint_q.copy()
        plus[i] += eps
        minus[i] -= eps
        (cp, rp), (cm, rm) = com_and_rotation(model, plus), com_and_rotation(model, minus)
        for link in range(3):
            velocity = (cp[link] - cm[link]) / (2 * eps)
            turn = quat_multiply(rp[link], np.array([-rm[link, 0], -rm[link, 1],
                                                     -rm[link, 2], rm[link, 3]]))
            omega = 2.0 * turn[:3] / (2 * eps) * np.sign(turn[3])
            np.testing.assert_allclose(J[0, 6 * link:6 * link + 3, i], velocity, atol=1e-3)
            np.testing.assert_allclose(J[0, 6 * link + 3:6 * link + 6, i], omega, atol=1e-3)


def body_mass_matrices(model, state):
    """Each body's 6x6 inertia in body_qd's layout (m I, R I_c R^T)."""
    out = []
    for b in range(model.body_count):
        q = state.body_q[b, 3:].astype(np.float64)
        R = np.stack([quat_rotate(q, e) for e in np.eye(3)], axis=1)
        M = np.zeros((6, 6))
        M[:3, :3] = np.eye(3) * float(model.body_mass[b])
        M[3:, 3:] = R @ model.body_inertia[b].astype(np.float64) @ R.T
        out.append(M)
    return out


def test_the_mass_matrix_is_j_transpose_m_j_plus_armature(model):
    state = posed(model)
    J = physics.eval_jacobian(model, state).astype(np.float64)
    H = physics.eval_mass_matrix(model, state).astype(np.float64)
    assert H.shape == (3, 6, 6)
    M = body_mass_matrices(model, state)
    bodies = [[0, 1, 2], [3], [4]]
    armature = np.zeros((3, 6))
    armature[0, 0] = 0.05
    for a in range(3):
        expected = np.diag(armature[a])
        for link, b in enumerate(bodies[a]):
            Jl = J[a, 6 * link:6 * link + 6]
            expected += Jl.T @ M[b] @ Jl
        np.testing.assert_allclose(H[a], expected, rtol=1e-4,
                                   atol=1e-5 * np.abs(expected).max())
        np.testing.assert_allclose(H[a], H[a].T, atol=1e-6 * np.abs(H[a]).max())
    # the kinetic energy of every body, as qd^T H qd / 2 (armature aside)
    qd = state.joint_qd.astype(np.float64)
    kinetic = sum(0.5 * state.body_qd[b].astype(np.float64) @ M[b] @
                  state.body_qd[b].astype(np.float64) for b in range(model.body_count))
    from_h = sum(0.5 * qd[d0:d1] @ (H[a, :d1 - d0, :d1 - d0] - np.diag(armature[a, :d1 - d0]))
                 @ qd[d0:d1] for a, (d0, d1) in enumerate([(0, 5), (5, 8), (8, 14)]))
    assert from_h == pytest.approx(kinetic, rel=1e-4)


def test_a_featherstone_step_from_rest_accelerates_by_h_inverse_tau(model):
    """No gravity, at rest, joint forces tau: one step gives ``qd = dt H^-1 tau``."""
    state = posed(model)
    state.joint_qd[:] = 0.0
    physics.eval_fk(model, state.joint_q, state.joint_qd, state)
    H = physics.eval_mass_matrix(model, state).astype(np.float64)
    model.gravity[:] = 0.0
    try:
        control = model.control()
        tau = np.linspace(-1.0, 1.5, model.joint_dof_count)
        control.joint_f[:] = tau
        solver = physics.SolverFeatherstone(model, angular_damping=0.0)
        dt = 1e-3
        out = model.state()
        solver.step(state, out, control, None, dt)
    finally:
        model.gravity[:] = (0.0, 0.0, -G)
    for a, (d0, d1) in enumerate([(0, 5), (5, 8), (8, 14)]):
        expected = dt * np.linalg.solve(H[a, :d1 - d0, :d1 - d0], tau[d0:d1])
        np.testing.assert_allclose(out.joint_qd[d0:d1], expected, rtol=1e-3,
                                   atol=1e-5 * np.abs(expected).max())


def test_bad_arguments_name_the_call(model):
    with pytest.raises(ValueError, match="eval_jacobian: state must be a physics State"):
        physics.eval_jacobian(model, None)
    with pytest.raises(ValueError, match=r"eval_mass_matrix: H must be a contiguous float32 "
                                         r"array of shape \(3, 6, 6\), got \(3, 6\)"):
        physics.eval_mass_matrix(model, model.state(), H=np.zeros((3, 6), np.float32))
    H = np.full((3, 6, 6), 7.0, np.float32)
    assert physics.eval_mass_matrix(model, posed(model), H=H) is H and H[1, 4, 4] == 0.0
    assert math.isfinite(float(H.sum()))


@pytest.mark.parametrize("name", ["eval_jacobian_kernel", "eval_mass_matrix_kernel"])
def test_articulation_kernels_compile_for_cuda_offline(model, name, private_device_code_cache):
    from numba_sim.physics import articulation
    from ptx_checks import assert_float32_only

    state = model.state()
    struct, scratch, count, links, dofs, poses = articulation._layout(model, name, state)
    out = np.zeros(count * 6 * links * dofs, np.float32)
    extra = [links, dofs] if name == "eval_jacobian_kernel" else [dofs]
    library = getattr(articulation, name).compile(
        "cuda", [struct, scratch, state.joint_q, state.joint_qd, *poses, *extra, out],
        cc=(7, 5))
    ptx = library.get_asm_str(cc=(7, 5))
    assert ".entry" in ptx
    assert_float32_only(ptx)
