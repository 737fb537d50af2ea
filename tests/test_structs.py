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
    assert repr(p).startswith(f"Particle(pos={p.pos!r}, vel={p.vel!r}, mass=")


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
    points = World.numpy_dtype.fields["points"][0]  # Numba's array descriptor
    assert points.names == ("meminfo", "parent", "nitems", "itemsize", "data", "shape", "strides")
    assert points.itemsize == 7 * 8


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
    # an unset array field travels as a null array (as in CPU kernels), not an error
    object.__setattr__(world, "weights", None)
    ty, values = sim.cuda_args.prepare_args(world_type, world)
    assert values[2] == (0, 0, 0, 0, 0, 0, 0)


@sim.struct
class Mesh2:
    id: int
    heights: sim.array(dtype=float)
    grid: sim.array(dtype=sim.vec3, ndim=2)


@sim.struct
class Holder:
    scale: float
    mesh: Mesh2


@sim.kernel
def read_struct_array_fields(items: sim.array(dtype=Holder), out: sim.array(dtype=float)):
    i = sim.tid()
    h = items[i]
    out[i] = h.scale * h.mesh.heights[i] + items[i].mesh.grid[1, 0][2] + float(h.mesh.id)
    h.mesh.heights[i] = -1.0  # the descriptor views the original memory


def test_structs_with_array_fields_are_stored_in_arrays_as_descriptors():
    heights = np.array([1, 2, 3], np.float32)
    grid = np.zeros((2, 2, 3), np.float32)
    grid[1, 0, 2] = 100
    items = sim.structs.records(Holder, [Holder(scale=s, mesh=Mesh2(id=s, heights=heights,
                                                                    grid=grid[:, ::1]))
                                         for s in range(3)])
    descriptor = items["mesh"]["heights"][1]
    assert descriptor["data"] == heights.ctypes.data and descriptor["itemsize"] == 4
    assert items["mesh"]["grid"]["strides"][0].tolist() == [24, 12]  # vec3 elements
    out = np.zeros(3, np.float32)
    sim.launch(read_struct_array_fields, dim=3, inputs=[items, out])
    np.testing.assert_array_equal(out, [0 + 100, 2 + 100 + 1, 6 + 100 + 2])
    np.testing.assert_array_equal(heights, [-1, -1, -1])
    # the record array keeps the arrays its descriptors point to alive, until it is freed
    import gc
    kept = sim.structs._KEPT_ALIVE
    assert any(a is heights for a in kept[id(items)])
    key = id(items)
    del items, descriptor
    gc.collect()
    assert key not in kept
    assert Holder(mesh=Mesh2()).to_numpy()["mesh"]["heights"]["data"] == 0  # a null array
    library = read_struct_array_fields.compile(
        "cuda", [np.zeros(3, Holder.numpy_dtype), out], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


def test_struct_to_device_and_assign():
    heights = np.ones(3, np.float32)
    m = Mesh2(id=4, heights=heights)
    moved = m.to("cpu")
    assert moved is not m and moved.heights is heights and moved.id == 4
    other = Mesh2()
    other.assign(m)
    assert other == m
    with pytest.raises(TypeError, match="Mesh2.assign: expected a Mesh2, got Holder"):
        other.assign(Holder())
    assert Holder(scale=2).numpy_value()[0] == 2


@sim.struct
class Unset:
    data: sim.array(dtype=sim.int32)
    points: sim.array(dtype=sim.vec3)
    n: int


@sim.kernel
def unset_array_length(s: Unset, out: sim.array(dtype=int)):
    out[0] = s.data.shape[0] + s.points.shape[0] + s.n


@numba.njit
def pass_through(s):
    return s


def test_unset_array_fields_are_null_arrays_as_in_warp():
    out = np.full(1, -1, np.int32)
    sim.launch(unset_array_length, dim=1, inputs=[Unset(n=3), out])
    assert out[0] == 3
    back = pass_through(Unset(n=2))
    assert back.data is None and back.points is None and back.n == 2
    points = np.zeros((2, 3), np.float32)
    assert pass_through(Unset(points=points)).points is points


@sim.kernel
def store_structs(s: Unset, out: sim.array(dtype=Unset)):
    out[sim.tid()] = s


@sim.kernel
def read_stored(items: sim.array(dtype=Unset), res: sim.array(dtype=int)):
    i = sim.tid()
    res[i] = items[i].data[i] + items[i].n


def test_structs_stored_by_kernels_keep_pointers_but_no_owner():
    data = np.arange(4, dtype=np.int32)
    items = np.zeros(4, Unset.numpy_dtype)
    sim.launch(store_structs, dim=4, inputs=[Unset(data=data, n=3), items])
    descriptors = items["data"]
    assert (descriptors["meminfo"] == 0).all() and (descriptors["parent"] == 0).all()
    assert (descriptors["data"] == data.ctypes.data).all()
    for _ in range(2):  # no reference count left behind to release
        res = np.zeros(4, np.int32)
        sim.launch(read_stored, dim=4, inputs=[items, res])
        np.testing.assert_array_equal(res, [3, 4, 5, 6])
    library = store_structs.compile("cuda", [Unset(), items], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


def test_value_fields_take_all_components_or_none():
    p = Particle(pos=(1, 2, 3))
    for single in (123, 1.5, sim.float32(1.5), True):
        with pytest.raises(TypeError, match="Struct field 'pos' expects vec3f but got a single"):
            p.pos = single
    p.pos = None
    assert p.pos == sim.vec3()
    p.pos = np.array([4.0, 5.0, 6.0])
    assert p.pos == sim.vec3(4, 5, 6)
    assert Particle.cls is Particle and isinstance(p, Particle.cls)


def test_records_convert_back_to_structs():
    heights = np.array([1, 2, 3], np.float32)
    grid = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    items = sim.structs.records(Holder, [Holder(scale=2, mesh=Mesh2(id=7, heights=heights,
                                                                    grid=grid)), Holder()])
    back = Holder.from_numpy(items[0])
    assert back.scale == 2 and back.mesh.id == 7 and type(back.mesh.id) is np.int32
    np.testing.assert_array_equal(back.mesh.heights, heights)
    np.testing.assert_array_equal(back.mesh.grid, grid)
    assert back.mesh.grid.ctypes.data == grid.ctypes.data  # a view, not a copy
    assert Holder.from_numpy(items[1]) == Holder()
    p = Particle(pos=(1, 2, 3), mass=4, alive=True)
    assert Particle.from_numpy(p.to_numpy()) == p


def test_records_need_host_arrays_in_array_fields():
    class CudaLike:
        __cuda_array_interface__ = {"shape": (3,), "typestr": "<f4", "data": (4096, False),
                                    "version": 3, "strides": None}
        shape, ndim, dtype = (3,), 1, np.dtype(np.float32)

    m = Mesh2()
    object.__setattr__(m, "heights", CudaLike())
    with pytest.raises(TypeError, match="Mesh2.heights: a struct stored in a NumPy array "
                                        "needs NumPy arrays"):
        sim.structs.records(Mesh2, [m])
