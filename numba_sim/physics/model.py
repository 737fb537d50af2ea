"""``Model``, ``State``, ``Control`` and ``Contacts``: the arrays of a finalized
world (NumPy on the CPU, CuPy on CUDA; trailing storage dims, so
``state.particle_q.shape == (n, 3)``), and ``model.collide``."""

import numpy as np

import numba_sim as sim
from numba_sim.arrays import cupy_module, parse_device
from numba_sim.physics import collide as collide_kernels
from numba_sim.physics import differentiable
from numba_sim.physics import rigid_contacts
from numba_sim.physics.builder_rigid import rigid_model_arrays
from numba_sim.physics.mesh import mesh_model_arrays


def _array_module(target):
    return np if target == "cpu" else cupy_module()


def _is_float_array(value, xp):
    return isinstance(value, xp.ndarray) and value.dtype.kind == "f"


class State:
    """The time-varying part of a model: positions, velocities and forces.

    ``particle_f`` holds external forces: a solver step applies them and does not
    change them (``clear_forces()`` zeroes them).
    """

    def __init__(self, model, requires_grad=False):
        xp = model._xp
        self.particle_count = model.particle_count
        self.body_count = model.body_count
        self.particle_q = xp.array(model.particle_q, copy=True)
        self.particle_qd = xp.array(model.particle_qd, copy=True)
        self.particle_f = xp.zeros_like(model.particle_q)
        self.body_q = xp.array(model.body_q, copy=True)
        self.body_qd = xp.array(model.body_qd, copy=True)
        self.body_f = xp.zeros((model.body_count, 6), dtype=np.float32)
        self.joint_q = xp.array(model.joint_q, copy=True)
        self.joint_qd = xp.array(model.joint_qd, copy=True)
        self.requires_grad = bool(requires_grad)
        if requires_grad:
            for name in self._ARRAYS:
                sim.requires_grad(getattr(self, name))

    _ARRAYS = ("particle_q", "particle_qd", "particle_f", "body_q", "body_qd", "body_f",
               "joint_q", "joint_qd")

    def clear_forces(self):
        self.particle_f[...] = 0.0
        self.body_f[...] = 0.0

    def assign(self, other):
        """Copy every array of *other* (a State of the same model) into this one."""
        if not isinstance(other, State):
            raise ValueError(f"State.assign: other must be a State, got {other!r}")
        for name in self._ARRAYS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine.shape != theirs.shape:
                raise ValueError(f"State.assign: {name} has shape {theirs.shape}, expected "
                                 f"{mine.shape} (a State of another model?)")
            mine[...] = theirs


class Control:
    """Actuation: joint targets and forces, triangle and tetrahedron activations."""

    def __init__(self, model, requires_grad=False):
        xp = model._xp
        self.joint_target_q = xp.array(model.joint_target_q, copy=True)
        self.joint_target_qd = xp.zeros(model.joint_dof_count, dtype=np.float32)
        self.joint_f = xp.zeros(model.joint_dof_count, dtype=np.float32)
        self.tri_activations = xp.array(model.tri_activations, copy=True)
        self.tet_activations = xp.array(model.tet_activations, copy=True)
        self.requires_grad = bool(requires_grad)
        if requires_grad:
            for value in vars(self).values():
                if _is_float_array(value, xp):
                    sim.requires_grad(value)


class Contacts:
    """Particle-shape contacts found by ``model.collide`` (warp.sim's ``soft_contact_*``
    names): ``soft_contact_count[0]`` of them, each a particle, a shape, the closest
    point on the shape in its body's frame (static shapes: world) and the world normal;
    and rigid contacts of body shapes against planes and each other (``rigid_contact_*``,
    rigid_contacts.py)."""

    def __init__(self, model, soft_contact_max=None, rigid_contact_max=None):
        xp = model._xp
        self.model = model
        if soft_contact_max is None:
            soft_contact_max = model.particle_count * model._particle_shape_count
        self.soft_contact_max = int(soft_contact_max)
        m = max(self.soft_contact_max, 1)
        self.soft_contact_count = xp.zeros(1, dtype=np.int32)
        self.soft_contact_particle = xp.zeros(m, dtype=np.int32)
        self.soft_contact_shape = xp.zeros(m, dtype=np.int32)
        self.soft_contact_body_pos = xp.zeros((m, 3), dtype=np.float32)
        self.soft_contact_body_vel = xp.zeros((m, 3), dtype=np.float32)
        self.soft_contact_normal = xp.zeros((m, 3), dtype=np.float32)
        rigid_contacts.init_rigid_contacts(self, model, rigid_contact_max)


class Model:
    """A finalized world (made by ``ModelBuilder.finalize``).

    Its parameters may be changed after finalize (``model.soft_contact_ke = 1e4``): every
    assignment bumps ``_version``, which solvers check before a step.
    """

    _version = 0

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        object.__setattr__(self, "_version", self._version + 1)

    def __init__(self, builder, device="cpu", requires_grad=False):
        try:
            target, _ = parse_device(device)
        except (TypeError, ValueError) as error:
            raise ValueError(f"finalize: device must be 'cpu', 'cuda' or 'cuda:N', got "
                             f"{device!r}") from error
        self.device = device
        self._xp = xp = _array_module(target)
        f32, i32 = np.float32, np.int32

        def put(values, dtype, shape_tail=()):
            host = np.asarray(values, dtype=dtype)
            if host.size == 0:
                host = np.zeros((0, *shape_tail), dtype=dtype)
            host = np.ascontiguousarray(host.reshape((-1, *shape_tail)) if shape_tail else host)
            return host if xp is np else xp.asarray(host)

        self.up_axis = builder.up_axis
        self.gravity = np.asarray(builder.gravity, dtype=f32)
        self.num_worlds = builder.num_worlds
        # particles
        self.particle_count = builder.particle_count
        self.particle_q = put(builder.particle_q, f32, (3,))
        self.particle_qd = put(builder.particle_qd, f32, (3,))
        mass = np.asarray(builder.particle_mass, dtype=np.float64)
        self.particle_mass = put(mass, f32)
        self.particle_inv_mass = put(np.where(mass > 0.0, 1.0 / np.where(mass > 0.0, mass, 1.0),
                                              0.0), f32)
        self.particle_radius = put(builder.particle_radius, f32)
        self.particle_flags = put(builder.particle_flags, np.uint32)
        self.particle_world = put(builder.particle_world, i32)
        self.particle_max_radius = float(max(builder.particle_radius, default=0.0))
        for name in ("particle_ke", "particle_kd", "particle_kf", "particle_mu",
                     "particle_cohesion", "particle_max_velocity", "soft_contact_ke",
                     "soft_contact_kd", "soft_contact_kf", "soft_contact_mu",
                     "soft_contact_margin", "rigid_contact_margin", "joint_attach_ke",
                     "joint_attach_kd"):
            setattr(self, name, float(getattr(builder, name)))
        self.particle_collision = bool(builder.particle_collision)
        self.rigid_broad_phase = "auto"   # "bvh" | "pairs" (rigid_contacts.uses_bvh)
        # springs
        self.spring_count = builder.spring_count
        self.spring_indices = put(builder.spring_indices, i32, (2,)).reshape(-1)
        self.spring_rest_length = put(builder.spring_rest_length, f32)
        self.spring_stiffness = put(builder.spring_stiffness, f32)
        self.spring_damping = put(builder.spring_damping, f32)
        self.spring_control = put(builder.spring_control, f32)
        # triangles
        self.tri_count = builder.tri_count
        self.tri_indices = put(builder.tri_indices, i32, (3,))
        self.tri_poses = put(builder.tri_poses, f32, (2, 2))
        self.tri_activations = put(builder.tri_activations, f32)
        self.tri_materials = put(builder.tri_materials, f32, (5,))
        self.tri_areas = put(builder.tri_areas, f32)
        # bending edges
        self.edge_count = builder.edge_count
        self.edge_indices = put(builder.edge_indices, i32, (4,))
        self.edge_rest_angle = put(builder.edge_rest_angle, f32)
        self.edge_rest_length = put(builder.edge_rest_length, f32)
        self.edge_bending_properties = put(builder.edge_bending_properties, f32, (2,))
        # tetrahedra
        self.tet_count = builder.tet_count
        self.tet_indices = put(builder.tet_indices, i32, (4,))
        self.tet_poses = put(builder.tet_poses, f32, (3, 3))
        self.tet_activations = put(builder.tet_activations, f32)
        self.tet_materials = put(builder.tet_materials, f32, (3,))
        self.tet_volumes = put(builder.tet_volumes, f32)
        # shapes
        self.shape_count = builder.shape_count
        self.shape_type = put(builder.shape_type, i32)
        self.shape_body = put(builder.shape_body, i32)
        self.shape_transform = put(builder.shape_transform, f32, (7,))
        self.shape_scale = put(builder.shape_scale, f32, (3,))
        for name in ("shape_material_ke", "shape_material_kd", "shape_material_kf",
                     "shape_material_mu", "shape_material_restitution", "shape_thickness"):
            setattr(self, name, put(getattr(builder, name), f32))
        self.shape_collision_group = put(builder.shape_collision_group, i32)
        self.shape_world = put(builder.shape_world, i32)
        # each world's span of shape indices (world-major; global shapes may sit inside a
        # span) and the global shapes (world -1): the candidates of a shape's contacts
        worlds = np.asarray(builder.shape_world, dtype=np.int64)
        mine = np.flatnonzero(worlds >= 0)             # sorted by world (world-major)
        wanted = np.arange(builder.num_worlds)
        lo = np.searchsorted(worlds[mine], wanted, "left")
        hi = np.searchsorted(worlds[mine], wanted, "right")
        last = max(len(mine) - 1, 0)
        has = lo < hi
        first_index = mine[np.minimum(lo, last)] if len(mine) else lo
        last_index = mine[np.clip(hi - 1, 0, last)] if len(mine) else lo
        self.shape_world_start = put(np.where(has, first_index, 0), i32)
        self.shape_world_end = put(np.where(has, last_index + 1, 0), i32)
        self.shape_global = put(np.flatnonzero(worlds < 0), i32)
        self.shape_particle_collision = put(builder.shape_particle_collision, i32)
        self._particle_shape_count = int(sum(builder.shape_particle_collision))
        mesh_model_arrays(self, builder, put)
        # rigid bodies and joints (builder_rigid.py)
        rigid_model_arrays(self, builder, put)
        # warp.sim's finalize(requires_grad=True): a gradient beside every float array
        # (sim.grad(model.spring_stiffness)); gravity is a host vector, read as a sim.vec3
        self.requires_grad = bool(requires_grad)
        if requires_grad:
            for name, value in vars(self).items():
                if name != "gravity" and _is_float_array(value, xp):
                    sim.requires_grad(value)

    # ------------------------------------------------------------------------
    def state(self, requires_grad=None):
        """A State with the model's initial values; its float arrays get gradients when
        *requires_grad* is true (None: as ``finalize(requires_grad=...)``)."""
        return State(self, self.requires_grad if requires_grad is None else requires_grad)

    def control(self, requires_grad=None):
        """A Control with the model's targets and activations; gradients as ``state``."""
        return Control(self, self.requires_grad if requires_grad is None else requires_grad)

    def contacts(self, soft_contact_max=None, rigid_contact_max=None):
        """Preallocated contacts (room for every particle against every particle shape,
        every body shape's contact points against every plane)."""
        return Contacts(self, soft_contact_max, rigid_contact_max)

    def world_view(self, array):
        """A world-major per-entity array as ``(num_worlds, per_world, ...)``, no copy."""
        n = array.shape[0]
        if n % self.num_worlds:
            raise ValueError(f"world_view: {n} entries do not split into {self.num_worlds} "
                             "equal worlds")
        return array.reshape((self.num_worlds, n // self.num_worlds, *array.shape[1:]))

    def collide(self, state, contacts=None):
        """Particle-shape contacts of *state* within ``soft_contact_margin``."""
        if not isinstance(state, State):
            raise ValueError(f"collide: state must be a physics State, got {state!r}")
        if contacts is None:
            contacts = self.contacts()
        elif not isinstance(contacts, Contacts):
            raise ValueError(f"collide: contacts must be physics Contacts, got {contacts!r}")
        elif contacts.model is not self:
            raise ValueError("collide: contacts were made by another model (model.contacts())")
        if state.particle_q.shape != (self.particle_count, 3):
            raise ValueError(f"collide: state has {state.particle_q.shape[0]} particles, the "
                             f"model {self.particle_count} (a State of another model?)")
        if differentiable.taping():
            # recorded steps read the contacts as constants (closest point, normal; the
            # solver recomputes the depth from the positions it is given, so gradients flow
            # through it): their slots come from an atomic counter, which an adjoint cannot
            # replay.  Under a tape each collide writes a fresh Contacts.
            differentiable.claim("collide", "contacts", contacts, (state,))
            with differentiable.paused():
                return self._collide(state, contacts)
        return self._collide(state, contacts)

    def _collide(self, state, contacts):
        contacts.soft_contact_count[...] = 0
        if self.particle_count and self._particle_shape_count and contacts.soft_contact_max:
            sim.launch(collide_kernels.particle_shape_contacts_kernel, dim=self.particle_count,
                       inputs=[state.particle_q, self.particle_radius, self.particle_flags,
                               self.particle_world, self.shape_count, self.shape_type,
                               self.shape_transform, self.shape_scale, self.shape_thickness,
                               self.shape_world, self.shape_particle_collision,
                               self.shape_source_ptr, self.soft_contact_margin, contacts.soft_contact_max,
                               contacts.soft_contact_count, contacts.soft_contact_particle,
                               contacts.soft_contact_shape, contacts.soft_contact_body_pos,
                               contacts.soft_contact_normal])
            count = int(contacts.soft_contact_count[0])
            if count > contacts.soft_contact_max:
                contacts.soft_contact_count[0] = contacts.soft_contact_max
        rigid_contacts.collide_rigid(self, state, contacts)
        return contacts

    def __repr__(self):
        return (f"Model(particles={self.particle_count}, springs={self.spring_count}, "
                f"triangles={self.tri_count}, edges={self.edge_count}, "
                f"tetrahedra={self.tet_count}, shapes={self.shape_count}, "
                f"bodies={self.body_count}, joints={self.joint_count}, "
                f"worlds={self.num_worlds}, device={self.device!r})")
