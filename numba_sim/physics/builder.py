"""``physics.ModelBuilder``: describe particles, springs, cloth, soft bodies and
static collision shapes; ``finalize`` turns them into a ``Model``'s arrays.

Formulas and defaults follow warp.sim 1.9.1 (``warp/sim/model.py``): a
triangle's rest pose is the inverse of its 2-D edge matrix in its own plane, a
tetrahedron's the inverse of its 3-D edge matrix, a spring's rest length the
distance of its particles when added, a bending edge's rest angle the signed
dihedral angle when added.  Names follow newton where the two differ.
"""

import math

import numpy as np

from numba_sim.physics import checks
from numba_sim.physics.builder_import import ImportBuilder
from numba_sim.physics.builder_rigid import RigidBuilder
from numba_sim.physics.definitions import GeoType, JointType, ShapeConfig  # noqa: F401
from numba_sim.physics.mesh import Mesh
from numba_sim.physics.model import Model

PARTICLE_FLAG_ACTIVE = 1


def _mesh_edges(triangles):
    """Interior edges of a triangle mesh as (o0, o1, v0, v1): the edge v0-v1 shared by the
    triangles (v0, v1, o0) and (v1, v0, o1) (warp.sim's MeshAdjacency order), and the
    set of every edge."""
    edges = {}
    for tri in triangles:
        for a, b, o in ((tri[0], tri[1], tri[2]), (tri[1], tri[2], tri[0]),
                        (tri[2], tri[0], tri[1])):
            key = (min(a, b), max(a, b))
            entry = edges.get(key)
            if entry is None:
                edges[key] = [a, b, o, -1]
            elif entry[3] == -1:
                entry[3] = o
    interior = [(o0, o1, v0, v1) for v0, v1, o0, o1 in edges.values() if o1 != -1]
    return interior, edges


class ModelBuilder(RigidBuilder, ImportBuilder):
    """Builds a :class:`Model` (API-physics.md, "Building a model").

    ``up_axis`` is "x" | "y" | "z"; a scalar ``gravity`` acts along it, a 3-vector is
    taken as is.
    """

    default_particle_radius = 0.1
    default_tri_ke = 100.0
    default_tri_ka = 100.0
    default_tri_kd = 10.0
    default_tri_drag = 0.0
    default_tri_lift = 0.0
    default_spring_ke = 100.0
    default_spring_kd = 0.0
    default_edge_ke = 100.0
    default_edge_kd = 0.0
    default_joint_limit_ke = 100.0
    default_joint_limit_kd = 1.0

    def __init__(self, up_axis="z", gravity=-9.81):
        call = "ModelBuilder"
        self.up_axis = checks.up_axis_index(call, up_axis)
        if np.ndim(gravity) == 0:
            g = checks.finite(call, "gravity", gravity)
            self.gravity = np.zeros(3)
            self.gravity[self.up_axis] = g
        else:
            self.gravity = checks.vector(call, "gravity", gravity)
        # contact parameters (warp.sim's names and defaults)
        self.soft_contact_ke = 1.0e3
        self.soft_contact_kd = 10.0
        self.soft_contact_kf = 1.0e3
        self.soft_contact_mu = 0.5
        self.soft_contact_margin = 0.2
        self.rigid_contact_margin = 0.1
        # the semi-implicit solver's joint springs (warp.sim's names and defaults)
        self.joint_attach_ke = 1.0e3
        self.joint_attach_kd = 1.0e2
        self.particle_ke = 1.0e3
        self.particle_kd = 1.0e2
        self.particle_kf = 1.0e2
        self.particle_mu = 0.5
        self.particle_cohesion = 0.0
        self.particle_max_velocity = 1.0e5
        self.particle_collision = True
        self.num_worlds = 1
        self._world = 0
        # particles
        self.particle_q = []
        self.particle_qd = []
        self.particle_mass = []
        self.particle_radius = []
        self.particle_flags = []
        self.particle_world = []
        # springs
        self.spring_indices = []
        self.spring_rest_length = []
        self.spring_stiffness = []
        self.spring_damping = []
        self.spring_control = []
        # triangles
        self.tri_indices = []
        self.tri_poses = []
        self.tri_activations = []
        self.tri_materials = []
        self.tri_areas = []
        # bending edges
        self.edge_indices = []
        self.edge_rest_angle = []
        self.edge_rest_length = []
        self.edge_bending_properties = []
        # tetrahedra
        self.tet_indices = []
        self.tet_poses = []
        self.tet_activations = []
        self.tet_materials = []
        self.tet_volumes = []
        # shapes (static: body -1)
        self.shape_type = []
        self.shape_body = []
        self.shape_transform = []
        self.shape_scale = []
        self.shape_material_ke = []
        self.shape_material_kd = []
        self.shape_material_kf = []
        self.shape_material_mu = []
        self.shape_material_restitution = []
        self.shape_thickness = []
        self.shape_collision_group = []
        self.shape_particle_collision = []
        self.shape_world = []
        self.shape_source = []        # a mesh shape's physics.Mesh, else None
        # rigid bodies and joints (builder_rigid.py)
        self._init_rigid()

    # ------------------------------------------------------------------ counts
    particle_count = property(lambda self: len(self.particle_q))
    spring_count = property(lambda self: len(self.spring_rest_length))
    tri_count = property(lambda self: len(self.tri_indices))
    edge_count = property(lambda self: len(self.edge_indices))
    tet_count = property(lambda self: len(self.tet_indices))
    shape_count = property(lambda self: len(self.shape_type))

    # --------------------------------------------------------------- particles
    def add_particle(self, pos, vel, mass, radius=None, flags=PARTICLE_FLAG_ACTIVE):
        """Add a particle; mass 0 pins it.  Returns its index."""
        call = "add_particle"
        pos = checks.vector(call, "pos", pos)
        vel = checks.vector(call, "vel", vel)
        mass = checks.nonnegative(call, "mass", mass)
        radius = self.default_particle_radius if radius is None else \
            checks.nonnegative(call, "radius", radius)
        self.particle_q.append(pos)
        self.particle_qd.append(vel)
        self.particle_mass.append(mass)
        self.particle_radius.append(radius)
        self.particle_flags.append(int(flags))
        self.particle_world.append(self._world)
        return len(self.particle_q) - 1

    def add_particles(self, pos, vel, mass, radius=None):
        """Add many particles (arrays of positions, velocities, masses, radii); returns
        the range of their indices."""
        call = "add_particles"
        pos = checks.points(call, "pos", pos)
        n = len(pos)
        vel = checks.points(call, "vel", vel)
        if len(vel) != n:
            raise ValueError(f"{call}: vel has {len(vel)} entries for {n} positions")
        mass = np.broadcast_to(np.asarray(mass, dtype=np.float64), (n,))
        if radius is None:
            radius = np.full(n, self.default_particle_radius)
        radius = np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,))
        for name, values in (("mass", mass), ("radius", radius)):
            bad = np.argwhere(~(np.isfinite(values) & (values >= 0.0)))
            if len(bad):
                raise ValueError(f"{call}: {name}[{bad[0][0]}] must be finite and >= 0, "
                                 f"got {values[bad[0][0]]}")
        start = len(self.particle_q)
        for k in range(n):
            self.add_particle(pos[k], vel[k], mass[k], radius[k])
        return range(start, start + n)

    def add_particle_grid(self, pos, rot, vel, dim_x, dim_y, dim_z, cell_x, cell_y, cell_z, mass,
                          jitter=0.0, radius_mean=None, radius_std=0.0, seed=42):
        """A dim_x x dim_y x dim_z block of particles of *mass* each (warp.sim's order:
        x fastest), rotated by *rot* about *pos*, jittered by up to *jitter*."""
        call = "add_particle_grid"
        pos = checks.vector(call, "pos", pos)
        rot = checks.quaternion(call, "rot", rot)
        vel = checks.vector(call, "vel", vel)
        dims = [checks.count(call, n, v) for n, v in (("dim_x", dim_x), ("dim_y", dim_y),
                                                      ("dim_z", dim_z))]
        cells = [checks.nonnegative(call, n, v) for n, v in (("cell_x", cell_x),
                                                             ("cell_y", cell_y),
                                                             ("cell_z", cell_z))]
        mass = checks.nonnegative(call, "mass", mass)
        jitter = checks.nonnegative(call, "jitter", jitter)
        radius_mean = self.default_particle_radius if radius_mean is None else \
            checks.nonnegative(call, "radius_mean", radius_mean)
        radius_std = checks.nonnegative(call, "radius_std", radius_std)
        rng = np.random.default_rng(seed)
        start = len(self.particle_q)
        for z in range(dims[2]):
            for y in range(dims[1]):
                for x in range(dims[0]):
                    local = np.array([x * cells[0], y * cells[1], z * cells[2]])
                    p = checks.quat_rotate(rot, local) + pos + rng.random(3) * jitter
                    r = radius_mean
                    if radius_std > 0.0:
                        r = max(radius_mean + rng.standard_normal() * radius_std, 0.0)
                    self.add_particle(p, vel, mass, r)
        return range(start, len(self.particle_q))

    # ----------------------------------------------------------------- springs
    def add_spring(self, i, j, ke, kd, control=0.0):
        """A damped spring between particles i and j; its rest length is their current
        distance."""
        call = "add_spring"
        n = len(self.particle_q)
        i = checks.index(call, "i", i, n)
        j = checks.index(call, "j", j, n)
        if i == j:
            raise ValueError(f"{call}: a spring needs two different particles, got i=j={i}")
        ke = checks.nonnegative(call, "ke", ke)
        kd = checks.nonnegative(call, "kd", kd)
        control = checks.finite(call, "control", control)
        self.spring_indices.append((i, j))
        self.spring_rest_length.append(float(np.linalg.norm(self.particle_q[i] -
                                                            self.particle_q[j])))
        self.spring_stiffness.append(ke)
        self.spring_damping.append(kd)
        self.spring_control.append(control)
        return len(self.spring_rest_length) - 1

    # ------------------------------------------------------------------- cloth
    def add_triangle(self, i, j, k, tri_ke=None, tri_ka=None, tri_kd=None, tri_drag=None,
                     tri_lift=None):
        """A membrane (FEM) triangle; returns its rest area.  A degenerate triangle is a
        ValueError."""
        call = "add_triangle"
        n = len(self.particle_q)
        i, j, k = (checks.index(call, name, v, n) for name, v in (("i", i), ("j", j), ("k", k)))
        material = []
        for name, value, default in (("tri_ke", tri_ke, self.default_tri_ke),
                                     ("tri_ka", tri_ka, self.default_tri_ka),
                                     ("tri_kd", tri_kd, self.default_tri_kd),
                                     ("tri_drag", tri_drag, self.default_tri_drag),
                                     ("tri_lift", tri_lift, self.default_tri_lift)):
            material.append(default if value is None else checks.nonnegative(call, name, value))
        if material[1] <= 0.0:
            raise ValueError(f"{call}: tri_ka must be > 0 (the area term divides by it), "
                             f"got {tri_ka!r}")
        p, q, r = self.particle_q[i], self.particle_q[j], self.particle_q[k]
        qp, rp = q - p, r - p
        normal = np.cross(qp, rp)
        area2 = np.linalg.norm(normal)
        if area2 < 1e-12 or np.linalg.norm(qp) < 1e-12:
            raise ValueError(f"{call}: triangle ({i}, {j}, {k}) is degenerate (area "
                             f"{area2 / 2.0:g})")
        e1 = qp / np.linalg.norm(qp)
        e2 = np.cross(normal / area2, e1)
        d = np.array([[e1 @ qp, e1 @ rp], [e2 @ qp, e2 @ rp]])
        area = np.linalg.det(d) / 2.0
        self.tri_indices.append((i, j, k))
        self.tri_poses.append(np.linalg.inv(d))
        self.tri_activations.append(0.0)
        self.tri_materials.append(tuple(material))
        self.tri_areas.append(area)
        return area

    def add_edge(self, i, j, k, l, rest=None, edge_ke=None, edge_kd=None):
        """A bending element across edge k-l of the triangles (i, k, l) and (j, l, k); its
        rest angle is the current signed dihedral angle unless *rest* is given."""
        call = "add_edge"
        n = len(self.particle_q)
        i, j, k, l = (checks.index(call, name, v, n)
                      for name, v in (("i", i), ("j", j), ("k", k), ("l", l)))
        edge_ke = self.default_edge_ke if edge_ke is None else \
            checks.nonnegative(call, "edge_ke", edge_ke)
        edge_kd = self.default_edge_kd if edge_kd is None else \
            checks.nonnegative(call, "edge_kd", edge_kd)
        x1, x2, x3, x4 = (self.particle_q[v] for v in (i, j, k, l))
        if rest is None:
            n1 = np.cross(x3 - x1, x4 - x1)
            n2 = np.cross(x4 - x2, x3 - x2)
            e = x4 - x3
            if min(np.linalg.norm(n1), np.linalg.norm(n2), np.linalg.norm(e)) < 1e-12:
                raise ValueError(f"{call}: edge ({i}, {j}, {k}, {l}) has a degenerate triangle")
            n1 /= np.linalg.norm(n1)
            n2 /= np.linalg.norm(n2)
            angle = math.acos(float(np.clip(n1 @ n2, -1.0, 1.0)))
            rest = angle * float(np.sign(np.cross(n2, n1) @ e))
        else:
            rest = checks.finite(call, "rest", rest)
        self.edge_indices.append((i, j, k, l))
        self.edge_rest_angle.append(rest)
        self.edge_rest_length.append(float(np.linalg.norm(x4 - x3)))
        self.edge_bending_properties.append((edge_ke, edge_kd))
        return len(self.edge_indices) - 1

    def _add_mesh_edges(self, triangles, edge_ke, edge_kd, add_springs, spring_ke, spring_kd):
        interior, edges = _mesh_edges(triangles)
        for o0, o1, v0, v1 in interior:
            self.add_edge(o0, o1, v0, v1, edge_ke=edge_ke, edge_kd=edge_kd)
        if add_springs:
            pairs = set()
            for v0, v1, o0, o1 in edges.values():
                pairs.add((min(v0, v1), max(v0, v1)))
                for o in (o0, o1):
                    if o != -1:
                        pairs.add((min(o, v0), max(o, v0)))
                        pairs.add((min(o, v1), max(o, v1)))
                if o0 != -1 and o1 != -1:
                    pairs.add((min(o0, o1), max(o0, o1)))
            for a, b in sorted(pairs):
                self.add_spring(a, b, spring_ke, spring_kd)

    def add_cloth_grid(self, pos, rot, vel, dim_x, dim_y, cell_x, cell_y, mass,
                       reverse_winding=False, fix_left=False, fix_right=False, fix_top=False,
                       fix_bottom=False, tri_ke=None, tri_ka=None, tri_kd=None, tri_drag=None,
                       tri_lift=None, edge_ke=None, edge_kd=None, add_springs=False,
                       spring_ke=None, spring_kd=None, particle_radius=None):
        """A (dim_x + 1) x (dim_y + 1) grid of particles of *mass* each in the local x-y
        plane, two triangles per cell, a bending edge per interior edge (warp.sim's)."""
        call = "add_cloth_grid"
        pos = checks.vector(call, "pos", pos)
        rot = checks.quaternion(call, "rot", rot)
        vel = checks.vector(call, "vel", vel)
        dim_x = checks.count(call, "dim_x", dim_x)
        dim_y = checks.count(call, "dim_y", dim_y)
        cell_x = checks.positive(call, "cell_x", cell_x)
        cell_y = checks.positive(call, "cell_y", cell_y)
        mass = checks.nonnegative(call, "mass", mass)
        radius = self.default_particle_radius if particle_radius is None else \
            checks.nonnegative(call, "particle_radius", particle_radius)
        spring_ke = self.default_spring_ke if spring_ke is None else spring_ke
        spring_kd = self.default_spring_kd if spring_kd is None else spring_kd
        start = len(self.particle_q)

        def index(x, y):
            return start + y * (dim_x + 1) + x

        for y in range(dim_y + 1):
            for x in range(dim_x + 1):
                p = checks.quat_rotate(rot, np.array([x * cell_x, y * cell_y, 0.0])) + pos
                fixed = (x == 0 and fix_left) or (x == dim_x and fix_right) or \
                    (y == 0 and fix_bottom) or (y == dim_y and fix_top)
                self.add_particle(p, vel, 0.0 if fixed else mass, radius,
                                  0 if fixed else PARTICLE_FLAG_ACTIVE)
        triangles = []
        for y in range(1, dim_y + 1):
            for x in range(1, dim_x + 1):
                if reverse_winding:
                    cell = ((index(x - 1, y - 1), index(x, y - 1), index(x, y)),
                            (index(x - 1, y - 1), index(x, y), index(x - 1, y)))
                else:
                    cell = ((index(x - 1, y - 1), index(x, y - 1), index(x - 1, y)),
                            (index(x, y - 1), index(x, y), index(x - 1, y)))
                for tri in cell:
                    self.add_triangle(*tri, tri_ke, tri_ka, tri_kd, tri_drag, tri_lift)
                    triangles.append(tri)
        self._add_mesh_edges(triangles, edge_ke, edge_kd, add_springs, spring_ke, spring_kd)
        return range(start, len(self.particle_q))

    def add_cloth_mesh(self, pos, rot, scale, vel, vertices, indices, density, tri_ke=None,
                       tri_ka=None, tri_kd=None, tri_drag=None, tri_lift=None, edge_ke=None,
                       edge_kd=None, add_springs=False, spring_ke=None, spring_kd=None,
                       particle_radius=None):
        """Cloth from a triangle mesh: each particle gets a third of the mass
        (``density x area``) of every triangle it belongs to."""
        call = "add_cloth_mesh"
        pos = checks.vector(call, "pos", pos)
        rot = checks.quaternion(call, "rot", rot)
        scale = checks.positive(call, "scale", scale)
        vel = checks.vector(call, "vel", vel)
        vertices = checks.points(call, "vertices", vertices)
        faces = checks.indices(call, "indices", indices, 3, len(vertices))
        density = checks.nonnegative(call, "density", density)
        radius = self.default_particle_radius if particle_radius is None else \
            checks.nonnegative(call, "particle_radius", particle_radius)
        spring_ke = self.default_spring_ke if spring_ke is None else spring_ke
        spring_kd = self.default_spring_kd if spring_kd is None else spring_kd
        start = len(self.particle_q)
        for v in checks.quat_rotate(rot, vertices * scale) + pos:
            self.add_particle(v, vel, 0.0, radius)
        triangles = []
        for face in faces:
            tri = tuple(int(start + v) for v in face)
            area = self.add_triangle(*tri, tri_ke, tri_ka, tri_kd, tri_drag, tri_lift)
            for v in tri:
                self.particle_mass[v] += density * area / 3.0
            triangles.append(tri)
        self._add_mesh_edges(triangles, edge_ke, edge_kd, add_springs, spring_ke, spring_kd)
        return range(start, len(self.particle_q))

    # ------------------------------------------------------------- soft bodies
    def add_tetrahedron(self, i, j, k, l, k_mu=1.0e3, k_lambda=1.0e3, k_damp=0.0):
        """A neo-Hookean tetrahedron; returns its rest volume.  An inverted or degenerate
        one is a ValueError."""
        call = "add_tetrahedron"
        n = len(self.particle_q)
        i, j, k, l = (checks.index(call, name, v, n)
                      for name, v in (("i", i), ("j", j), ("k", k), ("l", l)))
        k_mu = checks.nonnegative(call, "k_mu", k_mu)
        k_lambda = checks.positive(call, "k_lambda", k_lambda)
        k_damp = checks.nonnegative(call, "k_damp", k_damp)
        p = self.particle_q[i]
        dm = np.array([self.particle_q[j] - p, self.particle_q[k] - p,
                       self.particle_q[l] - p]).T
        volume = np.linalg.det(dm) / 6.0
        if not volume > 1e-15:
            raise ValueError(f"{call}: tetrahedron ({i}, {j}, {k}, {l}) is inverted or "
                             f"degenerate (volume {volume:g})")
        self.tet_indices.append((i, j, k, l))
        self.tet_poses.append(np.linalg.inv(dm))
        self.tet_activations.append(0.0)
        self.tet_materials.append((k_mu, k_lambda, k_damp))
        self.tet_volumes.append(volume)
        return volume

    def _add_surface(self, faces, tri_ke, tri_ka, tri_kd, tri_drag, tri_lift):
        for tri in faces.values():
            self.add_triangle(*tri, tri_ke, tri_ka, tri_kd, tri_drag, tri_lift)

    def add_soft_grid(self, pos, rot, vel, dim_x, dim_y, dim_z, cell_x, cell_y, cell_z, density,
                      k_mu, k_lambda, k_damp, fix_left=False, fix_right=False, fix_top=False,
                      fix_bottom=False, tri_ke=None, tri_ka=None, tri_kd=None, tri_drag=None,
                      tri_lift=None, particle_radius=None):
        """A block of dim_x x dim_y x dim_z hexahedral cells, 5 tetrahedra each, with
        surface triangles; each particle gets ``cell volume x density`` (warp.sim's rule)."""
        call = "add_soft_grid"
        pos = checks.vector(call, "pos", pos)
        rot = checks.quaternion(call, "rot", rot)
        vel = checks.vector(call, "vel", vel)
        dims = [checks.count(call, n, v) for n, v in (("dim_x", dim_x), ("dim_y", dim_y),
                                                      ("dim_z", dim_z))]
        cells = [checks.positive(call, n, v) for n, v in (("cell_x", cell_x), ("cell_y", cell_y),
                                                          ("cell_z", cell_z))]
        density = checks.nonnegative(call, "density", density)
        radius = self.default_particle_radius if particle_radius is None else \
            checks.nonnegative(call, "particle_radius", particle_radius)
        mass = cells[0] * cells[1] * cells[2] * density
        start = len(self.particle_q)
        nx, ny, nz = dims
        for z in range(nz + 1):
            for y in range(ny + 1):
                for x in range(nx + 1):
                    fixed = (fix_left and x == 0) or (fix_right and x == nx) or \
                        (fix_top and y == ny) or (fix_bottom and y == 0)
                    p = checks.quat_rotate(rot, np.array([x * cells[0], y * cells[1],
                                                          z * cells[2]])) + pos
                    self.add_particle(p, vel, 0.0 if fixed else mass, radius)

        def index(x, y, z):
            return start + (nx + 1) * (ny + 1) * z + (nx + 1) * y + x

        faces = {}
        for z in range(nz):
            for y in range(ny):
                for x in range(nx):
                    v0, v1 = index(x, y, z), index(x + 1, y, z)
                    v2, v3 = index(x + 1, y, z + 1), index(x, y, z + 1)
                    v4, v5 = index(x, y + 1, z), index(x + 1, y + 1, z)
                    v6, v7 = index(x + 1, y + 1, z + 1), index(x, y + 1, z + 1)
                    if (x & 1) ^ (y & 1) ^ (z & 1):
                        tets = ((v0, v1, v4, v3), (v2, v3, v6, v1), (v5, v4, v1, v6),
                                (v7, v6, v3, v4), (v4, v1, v6, v3))
                    else:
                        tets = ((v1, v2, v5, v0), (v3, v0, v7, v2), (v4, v7, v0, v5),
                                (v6, v5, v2, v7), (v5, v2, v7, v0))
                    for tet in tets:
                        self.add_tetrahedron(*tet, k_mu, k_lambda, k_damp)
                        _toggle_tet_faces(faces, *tet)
        self._add_surface(faces, tri_ke, tri_ka, tri_kd, tri_drag, tri_lift)
        return range(start, len(self.particle_q))

    def add_soft_mesh(self, pos, rot, scale, vel, vertices, indices, density, k_mu, k_lambda,
                      k_damp, tri_ke=None, tri_ka=None, tri_kd=None, tri_drag=None,
                      tri_lift=None, particle_radius=None):
        """A soft body from a tetrahedral mesh: each particle gets a quarter of the mass
        (``density x volume``) of every tetrahedron it belongs to."""
        call = "add_soft_mesh"
        pos = checks.vector(call, "pos", pos)
        rot = checks.quaternion(call, "rot", rot)
        scale = checks.positive(call, "scale", scale)
        vel = checks.vector(call, "vel", vel)
        vertices = checks.points(call, "vertices", vertices)
        tets = checks.indices(call, "indices", indices, 4, len(vertices))
        density = checks.nonnegative(call, "density", density)
        radius = self.default_particle_radius if particle_radius is None else \
            checks.nonnegative(call, "particle_radius", particle_radius)
        start = len(self.particle_q)
        for v in checks.quat_rotate(rot, vertices * scale) + pos:
            self.add_particle(v, vel, 0.0, radius)
        faces = {}
        for tet in tets:
            tet = tuple(int(start + v) for v in tet)
            volume = self.add_tetrahedron(*tet, k_mu, k_lambda, k_damp)
            for v in tet:
                self.particle_mass[v] += density * volume / 4.0
            _toggle_tet_faces(faces, *tet)
        self._add_surface(faces, tri_ke, tri_ka, tri_kd, tri_drag, tri_lift)
        return range(start, len(self.particle_q))

    # ------------------------------------------------------------------ shapes
    def _add_shape(self, call, body, xform, geo, scale, cfg, world=None, source=None):
        body = self._shape_body(call, body)
        cfg = ShapeConfig() if cfg is None else cfg
        if not isinstance(cfg, ShapeConfig):
            raise ValueError(f"{call}: cfg must be a physics.ShapeConfig, got {cfg!r}")
        p, q = checks.transform(call, "xform", xform)
        self.shape_type.append(int(geo))
        self.shape_body.append(int(body))
        self.shape_transform.append(np.concatenate([p, q]))
        self.shape_scale.append(np.asarray(scale, dtype=np.float64))
        self.shape_material_ke.append(cfg.ke)
        self.shape_material_kd.append(cfg.kd)
        self.shape_material_kf.append(cfg.kf)
        self.shape_material_mu.append(cfg.mu)
        self.shape_material_restitution.append(cfg.restitution)
        self.shape_thickness.append(cfg.thickness)
        self.shape_collision_group.append(cfg.collision_group)
        self.shape_particle_collision.append(cfg.has_particle_collision)
        self.shape_world.append(self._world if world is None else world)
        self.shape_source.append(source)
        self._rigid_shape_added(body, geo, self.shape_scale[-1], p, q, cfg, source)
        return len(self.shape_type) - 1

    def add_shape_plane(self, body=-1, xform=None, width=0.0, length=0.0, cfg=None):
        """A plane through the transform's origin, normal along its local z axis (infinite
        when width and length are 0, else a width x length rectangle)."""
        call = "add_shape_plane"
        width = checks.nonnegative(call, "width", width)
        length = checks.nonnegative(call, "length", length)
        if body != -1:
            raise ValueError(f"{call}: planes are static (body=-1); got body={body!r}")
        return self._add_shape(call, body, xform, GeoType.PLANE, (width, length, 0.0), cfg)

    def add_ground_plane(self, cfg=None):
        """The infinite ground: through the origin, its normal along the up axis."""
        z = np.array([0.0, 0.0, 1.0])
        up = np.zeros(3)
        up[self.up_axis] = 1.0
        axis = np.cross(z, up)
        s = np.linalg.norm(axis)
        if s < 1e-12:
            q = np.array([0.0, 0.0, 0.0, 1.0])
        else:
            angle = math.atan2(s, z @ up)
            q = np.concatenate([axis / s * math.sin(angle / 2.0), [math.cos(angle / 2.0)]])
        return self._add_shape("add_ground_plane", -1, (np.zeros(3), q), GeoType.PLANE,
                               (0.0, 0.0, 0.0), cfg, world=-1)

    def add_shape_sphere(self, body=-1, xform=None, radius=1.0, cfg=None):
        call = "add_shape_sphere"
        radius = checks.positive(call, "radius", radius)
        return self._add_shape(call, body, xform, GeoType.SPHERE, (radius, 0.0, 0.0), cfg)

    def add_shape_box(self, body=-1, xform=None, hx=0.5, hy=0.5, hz=0.5, cfg=None):
        call = "add_shape_box"
        half = [checks.positive(call, n, v) for n, v in (("hx", hx), ("hy", hy), ("hz", hz))]
        return self._add_shape(call, body, xform, GeoType.BOX, half, cfg)

    def add_shape_capsule(self, body=-1, xform=None, radius=1.0, half_height=0.5, axis=None,
                          cfg=None):
        """A capsule along *axis* (0/1/2 or "x"/"y"/"z", default the up axis) of the shape
        frame; *half_height* excludes the caps."""
        return self._add_axial_shape("add_shape_capsule", GeoType.CAPSULE, body, xform, radius,
                                     half_height, axis, cfg)

    def add_shape_cylinder(self, body=-1, xform=None, radius=1.0, half_height=0.5, axis=None,
                           cfg=None):
        """A solid cylinder along *axis* (as a capsule's), *half_height* half its height."""
        return self._add_axial_shape("add_shape_cylinder", GeoType.CYLINDER, body, xform,
                                     radius, half_height, axis, cfg)

    def add_shape_cone(self, body=-1, xform=None, radius=1.0, half_height=0.5, axis=None,
                       cfg=None):
        """A solid cone along *axis* (as a capsule's): its base of *radius* at
        ``-half_height``, its apex at ``+half_height`` (the shape origin halfway, as newton;
        its centre of mass is ``half_height / 2`` below the origin)."""
        return self._add_axial_shape("add_shape_cone", GeoType.CONE, body, xform, radius,
                                     half_height, axis, cfg)

    def add_shape_mesh(self, body=-1, xform=None, mesh=None, scale=(1.0, 1.0, 1.0), cfg=None):
        """A triangle mesh (a ``physics.Mesh``) scaled by *scale* (per axis of the shape
        frame); on a body it adds the mass and inertia of its closed volume x density."""
        call = "add_shape_mesh"
        if not isinstance(mesh, Mesh):
            raise ValueError(f"{call}: mesh must be a physics.Mesh(vertices, indices), got "
                             f"{mesh!r}")
        scale = checks.vector(call, "scale", scale)
        if np.any(scale <= 0.0):
            raise ValueError(f"{call}: scale must be > 0 on every axis, got {scale.tolist()}")
        body = self._shape_body(call, body)
        cfg = ShapeConfig() if cfg is None else cfg
        if body >= 0 and isinstance(cfg, ShapeConfig) and cfg.density > 0.0:
            volume = float(mesh.mass_properties(scale)[0])
            if not volume > 0.0:
                raise ValueError(f"{call}: the mesh must be closed and wound counter-clockwise "
                                 f"seen from outside to give a body mass; its volume is "
                                 f"{volume:g} (pass cfg=ShapeConfig(density=0.0) for none)")
        return self._add_shape(call, body, xform, GeoType.MESH, scale, cfg, source=mesh)

    def _add_axial_shape(self, call, geo, body, xform, radius, half_height, axis, cfg):
        radius = checks.positive(call, "radius", radius)
        half_height = (checks.nonnegative if geo == GeoType.CAPSULE else checks.positive)(
            call, "half_height", half_height)
        axis = self.up_axis if axis is None else checks.up_axis_index(call, axis)
        p, q = checks.transform(call, "xform", xform)
        # the shape is stored along the shape frame's y axis: rotate y onto *axis*
        to_axis = {0: np.array([0.0, 0.0, -math.sqrt(0.5), math.sqrt(0.5)]),
                   1: np.array([0.0, 0.0, 0.0, 1.0]),
                   2: np.array([math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)])}[axis]
        q = checks.quat_multiply(q, to_axis)
        return self._add_shape(call, body, (p, q), geo, (radius, half_height, 0.0), cfg)

    # ------------------------------------------------------------- composition
    def add_builder(self, other, xform=None, world=None):
        """Append everything of *other*, moved by *xform*, into world *world* (default:
        the last world of this builder)."""
        call = "add_builder"
        if not isinstance(other, ModelBuilder):
            raise ValueError(f"{call}: other must be a ModelBuilder, got {other!r}")
        p, q = checks.transform(call, "xform", xform)
        if world is None:
            world = self.num_worlds - 1
        world = checks.count(call, "world", world, minimum=0)
        offset = len(self.particle_q)
        rotated = [checks.quat_rotate(q, x) + p for x in other.particle_q]
        self.particle_q.extend(rotated)
        self.particle_qd.extend(checks.quat_rotate(q, v) for v in other.particle_qd)
        self.particle_mass.extend(other.particle_mass)
        self.particle_radius.extend(other.particle_radius)
        self.particle_flags.extend(other.particle_flags)
        self.particle_world.extend([world] * other.particle_count)
        self.spring_indices.extend((i + offset, j + offset) for i, j in other.spring_indices)
        for name in ("spring_rest_length", "spring_stiffness", "spring_damping", "spring_control",
                     "tri_poses", "tri_activations", "tri_materials", "tri_areas",
                     "edge_rest_angle", "edge_rest_length", "edge_bending_properties",
                     "tet_poses", "tet_activations", "tet_materials", "tet_volumes",
                     "shape_type", "shape_scale", "shape_material_ke",
                     "shape_material_kd", "shape_material_kf", "shape_material_mu",
                     "shape_material_restitution", "shape_thickness", "shape_collision_group",
                     "shape_particle_collision"):
            getattr(self, name).extend(getattr(other, name))
        for name in ("tri_indices", "edge_indices", "tet_indices"):
            getattr(self, name).extend(tuple(v + offset for v in element)
                                       for element in getattr(other, name))
        for body, transform in zip(other.shape_body, other.shape_transform):
            if body >= 0:       # in its body's frame, which moves with the body
                self.shape_transform.append(np.asarray(transform).copy())
                continue
            sp = checks.quat_rotate(q, transform[:3]) + p
            sq = checks.quat_multiply(q, transform[3:])
            self.shape_transform.append(np.concatenate([sp, sq]))
        self.shape_world.extend(w if w < 0 else world for w in other.shape_world)
        self.shape_source.extend(other.shape_source)
        self._add_rigid_builder(other, p, q, world)
        self.num_worlds = max(self.num_worlds, world + 1)
        self._world = world
        return range(offset, len(self.particle_q))

    def replicate(self, template, num_worlds, spacing=(0.0, 0.0, 0.0)):
        """Add *num_worlds* independent copies of *template*, the k-th moved by
        ``k * spacing``; world-major (world k's entities after world k-1's)."""
        call = "replicate"
        num_worlds = checks.count(call, "num_worlds", num_worlds)
        spacing = checks.vector(call, "spacing", spacing)
        empty = self.particle_count == 0 and self.shape_count == 0 and self.body_count == 0
        first = 0 if empty else self.num_worlds
        for k in range(num_worlds):
            self.add_builder(template, xform=(spacing * k, (0.0, 0.0, 0.0, 1.0)), world=first + k)

    # ---------------------------------------------------------------- finalize
    def finalize(self, device="cpu", requires_grad=False):
        """The :class:`Model` of everything added, its arrays on *device*."""
        call = "finalize"
        for name in ("particle_world", "shape_world"):
            values = [w for w in getattr(self, name) if w >= 0]
            if any(b < a for a, b in zip(values, values[1:])):
                raise ValueError(f"{call}: {name} is not world-major (entities of a world were "
                                 "added after those of a later world)")
        self._check_rigid(call)
        return Model(self, device, requires_grad=bool(requires_grad))


def _toggle_tet_faces(faces, i, j, k, l):
    """Faces seen from one tetrahedron only are on the surface (warp.sim's rule)."""
    for face in ((i, k, j), (j, k, l), (i, j, l), (i, l, k)):
        key = tuple(sorted(face))
        if key in faces:
            del faces[key]
        else:
            faces[key] = face
