"""The operation table's variants as test cases for the builtin adjoints.

Every operation of :data:`numba_sim.operations.OPERATIONS` (and the plain scalar
arithmetic of :mod:`numba_sim.autodiff.op_scalars`) is tried with argument types drawn
from :data:`ARGUMENT_TYPES` (float64 values of every kind, an int32 and a bool), one to
three arguments, plus the longer argument lists of :data:`LONG_SIGNATURES`; each
combination the table accepts is a case.  Inputs are seeded random numbers in ranges
where every formula is smooth (scalars in (0.2, 0.9), unit quaternions, matrices near the
identity).
"""

import functools
import itertools
import zlib
from dataclasses import dataclass

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing.typeof import typeof

import numba_sim as sim
from numba_sim.autodiff import op_derived
from numba_sim.autodiff.op_scalars import SCALAR_OPERATIONS
from numba_sim.operations import OPERATIONS, from_components
from numba_sim.typing.value_types import ValueType

VALUE_CLASSES = (sim.vec2d, sim.vec3d, sim.vec4d, sim.spatial_vectord, sim.quatd,
                 sim.transformd, sim.mat22d, sim.mat33d, sim.mat44d, sim.spatial_matrixd)
ARGUMENT_TYPES = (types.float64, types.int32, types.boolean) + tuple(
    typeof(cls()) for cls in VALUE_CLASSES)

V3, F, M33, M44, Q = (typeof(sim.vec3d()), types.float64, typeof(sim.mat33d()),
                      typeof(sim.mat44d()), typeof(sim.quatd()))
LONG_SIGNATURES = (
    (F,) * 4, (F,) * 6, (F,) * 7, (F,) * 9, (F,) * 16, (F,) * 36,
    (V3,) * 4, (V3,) * 6, (V3, V3, V3, V3, F), (V3, Q, V3),
)
"""Argument lists longer than three that the table's builtins take (constructors of
every size, closest_point_edge_edge, intersect_tri_tri, transform_compose)."""

EXCLUDED = {
    "identity": "compile-time constant arguments (a size, a dtype): nothing to differentiate "
                "(test_constant_builtins_have_zero_adjoints)",
    "quat_identity": "a compile-time constant argument (a dtype)",
    "transform_identity": "a compile-time constant argument (a dtype)",
    "transform_set_translation": "changes its transform argument in place (Python only)",
    "transform_set_rotation": "changes its transform argument in place (Python only)",
    **{name: "takes float32 vec3 only: its finite differences are "
             "test_autodiff_ops.py::test_geometry_adjoints_match_finite_differences"
       for name in ("closest_point_on_segment", "closest_point_edge_edge",
                    "triangle_closest_point")},
    "eig3": "Warp's spectral adjoint: the gradient for symmetric matrices and symmetric "
            "perturbations, which a random matrix's finite differences are not; checked by "
            "tests/test_linalg.py (repeated eigenvalues, eigenvectors against central "
            "differences of symmetric matrices) and Warp's test_mat",
}
"""Operations without a finite-difference case, and why."""

NO_ADJOINT = {}
"""Operations whose adjoint is a TypingError naming them, and why."""


def table_names():
    """The names of every operation of the table (after the cases made new value types)."""
    return {_name(k) for k in _keys()}


@dataclass
class Case:
    key: object
    name: str
    argtypes: tuple
    return_type: object

    @property
    def single_precision(self):
        """Whether a float32 argument or result limits the finite differences' accuracy."""
        return _has_type(self.argtypes + (self.return_type,), types.float32)

    @property
    def differentiable(self):
        """Whether some argument and some result component are floating-point."""
        return _has_float(self.argtypes) and _has_float((self.return_type,))

    def __repr__(self):
        return f"{self.name}({', '.join(map(str, self.argtypes))})"


def _has_float(numba_types):
    for t in numba_types:
        if isinstance(t, types.BaseTuple):
            if _has_float(t.types):
                return True
        elif isinstance(t, ValueType):
            if isinstance(t.dtype, types.Float):
                return True
        elif isinstance(t, types.Float):
            return True
    return False


def _has_type(numba_types, wanted):
    for t in numba_types:
        if isinstance(t, types.BaseTuple):
            if _has_type(t.types, wanted):
                return True
        elif getattr(t, "dtype", t) == wanted:
            return True
    return False


def _resolve(key, argtypes):
    try:
        sig, _ = op_derived.forward(key, argtypes)
    except TypingError:
        return None
    return sig


def _keys():
    table = [k for k in op_derived.operation_keys()]
    scalar_only = [k for k in SCALAR_OPERATIONS if k not in OPERATIONS]
    return table + scalar_only


def _name(key):
    op = OPERATIONS.get(key)
    return op.name if op is not None else getattr(key, "__name__", str(key))


@functools.cache
def enumerate_cases():
    """Every (key, argument types) the table accepts from the pools above (twice over the
    keys: the first pass makes new value types, e.g. mat23d for outer(vec2d, vec3d), whose
    constructors join the table)."""
    cases, done = [], set()
    for _ in range(2):
        keys = [k for k in _keys() if k not in done]
        done.update(keys)
        cases += _cases_of(keys)
    return tuple(cases)


def _cases_of(keys):
    cases = []
    for key in keys:
        seen = set()
        candidates = itertools.chain(
            *(itertools.product(ARGUMENT_TYPES, repeat=n) for n in (1, 2, 3)), LONG_SIGNATURES)
        for argtypes in candidates:
            sig = _resolve(key, argtypes)
            if sig is None:
                continue
            marker = tuple(types.unliteral(t) for t in sig.args)
            if marker in seen:
                continue
            seen.add(marker)
            cases.append(Case(key, _name(key), marker, sig.return_type))
    return cases


# --------------------------------------------------------------------------
# Inputs


def random_value(numba_type, rng):
    """A seeded input of *numba_type* where the formulas are smooth."""
    if isinstance(numba_type, types.Boolean):
        return True  # a bool operand is a number too: never a zero divisor
    if isinstance(numba_type, types.Integer):
        return np.int32(1)  # a valid index of every value, a nonzero base and divisor
    if isinstance(numba_type, types.Float):
        return np.float64(rng.uniform(0.2, 0.9))
    spec = numba_type.spec
    cls = numba_type.python_class
    if spec.kind == "quat":
        q = rng.normal(size=4)
        return cls(*(q / np.linalg.norm(q)))
    if spec.kind == "transform":
        q = rng.normal(size=4)
        return cls(*rng.uniform(-1, 1, 3), *(q / np.linalg.norm(q)))
    if spec.kind == "mat":
        n, m = spec.shape
        a = np.eye(n, m) + 0.3 * rng.uniform(-1, 1, (n, m))
        return cls(*a.ravel())
    return cls(*rng.uniform(0.2, 0.9, spec.size) * rng.choice([-1, 1], spec.size))


def random_adjoint(numba_type, rng):
    """A random result adjoint of *numba_type* (a tuple for a tuple result)."""
    if isinstance(numba_type, types.BaseTuple):
        return tuple(random_adjoint(t, rng) for t in numba_type.types)
    integral = isinstance(getattr(numba_type, "dtype", numba_type), types.Integer)
    draw = (lambda size=None: rng.integers(0, 3, size=size)) if integral else rng.normal
    if isinstance(numba_type, ValueType):
        return from_components(list(draw(size=numba_type.size).astype(
            numba_type.spec.scalar_type)), numba_type)
    if isinstance(numba_type, types.Boolean):
        return False
    return from_components(draw(), numba_type)


def components(value):
    """A result or argument as a flat float64 array (value types by component)."""
    if isinstance(value, tuple):
        parts = [components(v) for v in value]
        return np.concatenate(parts) if parts else np.zeros(0)
    if value is None:
        return np.zeros(0)
    if hasattr(value, "_components"):
        return np.asarray(value._components(), dtype=np.float64)
    return np.asarray([value], dtype=np.float64)


def with_component(value, index, delta):
    """*value* (a float or a value instance) with component *index* moved by *delta*."""
    if hasattr(value, "_components"):
        parts = list(value._components())
        parts[index] = parts[index] + delta
        return type(value)._from_components(parts)
    return type(value)(value + delta)


def call_forward(key, args):
    return key(*args)


def is_float_argument(numba_type):
    return _has_float((numba_type,)) and not isinstance(numba_type, types.BaseTuple)


# --------------------------------------------------------------------------
# Finite differences

STEP = {False: 1e-6, True: 1e-2}  # float64 cases; those with a float32 value (casts)
TOLERANCE = {False: 1e-6, True: 1e-4}  # relative to the scale of the product's terms


def finite_difference_vjp(key, args, adj_ret, index, step, floor=1e-2):
    """d/d(args[index]) of dot(adj_ret, key(*args)), by central differences, per component,
    and the scale of the terms summed (for the tolerance); the step is *step* times the
    component's magnitude, at least *floor*."""
    weights = components(adj_ret)
    size = len(components(args[index]))
    gradient, scale = np.zeros(size), np.zeros(size)
    for k in range(size):
        h = step * max(floor, abs(components(args[index])[k]))
        plus, minus = list(args), list(args)
        plus[index] = with_component(args[index], k, h)
        minus[index] = with_component(args[index], k, -h)
        with np.errstate(all="ignore"):
            difference = (components(call_forward(key, plus))
                          - components(call_forward(key, minus))) / (2 * h)
        gradient[k] = np.dot(weights, difference)
        scale[k] = np.abs(weights * difference).sum()
    return gradient, scale



def fd_errors(case, rng):
    """(adjoint, finite differences, term scale) per float argument of *case*."""
    args = [random_value(t, rng) for t in case.argtypes]
    adj_ret = random_adjoint(case.return_type, rng)
    adjoints = op_derived.adjoint_function(case.key)(*args, adj_ret)
    found = []
    for index, (argtype, adjoint) in enumerate(zip(case.argtypes, adjoints)):
        if is_float_argument(argtype):
            expected, scale = finite_difference_vjp(case.key, args, adj_ret, index,
                                                    STEP[case.single_precision])
            found.append((index, components(adjoint), expected, scale))
    return args, adjoints, found


def report():
    """Coverage of the table and the finite-difference errors (docs/autodiff.md)."""
    import time

    from numba_sim.autodiff import op_overrides

    start = time.perf_counter()
    cases = enumerate_cases()
    names = table_names()
    by_name = {}
    for case in cases:
        by_name.setdefault(case.name, []).append(case)
    overridden = {_name(k) for k in op_overrides.overridden_keys()}
    differentiable = {n for n, cs in by_name.items() if any(c.differentiable for c in cs)}
    print(f"operations: {len(names)} ({len(op_derived.operation_keys())} table entries, "
          f"{len(names) - len(op_derived.operation_keys())} plain-scalar keys); "
          f"variants tried: {len(cases)}")
    print(f"differentiable operations: {len(differentiable - set(NO_ADJOINT))}, of which "
          f"derived {len(differentiable - overridden - set(NO_ADJOINT))}, hand-written "
          f"{len(differentiable & overridden)} ({', '.join(sorted(differentiable & overridden))})")
    geometry = sorted(overridden - set(by_name))
    print(f"derived from op_geometry's formulas of native algorithms (float32 vec3, finite "
          f"differences in test_autodiff_ops.py): {len(geometry)} ({', '.join(geometry)})")
    print(f"non-differentiable only (zero adjoints): "
          f"{len(set(by_name) - differentiable - set(NO_ADJOINT))}")
    print(f"no adjoint (TypingError naming them): {len(NO_ADJOINT)} ({', '.join(NO_ADJOINT)})")
    print(f"no finite-difference case: {len(EXCLUDED)} ({', '.join(EXCLUDED)})")
    worst, worst_case, checked = 0.0, None, 0
    for case in cases:
        if not case.differentiable or case.name in NO_ADJOINT or case.single_precision:
            continue
        rng = np.random.default_rng(zlib.crc32(f"{case!r}/0".encode()))
        for index, got, expected, scale in fd_errors(case, rng)[2]:
            checked += 1
            ratio = float(np.max(np.abs(got - expected) / (1 + scale)))
            if ratio > worst:
                worst, worst_case = ratio, f"{case} argument {index}"
    print(f"float64 finite differences: {checked} arguments, worst |adjoint - fd| / "
          f"(1 + scale) = {worst:.2e} ({worst_case}); {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    report()
