"""The shortest way from ``sim.launch`` to the driver, for a prepared signature.

Once a 1-D CUDA launch of a kernel has been prepared (cuda_launch.py), the
kernel gets a generated ``fast_launch(dim, inputs, outputs, device, stream)``
that does, in straight-line code, what ``sim.launch`` would do for the same
kinds of arguments: it checks every argument as the parameter binding does
(array class, dtype, dims, trailing shape, contiguity; exact scalar and value
types; the launch size against the arrays indexed with the thread index), packs the same leaves as the prepared launch into its buffer and calls
``cuLaunchKernel``. Anything else (another device, an explicit stream,
``outputs``, other types, debug mode, a value out of range) returns False, and
``sim.launch`` takes its full path, which also gives the errors.
"""

import struct

import numpy as np
from numba.core import types

from numba_sim import config, cuda_launch, cuda_runtime, structure_ids
from numba_sim.typing.value_types import ValueType

MAX_THREADS = 2**31 - 1

_SCALAR_CLASSES = {
    "f": (float, int, np.float32), "d": (float, int, np.float64), "?": (bool, np.bool_),
    "i": (int, np.int32), "q": (int, np.int64), "I": (int, np.uint32), "Q": (int, np.uint64),
    "b": (int, np.int8), "B": (int, np.uint8), "h": (int, np.int16), "H": (int, np.uint16),
}
"""Python and NumPy scalar classes passed as they are for a parameter's struct code
(the binding's conversions of these are exact; bool is no int here, as in the binding)."""


def make(kernel, prepared, arguments, device, block_size):
    """``fast_launch`` for *kernel*'s prepared 1-D launch on *device*, or None where its
    parameters are not all arrays, scalars and value types. *arguments* are the bound
    arguments of the launch that prepared it; blocks have *block_size* threads."""
    namespace = {"_config": config, "_MISS": False, "_prepared": prepared,
                 "_pack_into": prepared.packing.format.pack_into, "_struct_error": struct.error,
                 "_current_device": cuda_runtime.current_device_function(), "_DEVICE": device,
                 "_current_stream": cuda_runtime.current_stream_function(),
                 "_launch": cuda_launch.launch_function(), "_fail": _launch_error}
    argtypes = prepared.argtypes
    checks, leaves = [], ["dim"]
    for k, (parameter, ty, value) in enumerate(zip(kernel.parameters, argtypes[1:], arguments)):
        name = f"a{k}"
        if parameter.array is not None and isinstance(ty, types.Array):
            namespace[f"_class{k}"] = type(value)
            namespace[f"_dtype{k}"] = value.dtype
            trailing = tuple(value.shape[parameter.array.ndim:])
            namespace[f"_trailing{k}"] = trailing
            checks.append(f"type({name}) is not _class{k} or {name}.dtype != _dtype{k} "
                          f"or {name}.ndim != {ty.ndim} "
                          + (f"or {name}.shape[{parameter.array.ndim}:] != _trailing{k} "
                             if trailing else "")
                          + f"or not {name}.flags.c_contiguous")
            if not hasattr(getattr(value, "data", None), "ptr"):
                return None  # the attribute spelling below is CuPy's
            leaves.append(f"0, 0, {name}.size, {name}.itemsize, {name}.data.ptr, "
                          f"*{name}.shape, *{name}.strides")
        elif parameter.scalar is not None and isinstance(ty, (types.Number, types.Boolean)):
            (code,) = cuda_launch.leaf_codes(ty)
            namespace[f"_classes{k}"] = _SCALAR_CLASSES[code]
            checks.append(f"type({name}) not in _classes{k}")
            leaves.append(name)
        elif parameter.value_class is not None and isinstance(ty, ValueType):
            namespace[f"_class{k}"] = parameter.value_class
            checks.append(f"type({name}) is not _class{k}")
            leaves.append(f"*{name}._storage.ravel().tolist()")
        else:
            return None
    for position, kind, through_elements in kernel.structure_ids:  # structure_ids.py
        if through_elements:
            continue  # ids in a CUDA array are not read back (as on the full path)
        checks.append(f"not _is_live(a{position}, {kind!r})")
    namespace["_is_live"] = structure_ids.is_live
    for position, array_axis, launch_axis in kernel.tid_indexed:  # launch_bounds.py
        if launch_axis == 0:
            checks.append(f"dim > a{position}.shape[{array_axis}]")  # the full path says why
    names = ", ".join(f"a{k}" for k in range(len(kernel.parameters)))
    unpack = f"({names},) = inputs" if kernel.parameters else "pass"
    lines = [
        "def fast_launch(dim, inputs, outputs, device, stream):",
        "    if device is not None or stream is not None or type(dim) is not int \\",
        f"            or not 0 < dim <= {MAX_THREADS} or _config._mode != 'release':",
        "        return _MISS",
        "    if outputs:",
        "        inputs = [*inputs, *outputs]",
        f"    if len(inputs) != {len(kernel.parameters)}:",
        "        return _MISS",
        f"    {unpack}",
        *[f"    if {check}:\n        return _MISS" for check in checks],
        "    if _current_device() != _DEVICE:",
        "        return _MISS",
        "    with _prepared._lock:",
        "        try:",
        f"            _pack_into(_prepared._storage, 0, {', '.join(leaves)})",
        "        except _struct_error:",
        "            return _MISS",
        f"        result = _launch(_prepared.function, (dim + {block_size - 1}) // {block_size}, "
        f"{block_size}, _current_stream(), _prepared._pointer_address)",
        "    return True if not result else _fail(result)",
    ]
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<numba_sim fast launch of {kernel.key}>", "exec"), namespace)
    function = namespace["fast_launch"]
    function.__numba_sim_source__ = source
    return function


def _launch_error(result):
    """A launch the driver refused: a thread without the context goes the full way
    (False); anything else is an error."""
    if cuda_launch.is_context_error(result):
        return False
    raise RuntimeError(f"cuLaunchKernel failed: {cuda_launch.error_name(result)}")

