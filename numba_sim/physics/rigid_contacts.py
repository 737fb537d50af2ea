"""Rigid contacts: body shapes (sphere, box, capsule) against static planes (the ground
and ``add_shape_plane``), found by ``model.collide``.

Each body shape has contact points in its own frame (API-physics.md): a sphere its
centre (with its radius as thickness), a capsule the two ends of its segment (with
its radius), a box its 8 corners.  Each point within ``rigid_contact_margin`` of a
plane of its world (or of a global plane such as the ground) becomes a contact:

* ``rigid_contact_shape0`` the body shape, ``rigid_contact_shape1`` the plane;
* ``rigid_contact_point0`` the point in the body's frame, ``rigid_contact_point1`` its
  projection on the plane (world: planes are static);
* ``rigid_contact_normal`` the plane's normal (world), pointing from shape1 to shape0;
* ``rigid_contact_thickness0/1`` what is added to each side (radius + shape thickness).

Solvers recompute the separation every substep from the current pose:
``d = dot(n, X_body * point0 - point1) - thickness0 - thickness1`` (penetrating
when negative), so colliding once per frame is enough.
"""

import numpy as np

import numba_sim as sim

PLANE = 0
SPHERE = 1
CAPSULE = 2
BOX = 5

CONTACT_POINTS = {SPHERE: 1, CAPSULE: 2, BOX: 8}
"""contact points per body shape type"""


@sim.func
def shape_contact_point(geo: int, scale: sim.vec3, k: int):
    """(point k in the shape frame, the thickness around it) of a body shape."""
    if geo == SPHERE:
        return sim.vec3(0.0, 0.0, 0.0), scale[0]
    if geo == CAPSULE:
        side = 1.0
        if k == 1:
            side = -1.0
        return sim.vec3(0.0, side * scale[1], 0.0), scale[0]
    sx = 1.0
    if (k & 1) != 0:
        sx = -1.0
    sy = 1.0
    if (k & 2) != 0:
        sy = -1.0
    sz = 1.0
    if (k & 4) != 0:
        sz = -1.0
    return sim.vec3(sx * scale[0], sy * scale[1], sz * scale[2]), 0.0


@sim.func
def shape_point_count(geo: int):
    count = 0
    if geo == SPHERE:
        count = 1
    elif geo == CAPSULE:
        count = 2
    elif geo == BOX:
        count = 8
    return count


@sim.kernel
def plane_contacts_kernel(
        body_q: sim.array(dtype=sim.transform), shape_count: int,
        shape_type: sim.array(dtype=sim.int32), shape_body: sim.array(dtype=sim.int32),
        shape_transform: sim.array(dtype=sim.transform), shape_scale: sim.array(dtype=sim.vec3),
        shape_thickness: sim.array(dtype=float), shape_world: sim.array(dtype=sim.int32),
        shape_collision: sim.array(dtype=sim.int32), margin: float, contact_max: int,
        contact_count: sim.array(dtype=sim.int32), contact_shape0: sim.array(dtype=sim.int32),
        contact_shape1: sim.array(dtype=sim.int32), contact_point0: sim.array(dtype=sim.vec3),
        contact_point1: sim.array(dtype=sim.vec3), contact_normal: sim.array(dtype=sim.vec3),
        contact_thickness0: sim.array(dtype=float), contact_thickness1: sim.array(dtype=float)):
    s = sim.tid()
    b = shape_body[s]
    count = shape_point_count(shape_type[s])
    if b >= 0 and shape_collision[s] != 0 and count > 0:
        X_bs = shape_transform[s]
        X_ws = body_q[b] * X_bs
        for p in range(shape_count):
            if shape_type[p] == PLANE and shape_body[p] < 0 and shape_collision[p] != 0 and (
                    shape_world[p] < 0 or shape_world[p] == shape_world[s]):
                P = shape_transform[p]
                origin = sim.transform_get_translation(P)
                normal = sim.transform_vector(P, sim.vec3(0.0, 0.0, 1.0))
                half = shape_scale[p]
                P_inv = sim.transform_inverse(P)
                for k in range(count):
                    local, radius = shape_contact_point(shape_type[s], shape_scale[s], k)
                    world = sim.transform_point(X_ws, local)
                    inside = True
                    if half[0] > 0.0 and half[1] > 0.0:
                        on_plane = sim.transform_point(P_inv, world)
                        inside = sim.abs(on_plane[0]) <= half[0] and \
                            sim.abs(on_plane[1]) <= half[1]
                    height = sim.dot(normal, world - origin)
                    thickness0 = radius + shape_thickness[s]
                    if inside and height - thickness0 - shape_thickness[p] < margin:
                        slot = sim.atomic_add(contact_count, 0, 1)
                        if slot < contact_max:
                            contact_shape0[slot] = s
                            contact_shape1[slot] = p
                            contact_point0[slot] = sim.transform_point(X_bs, local)
                            contact_point1[slot] = world - normal * height
                            contact_normal[slot] = normal
                            contact_thickness0[slot] = thickness0
                            contact_thickness1[slot] = shape_thickness[p]


def rigid_contact_capacity(model):
    """Contact points of every colliding body shape times the planes it may touch."""
    types = _host(model.shape_type)
    bodies = _host(model.shape_body)
    collision = _host(model.shape_shape_collision)
    planes = int(np.sum((types == PLANE) & (bodies < 0) & (collision != 0)))
    points = sum(CONTACT_POINTS.get(int(t), 0) for t, b, c in zip(types, bodies, collision)
                 if b >= 0 and c)
    return points * planes


def _host(array):
    return array.get() if hasattr(array, "get") else np.asarray(array)


def init_rigid_contacts(contacts, model, rigid_contact_max):
    """The rigid-contact arrays of *contacts* (newton's names), room for
    *rigid_contact_max* contacts (default: ``rigid_contact_capacity``)."""
    xp = model._xp
    if rigid_contact_max is None:
        rigid_contact_max = rigid_contact_capacity(model)
    contacts.rigid_contact_max = int(rigid_contact_max)
    m = max(contacts.rigid_contact_max, 1)
    contacts.rigid_contact_count = xp.zeros(1, dtype=np.int32)
    contacts.rigid_contact_shape0 = xp.zeros(m, dtype=np.int32)
    contacts.rigid_contact_shape1 = xp.zeros(m, dtype=np.int32)
    contacts.rigid_contact_point0 = xp.zeros((m, 3), dtype=np.float32)
    contacts.rigid_contact_point1 = xp.zeros((m, 3), dtype=np.float32)
    contacts.rigid_contact_normal = xp.zeros((m, 3), dtype=np.float32)
    contacts.rigid_contact_thickness0 = xp.zeros(m, dtype=np.float32)
    contacts.rigid_contact_thickness1 = xp.zeros(m, dtype=np.float32)


def collide_rigid(model, state, contacts):
    """Fill *contacts*' rigid arrays from *state*'s body poses."""
    if state.body_q.shape != (model.body_count, 7):
        raise ValueError(f"collide: state has {state.body_q.shape[0]} bodies, the model "
                         f"{model.body_count} (a State of another model?)")
    contacts.rigid_contact_count[...] = 0
    if not (model.body_count and contacts.rigid_contact_max):
        return
    sim.launch(plane_contacts_kernel, dim=model.shape_count, inputs=[
        state.body_q, model.shape_count, model.shape_type, model.shape_body,
        model.shape_transform, model.shape_scale, model.shape_thickness, model.shape_world,
        model.shape_shape_collision, model.rigid_contact_margin, contacts.rigid_contact_max,
        *rigid_contact_arrays(contacts)])
    if int(contacts.rigid_contact_count[0]) > contacts.rigid_contact_max:
        contacts.rigid_contact_count[0] = contacts.rigid_contact_max


def rigid_contact_arrays(contacts):
    """The arrays a rigid-contact kernel takes, in its parameter order."""
    return [contacts.rigid_contact_count, contacts.rigid_contact_shape0,
            contacts.rigid_contact_shape1, contacts.rigid_contact_point0,
            contacts.rigid_contact_point1, contacts.rigid_contact_normal,
            contacts.rigid_contact_thickness0, contacts.rigid_contact_thickness1]
