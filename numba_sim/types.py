"""The one table of value types, and the Python classes made from it.

Each row of :data:`VALUE_TABLE` is (kind, shape, NumPy dtype); names, aliases,
Numba types, data models, typing and lowering are all generated from it, so a
new value type is one row.  Storage follows Warp: matrices row-major, quat
(x, y, z, w), transform p (3) then q (4).

The Python classes behave as Warp's: construct (from scalars, a sequence, a NumPy
array, rows), index and slice, assign components, rows and slices in place (so they are
not hashable), ``+ - * / % @``, unary ``-``, ``==`` against any sequence, Warp's
``repr`` / ``str``, ``np.asarray(v)``.  Their arithmetic runs the same component formulas
(:mod:`numba_sim.algebra`) as compiled code.
"""

import ctypes
import sys
import threading
from dataclasses import dataclass
import typing
from typing import Generic, Literal, TypeVar, get_args, get_origin

import numpy as np

from numba_sim import scalar_rule, scalars

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
    np.dtype(np.bool_): ("bool",),
}
"""The scalar types of vectors and matrices (Warp's, float16 aside), with the suffixes of
their names (Warp's: ``vec3ub`` is a vector of uint8).  Warp predefines no vector or
matrix of bool: ``vector(3, bool)`` makes one on demand (``vec3bool``)."""

BOOL = np.dtype(np.bool_)

ALL_SCALARS = tuple(_DTYPE_SUFFIXES) + (np.dtype(np.float16),)
"""Every scalar type numba_sim names (float16 as storage only)."""

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
    def warp_name(self):
        """The name Warp prints (``vec3f``, ``mat22d``, ``quatf``)."""
        return self.names[len(_DTYPE_SUFFIXES[self.dtype]) - 1]

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
    table = [ValueSpec(KIND_VEC, (n,), dt) for dt in _DTYPE_SUFFIXES if dt != BOOL
             for n in (2, 3, 4)]
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
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in shape)
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


def _builtin(name):
    """The public builtin *name* of the package (``mod``), found when first used: the
    builtins are declared after this module (the same cycle as :func:`_operations`)."""
    return getattr(sys.modules[__name__.rpartition(".")[0]], name)


def _is_scalar(x):
    return isinstance(x, (int, float, np.number, np.bool_))


def _is_sequence(x):
    return hasattr(x, "__len__") and not isinstance(x, (str, bytes, Value)) and np.ndim(x) > 0


def _scalar_name(dtype):
    return "bool" if dtype.kind == "b" else dtype.name


def _store_scalar(spec, x):
    """*x* as a component of *spec* (a NumPy scalar); ints wrap to the width of an int
    dtype, as Warp's ctypes storage does.  TypeError (Warp's words) for a non-scalar, or a
    float stored into an int type."""
    if not _is_scalar(x) or (spec.dtype.kind in "iu" and not isinstance(x, (int, np.integer,
                                                                            np.bool_))):
        raise TypeError(f"Expected to assign a `{_scalar_name(spec.dtype)}` value but got "
                        f"`{type(x).__name__}` instead")
    if spec.dtype.kind == "b":
        return np.bool_(x)
    return scalar_rule.convert(int(x) if isinstance(x, (np.integer, np.bool_)) else x,
                               spec.scalar_type)


class ArgumentCountError(ValueError, TypeError):
    """A constructor given a wrong number of scalars: Warp raises ValueError, compiled code
    a TypeError (a typing error); either catches it."""


def _constructor_args(spec, args):
    """Warp's Python constructor forms brought to the operation table's: one sequence
    (tuple, list, NumPy array) is unpacked, a matrix's rows given as sequences are flattened,
    Python ints wrap to an int type, and a wrong count of scalars is Warp's ValueError.
    A transform takes (p, q) as sequences too, and a lone sequence is its p (Warp's); with
    no argument it is the identity (Warp's Python scope; its kernels give zeros)."""
    if spec.kind == KIND_TRANSFORM and not args:
        return (0, 0, 0, 0, 0, 0, 1)
    if spec.kind == KIND_TRANSFORM and 1 <= len(args) <= 2 and (
            _is_sequence(args[0]) or (isinstance(args[0], Value) and args[0].spec.kind == KIND_VEC
                                      and len(args) == 2 and not isinstance(args[1], Value))):
        p, q = (args + ((0, 0, 0, 1),))[:2]
        return (CLASSES[vec_spec(3, spec.dtype)](p),
                q if isinstance(q, Value) else CLASSES[find_spec(KIND_QUAT, spec.dtype, (4,))](q))
    if len(args) == 1 and _is_sequence(args[0]):
        return _constructor_args(spec, tuple(args[0]))
    if spec.kind == KIND_MAT and len(args) == spec.shape[0] != spec.size \
            and any(_is_sequence(a) for a in args):
        for row in args:
            if not _is_sequence(row) or len(row) != spec.shape[1]:
                raise TypeError(f"Invalid argument in matrix constructor, expected row of length "
                                f"{spec.shape[1]}, got {row}")
        args = tuple(x for row in args for x in row)
    if all(_is_scalar(a) for a in args):
        if spec.kind in (KIND_VEC, KIND_MAT) and len(args) not in (0, 1, spec.size):
            kind, order = ("vector", "") if spec.kind == KIND_VEC else ("matrix", " (by rows)")
            raise ArgumentCountError(
                f"{spec.name}() takes no argument (zeros), one scalar (fill) or {spec.size} "
                f"scalars{order}. Invalid number of arguments in {kind} constructor, expected "
                f"{spec.size} elements, got {len(args)}")
        if spec.dtype.kind != "f":
            args = tuple(_store_scalar(spec, a) if isinstance(a, (int, np.bool_)) else a
                         for a in args)
    return args


def sliced_shape(shape):
    """The shape of a slice of a value: *shape*, but a matrix with no rows or no columns is
    0x0 (Warp's rule: ``m[4:]`` of a 4x4 matrix is a ``matrix((0, 0))``)."""
    return (0, 0) if len(shape) == 2 and 0 in shape else tuple(shape)


def _wrap(spec, part):
    """A piece of *spec*'s storage as Warp returns it: a scalar, or a new vector or matrix
    of the piece's shape."""
    if part.ndim == 0:
        return part[()]
    kind = KIND_VEC if part.ndim == 1 else KIND_MAT
    return CLASSES[find_spec(kind, spec.dtype, sliced_shape(part.shape))]._from_components(
        part.reshape(-1))


def _index(index, bound, spec):
    index = int(index)
    if not -bound <= index < bound:
        raise IndexError(f"index {index} is out of range for {spec.name} (size {bound})")
    return index


def _key(value, key):
    """*key* checked as Warp checks it: a vector takes an int or a slice, a matrix an int,
    a slice or a pair of them; KeyError (Warp's words) otherwise."""
    spec = value.spec
    if spec.kind != KIND_MAT:
        if isinstance(key, slice):
            return key
        if isinstance(key, (int, np.integer)):
            return _index(key, spec.length, spec)
        raise KeyError(f"Invalid key {key}, expected int or slice")
    if isinstance(key, tuple):
        if len(key) != 2:
            raise KeyError(f"Invalid key, expected one or two indices, got {len(key)}")
        return tuple(k if isinstance(k, slice) else _key_part(k, n, spec, key)
                     for k, n in zip(key, spec.shape))
    if isinstance(key, slice):
        return key
    return _key_part(key, spec.shape[0], spec, key)


def _key_part(k, bound, spec, key):
    if not isinstance(k, (int, np.integer)):
        raise KeyError(f"Invalid key {key}, expected int or pair of ints")
    return _index(k, bound, spec)


def _assign(value, key, new):
    """``value[key] = new`` with Warp's checks and words."""
    spec = value.spec
    key = _key(value, key)
    target = value._storage[key]
    if np.ndim(target) == 0 or _is_scalar(new):
        value._storage[key] = _store_scalar(spec, new)
        return
    if not hasattr(new, "__iter__"):
        raise TypeError(f"Expected to assign a slice from a sequence of values but got "
                        f"`{type(new).__name__}` instead")
    items = list(new)
    if np.ndim(target) == 2:  # matrix rows: one sequence per row
        items = [x for row in items for x in (row if _is_sequence(row) or isinstance(row, Value)
                                              else (row,))]
    for x in items:
        if not _is_scalar(x):
            raise TypeError(f"Expected to assign a slice from a sequence of "
                            f"`{_scalar_name(spec.dtype)}` values but got `{type(x).__name__}` "
                            "instead")
    if len(items) != np.size(target):
        raise ValueError(f"Can only assign sequence of same size: {spec.name}[{key!r}] has "
                         f"{np.size(target)} components, got {len(items)}")
    value._storage[key] = np.array([_store_scalar(spec, x) for x in items],
                                   dtype=spec.dtype).reshape(np.shape(target))


def _getattr(value, name):
    if name.startswith("_"):
        raise AttributeError(name)
    found = attribute_slice(value.spec, name)
    if found is None:
        raise AttributeError(f"'{value.spec.warp_name}' object has no attribute '{name}'")
    start, stop, result_spec = found
    flat = value._storage.reshape(-1)
    if result_spec is None:
        return flat[start]
    return CLASSES[result_spec]._from_components(flat[start:stop])


TYPE_KEYWORDS = {KIND_VEC: ("length", "dtype"), KIND_MAT: ("shape", "dtype")}
"""The keywords of Warp's vector() / matrix() that a typed constructor (``mat32d(m,
shape=(3, 2))``) also takes, as Warp does, when they say what the type already says."""


def drop_type_keywords(spec, name, kwargs):
    """*kwargs* without the keywords of :data:`TYPE_KEYWORDS` (checked against *spec*, the
    type called as *name*); a TypeError for one that says something else (Warp's sentence)."""
    allowed = TYPE_KEYWORDS.get(spec.kind, ("dtype",))
    rest = {}
    for key, value in kwargs.items():
        if key not in allowed:
            rest[key] = value
            continue
        if key == "dtype":
            try:
                same = scalar_dtype(value) == spec.dtype
            except TypeError:
                same = False
            expected = spec.dtype.name
        else:
            expected = spec.shape[0] if key == "length" else spec.shape
            try:
                same = (tuple(int(x) for x in value) if key == "shape" else int(value)) \
                    == expected
            except (TypeError, ValueError):
                same = False
        if not same:
            raise TypeError(f"{name}(..., {key}={value!r}): a {name} has {key} {expected}; "
                            f"Remove the extraneous `{key}` parameter when calling the "
                            f"templated version of `{name}()`")
    return rest


def _scalar_repr(dtype, x):
    """A component as Warp prints it: int32, float32 and bool bare, others named
    (``float64(1.0)``)."""
    plain = x.item()
    if dtype in (np.dtype(np.int32), np.dtype(np.float32), np.dtype(np.bool_)):
        return repr(plain)
    return f"{dtype.name}({plain!r})"


class Value:
    """Base of all value-type classes.  As Warp's, instances are mutable (``v[0] = 1.0``,
    ``v.x = 1.0``, ``m[0, 1] = 2.0``, ``m[1] = row``) and so not hashable."""

    __slots__ = ("_storage",)
    spec: ValueSpec = None
    __array_ufunc__ = None  # NumPy scalars defer to our operators (np.float32(2) * v is a vec)
    __hash__ = None

    def __new__(cls, *args, **kwargs):
        kwargs = drop_type_keywords(cls.spec, cls.__name__, kwargs)
        if kwargs:  # Warp's transform(p=..., q=...), transform(p, q=...)
            unknown = [k for k in kwargs if k not in ("p", "q")]
            if cls.spec.kind == KIND_TRANSFORM and unknown:  # Warp's (Python's) sentence
                raise TypeError(f"got an unexpected keyword argument {unknown[0]!r}")
            if cls.spec.kind != KIND_TRANSFORM or len(args) > 1:
                raise TypeError(f"{cls.__name__}() takes no keyword arguments except a "
                                f"transform's p and q (after at most p), not "
                                f"{', '.join(kwargs)}")
            bound = dict(zip(("p", "q"), args))
            if set(bound) & set(kwargs):
                raise TypeError(f"{cls.__name__}() got multiple values for "
                                f"{', '.join(sorted(set(bound) & set(kwargs)))}")
            bound.update(kwargs)
            args = (bound.get("p", (0, 0, 0)), bound.get("q", (0, 0, 0, 1)))
        return _operations().construct_python(cls, _constructor_args(cls.spec, args))

    @classmethod
    def _from_components(cls, components):
        """Build an instance from flat storage components (no checks)."""
        self = object.__new__(cls)
        object.__setattr__(self, "_storage", np.array(components, dtype=cls.spec.dtype)
                           .reshape(cls.spec.shape))
        return self

    @classmethod
    def from_ptr(cls, ptr):
        """A new value holding a copy of the bytes at address *ptr* (Warp's ``from_ptr``)."""
        if not ptr:
            raise RuntimeError("NULL pointer exception")
        size = cls.spec.size * cls.spec.dtype.itemsize
        raw = (ctypes.c_char * size).from_address(int(ptr))
        return cls._from_components(np.frombuffer(raw, dtype=cls.spec.dtype).copy())

    def _components(self):
        """Flat storage as a list of NumPy scalars."""
        return list(self._storage.reshape(-1))

    # -- container protocol
    def __len__(self):
        return self.spec.length

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, key):
        return _wrap(self.spec, self._storage[_key(self, key)])

    def __setitem__(self, key, new):
        _assign(self, key, new)

    def __getattr__(self, name):
        return _getattr(self, name)

    def __setattr__(self, name, new):
        found = attribute_slice(self.spec, name)
        if found is None:
            if name and not name.strip(COMPONENT_NAMES):  # asks for a component: Warp's error
                raise AttributeError(f"'{self.spec.warp_name}' object has no attribute '{name}'")
            object.__setattr__(self, name, new)  # other names are attributes, as in Warp
            return
        start, stop, _ = found
        _assign(self, slice(start, stop) if stop - start > 1 else start, new)

    def __array__(self, dtype=None, copy=None):
        storage = self._storage
        if dtype is not None:
            return storage.astype(dtype)
        return storage.copy() if copy else storage

    def __bytes__(self):
        """The raw storage, as ``bytes()`` of Warp's ctypes values."""
        return self._storage.tobytes()

    def __eq__(self, other):
        """Warp's Python equality: same length and equal components, against any sequence."""
        if not hasattr(other, "__len__") or isinstance(other, str) or len(other) != len(self):
            return False
        return all(not (a != b) for a, b in zip(self, other))

    def __ne__(self, other):
        return not self == other

    def __mod__(self, other):
        return _builtin("mod")(self, other)

    def __rmod__(self, other):
        return _builtin("mod")(other, self)

    def __repr__(self):
        items = ", ".join(_scalar_repr(self.spec.dtype, x) for x in self._storage.reshape(-1))
        if self.spec.kind == KIND_MAT and self.spec.size:
            rows = np.array(items.split(", "), dtype=object).reshape(self.spec.shape)
            items = ", ".join(f"[{', '.join(row)}]" for row in rows)
        return f"{self.spec.warp_name}([{items}])"

    def __str__(self):
        """Warp's: ``[1.0, 2.0]``; a matrix's rows one a line."""
        if self.spec.kind == KIND_MAT:
            return "[" + ",\n ".join(str(row) for row in self) + "]"
        return f"[{', '.join(str(x.item()) for x in self._storage)}]"

    def __reduce__(self):
        spec = self.spec
        flat = self._storage.reshape(-1).tolist()
        return _unpickle, (spec.kind, spec.shape, spec.dtype.str, flat)

    def __copy__(self):
        return type(self)._from_components(self._storage.reshape(-1))

    def __deepcopy__(self, memo):
        return self.__copy__()


class MatrixValue(Value):
    """Base of the matrix classes: Warp's row and column access."""

    __slots__ = ()

    def _line(self, axis, index):
        bound = self.spec.shape[axis]
        if not isinstance(index, (int, np.integer)) or not -bound <= index < bound:
            raise IndexError(f"Invalid {('row', 'column')[axis]} index")
        return (int(index), slice(None)) if axis == 0 else (slice(None), int(index))

    def get_row(self, r):
        """Row *r* as a new vector."""
        return self[self._line(0, r)]

    def get_col(self, c):
        """Column *c* as a new vector."""
        return self[self._line(1, c)]

    def set_row(self, r, v):
        """Set row *r* to *v* (a scalar for every component, or one value per column)."""
        self[self._line(0, r)] = v

    def set_col(self, c, v):
        """Set column *c* to *v* (a scalar for every component, or one value per row)."""
        self[self._line(1, c)] = v


def _install_operators():
    """Route the Python operators through :mod:`numba_sim.operations`."""
    import operator

    binary = {
        "add": operator.add, "sub": operator.sub, "mul": operator.mul,
        "truediv": operator.truediv, "matmul": operator.matmul,
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
        reflected.__name__ = f"__r{name}__"
        setattr(Value, reflected.__name__, reflected)

    for name, op in {"neg": operator.neg, "pos": operator.pos}.items():
        def method(self, _op=op):
            return _operations().apply_python(_op, (self,))

        method.__name__ = f"__{name}__"
        setattr(Value, method.__name__, method)


_install_operators()


_SCALAR_CLASSES = {np.dtype(t): t for t in scalars.SCALAR_TYPES + (scalars.bool,)}


def _make_class(spec, module="numba_sim"):
    """The class of *spec*: Warp's predefined types live in ``numba_sim``, vectors and
    matrices made on demand in ``numba_sim.types`` (``numba_sim.types.vec5``).  Warp's class
    attributes, which Warp code reads: ``_shape_``, ``_length_`` (the components) and
    ``_wp_scalar_type_`` (the scalar type, ``sim.float32``...)."""
    doc = (f"Warp's ``{spec.name}``: {spec.kind} of shape {spec.shape}, "
           f"{spec.dtype.name} storage.")
    base = MatrixValue if spec.kind == KIND_MAT else Value
    return type(spec.name, (base,), {
        "spec": spec, "__doc__": doc, "__module__": module, "_shape_": spec.shape,
        "_length_": spec.size, "_wp_scalar_type_": _SCALAR_CLASSES[spec.dtype]})


CLASSES = {spec: _make_class(spec) for spec in VALUE_TABLE}
"""The Python class of each spec (generic vectors and matrices join when made)."""


def _unpickle(kind, shape, dtype, components):
    return CLASSES[find_spec(kind, dtype, shape)]._from_components(components)

PUBLIC_NAMES = {name: CLASSES[spec] for spec in VALUE_TABLE for name in spec.names}
"""Every public name and alias (``vec3``, ``vec3f``, ...) to its class."""


# --------------------------------------------------------------------------
# Type factories (Warp's warp.types.vector, matrix, quaternion, transformation)

_PYTHON_SCALARS = {float: np.dtype(np.float32), int: np.dtype(np.int32), bool: BOOL}
"""Python's ``float``, ``int`` and ``bool`` as a dtype mean float32, int32 and bool (Warp's
rule)."""


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


def _count(value, parameter):
    """A vector's length or a matrix's rows / columns: an int >= 0 (Warp has empty vectors
    and matrices: the result of slicing past the end, ``v[4:]``)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise TypeError(f"{parameter} must be an int >= 0, not {value!r}")
    return int(value)


Int = TypeVar("Int", int, scalars.int8, scalars.uint8, scalars.int16, scalars.uint16,
              scalars.int32, scalars.uint32, scalars.int64, scalars.uint64)
"""Warp's ``Int``: annotates a parameter of a generic func or kernel that takes any int type
(``x: sim.Int``, ``v: sim.types.vector(3, sim.Int)``)."""
Float = TypeVar("Float", float, scalars.float32, scalars.float64)
"""Warp's ``Float``: any float type (float16 is out of scope)."""
Scalar = TypeVar("Scalar", *Int.__constraints__, *Float.__constraints__)
"""Warp's ``Scalar``: any int or float type."""


def generic_scalar_accepts(type_var, dtype):
    """Whether the TypeVar *type_var* (``Int``, ``Float``, ``Scalar``, or one without
    constraints: any scalar) takes scalars of NumPy dtype *dtype*."""
    constraints = type_var.__constraints__
    return not constraints or np.dtype(dtype) in {
        np.dtype(np.float32) if c is float else np.dtype(np.int32) if c is int else np.dtype(c)
        for c in constraints}


@dataclass(frozen=True)
class GenericValue:
    """A vector or matrix type of a generic scalar type (Warp's ``vector(3, Float)``,
    ``matrix((2, 2), Scalar)``): an annotation of a generic func or kernel parameter, which
    takes the values of that kind and shape whose scalar type the TypeVar allows."""

    kind: str
    shape: tuple
    dtype: TypeVar

    def accepts(self, spec):
        return spec.kind == self.kind and spec.shape == self.shape \
            and generic_scalar_accepts(self.dtype, spec.dtype)

    def __repr__(self):
        if self.kind == KIND_VEC:
            return f"vector(length={self.shape[0]}, dtype={self.dtype.__name__})"
        return f"matrix(shape={self.shape}, dtype={self.dtype.__name__})"


def is_generic_annotation(annotation):
    """Whether *annotation* leaves a parameter's type to the argument: missing, ``Any``,
    a TypeVar (``sim.Float``) or a :class:`GenericValue`."""
    return annotation is None or annotation is typing.Any \
        or isinstance(annotation, (TypeVar, GenericValue))


def vector(length, dtype=float):
    """The vector type of *length* components of *dtype* (Warp's ``warp.types.vector``).

    Any length and every scalar type of Warp's vectors (int8 ... uint64, float32,
    float64) exist; the same arguments give the same class each time, and Warp's
    predefined types come back as themselves (``vector(3, float32) is vec3``,
    ``vector(6, float64) is spatial_vectord``).
    """
    length = _count(length, "length")
    if isinstance(dtype, TypeVar):  # Warp's vector(3, Float): a generic annotation
        return GenericValue(KIND_VEC, (length,), dtype)
    return CLASSES[find_spec(KIND_VEC, scalar_dtype(dtype), (length,))]


class MatrixShapeError(TypeError, ValueError):
    """A matrix shape of other than two dimensions (Warp's ValueError)."""


def matrix(shape, dtype=float):
    """The matrix type of *shape* ``(rows, cols)`` of *dtype* (Warp's ``warp.types.matrix``);
    rows and columns of any size, square or not, and every scalar type of :func:`vector`."""
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape must be a (rows, cols) tuple, not {shape!r}")
    if len(shape) != 2:  # Warp's ValueError (a TypeError too: the shape is of the wrong kind)
        label = "dimension" if len(shape) == 1 else "dimensions"
        raise MatrixShapeError(f"Matrix shape must have exactly two dimensions, got "
                               f"{len(shape)} {label} in shape {tuple(shape)!r}")
    rows, cols = (_count(n, f"shape[{i}]") for i, n in enumerate(shape))
    if isinstance(dtype, TypeVar):  # Warp's matrix((2, 2), Float): a generic annotation
        return GenericValue(KIND_MAT, (rows, cols), dtype)
    return CLASSES[find_spec(KIND_MAT, scalar_dtype(dtype), (rows, cols))]


def quaternion(dtype=float):
    """The quaternion type of *dtype*, float32 or float64 (Warp's ``warp.types.quaternion``)."""
    return CLASSES[find_spec(KIND_QUAT, scalar_dtype(dtype, allowed=FLOAT_DTYPES), (4,))]


def transformation(dtype=float):
    """The transform type of *dtype*, float32 or float64 (Warp's ``warp.types.transformation``)."""
    return CLASSES[find_spec(KIND_TRANSFORM, scalar_dtype(dtype, allowed=FLOAT_DTYPES), (7,))]


def types_equal(a, b):
    """Whether *a* and *b* name the same type (Warp's ``warp.types.types_equal``): value
    classes of one spec, or scalar types of one dtype (``float`` and ``float32`` are equal,
    as Python's float means float32)."""
    if a is b:
        return True
    specs = [getattr(t, "spec", None) for t in (a, b)]
    if specs[0] is not None or specs[1] is not None:
        return specs[0] == specs[1]
    try:
        return scalar_dtype(a, allowed=ALL_SCALARS) == scalar_dtype(b, allowed=ALL_SCALARS)
    except TypeError:
        return a == b


def type_size(dtype):
    """The number of scalars in one element of *dtype* (Warp's ``warp.types.type_size``):
    a vector's length, a matrix's rows * cols, a quaternion's 4, a transform's 7; 1 for a
    scalar type (``float``, ``int``, ``sim.float32``, ...) and for a ``@sim.struct`` (Warp
    counts a struct as one element)."""
    spec = getattr(dtype, "spec", None)
    if isinstance(spec, ValueSpec):
        return spec.size
    if isinstance(dtype, type) and hasattr(dtype, "numpy_dtype"):  # a @sim.struct (as arrays.py
        return 1  # tells them; structs.py imports this module)
    scalar_dtype(dtype, allowed=ALL_SCALARS)  # a TypeError naming dtype for anything else
    return 1


_SHORT_SCALAR_NAMES = {np.dtype(t): s for t, s in (
    (np.float32, "f"), (np.float64, "d"), (np.int8, "b"), (np.int16, "s"), (np.int32, "i"),
    (np.int64, "l"), (np.uint8, "ub"), (np.uint16, "us"), (np.uint32, "ui"), (np.uint64, "ul"))}
"""Warp's short names of the scalar types in its value types' names (``vec3ub``)."""


def type_repr(t):
    """A type as Warp's messages write it (Warp's ``warp.types.type_repr``): ``float32``,
    ``vec3f``, ``mat22d``, ``quatf``, ``transformd``, ``vector(length=5, dtype=float32)``,
    ``matrix(shape=(2, 3), dtype=int8)``; Python's ``float``, ``int`` and ``bool`` as
    themselves; other classes as ``module.qualname``."""
    if t is float or t is int or t is bool:
        return t.__name__
    spec = getattr(t, "spec", None)
    if isinstance(spec, ValueSpec):
        short = _SHORT_SCALAR_NAMES.get(spec.dtype)
        dtype = _scalar_name(spec.dtype)
        if spec.kind in (KIND_QUAT, KIND_TRANSFORM):
            return f"{spec.kind}{short}"
        if spec.kind == KIND_VEC:
            if short is not None and spec.shape[0] <= 4:
                return f"vec{spec.shape[0]}{short}"
            return f"vector(length={spec.shape[0]}, dtype={dtype})"
        if short is not None and max(spec.shape) <= 4:
            return f"mat{spec.shape[0]}{spec.shape[1]}{short}"
        return f"matrix(shape={spec.shape}, dtype={dtype})"
    if isinstance(t, type):
        try:
            dtype = np.dtype(t)
        except TypeError:
            dtype = None
        if dtype is not None and dtype in ALL_SCALARS:
            return _scalar_name(dtype)
        return f"{t.__module__}.{t.__qualname__}"
    return repr(t)


# --------------------------------------------------------------------------
# Warp's subscript-style type hints (``warp._src.types``' generics): ``Vector[dtype,
# Literal[length]]``, ``Matrix[dtype, Literal[rows], Literal[cols]]``, ``Quaternion[dtype]``,
# ``Transformation[dtype]``.  With concrete parameters a subscript is the value type itself,
# the class the factories give (``Vector[float, Literal[3]] is vec3``), so it annotates
# parameters and arrays (``sim.array[Vector[sim.float32, Literal[3]]]``); a length may be a
# bare int.  With a ``TypeVar`` it stays a ``typing`` generic alias, as in Warp.

_Scalar = TypeVar("Scalar")
_Float = TypeVar("Float")
_Length = TypeVar("Length", bound=int)
_Rows = TypeVar("Rows", bound=int)
_Cols = TypeVar("Cols", bound=int)


def _unwrap_literal(value):
    """``Literal[3]`` -> 3; anything else as it is."""
    if get_origin(value) is Literal:
        args = get_args(value)
        if len(args) != 1:
            raise TypeError(f"Expected a single Literal value, got Literal{list(args)}")
        return args[0]
    return value


def _positive(value, what):
    value = _unwrap_literal(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise TypeError(f"{what} must be a positive integer, got {value!r}")
    return value


def _parameters(cls, params, names):
    """*params* as a tuple of len(names), or None when one is a TypeVar (a generic alias)."""
    params = params if isinstance(params, tuple) else (params,)
    if any(isinstance(p, TypeVar) for p in params):
        return None
    if len(params) != len(names):
        raise TypeError(f"{cls.__name__} requires {len(names)} parameter"
                        f"{'s' if len(names) > 1 else ''} ({', '.join(names)}), "
                        f"got {len(params)}")
    return params


class Vector(Generic[_Scalar, _Length]):
    """``Vector[dtype, Literal[length]]``: the type ``vector(length, dtype)``."""

    def __class_getitem__(cls, params):
        parsed = _parameters(cls, params, ("dtype", "length"))
        if parsed is None:
            return super().__class_getitem__(params)
        dtype, length = parsed
        return vector(_positive(length, "Vector length"), dtype)


class Matrix(Generic[_Scalar, _Rows, _Cols]):
    """``Matrix[dtype, Literal[rows], Literal[cols]]``: the type ``matrix((rows, cols), dtype)``."""

    def __class_getitem__(cls, params):
        parsed = _parameters(cls, params, ("dtype", "rows", "cols"))
        if parsed is None:
            return super().__class_getitem__(params)
        dtype, rows, cols = parsed
        return matrix((_positive(rows, "Matrix rows"), _positive(cols, "Matrix cols")), dtype)


class Quaternion(Generic[_Float]):
    """``Quaternion[dtype]``: the type ``quaternion(dtype)``."""

    def __class_getitem__(cls, params):
        if isinstance(params, TypeVar):
            return super().__class_getitem__(params)
        return quaternion(params)


class Transformation(Generic[_Float]):
    """``Transformation[dtype]``: the type ``transformation(dtype)``."""

    def __class_getitem__(cls, params):
        if isinstance(params, TypeVar):
            return super().__class_getitem__(params)
        return transformation(params)
