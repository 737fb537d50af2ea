"""The kernel-language rewrite: the AST of a ``@sim.kernel`` / ``@sim.func`` body
is rewritten before Numba sees it, as Warp rewrites its kernels' AST.

* ``sim.tid()`` becomes the hidden thread-index parameter ``__sim_tid__`` (a
  tuple of int32, one per launch dimension): ``i = tid()`` takes the leading
  index (Warp's rule), ``i, j = tid()`` unpacks it.
* A kernel that returns a value is rejected, with the user's file and line.

The rewritten function keeps the original's live globals, closure cells and
line numbers (Numba's errors point at the user's source), and works for
functions defined in notebooks and inside other functions.
"""

import ast
import inspect
import linecache
import textwrap
import types

TID_PARAMETER = "__sim_tid__"
SIM_MODULE_NAME = "__sim__"


class KernelSourceError(SyntaxError):
    """A construct the kernel language does not accept, reported at the user's line."""


def _source_of(fn):
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise KernelSourceError(
            f"cannot read the source of {fn.__qualname__}: numba_sim rewrites kernel and func "
            f"sources, so they must be defined in a file or a notebook cell ({e})") from None
    return textwrap.dedent("".join(lines)), first_line


def _error(message, fn, node):
    filename = fn.__code__.co_filename
    line = linecache.getline(filename, node.lineno).rstrip("\n")
    return KernelSourceError(message, (filename, node.lineno, node.col_offset + 1, line))


class _Resolver:
    """Finds what a callee expression (``sim.tid``, ``tid``) refers to, statically."""

    def __init__(self, fn):
        closure = inspect.getclosurevars(fn)
        self.namespace = {**fn.__globals__, **closure.nonlocals}

    def resolve(self, node):
        if isinstance(node, ast.Name):
            return self.namespace.get(node.id, _MISSING)
        if isinstance(node, ast.Attribute):
            owner = self.resolve(node.value)
            return getattr(owner, node.attr, _MISSING) if owner is not _MISSING else _MISSING
        return _MISSING


_MISSING = object()


class _KernelRewriter(ast.NodeTransformer):
    def __init__(self, fn, resolver, is_kernel):
        self.fn = fn
        self.resolver = resolver
        self.is_kernel = is_kernel
        self.depth = 0

    def _is_tid_call(self, node):
        from numba_sim.threads import tid

        return isinstance(node, ast.Call) and self.resolver.resolve(node.func) is tid

    def _tid(self, node, index=None):
        if node.args or node.keywords:
            raise _error("tid() takes no arguments", self.fn, node)
        name = ast.Name(id=TID_PARAMETER, ctx=ast.Load())
        if index is None:
            return ast.copy_location(name, node)
        subscript = ast.Subscript(value=name, slice=ast.Constant(index), ctx=ast.Load())
        return ast.copy_location(subscript, node)

    def visit_FunctionDef(self, node):
        self.depth += 1
        try:
            if self.depth > 1:
                return node  # nested functions are not kernel code
            node.decorator_list = []
            node.returns = None
            for arg in node.args.args + node.args.kwonlyargs:
                arg.annotation = None
            self.generic_visit(node)
            return node
        finally:
            self.depth -= 1

    def visit_Assign(self, node):
        if self.is_kernel and self._is_tid_call(node.value):
            target = node.targets[0]
            unpacks = isinstance(target, (ast.Tuple, ast.List)) and len(node.targets) == 1
            node.value = self._tid(node.value, index=None if unpacks else 0)
            return node
        return self.generic_visit(node)

    def visit_Call(self, node):
        if self._is_tid_call(node):
            if not self.is_kernel:
                raise _error("sim.tid() is only legal inside a @sim.kernel (it is the index of "
                             "the launched thread; pass it to funcs as an argument)", self.fn, node)
            return self._tid(node, index=0)
        return self.generic_visit(node)

    def visit_Return(self, node):
        if self.is_kernel and self.depth == 1 and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            raise _error("a @sim.kernel cannot return a value (write results into an array "
                         "argument instead)", self.fn, node)
        return self.generic_visit(node)


def rewrite(fn, is_kernel):
    """The kernel-language version of *fn*: a new function over the same globals.

    Kernels get the hidden first parameter ``__sim_tid__``.
    """
    source, first_line = _source_of(fn)
    tree = ast.parse(source)
    ast.increment_lineno(tree, first_line - 1)
    definition = tree.body[0]
    if not isinstance(definition, ast.FunctionDef):
        raise _error("expected a function definition", fn, definition)
    definition = _KernelRewriter(fn, _Resolver(fn), is_kernel).visit(definition)
    if is_kernel:
        definition.args.args.insert(0, ast.arg(arg=TID_PARAMETER))
    return _compile_like(fn, definition)


def _compile_like(fn, definition):
    """Compile *definition* as a function with *fn*'s globals, closure and file name.

    The definition is wrapped in an outer function whose parameters are the
    original free variables, so the compiled code refers to them as closure
    cells; the original cells are then attached to the new function.
    """
    freevars = fn.__code__.co_freevars
    outer = ast.FunctionDef(
        name="__sim_outer__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=v) for v in freevars],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[definition, ast.Return(value=ast.Name(id=definition.name, ctx=ast.Load()))],
        decorator_list=[], returns=None,
    )
    if "type_params" in ast.FunctionDef._fields:  # Python >= 3.12
        outer.type_params = []
    module = ast.Module(body=[outer], type_ignores=[])
    ast.fix_missing_locations(module)
    ast.copy_location(outer, definition)
    code = compile(module, fn.__code__.co_filename, "exec")
    outer_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner_code = next(c for c in outer_code.co_consts if isinstance(c, types.CodeType)
                      and c.co_name == definition.name)
    cells = dict(zip(freevars, fn.__closure__ or ()))
    closure = tuple(cells[name] for name in inner_code.co_freevars)
    rewritten = types.FunctionType(inner_code, fn.__globals__, fn.__name__, fn.__defaults__,
                                   closure or None)
    rewritten.__qualname__ = fn.__qualname__
    rewritten.__module__ = fn.__module__
    rewritten.__doc__ = fn.__doc__
    rewritten.__wrapped_kernel_source__ = fn
    return rewritten
