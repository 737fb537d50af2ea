"""Rigid contacts, found by ``model.collide``: body shapes (sphere, box, capsule,
cylinder, cone, mesh) against static planes (the ground and ``add_shape_plane``) and
against each other (and against static shapes).

Each shape is a core with a radius: a sphere a point, a capsule a segment (with their
radius), a box, cylinder, cone or mesh itself (radius 0).  Its contact points
(API-physics.md) are its core's ends: a sphere its centre, a capsule the two ends of
its segment, a box its 8 corners, a mesh its vertices.

* Against a plane of its world (or a global plane such as the ground), each contact
  point of a body shape within ``rigid_contact_margin`` of the plane is a contact.
* Cylinders and cones have points on their rims (8 a rim; a cone also its apex), and
  against a plane each rim's lowest point at ``collide`` time (exact for a cylinder on
  its side); they meet planes and the other shapes' cores, and are cores that other
  shapes' points meet.
* Between two shapes A and B (not both static, not on one body, not the parent and
  child of a joint, in one world or one of them global, of collision groups that
  meet: equal, or either -1), each contact point of A is taken to the closest point
  of B's core (a mesh's by ``mesh_query_point``), and each of B to A's.  A box's
  corners meet another box on one face, the one the separating axis test on that
  box's face axes picks, and only where they are over that face; and when the
  separating-axis test over both boxes' faces and the 9 crossings of their edges
  picks a crossing, the two edges' closest points are one more contact (edge against
  edge, which no corner finds).  A pair within the margin is a contact.  Candidates
  are every pair whose bounding spheres come within the margin: a thread per shape
  tests its world's shapes and the global ones (``shape_contacts_kernel``), or those
  whose boxes overlap its own in a Bvh grouped by world (``shape_contacts_bvh_kernel``,
  when a world holds more than ``BVH_MIN_SHAPES``).

Each contact holds:

* ``rigid_contact_shape0`` the shape whose contact point it is, ``rigid_contact_shape1``
  the other (the plane);
* ``rigid_contact_point0`` the point in shape0's body frame, ``rigid_contact_point1`` the
  closest point of shape1's core in shape1's body frame (world for a static shape);
* ``rigid_contact_normal`` (world) from shape1 towards shape0;
* ``rigid_contact_thickness0/1`` what is added to each side (radius + shape thickness).

Solvers recompute the separation every substep from the current poses:
``d = dot(n, X_0 * point0 - X_1 * point1) - thickness0 - thickness1`` (penetrating
when negative), so colliding once per frame is enough.
"""

import warnings

import numpy as np

import numba_sim as sim
from numba_sim.physics.collide import closest_on_mesh

PLANE = 0
SPHERE = 1
CAPSULE = 2
CYLINDER = 3
CONE = 4
BOX = 5
MESH = 6

RIM_POINTS = 8
"""points on each circular rim of a cylinder or cone"""
CONTACT_POINTS = {SPHERE: 1, CAPSULE: 2, BOX: 8, CYLINDER: 2 * RIM_POINTS, CONE: RIM_POINTS + 1}
"""contact points per body shape type"""
PLANE_POINTS = {**CONTACT_POINTS, CYLINDER: 2 * RIM_POINTS + 2, CONE: RIM_POINTS + 2}
"""... against a plane (each rim's lowest point too)"""


@sim.func
def shape_contact_point(geo: int, scale: sim.vec3, k: int):
    """(point k in the shape frame, the thickness around it) of a body shape: a sphere's
    centre, a capsule's segment ends, a box's corners, points on a cylinder's two rims,
    a cone's base rim and apex."""
    if geo == SPHERE:
        return sim.vec3(0.0, 0.0, 0.0), scale[0]
    if geo == CAPSULE:
        side = 1.0
        if k == 1:
            side = -1.0
        return sim.vec3(0.0, side * scale[1], 0.0), scale[0]
    if geo == CYLINDER or geo == CONE:
        if geo == CONE and k == RIM_POINTS:
            return sim.vec3(0.0, scale[1], 0.0), 0.0
        angle = 2.0 * sim.pi * float(k % RIM_POINTS) / float(RIM_POINTS)
        y = -scale[1]
        if k >= RIM_POINTS:
            y = scale[1]
        return sim.vec3(scale[0] * sim.cos(angle), y, scale[0] * sim.sin(angle)), 0.0
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
    elif geo == CYLINDER:
        count = 2 * RIM_POINTS
    elif geo == CONE:
        count = RIM_POINTS + 1
    return count


@sim.func
def point_count(s: int, geo: int, shape_mesh_count: sim.array(dtype=sim.int32)):
    """Contact points of shape *s*: a mesh's vertices, else ``shape_point_count``."""
    count = shape_point_count(geo)
    if geo == MESH:
        count = shape_mesh_count[s]
    return count


@sim.func
def contact_point(s: int, geo: int, scale: sim.vec3, k: int,
                  shape_mesh_start: sim.array(dtype=sim.int32),
                  shape_mesh_points: sim.array(dtype=sim.vec3)):
    """(contact point *k* of shape *s* in its frame, the thickness around it): a mesh's
    vertex *k* (scaled), else ``shape_contact_point``."""
    point = sim.vec3()
    radius = 0.0
    if geo == MESH:
        point = shape_mesh_points[shape_mesh_start[s] + k]
    else:
        point, radius = shape_contact_point(geo, scale, k)
    return point, radius


@sim.func
def rim_support_count(geo: int):
    """Points a cylinder (one per rim) or a cone (its base's) adds against a plane: each
    rim's lowest point, exact at ``collide`` time, between the rim samples."""
    count = 0
    if geo == CYLINDER:
        count = 2
    elif geo == CONE:
        count = 1
    return count


@sim.func
def rim_support_point(geo: int, scale: sim.vec3, k: int, down: sim.vec3):
    """(rim *k*'s lowest point along *down* (shape frame), whether it differs from the rim
    samples: not when the rim lies flat)."""
    d = sim.vec3(down[0], 0.0, down[2])
    y = -scale[1]
    if geo == CYLINDER and k == 1:
        y = scale[1]
    length = sim.length(d)
    point = sim.vec3(0.0, y, 0.0)
    if length > 1.0e-4:
        point = sim.vec3(d[0] * (scale[0] / length), y, d[2] * (scale[0] / length))
    return point, length > 1.0e-4


@sim.kernel
def plane_contacts_kernel(
        body_q: sim.array(dtype=sim.transform), shape_planes: sim.array(dtype=sim.int32),
        shape_type: sim.array(dtype=sim.int32), shape_body: sim.array(dtype=sim.int32),
        shape_transform: sim.array(dtype=sim.transform), shape_scale: sim.array(dtype=sim.vec3),
        shape_thickness: sim.array(dtype=float), shape_world: sim.array(dtype=sim.int32),
        shape_collision: sim.array(dtype=sim.int32),
        shape_mesh_start: sim.array(dtype=sim.int32),
        shape_mesh_count: sim.array(dtype=sim.int32),
        shape_mesh_points: sim.array(dtype=sim.vec3), margin: float, contact_max: int,
        contact_count: sim.array(dtype=sim.int32), contact_shape0: sim.array(dtype=sim.int32),
        contact_shape1: sim.array(dtype=sim.int32), contact_point0: sim.array(dtype=sim.vec3),
        contact_point1: sim.array(dtype=sim.vec3), contact_normal: sim.array(dtype=sim.vec3),
        contact_thickness0: sim.array(dtype=float), contact_thickness1: sim.array(dtype=float)):
    s = sim.tid()
    b = shape_body[s]
    count = point_count(s, shape_type[s], shape_mesh_count)
    if b >= 0 and shape_collision[s] != 0 and count > 0:
        X_bs = shape_transform[s]
        X_ws = body_q[b] * X_bs
        for i in range(shape_planes.shape[0]):
            p = shape_planes[i]
            if shape_collision[p] != 0 and (shape_world[p] < 0 or
                                            shape_world[p] == shape_world[s]):
                P = shape_transform[p]
                origin = sim.transform_get_translation(P)
                normal = sim.transform_vector(P, sim.vec3(0.0, 0.0, 1.0))
                half = shape_scale[p]
                P_inv = sim.transform_inverse(P)
                down = sim.quat_rotate_inv(sim.transform_get_rotation(X_ws), -normal)
                for k in range(count + rim_support_count(shape_type[s])):
                    local = sim.vec3()
                    radius = 0.0
                    distinct = True
                    if k < count:
                        local, radius = contact_point(s, shape_type[s], shape_scale[s], k,
                                                      shape_mesh_start, shape_mesh_points)
                    else:
                        local, distinct = rim_support_point(shape_type[s], shape_scale[s],
                                                            k - count, down)
                    world = sim.transform_point(X_ws, local)
                    inside = distinct
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


@sim.func
def core_radius(geo: int, scale: sim.vec3):
    """The radius around a shape's core (a sphere's and a capsule's; a box's is 0)."""
    r = 0.0
    if geo == SPHERE or geo == CAPSULE:
        r = scale[0]
    return r


@sim.func
def bounding_radius(geo: int, scale: sim.vec3):
    """The radius of a sphere about the shape's origin that holds the shape (a mesh's
    is in ``shape_mesh_radius``: 0 here)."""
    r = scale[0]
    if geo == MESH:
        r = 0.0
    elif geo == CAPSULE:
        r = scale[0] + scale[1]
    elif geo == BOX:
        r = sim.length(scale)
    elif geo == CYLINDER or geo == CONE:
        r = sim.sqrt(scale[0] * scale[0] + scale[1] * scale[1])
    return r


@sim.func
def closest_on_core(geo: int, scale: sim.vec3, p: sim.vec3):
    """(closest point of the shape's core to *p*, the unit normal there towards *p*, the
    signed distance of *p* from the core: negative inside a box, a cylinder or a cone),
    in the shape frame."""
    if geo == CONE:
        return closest_on_cone(scale, p)
    q = sim.vec3()
    radial = sim.vec3(p[0], 0.0, p[2])
    rl = sim.length(radial)
    if geo == CAPSULE:
        q = sim.vec3(0.0, sim.clamp(p[1], -scale[1], scale[1]), 0.0)
    elif geo == CYLINDER:
        q = sim.vec3(p[0], sim.clamp(p[1], -scale[1], scale[1]), p[2])
        if rl > scale[0]:
            q = sim.vec3(p[0] * (scale[0] / rl), q[1], p[2] * (scale[0] / rl))
    elif geo == BOX:
        q = sim.vec3(sim.clamp(p[0], -scale[0], scale[0]), sim.clamp(p[1], -scale[1], scale[1]),
                     sim.clamp(p[2], -scale[2], scale[2]))
    d = p - q
    dist = sim.length(d)
    n = sim.vec3(0.0, 0.0, 1.0)
    if dist > 0.0:
        n = d / dist
    elif geo == BOX:
        # inside the box: out through the nearest face
        k = 0
        depth = scale[0] - sim.abs(p[0])
        for axis in range(1, 3):
            if scale[axis] - sim.abs(p[axis]) < depth:
                depth = scale[axis] - sim.abs(p[axis])
                k = axis
        side = 1.0
        if p[k] < 0.0:
            side = -1.0
        n = sim.vec3()
        n[k] = side
        q = p
        q[k] = side * scale[k]
        dist = -depth
    elif geo == CYLINDER:
        # inside the cylinder: out through the nearer of its side and its caps
        side = 1.0
        if p[1] < 0.0:
            side = -1.0
        cap = scale[1] - sim.abs(p[1])
        if scale[0] - rl < cap and rl > 0.0:
            n = radial / rl
            q = sim.vec3(n[0] * scale[0], p[1], n[2] * scale[0])
            dist = rl - scale[0]
        else:
            n = sim.vec3(0.0, side, 0.0)
            q = sim.vec3(p[0], side * scale[1], p[2])
            dist = -cap
    return q, n, dist


@sim.func
def reference_face(scale: sim.vec3, other_scale: sim.vec3, X: sim.transform):
    """(axis, side) of a box's face that another box (half extents *other_scale*, pose
    *X* in this box's frame) rests on: of the box's three face axes, the one along which
    the two overlap least (the separating axis test on this box's faces), on the other
    box's side."""
    R = sim.quat_to_matrix(sim.transform_get_rotation(X))
    d = sim.transform_get_translation(X)
    k = 0
    least = 1.0e30
    for axis in range(3):
        reach = sim.abs(R[axis, 0]) * other_scale[0] + sim.abs(R[axis, 1]) * other_scale[1] + \
            sim.abs(R[axis, 2]) * other_scale[2]
        overlap = scale[axis] + reach - sim.abs(d[axis])
        if overlap < least:
            least = overlap
            k = axis
    side = 1.0
    if d[k] < 0.0:
        side = -1.0
    return k, side


@sim.func
def box_edge_contact(scale: sim.vec3, other_scale: sim.vec3, X: sim.transform):
    """The edge-against-edge contact of a box (half extents *scale*) and another
    (*other_scale*, pose *X* in this box's frame), which their corners do not find:
    (whether the separating-axis test over both boxes' face axes and the 9 crossings of
    their edge directions picks a crossing, by 5% of the least face overlap, and the
    two edges' closest points lie inside both edges; the point on the other box's edge,
    the point on this box's edge, the axis from this box towards the other), in this
    box's frame."""
    R = sim.quat_to_matrix(sim.transform_get_rotation(X))
    d = sim.transform_get_translation(X)
    least_face = 1.0e30
    for axis in range(3):
        reach = sim.abs(R[axis, 0]) * other_scale[0] + sim.abs(R[axis, 1]) * other_scale[1] + \
            sim.abs(R[axis, 2]) * other_scale[2]
        least_face = sim.min(least_face, scale[axis] + reach - sim.abs(d[axis]))
        reach_mine = sim.abs(R[0, axis]) * scale[0] + sim.abs(R[1, axis]) * scale[1] + \
            sim.abs(R[2, axis]) * scale[2]
        column = sim.vec3(R[0, axis], R[1, axis], R[2, axis])
        least_face = sim.min(least_face,
                             other_scale[axis] + reach_mine - sim.abs(sim.dot(column, d)))
    least_edge = 1.0e30
    mine = 0
    theirs = 0
    normal = sim.vec3(0.0, 0.0, 1.0)
    for i in range(3):
        e = sim.vec3()
        e[i] = 1.0
        for j in range(3):
            c = sim.vec3(R[0, j], R[1, j], R[2, j])
            axis = sim.cross(e, c)
            length = sim.length(axis)
            if length > 1.0e-3:
                axis = axis / length
                if sim.dot(axis, d) < 0.0:
                    axis = -axis
                reach = scale[0] * sim.abs(axis[0]) + scale[1] * sim.abs(axis[1]) + \
                    scale[2] * sim.abs(axis[2])
                for k in range(3):
                    ck = sim.vec3(R[0, k], R[1, k], R[2, k])
                    reach += other_scale[k] * sim.abs(sim.dot(axis, ck))
                overlap = reach - sim.dot(axis, d)
                if overlap < least_edge:
                    least_edge = overlap
                    mine = i
                    theirs = j
                    normal = axis
    found = least_edge + 0.05 * sim.abs(least_face) + 1.0e-6 < least_face
    # this box's edge along axis `mine` furthest along the normal, the other's along its
    # axis `theirs` furthest against it
    p_mine = sim.vec3()
    e = sim.vec3()
    e[mine] = 1.0
    for k in range(3):
        if k != mine:
            p_mine[k] = sim.sign(normal[k]) * scale[k]
    p_other = d
    c = sim.vec3(R[0, theirs], R[1, theirs], R[2, theirs])
    for k in range(3):
        if k != theirs:
            ck = sim.vec3(R[0, k], R[1, k], R[2, k])
            p_other = p_other - ck * (sim.sign(sim.dot(normal, ck)) * other_scale[k])
    # closest points of the two edge lines
    w = p_mine - p_other
    b = sim.dot(e, c)
    denominator = sim.max(1.0 - b * b, 1.0e-12)
    t = (b * sim.dot(c, w) - sim.dot(e, w)) / denominator
    u = (sim.dot(c, w) - b * sim.dot(e, w)) / denominator
    found = found and sim.abs(t) <= scale[mine] and sim.abs(u) <= other_scale[theirs]
    return found, p_other + c * u, p_mine + e * t, normal


@sim.func
def closest_on_cone(scale: sim.vec3, p: sim.vec3):
    """(closest point of a solid cone (base of radius ``scale[0]`` at ``y = -scale[1]``,
    apex at ``+scale[1]``) to *p*, the unit normal there towards *p*, the signed distance:
    negative inside), in the shape frame: in the plane of the axis and *p*, the closest
    point of the triangle (apex, rim, base centre)."""
    r = scale[0]
    h = scale[1]
    rho = sim.sqrt(p[0] * p[0] + p[2] * p[2])
    radial = sim.vec3(1.0, 0.0, 0.0)
    if rho > 0.0:
        radial = sim.vec3(p[0] / rho, 0.0, p[2] / rho)
    y = p[1]
    # the slanted side from the rim (r, -h) to the apex (0, h), and its outward normal
    side_len = sim.sqrt(r * r + 4.0 * h * h)
    side_n_rho = 2.0 * h / side_len
    side_n_y = r / side_len
    s = sim.clamp(((rho - r) * (-r) + (y + h) * (2.0 * h)) / (side_len * side_len), 0.0, 1.0)
    side_rho = r - s * r
    side_y = -h + s * 2.0 * h
    base_rho = sim.clamp(rho, 0.0, r)
    inside = y >= -h and rho * 2.0 * h <= r * (h - y)
    q_rho = 0.0
    q_y = 0.0
    n_rho = 0.0
    n_y = 0.0
    dist = 0.0
    if inside:
        base_depth = y + h
        side_depth = -((rho - r) * side_n_rho + (y + h) * side_n_y)
        if base_depth < side_depth:
            q_rho = rho
            q_y = -h
            n_y = -1.0
            dist = -base_depth
        else:
            q_rho = rho + side_n_rho * side_depth
            q_y = y + side_n_y * side_depth
            n_rho = side_n_rho
            n_y = side_n_y
            dist = -side_depth
    else:
        d_side = sim.sqrt((rho - side_rho) * (rho - side_rho) + (y - side_y) * (y - side_y))
        d_base = sim.sqrt((rho - base_rho) * (rho - base_rho) + (y + h) * (y + h))
        q_rho = side_rho
        q_y = side_y
        dist = d_side
        if d_base < d_side:
            q_rho = base_rho
            q_y = -h
            dist = d_base
        if dist > 0.0:
            n_rho = (rho - q_rho) / dist
            n_y = (y - q_y) / dist
        else:
            n_y = -1.0
    q = radial * q_rho + sim.vec3(0.0, q_y, 0.0)
    n = radial * n_rho + sim.vec3(0.0, n_y, 0.0)
    return q, n, dist


@sim.func
def face_contact(scale: sim.vec3, k: int, side: float, p: sim.vec3):
    """(point of the box's face (*k*, *side*) under *p*, the face normal, the height of *p*
    above the face: negative below it, whether *p* is over the face), in the box frame."""
    q = p
    q[k] = side * scale[k]
    n = sim.vec3()
    n[k] = side
    over = True
    for axis in range(3):  # (with 5% to spare: the corners of equal boxes lie on the
        #                      edges, and a small tilt moves them out by its angle)
        if axis != k and sim.abs(p[axis]) > scale[axis] * 1.05:
            over = False
    return q, n, side * p[k] - scale[k], over


@sim.func
def shapes_may_touch(a: int, b: int, shape_type: sim.array(dtype=sim.int32),
                     shape_body: sim.array(dtype=sim.int32),
                     shape_world: sim.array(dtype=sim.int32),
                     shape_group: sim.array(dtype=sim.int32),
                     shape_collision: sim.array(dtype=sim.int32),
                     body_parent: sim.array(dtype=sim.int32)):
    """Whether shapes *a* and *b* (both with contact points) are a candidate pair."""
    ba = shape_body[a]
    bb = shape_body[b]
    tb = shape_type[b]   # b's core: one closest_on_core or closest_on_mesh knows
    ok = a != b and shape_collision[a] != 0 and shape_collision[b] != 0 and \
        (tb == SPHERE or tb == CAPSULE or tb == BOX or tb == CYLINDER or tb == CONE or
         tb == MESH) and \
        (ba >= 0 or bb >= 0) and ba != bb
    if ok and ba >= 0 and bb >= 0:
        ok = body_parent[ba] != bb and body_parent[bb] != ba
    if ok:
        wa = shape_world[a]
        wb = shape_world[b]
        ok = wa < 0 or wb < 0 or wa == wb
    if ok:
        ga = shape_group[a]
        gb = shape_group[b]
        ok = ga < 0 or gb < 0 or ga == gb
    return ok


@sim.func(inline=True)
def shape_pair_contacts(
        s: int, o: int, count: int, X_ws: sim.transform, reach_s: float,
        body_q: sim.array(dtype=sim.transform), shape_type: sim.array(dtype=sim.int32),
        shape_body: sim.array(dtype=sim.int32),
        shape_transform: sim.array(dtype=sim.transform), shape_scale: sim.array(dtype=sim.vec3),
        shape_thickness: sim.array(dtype=float), shape_source_ptr: sim.array(dtype=sim.uint64),
        shape_mesh_radius: sim.array(dtype=float), shape_mesh_start: sim.array(dtype=sim.int32),
        shape_mesh_points: sim.array(dtype=sim.vec3), margin: float, contact_max: int,
        contact_count: sim.array(dtype=sim.int32), contact_shape0: sim.array(dtype=sim.int32),
        contact_shape1: sim.array(dtype=sim.int32), contact_point0: sim.array(dtype=sim.vec3),
        contact_point1: sim.array(dtype=sim.vec3), contact_normal: sim.array(dtype=sim.vec3),
        contact_thickness0: sim.array(dtype=float), contact_thickness1: sim.array(dtype=float)):
    """The contacts of shape *s*'s *count* contact points (its pose *X_ws*, its bounding
    radius plus thickness *reach_s*) against shape *o*'s core, a candidate pair, when
    their bounding spheres come within the margin."""
    X_bs = shape_transform[s]
    bo = shape_body[o]
    X_bo = shape_transform[o]
    X_wo = X_bo
    if bo >= 0:
        X_wo = body_q[bo] * X_bo
    geo = shape_type[o]
    scale = shape_scale[o]
    radius_o = bounding_radius(geo, scale) + shape_mesh_radius[o]
    reach = reach_s + radius_o + shape_thickness[o] + margin
    if sim.length(sim.transform_get_translation(X_wo) -
                  sim.transform_get_translation(X_ws)) <= reach:
        X_ow = sim.transform_inverse(X_wo)
        thickness1 = core_radius(geo, scale) + shape_thickness[o]
        # a box's corners against a box: the face it rests on (corners of equal boxes lie
        # on each other's edges, where the nearest face flips sideways as soon as they
        # press in)
        box_pair = geo == BOX and shape_type[s] == BOX
        face = 0
        side = 1.0
        X_os = X_ow * X_ws
        edges = 0
        if box_pair:
            face, side = reference_face(scale, shape_scale[s], X_os)
            if s < o:
                edges = 1   # the pair's edge-against-edge contact, once
        for k in range(count + edges):
            local = sim.vec3()
            radius = 0.0
            p = sim.vec3()
            if k < count:
                local, radius = contact_point(s, shape_type[s], shape_scale[s], k,
                                              shape_mesh_start, shape_mesh_points)
                p = sim.transform_point(X_os, local)
            over = True
            q = sim.vec3()
            n = sim.vec3()
            dist = 0.0
            if k == count:
                over, p, q, n = box_edge_contact(scale, shape_scale[s], X_os)
                local = sim.transform_point(sim.transform_inverse(X_os), p)
                dist = sim.dot(n, p - q)
            elif box_pair:
                q, n, dist, over = face_contact(scale, face, side, p)
            elif geo == MESH:
                # any point inside the mesh's bounding sphere has its closest surface
                # point within twice the sphere's radius
                over, q, n, dist = closest_on_mesh(shape_source_ptr[o], p,
                                                   2.0 * radius_o + margin + radius)
            else:
                q, n, dist = closest_on_core(geo, scale, p)
            thickness0 = radius + shape_thickness[s]
            if over and dist - thickness0 - thickness1 < margin:
                slot = sim.atomic_add(contact_count, 0, 1)
                if slot < contact_max:
                    contact_shape0[slot] = s
                    contact_shape1[slot] = o
                    contact_point0[slot] = sim.transform_point(X_bs, local)
                    contact_point1[slot] = sim.transform_point(X_bo, q)
                    contact_normal[slot] = sim.transform_vector(X_wo, n)
                    contact_thickness0[slot] = thickness0
                    contact_thickness1[slot] = thickness1


@sim.func
def shape_pose_and_reach(s: int, body_q: sim.array(dtype=sim.transform),
                         shape_type: sim.array(dtype=sim.int32),
                         shape_body: sim.array(dtype=sim.int32),
                         shape_transform: sim.array(dtype=sim.transform),
                         shape_scale: sim.array(dtype=sim.vec3),
                         shape_thickness: sim.array(dtype=float),
                         shape_mesh_radius: sim.array(dtype=float)):
    """(shape *s*'s world pose, the radius of a sphere about its origin holding it and
    its thickness)."""
    X_ws = shape_transform[s]
    if shape_body[s] >= 0:
        X_ws = body_q[shape_body[s]] * X_ws
    reach = bounding_radius(shape_type[s], shape_scale[s]) + shape_mesh_radius[s] + \
        shape_thickness[s]
    return X_ws, reach


@sim.kernel
def shape_contacts_kernel(
        body_q: sim.array(dtype=sim.transform), shape_count: int,
        shape_type: sim.array(dtype=sim.int32), shape_body: sim.array(dtype=sim.int32),
        shape_transform: sim.array(dtype=sim.transform), shape_scale: sim.array(dtype=sim.vec3),
        shape_thickness: sim.array(dtype=float), shape_world: sim.array(dtype=sim.int32),
        shape_group: sim.array(dtype=sim.int32), shape_collision: sim.array(dtype=sim.int32),
        shape_world_start: sim.array(dtype=sim.int32),
        shape_world_end: sim.array(dtype=sim.int32), shape_global: sim.array(dtype=sim.int32),
        body_parent: sim.array(dtype=sim.int32), shape_source_ptr: sim.array(dtype=sim.uint64),
        shape_mesh_radius: sim.array(dtype=float), shape_mesh_start: sim.array(dtype=sim.int32),
        shape_mesh_count: sim.array(dtype=sim.int32),
        shape_mesh_points: sim.array(dtype=sim.vec3), margin: float, contact_max: int,
        contact_count: sim.array(dtype=sim.int32), contact_shape0: sim.array(dtype=sim.int32),
        contact_shape1: sim.array(dtype=sim.int32), contact_point0: sim.array(dtype=sim.vec3),
        contact_point1: sim.array(dtype=sim.vec3), contact_normal: sim.array(dtype=sim.vec3),
        contact_thickness0: sim.array(dtype=float), contact_thickness1: sim.array(dtype=float)):
    """Thread *s*: the contact points of shape *s* against the cores of the others: of
    its world's span of shapes and the global ones (a global shape: of every shape)."""
    s = sim.tid()
    count = point_count(s, shape_type[s], shape_mesh_count)
    if count > 0:
        X_ws, reach_s = shape_pose_and_reach(s, body_q, shape_type, shape_body,
                                             shape_transform, shape_scale, shape_thickness,
                                             shape_mesh_radius)
        ws = shape_world[s]
        first = 0
        span = shape_count
        n_global = 0
        if ws >= 0:
            first = shape_world_start[ws]
            span = shape_world_end[ws] - first
            n_global = shape_global.shape[0]
        for c in range(span + n_global):
            o = first + c
            if c >= span:
                o = shape_global[c - span]
            elif ws >= 0 and shape_world[o] < 0:
                o = s   # a global shape inside the span: met in the global list
            if shapes_may_touch(s, o, shape_type, shape_body, shape_world, shape_group,
                                shape_collision, body_parent):
                shape_pair_contacts(
                    s, o, count, X_ws, reach_s, body_q, shape_type, shape_body,
                    shape_transform, shape_scale, shape_thickness, shape_source_ptr,
                    shape_mesh_radius, shape_mesh_start, shape_mesh_points, margin,
                    contact_max, contact_count, contact_shape0, contact_shape1, contact_point0,
                    contact_point1, contact_normal, contact_thickness0, contact_thickness1)


@sim.kernel
def shape_bounds_kernel(
        body_q: sim.array(dtype=sim.transform), shape_type: sim.array(dtype=sim.int32),
        shape_body: sim.array(dtype=sim.int32), shape_transform: sim.array(dtype=sim.transform),
        shape_scale: sim.array(dtype=sim.vec3), shape_thickness: sim.array(dtype=float),
        shape_mesh_radius: sim.array(dtype=float), margin: float,
        lowers: sim.array(dtype=sim.vec3), uppers: sim.array(dtype=sim.vec3)):
    """The broad phase's box of shape *s*: its bounding sphere plus half the margin (two
    boxes overlap whenever the pair's bounding spheres come within the margin)."""
    s = sim.tid()
    X_ws, reach = shape_pose_and_reach(s, body_q, shape_type, shape_body, shape_transform,
                                       shape_scale, shape_thickness, shape_mesh_radius)
    if shape_type[s] == PLANE:
        reach = 0.0                       # planes meet body shapes in plane_contacts_kernel
    centre = sim.transform_get_translation(X_ws)
    half = sim.vec3(reach + 0.5 * margin)
    lowers[s] = centre - half
    uppers[s] = centre + half


@sim.kernel
def shape_contacts_bvh_kernel(
        bvh: sim.uint64, global_group: int, lowers: sim.array(dtype=sim.vec3),
        uppers: sim.array(dtype=sim.vec3),
        body_q: sim.array(dtype=sim.transform), shape_type: sim.array(dtype=sim.int32),
        shape_body: sim.array(dtype=sim.int32),
        shape_transform: sim.array(dtype=sim.transform), shape_scale: sim.array(dtype=sim.vec3),
        shape_thickness: sim.array(dtype=float), shape_world: sim.array(dtype=sim.int32),
        shape_group: sim.array(dtype=sim.int32), shape_collision: sim.array(dtype=sim.int32),
        body_parent: sim.array(dtype=sim.int32), shape_source_ptr: sim.array(dtype=sim.uint64),
        shape_mesh_radius: sim.array(dtype=float), shape_mesh_start: sim.array(dtype=sim.int32),
        shape_mesh_count: sim.array(dtype=sim.int32),
        shape_mesh_points: sim.array(dtype=sim.vec3), margin: float, contact_max: int,
        contact_count: sim.array(dtype=sim.int32), contact_shape0: sim.array(dtype=sim.int32),
        contact_shape1: sim.array(dtype=sim.int32), contact_point0: sim.array(dtype=sim.vec3),
        contact_point1: sim.array(dtype=sim.vec3), contact_normal: sim.array(dtype=sim.vec3),
        contact_thickness0: sim.array(dtype=float), contact_thickness1: sim.array(dtype=float)):
    """Thread *s*: as ``shape_contacts_kernel``, the candidates from a Bvh over the
    shapes' boxes (``shape_bounds_kernel``), grouped by world (the global shapes in group
    *global_group*): the boxes of its world's group and of the global group that overlap
    its own (a global shape: of the whole tree)."""
    s = sim.tid()
    count = point_count(s, shape_type[s], shape_mesh_count)
    if count > 0:
        X_ws, reach_s = shape_pose_and_reach(s, body_q, shape_type, shape_body,
                                             shape_transform, shape_scale, shape_thickness,
                                             shape_mesh_radius)
        ws = shape_world[s]
        lo = lowers[s]
        hi = uppers[s]
        for part in range(2):
            root = -1
            if ws >= 0:
                group = ws
                if part == 1:
                    group = global_group
                root = sim.bvh_get_group_root(bvh, group)
            if (ws >= 0 and root >= 0) or (ws < 0 and part == 0):
                for o in sim.bvh_query_aabb(bvh, lo, hi, root):
                    if shapes_may_touch(s, o, shape_type, shape_body, shape_world,
                                        shape_group, shape_collision, body_parent):
                        shape_pair_contacts(
                            s, o, count, X_ws, reach_s, body_q, shape_type, shape_body,
                            shape_transform, shape_scale, shape_thickness, shape_source_ptr,
                            shape_mesh_radius, shape_mesh_start, shape_mesh_points, margin,
                            contact_max, contact_count, contact_shape0, contact_shape1,
                            contact_point0, contact_point1, contact_normal,
                            contact_thickness0, contact_thickness1)


def rigid_contact_capacity(model):
    """Room for every contact ``collide`` may find: the contact points of each colliding
    body shape times the planes it may touch, and, for every pair of shapes that may
    meet (one world, or one of them global), the contact points of both (against at
    most ``CONTACT_NEIGHBOURS`` others of its world)."""
    types = sim.to_numpy(model.shape_type)
    bodies = sim.to_numpy(model.shape_body)
    collision = sim.to_numpy(model.shape_shape_collision) != 0
    worlds = sim.to_numpy(model.shape_world)
    mesh_points = sim.to_numpy(model.shape_mesh_count).astype(np.int64)
    points = np.array([CONTACT_POINTS.get(int(t), 0) for t in types], dtype=np.int64)
    plane_points = np.array([PLANE_POINTS.get(int(t), 0) for t in types], dtype=np.int64)
    points[types == MESH] = plane_points[types == MESH] = mesh_points[types == MESH]
    points[types == BOX] += 1         # room for a box pair's edge-against-edge contact
    planes = int(np.sum((types == PLANE) & (bodies < 0) & collision))
    capacity = int(plane_points[(bodies >= 0) & collision].sum()) * planes
    solid = collision & (points > 0)
    glob = solid & (worlds < 0)
    k_g, p_g = int(glob.sum()), int(points[glob].sum())
    for w in np.unique(worlds[solid & (worlds >= 0)]):
        mine = solid & (worlds == w)
        k_w, p_w = int(mine.sum()), int(points[mine].sum())
        capacity += min(k_w - 1, CONTACT_NEIGHBOURS) * p_w + k_g * p_w + k_w * p_g
    capacity += max(k_g - 1, 0) * p_g
    return capacity


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
    # a new contact set: SolverXPBD regroups its contacts by world once per version
    contacts.rigid_contact_version = getattr(contacts, "rigid_contact_version", 0) + 1
    if not (model.body_count and contacts.rigid_contact_max):
        return
    sim.launch(plane_contacts_kernel, dim=model.shape_count, inputs=[
        state.body_q, plane_shapes(model), model.shape_type, model.shape_body,
        model.shape_transform, model.shape_scale, model.shape_thickness, model.shape_world,
        model.shape_shape_collision, *mesh_point_arrays(model), model.rigid_contact_margin,
        contacts.rigid_contact_max, *rigid_contact_arrays(contacts)])
    mesh_arrays = [model.shape_source_ptr, model.shape_mesh_radius, *mesh_point_arrays(model)]
    contact_arrays = [model.rigid_contact_margin, contacts.rigid_contact_max,
                      *rigid_contact_arrays(contacts)]
    if uses_bvh(model):
        bvh, lowers, uppers, global_group = shape_bvh(model)
        sim.launch(shape_bounds_kernel, dim=model.shape_count, inputs=[
            state.body_q, model.shape_type, model.shape_body, model.shape_transform,
            model.shape_scale, model.shape_thickness, model.shape_mesh_radius,
            model.rigid_contact_margin, lowers, uppers])
        bvh.rebuild()    # (a refit keeps the topology of the last build: the boxes move)
        sim.launch(shape_contacts_bvh_kernel, dim=model.shape_count, inputs=[
            bvh.id, global_group, lowers, uppers, state.body_q, model.shape_type,
            model.shape_body, model.shape_transform, model.shape_scale, model.shape_thickness,
            model.shape_world, model.shape_collision_group, model.shape_shape_collision,
            model.body_parent, *mesh_arrays, *contact_arrays])
    else:
        sim.launch(shape_contacts_kernel, dim=model.shape_count, inputs=[
            state.body_q, model.shape_count, model.shape_type, model.shape_body,
            model.shape_transform, model.shape_scale, model.shape_thickness, model.shape_world,
            model.shape_collision_group, model.shape_shape_collision, model.shape_world_start,
            model.shape_world_end, model.shape_global, model.body_parent, *mesh_arrays,
            *contact_arrays])
    found = int(contacts.rigid_contact_count[0])
    if found > contacts.rigid_contact_max:
        contacts.rigid_contact_count[0] = contacts.rigid_contact_max
        warnings.warn(f"collide: {found} rigid contacts, room for {contacts.rigid_contact_max}: "
                      "the rest are dropped (pass a larger rigid_contact_max to "
                      "model.contacts())", RuntimeWarning, stacklevel=3)


BVH_MIN_SHAPES = 32
"""``rigid_broad_phase="auto"`` takes the Bvh when a world (or the global shapes) holds
more shapes than this: below it, testing every pair of a world costs less than a refit
and a tree walk per shape."""


CONTACT_NEIGHBOURS = 64
"""Room a shape gets for the contacts of its points against this many other shapes of
its world (all of them in a smaller world): every pair of a world of thousands of shapes
would need room for millions of contacts."""


def plane_shapes(model):
    """The indices of the model's static planes (made once)."""
    planes = model.__dict__.get("_plane_shapes")
    if planes is None:
        types = sim.to_numpy(model.shape_type)
        bodies = sim.to_numpy(model.shape_body)
        planes = model._xp.asarray(np.flatnonzero((types == PLANE) & (bodies < 0))
                                   .astype(np.int32))
        model.__dict__["_plane_shapes"] = planes              # (no version bump)
    return planes


def uses_bvh(model):
    """Whether ``collide`` finds shape pairs through the Bvh (``model.rigid_broad_phase``:
    "bvh", "pairs" or "auto")."""
    choice = model.rigid_broad_phase
    if choice not in ("auto", "bvh", "pairs"):
        raise ValueError(f"collide: model.rigid_broad_phase must be 'auto', 'bvh' or 'pairs', "
                         f"got {choice!r}")
    if choice != "auto":
        return choice == "bvh"
    largest = model.__dict__.get("_largest_shape_span")
    if largest is None:
        spans = sim.to_numpy(model.shape_world_end) - sim.to_numpy(model.shape_world_start)
        largest = max(int(spans.max(initial=0)), int(model.shape_global.shape[0]))
        model.__dict__["_largest_shape_span"] = largest       # (no version bump)
    return largest > BVH_MIN_SHAPES


def shape_bvh(model):
    """(the model's Bvh over its shapes' boxes, grouped by world with the global shapes
    in group ``num_worlds``, its lower and upper corners, that group), made once; the
    caller fills the corners and rebuilds it."""
    entry = model.__dict__.get("_shape_bvh")
    if entry is None:
        xp = model._xp
        n = model.shape_count
        lowers = xp.zeros((n, 3), dtype=np.float32)
        uppers = xp.zeros((n, 3), dtype=np.float32)
        worlds = sim.to_numpy(model.shape_world)
        groups = np.where(worlds < 0, model.num_worlds, worlds).astype(np.int32)
        bvh = sim.Bvh(lowers, uppers, groups=xp.asarray(groups))
        entry = model.__dict__["_shape_bvh"] = (bvh, lowers, uppers, model.num_worlds)
    return entry


def mesh_point_arrays(model):
    """The mesh shapes' contact points, as the rigid-contact kernels take them."""
    return [model.shape_mesh_start, model.shape_mesh_count, model.shape_mesh_points]


def rigid_contact_arrays(contacts):
    """The arrays a rigid-contact kernel takes, in its parameter order."""
    return [contacts.rigid_contact_count, contacts.rigid_contact_shape0,
            contacts.rigid_contact_shape1, contacts.rigid_contact_point0,
            contacts.rigid_contact_point1, contacts.rigid_contact_normal,
            contacts.rigid_contact_thickness0, contacts.rigid_contact_thickness1]
