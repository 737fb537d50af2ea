"""Launch size against array size: the memory safety that release mode keeps for free.

A kernel that indexes an array parameter with its thread index (``i = sim.tid(); x[i]``)
reads or writes past the array's end when launched over more threads than the array has
elements: in release mode nothing checks the index, and memory is corrupted (Warp
segfaults later). :func:`tid_indexed` reads the kernel's source once and finds the array
parameters indexed directly by a thread index in statements that every thread runs (the
kernel's top-level statements, before any that may ``return``), as (parameter position,
array axis, launch axis); :func:`check` compares them with the launch's ``dim`` and the
arrays' shapes — a few integer comparisons per launch — and raises ``ValueError`` naming
the parameter. An access inside ``if``/``for``/``while`` is left alone: a kernel may guard
it (``if i < n:``) and be launched over more threads on purpose.
"""

import ast

from numba_sim import threads
from numba_sim.source_analysis import function_namespace, function_tree, resolve


def tid_indexed(fn, parameter_names):
    """[(parameter position, array axis, launch axis)] for the kernel function *fn*."""
    function = function_tree(fn)
    if function is None:
        return []
    namespace = function_namespace(fn)
    tid_axes = {}  # name -> launch axis
    assignments = _assigned_names(function)
    found = []
    for statement in function.body:
        if any(isinstance(node, ast.Return) for node in ast.walk(statement)):
            break  # threads may leave here: later accesses may be guarded
        axes = _tid_targets(statement, namespace)
        if axes is not None:
            tid_axes.update(axes)
            continue
        if isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                    and node.value.id in parameter_names:
                index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                for array_axis, item in enumerate(index):
                    if isinstance(item, ast.Name) and item.id in tid_axes \
                            and assignments.get(item.id, 0) == 1:
                        entry = (parameter_names.index(node.value.id), array_axis,
                                 tid_axes[item.id])
                        if entry not in found:
                            found.append(entry)
    return found


def check(kernel, dims, bound):
    """ValueError when the launch over *dims* reaches past an array that *kernel* indexes
    with its thread index (*bound*: the launch's bound arguments)."""
    for position, array_axis, launch_axis in kernel.tid_indexed:
        if launch_axis >= len(dims):
            continue
        array = bound[position]
        shape = getattr(array, "shape", None)
        if shape is None or array_axis >= len(shape) or dims[launch_axis] <= shape[array_axis]:
            continue
        parameter = kernel.parameters[position].name
        raise ValueError(
            f"{kernel.__qualname__}: dim={tuple(dims) if len(dims) > 1 else dims[0]} launches "
            f"{dims[launch_axis]} threads along axis {launch_axis}, but the kernel indexes "
            f"parameter {parameter!r} with the thread index and it has {shape[array_axis]} "
            f"elements along axis {array_axis}: launch with dim <= its size (release mode "
            "would read and write past its end)")


def _tid_targets(statement, namespace):
    """{name: launch axis} when *statement* is ``i = sim.tid()`` or ``i, j = sim.tid()``."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.value, ast.Call) and not statement.value.args
            and resolve(statement.value.func, namespace) is threads.tid):
        return None
    target = statement.targets[0]
    names = target.elts if isinstance(target, ast.Tuple) else [target]
    if not all(isinstance(n, ast.Name) for n in names):
        return {}
    return {n.id: axis for axis, n in enumerate(names)}


def _assigned_names(function):
    """{name: how many times it is assigned} in *function* (loop targets and augmented
    assignments included): a thread-index name assigned twice is not trusted."""
    counts = {}
    for node in ast.walk(function):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
            targets = [node.target]
        for name in _bound_names(targets):
            counts[name] = counts.get(name, 0) + 1
    return counts


def _bound_names(targets):
    """The names that assigning to *targets* binds (not those inside ``a[i] = ...``)."""
    for target in targets:
        if isinstance(target, ast.Name):
            yield target.id
        elif isinstance(target, (ast.Tuple, ast.List)):
            yield from _bound_names(target.elts)
        elif isinstance(target, ast.Starred):
            yield from _bound_names([target.value])
