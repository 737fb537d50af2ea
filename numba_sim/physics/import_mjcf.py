"""``ModelBuilder.add_mjcf``: a MuJoCo MJCF model into the builder (API-physics.md,
"Importers and output").

What is read: ``<compiler>`` (``angle``, ``eulerseq``, ``meshdir``/``assetdir``,
``autolimits``, ``inertiafromgeom``), ``<default>`` classes (nested, inherited, with
``class`` and ``childclass``), ``<include>``, ``<asset><mesh>``, ``<worldbody>`` with nested
``<body>`` and ``<frame>`` elements, their ``<inertial>``, ``<geom>`` (sphere, capsule,
cylinder, box, plane, mesh; ``fromto``; ``density`` or ``mass``; ``friction``;
``contype``/``conaffinity``), ``<joint>`` (hinge, slide, ball, free; ``range``, ``limited``,
``stiffness``, ``springref``, ``damping``, ``armature``) and ``<freejoint>``, and
``<actuator>`` (``motor``, ``position``, ``velocity``, ``general``).

Each body gets one joint to its parent (newton's rule): none is a FIXED joint (or, by
default, the body merges into its parent, as MuJoCo welds it), one hinge
a REVOLUTE, one slide a PRISMATIC, one ball a BALL, a free joint a FREE, several joints
one D6 with their axes (slides first, then hinges) placed at the first joint's ``pos``.
A joint's ``stiffness`` and ``damping`` become its drive's ``target_ke`` (toward
``springref``) and ``target_kd``; a position actuator's ``kp`` (``kv``) sets ``target_ke``
(``target_kd``), a velocity actuator's ``kv`` sets ``target_kd``.

Masses: a body's ``<inertial>`` wins over its geoms; without one its geoms give mass and
inertia by MuJoCo's rule (``density``, default 1000, or the geom's ``mass``);
``inertiafromgeom="true"`` always takes the geoms, ``"false"`` never.  Geoms with
``contype`` and ``conaffinity`` both 0 still weigh but do not collide.

Not read: sites, tendons, equality constraints, sensors, cameras and lights; ellipsoid
geoms become spheres of their largest radius (with the ellipsoid's mass); MuJoCo
re-centres a mesh on its centre of
mass, here its vertices stay where the file puts them (as warp.sim and newton)."""

import math
import os

import numpy as np

from numba_sim.physics import checks
from numba_sim.physics.definitions import GeoType, ShapeConfig
from numba_sim.physics.import_common import (
    IDENTITY, Actuator, FormatError, Imported, compose, inverse, material, merge_into, mesh_file,
    name_patterns, number, numbers, placement, quat_axis_angle, quat_between, quat_euler, quat_matrix,
    read_xml, resolve_asset, rotated_inertia,
)
from numba_sim.physics.inertia import solid_mass_properties

CALL = "add_mjcf"
ACTUATOR_TAGS = ("motor", "position", "velocity", "general")
GEOM_TYPES = {"sphere": GeoType.SPHERE, "capsule": GeoType.CAPSULE,
              "cylinder": GeoType.CYLINDER, "box": GeoType.BOX, "plane": GeoType.PLANE,
              "mesh": GeoType.MESH, "ellipsoid": GeoType.SPHERE}


class _Compiler:
    """The ``<compiler>`` settings that change how numbers read."""

    def __init__(self, root, directory):
        element = root.find("compiler")
        attrs = {} if element is None else element.attrib
        angle = attrs.get("angle", "degree")
        if angle not in ("degree", "radian"):
            raise FormatError(f"{CALL}: <compiler angle={angle!r}>; expected degree or radian")
        self.angle_scale = math.pi / 180.0 if angle == "degree" else 1.0
        self.euler_sequence = attrs.get("eulerseq", "xyz")
        if len(self.euler_sequence) != 3 or any(c not in "xyzXYZ" for c in self.euler_sequence):
            raise FormatError(f"{CALL}: <compiler eulerseq={self.euler_sequence!r}>; expected "
                              "three of x, y, z, X, Y, Z")
        asset_dir = attrs.get("assetdir", "")
        self.mesh_dir = os.path.join(directory, attrs.get("meshdir", asset_dir))
        self.auto_limits = attrs.get("autolimits", "true") == "true"
        self.inertia_from_geom = attrs.get("inertiafromgeom", "auto")
        if self.inertia_from_geom not in ("auto", "true", "false"):
            raise FormatError(f"{CALL}: <compiler inertiafromgeom={self.inertia_from_geom!r}>; "
                              "expected auto, true or false")


def _expand_includes(element, directory, depth=0):
    """Replace every ``<include file=...>`` by the children of the included file's root."""
    for k, child in enumerate(list(element)):
        if child.tag == "include":
            if depth > 8:
                raise FormatError(f"{CALL}: <include> nested too deep (a cycle?)")
            path = os.path.join(directory, child.get("file", ""))
            included, sub_directory, _ = read_xml(CALL, path, "mujoco")
            _expand_includes(included, sub_directory, depth + 1)
            element.remove(child)
            for offset, grandchild in enumerate(list(included)):
                element.insert(k + offset, grandchild)
        else:
            _expand_includes(child, directory, depth)


def _default_classes(root):
    """{class name: {element tag: attributes}}, each class holding its ancestors' settings
    under its own; the top-level class is "main"."""
    classes = {}

    def visit(element, inherited):
        name = element.get("class", "main")
        own = {tag: dict(attrs) for tag, attrs in inherited.items()}
        for child in element:
            if child.tag != "default":
                own.setdefault(child.tag, {}).update(child.attrib)
        classes[name] = own
        for child in element:
            if child.tag == "default":
                visit(child, own)

    for element in root.findall("default"):
        visit(element, classes.get("main", {}))
    classes.setdefault("main", {})
    return classes


class _Reader:
    def __init__(self, builder, root, directory, name, xform, floating, cfg, up_axis,
                 density, collapse_fixed_joints, ignore_names):
        self.builder = builder
        self.ignore = ignore_names
        self.ignored_joints = set()
        self.collapse_fixed_joints = collapse_fixed_joints
        self.name = name
        self.compiler = _Compiler(root, directory)
        self.classes = _default_classes(root)
        self.floating = floating
        self.cfg = ShapeConfig() if cfg is None else cfg
        self.density = density
        self.root_xform = placement(CALL, xform, checks.up_axis_index(CALL, up_axis),
                                    builder.up_axis)
        self.meshes = {}
        self.loaded_meshes = {}
        for element in root.iter("mesh"):
            if element.get("file") is not None:
                self.meshes[element.get("name") or os.path.splitext(
                    os.path.basename(element.get("file")))[0]] = element
        self.result = Imported()
        self.joint_of_name = {}

    # ---------------------------------------------------------------- attributes
    def attributes(self, element, childclass):
        """*element*'s attributes over those of its class (its own ``class``, else the
        enclosing ``childclass``, else "main")."""
        name = element.get("class") or childclass or "main"
        if name not in self.classes:
            raise FormatError(f"{CALL}: <{element.tag}> uses class {name!r}, which no "
                              "<default> defines")
        attrs = dict(self.classes[name].get(element.tag, {}))
        attrs.update(element.attrib)
        return attrs

    def orientation(self, attrs, where):
        """The quaternion (xyzw) of MJCF's ``quat`` (wxyz), ``axisangle``, ``euler``,
        ``xyaxes`` or ``zaxis``."""
        element = _Attrs(where, attrs)
        if "quat" in attrs:
            w, x, y, z = numbers(CALL, element, "quat", 4)
            q = np.array([x, y, z, w])
            norm = np.linalg.norm(q)
            if norm < 1e-12:
                raise FormatError(f"{CALL}: <{where}> quat={attrs['quat']!r} is zero")
            return q / norm
        if "axisangle" in attrs:
            values = numbers(CALL, element, "axisangle", 4)
            return quat_axis_angle(values[:3], values[3] * self.compiler.angle_scale)
        if "euler" in attrs:
            angles = numbers(CALL, element, "euler", 3) * self.compiler.angle_scale
            return quat_euler(angles, self.compiler.euler_sequence)
        if "xyaxes" in attrs:
            values = numbers(CALL, element, "xyaxes", 6)
            x = values[:3] / max(np.linalg.norm(values[:3]), 1e-300)
            y = values[3:] - (values[3:] @ x) * x
            if np.linalg.norm(values[:3]) < 1e-12 or np.linalg.norm(y) < 1e-12:
                raise FormatError(f"{CALL}: <{where}> xyaxes={attrs['xyaxes']!r} are not two "
                                  "independent directions")
            y /= np.linalg.norm(y)
            return quat_matrix(np.column_stack([x, y, np.cross(x, y)]))
        if "zaxis" in attrs:
            z = numbers(CALL, element, "zaxis", 3)
            if np.linalg.norm(z) < 1e-12:
                raise FormatError(f"{CALL}: <{where}> zaxis={attrs['zaxis']!r} is zero")
            return quat_between([0.0, 0.0, 1.0], z)
        return np.array([0.0, 0.0, 0.0, 1.0])

    def local_xform(self, attrs, where):
        pos = numbers(CALL, _Attrs(where, attrs), "pos", 3, (0.0, 0.0, 0.0))
        return np.concatenate([pos, self.orientation(attrs, where)])

    # --------------------------------------------------------------------- bodies
    def read_world(self, worldbody):
        self.read_children(worldbody, -1, self.root_xform, None, static=True)

    def read_children(self, element, body, world, childclass, static):
        for child in element:
            if child.tag == "body":
                self.read_body(child, body, world, childclass)
            elif child.tag == "frame":
                cls = child.get("childclass", childclass)
                frame = compose(world, self.local_xform(self.attributes(child, cls), "frame"))
                self.read_children(child, body, frame, cls, static)  # (static geoms too)
            elif child.tag == "geom" and static:
                self.add_geom(child, -1, world, childclass, with_mass=False)

    def ignored(self, element):
        """Whether *element* (a body with its subtree, or a geom) is left out by name."""
        name = element.get("name")
        return name is not None and any(p.fullmatch(name) for p in self.ignore)

    def read_body(self, element, parent, parent_world, childclass):
        if self.ignored(element):
            self.ignored_joints.update(j.get("name") for j in element.iter()
                                       if j.tag in ("joint", "freejoint"))
            return
        childclass = element.get("childclass", childclass)
        name = element.get("name") or f"body{len(self.result.bodies)}"
        local = self.local_xform(dict(element.attrib), f"body {name!r}")
        world = compose(parent_world, local)
        inertial = element.find("inertial")
        use_geoms = self.compiler.inertia_from_geom == "true" or (
            self.compiler.inertia_from_geom == "auto" and inertial is None)
        mass, com, inertia = 0.0, None, None
        if inertial is not None and self.compiler.inertia_from_geom != "true":
            mass, com, inertia = self.inertial(inertial, name)
        jointless = not any(j.tag in ("joint", "freejoint") for j in element)
        if jointless and parent >= 0 and self.collapse_fixed_joints:
            # MuJoCo welds a body without joints to its parent: one body, its parts never
            # collide with each other (the ant's leg roots)
            body, offset = parent, merge_into(self.builder, parent, world, mass, com, inertia)
        else:
            body, offset = self.builder.add_body(xform=(world[:3], world[3:]), mass=mass,
                                                 com=com, inertia=inertia, label=name), IDENTITY
            self.add_joint(element, body, parent, world, childclass, name)
        self.result.bodies[name] = body
        for geom in element.findall("geom"):
            self.add_geom(geom, body, offset, childclass, with_mass=use_geoms)
        for frame in element.findall("frame"):
            self.frame_geoms(frame, body, offset, childclass, use_geoms)
        self.read_children(element, body, world, childclass, static=False)

    def frame_geoms(self, frame, body, offset, childclass, use_geoms):
        cls = frame.get("childclass", childclass)
        offset = compose(offset, self.local_xform(self.attributes(frame, cls), "frame"))
        for geom in frame.findall("geom"):
            self.add_geom(geom, body, offset, cls, with_mass=use_geoms)
        for inner in frame.findall("frame"):
            self.frame_geoms(inner, body, offset, cls, use_geoms)

    def inertial(self, element, body_name):
        where = f"<inertial> of body {body_name!r}"
        attrs = dict(element.attrib)
        mass = number(CALL, element, "mass", None)
        if mass is None:
            raise FormatError(f"{CALL}: {where} has no mass")
        q = self.orientation(attrs, f"inertial of body {body_name!r}")
        if "diaginertia" in attrs:
            inertia = np.diag(numbers(CALL, element, "diaginertia", 3))
        elif "fullinertia" in attrs:
            xx, yy, zz, xy, xz, yz = numbers(CALL, element, "fullinertia", 6)
            inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        else:
            inertia = np.zeros((3, 3))
        com = numbers(CALL, element, "pos", 3, (0.0, 0.0, 0.0))
        return mass, com, rotated_inertia(CALL, where, mass, inertia, q)

    # ---------------------------------------------------------------------- geoms
    def add_geom(self, element, body, offset, childclass, with_mass):
        """A shape of *body* (-1: static) from a ``<geom>``; *offset* places the geom's frame
        (a static geom's: the world placement; a body geom's: an enclosing frame)."""
        if self.ignored(element):
            return
        attrs = self.attributes(element, childclass)
        kind = attrs.get("type", "sphere")
        where = f"geom {element.get('name') or kind!r}"
        if kind not in GEOM_TYPES:
            raise FormatError(f"{CALL}: <{where}> has type {kind!r}; supported: "
                              f"{', '.join(GEOM_TYPES)}")
        geo = GEOM_TYPES[kind]
        a = _Attrs(where, attrs)
        size = numbers(CALL, a, "size", None, (0.0, 0.0, 0.0))
        size = np.concatenate([size, np.zeros(3)])[:3]
        xform = self.local_xform(attrs, where)
        if "fromto" in attrs:
            if kind not in ("capsule", "cylinder", "box", "ellipsoid"):
                raise FormatError(f"{CALL}: <{where}> fromto is for capsules, cylinders, boxes "
                                  f"and ellipsoids, not {kind}s")
            ends = numbers(CALL, a, "fromto", 6)
            direction = ends[3:] - ends[:3]
            length = np.linalg.norm(direction)
            if length < 1e-12:
                raise FormatError(f"{CALL}: <{where}> fromto has equal ends")
            xform = np.concatenate([0.5 * (ends[:3] + ends[3:]),
                                    quat_between([0.0, 0.0, 1.0], direction)])
            size[1 if kind != "box" else 2] = 0.5 * length
            if kind == "box":
                size[1] = size[0]
        if offset is not None:
            xform = compose(offset, xform)
        cfg = self.geom_config(a, attrs, geo, size, kind, where, with_mass)
        if geo == GeoType.MESH:
            shape = self.builder.add_shape_mesh(body, xform=(xform[:3], xform[3:]),
                                                mesh=self.mesh(attrs, where), cfg=cfg)
        elif geo == GeoType.PLANE:
            if body != -1:
                raise FormatError(f"{CALL}: <{where}> is a plane inside a body; MJCF planes are "
                                  "static (in <worldbody>)")
            shape = self.builder.add_shape_plane(-1, xform=(xform[:3], xform[3:]),
                                                 width=2.0 * size[0], length=2.0 * size[1],
                                                 cfg=cfg)
        else:
            shape = self.add_primitive(geo, kind, size, body, xform, cfg, where, attrs)
        self.result.shapes.append(shape)

    def geom_config(self, a, attrs, geo, size, kind, where, with_mass):
        friction = numbers(CALL, a, "friction", None, (self.cfg.mu,))
        collides = int(number(CALL, a, "contype", 1)) != 0 or \
            int(number(CALL, a, "conaffinity", 1)) != 0
        density = 0.0
        if with_mass:
            density = number(CALL, a, "density", self.density)
            if "mass" in attrs:
                mass = number(CALL, a, "mass", 0.0)
                volume = self.geom_volume(geo, kind, size, attrs, where)
                density = mass / volume if volume > 0.0 else 0.0
            elif kind == "ellipsoid":  # its sphere weighs what the ellipsoid does
                radius = max(size)
                density *= float(size[0] * size[1] * size[2]) / radius ** 3 if radius > 0 else 0.0
            if density < 0.0:
                raise FormatError(f"{CALL}: <{where}> has a negative density ({density})")
        return material(self.cfg, density, float(friction[0]), collides)

    def geom_volume(self, geo, kind, size, attrs, where):
        if geo == GeoType.MESH:
            return self.mesh(attrs, where).volume
        if geo == GeoType.PLANE:
            return 0.0
        return solid_mass_properties(geo, self.primitive_scale(geo, kind, size), 1.0)[0]

    @staticmethod
    def primitive_scale(geo, kind, size):
        if kind == "ellipsoid":
            return (float(max(size)), 0.0, 0.0)
        if geo == GeoType.SPHERE:
            return (size[0], 0.0, 0.0)
        if geo == GeoType.BOX:
            return tuple(size)
        return (size[0], size[1], 0.0)  # capsule and cylinder: radius, half-length

    def add_primitive(self, geo, kind, size, body, xform, cfg, where, attrs):
        scale = self.primitive_scale(geo, kind, size)
        needed = {GeoType.SPHERE: 1, GeoType.BOX: 3, GeoType.CAPSULE: 1,
                  GeoType.CYLINDER: 2}[geo]
        if min(scale[:needed]) <= 0.0:
            raise FormatError(f"{CALL}: <{where}> needs a positive size, got "
                              f"{attrs.get('size')!r}")
        placed = (xform[:3], xform[3:])
        if geo == GeoType.SPHERE:
            return self.builder.add_shape_sphere(body, placed, radius=scale[0], cfg=cfg)
        if geo == GeoType.BOX:
            return self.builder.add_shape_box(body, placed, *scale, cfg=cfg)
        add = (self.builder.add_shape_capsule if geo == GeoType.CAPSULE
               else self.builder.add_shape_cylinder)
        return add(body, placed, radius=scale[0], half_height=scale[1], axis=2, cfg=cfg)

    def mesh(self, attrs, where):
        """The ``physics.Mesh`` of a mesh geom (each file read once)."""
        name = attrs.get("mesh")
        if name not in self.meshes:
            raise FormatError(f"{CALL}: <{where}> names mesh {name!r}, which no <asset><mesh> "
                              "with a file defines")
        element = self.meshes[name]
        mesh_attrs = self.attributes(element, None)
        scale = numbers(CALL, _Attrs(f"mesh {name!r}", mesh_attrs), "scale", 3, (1.0, 1.0, 1.0))
        key = (name, tuple(scale))
        if key not in self.loaded_meshes:
            path = resolve_asset(CALL, self.compiler.mesh_dir, element.get("file"))
            self.loaded_meshes[key] = mesh_file(CALL, path, scale)
        return self.loaded_meshes[key]

    # --------------------------------------------------------------------- joints
    def add_joint(self, element, body, parent, world, childclass, name):
        joints = [j for j in element if j.tag in ("joint", "freejoint")]
        kinds = []
        for j in joints:
            attrs = self.attributes(j, childclass) if j.tag == "joint" else dict(j.attrib)
            kinds.append(("free" if j.tag == "freejoint" else attrs.get("type", "hinge"), j, attrs))
        # the child's frame in the parent body's (a <frame> may stand between them)
        parent_body = IDENTITY if parent < 0 else np.asarray(self.builder.body_q[parent])
        parent_frame = compose(inverse(parent_body), world)
        builder = self.builder
        label = joints[0].get("name") if joints else None
        if parent < 0 and self.floating is not None and (
                not kinds or kinds[0][0] == "free"):
            # the caller's choice for a root body: free or welded to the world
            if self.floating:
                kinds = [("free", None, {})]
            else:
                kinds = []
        if not kinds:
            j = builder.add_joint_fixed(parent, body, parent_xform=(parent_frame[:3],
                                                                    parent_frame[3:]),
                                        label=label or f"{name}_fixed")
            self.record_joint(label or f"{name}_fixed", j)
            return
        if any(k == "free" for k, _, _ in kinds):
            if len(kinds) > 1:
                raise FormatError(f"{CALL}: body {name!r} has a free joint and other joints")
            if parent >= 0:
                raise FormatError(f"{CALL}: body {name!r} has a free joint but is not a child "
                                  "of <worldbody>")
            j = builder.add_joint_free(body, label=label or f"{name}_free")
            self.record_joint(label or f"{name}_free", j)
            return
        anchor = numbers(CALL, _Attrs(f"joint of body {name!r}", kinds[0][2]), "pos", 3,
                         (0.0, 0.0, 0.0))
        joint_frame = np.concatenate([anchor, [0.0, 0.0, 0.0, 1.0]])
        parent_xform = compose(parent_frame, joint_frame)
        xforms = dict(parent_xform=(parent_xform[:3], parent_xform[3:]),
                      child_xform=(anchor, None))
        settings = [self.joint_settings(kind, j, attrs, name) for kind, j, attrs in kinds]
        armature = max(s.pop("armature") for s in settings)
        names = [s.pop("name") for s in settings]
        if len(kinds) == 1 and kinds[0][0] == "ball":
            j = builder.add_joint_ball(parent, body, **xforms, armature=armature, label=names[0])
        elif len(kinds) == 1:
            kind = settings[0].pop("kind")
            add = builder.add_joint_revolute if kind == "hinge" else builder.add_joint_prismatic
            j = add(parent, body, **xforms, armature=armature, label=names[0], **settings[0])
        else:
            if any(k == "ball" for k, _, _ in kinds):
                raise FormatError(f"{CALL}: body {name!r} combines a ball joint with others")
            slides = [s.pop("kind") == "slide" for s in settings]
            linear = [s for s, slide in zip(settings, slides) if slide]
            angular = [s for s, slide in zip(settings, slides) if not slide]
            order = [n for n, slide in zip(names, slides) if slide] + \
                [n for n, slide in zip(names, slides) if not slide]
            try:
                j = builder.add_joint_d6(parent, body, linear_axes=linear, angular_axes=angular,
                                         **xforms, armature=armature, label=names[0])
            except ValueError as e:
                raise FormatError(f"{CALL}: the joints of body {name!r} ({', '.join(order)}) "
                                  f"make no D6 joint: {e}") from None
            names = order
        for k, joint_name in enumerate(names):
            self.record_joint(joint_name, j, k)

    def joint_settings(self, kind, element, attrs, body_name):
        where = f"joint {attrs.get('name') or body_name!r}"
        if kind not in ("hinge", "slide", "ball"):
            raise FormatError(f"{CALL}: <{where}> has type {kind!r}; expected hinge, slide, "
                              "ball or free")
        a = _Attrs(where, attrs)
        angular = kind in ("hinge", "ball")
        unit = self.compiler.angle_scale if angular else 1.0
        limited = attrs.get("limited", "auto")
        if limited not in ("true", "false", "auto"):
            raise FormatError(f"{CALL}: <{where}> limited={limited!r}; expected true, false or "
                              "auto")
        has_range = "range" in attrs
        if limited == "auto":
            limited = "true" if (self.compiler.auto_limits and has_range) else "false"
        lower, upper = -math.inf, math.inf
        if limited == "true":
            if not has_range:
                raise FormatError(f"{CALL}: <{where}> is limited but has no range")
            lower, upper = numbers(CALL, a, "range", 2) * unit
            if lower > upper:
                raise FormatError(f"{CALL}: <{where}> range={attrs['range']!r} is reversed")
        settings = {"kind": kind, "name": attrs.get("name") or f"{body_name}_{kind}",
                    "armature": number(CALL, a, "armature", 0.0)}
        if kind == "ball":
            return settings
        axis = numbers(CALL, a, "axis", 3, (0.0, 0.0, 1.0))
        settings.update(axis=axis, limit_lower=lower, limit_upper=upper,
                        target_q=number(CALL, a, "springref", 0.0) * unit,
                        target_ke=number(CALL, a, "stiffness", 0.0),
                        target_kd=number(CALL, a, "damping", 0.0))
        return settings

    def record_joint(self, name, joint, dof_offset=0):
        self.result.joints[name] = joint
        self.joint_of_name[name] = (joint, self.builder.joint_qd_start[joint] + dof_offset)

    # ------------------------------------------------------------------ actuators
    def read_actuators(self, root):
        for section in root.findall("actuator"):
            for element in section:
                if element.tag not in ACTUATOR_TAGS:
                    continue
                self.add_actuator(element)

    def add_actuator(self, element):
        attrs = self.attributes(element, None)
        where = f"{element.tag} {attrs.get('name') or attrs.get('joint')!r}"
        a = _Attrs(where, attrs)
        target = attrs.get("joint")
        if target is None:
            raise FormatError(f"{CALL}: <{where}> acts on no joint (tendon and site actuators "
                              "are not read)")
        if target in self.ignored_joints:
            return
        if target not in self.joint_of_name:
            raise FormatError(f"{CALL}: <{where}> names joint {target!r}, which this file does "
                              "not define")
        joint, dof = self.joint_of_name[target]
        gear = float(numbers(CALL, a, "gear", None, (1.0,))[0])
        ctrl = numbers(CALL, a, "ctrlrange", 2, (-math.inf, math.inf))
        if attrs.get("ctrllimited", "auto") == "false":
            ctrl = np.array([-math.inf, math.inf])
        builder = self.builder
        tag = element.tag
        if tag == "general":
            bias = numbers(CALL, a, "biasprm", None, (0.0, 0.0, 0.0))
            tag = "position" if bias.size > 1 and bias[1] < 0.0 else "motor"
            kp = float(-bias[1]) if tag == "position" else 0.0
        else:
            kp = number(CALL, a, "kp", 1.0)
        if tag == "position":
            builder.joint_target_ke[dof] = kp
            if "kv" in attrs:
                builder.joint_target_kd[dof] = number(CALL, a, "kv", 0.0)
            kind = "position"
        elif tag == "velocity":
            builder.joint_target_kd[dof] = number(CALL, a, "kv", 1.0)
            kind = "velocity"
        else:
            kind = "force"
        self.result.actuators.append(Actuator(attrs.get("name") or target, joint, dof, kind,
                                              gear, (float(ctrl[0]), float(ctrl[1]))))


class _Attrs:
    """An attribute dict that reads like an element (for ``numbers``'s messages)."""

    def __init__(self, tag, attrs):
        self.tag, self.attrib = tag, attrs

    def get(self, key, default=None):
        return self.attrib.get(key, default)


def add_mjcf(builder, source, xform=None, floating=None, cfg=None, up_axis="z",
             density=1000.0, collapse_fixed_joints=True, ignore_names=()):
    """Add the MJCF model *source* (a file path or the XML text) to *builder*, placed by
    *xform* after rotating the file's *up_axis* onto the builder's; *floating* True gives
    root bodies a free joint, False welds them to the world, None (default) does what the
    file says.  *cfg* is the contact material of every geom (its ``mu`` is replaced by
    each geom's ``friction``); *density* is the geoms' default.  A body without joints
    inside another is welded to it as MuJoCo does: with *collapse_fixed_joints* (default)
    it merges into its parent (one body, named by both), else it is a body of its own on a
    FIXED joint.  *ignore_names* (names or regular expressions, matched whole) leaves out
    the bodies (with everything below them) and geoms they name: ``xform`` moves the whole
    file, its floor too, so a robot lifted above its own floor drops it with
    ``ignore_names=["floor"]`` (as newton's examples do); actuators of left-out joints are
    left out too.  Returns the names, indices and actuators added (``physics.Imported``)."""
    root, directory, name = read_xml(CALL, source, "mujoco")
    _expand_includes(root, directory)
    if cfg is not None and not isinstance(cfg, ShapeConfig):
        raise ValueError(f"{CALL}: cfg must be a physics.ShapeConfig, got {cfg!r}")
    if floating is not None and not isinstance(floating, bool):
        raise ValueError(f"{CALL}: floating must be True, False or None, got {floating!r}")
    density = checks.nonnegative(CALL, "density", density)
    reader = _Reader(builder, root, directory, name, xform, floating, cfg, up_axis, density,
                     bool(collapse_fixed_joints), name_patterns(CALL, ignore_names))
    worldbodies = root.findall("worldbody")  # an <include> may bring more than one
    if not worldbodies:
        raise FormatError(f"{CALL}: {name} has no <worldbody>")
    for worldbody in worldbodies:
        reader.read_world(worldbody)
    reader.read_actuators(root)
    return reader.result

