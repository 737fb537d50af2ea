"""``@sim.struct``: Warp-style structs with annotated fields.

Fields may be scalars (``float`` is float32, ``int`` int32, NumPy scalar
types), value types (``sim.vec3`` ...), other structs, and arrays
(``sim.array(dtype=..., ndim=...)``).  A struct is constructed in Python
(``MyStruct(pos=..., mass=...)``, fields default to zero), passed to kernels,
``@njit`` functions and ``@cuda.jit`` kernels, constructed in compiled code
(``MyStruct()`` or all fields positionally), and stored in arrays of structs:
NumPy arrays of ``MyStruct.numpy_dtype`` (C layout, as Warp's structs), where an
array field is an array descriptor (see "Array fields in NumPy records" below).
An unset array field is None in Python and a null array (shape 0) in compiled code.
"""

import builtins
import weakref
from dataclasses import dataclass

import numpy as np

from numba_sim import arrays
from numba_sim.parameters import Parameter
from numba_sim.types import Value

FIELD_SCALAR, FIELD_VALUE, FIELD_STRUCT, FIELD_ARRAY = "scalar", "value", "struct", "array"


@dataclass(frozen=True)
class Field:
    name: str
    kind: str
    annotation: object

    @property
    def scalar_type(self):
        return arrays.element_dtype(self.annotation).type

    def default(self):
        if self.kind == FIELD_SCALAR:
            return self.scalar_type(0)
        if self.kind in (FIELD_VALUE, FIELD_STRUCT):
            return self.annotation()
        return None

    def convert(self, owner, value):
        """*value* as this field's Python value; TypeError naming the field otherwise."""
        if self.kind == FIELD_VALUE and np.ndim(value) == 0 and value is not None \
                and type(value) is not self.annotation:
            raise TypeError(f"{owner.__name__}: Struct field {self.name!r} expects "
                            f"{self.annotation.spec.warp_name} but got a single value "
                            f"({value!r}); give all its components")
        try:
            if self.kind == FIELD_SCALAR:
                if self.scalar_type is np.bool_:  # a bool, or an int as a C bool (Warp's)
                    if not isinstance(value, (builtins.bool, np.bool_, builtins.int, np.integer)):
                        raise TypeError
                    return np.bool_(value)
                if isinstance(value, (builtins.bool, np.bool_)):
                    raise TypeError
                return self.scalar_type(value)
            if self.kind == FIELD_VALUE:
                if type(value) is self.annotation:
                    return value
                if value is None:  # zeros, as in Warp
                    return self.annotation()
                return self.annotation(*np.asarray(value).reshape(-1).tolist())
            if self.kind == FIELD_STRUCT:
                if type(value) is not self.annotation:
                    raise TypeError
                return value
        except (TypeError, ValueError):
            raise TypeError(f"{owner.__name__}.{self.name}: expected "
                            f"{_annotation_name(self.annotation)}, got {value!r}") from None
        if value is not None:
            parameter_like = self.annotation
            if arrays.device_of(value) is None:
                raise TypeError(f"{owner.__name__}.{self.name}: expected an array for "
                                f"{parameter_like!r}, got {type(value).__name__}")

            Parameter(f"{owner.__name__}.{self.name}", parameter_like)._check_array(owner, value)
        return value


def _annotation_name(annotation):
    return getattr(annotation, "__name__", repr(annotation))


def _field_kind(owner_name, name, annotation):
    if isinstance(annotation, arrays.array):
        return FIELD_ARRAY
    if isinstance(annotation, type) and issubclass(annotation, Value):
        return FIELD_VALUE
    if isinstance(annotation, type) and issubclass(annotation, Struct):
        return FIELD_STRUCT
    if annotation in (builtins.float, builtins.int, builtins.bool) or (
            isinstance(annotation, type) and issubclass(annotation, (np.integer, np.floating, np.bool_))):
        return FIELD_SCALAR
    raise TypeError(f"@sim.struct {owner_name}: field {name!r} has the unsupported type "
                    f"{annotation!r}; fields are scalars (float, int, bool, sim.float32, ...), "
                    "value types (sim.vec3, ...), other structs or sim.array(...)")


class Struct:
    """Base of ``@sim.struct`` classes (mutable in Python, as Warp's structs)."""

    _fields: tuple = ()

    def __init__(self, *args, **kwargs):
        cls = type(self)
        if len(args) > len(cls._fields):
            raise TypeError(f"{cls.__name__}() takes at most {len(cls._fields)} positional "
                            f"arguments ({len(args)} given)")
        values = dict(zip((f.name for f in cls._fields), args))
        for name, value in kwargs.items():
            if name in values or name not in cls._field_map:
                raise TypeError(f"{cls.__name__}() got an unexpected or repeated field {name!r}")
            values[name] = value
        for field in cls._fields:
            object.__setattr__(self, field.name, field.convert(cls, values[field.name])
                               if field.name in values else field.default())

    def __setattr__(self, name, value):
        field = type(self)._field_map.get(name)
        if field is None:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        object.__setattr__(self, name, field.convert(type(self), value))

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(_field_equal(getattr(self, f.name), getattr(other, f.name))
                   for f in self._fields)

    __hash__ = None

    def __repr__(self):
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self._fields)
        return f"{type(self).__name__}({fields})"

    @classmethod
    def _from_fields(cls, values):
        self = object.__new__(cls)
        for field, value in zip(cls._fields, values):
            if field.kind == FIELD_SCALAR:  # compiled code boxes float32 as a Python float
                value = field.scalar_type(value)
            object.__setattr__(self, field.name, value)
        return self

    @classmethod
    def _numpy_dtype(cls):
        parts = []
        for field in cls._fields:
            if field.kind == FIELD_ARRAY:
                parts.append((field.name, descriptor_dtype(field.annotation.ndim)))
            elif field.kind == FIELD_STRUCT:
                parts.append((field.name, field.annotation.numpy_dtype))
            else:
                scalar, shape = arrays.storage_of(field.annotation)
                parts.append((field.name, scalar, shape) if shape else (field.name, scalar))
        return np.dtype(parts, align=True)

    def numpy_value(self):
        """This struct's fields as a tuple for a NumPy record of ``numpy_dtype`` (Warp's
        ``numpy_value()``): nested structs as tuples, array fields as their descriptors."""
        return tuple(_field_record_value(field, getattr(self, field.name))
                     for field in self._fields)

    def to_numpy(self):
        """This struct as a NumPy scalar of ``numpy_dtype``; it keeps the arrays its
        descriptors point to alive (see :func:`records`)."""
        return records(type(self), self)

    @classmethod
    def _records(cls, data):
        """The record array of *data* (structs, lists of them): see :func:`records`
        (``sim.array([s0, s1], dtype=S)`` calls it)."""
        return records(cls, data)

    @classmethod
    def from_numpy(cls, record):
        """The struct a NumPy record of ``numpy_dtype`` holds (see :func:`from_record`)."""
        return from_record(cls, record)

    def to(self, device):
        """A copy of this struct with its array fields on *device* (Warp's ``to``): arrays
        already there are shared, the others copied."""
        copy = object.__new__(type(self))
        for field in self._fields:
            value = getattr(self, field.name)
            if field.kind == FIELD_STRUCT:
                value = value.to(device)
            elif field.kind == FIELD_ARRAY and value is not None \
                    and arrays.device_of(value) != arrays.parse_device(device)[0]:
                value = arrays.host_array(value, device=device)
            object.__setattr__(copy, field.name, value)
        return copy

    def assign(self, value):
        """Copy every field of *value*, a struct of this class, into this one (Warp's
        ``assign``)."""
        if type(value) is not type(self):
            raise TypeError(f"{type(self).__name__}.assign: expected a {type(self).__name__}, "
                            f"got {type(value).__name__}")
        for field in self._fields:
            object.__setattr__(self, field.name, getattr(value, field.name))


# --------------------------------------------------------------------------
# Array fields in NumPy records: Numba's array descriptor
#
# A struct stored in an array keeps each array field as the descriptor Numba's array
# data model has (meminfo, parent, nitems, itemsize, data, shape, strides), so that
# reading the element in compiled code gives a usable array.  The descriptor has no
# owner (meminfo and parent are null): the arrays it points to are kept alive by the
# record array that `records` made (until that array is freed).  Copying records into
# another array (``a[i] = s.numpy_value()``) copies pointers only, and so does a kernel
# storing a struct into an array (lowering/structs.py nulls the owner there): as in
# Warp, the struct or the caller then keeps the referenced arrays alive.  Records live
# in host memory, so their array fields must be NumPy arrays.


def descriptor_dtype(ndim):
    """The record dtype of an array field of *ndim* dimensions (Numba's array model)."""
    scalar = [(name, np.intp) for name in ("meminfo", "parent", "nitems", "itemsize", "data")]
    return np.dtype(scalar + [("shape", np.intp, (ndim,)), ("strides", np.intp, (ndim,))],
                    align=True)


def array_descriptor(annotation, value):
    """The descriptor tuple of array *value* (None: a null array) for a field annotated
    *annotation*; the element's storage dims are folded into the element, as in kernels."""
    ndim = annotation.ndim
    if value is None:
        return (0, 0, 0, 0, 0, (0,) * ndim, (0,) * ndim)
    interface = value.__array_interface__ if isinstance(value, np.ndarray) \
        else value.__cuda_array_interface__
    shape = tuple(interface["shape"])
    itemsize = np.dtype(interface["typestr"]).itemsize
    strides = interface.get("strides") or tuple(
        int(np.prod(shape[k + 1:], dtype=np.int64)) * itemsize for k in range(len(shape)))
    element_bytes = int(np.prod(shape[ndim:], dtype=np.int64)) * itemsize
    outer = shape[:ndim]
    return (0, 0, int(np.prod(outer, dtype=np.int64)), element_bytes, interface["data"][0],
            outer, tuple(strides[:ndim]))


def _field_record_value(field, value):
    if field.kind == FIELD_STRUCT:
        return value.numpy_value()
    if field.kind == FIELD_ARRAY:
        return array_descriptor(field.annotation, value)
    if field.kind == FIELD_VALUE:
        return value._storage
    return value


def _referenced_arrays(field, value, owner):
    """(field path, array) of the arrays a struct value's descriptors point to (nested
    structs included)."""
    path = f"{owner}.{field.name}"
    if field.kind == FIELD_ARRAY:
        return [] if value is None else [(path, value)]
    if field.kind == FIELD_STRUCT:
        return [found for f in value._fields
                for found in _referenced_arrays(f, getattr(value, f.name), path)]
    return []


_KEPT_ALIVE = {}
"""id of a record array made by `records` -> the arrays its descriptors point to."""


def records(cls, data):
    """A NumPy array of ``cls.numpy_dtype`` from a struct, or (nested) lists of structs
    of class *cls* (or of record tuples); it keeps the arrays its descriptors point to
    alive, which must be NumPy arrays (the records are in host memory)."""
    kept = []

    def convert(item):
        if isinstance(item, Struct):
            if type(item) is not cls:
                raise TypeError(f"data: expected {cls.__name__} structs, got "
                                f"{type(item).__name__}")
            for field in cls._fields:
                kept.extend(_referenced_arrays(field, getattr(item, field.name), cls.__name__))
            return item.numpy_value()
        if isinstance(item, list) or (isinstance(item, tuple) and item
                                      and isinstance(item[0], Struct)):
            return [convert(i) for i in item]
        return item  # a record or record tuple, taken as it is

    result = np.array(convert(data), dtype=cls.numpy_dtype)
    for path, array in kept:
        if arrays.device_of(array) != "cpu":
            raise TypeError(f"{path}: a struct stored in a NumPy array needs NumPy arrays in "
                            f"its array fields, got {type(array).__name__} "
                            f"(on {arrays.device_of(array)})")
    if kept:
        key = id(result)
        _KEPT_ALIVE[key] = [array for _, array in kept]
        weakref.finalize(result, _KEPT_ALIVE.pop, key, None)
    return result


def from_record(cls, record):
    """The struct of class *cls* that a NumPy record of ``cls.numpy_dtype`` holds; its
    array fields are NumPy arrays over the memory their descriptors point to (they do
    not own it: as in Warp, what the descriptor points to must stay alive), None for
    null ones."""
    values = []
    for field in cls._fields:
        value = record[field.name]
        if field.kind == FIELD_STRUCT:
            value = from_record(field.annotation, value)
        elif field.kind == FIELD_ARRAY:
            value = _array_over(field.annotation, value)
        elif field.kind == FIELD_VALUE:
            value = field.annotation(*np.asarray(value).reshape(-1).tolist())
        values.append(value)
    return cls._from_fields(values)


class _Memory:
    """An ``__array_interface__`` over memory that a descriptor points to."""

    def __init__(self, interface):
        self.__array_interface__ = interface


def _array_over(annotation, descriptor):
    if int(descriptor["data"]) == 0:
        return None
    scalar, trailing = arrays.storage_of(annotation.dtype)
    shape = tuple(int(n) for n in descriptor["shape"]) + tuple(trailing)
    strides = [int(n) for n in descriptor["strides"]]
    step = np.dtype(scalar).itemsize
    inner = []
    for extent in reversed(trailing):
        inner.insert(0, step)
        step *= extent
    return np.asarray(_Memory({"shape": shape, "typestr": np.dtype(scalar).str,
                               "descr": np.dtype(scalar).descr, "strides": tuple(strides + inner),
                               "data": (int(descriptor["data"]), False), "version": 3}))


def _field_equal(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return a is b
    return bool(a == b)


class _NumpyDtype:
    """Class attribute computing ``numpy_dtype`` once, on first use."""

    def __get__(self, instance, owner):
        dtype = owner._numpy_dtype()
        owner.numpy_dtype = dtype
        return dtype


def struct(cls):
    """Decorator: a Warp-style struct from a class with annotated fields."""
    import inspect

    if any(base is not object for base in cls.__bases__):
        # Warp's error type and words, so that ported code and tests see the same
        raise RuntimeError(f"@sim.struct {cls.__name__}: a struct cannot derive from "
                           f"{', '.join(b.__name__ for b in cls.__bases__)}; Warp structs must "
                           "be defined as base classes")
    annotations = inspect.get_annotations(cls, eval_str=True)  # none: an empty struct
    fields = tuple(Field(name, _field_kind(cls.__name__, name, annotation), annotation)
                   for name, annotation in annotations.items())
    namespace = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    namespace.update(_fields=fields, _field_map={f.name: f for f in fields},
                     numpy_dtype=_NumpyDtype())
    result = type(cls.__name__, (Struct,), namespace)
    result.__qualname__ = cls.__qualname__
    result.cls = result  # Warp's ``MyStruct.cls``: the class of its instances
    # The one import cycle of this family (typing/structs.py imports this module): the new
    # class is its own typing key, so it is declared to Numba when it is made.
    from numba_sim.typing import structs as struct_typing

    struct_typing.register_struct(result)
    return result
