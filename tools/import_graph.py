"""The package's import graph: modules in import cycles and function-local imports.

``python tools/import_graph.py [--verbose]`` prints the strongly connected components
of the graph of ``numba_sim`` modules and the count of imports of the package's own
modules made inside functions.  Every import counts: module level, inside functions,
and ``importlib.import_module``/``__import__`` calls with a literal name.  ``from
pkg import name`` points at ``pkg.name`` when that is a module, else at ``pkg``;
every module also depends on its parent package, as Python imports it first.
``tests/test_architecture.py`` holds the budgets of issue 16.
"""

import ast
import os
import sys
from collections import defaultdict

PACKAGE = "numba_sim"


def package_modules(root):
    modules = {}
    for folder, _dirs, files in os.walk(os.path.join(root, PACKAGE)):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                module = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                if module.endswith(".__init__"):
                    module = module[: -len(".__init__")]
                modules[module] = path
    return modules


def _extension_modules(root):
    """Compiled modules of the package (the host library): leaves of the graph."""
    found = set()
    for folder, _dirs, files in os.walk(os.path.join(root, PACKAGE)):
        for name in files:
            if name.endswith((".so", ".pyd")):
                stem = name.split(".")[0]
                found.add(".".join(os.path.relpath(os.path.join(folder, stem), root).split(os.sep)))
    return found


def _owning_module(name, modules):
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def _import_targets(node, package):
    """Names one AST node imports: dotted names, or (package, name) for ``from`` imports."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(parts + ([base] if base else []))
        return [(base, alias.name) for alias in node.names]
    if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and getattr(node.func, "attr", getattr(node.func, "id", None))
            in ("import_module", "__import__")):
        return [node.args[0].value]
    return []


def _function_local(tree):
    local = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for inner in ast.walk(node):
                if inner is not node:
                    local.add(id(inner))
    return local


def import_graph(root="."):
    """(modules, edges, local_imports): module -> path, module -> set of modules it imports,
    and (module, line, target) for each target of an import made inside a function."""
    modules = package_modules(root)
    leaves = _extension_modules(root)
    edges = defaultdict(set)
    local_imports = []
    for module, path in modules.items():
        with open(path) as source:
            tree = ast.parse(source.read(), path)
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        inside_functions = _function_local(tree)
        for node in ast.walk(tree):
            for target in _import_targets(node, package):
                if isinstance(target, tuple):
                    base, name = target
                    target = f"{base}.{name}" if f"{base}.{name}" in modules else base
                if target.split(".")[0] != PACKAGE or target in leaves:
                    continue
                owner = _owning_module(target, modules)
                if owner and owner != module:
                    edges[module].add(owner)
                    if id(node) in inside_functions:
                        local_imports.append((module, node.lineno, owner))
    return modules, edges, local_imports


def import_cycles(modules, edges):
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def local_import_statements(local_imports):
    """The number of import statements (not targets) made inside functions."""
    return len({(module, line) for module, line, _ in local_imports})


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    modules, edges, local_imports = import_graph(root)
    cycles = import_cycles(modules, edges)
    print(f"{len(modules)} modules; {sum(map(len, cycles))} in import cycles "
          f"({len(cycles)} knots: {[len(c) for c in cycles]}); "
          f"{local_import_statements(local_imports)} function-local import statements of the "
          "package's own modules")
    for cycle in cycles:
        print("  knot:", ", ".join(cycle))
    if "--verbose" in argv:
        for module, line, target in sorted(local_imports):
            print(f"  local: {module}:{line} -> {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
