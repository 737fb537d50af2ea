"""Array views bound to locals, read through their parent in an adjoint (Warp's array views).

``row = x[i]`` of a 2-D array parameter ``x`` is a view, and ``row[j]`` reads (or stores)
``x[i, j]``.  The adjoint generator differentiates element reads and stores of array
parameters, whose gradients are the parameters' own: so before an adjoint is generated, a
local bound once to such a view, indexed only by names bound once (or parameters) and
constants, and used only through subscripts, is replaced by its parent — ``row[j]`` becomes
``x[i, j]`` — and its binding dropped.  The forward kernel keeps its views (Numba's).
"""

import ast


def _stores(definition):
    """Name -> how often *definition*'s body binds it (parameters count once)."""
    counts = {a.arg: 1 for a in definition.args.args}
    for node in ast.walk(definition):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _index_parts(index):
    return list(index.elts) if isinstance(index, ast.Tuple) else [index]


def _views(definition, ndims, stores):
    """{local: (parent, index parts)} of the views that can be read through their parent."""
    views = {}
    for node in ast.walk(definition):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Subscript)
                and isinstance(node.value.value, ast.Name)):
            continue
        name, parent = node.targets[0].id, node.value.value.id
        parts = _index_parts(node.value.slice)
        if parent not in ndims or len(parts) >= ndims[parent] or stores.get(name) != 1 \
                or stores.get(parent) != 1:
            continue
        if not all(isinstance(p, ast.Constant) and isinstance(p.value, int)
                   or isinstance(p, ast.Name) and stores.get(p.id, 0) <= 1 for p in parts):
            continue
        views[name] = (parent, parts)
    # a view used other than through a subscript (passed to a func, len(v)) stays a view
    subscripted = {id(n.value) for n in ast.walk(definition) if isinstance(n, ast.Subscript)}
    bound = {id(n.targets[0]) for n in ast.walk(definition) if isinstance(n, ast.Assign)}
    for node in ast.walk(definition):
        if isinstance(node, ast.Name) and node.id in views and id(node) not in subscripted \
                and id(node) not in bound:
            views.pop(node.id)
    return views


class _ThroughParent(ast.NodeTransformer):
    def __init__(self, views):
        self.views = views

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in self.views:
            return ast.copy_location(ast.Pass(), node)
        return self.generic_visit(node)

    def visit_Subscript(self, node):
        node = self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id in self.views:
            parent, parts = self.views[node.value.id]
            index = ast.Tuple(elts=list(parts) + _index_parts(node.slice), ctx=ast.Load())
            return ast.copy_location(ast.Subscript(
                value=ast.Name(id=parent, ctx=ast.Load()), slice=index, ctx=node.ctx), node)
        return node


def inline_array_views(definition, ndims):
    """*definition* (an ``ast.FunctionDef``) with its array views read through their parents;
    *ndims*: {array parameter: its number of dims}.  Returns the names inlined."""
    views = _views(definition, ndims, _stores(definition))
    if views:
        _ThroughParent(views).visit(definition)
        ast.fix_missing_locations(definition)
    return set(views)
