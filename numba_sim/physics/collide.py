"""Particle-shape contact generation (``model.collide``).

For each particle and each shape that collides with particles (same world, or
a global shape such as the ground), the closest point of the shape's surface is
found in the shape's frame by a closed form (plane, sphere, box, capsule) or, for a
mesh, by ``mesh_query_point`` on its numba_sim ``Mesh`` (``closest_on_mesh``); when
the particle's surface is within ``soft_contact_margin`` of it, a contact is
recorded: the closest point in the body's frame (the world for static shapes)
and the outward normal in world space.  Solvers recompute the depth from the
current positions every substep, so colliding once per frame is enough.
"""

import numba_sim as sim

PLANE = 0
SPHERE = 1
CAPSULE = 2
BOX = 5
MESH = 6


@sim.func
def closest_on_mesh(mesh: sim.uint64, p: sim.vec3, max_dist: float):
    """(whether a surface point lies within *max_dist* of *p*, the closest one, the
    outward normal towards *p* (the face's where *p* is on the surface), the signed
    distance of *p*: negative inside), in the mesh frame."""
    query = sim.mesh_query_point(mesh, p, max_dist)
    q = sim.vec3()
    n = sim.vec3(0.0, 0.0, 1.0)
    dist = 0.0
    if query.result:
        q = sim.mesh_eval_position(mesh, query.face, query.u, query.v)
        d = p - q
        length = sim.length(d)
        if length > 1.0e-6:
            n = d * (query.sign / length)
        else:
            a = sim.mesh_eval_position(mesh, query.face, 1.0, 0.0)
            b = sim.mesh_eval_position(mesh, query.face, 0.0, 1.0)
            c = sim.mesh_eval_position(mesh, query.face, 0.0, 0.0)
            n = sim.normalize(sim.cross(b - a, c - a))
        dist = query.sign * length
    return query.result, q, n, dist


@sim.func
def closest_on_box(p: sim.vec3, half: sim.vec3):
    """(closest surface point, outward normal) of a box of half extents *half*."""
    outside = sim.vec3(sim.clamp(p[0], -half[0], half[0]), sim.clamp(p[1], -half[1], half[1]),
                       sim.clamp(p[2], -half[2], half[2]))
    delta = p - outside
    d = sim.length(delta)
    point = outside
    normal = sim.vec3(0.0, 0.0, 1.0)
    if d > 0.0:
        normal = delta / d
    else:
        # inside: leave through the nearest face
        best = half[0] - sim.abs(p[0])
        axis = 0
        for k in range(1, 3):
            gap = half[k] - sim.abs(p[k])
            if gap < best:
                best = gap
                axis = k
        side = 1.0
        if p[axis] < 0.0:
            side = -1.0
        normal = sim.vec3()
        normal[axis] = side
        point[axis] = side * half[axis]
    return point, normal


@sim.func
def closest_on_shape(geo: int, scale: sim.vec3, p: sim.vec3):
    """(closest surface point, outward normal) of a shape in its own frame."""
    point = sim.vec3()
    normal = sim.vec3(0.0, 0.0, 1.0)
    if geo == PLANE:
        point = sim.vec3(p[0], p[1], 0.0)
        if scale[0] > 0.0 and scale[1] > 0.0:
            point = sim.vec3(sim.clamp(p[0], -scale[0], scale[0]),
                             sim.clamp(p[1], -scale[1], scale[1]), 0.0)
            delta = p - point
            d = sim.length(delta)
            if d > 0.0 and (sim.abs(p[0]) > scale[0] or sim.abs(p[1]) > scale[1]):
                normal = delta / d
    elif geo == SPHERE:
        d = sim.length(p)
        if d > 0.0:
            normal = p / d
        point = normal * scale[0]
    elif geo == CAPSULE:
        axis_point = sim.vec3(0.0, sim.clamp(p[1], -scale[1], scale[1]), 0.0)
        delta = p - axis_point
        d = sim.length(delta)
        normal = sim.vec3(1.0, 0.0, 0.0)
        if d > 0.0:
            normal = delta / d
        point = axis_point + normal * scale[0]
    elif geo == BOX:
        point, normal = closest_on_box(p, scale)
    return point, normal


@sim.kernel
def particle_shape_contacts_kernel(
        q: sim.array(dtype=sim.vec3), radius: sim.array(dtype=float),
        flags: sim.array(dtype=sim.uint32), particle_world: sim.array(dtype=sim.int32),
        shape_count: int, shape_type: sim.array(dtype=sim.int32),
        shape_transform: sim.array(dtype=sim.transform), shape_scale: sim.array(dtype=sim.vec3),
        shape_thickness: sim.array(dtype=float), shape_world: sim.array(dtype=sim.int32),
        shape_particle_collision: sim.array(dtype=sim.int32),
        shape_source_ptr: sim.array(dtype=sim.uint64), margin: float,
        contact_max: int, contact_count: sim.array(dtype=sim.int32),
        contact_particle: sim.array(dtype=sim.int32), contact_shape: sim.array(dtype=sim.int32),
        contact_body_pos: sim.array(dtype=sim.vec3), contact_normal: sim.array(dtype=sim.vec3)):
    i = sim.tid()
    if (flags[i] & sim.uint32(1)) != sim.uint32(0):
        x = q[i]
        for s in range(shape_count):
            if shape_particle_collision[s] != 0 and (shape_world[s] < 0 or
                                                     shape_world[s] == particle_world[i]):
                X = shape_transform[s]
                local = sim.transform_point(sim.transform_inverse(X), x)
                point = sim.vec3()
                normal = sim.vec3()
                found = True
                if shape_type[s] == MESH:
                    found, point, normal, dist = closest_on_mesh(
                        shape_source_ptr[s], local, margin + radius[i] + shape_thickness[s])
                else:
                    point, normal = closest_on_shape(shape_type[s], shape_scale[s], local)
                thickness = shape_thickness[s]
                point = point + normal * thickness
                world_point = sim.transform_point(X, point)
                world_normal = sim.transform_vector(X, normal)
                gap = sim.dot(world_normal, x - world_point) - radius[i]
                if found and gap < margin:
                    slot = sim.atomic_add(contact_count, 0, 1)
                    if slot < contact_max:
                        contact_particle[slot] = i
                        contact_shape[slot] = s
                        contact_body_pos[slot] = world_point
                        contact_normal[slot] = world_normal
