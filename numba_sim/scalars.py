"""Scalar types as annotations and casts (Warp's names).

Each of Warp's int and float types is a subclass of its NumPy scalar type, so that it works
everywhere NumPy's does: ``np.dtype(sim.int8)``, arrays, annotations, and in compiled code
``sim.int8(x)`` is Numba's cast.  Calling one in Python converts as Warp (and compiled
code) does: a Python int wraps to the width of an int type instead of NumPy's
OverflowError, and the result is the plain NumPy scalar (``type(sim.int8(3)) is np.int8``;
``isinstance(np.int8(3), sim.int8)`` holds).  ``_type_`` is the ctypes type and
``_length_`` is 1, as Warp's (a value type's ``_length_`` is its number of components).
``bool`` is NumPy's ``np.bool_`` (which cannot be subclassed); float16 is storage only.
In annotations, Python's ``float`` means float32 and ``int`` means int32 (Warp's rule).
"""

import ctypes

import numpy as np

from numba_sim import scalar_rule


class ScalarType(type):
    """The metaclass of Warp's scalar types: each equals its NumPy type (and dtype) and
    hashes as the dtype, so that Numba's dtype tables find it (``sim.float32`` in compiled
    code is the cast ``np.float32``, on the CPU and CUDA alike); ``isinstance`` and
    ``issubclass`` answer for the NumPy type."""

    @property
    def numpy_type(cls):
        return cls.__mro__[1]

    def __instancecheck__(cls, value):
        return isinstance(value, cls.numpy_type)

    def __subclasscheck__(cls, other):
        return issubclass(other, cls.numpy_type)

    def __eq__(cls, other):
        return other is cls or other is cls.numpy_type or (
            isinstance(other, np.dtype) and other == np.dtype(cls.numpy_type))

    def __hash__(cls):  # the dtype's: Numba finds the type in its dtype tables (from_dtype)
        return hash(np.dtype(cls.numpy_type))

    def __repr__(cls):
        return f"<class 'numba_sim.{cls.__name__}'>"


def _scalar_type(numpy_type, ctype, name=None):
    def __new__(cls, value=0):
        return scalar_rule.convert(value, numpy_type)

    dtype_name = np.dtype(numpy_type).name
    return ScalarType(name or dtype_name, (numpy_type,), {
        "__new__": __new__, "_type_": ctype, "_length_": 1, "__module__": "numba_sim",
        "__doc__": f"Warp's {name or dtype_name}: NumPy's ``np.{dtype_name}``, converting as "
                   "Warp does."})


_CTYPES = {
    np.float32: ctypes.c_float, np.float64: ctypes.c_double,
    np.int8: ctypes.c_int8, np.int16: ctypes.c_int16, np.int32: ctypes.c_int32,
    np.int64: ctypes.c_int64, np.uint8: ctypes.c_uint8, np.uint16: ctypes.c_uint16,
    np.uint32: ctypes.c_uint32, np.uint64: ctypes.c_uint64,
}

float16 = np.float16
float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64 = (
    _scalar_type(t, c) for t, c in _CTYPES.items())
bool = np.bool_
handle = _scalar_type(np.uint64, ctypes.c_uint64, "handle")
"""Warp's ``handle``: a uint64 that holds a structure's id (a kernel parameter, a struct
field or an array element); the same type as uint64 everywhere."""

SCALAR_TYPES = (float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64)
"""Warp's scalar types that are numba_sim classes (the others are NumPy's own)."""


__all__ = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "bool", "handle"]
