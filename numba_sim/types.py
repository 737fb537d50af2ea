"""The one table of value types, and the immutable Python classes made from it.

Each row of :data:`VALUE_TABLE` is (kind, shape, NumPy dtype); names, aliases,
Numba types, data models, typing and lowering are all generated from it, so a
new value type is one row.  Storage follows Warp: matrices row-major, quat
(x, y, z, w), transform p (3) then q (4).

The Python classes are real values: construct, index, ``+ - * / @``, unary
``-``, ``==``, ``repr``, ``np.asarray(v)`` and hashing.  Their arithmetic runs
the same component formulas (:mod:`numba_sim.algebra`) as compiled code.
"""

import threading
from dataclasses import dataclass

import numpy as np

KIND_VEC, KIND_MAT, KIND_QUAT, KIND_TRANSFORM = "vec", "mat", "quat", "transform"

_DTYPE_SUFFIXES = {
    np.dtype(np.float32): ("", "f"),
    np.dtype(np.float64): ("d",),
    np.dtype(np.int8): ("b",),
    np.dtype(np.uint8): ("ub",),
    np.dtype(np.int16): ("s",),
    np.dtype(np.uint16): ("us",),
    np.dtype(np.int32): ("i",),
    np.dtype(np.uint32): ("ui",),
    np.dtype(np.int64): ("l",),
    np.dtype(np.uint64): ("ul",),
}
"""The scalar types of vectors and matrices (Warp's, float16 aside), with the suffixes of
their names (Warp's: ``vec3ub`` is a vector of uint8)."""

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
"""The scalar types of quaternions and transforms (and of the spatial types)."""

COMPONENT_NAMES = "xyzw"

SPATIAL_STEMS = {KIND_VEC: ((6,), "spatial_vector"), KIND_MAT: ((6, 6), "spatial_matrix")}
"""Warp's names of the float 6-vectors and 6x6 matrices (``spatial_vector``,
``spatial_matrixd``)."""

TRANSFORM_ALIAS = "spatial_transform"
"""Older Warp's name of the transform, kept as an alias (``spatial_transformd``)."""


@dataclass(frozen=True)
class ValueSpec:
    """Describes one value type: its kind, storage shape and scalar dtype."""

    kind: str
    shape: tuple
    dtype: np.dtype

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def names(self):
        """Public name first, then aliases (``vec3``, ``vec3f``)."""
        suffixes = _DTYPE_SUFFIXES[self.dtype]
        spatial = SPATIAL_STEMS.get(self.kind)
        if spatial is not None and spatial[0] == self.shape and self.is_float:
            stem = spatial[1]
        elif self.kind == KIND_VEC:
            stem = f"vec{self.shape[0]}"
        elif self.kind == KIND_MAT:
            stem = f"mat{self.shape[0]}{self.shape[1]}"
        else:
            stem = self.kind
        names = tuple(stem + suffix for suffix in suffixes)
        if self.kind == KIND_TRANSFORM:
            names += tuple(TRANSFORM_ALIAS + suffix for suffix in suffixes)
        return names

    @property
    def name(self):
        return self.names[0]

    @property
    def scalar_type(self):
        return self.dtype.type

    @property
    def is_float(self):
        return self.dtype.kind == "f"

    @property
    def is_square(self):
        return self.kind == KIND_MAT and self.shape[0] == self.shape[1]

    @property
    def length(self):
        """``len(v)``: components of a vector-like value, rows of a matrix."""
        return self.shape[0]


def _build_table():
    """Warp's predefined value types (the aliases of warp/types.py, float16 aside)."""
    f32, f64 = FLOAT_DTYPES
    table = [ValueSpec(KIND_VEC, (n,), dt) for dt in _DTYPE_SUFFIXES for n in (2, 3, 4)]
    table += [ValueSpec(KIND_MAT, (n, n), dt) for dt in (f32, f64) for n in (2, 3, 4)]
    table += [ValueSpec(KIND_QUAT, (4,), dt) for dt in (f32, f64)]
    table += [ValueSpec(KIND_TRANSFORM, (7,), dt) for dt in (f32, f64)]
    table += [ValueSpec(KIND_VEC, (6,), dt) for dt in (f32, f64)]
    table += [ValueSpec(KIND_MAT, (6, 6), dt) for dt in (f32, f64)]
    return tuple(table)


VALUE_TABLE = _build_table()
"""Warp's predefined value types; vectors and matrices of other sizes join :data:`SPECS`
on demand (:func:`vector`, :func:`matrix`)."""

SPECS = {(spec.kind, spec.shape, spec.dtype): spec for spec in VALUE_TABLE}
"""Every value type made so far, keyed by (kind, shape, dtype): the table's, then the
generic vectors and matrices made on demand."""

SPEC_BY_NAME = {spec.name: spec for spec in VALUE_TABLE}
"""The spec of each value type's name (the generic ones join when made)."""

_NEW_SPEC_LISTENERS = []
_generic_lock = threading.RLock()


def on_new_spec(listener):
    """Call ``listener(spec)`` for every value type made on demand from now on (the typing
    and the constructor of a new vector or matrix type are made this way)."""
    _NEW_SPEC_LISTENERS.append(listener)
    return listener


def find_spec(kind, dtype, shape):
    """The spec of *kind* with *dtype* and *shape*, or None when there is no such type.

    Vectors and matrices of any size and of every scalar type of :data:`_DTYPE_SUFFIXES`
    exist: one missing so far is made here (and declared to Numba by the listeners).
    """
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        return None
    shape = tuple(shape)
    spec = SPECS.get((kind, shape, dtype))
    if spec is not None or kind not in (KIND_VEC, KIND_MAT):
        return spec
    valid_shape = len(shape) == (1 if kind == KIND_VEC else 2) and all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 1 for n in shape)
    if not valid_shape or dtype not in _DTYPE_SUFFIXES:
        return None
    return _make_generic(ValueSpec(kind, tuple(int(n) for n in shape), dtype))


def _make_generic(spec):
    with _generic_lock:
        key = (spec.kind, spec.shape, spec.dtype)
        if key in SPECS:
            return SPECS[key]
        cls = CLASSES[spec] = _make_class(spec, module=__name__)
        globals()[spec.name] = cls  # reachable by name, as Numba wants its typing keys
        for listener in _NEW_SPEC_LISTENERS:
            listener(spec)
        SPEC_BY_NAME[spec.name] = spec
        SPECS[key] = spec  # published last: other threads see it complete
        return spec


def vec_spec(n, dtype):
    return find_spec(KIND_VEC, dtype, (n,))


def attribute_slice(spec, name):
    """Where attribute *name* of *spec* lives: (start, stop, result spec or None).

    Vectors and quaternions have ``.x .y .z .w`` (a scalar, result spec None);
    transforms have ``.p`` (vec3) and ``.q`` (quat).  None if no such attribute.
    """
    if spec.kind in (KIND_VEC, KIND_QUAT):
        index = COMPONENT_NAMES.find(name)
        if len(name) == 1 and 0 <= index < spec.size:
            return index, index + 1, None
    elif spec.kind == KIND_TRANSFORM:
        if name == "p":
            return 0, 3, vec_spec(3, spec.dtype)
        if name == "q":
            return 3, 7, find_spec(KIND_QUAT, spec.dtype, (4,))
    return None


def row_spec(spec):
    """The vector type of one row of a matrix spec."""
    return vec_spec(spec.shape[1], spec.dtype)


# --------------------------------------------------------------------------
# Python classes


def _operations():
    """The operation table, which runs the value classes' constructors and operators in
    Python.  The one import cycle of the value-type family: operations.py types its formulas
    over these classes (typing/value_types.py), so it is imported when first used."""
    from numba_sim import operations

    return operations


def _getitem(value, index):
    spec = value.spec
    storage = value._storage
    if isinstance(index, tuple):
        if spec.kind != "mat" or len(index) != 2:
            raise IndexError(f"{spec.name} takes a single index, not {index!r}")
        return storage[_check_index(index[0], spec.shape[0], spec), _check_index(index[1], spec.shape[1], spec)]
    i = _check_index(index, spec.shape[0], spec)
    if spec.kind == "mat":
        return CLASSES[row_spec(spec)]._from_components(list(storage[i]))
    return storage[i]


def _check_index(index, bound, spec):
    index = int(index)
    if not -bound <= index < bound:
        raise IndexError(f"index {index} is out of range for {spec.name} (size {bound})")
    return index


def _getattr(value, name):
    if name.startswith("_"):
        raise AttributeError(name)
    found = attribute_slice(value.spec, name)
    if found is None:
        raise AttributeError(f"{value.spec.name} has no attribute {name!r}")
    start, stop, result_spec = found
    flat = value._storage.reshape(-1)
    if result_spec is None:
        return flat[start]
    return CLASSES[result_spec]._from_components(list(flat[start:stop]))



class Value:
    """Base of all value-type classes; instances are immutable."""

    __slots__ = ("_storage",)
    spec: ValueSpec = None
    __array_ufunc__ = None  # NumPy scalars defer to our operators (np.float32(2) * v is a vec)

    def __new__(cls, *args):
        return _operations().construct_python(cls, args)

    @classmethod
    def _from_components(cls, components):
        """Build an instance from flat storage components (no checks)."""
        self = object.__new__(cls)
        storage = np.array(components, dtype=cls.spec.dtype).reshape(cls.spec.shape)
        storage.flags.writeable = False
        self._storage = storage
        return self

    def _components(self):
        """Flat storage as a list of NumPy scalars."""
        return list(self._storage.reshape(-1))

    # -- container protocol
    def __len__(self):
        return self.spec.length

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, index):
        return _getitem(self, index)

    def __getattr__(self, name):
        return _getattr(self, name)

    def __setattr__(self, name, value):
        if name == "_storage" and not hasattr(self, "_storage"):
            object.__setattr__(self, name, value)
            return
        raise AttributeError(
            f"{type(self).__name__} values are immutable; build a new value instead"
        )

    def __array__(self, dtype=None, copy=None):
        storage = self._storage
        if dtype is not None:
            return storage.astype(dtype)
        return storage.copy() if copy else storage

    def __repr__(self):
        def text(items):
            return ", ".join(str(x) for x in items)  # NumPy's shortest round-trip digits

        if self.spec.kind == KIND_MAT:
            rows = ", ".join(f"({text(row)})" for row in self._storage)
            return f"{type(self).__name__}({rows})"
        return f"{type(self).__name__}({text(self._storage)})"

    def __hash__(self):
        return hash((self.spec.name, self._storage.tobytes()))

    def __reduce__(self):
        spec = self.spec
        flat = self._storage.reshape(-1).tolist()
        return _unpickle, (spec.kind, spec.shape, spec.dtype.str, flat)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _install_operators():
    """Route the Python operators through :mod:`numba_sim.operations`."""
    import operator

    binary = {
        "add": operator.add, "sub": operator.sub, "mul": operator.mul,
        "truediv": operator.truediv, "matmul": operator.matmul,
        "eq": operator.eq, "ne": operator.ne,
    }

    def make_binary(op):
        def method(self, other):
            return _operations().apply_python(op, (self, other))

        def reflected(self, other):
            return _operations().apply_python(op, (other, self))

        return method, reflected

    for name, op in binary.items():
        method, reflected = make_binary(op)
        method.__name__ = f"__{name}__"
        setattr(Value, method.__name__, method)
        if name not in ("eq", "ne"):
            reflected.__name__ = f"__r{name}__"
            setattr(Value, reflected.__name__, reflected)

    for name, op in {"neg": operator.neg, "pos": operator.pos}.items():
        def method(self, _op=op):
            return _operations().apply_python(_op, (self,))

        method.__name__ = f"__{name}__"
        setattr(Value, method.__name__, method)


_install_operators()


def _make_class(spec, module="numba_sim"):
    """The class of *spec*: Warp's predefined types live in ``numba_sim``, vectors and
    matrices made on demand in ``numba_sim.types`` (``numba_sim.types.vec5``)."""
    doc = (f"Warp's ``{spec.name}``: {spec.kind} of shape {spec.shape}, "
           f"{spec.dtype.name} storage.")
    return type(spec.name, (Value,), {"__slots__": (), "spec": spec, "__doc__": doc,
                                      "__module__": module})


CLASSES = {spec: _make_class(spec) for spec in VALUE_TABLE}
"""The Python class of each spec (generic vectors and matrices join when made)."""


def _unpickle(kind, shape, dtype, components):
    return CLASSES[find_spec(kind, dtype, shape)]._from_components(components)

PUBLIC_NAMES = {name: CLASSES[spec] for spec in VALUE_TABLE for name in spec.names}
"""Every public name and alias (``vec3``, ``vec3f``, ...) to its class."""


# --------------------------------------------------------------------------
# Type factories (Warp's warp.types.vector, matrix, quaternion, transformation)

_PYTHON_SCALARS = {float: np.dtype(np.float32), int: np.dtype(np.int32)}
"""Python's ``float`` and ``int`` as a dtype mean float32 and int32 (Warp's rule)."""


def scalar_dtype(dtype, parameter="dtype", allowed=None):
    """The NumPy dtype named by *dtype* (``sim.float32``, ``np.float64``, a NumPy dtype,
    a Numba scalar type, Python's ``float`` / ``int``), checked against *allowed*
    (default: the scalar types of vectors and matrices); else a TypeError naming
    *parameter*."""
    allowed = tuple(_DTYPE_SUFFIXES) if allowed is None else allowed
    resolved = _PYTHON_SCALARS.get(dtype) if isinstance(dtype, type) else None
    if resolved is None and not isinstance(dtype, (bool, int, float, str)) and dtype is not None:
        try:
            resolved = np.dtype(dtype)
        except TypeError:
            try:  # a Numba scalar type (numba.float32) names its NumPy type
                resolved = np.dtype(str(dtype)) if hasattr(dtype, "bitwidth") else None
            except TypeError:
                resolved = None
    if resolved is None or resolved not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(f"{parameter} must be one of the scalar types {names} (or Python's float "
                        f"/ int for float32 / int32), not {dtype!r}")
    return resolved


def _positive_int(value, parameter):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise TypeError(f"{parameter} must be a positive int, not {value!r}")
    return int(value)


def vector(length, dtype=float):
    """The vector type of *length* components of *dtype* (Warp's ``warp.types.vector``).

    Any length and every scalar type of Warp's vectors (int8 ... uint64, float32,
    float64) exist; the same arguments give the same class each time, and Warp's
    predefined types come back as themselves (``vector(3, float32) is vec3``,
    ``vector(6, float64) is spatial_vectord``).
    """
    length = _positive_int(length, "length")
    return CLASSES[find_spec(KIND_VEC, scalar_dtype(dtype), (length,))]


def matrix(shape, dtype=float):
    """The matrix type of *shape* ``(rows, cols)`` of *dtype* (Warp's ``warp.types.matrix``);
    rows and columns of any size, square or not, and every scalar type of :func:`vector`."""
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise TypeError(f"shape must be a (rows, cols) tuple, not {shape!r}")
    rows, cols = (_positive_int(n, f"shape[{i}]") for i, n in enumerate(shape))
    return CLASSES[find_spec(KIND_MAT, scalar_dtype(dtype), (rows, cols))]


def quaternion(dtype=float):
    """The quaternion type of *dtype*, float32 or float64 (Warp's ``warp.types.quaternion``)."""
    return CLASSES[find_spec(KIND_QUAT, scalar_dtype(dtype, allowed=FLOAT_DTYPES), (4,))]


def transformation(dtype=float):
    """The transform type of *dtype*, float32 or float64 (Warp's ``warp.types.transformation``)."""
    return CLASSES[find_spec(KIND_TRANSFORM, scalar_dtype(dtype, allowed=FLOAT_DTYPES), (7,))]
