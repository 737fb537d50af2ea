"""The names a model is described in, shared by the builder, the importers and the
viewers: ``GeoType`` and ``JointType`` (newton's names and values) and ``ShapeConfig``
(a shape's material).  ``physics.builder`` re-exports them."""

import enum

import numpy as np

from numba_sim.physics import checks


class GeoType(enum.IntEnum):
    """Shape geometry types (newton's names); ``model.shape_type`` holds their values."""

    PLANE = 0
    SPHERE = 1
    CAPSULE = 2
    CYLINDER = 3
    CONE = 4
    BOX = 5
    MESH = 6


class JointType(enum.IntEnum):
    """Joint types (newton's names); ``model.joint_type`` holds their values."""

    PRISMATIC = 0
    REVOLUTE = 1
    BALL = 2
    FIXED = 3
    FREE = 4
    DISTANCE = 5
    D6 = 6


class ShapeConfig:
    """A shape's material and collision settings (defaults: warp.sim's builder defaults)."""

    def __init__(self, density=1000.0, ke=1.0e5, kd=1000.0, kf=1000.0, mu=0.5,
                 restitution=0.0, thickness=0.0, collision_group=-1,
                 has_particle_collision=True, has_shape_collision=True):
        call = "ShapeConfig"
        self.density = checks.nonnegative(call, "density", density)
        self.ke = checks.nonnegative(call, "ke", ke)
        self.kd = checks.nonnegative(call, "kd", kd)
        self.kf = checks.nonnegative(call, "kf", kf)
        self.mu = checks.nonnegative(call, "mu", mu)
        self.restitution = checks.nonnegative(call, "restitution", restitution)
        self.thickness = checks.nonnegative(call, "thickness", thickness)
        if isinstance(collision_group, bool) or not isinstance(collision_group, (int, np.integer)):
            raise ValueError(f"{call}: collision_group must be an int, got {collision_group!r}")
        self.collision_group = int(collision_group)
        self.has_particle_collision = bool(has_particle_collision)
        self.has_shape_collision = bool(has_shape_collision)

    def __repr__(self):
        return (f"ShapeConfig(density={self.density}, ke={self.ke}, kd={self.kd}, kf={self.kf}, "
                f"mu={self.mu}, restitution={self.restitution}, thickness={self.thickness})")
