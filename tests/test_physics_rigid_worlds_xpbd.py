"""SolverXPBD's rigid substep over replicated worlds: a thread per world or block of
worlds (rigid_step.world_groups) gives the same bits as one thread over everything; a
model whose worlds share a joint keeps one thread; the grouping kernel compiles for
CUDA."""

import math

import numpy as np
import pytest

from numba_sim import physics
from numba_sim.physics import rigid_step, xpbd_rigid_substep

from ptx_checks import assert_float32_only

G = 9.81


def template():
    """A hinged rod (limited, driven), a rod on a three-axis D6 (limited) and two stacked
    boxes on the ground: joints, drives, limits and contacts in one world."""
    b = physics.ModelBuilder(gravity=-G)
    rod = b.add_body(xform=((0.0, 0.5 * math.sin(0.4), 2.0 - 0.5 * math.cos(0.4)),
                            (math.sin(0.2), 0.0, 0.0, math.cos(0.2))))
    b.add_shape_box(rod, hx=0.05, hy=0.05, hz=0.5)
    b.add_joint_revolute(-1, rod, parent_xform=((0.0, 0.0, 2.0), None),
                         child_xform=((0.0, 0.0, 0.5), None), axis=(1.0, 0.0, 0.0),
                         limit_lower=-0.3, limit_upper=0.5, target_ke=50.0, target_kd=5.0)
    other = b.add_body(xform=((0.6, 0.0, 1.5), None))
    b.add_shape_box(other, hx=0.05, hy=0.05, hz=0.5)
    b.add_joint_d6(-1, other, angular_axes=[
        dict(axis=a, limit_lower=-0.2, limit_upper=0.2) for a in np.eye(3)],
        parent_xform=((0.6, 0.0, 2.0), None), child_xform=((0.0, 0.0, 0.5), None))
    for k in range(2):
        box = b.add_body(xform=((1.5, 0.0, 0.1 + 0.21 * k), None))
        b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)
    return b


@pytest.fixture(scope="module")
def worlds():
    b = physics.ModelBuilder(gravity=-G)
    b.replicate(template(), 6, spacing=(3.0, 0.0, 0.0))
    b.add_ground_plane()
    return b.finalize()


def kicked_state(model):
    """Each world's bodies kicked differently (the worlds must not be copies)."""
    state = model.state()
    rng = np.random.default_rng(7)
    state.body_qd[:] = rng.uniform(-1.0, 1.0, state.body_qd.shape).astype(np.float32)
    return state


def test_world_threads_give_the_bits_of_one_thread(worlds):
    model = worlds
    threaded, serial = physics.SolverXPBD(model), physics.SolverXPBD(model)
    serial.rigid_world_threads = False
    a, b = kicked_state(model), kicked_state(model)
    for _ in range(30):
        contacts = model.collide(a)          # one contact set (slot order) for both
        for _ in range(5):
            threaded.step(a, a, None, contacts, 1.0 / 300.0)
            serial.step(b, b, None, contacts, 1.0 / 300.0)
    assert threaded._rigid_model[1].group_count == 6
    assert serial._rigid_model[1].group_count == 1
    assert int(contacts.rigid_contact_count[0]) >= 6 * 8
    np.testing.assert_array_equal(a.body_q, b.body_q)
    np.testing.assert_array_equal(a.body_qd, b.body_qd)
    # physics: the lower box rests on the ground in every world, the limits hold
    lower_box = model.world_view(a.body_q)[:, 2, 2]
    np.testing.assert_allclose(lower_box, 0.1, atol=2e-3)
    assert np.all(np.isfinite(a.body_q))


def test_world_groups_blocks_and_fallback(worlds, monkeypatch):
    body_start, joint_start, world_group = rigid_step.world_groups(worlds, cpu=False)
    assert body_start.tolist() == list(range(0, 25, 4))
    assert joint_start.tolist() == list(range(0, 13, 2))
    assert world_group.tolist() == list(range(6))
    monkeypatch.setattr(rigid_step, "WORLDS_PER_CPU_THREAD", 1)
    monkeypatch.setattr(rigid_step.numba.config, "NUMBA_NUM_THREADS", 4)
    body_start, joint_start, world_group = rigid_step.world_groups(worlds, cpu=True)
    assert body_start.tolist() == [0, 4, 12, 16, 24]          # worlds 0 | 1 2 | 3 | 4 5
    assert world_group.tolist() == [0, 1, 1, 2, 3, 3]
    # a joint from a body of world 0 to one of world 1: one thread for everything
    one = physics.ModelBuilder()
    body = one.add_body(xform=((0.0, 0.0, 1.0), None))
    one.add_shape_sphere(body, radius=0.1)
    b = physics.ModelBuilder()
    b.add_builder(one, world=0)
    b.add_builder(one, world=1)
    b.add_joint_ball(0, 1, parent_xform=((0.0, 0.0, -0.5), None),
                     child_xform=((0.0, 0.0, 0.5), None))
    shared = b.finalize()
    body_start, joint_start, world_group = rigid_step.world_groups(shared, cpu=False)
    assert body_start.tolist() == [0, 2] and joint_start.tolist() == [0, 1]
    solver = physics.SolverXPBD(shared)
    state = shared.state()
    solver.step(state, state, None, None, 1.0 / 600.0)
    assert solver._rigid_model[1].group_count == 1


def test_group_contacts_kernel_compiles_for_cuda_offline(worlds, private_device_code_cache):
    """(The substep kernel's CUDA compile: test_physics_rigid.py, the same signature.)"""
    solver = physics.SolverXPBD(worlds)
    state = worlds.state()
    solver.step(state, state, None, worlds.collide(state), 1e-3)   # records both launches
    kernel = xpbd_rigid_substep.group_contacts_kernel
    inputs = [entry[2] for entry in solver._recorded.values() if entry[1] is kernel][0]
    library = kernel.compile("cuda", list(inputs), cc=(7, 5))
    ptx = library.get_asm_str(cc=(7, 5))
    assert ".entry" in ptx
    assert_float32_only(ptx)
