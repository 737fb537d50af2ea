"""``@sim.struct``: Warp-style structs with annotated fields.

Fields may be scalars (``float`` is float32, ``int`` int32, NumPy scalar
types), value types (``sim.vec3`` ...), other structs, and arrays
(``sim.array(dtype=..., ndim=...)``).  A struct is constructed in Python
(``MyStruct(pos=..., mass=...)``, fields default to zero), passed to kernels,
``@njit`` functions and ``@cuda.jit`` kernels, constructed in compiled code
(``MyStruct()`` or all fields positionally), and stored in arrays of structs:
NumPy arrays of ``MyStruct.numpy_dtype`` (C layout, as Warp's structs).
"""

import builtins
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
        try:
            if self.kind == FIELD_SCALAR:
                if isinstance(value, (builtins.bool, np.bool_)) != (self.scalar_type is np.bool_):
                    raise TypeError
                return self.scalar_type(value)
            if self.kind == FIELD_VALUE:
                if type(value) is self.annotation:
                    return value
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
                raise TypeError(f"{cls.__name__}.numpy_dtype: field {field.name!r} is an array; "
                                "structs with array fields cannot be stored in arrays")
            if field.kind == FIELD_STRUCT:
                parts.append((field.name, field.annotation.numpy_dtype))
            else:
                scalar, shape = arrays.storage_of(field.annotation)
                parts.append((field.name, scalar, shape) if shape else (field.name, scalar))
        return np.dtype(parts, align=True)

    def to_numpy(self):
        """This struct as a NumPy scalar of ``numpy_dtype``."""
        record = np.zeros((), dtype=self.numpy_dtype)
        for field in self._fields:
            value = getattr(self, field.name)
            record[field.name] = value.to_numpy() if field.kind == FIELD_STRUCT else np.asarray(value)
        return record


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
    # The one import cycle of this family (typing/structs.py imports this module): the new
    # class is its own typing key, so it is declared to Numba when it is made.
    from numba_sim.typing import structs as struct_typing

    struct_typing.register_struct(result)
    return result
