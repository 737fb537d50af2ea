"""What the URDF and MJCF importers share: reading the XML (a file or a string), rotations
from the files' spellings (roll-pitch-yaw, Euler sequences, axis-angle, rotation matrices),
the rotation of a z-up file into the builder's up axis, mesh files (through ``trimesh``)
and the record an import returns.

Transforms here are 7-vectors (p, q) with quaternions xyzw, as in the builder."""

import dataclasses
import math
import os
import xml.etree.ElementTree as ElementTree

import numpy as np

from numba_sim.physics import checks
from numba_sim.physics.builder_rigid import _compose, _inverse, _transform7
from numba_sim.physics.definitions import ShapeConfig

IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])

compose = _compose
inverse = _inverse


@dataclasses.dataclass
class Actuator:
    """An actuator of a file: it drives dof ``dof`` of joint ``joint`` (model indices) as
    ``kind`` ``"position"`` (``control.joint_target_q``), ``"velocity"``
    (``control.joint_target_qd``) or ``"force"`` (``control.joint_f``), scaled by ``gear``;
    ``ctrl_range`` bounds its control ((-inf, inf) when unbounded)."""

    name: str
    joint: int
    dof: int
    kind: str
    gear: float = 1.0
    ctrl_range: tuple = (-math.inf, math.inf)


@dataclasses.dataclass
class Imported:
    """What ``add_urdf``/``add_mjcf`` added: names to body, joint and shape indices of the
    builder (in file order), and the actuators."""

    bodies: dict = dataclasses.field(default_factory=dict)
    joints: dict = dataclasses.field(default_factory=dict)
    shapes: list = dataclasses.field(default_factory=list)
    actuators: list = dataclasses.field(default_factory=list)

    def shifted(self, bodies, joints, shapes, dofs):
        """The same import with every index moved by these counts (the import was read
        into a builder of its own, then appended to the caller's)."""
        return Imported({k: v + bodies for k, v in self.bodies.items()},
                        {k: v + joints for k, v in self.joints.items()},
                        [s + shapes for s in self.shapes],
                        [dataclasses.replace(a, joint=a.joint + joints, dof=a.dof + dofs)
                         for a in self.actuators])

    def actuated_dofs(self, kind=None):
        """The dof indices the actuators drive (of *kind* only, when given), in order."""
        return np.array([a.dof for a in self.actuators if kind is None or a.kind == kind],
                        dtype=np.int64)


class FormatError(ValueError):
    """A robot file that cannot be read: the message names the call, the file and the
    element."""


def read_xml(call, source, root_tag):
    """(root element, directory for relative asset paths) of *source*: a path to a file, or
    the XML text itself."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise ValueError(f"{call}: source must be a path or an XML string, got "
                         f"{type(source).__name__}")
    if source.lstrip().startswith("<"):
        text, directory, name = source, os.getcwd(), "<string>"
    else:
        if not os.path.isfile(source):
            raise ValueError(f"{call}: source {source!r} is neither an existing file nor XML text")
        with open(source, encoding="utf-8") as f:
            text = f.read()
        directory, name = os.path.dirname(os.path.abspath(source)), source
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as e:
        raise FormatError(f"{call}: {name} is not well-formed XML ({e})") from None
    if root.tag != root_tag:
        raise FormatError(f"{call}: {name} has a <{root.tag}> root; expected <{root_tag}>")
    return root, directory, name


def material(cfg, density, mu, collides):
    """The ``ShapeConfig`` of one imported shape: the caller's contact material *cfg* with
    this shape's *density* and friction *mu*, colliding only if *collides* (and *cfg*
    lets it)."""
    return ShapeConfig(density=density, ke=cfg.ke, kd=cfg.kd, kf=cfg.kf, mu=mu,
                       restitution=cfg.restitution, thickness=cfg.thickness,
                       collision_group=cfg.collision_group,
                       has_particle_collision=collides and cfg.has_particle_collision,
                       has_shape_collision=collides and cfg.has_shape_collision)


def name_patterns(call, names):
    """Compiled regular expressions of *names* (a string or a sequence of them)."""
    import re

    if isinstance(names, str):
        names = [names]
    try:
        patterns = [re.compile(n) for n in names]
    except (TypeError, re.error) as e:
        raise ValueError(f"{call}: ignore_names must be names or regular expressions, got "
                         f"{names!r} ({e})") from None
    return patterns


def numbers(call, element, key, count=None, default=None):
    """The attribute *key* of *element* as a float array (of *count* values when given);
    *default* when absent."""
    text = element.get(key)
    if text is None:
        return None if default is None else np.array(default, dtype=np.float64)
    try:
        values = np.array([float(v) for v in text.split()], dtype=np.float64)
    except ValueError:
        raise FormatError(f"{call}: <{element.tag}> {key}={text!r} is not a list of numbers"
                          ) from None
    if count is not None and values.size != count:
        raise FormatError(f"{call}: <{element.tag}> {key}={text!r} needs {count} numbers, "
                          f"got {values.size}")
    if not np.all(np.isfinite(values)):
        raise FormatError(f"{call}: <{element.tag}> {key}={text!r} is not finite")
    return values


def number(call, element, key, default):
    values = numbers(call, element, key, 1)
    return default if values is None else float(values[0])


def quat_axis_angle(axis, angle):
    axis = np.asarray(axis, dtype=np.float64)
    norm = np.linalg.norm(axis)
    if norm < 1e-12:
        return np.array([0.0, 0.0, 0.0, 1.0])
    s = math.sin(0.5 * angle) / norm
    return np.array([axis[0] * s, axis[1] * s, axis[2] * s, math.cos(0.5 * angle)])


def quat_euler(angles, sequence):
    """The rotation of Euler *angles* (radians) about the axes of *sequence* (3 letters of
    xyz/XYZ): lower case rotates about the moving axes (intrinsic), upper case about the
    fixed ones (extrinsic), MuJoCo's ``eulerseq`` rule."""
    q = np.array([0.0, 0.0, 0.0, 1.0])
    for letter, angle in zip(sequence, angles):
        step = quat_axis_angle(np.eye(3)["xyz".index(letter.lower())], angle)
        q = checks.quat_multiply(q, step) if letter.islower() else checks.quat_multiply(step, q)
    return q


def quat_rpy(rpy):
    """URDF's roll-pitch-yaw: about the fixed x, then y, then z axes."""
    return quat_euler(rpy, "XYZ")


def quat_matrix(rotation):
    """The quaternion (xyzw) of a rotation matrix (Shepperd's method)."""
    m = np.asarray(rotation, dtype=np.float64)
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0.0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    else:
        i = int(np.argmax(np.diag(m)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * math.sqrt(max(1.0 + m[i, i] - m[j, j] - m[k, k], 1e-300))
        q = [0.0] * 4
        q[i] = 0.25 * s
        q[j] = (m[j, i] + m[i, j]) / s
        q[k] = (m[k, i] + m[i, k]) / s
        q[3] = (m[k, j] - m[j, k]) / s
    q = np.array(q)
    return q / np.linalg.norm(q)


def quat_between(a, b):
    """The shortest rotation taking direction *a* to direction *b*."""
    a = np.asarray(a, dtype=np.float64) / np.linalg.norm(a)
    b = np.asarray(b, dtype=np.float64) / np.linalg.norm(b)
    c = float(a @ b)
    if c < -1.0 + 1e-12:
        perpendicular = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(perpendicular) < 1e-6:
            perpendicular = np.cross(a, [0.0, 1.0, 0.0])
        return quat_axis_angle(perpendicular, math.pi)
    q = np.concatenate([np.cross(a, b), [1.0 + c]])
    return q / np.linalg.norm(q)


def rotation_matrix(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def up_rotation(file_up, builder_up):
    """The rotation taking the file's up axis (index) onto the builder's, as a 7-vector:
    z-up to y-up turns -90 degrees about x (z goes to y, y to -z), as warp.sim and newton."""
    if file_up == builder_up:
        return IDENTITY.copy()
    return _transform7(np.zeros(3), quat_between(np.eye(3)[file_up], np.eye(3)[builder_up]))


def placement(call, xform, file_up, builder_up):
    """Where the file's world frame goes: *xform* (the caller's placement) after the
    up-axis rotation."""
    p, q = checks.transform(call, "xform", xform)
    return _compose(_transform7(p, q), up_rotation(file_up, builder_up))


def rotated_inertia(call, where, mass, inertia, q):
    """A body's mass properties from a file: *inertia* (3x3 in a frame rotated by *q*)
    expressed in the body frame, checked physical."""
    if mass < 0.0:
        raise FormatError(f"{call}: {where} has a negative mass ({mass})")
    rot = rotation_matrix(q)
    body = rot @ inertia @ rot.T
    body = 0.5 * (body + body.T)
    if np.linalg.eigvalsh(body).min() < -1e-9 * max(1.0, float(np.abs(body).max())):
        raise FormatError(f"{call}: {where} has an inertia that is not positive "
                          f"semi-definite ({inertia.tolist()})")
    return body


def merge_into(builder, body, world, mass, com, inertia):
    """Weld a part at *world* (with *mass* at *com*, *inertia* about it, in the part's
    frame) into *body*; returns the part's frame in the body's (where its shapes go)."""
    offset = _compose(_inverse(np.asarray(builder.body_q[body])), world)
    if mass > 0.0 or inertia is not None:
        rot = rotation_matrix(offset[3:])
        centre = offset[:3] + rot @ (np.zeros(3) if com is None else com)
        inertia = np.zeros((3, 3)) if inertia is None else rot @ inertia @ rot.T
        builder._body_mass[body].add(mass, centre, inertia)
    return offset


def resolve_asset(call, directory, filename):
    """A mesh file named in a robot file: relative to the file's directory; ROS's
    ``package://NAME/rest`` looks for ``rest`` there and in its parents, and ``file://``
    is a plain path."""
    if filename.startswith("file://"):
        filename = filename[len("file://"):]
    candidates = []
    if filename.startswith("package://"):
        rest = filename[len("package://"):].split("/", 1)
        rest = rest[1] if len(rest) > 1 else rest[0]
        folder = directory
        for _ in range(4):
            candidates.append(os.path.join(folder, rest))
            folder = os.path.dirname(folder)
    else:
        candidates.append(filename if os.path.isabs(filename) else os.path.join(directory, filename))
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise FormatError(f"{call}: mesh file {filename!r} not found (looked for "
                      f"{', '.join(repr(c) for c in candidates)})")


def load_mesh(call, path, scale):
    """(vertices (n, 3) scaled, triangle indices (m, 3)) of a mesh file (STL, OBJ, PLY,
    ... through ``trimesh``; several parts are merged)."""
    try:
        import trimesh
    except ImportError:
        raise ImportError(f"{call}: reading mesh files needs trimesh: pip install "
                          "'numba-sim[physics]'") from None
    try:
        mesh = trimesh.load(path, force="mesh", process=False)
    except Exception as e:
        raise FormatError(f"{call}: cannot read mesh file {path!r} ({type(e).__name__}: {e})"
                          ) from None
    vertices = np.asarray(mesh.vertices, dtype=np.float64) * np.asarray(scale, dtype=np.float64)
    faces = np.asarray(mesh.faces, dtype=np.int64)
    if len(faces) == 0:
        raise FormatError(f"{call}: mesh file {path!r} has no triangles")
    return vertices, faces


def mesh_file(call, path, scale):
    """A ``physics.Mesh`` of a mesh file, scaled."""
    from numba_sim.physics.mesh import Mesh

    vertices, faces = load_mesh(call, path, scale)
    try:
        return Mesh(vertices, faces)
    except ValueError as e:
        raise FormatError(f"{call}: mesh file {path!r} makes no mesh shape: {e}") from None
