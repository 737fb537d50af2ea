"""Rigid bodies and joints of ``physics.ModelBuilder`` (a mixin), and their arrays in
a ``Model``.

Bodies (API-physics.md): ``add_body`` adds a body and no joint; shapes on it add
``volume x density`` and the solid's inertia (``inertia.py``).  ``body_q`` is the
world transform of the body's origin, ``body_qd`` (linear velocity of the centre
of mass, angular velocity) in world coordinates (newton 1.8), ``body_com`` the
centre of mass in the body frame, ``body_inertia`` the inertia about it in body
axes (plus ``armature`` on its diagonal).

Joints connect a parent (``-1``: the world) to a child; each body has at most one
parent joint.  The joint frame is ``body_q[parent] * joint_X_p`` on the parent and
``body_q[child] * joint_X_c`` on the child; ``joint_axis`` holds one axis per
degree of freedom in the joint frame.  Coordinates and dofs per type (newton's):
prismatic and revolute 1/1, ball 4/3 (a quaternion), fixed 0/0, free 7/6
((p, q) and (linear, angular)), distance 7/6 (as free), D6 one coordinate per axis.
``joint_q_start``/``joint_qd_start`` have
``joint_count + 1`` entries (the last is the total); ``body_parent`` is each body's
parent body through its joint (-1: the world, or no joint), which ``collide`` reads to
keep a joint's two bodies from colliding.
"""

import math

import numpy as np

from numba_sim.physics import checks
from numba_sim.physics.inertia import MassAccumulator, inverse_mass_properties

PRISMATIC, REVOLUTE, BALL, FIXED, FREE, DISTANCE, D6 = 0, 1, 2, 3, 4, 5, 6

# joint type: (coordinates, linear dofs, angular dofs); a D6 joint's follow from its axes
JOINT_LAYOUT = {PRISMATIC: (1, 1, 0), REVOLUTE: (1, 0, 1), BALL: (4, 0, 3), FIXED: (0, 0, 0),
                FREE: (7, 3, 3), DISTANCE: (7, 3, 3)}

# per-dof lists (joint_axis, limits, drives) and per-joint lists, for add_builder
_DOF_LISTS = ("joint_axis", "joint_limit_lower", "joint_limit_upper", "joint_limit_ke",
              "joint_limit_kd", "joint_target_q", "joint_target_ke", "joint_target_kd",
              "joint_armature", "joint_qd")
_JOINT_LISTS = ("joint_type", "joint_X_c", "joint_dof_dim", "joint_label")
_BODY_LISTS = ("body_qd", "body_label", "body_armature")


def _transform7(p, q):
    return np.concatenate([p, q])


def _compose(a, b):
    """a * b of transforms (7-vectors)."""
    return _transform7(checks.quat_rotate(a[3:], b[:3]) + a[:3], checks.quat_multiply(a[3:], b[3:]))


def _inverse(a):
    qi = np.array([-a[3], -a[4], -a[5], a[6]])
    return _transform7(-checks.quat_rotate(qi, a[:3]), qi)


class RigidBuilder:
    """The bodies and joints of ``ModelBuilder`` (mixed into it)."""

    def _init_rigid(self):
        self.body_q = []
        self.body_qd = []
        self.body_world = []
        self.body_label = []
        self.body_armature = []
        self._body_mass = []          # MassAccumulator per body
        self.joint_type = []
        self.joint_parent = []
        self.joint_child = []
        self.joint_X_p = []
        self.joint_X_c = []
        self.joint_dof_dim = []
        self.joint_label = []
        self.joint_world = []
        self.joint_q_start = []
        self.joint_qd_start = []
        self.joint_q = []
        for name in _DOF_LISTS:
            setattr(self, name, [])
        self.shape_density = []
        self.shape_shape_collision = []

    body_count = property(lambda self: len(self.body_q))
    joint_count = property(lambda self: len(self.joint_type))
    joint_dof_count = property(lambda self: len(self.joint_qd))
    joint_coord_count = property(lambda self: len(self.joint_q))

    # ------------------------------------------------------------------ bodies
    def add_body(self, xform=None, mass=0.0, com=None, inertia=None, armature=0.0, label=None):
        """A rigid body at *xform* (its origin's world transform) and no joint; *mass* at
        *com* (body frame) with *inertia* (3x3 or its diagonal, about *com*) adds to what
        its shapes bring.  Returns its index."""
        call = "add_body"
        p, q = checks.transform(call, "xform", xform)
        mass = checks.nonnegative(call, "mass", mass)
        com = np.zeros(3) if com is None else checks.vector(call, "com", com)
        if inertia is None:
            inertia = np.zeros((3, 3))
        else:
            values = np.asarray(inertia, dtype=np.float64)
            if values.shape == (3,):
                values = np.diag(values)
            if values.shape != (3, 3) or not np.all(np.isfinite(values)):
                raise ValueError(f"{call}: inertia must be a finite 3x3 matrix or 3 diagonal "
                                 f"values, got {inertia!r}")
            if not np.allclose(values, values.T, rtol=1e-6, atol=1e-12) or \
                    np.linalg.eigvalsh(0.5 * (values + values.T)).min() < -1e-12:
                raise ValueError(f"{call}: inertia must be symmetric positive semi-definite, "
                                 f"got {values.tolist()}")
            inertia = 0.5 * (values + values.T)
        armature = checks.nonnegative(call, "armature", armature)
        accumulator = MassAccumulator()
        accumulator.add(mass, com, inertia)
        self.body_q.append(_transform7(p, q))
        self.body_qd.append(np.zeros(6))
        self.body_world.append(self._world)
        self.body_label.append(label)
        self.body_armature.append(armature)
        self._body_mass.append(accumulator)
        return len(self.body_q) - 1

    def _shape_body(self, call, body):
        """*body* as an index of this builder's bodies, or -1 (the static world)."""
        if isinstance(body, bool) or not isinstance(body, (int, np.integer)) or \
                not -1 <= body < self.body_count:
            raise ValueError(f"{call}: body={body!r} is out of range (this model has "
                             f"{self.body_count} bodies; -1 is the static world)")
        return int(body)

    def _rigid_shape_added(self, body, geo, scale, p, q, cfg, source=None):
        """Record a shape's collision flag and density; a body shape adds its mass (a mesh
        shape's from its ``physics.Mesh``, *source*)."""
        self.shape_density.append(cfg.density)
        self.shape_shape_collision.append(cfg.has_shape_collision)
        if body >= 0 and cfg.density > 0.0:
            self._body_mass[body].add_shape(geo, scale, p, q, cfg.density, source)

    # ------------------------------------------------------------------ joints
    def _add_joint(self, call, joint_type, parent, child, parent_xform, child_xform, axes,
                   label, limits=None, drive=None, armature=0.0, layout=None):
        n = self.body_count
        for name, value, low in (("parent", parent, -1), ("child", child, 0)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
                    not low <= value < n:
                raise ValueError(f"{call}: {name}={value!r} is out of range ({n} bodies"
                                 f"{'; -1 is the world' if low < 0 else ''})")
        parent, child = int(parent), int(child)
        if parent == child:
            raise ValueError(f"{call}: parent and child are the same body ({child})")
        if child in self.joint_child:
            raise ValueError(f"{call}: body {child} already has a parent joint "
                             f"(joint {self.joint_child.index(child)})")
        X_p = _transform7(*checks.transform(call, "parent_xform", parent_xform))
        X_c = _transform7(*checks.transform(call, "child_xform", child_xform))
        armature = checks.nonnegative(call, "armature", armature)
        coords, linear, angular = layout or JOINT_LAYOUT[joint_type]
        self.joint_type.append(int(joint_type))
        self.joint_parent.append(parent)
        self.joint_child.append(child)
        self.joint_X_p.append(X_p)
        self.joint_X_c.append(X_c)
        self.joint_dof_dim.append((linear, angular))
        self.joint_label.append(label)
        self.joint_world.append(self._world)
        self.joint_q_start.append(len(self.joint_q))
        self.joint_qd_start.append(len(self.joint_qd))
        lower, upper, limit_ke, limit_kd = limits or (-math.inf, math.inf,
                                                      self.default_joint_limit_ke,
                                                      self.default_joint_limit_kd)
        target_q, target_ke, target_kd = drive or (0.0, 0.0, 0.0)
        for axis in axes:
            self.joint_axis.append(axis)
            self.joint_limit_lower.append(lower)
            self.joint_limit_upper.append(upper)
            self.joint_limit_ke.append(limit_ke)
            self.joint_limit_kd.append(limit_kd)
            self.joint_target_q.append(target_q)
            self.joint_target_ke.append(target_ke)
            self.joint_target_kd.append(target_kd)
            self.joint_armature.append(armature)
            self.joint_qd.append(0.0)
        if joint_type == BALL:
            self.joint_q.extend([0.0, 0.0, 0.0, 1.0])
        elif joint_type in (FREE, DISTANCE):
            # the child's pose relative to the parent's joint frame
            parent_frame = X_p if parent < 0 else _compose(self.body_q[parent], X_p)
            relative = _compose(_inverse(parent_frame), _compose(self.body_q[child], X_c))
            self.joint_q.extend(relative.tolist())
        else:
            self.joint_q.extend([0.0] * coords)
        return len(self.joint_type) - 1

    def _axis_joint(self, call, joint_type, parent, child, parent_xform, child_xform, axis,
                    target_q, target_ke, target_kd, limit_lower, limit_upper, limit_ke,
                    limit_kd, armature, label, target_pos):
        axis = checks.vector(call, "axis", axis)
        norm = np.linalg.norm(axis)
        if norm < 1e-12:
            raise ValueError(f"{call}: axis must be non-zero, got {axis.tolist()}")
        if target_pos is not None:
            target_q = target_pos
        lower = float(limit_lower)
        upper = float(limit_upper)
        if math.isnan(lower) or math.isnan(upper) or lower > upper:
            raise ValueError(f"{call}: limits must satisfy limit_lower <= limit_upper, got "
                             f"{limit_lower!r} and {limit_upper!r}")
        limits = (lower, upper,
                  self.default_joint_limit_ke if limit_ke is None else
                  checks.nonnegative(call, "limit_ke", limit_ke),
                  self.default_joint_limit_kd if limit_kd is None else
                  checks.nonnegative(call, "limit_kd", limit_kd))
        drive = (checks.finite(call, "target_q", target_q),
                 checks.nonnegative(call, "target_ke", target_ke),
                 checks.nonnegative(call, "target_kd", target_kd))
        return self._add_joint(call, joint_type, parent, child, parent_xform, child_xform,
                               [axis / norm], label, limits, drive, armature)

    def add_joint_revolute(self, parent, child, parent_xform=None, child_xform=None,
                           axis=(0.0, 0.0, 1.0), target_q=0.0, target_ke=0.0, target_kd=0.0,
                           limit_lower=-math.inf, limit_upper=math.inf, limit_ke=None,
                           limit_kd=None, armature=0.0, label=None, target_pos=None):
        """A hinge about *axis* (joint frame); returns the joint's index."""
        return self._axis_joint("add_joint_revolute", REVOLUTE, parent, child, parent_xform,
                                child_xform, axis, target_q, target_ke, target_kd,
                                limit_lower, limit_upper, limit_ke, limit_kd, armature, label,
                                target_pos)

    def add_joint_prismatic(self, parent, child, parent_xform=None, child_xform=None,
                            axis=(0.0, 0.0, 1.0), target_q=0.0, target_ke=0.0, target_kd=0.0,
                            limit_lower=-math.inf, limit_upper=math.inf, limit_ke=None,
                            limit_kd=None, armature=0.0, label=None, target_pos=None):
        """A slider along *axis* (joint frame); returns the joint's index."""
        return self._axis_joint("add_joint_prismatic", PRISMATIC, parent, child, parent_xform,
                                child_xform, axis, target_q, target_ke, target_kd,
                                limit_lower, limit_upper, limit_ke, limit_kd, armature, label,
                                target_pos)

    def add_joint_ball(self, parent, child, parent_xform=None, child_xform=None, armature=0.0,
                       label=None):
        """A spherical joint (3 angular dofs); returns the joint's index."""
        return self._add_joint("add_joint_ball", BALL, parent, child, parent_xform, child_xform,
                               list(np.eye(3)), label, armature=armature)

    def add_joint_fixed(self, parent, child, parent_xform=None, child_xform=None, label=None):
        """A weld (no dofs); returns the joint's index."""
        return self._add_joint("add_joint_fixed", FIXED, parent, child, parent_xform,
                               child_xform, [], label)

    def add_joint_free(self, child, parent_xform=None, child_xform=None, parent=-1, label=None):
        """Six dofs (linear x, y, z, then angular x, y, z); returns the joint's index."""
        return self._add_joint("add_joint_free", FREE, parent, child, parent_xform, child_xform,
                               list(np.eye(3)) + list(np.eye(3)), label)

    def add_joint_distance(self, parent, child, parent_xform=None, child_xform=None,
                           min_distance=-1.0, max_distance=1.0, label=None):
        """Six dofs (as a free joint) with the distance between the two joint points kept
        within ``[min_distance, max_distance]`` (a negative bound: none), stored as the
        first dof's limits (warp.sim's spelling); SolverXPBD and SolverSemiImplicit
        solve it, SolverFeatherstone as slides and a ball with the length kept by the
        first dof's ``limit_ke/kd``."""
        call = "add_joint_distance"
        lower = float(min_distance)
        upper = float(max_distance)
        if math.isnan(lower) or math.isnan(upper):
            raise ValueError(f"{call}: min_distance and max_distance must be numbers, got "
                             f"{min_distance!r} and {max_distance!r}")
        lower = max(lower, 0.0)
        upper = math.inf if upper < 0.0 else upper
        if lower > upper:
            raise ValueError(f"{call}: min_distance must be <= max_distance, got "
                             f"{min_distance!r} and {max_distance!r}")
        j = self._add_joint(call, DISTANCE, parent, child, parent_xform, child_xform,
                            list(np.eye(3)) + list(np.eye(3)), label)
        d = self.joint_qd_start[j]
        self.joint_limit_lower[d], self.joint_limit_upper[d] = lower, upper
        return j

    def add_joint_d6(self, parent, child, linear_axes=(), angular_axes=(), parent_xform=None,
                     child_xform=None, armature=0.0, label=None):
        """A joint free along up to three *linear_axes* and about up to three
        *angular_axes* (joint frame; each group orthogonal) and locked otherwise; dofs
        linear first, then angular.  An axis is a 3-vector or a dict with ``axis`` and any of
        ``limit_lower``, ``limit_upper``, ``limit_ke``, ``limit_kd``, ``target_q``,
        ``target_ke``, ``target_kd`` (the builder's defaults otherwise).  SolverXPBD
        solves it: linear limits, one angular axis as a hinge with its limits, two as a
        universal joint, three as a ball (limits on two or three angular axes are not
        enforced yet); SolverSemiImplicit by joint springs (drives and limits on every
        axis); SolverFeatherstone with its axes as dofs (the slides, then the rotations
        about the angular axes in order)."""
        call = "add_joint_d6"
        groups = []
        for name, given in (("linear_axes", linear_axes), ("angular_axes", angular_axes)):
            given = list(given)
            if len(given) > 3:
                raise ValueError(f"{call}: {name} takes at most 3 axes, got {len(given)}")
            settings = [self._d6_axis(call, f"{name}[{k}]", a) for k, a in enumerate(given)]
            units = [s["axis"] for s in settings]
            for a in range(len(units)):
                for b in range(a):
                    if abs(float(units[a] @ units[b])) > 1e-6:
                        raise ValueError(f"{call}: {name} must be orthogonal; axes {b} and "
                                         f"{a} are not ({units[b].tolist()}, "
                                         f"{units[a].tolist()})")
            groups.append(settings)
        settings = groups[0] + groups[1]
        n = len(settings)
        j = self._add_joint(call, D6, parent, child, parent_xform, child_xform,
                            [s["axis"] for s in settings], label, armature=armature,
                            layout=(n, len(groups[0]), len(groups[1])))
        d = self.joint_qd_start[j]
        for k, s in enumerate(settings):
            for key in ("limit_lower", "limit_upper", "limit_ke", "limit_kd", "target_q",
                        "target_ke", "target_kd"):
                getattr(self, f"joint_{key}")[d + k] = s[key]
        return j

    def _d6_axis(self, call, name, value):
        options = dict(value) if isinstance(value, dict) else {"axis": value}
        unknown = set(options) - {"axis", "limit_lower", "limit_upper", "limit_ke", "limit_kd",
                                  "target_q", "target_ke", "target_kd"}
        if unknown:
            raise ValueError(f"{call}: {name} has unknown settings {sorted(unknown)}")
        axis = checks.vector(call, f"{name} axis", options.get("axis"))
        norm = np.linalg.norm(axis)
        if norm < 1e-12:
            raise ValueError(f"{call}: {name} axis must be non-zero, got {axis.tolist()}")
        lower = float(options.get("limit_lower", -math.inf))
        upper = float(options.get("limit_upper", math.inf))
        if math.isnan(lower) or math.isnan(upper) or lower > upper:
            raise ValueError(f"{call}: {name} limits must satisfy limit_lower <= limit_upper, "
                             f"got {lower!r} and {upper!r}")
        return {"axis": axis / norm, "limit_lower": lower, "limit_upper": upper,
                "limit_ke": checks.nonnegative(call, f"{name} limit_ke", options.get(
                    "limit_ke", self.default_joint_limit_ke)),
                "limit_kd": checks.nonnegative(call, f"{name} limit_kd", options.get(
                    "limit_kd", self.default_joint_limit_kd)),
                "target_q": checks.finite(call, f"{name} target_q", options.get("target_q", 0.0)),
                "target_ke": checks.nonnegative(call, f"{name} target_ke",
                                                options.get("target_ke", 0.0)),
                "target_kd": checks.nonnegative(call, f"{name} target_kd",
                                                options.get("target_kd", 0.0))}

    # ------------------------------------------------------------- composition
    def _add_rigid_builder(self, other, p, q, world):
        """Append *other*'s bodies, joints and per-shape rigid data (add_builder)."""
        body_offset = self.body_count
        X = _transform7(p, q)
        self.body_q.extend(_compose(X, b) for b in other.body_q)
        self.body_qd.extend(np.concatenate([checks.quat_rotate(q, v[:3]),
                                            checks.quat_rotate(q, v[3:])])
                            for v in other.body_qd)
        self.body_world.extend([world] * other.body_count)
        for name in _BODY_LISTS[1:]:
            getattr(self, name).extend(getattr(other, name))
        for acc in other._body_mass:
            copy = MassAccumulator()
            copy.mass, copy.moment, copy.inertia = acc.mass, acc.moment.copy(), acc.inertia.copy()
            self._body_mass.append(copy)
        q_offset, qd_offset = self.joint_coord_count, self.joint_dof_count
        for k in range(other.joint_count):
            parent = other.joint_parent[k]
            self.joint_parent.append(parent if parent < 0 else parent + body_offset)
            self.joint_child.append(other.joint_child[k] + body_offset)
            X_p = other.joint_X_p[k]
            self.joint_X_p.append(_compose(X, X_p) if parent < 0 else X_p)
            self.joint_q_start.append(other.joint_q_start[k] + q_offset)
            self.joint_qd_start.append(other.joint_qd_start[k] + qd_offset)
            self.joint_world.append(world)
        for name in _JOINT_LISTS + _DOF_LISTS:
            getattr(self, name).extend(getattr(other, name))
        self.joint_q.extend(other.joint_q)
        for name in ("shape_density", "shape_shape_collision"):
            getattr(self, name).extend(getattr(other, name))
        self.shape_body.extend(b if b < 0 else b + body_offset for b in other.shape_body)

    def _check_rigid(self, call):
        for name in ("body_world", "joint_world"):
            values = getattr(self, name)
            if any(b < a for a, b in zip(values, values[1:])):
                raise ValueError(f"{call}: {name} is not world-major (entities of a world were "
                                 "added after those of a later world)")


def rigid_model_arrays(model, builder, put):
    """Set the body and joint arrays of *model* from *builder* (``put(values, dtype,
    shape_tail)`` makes a device array)."""
    f32, i32 = np.float32, np.int32
    n = builder.body_count
    mass = np.zeros(n)
    com = np.zeros((n, 3))
    inertia = np.zeros((n, 3, 3))
    inv_mass = np.zeros(n)
    inv_inertia = np.zeros((n, 3, 3))
    for b, accumulator in enumerate(builder._body_mass):
        m, c, i = accumulator.about_com()
        i = i + np.eye(3) * builder.body_armature[b]
        mass[b], com[b], inertia[b] = m, c, i
        inv_mass[b], inv_inertia[b] = inverse_mass_properties(m, i)
    model.body_count = n
    model.body_q = put(builder.body_q, f32, (7,))
    model.body_qd = put(builder.body_qd, f32, (6,))
    model.body_com = put(com, f32, (3,))
    model.body_mass = put(mass, f32)
    model.body_inv_mass = put(inv_mass, f32)
    model.body_inertia = put(inertia, f32, (3, 3))
    model.body_inv_inertia = put(inv_inertia, f32, (3, 3))
    model.body_world = put(builder.body_world, i32)
    model.body_label = list(builder.body_label)
    parent = np.full(n, -1)
    parent[np.asarray(builder.joint_child, dtype=np.int64)] = builder.joint_parent
    model.body_parent = put(parent, i32)
    model.joint_count = builder.joint_count
    model.joint_dof_count = builder.joint_dof_count
    model.joint_coord_count = builder.joint_coord_count
    model.joint_type = put(builder.joint_type, i32)
    model.joint_parent = put(builder.joint_parent, i32)
    model.joint_child = put(builder.joint_child, i32)
    model.joint_X_p = put(builder.joint_X_p, f32, (7,))
    model.joint_X_c = put(builder.joint_X_c, f32, (7,))
    model.joint_axis = put(builder.joint_axis, f32, (3,))
    model.joint_dof_dim = put(builder.joint_dof_dim, i32, (2,))
    model.joint_linear_dofs = put([dim[0] for dim in builder.joint_dof_dim], i32)
    model.joint_q_start = put(builder.joint_q_start + [builder.joint_coord_count], i32)
    model.joint_qd_start = put(builder.joint_qd_start + [builder.joint_dof_count], i32)
    model.joint_q = put(builder.joint_q, f32)
    model.joint_qd = put(builder.joint_qd, f32)
    for name in ("joint_limit_lower", "joint_limit_upper", "joint_limit_ke", "joint_limit_kd",
                 "joint_target_q", "joint_target_ke", "joint_target_kd", "joint_armature"):
        setattr(model, name, put(getattr(builder, name), f32))
    model.joint_world = put(builder.joint_world, i32)
    model.joint_label = list(builder.joint_label)
    model.shape_density = put(builder.shape_density, f32)
    model.shape_shape_collision = put(builder.shape_shape_collision, i32)
