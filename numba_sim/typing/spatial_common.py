"""What the Numba types of the spatial structures share (both targets).

A structure passed to compiled code (``sim.HashGrid``, ``sim.Bvh``,
``sim.Mesh``) is a :class:`SpatialType`: its value is the address of the
structure's descriptor on its device (its ``id``), a ``uint64``, so it lowers
exactly like Warp's integer ids, and every query builtin takes either.
:func:`register_spatial_type` ties a SpatialType to its host class
(numba_sim/spatial, which imports nothing of this layer). CPU code unboxes the
object (numba_sim/lowering/spatial_common.py); CUDA kernels receive ``id``
through :func:`prepare_cuda_arg`.

Traversal states live on the caller's stack, one per loop, as opaque
:func:`opaque_state_members` of the size the C++ state has (the tests compare
the sizes with the native library's).
"""

from numba.core import types
from numba.core.datamodel import models
from numba.core.extending import register_model
from numba.core.typing.templates import AttributeTemplate, signature

from numba_sim.cuda_args import register_converter
from numba_sim.operations import fail
from numba_sim.registry import typing_registry
from numba_sim.typing.value_types import value_type_by_name


class SpatialType(types.Type):
    """A spatial structure in compiled code (the address of its descriptor).

    For messages: ``python_class`` names the host class and ``argument`` the
    builtins' argument (both from the host class, see
    :func:`register_spatial_type`), ``cuda_hint`` how to make one for CUDA
    kernels.
    """

    python_class = "a spatial structure"
    argument = "structure"
    cuda_hint = "build it from CUDA arrays"


class HandleModel(models.PrimitiveModel):
    """A 64-bit address, passed to functions and kernels as one ``uint64``."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, dmm.lookup(types.uint64).get_value_type())


def register_spatial_type(host_class):
    """Class decorator of the SpatialType subclass of ``host_class`` (a
    ``numba_sim.spatial.common.SpatialStructure``, whose constructor takes no argument).

    Registers the data model and the ``id`` attribute, takes ``python_class``
    and ``argument`` from the host class, and sets ``host_class._numba_type_``
    (the instance: Numba's typeof protocol, on both targets).
    """

    def register(cls):
        cls.python_class = host_class.__name__
        cls.argument = host_class.argument
        register_model(cls)(HandleModel)

        class Attributes(AttributeTemplate):
            key = cls

            def resolve_id(self, value):
                return types.uint64

        Attributes.__name__ = f"{cls.__name__}Attributes"
        typing_registry.register_attr(Attributes)
        host_class._numba_type_ = cls()
        return cls

    return register


def opaque_state_members(size_bytes):
    """Data-model members reserving ``size_bytes`` (a multiple of 8) of private state."""
    return [("private", types.UniTuple(types.uint64, size_bytes // 8))]


# --------------------------------------------------------------------------
# Typing helpers for the query builtins


def handle_argument(name, args, value, spatial_type):
    """The type a structure argument converts to: ``spatial_type`` stays, 64-bit ids become uint64.

    ``value`` is the argument's type; anything else is a typing error of the
    builtin ``name`` (called with ``args``).
    """
    value = types.unliteral(value)
    if isinstance(value, type(spatial_type)):
        return value
    if isinstance(value, types.Integer) and value.bitwidth == 64:
        return types.uint64
    fail(name, args, f"{spatial_type.argument} must be a sim.{spatial_type.python_class} or "
                     f"its id (a 64-bit integer: uint64), not {value}")


def check_vec3(name, args, value, what):
    """Typing error of ``name`` unless ``value`` is a vec3."""
    if types.unliteral(value) != value_type_by_name("vec3"):
        fail(name, args, f"{what} must be a vec3, not {types.unliteral(value)}")


def check_number(name, args, value, what, kind=(types.Integer, types.Float)):
    """Typing error of ``name`` unless ``value`` is a number (or of ``kind``)."""
    value = types.unliteral(value)
    if not isinstance(value, kind) or isinstance(value, types.Boolean):
        expected = "an integer" if kind is types.Integer else "a number"
        fail(name, args, f"{what} must be {expected}, not {value}")


def check_arity(name, args, kws, names):
    """Typing error of ``name`` unless called with ``len(names)`` positional arguments."""
    if kws or len(args) != len(names):
        count = ("one", "two", "three", "four", "five")[len(names) - 1]
        fail(name, args, f"takes {count} positional arguments ({', '.join(names)})")


def query_signature(name, result, spatial_type, args, kws, vectors, scalars=(), optional=None):
    """The signature of a query builtin taking (structure, one vec3 per name of ``vectors``,
    one float per name of ``scalars``[, the integer ``optional``]) and returning ``result``;
    a typing error naming the argument otherwise."""
    names = (spatial_type.argument, *vectors, *scalars)
    if optional is not None and not kws and len(args) == len(names) + 1:
        names += (optional,)
    check_arity(name, args, kws, names)
    argtypes = [handle_argument(name, args, args[0], spatial_type)]
    for value, what in zip(args[1:], names[1:]):
        if what in vectors:
            check_vec3(name, args, value, what)
            argtypes.append(value_type_by_name("vec3"))
        elif what in scalars:
            check_number(name, args, value, what)
            argtypes.append(types.float32)
        else:
            check_number(name, args, value, what, kind=types.Integer)
            argtypes.append(types.int32)
    return signature(result, *argtypes)


# --------------------------------------------------------------------------
# CUDA kernel arguments


def prepare_cuda_arg(ty, val):
    """Convert a spatial-structure argument of a CUDA kernel to its ``uint64`` id.

    A hook for numba-cuda's ``prepare_args`` (see numba_sim/cuda_args.py):
    returns ``(ty, val)`` unchanged for other types.
    """
    if not isinstance(ty, SpatialType):
        return ty, val
    device = getattr(val, "device", None)
    if not (isinstance(device, str) and device.startswith("cuda")):
        raise ValueError(f"a CUDA kernel received a {ty.python_class} on {device!r}; "
                         f"{ty.cuda_hint} to use it on the GPU")
    return types.uint64, val.id


register_converter(SpatialType, prepare_cuda_arg)
