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
