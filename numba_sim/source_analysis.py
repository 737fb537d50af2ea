"""Reading a kernel's or func's own source: its syntax tree and what its names refer to.

The launch checks (launch_bounds.py, structure_ids.py) read a kernel's source once, when it
is defined, to learn how it uses its parameters; the kernel language itself rewrites the
source (kernel_language.py). Both resolve names the same way: in the function's globals
with its closure variables over them.
"""

import ast
import inspect
import textwrap
import weakref

from numba_sim.kernel_language import function_namespace


_TREES = weakref.WeakKeyDictionary()
"""code object -> its function's ``ast.FunctionDef`` (or None): one reading of the source
per function, however many checks and parameters ask (the source of a code object does not
change; a redefined function is a new code object)."""


def function_tree(fn):
    """The ``ast.FunctionDef`` of *fn*, or None where its source cannot be read.  The tree
    is shared by every caller: read it, do not change it."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return _parse(fn)
    try:
        return _TREES[code]
    except KeyError:
        tree = _TREES[code] = _parse(fn)
        return tree


def _parse(fn):
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    definition = tree.body[0] if tree.body else None
    return definition if isinstance(definition, ast.FunctionDef) else None


def resolve(node, namespace):
    """What the name or dotted name *node* refers to in *namespace* (None if unknown)."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = resolve(node.value, namespace)
        return getattr(owner, node.attr, None) if owner is not None else None
    return None


__all__ = ["function_tree", "resolve", "function_namespace"]
