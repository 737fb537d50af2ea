"""``ModelBuilder.add_urdf``: a URDF robot into the builder (API-physics.md, "Importers
and output").

Links become bodies with their ``<inertial>`` (``origin`` with ``rpy``, ``mass``,
``inertia`` rotated from the inertial frame into the link frame); a link without one gets
no mass (URDF's rule; its collision shapes add none either).  ``<collision>`` geometry
becomes shapes: ``box`` (``size`` is the full extent), ``sphere``, ``cylinder`` and
``capsule`` (along the frame's z axis, ``length`` without the caps) and ``mesh`` files
(STL, OBJ, DAE, ... through trimesh; ``package://`` resolved next to the file).
``parse_visuals=True`` adds ``<visual>`` geometry too, as shapes that neither weigh nor
collide.

Joints: ``revolute`` and ``continuous`` (unlimited) are REVOLUTE, ``prismatic`` PRISMATIC,
``fixed`` FIXED, ``floating`` FREE and ``planar`` a D6 (the two linear axes across
``axis``, the rotation about it); ``<limit lower upper>`` are the limits and
``<dynamics damping>`` the drive's ``target_kd``.  The joint frame is the child link's
frame, placed by ``<origin>`` in the parent's; ``axis`` (default x) is in that frame.
The root link is welded to the world, or free with ``floating=True``.  Not read:
``mimic``, ``safety_controller``, ``transmission``, materials and ``effort``/``velocity``
limits."""

import math

import numpy as np

from numba_sim.physics.definitions import ShapeConfig
from numba_sim.physics.import_common import (
    IDENTITY, FormatError, Imported, compose, material, mesh_file, number, numbers, placement,
    quat_rpy,
    read_xml, resolve_asset, rotated_inertia,
)
from numba_sim.physics import checks

CALL = "add_urdf"
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


def _origin(element):
    """The 7-vector of an element's ``<origin xyz rpy>`` (identity when absent)."""
    origin = None if element is None else element.find("origin")
    if origin is None:
        return IDENTITY.copy()
    xyz = numbers(CALL, origin, "xyz", 3, (0.0, 0.0, 0.0))
    rpy = numbers(CALL, origin, "rpy", 3, (0.0, 0.0, 0.0))
    return np.concatenate([xyz, quat_rpy(rpy)])


class _Reader:
    def __init__(self, builder, root, directory, xform, floating, cfg, up_axis,
                 parse_visuals):
        self.builder = builder
        self.directory = directory
        self.floating = floating
        self.cfg = ShapeConfig() if cfg is None else cfg
        self.parse_visuals = parse_visuals
        self.root_xform = placement(CALL, xform, checks.up_axis_index(CALL, up_axis),
                                    builder.up_axis)
        self.links = {}
        for link in root.findall("link"):
            name = link.get("name")
            if not name:
                raise FormatError(f"{CALL}: a <link> has no name")
            if name in self.links:
                raise FormatError(f"{CALL}: link {name!r} is defined twice")
            self.links[name] = link
        parent_of = {}
        for k, joint in enumerate(root.findall("joint")):
            name = joint.get("name") or f"joint{k}"
            ends = []
            for tag in ("parent", "child"):
                element = joint.find(tag)
                link = None if element is None else element.get("link")
                if link not in self.links:
                    raise FormatError(f"{CALL}: joint {name!r} names {tag} link {link!r}, which "
                                      "this file does not define")
                ends.append(link)
            if ends[1] in parent_of:
                raise FormatError(f"{CALL}: link {ends[1]!r} is the child of two joints "
                                  f"({parent_of[ends[1]][0]!r} and {name!r})")
            parent_of[ends[1]] = (name, ends[0], joint)
        self.parent_of = parent_of
        self.result = Imported()

    def read(self):
        roots = [name for name in self.links if name not in self.parent_of]
        if not roots:
            raise FormatError(f"{CALL}: the joints form a cycle (every link has a parent)")
        children = {}
        for child, (_, parent, _) in self.parent_of.items():
            children.setdefault(parent, []).append(child)
        for root in roots:
            stack = [root]
            while stack:  # depth first, in file order: parents before their children
                link = stack.pop()
                self.add_link(link)
                stack.extend(reversed(children.get(link, [])))
        missing = set(self.links) - set(self.result.bodies)
        if missing:
            raise FormatError(f"{CALL}: links {sorted(missing)} are not connected to a root")

    def add_link(self, name):
        link = self.links[name]
        joint = self.parent_of.get(name)
        if joint is None:
            world = self.root_xform
            parent_body = -1
        else:
            joint_name, parent_name, joint_element = joint
            parent_body = self.result.bodies[parent_name]
            world = compose(np.asarray(self.builder.body_q[parent_body]), _origin(joint_element))
        mass, com, inertia = self.inertial(link, name)
        body = self.builder.add_body(xform=(world[:3], world[3:]), mass=mass, com=com,
                                     inertia=inertia, label=name)
        self.result.bodies[name] = body
        for element in link.findall("collision"):
            self.add_geometry(element, body, name, collides=True)
        if self.parse_visuals:
            for element in link.findall("visual"):
                self.add_geometry(element, body, name, collides=False)
        if joint is None:
            self.add_root_joint(body, name, world)
        else:
            self.add_joint(joint_element, joint_name, parent_body, body, _origin(joint_element))

    def inertial(self, link, name):
        element = link.find("inertial")
        if element is None:
            return 0.0, None, None
        where = f"<inertial> of link {name!r}"
        mass_element = element.find("mass")
        mass = 0.0 if mass_element is None else number(CALL, mass_element, "value", 0.0)
        values = element.find("inertia")
        inertia = np.zeros((3, 3))
        if values is not None:
            get = {k: number(CALL, values, k, 0.0)
                   for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            inertia = np.array([[get["ixx"], get["ixy"], get["ixz"]],
                                [get["ixy"], get["iyy"], get["iyz"]],
                                [get["ixz"], get["iyz"], get["izz"]]])
        origin = _origin(element)
        return mass, origin[:3], rotated_inertia(CALL, where, mass, inertia, origin[3:])

    def add_geometry(self, element, body, link_name, collides):
        geometry = element.find("geometry")
        if geometry is None or len(geometry) == 0:
            raise FormatError(f"{CALL}: a <{element.tag}> of link {link_name!r} has no "
                              "<geometry>")
        shape_element = geometry[0]
        kind = shape_element.tag
        where = f"<{kind}> of link {link_name!r}"
        xform = _origin(element)
        placed = (xform[:3], xform[3:])
        cfg = material(self.cfg, 0.0, self.cfg.mu, collides)
        builder = self.builder

        def positive(key):
            value = number(CALL, shape_element, key, None)
            if value is None or value <= 0.0:
                raise FormatError(f"{CALL}: {where} needs a positive {key}, got "
                                  f"{shape_element.get(key)!r}")
            return value

        if kind == "box":
            size = numbers(CALL, shape_element, "size", 3)
            if size is None or np.any(size <= 0.0):
                raise FormatError(f"{CALL}: {where} needs a positive size, got "
                                  f"{shape_element.get('size')!r}")
            shape = builder.add_shape_box(body, placed, *(0.5 * size), cfg=cfg)
        elif kind == "sphere":
            shape = builder.add_shape_sphere(body, placed, radius=positive("radius"), cfg=cfg)
        elif kind in ("cylinder", "capsule"):
            add = builder.add_shape_cylinder if kind == "cylinder" else builder.add_shape_capsule
            shape = add(body, placed, radius=positive("radius"),
                        half_height=0.5 * positive("length"), axis=2, cfg=cfg)
        elif kind == "mesh":
            filename = shape_element.get("filename")
            if not filename:
                raise FormatError(f"{CALL}: {where} has no filename")
            scale = numbers(CALL, shape_element, "scale", 3, (1.0, 1.0, 1.0))
            mesh = mesh_file(CALL, resolve_asset(CALL, self.directory, filename), scale)
            shape = builder.add_shape_mesh(body, xform=placed, mesh=mesh, cfg=cfg)
        else:
            raise FormatError(f"{CALL}: {where}: unknown geometry; expected box, sphere, "
                              "cylinder, capsule or mesh")
        self.result.shapes.append(shape)

    def add_root_joint(self, body, name, world):
        builder = self.builder
        if self.floating:
            j = builder.add_joint_free(body, label=f"{name}_free")
        else:
            j = builder.add_joint_fixed(-1, body, parent_xform=(world[:3], world[3:]),
                                        label=f"{name}_fixed")
        self.result.joints[builder.joint_label[j]] = j

    def add_joint(self, element, name, parent, child, origin):
        kind = element.get("type")
        if kind not in JOINT_TYPES:
            raise FormatError(f"{CALL}: joint {name!r} has type {kind!r}; expected one of "
                              f"{', '.join(JOINT_TYPES)}")
        builder = self.builder
        xforms = dict(parent_xform=(origin[:3], origin[3:]), child_xform=None, label=name)
        axis_element = element.find("axis")
        axis = np.array([1.0, 0.0, 0.0]) if axis_element is None else \
            numbers(CALL, axis_element, "xyz", 3, (1.0, 0.0, 0.0))
        if np.linalg.norm(axis) < 1e-12:
            raise FormatError(f"{CALL}: joint {name!r} has a zero axis")
        dynamics = element.find("dynamics")
        damping = 0.0 if dynamics is None else number(CALL, dynamics, "damping", 0.0)
        limit = element.find("limit")
        lower, upper = -math.inf, math.inf
        if limit is not None and kind in ("revolute", "prismatic"):
            lower = number(CALL, limit, "lower", 0.0)
            upper = number(CALL, limit, "upper", 0.0)
            if lower > upper:
                raise FormatError(f"{CALL}: joint {name!r} has limits lower={lower} > "
                                  f"upper={upper}")
        if kind in ("revolute", "continuous", "prismatic"):
            add = builder.add_joint_prismatic if kind == "prismatic" else \
                builder.add_joint_revolute
            j = add(parent, child, axis=axis, limit_lower=lower, limit_upper=upper,
                    target_kd=damping, **xforms)
        elif kind == "fixed":
            j = builder.add_joint_fixed(parent, child, **xforms)
        elif kind == "floating":
            j = builder.add_joint_free(child, parent=parent, **xforms)
        else:
            n = axis / np.linalg.norm(axis)
            u = np.cross(n, [1.0, 0.0, 0.0])
            if np.linalg.norm(u) < 1e-6:
                u = np.cross(n, [0.0, 1.0, 0.0])
            u /= np.linalg.norm(u)
            j = builder.add_joint_d6(parent, child, linear_axes=[u, np.cross(n, u)],
                                     angular_axes=[{"axis": n, "target_kd": damping}], **xforms)
        self.result.joints[name] = j


def add_urdf(builder, source, xform=None, floating=False, cfg=None, up_axis="z",
             parse_visuals=False):
    """Add the URDF robot *source* (a file path or the XML text) to *builder*, placed by
    *xform* after rotating the file's *up_axis* onto the builder's; the root link is free
    with *floating*, else welded.  *cfg* is the contact material of its collision shapes.
    Returns the names and indices added (``physics.Imported``)."""
    root, directory, _ = read_xml(CALL, source, "robot")
    if cfg is not None and not isinstance(cfg, ShapeConfig):
        raise ValueError(f"{CALL}: cfg must be a physics.ShapeConfig, got {cfg!r}")
    if not isinstance(floating, bool):
        raise ValueError(f"{CALL}: floating must be True or False, got {floating!r}")
    reader = _Reader(builder, root, directory, xform, floating, cfg, up_axis,
                     bool(parse_visuals))
    reader.read()
    return reader.result

