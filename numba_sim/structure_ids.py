"""Structure ids checked before a query reads them.

Warp code passes a HashGrid, Bvh or Mesh to a kernel as its ``id``, a ``uint64`` address.
The id of a freed structure, or a made-up number, sends a query through garbage: an endless
loop or a segfault. A kernel's source says which of its parameters reach a query as the
structure argument: :func:`id_parameters` follows each ``uint64``-ish parameter (and each
array parameter whose elements are ids, as the physics layer keeps mesh ids) through simple
aliases (``m = mesh_ids[k]``) and into the ``@sim.func``s it is passed to, up to the
queries (``hash_grid_query``, ``bvh_query_*``, ``mesh_query_*``, ``mesh_eval_*``, ...).
:func:`check` then looks each id up among the live structures of that kind
(``spatial.common.live_structures``, an O(1) dictionary lookup per id; the distinct ids of an
array on the host), at every launch, and raises ``ValueError`` naming the parameter. A
``uint64`` parameter that never reaches a query is not checked; neither are ids in CUDA
arrays (reading them would cost a copy) nor ids inside structs (docs/bad-input.md).
"""

import ast
import inspect
import weakref

import numpy as np

from numba_sim.source_analysis import function_namespace, function_tree, resolve
from numba_sim.spatial.common import live_structures

_QUERY_MODULES = {"numba_sim.spatial.hash_grid_query": "HashGrid",
                  "numba_sim.spatial.bvh_query": "Bvh", "numba_sim.spatial.mesh_query": "Mesh"}
"""The modules of the spatial builtins, and the kind of structure their first argument is."""


def id_parameters(fn, parameter_names):
    """[(parameter position, structure kind, whether its elements are the ids)]."""
    found = []
    for position, name in enumerate(parameter_names):
        for kind, through_elements in _reaches_query(fn, name, set()):
            if (position, kind, through_elements) not in found:
                found.append((position, kind, through_elements))
    return found


def check(kernel, bound):
    """ValueError when an id that *kernel* passes to a query is not a live structure of the
    query's kind (*bound*: the launch's bound arguments)."""
    for position, kind, through_elements in kernel.structure_ids:
        value = bound[position]
        if through_elements:
            if not isinstance(value, np.ndarray):
                continue  # ids in a CUDA array: reading them would cost a copy
            ids = np.unique(value) if value.size > 1 else value.reshape(-1)
        elif isinstance(value, (int, np.integer)):
            ids = (value,)
        else:
            continue  # the structure itself: typed as such, and kept alive by the launch
        for structure_id in ids:
            if not is_live(structure_id, kind):
                _refuse(kernel, position, kind, int(structure_id), through_elements)


def is_live(structure_id, kind):
    """Whether *structure_id* is 0 (Warp's null id: queries find nothing) or the id of a
    live structure of *kind*."""
    structure_id = int(structure_id)
    return structure_id == 0 or type(live_structures.get(structure_id)).__name__ == kind


def _refuse(kernel, position, kind, structure_id, through_elements):
    structure = live_structures.get(structure_id)
    what = (f"the id of a live {type(structure).__name__}, not of a {kind}" if structure
            is not None else f"not the id of a live {kind} (freed, never built, or made up)")
    where = "holds" if through_elements else "is"
    raise ValueError(
        f"{kernel.__qualname__}: parameter {kernel.parameters[position].name!r} {where} "
        f"{structure_id:#x}, {what}; a query would read garbage. Pass the {kind} itself, or "
        f"its .id while the {kind} lives")


def _reaches_query(fn, name, seen):
    """{(kind, through elements)} for the variable *name* of function *fn*."""
    key = (fn, name)
    if key in seen:
        return set()
    seen.add(key)
    nodes = _assignments_and_calls(fn)
    if nodes is None:
        return set()
    assignments, calls = nodes
    namespace = function_namespace(fn)
    aliases = {name: False}  # variable -> whether it holds the parameter's elements
    changed = True
    while changed:  # aliases of aliases: m = ids; k = m[i]
        changed = False
        for target, value in assignments:
            if target not in aliases:
                source = _alias_source(value, aliases)
                if source is not None:
                    aliases[target] = source
                    changed = True
    reached = set()
    for node in calls:
        callee = None
        for index, argument in enumerate(node.args):
            through_elements = _alias_source(argument, aliases)
            if through_elements is None:
                continue
            if callee is None:
                callee = resolve(node.func, namespace)
            kind = _QUERY_MODULES.get(getattr(callee, "__module__", None))
            if kind is not None and index == 0 and not callee.__name__.endswith("_next"):
                reached.add((kind, through_elements))
            py_func = getattr(callee, "py_func", None)
            if py_func is not None and not getattr(callee, "__module__", "").startswith(
                    "numba_sim."):
                parameters = list(inspect.signature(py_func).parameters)
                if index < len(parameters):
                    reached |= {(kind, through_elements or inner) for kind, inner in
                                _reaches_query(py_func, parameters[index], seen)}
    return reached


_NODES = weakref.WeakKeyDictionary()
"""code object -> ([(name, value) of each ``name = value``], [each call]) of its function."""


def _assignments_and_calls(fn):
    """The single-name assignments and the calls of *fn*'s source (None where it cannot be
    read), collected once per function."""
    code = getattr(fn, "__code__", None)
    nodes = _NODES.get(code) if code is not None else None
    if nodes is None:
        tree = function_tree(fn)
        if tree is None:
            return None
        assignments, calls = [], []
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                assignments.append((node.targets[0].id, node.value))
            elif isinstance(node, ast.Call):
                calls.append(node)
        nodes = (assignments, calls)
        if code is not None:
            _NODES[code] = nodes
    return nodes


def _alias_source(node, aliases):
    """Whether *node* is one of the aliases (False) or an element of one (True); else None."""
    if isinstance(node, ast.Name) and node.id in aliases:
        return aliases[node.id]
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
            and node.value.id in aliases and not aliases[node.value.id]:
        return True
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in _INTEGER_CASTS:
        return _alias_source(node.args[0], aliases)  # sim.uint64(m), int(m)
    return None


_INTEGER_CASTS = {"int", "uint64", "int64", "uint32", "int32"}
