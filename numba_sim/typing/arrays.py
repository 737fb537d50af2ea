"""Typing of ``sim.view(a, dtype)``: a scalar array seen as an array of value types, and of
`shape_dim` (Warp's ``a.shape[i]`` in a kernel: 0 past the array's dims), and Warp's
arrays over a pointer in a kernel: ``a.ptr`` (the data's address, uint64) and
``sim.array(ptr=p, shape=(n, m), dtype=T)`` (a C-contiguous array of *T* over the memory
at *p*; it owns nothing); and Warp's local arrays: ``sim.zeros(shape=(2, 3), dtype=T)`` in a
kernel or a func, of a constant shape (Warp's fixedarray), zero-filled.

A C-contiguous ``(..., 3)`` float32 array viewed as ``vec3`` is an
``Array(vec3, ndim - 1, 'C')`` over the same memory (a mat33 view drops two
trailing dims).  Numba's own getitem/setitem/len/shape then work on it, on the
CPU and on CUDA.
"""

import operator

from numba.core import types
from numba.core import utils
from numba.core.typing.templates import (AbstractTemplate, AttributeTemplate, bound_function,
                                         signature)
from numba.np import numpy_support

from numba_sim.arrays import array, element_dtype, shape_dim, view, zeros
from numba_sim.operations import fail
from numba_sim.registry import typing_registry
from numba_sim.types import Value
from numba_sim.typing.structs import struct_class_of, struct_type_of
from numba_sim.typing.value_types import VALUE_TYPES, ValueType


def value_type_of_marker(marker):
    """The element type named by a typed dtype argument (``sim.vec3``, a struct class), or None."""
    if isinstance(marker, types.Function):
        key = marker.typing_key
        if isinstance(key, type) and issubclass(key, Value) and key.spec is not None:
            return VALUE_TYPES[key.spec]  # also the types made on demand (sim.types.vector)
        struct_class = struct_class_of(marker)
        if struct_class is not None:
            return struct_type_of(struct_class)
    return None


def _struct_view_type(array_type, struct_type, name):
    record = numpy_support.from_dtype(struct_type.python_class.numpy_dtype)
    if not isinstance(array_type, types.Array) or array_type.dtype != record \
            or array_type.layout != "C":
        fail(name, (array_type, struct_type),
             f"viewing as {struct_type} needs a C-contiguous array of its numpy_dtype")
    return types.Array(struct_type, array_type.ndim, "C", readonly=not array_type.mutable)


def scalar_type_of_marker(marker):
    """The scalar type named by a dtype argument (``sim.float32``; ``float`` is float32, as
    in Warp), or None."""
    if isinstance(marker, types.NumberClass):
        return marker.instance_type
    if isinstance(marker, types.Function) and marker.typing_key is float:
        return types.float32
    return None


def view_type(array_type, value_type, name="view"):
    """The Array type of *array_type* viewed as *value_type* (TypingError if impossible):
    scalar storage as value elements, or value elements as their scalar storage (the
    element's shape appended to the array's, C order)."""
    if isinstance(array_type, types.Array) and array_type.dtype == value_type:
        return array_type
    if isinstance(value_type, types.Number):
        element = getattr(array_type, "dtype", None)
        if not isinstance(element, ValueType) or element.dtype != value_type \
                or array_type.layout != "C":
            fail(name, (array_type, value_type),
                 f"viewing as {value_type} needs a C-contiguous array of value types of "
                 f"{value_type} (vectors, matrices)")
        return types.Array(value_type, array_type.ndim + len(element.shape), "C",
                           readonly=not array_type.mutable)
    if not isinstance(value_type, ValueType):
        return _struct_view_type(array_type, value_type, name)
    trailing = len(value_type.shape)
    if not isinstance(array_type, types.Array) or array_type.dtype != value_type.dtype \
            or array_type.ndim <= trailing or array_type.layout != "C":
        fail(name, (array_type, value_type),
             f"viewing as {value_type} needs a C-contiguous {value_type.dtype} array with "
             f"trailing shape {value_type.shape}")
    return types.Array(value_type, array_type.ndim - trailing, "C", readonly=not array_type.mutable)


@typing_registry.register_global(view)
class ViewTemplate(AbstractTemplate):
    def generic(self, args, kws):
        if kws or len(args) != 2:
            return None
        value_type = value_type_of_marker(args[1]) or scalar_type_of_marker(args[1])
        if value_type is None:
            fail("view", args, "the second argument must be a value type such as sim.vec3, "
                 "or the scalar type of an array of them")
        return signature(view_type(args[0], value_type), *args)


def shape_dim_type(context, container, index):
    """The type of ``shape_dim(container, index)`` for a literal *index* (TypingError if
    *container* has no shape or the index is out of a non-array's shape)."""
    if isinstance(container, types.Array):
        if -container.ndim <= index:
            return types.intp
        fail("shape", (container, types.literal(index)),
             f"index {index} is out of range for the {container.ndim} dims of {container}")
    shape = context.resolve_getattr(container, "shape")
    if shape is None:
        fail("shape", (container,), f"{container} has no shape")
    if isinstance(shape, types.BaseTuple):
        if not -len(shape) <= index < len(shape):
            fail("shape", (container, types.literal(index)),
                 f"index {index} is out of range for a shape of {len(shape)} entries")
        return shape.types[index]
    return context.resolve_function_type(operator.getitem, (shape, types.intp), {}).return_type


@typing_registry.register_global(shape_dim)
class ShapeDimTemplate(AbstractTemplate):
    def generic(self, args, kws):
        if kws or len(args) != 2 or not isinstance(args[1], types.IntegerLiteral):
            return None  # the rewrite passes a constant index
        return signature(shape_dim_type(self.context, args[0], args[1].literal_value), *args)


@typing_registry.register_attr
class ArrayPointerAttribute(AttributeTemplate):
    """``a.ptr``: the address of an array's data (Warp's ``array.ptr``), uint64."""

    key = types.Array

    def resolve_ptr(self, array_type):
        return types.uint64


def element_type_of_marker(marker):
    """The element type named by a dtype argument: a value type, a struct class, a scalar
    type (``sim.float32``, ``np.int64``) or Python's ``float`` / ``int`` / ``bool`` (Warp's
    float32 / int32 / bool); None if it names none."""
    element = value_type_of_marker(marker)
    if element is not None:
        return element
    if isinstance(marker, types.NumberClass):
        return marker.instance_type
    if isinstance(marker, types.DType):
        return marker.dtype
    if isinstance(marker, types.Function) and marker.typing_key in (float, int, bool):
        return numpy_support.from_dtype(element_dtype(marker.typing_key))
    return None


def _array_from_pointer(ptr, shape, dtype):
    """The parameters of ``sim.array(ptr=..., shape=..., dtype=...)`` in a kernel."""


ARRAY_FROM_POINTER = utils.pysignature(_array_from_pointer)


def shape_types(shape):
    """The extents' types of a shape argument (an int or a tuple of ints), or None."""
    if isinstance(shape, types.Integer):
        return (shape,)
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape):
        return tuple(shape)
    return None


@typing_registry.register_global(array)
class ArrayFromPointerTemplate(AbstractTemplate):
    """``sim.array(ptr=p, shape=(n, m), dtype=T)`` in a kernel (Warp's form)."""

    def generic(self, args, kws):
        ptr, shape, dtype = bound = bind_keywords("array", ARRAY_FROM_POINTER, args, kws)
        if not isinstance(ptr, types.Integer):
            fail("array", bound, f"ptr: expected an address (an int such as a.ptr), got {ptr}")
        extents = shape_types(shape)
        if extents is None or not 1 <= len(extents) <= 4:
            fail("array", bound, f"shape: expected an int or a tuple of 1 to 4 ints, got {shape}")
        return array_signature("array", ARRAY_FROM_POINTER, bound, len(extents))


def bind_keywords(name, pysig, args, kws):
    """The argument types of a call of *name* in a kernel, in the order of *pysig*."""
    try:
        return pysig.bind(*args, **kws).args
    except TypeError as error:
        parameters = ", ".join(pysig.parameters)
        fail(name, args + tuple(kws.values()),
             f"in a kernel, sim.{name} takes {parameters} ({error})")


def array_signature(name, pysig, bound, ndim):
    """The signature of a call that makes a C-contiguous array of the element type its
    last argument (a dtype) names."""
    element = element_type_of_marker(bound[-1])
    if element is None:
        fail(name, bound, f"dtype: expected a scalar type, a value type or a @sim.struct "
                          f"class, got {bound[-1]}")
    return signature(types.Array(element, ndim, "C"), *bound).replace(pysig=pysig)


def _local_zeros(shape, dtype):
    """The parameters of ``sim.zeros(shape=..., dtype=...)`` in a kernel."""


LOCAL_ZEROS = utils.pysignature(_local_zeros)


def constant_shape(shape):
    """The extents of a constant shape argument (an int literal or a tuple of them), or None."""
    if isinstance(shape, types.IntegerLiteral):
        return (shape.literal_value,)
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.IntegerLiteral)
                                                  for t in shape):
        return tuple(t.literal_value for t in shape)
    return None


@typing_registry.register_global(zeros)
class LocalZerosTemplate(AbstractTemplate):
    """``sim.zeros(shape=(2, 3), dtype=T)`` in a kernel or a func: a zero-filled local array
    of a constant shape (Warp's fixedarray).  Typed with literal arguments first, so that
    the shape's constants are seen."""

    prefer_literal = True

    def generic(self, args, kws):
        shape, _ = bound = bind_keywords("zeros", LOCAL_ZEROS, args, kws)
        extents = constant_shape(shape)
        if extents is None:
            fail("zeros", bound, "the `shape` argument must be specified as a constant when "
                                 "zero-initializing an array")
        if not 1 <= len(extents) <= 4 or min(extents) < 0:
            fail("zeros", bound, f"shape: expected 1 to 4 extents >= 0, got {extents}")
        return array_signature("zeros", LOCAL_ZEROS, bound, len(extents))


# --------------------------------------------------------------------------
# Calling an array's dtype: ``a.dtype(x)`` (Warp's generic kernels)


def dtype_class_type(context, dtype):
    """The Numba type of the class that makes values of element type *dtype*: what
    ``type(a[0])`` is in compiled code (a number class, a value class, a struct class)."""
    if isinstance(dtype, (types.Integer, types.Float, types.Boolean)):
        return types.NumberClass(dtype)
    if isinstance(dtype, ValueType):
        return context.resolve_value_type(dtype.python_class)
    cls = getattr(dtype, "python_class", None)  # a struct
    return context.resolve_value_type(cls) if cls is not None else None


@typing_registry.register_attr
class DTypeAttributes(AttributeTemplate):
    """``a.dtype(x)``: an array's dtype called, as its element type's class (Warp's
    ``a.dtype(a[0])`` in a generic kernel; a NumPy dtype object cannot be called in Numba)."""

    key = types.DType

    @bound_function("dtype.__call__")
    def resolve___call__(self, dtype_type, args, kws):
        class_type = dtype_class_type(self.context, dtype_type.dtype)
        if class_type is None:
            return None
        inner = self.context.resolve_function_type(class_type, args, kws)
        return None if inner is None else signature(inner.return_type, *inner.args)
