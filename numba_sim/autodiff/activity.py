"""Which values an adjoint differentiates (activity), and which loops carry values.

Activity is decided on the three-address statements of numba_sim/autodiff/flatten.py, by
name: a local is *active* if some assignment gives it a value computed from a
differentiable parameter (a float-based array's element, a float or value-type scalar) by
differentiable operations.  Comparisons, boolean logic, integer and boolean conversions,
``len``, array attributes (``x.shape``), thread indices, random draws and spatial queries
are not differentiable: what they compute is inactive, and no adjoint is kept for it.
"""

import ast
import builtins

import numpy as np

from numba_sim.autodiff.flatten import AtomicUpdate, MultiAssign

NOT_DIFFERENTIABLE_NAMES = frozenset({
    "tid", "len", "range", "static", "rand_init", "randi", "randu", "randf", "randn",
    "sample_cdf", "sample_triangle", "sample_unit_ring", "sample_unit_disk",
    "sample_unit_sphere_surface", "sample_unit_sphere", "sample_unit_hemisphere_surface",
    "sample_unit_hemisphere", "sample_unit_square", "sample_unit_cube", "poisson",
    "hash_grid_query", "hash_grid_point_id", "bvh_query_aabb", "bvh_query_ray",
    "mesh_query_aabb", "mesh_query_point", "mesh_query_point_no_sign", "mesh_query_ray",
    "hash_grid_query_next", "bvh_query_next", "mesh_query_aabb_next", "lower_bound",
    "atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_cas", "atomic_exch",
    "isnan", "isinf", "isfinite", "sign", "floor", "ceil", "trunc", "round", "rint",
    "argmin", "argmax", "bool", "int", "print", "printf",
})
"""Builtins whose results carry no gradient (``floor``, ``sign``... have zero derivative)."""


def is_not_differentiable(target):
    """Whether a call of *target* (the object a call's function names) gives an inactive
    value."""
    if target in (builtins.int, builtins.bool, builtins.len, builtins.range):
        return True
    if isinstance(target, type) and issubclass(target, (np.integer, np.bool_)):
        return True
    name = getattr(target, "__name__", None)
    module = getattr(target, "__module__", "") or ""
    return name in NOT_DIFFERENTIABLE_NAMES and (module.startswith("numba_sim")
                                                 or module == "builtins")


class Activity:
    """The active locals of flattened statements."""

    def __init__(self, statements, active_values, differentiable_arrays, arrays, resolve):
        self.active = set(active_values)
        self.differentiable_arrays = set(differentiable_arrays)
        self.arrays = set(arrays)
        self.resolve = resolve
        changed = True
        while changed:
            changed = False
            for node in _walk(statements):
                for target in self._targets_made_active(node):
                    if target not in self.active:
                        self.active.add(target)
                        changed = True

    def _targets_made_active(self, node):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            return [node.targets[0].id] if self.value_is_active(node.value) else []
        if isinstance(node, MultiAssign):
            return list(node.targets) if self.value_is_active(node.value) else []
        if isinstance(node, ast.Assign):  # a component store: v.x = a makes v active
            base = node.targets[0]
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name) and base.id not in self.arrays \
                    and self.value_is_active(node.value):
                return [base.id]
        if isinstance(node, ast.AugAssign):
            base = node.target
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name) and base.id not in self.arrays \
                    and self.value_is_active(node.value):
                return [base.id]
        return []

    def value_is_active(self, node):
        if isinstance(node, ast.Name):
            return node.id in self.active or node.id in self.differentiable_arrays
        if isinstance(node, ast.BinOp):
            return self.value_is_active(node.left) or self.value_is_active(node.right)
        if isinstance(node, ast.UnaryOp):
            return not isinstance(node.op, ast.Not) and self.value_is_active(node.operand)
        if isinstance(node, ast.Call):
            if is_not_differentiable(self.resolve(node.func)):
                return False
            return any(self.value_is_active(a) for a in node.args)
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id in self.arrays:
                return node.value.id in self.differentiable_arrays
            return self.value_is_active(node.value)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in self.arrays:
                return False
            return self.value_is_active(node.value)
        if isinstance(node, ast.Tuple):
            return any(self.value_is_active(e) for e in node.elts)
        return False


def _walk(statements):
    for statement in statements:
        yield statement
        for field in ("body", "orelse"):
            yield from _walk(getattr(statement, field, None) or [])


def assigned_names(statements):
    """The names the statements (and those nested in them) assign."""
    names = set()
    for node in _walk(statements):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            names.add(node.targets[0].id)
        elif isinstance(node, MultiAssign):
            names.update(node.targets)
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, AtomicUpdate) and node.result is not None:
            names.add(node.result)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):  # component stores rebind the name
            base = node.targets[0] if isinstance(node, ast.Assign) else node.target
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                names.add(base.id)
    return names


def _reads(node, name):
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for n in ast.walk(node))


def _statement_reads(node, name):
    """Whether *node* itself (not the statements nested in it) reads *name*."""
    if isinstance(node, (ast.If, ast.While)):
        return _reads(node.test, name)
    if isinstance(node, ast.For):
        return _reads(node.iter, name)
    if isinstance(node, AtomicUpdate):
        return _reads(node.value, name) or _reads(node.index, name)
    if isinstance(node, MultiAssign):
        return _reads(node.value, name)
    return _reads(node, name)


def is_additive_update(node, name):
    """``name = name + e``, ``name = name - e`` or ``name = e + name`` with *e* not reading
    *name*: an update whose adjoint needs no value of *name*."""
    if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name and isinstance(node.value, ast.BinOp)):
        return False
    left, right, op = node.value.left, node.value.right, node.value.op
    if isinstance(op, ast.Add):
        return (isinstance(left, ast.Name) and left.id == name and not _reads(right, name)) or (
            isinstance(right, ast.Name) and right.id == name and not _reads(left, name))
    if isinstance(op, ast.Sub):
        return isinstance(left, ast.Name) and left.id == name and not _reads(right, name)
    return False


def needs_carried_values(body, carried):
    """Whether the reverse sweep of a loop whose *body* carries the names *carried* needs
    each iteration's carried values (any carried name read other than by an additive update
    of itself), so that the loop is replayed to recover them; purely additive carries
    (``acc += x[i]``) need none."""
    for node in _walk(body):
        for name in carried:
            if _statement_reads(node, name) and not is_additive_update(node, name):
                return True
    return False
