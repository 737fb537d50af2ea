"""Shape-pair contacts (issue 19): box edges against box edges (the separating-axis
crossing the corners miss), cones as the cores other shapes' points meet (against a
sampled surface), and the broad phase; checked by depths, normals and resting heights."""

import math

import numpy as np
import pytest

import numba_sim as sim
from numba_sim import physics
from numba_sim.physics import rigid_contacts

G = 9.81
S2 = math.sqrt(0.5)


def settle(model, solver, seconds, substeps=20):
    state = model.state()
    contacts = model.contacts()
    dt = 1.0 / 60.0 / substeps
    for _ in range(int(round(seconds * 60))):
        model.collide(state, contacts)
        for _ in range(substeps):
            solver.step(state, state, None, contacts, dt)
    return state, contacts


# --------------------------------------------------------------------- box edge on edge

def crossed_ridges(gap):
    """A static box (half 0.2) turned 45 degrees about x, its top edge along x at z = 0.5,
    and a body box (half 0.1) turned 45 degrees about y, its bottom edge along y *gap*
    above it: the edges cross at (0, 0, 0.5); every corner of the upper box is clear of
    the lower one (the corners at the ends of its bottom edge are 0.1 above its slopes)."""
    b = physics.ModelBuilder(gravity=-G)
    ridge = 0.5 - 0.2 * math.sqrt(2.0)
    b.add_shape_box(-1, xform=((0.0, 0.0, ridge), (math.sin(math.pi / 8), 0.0, 0.0,
                                                   math.cos(math.pi / 8))), hx=0.2, hy=0.2,
                    hz=0.2)
    body = b.add_body(xform=((0.0, 0.0, 0.5 + gap + 0.1 * math.sqrt(2.0)),
                             (0.0, math.sin(math.pi / 8), 0.0, math.cos(math.pi / 8))))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    return b.finalize()


def separations(model, state, contacts):
    """Each contact's signed separation at *state*'s poses (the solvers' formula)."""
    count = int(contacts.rigid_contact_count[0])
    out = []
    for c in range(count):
        points = []
        for side in (0, 1):
            shape = int(getattr(contacts, f"rigid_contact_shape{side}")[c])
            point = np.asarray(getattr(contacts, f"rigid_contact_point{side}")[c], np.float64)
            body = int(model.shape_body[shape])
            if body >= 0:
                q = np.asarray(state.body_q[body], np.float64)
                point = physics.checks.quat_rotate(q[3:], point) + q[:3]
            points.append(point)
        n = np.asarray(contacts.rigid_contact_normal[c], np.float64)
        out.append(n @ (points[0] - points[1]) - contacts.rigid_contact_thickness0[c]
                   - contacts.rigid_contact_thickness1[c])
    return np.array(out)


def test_crossed_box_edges_meet_where_no_corner_does():
    model = crossed_ridges(-0.002)                 # 2 mm into each other
    state = model.state()
    contacts = model.collide(state)
    d = separations(model, state, contacts)
    touching = np.flatnonzero(d < 0.0)
    assert len(touching) == 1
    c = touching[0]
    assert d[c] == pytest.approx(-0.002, abs=1e-5)
    np.testing.assert_allclose(contacts.rigid_contact_normal[c], (0.0, 0.0, -1.0)
                               if contacts.rigid_contact_shape0[c] == 0 else (0.0, 0.0, 1.0),
                               atol=1e-5)
    assert d.min() == d[c] and np.sort(d)[1] > 0.05    # the corners are clear


def test_a_box_balanced_across_a_ridge_rests_on_the_crossing():
    """XPBD: the upper box settles onto the crossing and stays there, its centre
    ``0.1 sqrt 2`` above it (without edge contacts it sank into the ridge and was thrown
    out of it)."""
    model = crossed_ridges(0.01)
    state, _ = settle(model, physics.SolverXPBD(model), seconds=0.4)
    assert state.body_q[0, 2] == pytest.approx(0.5 + 0.1 * math.sqrt(2.0), abs=2e-4)
    assert abs(state.body_qd[0, 2]) < 1e-2


def test_boxes_face_on_face_get_no_edge_contact():
    """An aligned stack: the face axes win the separating-axis test, so only corners
    (each box's four on the other's face)."""
    b = physics.ModelBuilder()
    b.add_shape_box(-1, xform=((0.0, 0.0, 0.1), None), hx=0.1, hy=0.1, hz=0.1)
    body = b.add_body(xform=((0.002, 0.003, 0.299), None))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    model = b.finalize()
    state = model.state()
    contacts = model.collide(state)
    d = separations(model, state, contacts)
    assert len(d) == 8 and np.allclose(d, -0.001, atol=1e-6)


# -------------------------------------------------------------------------- cone cores

@sim.kernel
def cone_core_kernel(scale: sim.vec3, p: sim.array(dtype=sim.vec3),
                     q: sim.array(dtype=sim.vec3), n: sim.array(dtype=sim.vec3),
                     dist: sim.array(dtype=float)):
    i = sim.tid()
    qi, ni, di = rigid_contacts.closest_on_core(rigid_contacts.CONE, scale, p[i])
    q[i] = qi
    n[i] = ni
    dist[i] = di


def cone_surface_samples(r, h, n=400):
    """Points on a cone's base disk and slanted side (base at y = -h, apex at +h)."""
    t = np.linspace(0.0, 1.0, n)
    a = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    T, A = np.meshgrid(t, a, indexing="ij")
    side = np.stack([r * (1 - T) * np.cos(A), -h + 2 * h * T, r * (1 - T) * np.sin(A)], -1)
    base = np.stack([r * T * np.cos(A), np.full_like(T, -h), r * T * np.sin(A)], -1)
    return np.concatenate([side.reshape(-1, 3), base.reshape(-1, 3)])


def test_closest_point_on_a_cone_matches_its_sampled_surface():
    r, h = 0.3, 0.4
    rng = np.random.default_rng(7)
    p = (rng.uniform(-1.0, 1.0, (400, 3)) * (0.4, 0.5, 0.4)).astype(np.float32)
    q = np.zeros_like(p)
    n = np.zeros_like(p)
    dist = np.zeros(len(p), np.float32)
    sim.launch(cone_core_kernel, dim=len(p), inputs=[sim.vec3(r, h, 0.0), p, q, n, dist])
    samples = cone_surface_samples(r, h)
    nearest = np.array([np.linalg.norm(samples - x, axis=1).min() for x in p])
    rho = np.hypot(p[:, 0], p[:, 2])
    inside = (p[:, 1] >= -h) & (rho * 2 * h <= r * (h - p[:, 1]))
    assert 20 < inside.sum() < 200
    np.testing.assert_allclose(np.abs(dist), nearest, atol=3e-3)   # the samples' spacing
    assert np.all((dist < 0) == inside)
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(q + n * dist[:, None], p, atol=1e-5)
    # q lies on the surface: on the base, or on the slant rho = r (h - y) / (2 h)
    q_rho = np.hypot(q[:, 0], q[:, 2])
    on_base = np.abs(q[:, 1] + h) < 1e-5
    on_side = np.abs(q_rho - r * (h - q[:, 1]) / (2 * h)) < 1e-5
    assert np.all(on_base | on_side)


@pytest.mark.parametrize("shape, height", [("sphere", 0.5), ("box", 0.45)])
def test_shapes_rest_on_an_upturned_cone(shape, height):
    """A static cone apex down, its base (radius 0.4) the flat top at z = 0.4: a sphere
    (r 0.1) rests at 0.5, a box (half 0.05) at 0.45 (XPBD, 20 substeps)."""
    b = physics.ModelBuilder(gravity=-G)
    b.add_shape_cone(-1, xform=((0.0, 0.0, 0.2), (1.0, 0.0, 0.0, 0.0)), radius=0.4,
                     half_height=0.2, axis="z")
    body = b.add_body(xform=((0.1, -0.05, height + 0.02), None))
    if shape == "sphere":
        b.add_shape_sphere(body, radius=0.1)
    else:
        b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.05)
    model = b.finalize()
    state, _ = settle(model, physics.SolverXPBD(model), seconds=1.0)
    assert state.body_q[0, 2] == pytest.approx(height, abs=1e-4)
    assert np.abs(state.body_qd[0]).max() < 1e-3


# ------------------------------------------------------------------------- broad phase

def pile(worlds=1, n=40, seed=2):
    """*n* boxes, spheres and capsules at random in a 0.8 m cube (many overlapping), on
    the ground, in *worlds* replicated worlds at the same place."""
    rng = np.random.default_rng(seed)
    template = physics.ModelBuilder(gravity=-G)
    for k in range(n):
        body = template.add_body(xform=(rng.uniform(0.0, 0.8, 3), rng.normal(size=4)
                                        / 2.0))
        kind = k % 3
        if kind == 0:
            template.add_shape_box(body, hx=0.06, hy=0.04, hz=0.05)
        elif kind == 1:
            template.add_shape_sphere(body, radius=0.05)
        else:
            template.add_shape_capsule(body, radius=0.03, half_height=0.05)
    b = physics.ModelBuilder(gravity=-G)
    b.add_ground_plane()
    b.replicate(template, worlds)
    return b.finalize()


def contact_set(model, broad_phase):
    model.rigid_broad_phase = broad_phase
    contacts = model.collide(model.state())
    count = int(contacts.rigid_contact_count[0])
    return sorted(zip(contacts.rigid_contact_shape0[:count].tolist(),
                      contacts.rigid_contact_shape1[:count].tolist(),
                      np.round(contacts.rigid_contact_point0[:count], 5).tolist(),
                      np.round(contacts.rigid_contact_point1[:count], 5).tolist()))


@pytest.mark.parametrize("worlds", [1, 3])
def test_the_bvh_broad_phase_finds_the_contacts_of_every_pair(worlds):
    """The same contacts (shapes and points) from the Bvh as from testing every pair of a
    world; replicated worlds at one place only meet their own shapes."""
    model = pile(worlds)
    assert model.rigid_broad_phase == "auto"
    from numba_sim.physics.rigid_contacts import uses_bvh
    assert uses_bvh(model)                          # 41 shapes in a world: > 32
    pairs = contact_set(model, "pairs")
    assert contact_set(model, "bvh") == pairs
    assert len(pairs) > 100
    world = model.shape_world
    assert all(world[a] == world[b] or world[a] < 0 or world[b] < 0 for a, b, _, _ in pairs)


def test_a_floor_of_boxes_and_spheres_rests_through_the_bvh():
    """36 boxes side by side on the ground and a sphere on each (XPBD, the Bvh broad
    phase): boxes at their half height, spheres on top, at rest."""
    b = physics.ModelBuilder(gravity=-G)
    b.add_ground_plane()
    for i in range(6):
        for j in range(6):
            box = b.add_body(xform=((0.11 * i, 0.11 * j, 0.052), None))
            b.add_shape_box(box, hx=0.05, hy=0.05, hz=0.05)
            ball = b.add_body(xform=((0.11 * i, 0.11 * j, 0.155), None))
            b.add_shape_sphere(ball, radius=0.05)
    model = b.finalize()
    from numba_sim.physics.rigid_contacts import uses_bvh
    assert uses_bvh(model)
    state, _ = settle(model, physics.SolverXPBD(model), seconds=0.5)
    np.testing.assert_allclose(state.body_q[0::2, 2], 0.05, atol=1e-4)
    np.testing.assert_allclose(state.body_q[1::2, 2], 0.15, atol=1e-4)
    assert np.abs(state.body_qd).max() < 1e-2


def test_a_bad_broad_phase_setting_is_named():
    model = pile(1, n=2)
    model.rigid_broad_phase = "octree"
    with pytest.raises(ValueError, match="collide: model.rigid_broad_phase must be 'auto', "
                                         "'bvh' or 'pairs', got 'octree'"):
        model.collide(model.state())


@pytest.mark.parametrize("name", ["shape_bounds_kernel", "shape_contacts_bvh_kernel"])
def test_broad_phase_kernels_compile_for_cuda_offline(name, private_device_code_cache):
    from ptx_checks import assert_float32_only

    m = pile(1, n=4)
    state = m.state()
    c = m.contacts()
    bvh, lowers, uppers, group = rigid_contacts.shape_bvh(m)
    if name == "shape_bounds_kernel":
        inputs = [state.body_q, m.shape_type, m.shape_body, m.shape_transform, m.shape_scale,
                  m.shape_thickness, m.shape_mesh_radius, 0.1, lowers, uppers]
    else:
        inputs = [bvh.id, group, lowers, uppers, state.body_q, m.shape_type, m.shape_body,
                  m.shape_transform, m.shape_scale, m.shape_thickness, m.shape_world,
                  m.shape_collision_group, m.shape_shape_collision, m.body_parent,
                  m.shape_source_ptr, m.shape_mesh_radius,
                  *rigid_contacts.mesh_point_arrays(m), 0.1, c.rigid_contact_max,
                  *rigid_contacts.rigid_contact_arrays(c)]
    library = getattr(rigid_contacts, name).compile("cuda", inputs, cc=(7, 5))
    ptx = library.get_asm_str(cc=(7, 5))
    assert ".entry" in ptx
    assert_float32_only(ptx)
