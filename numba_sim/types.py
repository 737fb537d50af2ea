"""The one table of value types, and the immutable Python classes made from it.

Each row of :data:`VALUE_TABLE` is (kind, shape, NumPy dtype); names, aliases,
Numba types, data models, typing and lowering are all generated from it, so a
new value type is one row.  Storage follows Warp: matrices row-major, quat
(x, y, z, w), transform p (3) then q (4).

The Python classes are real values: construct, index, ``+ - * / @``, unary
``-``, ``==``, ``repr``, ``np.asarray(v)`` and hashing.  Their arithmetic runs
the same component formulas (:mod:`numba_sim.algebra`) as compiled code.
"""

from dataclasses import dataclass

import numpy as np

KIND_VEC, KIND_MAT, KIND_QUAT, KIND_TRANSFORM = "vec", "mat", "quat", "transform"

_DTYPE_SUFFIXES = {
    np.dtype(np.float32): ("", "f"),
    np.dtype(np.float64): ("d",),
    np.dtype(np.int32): ("i",),
}

COMPONENT_NAMES = "xyzw"


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
        if self.kind == KIND_VEC:
            stem = f"vec{self.shape[0]}"
        elif self.kind == KIND_MAT:
            stem = f"mat{self.shape[0]}{self.shape[1]}"
        else:
            stem = self.kind
        return tuple(stem + suffix for suffix in suffixes)

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
    def length(self):
        """``len(v)``: components of a vector-like value, rows of a matrix."""
        return self.shape[0]


def _build_table():
    f32, f64, i32 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)
    table = [ValueSpec(KIND_VEC, (n,), dt) for dt in (f32, f64, i32) for n in (2, 3, 4)]
    table += [ValueSpec(KIND_MAT, (n, n), dt) for dt in (f32, f64) for n in (2, 3, 4)]
    table += [ValueSpec(KIND_QUAT, (4,), dt) for dt in (f32, f64)]
    table += [ValueSpec(KIND_TRANSFORM, (7,), dt) for dt in (f32, f64)]
    return tuple(table)


VALUE_TABLE = _build_table()

SPEC_BY_NAME = {spec.name: spec for spec in VALUE_TABLE}


def find_spec(kind, dtype, shape):
    """The spec of *kind* with *dtype* and *shape*, or None."""
    dtype = np.dtype(dtype)
    for spec in VALUE_TABLE:
        if spec.kind == kind and spec.dtype == dtype and spec.shape == tuple(shape):
            return spec
    return None


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
        return type(self)._from_components, (self._storage.reshape(-1).tolist(),)

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


def _make_class(spec):
    doc = (f"Warp's ``{spec.name}``: {spec.kind} of shape {spec.shape}, "
           f"{spec.dtype.name} storage.")
    return type(spec.name, (Value,), {"__slots__": (), "spec": spec, "__doc__": doc,
                                      "__module__": "numba_sim"})


CLASSES = {spec: _make_class(spec) for spec in VALUE_TABLE}
"""The Python class of each spec."""

PUBLIC_NAMES = {name: CLASSES[spec] for spec in VALUE_TABLE for name in spec.names}
"""Every public name and alias (``vec3``, ``vec3f``, ...) to its class."""
