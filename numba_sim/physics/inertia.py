"""Mass properties of rigid bodies (host side, float64).

A shape of density ``rho`` adds the mass and inertia of its solid to its body
(API-physics.md): closed forms about the shape's centre in its own frame
(``solid_mass_properties``), rotated by the shape transform and moved to the body
origin by the parallel-axis theorem (``MassAccumulator.add``).  A body keeps its
mass, first moment and second moment about its own origin, so contributions add
in any order; ``MassAccumulator.about_com`` gives the centre of mass and the
inertia about it.

Capsules, cylinders and cones are stored along their frame's y axis (a capsule's
``half_height`` excludes the caps; a cone's apex is at ``+half_height``, its base at
``-half_height``), as ``collide.py`` reads them.
"""

import math

import numpy as np

from numba_sim.physics import checks

SPHERE = 1
CAPSULE = 2
CYLINDER = 3
CONE = 4
BOX = 5
MESH = 6


def solid_centroid(geo, scale):
    """The centre of mass of a solid shape in its frame (a cone's is a quarter of its
    height above its base)."""
    if geo == CONE:
        return np.array([0.0, -0.5 * scale[1], 0.0])
    return np.zeros(3)


def solid_mass_properties(geo, scale, density):
    """(mass, 3x3 inertia about the centre of mass in the shape frame) of a solid shape."""
    if geo == SPHERE:
        r = scale[0]
        m = density * 4.0 / 3.0 * math.pi * r ** 3
        return m, np.eye(3) * (0.4 * m * r * r)
    if geo == BOX:
        hx, hy, hz = scale
        m = density * 8.0 * hx * hy * hz
        return m, np.diag([hy * hy + hz * hz, hx * hx + hz * hz, hx * hx + hy * hy]) * (m / 3.0)
    if geo == CAPSULE:
        r, h = scale[0], scale[1]
        m_cyl = density * math.pi * r * r * 2.0 * h
        m_caps = density * 4.0 / 3.0 * math.pi * r ** 3
        # two hemispheres: each about its flat face 2/5 m r^2, centroid 3r/8 from it
        axial = m_cyl * r * r / 2.0 + m_caps * 0.4 * r * r
        across = (m_cyl * (r * r / 4.0 + h * h / 3.0)
                  + m_caps * (0.4 * r * r + h * h + 0.75 * h * r))
        return m_cyl + m_caps, np.diag([across, axial, across])
    if geo == CYLINDER:
        r, h = scale[0], scale[1]
        m = density * math.pi * r * r * 2.0 * h
        across = m * (r * r / 4.0 + h * h / 3.0)
        return m, np.diag([across, m * r * r / 2.0, across])
    if geo == CONE:
        r, h = scale[0], scale[1]          # height 2 h
        m = density * math.pi * r * r * 2.0 * h / 3.0
        across = m * (3.0 * r * r / 20.0 + 3.0 * (2.0 * h) ** 2 / 80.0)
        return m, np.diag([across, 0.3 * m * r * r, across])
    raise ValueError(f"solid_mass_properties: no closed form for geometry {geo!r}")


def rotation_matrix(q):
    """The 3x3 rotation of the unit quaternion q = (x, y, z, w)."""
    return np.stack([checks.quat_rotate(q, e) for e in np.eye(3)], axis=1)


class MassAccumulator:
    """A body's mass, first moment ``m c`` and inertia about its own origin."""

    def __init__(self):
        self.mass = 0.0
        self.moment = np.zeros(3)
        self.inertia = np.zeros((3, 3))

    def add(self, mass, com, inertia_about_com):
        """Add a solid of *mass* centred at *com* (body frame) with *inertia_about_com*
        (body-frame axes)."""
        com = np.asarray(com, dtype=np.float64)
        self.mass += mass
        self.moment += mass * com
        self.inertia += inertia_about_com + mass * (com @ com * np.eye(3) - np.outer(com, com))

    def add_shape(self, geo, scale, p, q, density, source=None):
        """Add a shape of *density* placed at (p, q) in the body frame (a mesh shape's
        ``physics.Mesh`` is *source*: its closed volume, ``mesh.py``)."""
        if geo == MESH:
            volume, centroid, inertia = source.mass_properties(scale)
            m, inertia = density * volume, density * inertia
        else:
            m, inertia = solid_mass_properties(geo, scale, density)
            centroid = solid_centroid(geo, scale)
        rot = rotation_matrix(q)
        self.add(m, np.asarray(p, dtype=np.float64) + rot @ centroid, rot @ inertia @ rot.T)

    def about_com(self):
        """(mass, centre of mass, inertia about it); a massless body has its com at its
        origin."""
        if self.mass <= 0.0:
            return 0.0, np.zeros(3), self.inertia.copy()
        com = self.moment / self.mass
        inertia = self.inertia - self.mass * (com @ com * np.eye(3) - np.outer(com, com))
        return self.mass, com, 0.5 * (inertia + inertia.T)


def inverse_mass_properties(mass, inertia):
    """(1 / mass, inverse inertia); zero for a static (massless) body, and a zero
    inverse inertia for a body without rotational inertia (it does not rotate)."""
    if mass <= 0.0:
        return 0.0, np.zeros((3, 3))
    if abs(np.linalg.det(inertia)) <= 1e-30:
        return 1.0 / mass, np.zeros((3, 3))
    return 1.0 / mass, np.linalg.inv(inertia)
