"""Prepared CUDA launches, offline: the parameter buffer a prepared launch packs
has the compiled kernel's parameter list, leaf for leaf, and the values of CuPy,
Numba and CUDA-array-interface arrays alike (tests/gpu runs them)."""

import re

import numpy as np
import pytest
from numba.core import types
from numba.core.typing.typeof import typeof

import numba_sim as sim
from numba_sim import cuda_launch, cuda_runtime, launcher
from numba_sim.cuda_args import cuda_args
from numba_sim.typing.structs import struct_type_of


@sim.struct
class Medium:
    wind: sim.vec3
    density: sim.array(dtype=float)
    drag: float


@sim.kernel
def many(out: sim.array(dtype=float, ndim=2), points: sim.array(dtype=sim.vec3),
         scale: float, offset: sim.vec3, flip: bool, shift: int, seed: sim.uint64,
         rotation: sim.quat, medium: Medium, weights: sim.array(dtype=sim.float64)):
    i = sim.tid()
    p = sim.quat_rotate(rotation, points[i] * scale + offset) + medium.wind * medium.drag
    if flip:
        p = -p
    out[i, 0] = p[0]
    out[i, 1] = p[1]
    out[i, 2] = p[2]
    out[i, 3] = float(i + shift) + float(seed % sim.uint64(1000)) + medium.density[i]
    out[i, 4] = float(weights[i])


def many_inputs(n, xp, scale, flip, seed=0):
    """Arguments of ``many`` as NumPy (xp=np) or CuPy arrays."""
    rng = np.random.default_rng(seed)
    points = xp.asarray(rng.uniform(-1, 1, (n, 3)).astype(np.float32))
    density = xp.asarray(rng.uniform(0, 1, n).astype(np.float32))
    weights = xp.asarray(rng.uniform(0, 1, n))
    medium = Medium(wind=(0.5, 0.0, -0.25), density=density, drag=0.75)
    rotation = sim.quat_from_axis_angle(sim.vec3(0.0, 1.0, 0.0), 0.3)
    return [xp.zeros((n, 5), np.float32), points, scale, sim.vec3(0.1, 0.2, 0.3), flip, 7,
            np.uint64(2**40 + 123), rotation, medium, weights]


class InterfaceArray:
    """A CUDA array known only by its __cuda_array_interface__."""

    def __init__(self, shape, typestr="<f4", ptr=4096, strides=None):
        self.shape, self.dtype, self.ndim = shape, np.dtype(typestr), len(shape)
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "version": 3, "strides": strides}


class CupyLike:
    class _Data:
        def __init__(self, ptr):
            self.ptr = ptr

    def __init__(self, shape, dtype=np.float32, ptr=4096):
        host = np.empty(shape, dtype)
        self.shape, self.strides, self.size, self.itemsize = host.shape, host.strides, host.size, \
            host.itemsize
        self.data = self._Data(ptr)


class NumbaLike:
    def __init__(self, shape, dtype=np.float32, ptr=4096):
        import ctypes

        host = np.empty(shape, dtype)
        self.shape, self.strides, self.size, self.dtype = host.shape, host.strides, host.size, \
            host.dtype
        self.device_ctypes_pointer = ctypes.c_void_p(ptr)


def many_signature(n=100):
    """(launcher argument types, converted types, launcher arguments) of ``many``."""
    host = many_inputs(n, np, 1.5, True)
    bound = launcher._bind(many, host)[0]
    medium = bound[8]
    object.__setattr__(medium, "density", InterfaceArray((n,)))  # as on a GPU
    argtypes = tuple([types.UniTuple(types.int64, 1)] + [
        struct_type_of(Medium) if isinstance(v, Medium) else typeof(v) for v in bound])
    values = [(n,)] + [CupyLike(v.shape, v.dtype, ptr=4096 * (k + 1)) if isinstance(v, np.ndarray)
                       else v for k, v in enumerate(bound)]
    converted = []
    for ty, value in zip(argtypes, values):
        converted_type = cuda_args.prepare_args(ty, value)[0]
        converted.append(None if converted_type is ty else converted_type)
    return argtypes, converted, values


def test_packing_has_the_compiled_kernels_parameter_list():
    argtypes, converted, values = many_signature()
    packing = cuda_launch.ArgumentPacking(argtypes, converted)
    llvm = many.inspect("cuda", "llvm", argtypes[1:], cc=(9, 0))
    (kernel,) = [line for line in llvm.splitlines()
                 if line.startswith("define") and "__launch_many" in line]
    parameters = [p.split()[0] for p in kernel[kernel.index('"(') + 2:kernel.rindex(")")].split(", ")]
    sizes = {"i8": 1, "i32": 4, "i64": 8, "float": 4, "double": 8}
    expected = [(8, False) if p.endswith("*") else (sizes[p], p in ("float", "double"))
                for p in parameters]
    assert len(expected) == 48
    import struct

    assert [(struct.calcsize(c), c in "fd") for c in packing.codes] == expected
    leaves = packing.pack(values)
    assert len(leaves) == len(expected)
    buffer = bytearray(packing.format.size)
    packing.format.pack_into(buffer, 0, *leaves)
    assert packing.format.size == 8 * len(expected)
    # spot checks: dims, the out array's data pointer and shape, scale, the uint64 seed
    assert leaves[0] == 100 and leaves[5:8] == (4096, 100, 5) and leaves[19] == np.float32(1.5)
    assert leaves[25] == 2**40 + 123


@pytest.mark.parametrize("shape", [(7,), (5, 3), (2, 3, 4), (2, 2, 2, 2)])
def test_cupy_numba_and_interface_arrays_pack_alike(shape):
    expected = (0, 0, int(np.prod(shape)), 4, 8192, *shape,
                *np.empty(shape, np.float32).strides)
    for array in (CupyLike(shape, ptr=8192), NumbaLike(shape, ptr=8192),
                  InterfaceArray(shape, ptr=8192)):
        assert cuda_launch.array_slots(array) == expected


def test_what_is_not_prepared():
    with pytest.raises(cuda_launch.Unsupported, match="C-contiguous"):
        cuda_launch.leaf_codes(types.Array(types.float32, 1, "A"))
    with pytest.raises(cuda_launch.Unsupported):
        cuda_launch.leaf_codes(types.complex64)
    with pytest.raises(cuda_launch.Unsupported, match="does not match"):
        cuda_launch.check_layout(["f"], (types.float64,))

    @sim.kernel
    def untyped(a, b: float):
        pass

    assert launcher.CudaLauncher(many, 1)._preparable
    assert not launcher.CudaLauncher(untyped, 1)._preparable
    assert not launcher.CudaLauncher(many, 1, mode="debug")._preparable


def test_stream_handles():
    class NumbaStream:
        handle = 1234

    class CupyStream:
        ptr = 5678

    assert cuda_runtime.stream_handle(42) == 42
    assert cuda_runtime.stream_handle(NumbaStream()) == 1234
    assert cuda_runtime.stream_handle(CupyStream()) == 5678
    assert cuda_runtime.stream_handle("not a stream") is None


def test_llvm_parameter_names_follow_the_arguments():
    """The flattening order the packing assumes: argument by argument, leaves in order."""
    argtypes, _, _ = many_signature()
    llvm = many.inspect("cuda", "llvm", argtypes[1:], cc=(9, 0))
    (kernel,) = [line for line in llvm.splitlines()
                 if line.startswith("define") and "__launch_many" in line]
    names = re.findall(r'%"([^"]+)"', kernel)
    order = [int(name[1:].split(".")[0]) if name.startswith("a") else -1 for name in names]
    assert order == sorted(order)


# --------------------------------------------------------------------------
# sim.launch's shortcut for a prepared signature (cuda_fast_launch.py)


@sim.kernel
def plain_many(out: sim.array(dtype=float, ndim=2), points: sim.array(dtype=sim.vec3),
               scale: float, offset: sim.vec3, flip: bool, shift: int, seed: sim.uint64,
               rotation: sim.quat, weights: sim.array(dtype=sim.float64)):
    i = sim.tid()
    p = sim.quat_rotate(rotation, points[i] * scale + offset)
    if flip:
        p = -p
    out[i, 0] = p[0] + float(shift) + float(seed % sim.uint64(7)) + float(weights[i])


class FakeDeviceArray:
    """CuPy's spelling of an array (dtype, shape, strides, flags, size, data.ptr)."""

    class _Flags:
        def __init__(self, c_contiguous):
            self.c_contiguous = c_contiguous

    def __init__(self, shape, dtype=np.float32, ptr=4096, c_contiguous=True):
        host = np.empty(shape, dtype)
        self.dtype, self.shape, self.ndim, self.size = host.dtype, host.shape, host.ndim, host.size
        self.strides, self.itemsize = host.strides, host.itemsize
        self.data = CupyLike._Data(ptr)
        self.flags = self._Flags(c_contiguous)


def plain_many_inputs(n):
    return [FakeDeviceArray((n, 5), ptr=4096), FakeDeviceArray((n, 3), ptr=8192), 1.5,
            sim.vec3(0.1, 0.2, 0.3), True, -7, np.uint64(2**63 + 5),
            sim.quat_from_axis_angle(sim.vec3(0.0, 1.0, 0.0), 0.3),
            FakeDeviceArray((n,), np.float64, ptr=12288)]


@pytest.fixture
def recorded_fast_launch(monkeypatch):
    """plain_many's fast launch over a recording driver call: (fast_launch, packing, calls)."""
    import ctypes

    from numba_sim import cuda_fast_launch, parameters

    calls = []
    monkeypatch.setattr(cuda_launch, "_cufunction", lambda kernel: 777)
    monkeypatch.setattr(cuda_runtime, "current_device_function", lambda: (lambda: 0))
    monkeypatch.setattr(cuda_runtime, "current_stream_function", lambda: (lambda: 1234))
    monkeypatch.setattr(parameters.arrays, "NUMPY_LIKE_ARRAYS",
                        {**parameters.arrays.NUMPY_LIKE_ARRAYS, FakeDeviceArray: "cuda"})
    n = 1000
    bound = launcher._bind(plain_many, plain_many_inputs(n))[0]
    host = [np.zeros(a.shape, a.dtype) if isinstance(a, FakeDeviceArray) else a for a in bound]
    argtypes = (types.UniTuple(types.int64, 1), *[typeof(v) for v in host])
    converted = [None] * len(argtypes)
    for k, (ty, value) in enumerate(zip(argtypes, [(n,), *bound])):
        converted_type = cuda_args.prepare_args(ty, value)[0]
        converted[k] = None if converted_type is ty else converted_type
    packing = cuda_launch.ArgumentPacking(argtypes, converted)
    prepared = cuda_launch.PreparedLaunch(None, packing)
    prepared.argtypes = argtypes

    def record(function, blocks, threads, stream, params):
        calls.append((function, blocks, threads, stream,
                      ctypes.string_at(prepared._storage, packing.format.size)))
        return 0

    monkeypatch.setattr(cuda_launch, "_LAUNCH", record)
    fast = cuda_fast_launch.make(plain_many, prepared, bound, 0, 256)
    assert fast is not None
    return fast, packing, calls


def test_fast_launch_packs_what_the_prepared_launch_packs(recorded_fast_launch):
    fast, packing, calls = recorded_fast_launch
    for n in (1000, 1, 257):
        inputs = plain_many_inputs(n)
        assert fast(n, inputs, [], None, None) is True
        bound = launcher._bind(plain_many, inputs)[0]
        expected = packing.format.pack(*packing.pack(((n,), *bound)))
        assert calls[-1] == (777, (n + 255) // 256, 256, 1234, expected)
    # inputs and outputs split anywhere launch the same
    inputs = plain_many_inputs(1000)
    assert fast(1000, inputs[:4], inputs[4:], None, None) is True
    assert calls[-1] == calls[0]


def test_fast_launch_declines_what_it_does_not_check(recorded_fast_launch, monkeypatch):
    fast, _, calls = recorded_fast_launch

    def declined(*changes, dim=1000, outputs=(), device=None, stream=None):
        inputs = plain_many_inputs(1000)
        for index, value in changes:
            inputs[index] = value
        return fast(dim, inputs, outputs, device, stream) is False

    assert declined((0, np.zeros((1000, 5), np.float32)))  # host arrays take the CPU path
    assert declined((0, FakeDeviceArray((1000, 5), np.float64)))  # wrong dtype: the error path
    assert declined((1, FakeDeviceArray((1000, 4))))  # trailing shape
    assert declined((1, FakeDeviceArray((1000, 3), c_contiguous=False)))
    assert declined((0, FakeDeviceArray((1000,))))  # dims
    assert declined((2, np.float64(1.5)))  # converted (rounded) by the binding
    assert declined((4, 1))  # an int for a bool
    assert declined((5, True))  # a bool for an int: the binding refuses it
    assert declined((5, 2**31))  # out of int32's range: the binding's error
    assert declined((3, (0.1, 0.2, 0.3)))  # a tuple for a vec3: the binding converts it
    assert declined(dim=0) and declined(dim=2**31) and declined(dim=(1000,))
    assert declined(dim=1001)  # past points and weights, indexed with the thread index
    assert declined(device="cuda:1") and declined(stream=0)
    assert fast(1000, plain_many_inputs(1000)[:-1], [], None, None) is False
    monkeypatch.setattr(sim.config, "_mode", "debug")
    assert declined()
    assert not calls
