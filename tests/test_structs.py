"""@sim.struct: Python, compiled CPU code, kernels, arrays of structs, CUDA."""

import numba
import numpy as np
import pytest
from numba.core import types

import numba_sim as sim


@sim.struct
class Particle:
    pos: sim.vec3
    vel: sim.vec3
    mass: float
    alive: bool


@sim.struct
class Body:
    frame: sim.transformd
    inertia: sim.mat33
    ids: sim.vec3i
    count: sim.int64
    particle: Particle


@sim.struct
class World:
    gravity: sim.vec3
    points: sim.array(dtype=sim.vec3)
    weights: sim.array(dtype=float)
    damping: sim.float64


def test_python_construction_defaults_and_conversion():
    p = Particle(pos=(1, 2, 3), mass=2)
    assert p.pos == sim.vec3(1, 2, 3) and p.vel == sim.vec3() and p.alive == np.False_
    assert type(p.mass) is np.float32 and p.mass == 2
    p.vel = sim.vec3(0, 1, 0)
    assert p.vel.y == 1
    assert Particle(sim.vec3(1, 2, 3)).pos.z == 3  # positional, in field order
    with pytest.raises(TypeError, match="Particle.mass: expected float"):
        Particle(mass="heavy")
    with pytest.raises(AttributeError, match="no field 'colour'"):
        p.colour = 1
    with pytest.raises(TypeError, match="unexpected or repeated field 'colour'"):
        Particle(colour=1)
    assert "Particle(pos=vec3(1.0, 2.0, 3.0)" in repr(p)


def test_numpy_dtype_has_warps_c_layout():
    dtype = Particle.numpy_dtype
    assert dtype.names == ("pos", "vel", "mass", "alive")
    assert [dtype.fields[n][1] for n in dtype.names] == [0, 12, 24, 28] and dtype.itemsize == 32
    body = Body.numpy_dtype
    assert body.fields["frame"][0].shape == (7,) and body.fields["frame"][0].base == np.float64
    assert body.fields["inertia"][0].shape == (3, 3)
    assert body.fields["particle"][0] == Particle.numpy_dtype
    assert body.isalignedstruct and body.itemsize % 8 == 0
    record = Particle(pos=(1, 2, 3), mass=5).to_numpy()
    assert record["pos"].tolist() == [1, 2, 3] and record["mass"] == 5
    with pytest.raises(TypeError, match="points.*array"):
        World.numpy_dtype


def test_unsupported_field_types_are_rejected_naming_the_field():
    with pytest.raises(TypeError, match="field 'name' has the unsupported type <class 'str'>"):
        @sim.struct
        class Bad:
            name: str
    with pytest.raises(RuntimeError, match="a struct cannot derive from Particle; Warp structs must "
                                           "be defined as base classes$"):
        @sim.struct
        class Child(Particle):
            extra: int


@sim.struct
class Empty:
    pass


@sim.struct
class EmptyNest:
    a: Empty
    z: int


@sim.kernel
def read_nested_empty(s: EmptyNest, out: sim.array(dtype=int)):
    out[sim.tid()] = s.z


def test_an_empty_struct_is_a_struct_with_no_fields_as_in_warp():
    assert Empty()._fields == () and repr(Empty()) == "Empty()"
    nest = EmptyNest()
    nest.z = 42
    out = np.zeros(1, np.int32)
    sim.launch(read_nested_empty, dim=1, inputs=[nest, out])
    assert out[0] == 42
    read_nested_empty.compile("cuda", [nest, out], cc=(7, 5))  # links


@numba.njit
def transform_particle(p, b):
    q = Particle(p.pos * 2.0, p.vel, p.mass + 1.0, True)
    frame_p = b.frame.p
    return q, q.pos.x + p.mass, Particle(), b.particle.pos + sim.vec3(frame_p[0], 0.0, 0.0), \
        b.inertia[1, 1] + b.count + b.ids[2]


def test_structs_in_plain_njit_code():
    p = Particle(pos=(1, 2, 3), vel=(0, 0, 1), mass=2.0)
    b = Body(frame=sim.transformd(5, 0, 0, 0, 0, 0, 1), inertia=sim.mat33(*range(9)), ids=(1, 2, 3),
             count=7, particle=p)
    q, x, zero, shifted, total = transform_particle(p, b)
    assert q == Particle(pos=(2, 4, 6), vel=(0, 0, 1), mass=3.0, alive=True)
    assert x == 4.0 and zero == Particle()
    assert shifted == sim.vec3(6, 2, 3) and total == 4 + 7 + 3
    python = transform_particle.py_func(p, b)
    assert python[0] == q and python[3] == shifted


@numba.njit
def world_total(w):
    s = 0.0
    for i in range(len(w.points)):
        s += sim.length(w.points[i] + w.gravity) * w.weights[i]
    w.points[0] = sim.vec3(7.0, 7.0, 7.0)
    return s, w


def test_struct_with_array_fields_is_zero_copy():
    points = np.arange(12, dtype=np.float32).reshape(4, 3)
    weights = np.ones(4, np.float32)
    w = World(gravity=(0, -1, 0), points=points, weights=weights, damping=0.5)
    expected = np.linalg.norm(points + [0, -1, 0], axis=1).sum()
    s, w2 = world_total(w)
    assert abs(s - expected) < 1e-4
    np.testing.assert_array_equal(points[0], [7, 7, 7])
    assert w2.points is points and w2.damping == 0.5
    with pytest.raises(ValueError, match=r"World.points.*ending in \(3,\)"):
        World(points=np.zeros((4, 2), np.float32))


@sim.kernel
def step(ps: sim.array(dtype=Particle), world: World, dt: float):
    i = sim.tid()
    p = ps[i]
    v = p.vel + world.gravity * dt
    ps[i] = Particle(p.pos + v * dt, v, p.mass * world.weights[i], p.alive)


def test_kernel_with_struct_arrays_and_struct_arguments():
    particles = np.zeros(5, dtype=Particle.numpy_dtype)
    particles["pos"][:, 1] = 10
    particles["mass"] = 2
    world = World(gravity=(0, -9.8, 0), points=np.zeros((5, 3), np.float32),
                  weights=np.arange(5, dtype=np.float32), damping=0.0)
    sim.launch(step, dim=5, inputs=[particles, world, 0.5])
    np.testing.assert_allclose(particles["vel"][:, 1], -4.9)
    np.testing.assert_allclose(particles["pos"][:, 1], 10 - 4.9 * 0.5)
    np.testing.assert_array_equal(particles["mass"], 2 * np.arange(5))
    with pytest.raises(TypeError, match="'ps'"):
        sim.launch(step, dim=5, inputs=[np.zeros(5, np.float32), world, 0.5])


def test_struct_kernels_compile_for_cuda_offline():
    particles = np.zeros(5, dtype=Particle.numpy_dtype)
    world = World(points=np.zeros((5, 3), np.float32), weights=np.zeros(5, np.float32))
    library = step.compile("cuda", [particles, world, 0.5], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


class FakeCudaArray:
    def __init__(self, shape, ptr=4096):
        self.shape, self.dtype, self.ndim = shape, np.dtype(np.float32), len(shape)
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (ptr, False),
                                         "version": 3, "strides": None}


def test_struct_cuda_arguments_flatten_like_the_data_model():
    from numba.core.datamodel import default_manager

    from numba_sim.typing.structs import struct_type_of

    world = World(gravity=(0, -9.8, 0), damping=0.25)
    object.__setattr__(world, "points", FakeCudaArray((5, 3)))
    object.__setattr__(world, "weights", FakeCudaArray((5,), ptr=8192))
    world_type = struct_type_of(World)
    ty, values = sim.cuda_args.prepare_args(world_type, world)
    flat = []

    def flatten(t, v):
        if isinstance(t, types.BaseTuple):
            for tt, vv in zip(t, v):
                flatten(tt, vv)
        else:
            flat.append(v)

    flatten(ty, values)
    model = default_manager.lookup(world_type)

    def count(arg):
        return sum(count(a) for a in arg) if isinstance(arg, tuple) else 1

    assert len(flat) == count(model.get_argument_type())
    # points: meminfo, parent, nitems, itemsize, data, shape, stride of a vec3 view
    assert flat[3:10] == [0, 0, 5, 12, 4096, 5, 12]
    assert flat[-1] == 0.25
