"""The kernel-language rewrite: the AST of a ``@sim.kernel`` / ``@sim.func`` body
is rewritten before Numba sees it, as Warp rewrites its kernels' AST.

* ``sim.tid()`` becomes the hidden thread-index parameter ``__sim_tid__`` (a
  tuple of int32, one per launch dimension): ``i = tid()`` takes the leading
  index (Warp's rule), ``i, j = tid()`` unpacks it.  Anywhere but a kernel it
  is an error.
* Warp's scalar rules: float literals are float32, int literals assigned or
  returned are int32, arithmetic operators become the functions of
  numba_sim.kernel_ops (int32 stays int32, C-style integer ``/`` and ``%``),
  ``float(x)`` / ``int(x)`` convert to float32 / int32.
* Component assignment: ``v.x = 1.0``, ``v[1] = 2.0``, ``m[i, j] = 0.0``,
  ``arr[i].z = 5.0`` and their augmented forms become value-returning helper
  calls that rebind the variable; ``arr[i] += x``, ``arr[i] -= x``,
  ``arr[i][0] += x`` and ``arr[i].z -= x`` on array elements are atomic.
* A kernel that returns a value, and Warp's output-argument forms, are
  rejected with the user's file and line and the form to use instead.
* Names the function reads but neither defines nor finds in its globals, closure or
  Python's builtins resolve in numba_sim (``vec3(...)``, ``expect_eq(...)`` without
  ``sim.``), as Warp resolves them in the ``warp`` module.
* Python floats read from the globals or closure (``C = 1.5``, ``math.pi``) are
  float32, as Warp types them; NumPy scalars (``sim.float64(...)``) keep their type.
* ``sim.static(expr)`` is evaluated once, when the body is rewritten, in the
  function's globals and closure and its local names last assigned a literal,
  and replaces the call (a constant, or the object itself: a func, a type, a
  tuple...), as Warp's ``wp.static``.  An expression that reads another local
  variable stays an ordinary expression (Warp evaluates it from the variable's
  type).
* Star arguments of calls: ``vec4(*v3, 1.0)`` and ``vec2(*arr[0:4:2])`` (literal bounds)
  unpack a vector, matrix (its rows), quaternion or array slice (kernel_ops.unpack).
* ``for i in reversed(range(...))`` iterates the range backwards (int32).
* Warp's query loops ``while hash_grid_query_next(query, j):`` (and ``bvh_query_next``,
  ``mesh_query_aabb_next``) become ``for j in query:``.
* Warp's output-argument statements of the linear-algebra builtins
  (``svd3(A, U, sigma, V)``, ``svd2``, ``qr3(A, Q, R)``, ``eig3(A, Q, d)``)
  become assignments of their tuple-returning forms (``U, sigma, V = svd3(A)``).
* ``print(...)`` (and Warp's ``sim.print(x)``) prints in Warp's format
  (numba_sim.builtins.debug), and
  ``expect_eq`` / ``expect_neq`` / ``expect_near`` get the call's ``file:line``
  (a last string-literal argument) for their failure message.
* ``sim.ref[T]`` parameters of funcs: the func also returns their final values and each
  call site writes them back into the caller's storage (numba_sim.references).

The rewritten function keeps the original's live globals, closure cells and
line numbers (Numba's errors point at the user's source), and works for
functions defined in notebooks and inside other functions.
"""

import ast
import builtins
import copy
import enum
import inspect
import linecache
import sys
import textwrap
import types

import numpy as np
from numba.core.dispatcher import Dispatcher

from numba_sim import autodiff_hooks
from numba_sim import (config, debug_checks, dynamic_loops, function_targets, kernel_ops,
                       references, return_checks)
from numba_sim.annotations import function_annotations, function_namespace
from numba_sim.arrays import array, device_of, shape_dim, zeros
from numba_sim.func_overloads import FuncOverloads
from numba_sim.errors import WarpCodegenError, WarpCodegenTypeError, WarpCodegenValueError
from numba_sim.builtins.debug import EXPECTATIONS, expect_near, kernel_print
from numba_sim.builtins.random import STATE_TAKERS, rand_init
from numba_sim.typing.random_state import state_of
from numba_sim.scalars import uint32
from numba_sim.spatial.bvh_query import bvh_query_bounded, bvh_query_next
from numba_sim.spatial.hash_grid_query import hash_grid_query_next
from numba_sim.spatial.mesh_query import (
    expand_out_arguments,
    mesh_query_aabb_next,
    mesh_query_next,
)
from numba_sim.builtins.linalg import output_form_assignment
from numba_sim.lowering.kernel_ops import slice_storer, slice_unpacker
from numba_sim.structs import Struct
from numba_sim.threads import static, tid
from numba_sim.types import TYPE_KEYWORDS, Value, drop_type_keywords

TID_PARAMETER = "__sim_tid__"
OPS = "__sim_ops__"
"""Name under which rewritten code reaches numba_sim.kernel_ops (a closure cell)."""

_BINARY_NAMES = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and_",
    ast.BitOr: "or_", ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift",
}



_QUERY_NEXT = (hash_grid_query_next, bvh_query_next, mesh_query_aabb_next, mesh_query_next)
"""Warp's query-advancing builtins, whose ``while`` loops the rewrite turns into ``for``."""

def _loop_invariant(expression, body):
    """Whether ``expression`` (a ``while`` test's argument) keeps its value through ``body``:
    a constant, or a name that ``body`` never assigns."""
    if isinstance(expression, ast.Constant):
        return True
    if not isinstance(expression, ast.Name):
        return False
    return not any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                   and n.id == expression.id for statement in body for n in ast.walk(statement))


class KernelSourceError(SyntaxError, WarpCodegenError, WarpCodegenTypeError,
                        WarpCodegenValueError):
    """A construct the kernel language does not accept, reported at the user's line.

    Also each of Warp's kernel compile error classes, which Warp raises for these when it
    builds the kernel (a kernel's is raised at its first launch or compile: kernel.py)."""


KERNEL_RETURN_ERROR = (
    "a @sim.kernel cannot return a value: Warp kernels cannot return values. Write results to "
    "output arguments, and omit the return annotation or use `-> None`.")
LIST_CONSTRUCT_ERROR = (
    "List constructs are not supported in kernels. Use vectors like `wp.vec3()` for small "
    "fixed-size collections, or `wp.zeros(shape=N, dtype=...)` for stack-allocated arrays.")
"""Warp's messages (ported code and Warp's tests match them)."""


def _unsupported_construct(node):
    return (f"Construct `ast.{type(node).__name__}` not supported in kernels (nor in funcs: "
            f"use vectors, matrices, structs or arrays).")


class KernelAttributeError(AttributeError):
    """An attribute of a module or value read in a kernel or func that it does not have
    (as Warp's ``WarpCodegenAttributeError``, an AttributeError only), with the user's file
    and line (``.filename``, ``.lineno``; an AttributeError cannot also be a SyntaxError)."""

    def __init__(self, message, filename, lineno):
        super().__init__(message)
        self.filename, self.lineno = filename, lineno


SOURCE_ERRORS = (KernelSourceError, KernelAttributeError)
"""The errors of a kernel's source that are raised when it is built (kernel.py)."""


def _attribute_error(owner, path, attr, called, warp_path, fn, node):
    """*warp_path*: *path* in Warp's spelling when it starts at numba_sim's package, or None."""
    if called and warp_path:  # Warp's message, in its spelling
        message = f"Could not find function {warp_path}.{attr}: {path} has no {attr}"
    elif called:
        message = f"Could not find function {path}.{attr}"
    else:
        message = f"`{attr}` is not an attribute of `{path}` ({type(owner).__name__} {owner!r:.60})"
    error = _error(message, fn, node)
    return KernelAttributeError(f"{message}\n  File \"{error.filename}\", line {error.lineno}\n"
                                f"    {(error.text or '').strip()}", error.filename, error.lineno)


def _return_annotation(fn):
    """*fn*'s return annotation (None if it has none or it cannot be evaluated)."""
    try:
        return function_annotations(fn).get("return")
    except Exception:  # noqa: BLE001 (an annotation that names what is not defined: no check)
        return None


def _source_of(fn):
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise KernelSourceError(
            f"cannot read the source of {fn.__qualname__}: numba_sim rewrites kernel and func "
            f"sources, so they must be defined in a file or a notebook cell ({e})") from None
    return textwrap.dedent("".join(lines)), first_line


def _error(message, fn, node, error_class=None):
    filename = fn.__code__.co_filename
    line = linecache.getline(filename, node.lineno).rstrip("\n")
    return (error_class or KernelSourceError)(
        message, (filename, node.lineno, node.col_offset + 1, line))


class StaticExpressionError(KernelSourceError):
    """A ``sim.static`` expression that fails when evaluated, or gives a value a kernel
    cannot hold: raised when the kernel is declared (decorated), as Warp evaluates its
    static expressions then (kernel.py), not at its first launch as the other source
    errors."""


_MISSING = object()


def package_names(fn, definition):
    """The names *definition* reads that neither it, its globals, its closure nor Python's
    builtins define, but numba_sim does: ``vec3(...)``, ``expect_eq(...)`` written without
    the module, which Warp resolves in the ``warp`` module (``Adjoint.resolve_path``)."""
    package = sys.modules["numba_sim"]  # imported: it is this module's package
    read = {node.id for node in ast.walk(definition)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    known = function_namespace(fn).keys() | vars(builtins).keys() | _local_names(definition)
    names = {name for name in read - known
             if not name.startswith("_") and hasattr(package, name)}
    if names:  # (the module's source is parsed only for a kernel that may need it)
        names -= _module_level_names(fn.__code__.co_filename)
    return {name: getattr(package, name) for name in sorted(names)}


_MODULE_NAMES = {}


def _module_level_names(filename):
    """The names the module in *filename* binds at its top level, also below the function
    (a global defined after a kernel is still the kernel's, never numba_sim's)."""
    lines = linecache.getlines(filename)
    key = (filename, len(lines), hash(tuple(lines)))
    if key not in _MODULE_NAMES:
        try:
            tree = ast.parse("".join(lines))
        except SyntaxError:  # a notebook cell or generated code: its globals are all there is
            tree = ast.Module(body=[], type_ignores=[])
        names = set()
        for statement in tree.body:
            wrapper = ast.Module(body=[statement], type_ignores=[])
            if isinstance(statement, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                names.add(statement.name)
                continue
            names.update(n.id for n in ast.walk(wrapper)
                         if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in statement.names)
        _MODULE_NAMES[key] = frozenset(names)
    return _MODULE_NAMES[key]


class _Resolver:
    """Finds what a callee expression (``sim.tid``, ``tid``) refers to, statically."""

    def __init__(self, fn, package_names=None):
        self.namespace = {**vars(builtins), **function_namespace(fn), **(package_names or {})}

    def resolve(self, node):
        if isinstance(node, ast.Name):
            return self.namespace.get(node.id, _MISSING)
        if isinstance(node, ast.Attribute):
            owner = self.resolve(node.value)
            return getattr(owner, node.attr, _MISSING) if owner is not _MISSING else _MISSING
        return _MISSING


def _literal_int(node):
    """The int of a literal ``3`` / ``-3`` node, else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _literal_int(node.operand)
        return None if value is None else -value
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _is_float_literal(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is float


def _slice_bounds(node):
    """The bounds of a slice ``a:b:c``: literal ints (``-2`` included) and missing ones as
    Constant nodes, other expressions as they are (typing rejects them)."""
    bounds = []
    for part in (node.lower, node.upper, node.step):
        value = None if part is None else _literal_int(part)
        if part is not None and value is None:
            bounds.append(part)
        else:
            bounds.append(ast.copy_location(ast.Constant(value), node))
    return bounds


def _constant_slice_key(node):
    """The index of ``x[1:]``, ``m[:, 2]``, ``m[1:, :-1]`` as a Python constant (slices of
    literal int or missing bounds, literal ints), when it has a slice in it; else None."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    if not any(isinstance(p, ast.Slice) for p in parts):
        return None
    key = []
    for part in parts:
        if isinstance(part, ast.Slice):
            bounds = [None if b is None else _literal_int(b)
                      for b in (part.lower, part.upper, part.step)]
            if any(b is None and p is not None
                   for b, p in zip(bounds, (part.lower, part.upper, part.step))):
                return None
            key.append(slice(*bounds))
        else:
            value = _literal_int(part)
            if value is None:
                return None
            key.append(value)
    return tuple(key) if isinstance(node, ast.Tuple) else key[0]


def _ops(name, node, *args):
    call = ast.Call(func=ast.Attribute(value=ast.Name(id=OPS, ctx=ast.Load()), attr=name,
                                       ctx=ast.Load()), args=list(args), keywords=[])
    return ast.copy_location(call, node)


def _load(node):
    node = copy.deepcopy(node)
    for child in ast.walk(node):
        if hasattr(child, "ctx"):
            child.ctx = ast.Load()
    return node


def _store(node):
    node = copy.deepcopy(node)
    node.ctx = ast.Store()
    return node


def _array_parameters(fn):
    """Names of *fn*'s parameters annotated ``sim.array(...)``."""
    annotations = function_annotations(fn)
    return {name for name, annotation in annotations.items() if isinstance(annotation, array)}


def _verified_arrays(fn):
    """Names of *fn*'s parameters annotated ``sim.array(...)`` or not annotated (typed from
    the launch: maybe arrays)."""
    annotations = function_annotations(fn)
    return {name for name in inspect.signature(fn).parameters
            if isinstance(annotations.get(name), array) or name not in annotations}


def _is_simple(node):
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, ast.Tuple):
        return all(_is_simple(e) for e in node.elts)
    return False


class _KernelRewriter(ast.NodeTransformer):
    def __init__(self, fn, resolver, is_kernel, debug=False, target="cpu", verify_fp=False):
        self.fn = fn
        self.resolver = resolver
        self.is_kernel = is_kernel
        self.debug = debug
        self.target = target
        self.where = f"{'kernel' if is_kernel else 'func'} {fn.__qualname__}"
        self.array_parameters = _array_parameters(fn) if debug else set()
        self.verified_arrays = _verified_arrays(fn) if verify_fp else set()
        """sim.config.verify_fp: the parameters whose element stores are checked finite."""
        self.helpers = {}
        self.depth = 0
        self.temporaries = 0
        self.local_names = set()
        self.constants = {}
        self.literals = {}
        self.bound_calls = {}
        self.resolved_statics = {}
        """``sim.static`` expression (its source) -> its value, as Warp's adjoint records them."""
        self.deferred_statics = False
        """Whether a ``sim.static`` read a local variable and stayed an ordinary expression."""
        self.function_locals = {}
        self.gradient_locals = {}
        """local -> the function f of a ``local = sim.grad(f)`` (Warp's gradient functions)"""
        self.truth_arrays = None  # the array parameters, read when a condition needs them
        self.return_annotation = _MISSING  # a func's, read at its first return
        self.local_arrays = set()
        """Local names assigned ``sim.zeros(...)`` (Warp's fixed-size arrays)."""
        """Local name -> the func or builtin it was assigned (``f = some_func``)."""
        """Local names last assigned a literal (``n = 3``): sim.static may read them."""

    # -- debug mode: bounds and NaN checks on the array parameters
    def _helper(self, kind, name, count, node):
        helper_name = f"__sim_{kind}_{name}_{count}"
        if helper_name not in self.helpers:
            factory = debug_checks.index_check if kind == "index" else debug_checks.nan_check
            self.helpers[helper_name] = factory(self.where, name, count, self.target)
        return ast.copy_location(ast.Name(id=helper_name, ctx=ast.Load()), node)

    def _check_call(self, kind, array, index, node):
        indices = list(index.elts) if isinstance(index, ast.Tuple) else [index]
        line = ast.copy_location(ast.Constant(node.lineno), node)  # for the error's sentence
        call = ast.Call(func=self._helper(kind, array.id, len(indices), node),
                        args=[_load(array), line] + [_load(i) for i in indices], keywords=[])
        return ast.copy_location(call, node)

    def _checked_parameter(self, node):
        return isinstance(node, ast.Name) and node.id in self.array_parameters

    def visit_Subscript(self, node):
        for part in node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]:
            if isinstance(part, ast.Slice):  # f[0:n] of n = 3: a constant bound, as in Warp
                for field in ("lower", "upper", "step"):
                    bound = getattr(part, field)
                    if isinstance(bound, ast.Name) \
                            and type(self.literals.get(bound.id)) is int:
                        setattr(part, field, ast.copy_location(
                            ast.Constant(self.literals[bound.id]), bound))
        node = self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "shape" and isinstance(node.slice, ast.Constant) \
                and type(node.slice.value) is int:  # a.shape[1]: Warp's shape (arrays.shape_dim)
            self.helpers["__sim_shape_dim"] = shape_dim
            return ast.copy_location(ast.Call(
                func=ast.Name(id="__sim_shape_dim", ctx=ast.Load()),
                args=[node.value.value, node.slice], keywords=[]), node)
        for part in node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]:
            if isinstance(part, ast.Slice) and isinstance(part.step, ast.Constant) \
                    and type(part.step.value) is int and part.step.value == 0:
                raise _error("Slice step cannot be zero", self.fn, part)  # Warp's compile error
        if isinstance(node.ctx, ast.Load) and self._checked_parameter(node.value):
            node.slice = self._check_call("index", node.value, node.slice, node)  # a[check(a, i)]
        return node

    def _verified(self, target, statements, node):
        """``sim.config.verify_fp`` (Warp's ``verify_fp``): *statements*, a store into an
        element of an array parameter (or a component of one), followed by the check that
        prints the stored value with the kernel's file and line when it is not finite."""
        base = target
        while self.verified_arrays and isinstance(base, (ast.Subscript, ast.Attribute)):
            if hasattr(base, "sim_slice_key"):
                return statements
            if isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name) \
                    and base.value.id in self.verified_arrays:
                where = f"{self.fn.__code__.co_filename}:{node.lineno} - {self.fn.__name__}"
                check = _ops("verify_finite", node, _load(target), ast.Constant(where))
                return statements + [ast.copy_location(ast.Expr(check), node)]
            base = base.value
        return statements

    def _with_store_checks(self, target, statements, node):
        """Debug mode: check the index before a store into an array parameter, and the
        stored element for NaN after it."""
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            if isinstance(target, ast.Subscript) and self._checked_parameter(target.value):
                before = self._check_call("index", target.value, target.slice, node)
                after = self._check_call("nan", target.value, target.slice, node)
                return [ast.copy_location(ast.Expr(before), node)] + statements + \
                    [ast.copy_location(ast.Expr(after), node)]
            target = target.value
        return statements

    # -- helpers
    def _temporary(self):
        self.temporaries += 1
        return f"__sim_t{self.temporaries}"

    def _is_call_to(self, node, obj):
        return isinstance(node, ast.Call) and self.resolver.resolve(node.func) is obj

    def _int32_literal(self, node):
        """``int32(n)`` for an int literal (negative ones are literals too), else the node."""
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return _ops("int32", node, node)
        if isinstance(node, ast.Tuple):
            node.elts = [self._int32_literal(e) for e in node.elts]
        return node

    # -- functions
    def visit_FunctionDef(self, node):
        self.depth += 1
        try:
            if self.depth > 1:
                return node  # nested functions are not kernel code
            node.decorator_list = []
            if self.is_kernel and _return_annotation(self.fn) not in (None, type(None)):
                raise _error(KERNEL_RETURN_ERROR, self.fn, node)
            node.returns = None
            self.local_names = _local_names(node)
            self.literals = _literal_locals(node)
            self.bound_calls = _calls_bound_once(node)
            mutated = dynamic_loops.mutated_constant(node, self.resolver.resolve,
                                                     self.local_names, static, config.max_unroll)
            if mutated is not None:  # Warp's rule (dynamic_loops.py)
                raise _error(dynamic_loops.DYNAMIC_LOOP_MESSAGE.format(name=mutated[0]), self.fn,
                             mutated[1])
            for arg in node.args.args + node.args.kwonlyargs:
                arg.annotation = None
            node.body = self._statements(node.body)
            return node
        finally:
            self.depth -= 1

    def _statements(self, statements):
        result = []
        for statement in statements:
            for part in references.expand_statement(  # calls of funcs taking sim.ref
                    statement, self, lambda message, node: _error(message, self.fn, node)):
                for piece in expand_out_arguments(  # Warp's output-argument mesh queries
                        part, self.resolver.resolve, self._temporary):
                    rewritten = self.visit(piece)
                    result.extend(rewritten if isinstance(rewritten, list) else [rewritten])
        return result

    def generic_visit(self, node):
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(node, field, None), list) and not isinstance(node, ast.expr):
                setattr(node, field, self._statements(getattr(node, field)))
        for field, value in ast.iter_fields(node):
            if field in ("body", "orelse", "finalbody") and not isinstance(node, ast.expr):
                continue
            if isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
            elif isinstance(value, list):
                setattr(node, field, [self.visit(v) if isinstance(v, ast.AST) else v
                                      for v in value])
        return node

    # -- expressions
    def visit_Constant(self, node):
        if type(node.value) is float:  # float32 that keeps its exact value (kernel_ops.py)
            bits = ast.copy_location(ast.Constant(kernel_ops.literal_bits(node.value)), node)
            return _ops("float_literal", node, bits)
        return node

    def _outer_float(self, node):
        """Whether *node* (a Name or an attribute chain on one) reads a Python float from
        the globals or the closure (Warp types those float32)."""
        base = node
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name) or base.id in self.local_names:
            return False
        return type(self.resolver.resolve(node)) is float

    def _outer_int_enum(self, node):
        """The int of *node* when it reads a member of an int enum (``enum.IntEnum``,
        ``enum.IntFlag``) from the globals or the closure (Warp's int constants), else None."""
        base = node
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(node.ctx, ast.Load) or not isinstance(base, ast.Name) \
                or base.id in self.local_names:
            return None
        value = self.resolver.resolve(node)
        if isinstance(node, ast.Attribute) and node.attr == "value":  # MyIntEnum.B.value
            value = self.resolver.resolve(node.value)
        return int(value) if isinstance(value, enum.Enum) and isinstance(value, int) else None

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and self._outer_float(node):
            return _ops("float32", node, node)
        member = self._outer_int_enum(node)
        if member is not None:
            return ast.copy_location(ast.Constant(member), node)
        return node

    def _class_constant(self, node):
        """The value of *node* when it reads a Python number from a plain class of the
        globals or the closure (``Foobar.ONE``: Warp's constants in a namespace class, which
        Numba cannot read from a class), else None."""
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(node.ctx, ast.Load) or not isinstance(base, ast.Name) \
                or base.id in self.local_names:
            return None
        owner = self.resolver.resolve(node.value)
        if not isinstance(owner, type) or owner.__module__.split(".")[0] in ("numba_sim", "numpy") \
                or hasattr(owner, "numpy_dtype") or hasattr(owner, "spec"):
            return None
        value = getattr(owner, node.attr, None)
        return value if type(value) in (bool, int, float) else None

    def _check_attribute(self, node, called=False):
        """Warp's AttributeError for an attribute chain on a global or closure module or value
        that names what is not there (``sim.foo.bar``, ``CAPTURED_VEC.foo``)."""
        chain, base = [], node
        while isinstance(base, ast.Attribute):
            chain.append(base)
            base = base.value
        if not isinstance(node.ctx, ast.Load) or not isinstance(base, ast.Name) \
                or base.id in self.local_names:
            return
        owner, path = self.resolver.resolve(base), base.id
        warp_path = "wp" if owner is sys.modules["numba_sim"] else None
        for link in reversed(chain):
            if not isinstance(owner, (types.ModuleType, Value, Struct)):
                return
            value = getattr(owner, link.attr, _MISSING)
            if value is _MISSING:
                raise _attribute_error(owner, path, link.attr, called and link is node,
                                       warp_path, self.fn, link)
            owner, path = value, f"{path}.{link.attr}"
            warp_path = warp_path and f"{warp_path}.{link.attr}"

    def visit_Attribute(self, node):
        self._check_attribute(node)
        constant = self._class_constant(node)
        if constant is not None:
            return self.visit_Constant(ast.copy_location(ast.Constant(constant), node))
        if isinstance(node.ctx, ast.Load) and self._outer_float(node):
            if self.resolver.resolve(node.value) is sys.modules["numba_sim"]:
                # Warp's constants (sim.pi, sim.E): literals, whose double a float64 keeps
                value = self.resolver.resolve(node)
                return self.visit_Constant(ast.copy_location(ast.Constant(value), node))
            return _ops("float32", node, node)
        member = self._outer_int_enum(node)
        if member is not None:
            return ast.copy_location(ast.Constant(member), node)
        return self.generic_visit(node)

    _CHAIN_OPERATORS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=",
                        ast.Gt: ">", ast.GtE: ">="}

    def visit_Compare(self, node):
        """A chained comparison ``a < b < c`` -> ``chain_compare("< <", a, b, c)``, as Warp's:
        every operand evaluated once, left to right, before comparing, and consecutive
        comparators of one type (two numbers count as one: the scalar rule makes them meet;
        kernel_ops.chain_compare)."""
        node = self.generic_visit(node)
        if len(node.ops) < 2 or not all(type(op) in self._CHAIN_OPERATORS for op in node.ops):
            return node
        symbols = " ".join(self._CHAIN_OPERATORS[type(op)] for op in node.ops)
        return _ops("chain_compare", node, ast.copy_location(ast.Constant(symbols), node),
                    node.left, *node.comparators)

    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        name = _BINARY_NAMES.get(type(node.op))
        if name is None:  # the matrix product keeps its operator
            return node
        return _ops(name, node, node.left, node.right)

    def _truth(self, node):
        """*node* as a condition: an array parameter is true when it has elements (Warp's
        truth of an array: not null; ``None`` passed for it is an empty array here)."""
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            return node
        if self.truth_arrays is None:
            try:
                self.truth_arrays = _array_parameters(self.fn)
            except Exception:  # noqa: BLE001 (an annotation that cannot be read: none known)
                self.truth_arrays = set()
        if node.id not in self.truth_arrays:
            return node
        size = ast.Attribute(value=node, attr="size", ctx=ast.Load())
        return ast.copy_location(ast.Compare(left=size, ops=[ast.NotEq()],
                                             comparators=[ast.Constant(0)]), node)

    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        node.values = [self._truth(value) for value in node.values]
        return node

    def visit_If(self, node):
        if self._is_call_to(node.test, static):
            test = self.visit(node.test)
            if isinstance(test, ast.Constant):  # Warp drops the branch not taken, unbuilt
                return self._statements(node.body if test.value else node.orelse) \
                    or [ast.copy_location(ast.Pass(), node)]
        node = self.generic_visit(node)
        node.test = self._truth(node.test)
        return node

    def visit_IfExp(self, node):
        node = self.generic_visit(node)
        node.test = self._truth(node.test)
        return node

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            node.operand = self._truth(node.operand)
        if isinstance(node.op, ast.USub):
            if isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
                # -3 stays a constant: v[:-1] and v[::-1] are constant slices, as in Warp
                return ast.copy_location(ast.Constant(-node.operand.value), node)
            return _ops("neg", node, node.operand)
        return node

    def visit_Call(self, node):
        if self._is_call_to(node, tid):
            if not self.is_kernel:
                raise _error("sim.tid() is only legal inside a @sim.kernel (it is the index of "
                             "the launched thread; pass it to funcs as an argument)", self.fn, node)
            return self._tid(node, index=0)
        self._unpack_star_arguments(node)
        gradient = self._gradient_of(node.func)
        if gradient is not None:  # sim.grad(f)(*args), Warp's
            node = self.generic_visit(node)
            return autodiff_hooks.gradient_call(gradient, node.args, node, self.helpers,
                                                lambda message, at: _error(message, self.fn, at))
        callee = self.resolver.resolve(node.func)
        if callee is static:
            return self._static(node)
        if callee is builtins.print or self._is_module_print(node.func):
            return self._print(node)
        cast = self._module_cast(node.func)
        if cast is not None:
            callee = cast
            node.func = ast.copy_location(ast.Name(id=cast.__name__, ctx=ast.Load()), node.func)
        if isinstance(node.func, ast.Attribute) and cast is None:  # (the forms above are not)
            self._check_attribute(node.func, called=True)
        if any(callee is expectation for expectation in EXPECTATIONS):
            return self._expectation(node, callee)
        self._check_function_arguments(node, callee)
        if isinstance(callee, type) and issubclass(callee, Value) and node.keywords:
            self._type_keywords(node, callee)
        if any(callee is taker for taker in STATE_TAKERS) and node.args \
                and isinstance(node.args[0], ast.Subscript):
            # randf(states[i]): Warp's state is a uint32 and the draw advances a copy of the
            # element (the array keeps its value): a new state holding the element's value
            self.helpers["__sim_state_of"] = state_of
            node.args[0] = ast.copy_location(ast.Call(
                func=ast.Name(id="__sim_state_of", ctx=ast.Load()), args=[node.args[0]],
                keywords=[]), node.args[0])
        if callee is uint32 and len(node.args) == 1 and not node.keywords \
                and self._is_call_to(node.args[0], rand_init):
            # uint32(rand_init(...)): Warp's state is a uint32, so the cast is the state itself
            # (a local assigned from it is advanced in place by the draws, as in Warp)
            return self.visit(node.args[0])
        if isinstance(callee, type) and issubclass(callee, np.float64) and len(node.args) == 1 \
                and not node.keywords and self._double_constant(node.args[0]):
            argument = node.args[0]
            if isinstance(argument, ast.Name) and type(self.literals.get(argument.id)) is float:
                node.args[0] = ast.copy_location(ast.Constant(self.literals[argument.id]),
                                                 argument)  # x = 0.1; float64(x)
            return node  # float64(3.141592653589793), float64(sim.PI): the double as written
        if callee is builtins.float or callee is builtins.int:
            node = self.generic_visit(node)
            return _ops("float32" if callee is builtins.float else "int32", node, *node.args)
        if callee is builtins.range:
            node = self.generic_visit(node)
            node.args = [self._int32_literal(a) for a in node.args]
            return node
        if isinstance(callee, types.MethodType) and isinstance(callee.__func__, Dispatcher):
            callee = callee.__func__  # a func on an instance (Numba's __get__): Warp's function
        if self._held_by_plain_object(node.func, callee):
            helper = f"__sim_callee_{len(self.helpers)}"
            self.helpers[helper] = callee
            node.func = ast.copy_location(ast.Name(id=helper, ctx=ast.Load()), node.func)
        variables = self._constructor_variables(node, callee)
        node = self.generic_visit(node)
        if variables:
            spec = callee.spec
            kind = _WARP_KIND_NAMES[spec.kind]
            kind = f"fill {kind}" if len(node.args) == 1 and spec.size > 1 else kind
            dtype = np.dtype(spec.scalar_type).name
            node.args = [_ops("constructor_argument", a, a, ast.Constant(dtype),
                              ast.Constant(kind)) if k in variables else a
                         for k, a in enumerate(node.args)]
        return node

    def _constructor_variables(self, node, callee):
        """The positions of the arguments of a typed constructor (``vec3f(x, 0.0, y)``) that
        are variables, not Warp's constants (literals, locals bound once to a literal, which
        are substituted, and globals or closure values): compiled, their scalars must have
        the constructor's scalar type, as in Warp (``constructor_argument``)."""
        if not (isinstance(callee, type) and issubclass(callee, Value)) or node.keywords \
                or any(isinstance(a, ast.Starred) for a in node.args):
            return set()
        variables = set()
        for k, argument in enumerate(node.args):
            base = argument.operand if isinstance(argument, ast.UnaryOp) \
                and isinstance(argument.op, (ast.USub, ast.UAdd)) else argument
            if isinstance(base, ast.Constant):
                continue
            if isinstance(argument, ast.Name) and argument.id in self.literals:
                node.args[k] = ast.copy_location(ast.Constant(self.literals[argument.id]),
                                                 argument)
                continue
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id not in self.local_names \
                    and isinstance(argument, (ast.Name, ast.Attribute)):
                continue  # a global or closure value: a constant
            variables.add(k)
        return variables

    def _double_constant(self, node):
        """Whether *node* is a float literal (``0.1``, ``-0.1``) or reads a Python float from
        the globals or the closure (``sim.PI``): a float64 made of it keeps its double value,
        as Warp's ``wp.float64(...)`` does (elsewhere such a float is a float32)."""
        if isinstance(node, ast.Name) and type(self.literals.get(node.id)) is float:
            return True  # a local constant: x = 0.1 (the call takes its value: visit_Call)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            node = node.operand
        if isinstance(node, ast.Constant):
            return type(node.value) is float
        return isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
            and self._outer_float(node)

    def _held_by_plain_object(self, func, callee):
        """Whether the callee expression *func* reaches a func, struct or value type through
        a plain Python object or class of the globals or the closure (``foo.compute()``,
        ``Namespace.helper()``): Warp resolves the path when it builds the kernel; Numba
        cannot type the object, so the call names the callee itself."""
        if not isinstance(func, ast.Attribute) or not (
                isinstance(callee, (Dispatcher, FuncOverloads))
                or isinstance(callee, type) and issubclass(callee, (Value, Struct))):
            return False
        base = func
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name) or base.id in self.local_names:
            return False
        owner = self.resolver.resolve(func.value)
        return owner is not _MISSING and not isinstance(owner, types.ModuleType)

    def _type_keywords(self, node, cls):
        """``mat32d(m, shape=(3, 2))``: the keywords of Warp's matrix() / vector() that say
        what the type already says, checked (``types.drop_type_keywords``) and dropped."""
        given = {}
        for keyword in node.keywords:
            if keyword.arg not in TYPE_KEYWORDS.get(cls.spec.kind, ("dtype",)):
                continue
            try:
                given[keyword.arg] = ast.literal_eval(keyword.value)
            except ValueError:
                given[keyword.arg] = self.resolver.resolve(keyword.value)
            if given[keyword.arg] is _MISSING:
                raise _error(f"{cls.__name__}(..., {keyword.arg}=...): {keyword.arg} must be a "
                             f"constant", self.fn, node)
        try:
            drop_type_keywords(cls.spec, cls.__name__, given)
        except TypeError as e:
            raise _error(str(e), self.fn, node) from None
        node.keywords = [k for k in node.keywords if k.arg not in given]

    def _unpack_star_arguments(self, node):
        """``f(*x)`` -> ``f(*unpack(x))`` and ``f(*x[a:b:c])`` -> ``f(*unpacker(x))`` with the
        literal bounds baked in (``unpack_slice(x, a, b, c)`` when they are not literals, an
        error): Numba takes tuples only after ``*``."""
        for argument in node.args:
            if not isinstance(argument, ast.Starred):
                continue
            value = argument.value
            if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
                bounds = _slice_bounds(value.slice)
                if all(isinstance(b, ast.Constant) for b in bounds):
                    key = tuple(b.value for b in bounds)
                    helper = "__sim_unpack_" + "_".join(str(b).replace("-", "m") for b in key)
                    self.helpers[helper] = slice_unpacker(*key)
                    argument.value = ast.copy_location(ast.Call(
                        func=ast.Name(id=helper, ctx=ast.Load()), args=[value.value],
                        keywords=[]), value)
                else:
                    argument.value = _ops("unpack_slice", value, value.value, *bounds)
            else:
                argument.value = _ops("unpack", value, value)

    def _static(self, node):
        """``sim.static(expr)``: *expr* evaluated now in the function's namespace."""
        if len(node.args) != 1 or node.keywords:
            raise _error("sim.static takes one expression", self.fn, node)
        expression = ast.Expression(body=node.args[0])
        ast.fix_missing_locations(expression)
        try:
            code = compile(expression, self.fn.__code__.co_filename, "eval")
            namespace = {name: value for name, value in self.resolver.namespace.items()
                         if name not in self.local_names}  # locals shadow globals
            namespace.update(self.constants)
            value = eval(code, namespace)  # noqa: S307 (the user's code)
        except NameError as e:
            lengths = self._local_lengths(node.args[0])
            if lengths is not None:  # len(v) of locals of known types: Warp's, from the type
                return self._static(ast.copy_location(
                    ast.Call(func=node.func, args=[lengths], keywords=[]), node))
            if getattr(e, "name", None) in self.local_names and not (
                    e.name in self.fn.__code__.co_varnames[:self.fn.__code__.co_argcount]
                    and not _calls_len(node.args[0])):
                # the expression reads a local variable that is no literal constant: Warp
                # evaluates it from the variable's type when it generates code; here it
                # stays an ordinary expression, evaluated when the kernel runs
                self.deferred_statics = True
                return self.visit(node.args[0])
            raise _error(f"Error evaluating static expression: {e}. Make sure all variables "
                         f"used in the static expression are constant.", self.fn, node,
                         StaticExpressionError) from e
        except Exception as e:  # noqa: BLE001 (reported at the user's line)
            raise _error(f"Error evaluating static expression: {e} while evaluating the "
                         f"following code generated from the static expression:\n"
                         f"{ast.unparse(node.args[0])}", self.fn, node,
                         StaticExpressionError) from e
        if isinstance(value, enum.Enum) and isinstance(value, int):  # Warp: int constants
            value = int(value)
        problem = _unsupported_static_value(value)
        if problem is not None:
            raise _error(f"Static expression returns an unsupported value: {problem} while "
                         f"evaluating the following code generated from the static "
                         f"expression:\n{ast.unparse(node.args[0])}", self.fn, node,
                         StaticExpressionError)
        self.resolved_statics[ast.unparse(node.args[0])] = value
        if type(value) in (bool, int, float, str):
            return self.visit_Constant(ast.copy_location(ast.Constant(value), node))
        name = f"__sim_static_{len(self.helpers)}"
        self.helpers[name] = value
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)

    def _local_lengths(self, expression):
        """*expression* with each ``len(name)`` of a local whose type is known when the body is
        rewritten replaced by the length (a parameter annotated with a value type, a local
        bound once to a value constructor or a builtin of constant arguments:
        ``v = sim.vec3()``, ``t = sim.transform_identity(float)``), as Warp evaluates
        ``len(local)`` in ``wp.static`` from the local's type; None when there is none."""
        replaced = []

        def length(name):
            if name in self.fn.__code__.co_varnames[:self.fn.__code__.co_argcount]:
                annotation = function_annotations(self.fn).get(name)
                if isinstance(annotation, type) and issubclass(annotation, Value):
                    return len(annotation())
                return None
            call = self.bound_calls.get(name)
            callee = None if call is None else self.resolver.resolve(call.func)
            if not (isinstance(callee, type) and issubclass(callee, Value)
                    or getattr(callee, "__module__", "") == "numba_sim"):
                return None
            namespace = {n: v for n, v in self.resolver.namespace.items()
                         if n not in self.local_names}
            namespace.update(self.constants)
            try:
                value = eval(compile(ast.fix_missing_locations(ast.Expression(body=call)),
                                     self.fn.__code__.co_filename, "eval"), namespace)
            except Exception:  # noqa: BLE001 (arguments that are no constants: unknown)
                return None
            return len(value) if isinstance(value, Value) else None

        class Lengths(ast.NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                if isinstance(node.func, ast.Name) and node.func.id == "len" \
                        and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
                    n = length(node.args[0].id)
                    if n is not None:
                        replaced.append(n)
                        return ast.copy_location(ast.Constant(n), node)
                return node

        result = Lengths().visit(copy.deepcopy(expression))
        return result if replaced else None

    def _check_function_arguments(self, node, callee):
        """A ``sim.Function`` parameter of a func takes funcs and plain builtins, not the
        kernel language's special forms (function_targets.py, Warp's rule)."""
        positions, names = function_targets.function_parameters(callee)
        if not names:
            return
        given = [(positions.get(k), a) for k, a in enumerate(node.args)] \
            + [(k.arg, k.value) for k in node.keywords if k.arg in names]
        for parameter, argument in given:
            if parameter is None:
                continue
            form = function_targets.special_form_name(self.resolver.resolve(argument))
            if form is not None:
                raise _error(
                    f"sim.Function parameters take @sim.func functions and builtins called as "
                    f"plain functions, such as sim.sin() and sim.min(), but parameter "
                    f"'{parameter}' of '{callee.__name__}' received unsupported built-in "
                    f"function '{form}' (a form of the kernel language, Warp's rule)",
                    self.fn, argument)

    def _is_module_print(self, func):
        """``sim.print(x)``: Warp's ``wp.print``, a kernel-only builtin (not a public name of
        numba_sim, which would shadow Python's print for ``from numba_sim import *``)."""
        if not (isinstance(func, ast.Attribute) and func.attr == "print"):
            return False
        owner = self.resolver.resolve(func.value)
        return isinstance(owner, types.ModuleType) and owner.__name__ == "numba_sim"

    def _module_cast(self, func):
        """``sim.float(x)`` / ``sim.int(x)``: Warp's ``wp.float`` / ``wp.int``, names the warp
        module lacks, which Warp's kernels resolve as the builtins ``float`` / ``int`` (the
        float32 / int32 casts); else None."""
        if not (isinstance(func, ast.Attribute) and func.attr in ("float", "int")):
            return None
        owner = self.resolver.resolve(func.value)
        if isinstance(owner, types.ModuleType) and owner.__name__ == "numba_sim" \
                and not hasattr(owner, func.attr):
            return getattr(builtins, func.attr)
        return None

    def _print(self, node):
        if node.keywords:
            raise _error("print in a kernel takes no keyword arguments (sep, end, file)",
                         self.fn, node)
        self.helpers["__sim_print"] = kernel_print
        node.func = ast.copy_location(ast.Name(id="__sim_print", ctx=ast.Load()), node)
        return self.generic_visit(node)  # the arguments (not sim.print, no attribute of sim)

    def _expectation(self, node, callee):
        """The call with its keyword tolerance made positional and its location appended."""
        name = callee.__name__
        keywords = {k.arg: k.value for k in node.keywords}
        allowed = {"tolerance"} if callee is expect_near else set()
        unknown = set(keywords) - allowed - {None}
        if unknown or None in keywords:
            raise _error(f"{name}() got unexpected keyword arguments {sorted(map(str, unknown))}",
                         self.fn, node)
        if "tolerance" in keywords:
            if len(node.args) != 2:
                raise _error(f"{name}() got the tolerance twice", self.fn, node)
            node.args.append(keywords["tolerance"])
        node.keywords = []
        node = self.generic_visit(node)
        where = f"{self.fn.__code__.co_filename}:{node.lineno}"
        node.args.append(ast.copy_location(ast.Constant(where), node))
        return node

    def visit_For(self, node):
        iterator = node.iter
        if (isinstance(iterator, ast.Call) and self.resolver.resolve(iterator.func)
                is builtins.reversed and len(iterator.args) == 1 and not iterator.keywords
                and isinstance(iterator.args[0], ast.Call)
                and self.resolver.resolve(iterator.args[0].func) is builtins.range):
            return self._reversed_range(node, iterator.args[0])
        return self.generic_visit(node)

    def visit_While(self, node):
        """Warp's query loops, ``while hash_grid_query_next(query, j):`` (also Bvh's and
        Mesh's), are numba_sim's ``for j in query:``."""
        test = node.test
        if (isinstance(test, ast.Call) and not test.keywords and len(test.args) == 3
                and all(isinstance(a, ast.Name) for a in test.args[:2])
                and self.resolver.resolve(test.func) is bvh_query_next
                and _loop_invariant(test.args[2], node.body)):
            # Warp's max_dist (rays, capsules): the query, bounded, then the loop below
            query, index, max_dist = test.args
            self.helpers["__sim_bvh_query_bounded"] = bvh_query_bounded
            test.func = ast.copy_location(ast.Name(id="__sim_bvh_query_bounded", ctx=ast.Load()),
                                          test.func)
            test.args = [query, max_dist]
            bounded = test
        else:
            bounded = None
        if bounded is not None or (
                isinstance(test, ast.Call) and not test.keywords and len(test.args) == 2
                and all(isinstance(a, ast.Name) for a in test.args)
                and any(self.resolver.resolve(test.func) is f for f in _QUERY_NEXT)):
            query, index = (bounded.args[0], index) if bounded is not None else test.args
            loop = ast.For(target=ast.Name(id=index.id, ctx=ast.Store()),
                           iter=bounded if bounded is not None else
                           ast.Name(id=query.id, ctx=ast.Load()), body=node.body,
                           orelse=node.orelse, type_comment=None)
            ast.copy_location(loop, node)
            ast.fix_missing_locations(loop)
            return self.generic_visit(loop)
        node = self.generic_visit(node)
        node.test = self._truth(node.test)
        return node

    def _reversed_range(self, node, range_call):
        """``for i in reversed(range(a, b, s))``: ``range(a + (n - 1) * s, a - s, -s)`` with
        ``n = len(range(a, b, s))``, the bounds evaluated once."""
        args = list(range_call.args)
        if not 1 <= len(args) <= 3 or range_call.keywords:
            raise _error("range takes 1 to 3 arguments", self.fn, range_call)
        if len(args) == 1:
            args = [ast.Constant(0), args[0]]
        if len(args) == 2:
            args.append(ast.Constant(1))
        start, stop, step = (self._temporary() for _ in range(3))
        count = self._temporary()
        template = ast.parse(
            f"{start} = 0\n{stop} = 0\n{step} = 0\n"
            f"{count} = int(len(range({start}, {stop}, {step})))\n"
            f"for _ in range({start} + ({count} - 1) * {step}, {start} - {step}, -{step}):\n"
            f"    pass\n").body
        for statement in template:  # at the user's line, before the user's nodes go in
            for child in ast.walk(statement):
                ast.copy_location(child, node)
        for statement, value in zip(template[:3], args):
            statement.value = value
        loop = template[4]
        loop.target, loop.body, loop.orelse = node.target, node.body, node.orelse
        return self._statements(template)

    def _tid(self, node, index=None):
        if node.args or node.keywords:
            raise _error("tid() takes no arguments", self.fn, node)
        name = ast.copy_location(ast.Name(id=TID_PARAMETER, ctx=ast.Load()), node)
        if index is None:
            return name
        return ast.copy_location(ast.Subscript(value=name, slice=ast.Constant(index),
                                               ctx=ast.Load()), node)

    # -- statements
    def visit_Assert(self, node):
        """Warp compiles a kernel's ``assert`` only in debug mode: a release body drops it. (A
        @sim.func is compiled once for both modes: its asserts stay checked.)"""
        if self.is_kernel and not self.debug:
            return ast.copy_location(ast.Pass(), node)
        return self.generic_visit(node)

    def visit_Expr(self, node):
        assignment = output_form_assignment(node, self.resolver.resolve)
        if assignment is not None:
            return self.visit_Assign(assignment)
        return self.generic_visit(node)

    def visit_Return(self, node):
        if self.is_kernel and self.depth == 1 and node.value is not None:  # `return None` too
            raise _error(KERNEL_RETURN_ERROR, self.fn, node)
        local_array = self._local_array(node.value)
        node = self.generic_visit(node)
        if node.value is not None:
            node.value = self._int32_literal(node.value)
            if not self.is_kernel:
                node.value = self._checked_return(node.value, local_array)
        return node

    def _local_array(self, value):
        """Whether a returned expression is an array the func makes (``sim.zeros(...)``, or a
        local assigned one): Warp's fixed-size arrays, kept on the function's stack."""
        if isinstance(value, ast.Name):
            return value.id in self.local_arrays
        return isinstance(value, ast.Call) and self.resolver.resolve(value.func) is zeros

    def _checked_return(self, value, local_array):
        """*value* through the func's return-annotation check (return_checks.py)."""
        if self.return_annotation is _MISSING:
            annotation = _return_annotation(self.fn)
            self.return_annotation = annotation if return_checks.checked(annotation) \
                and not references.reference_parameters(self.fn) else None
        if self.return_annotation is None:
            return value
        checker = return_checks.return_checker(self.fn.__name__, self.return_annotation,
                                               local_array)
        if checker is None:
            return value
        name = f"__sim_return_check_{int(local_array)}"
        self.helpers[name] = checker
        return ast.copy_location(ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[value],
                                          keywords=[]), value)

    def _track_constants(self, node):
        """Remember ``name = literal`` assignments for sim.static; forget reassigned names."""
        for target in node.targets:
            for child in ast.walk(target):
                if isinstance(child, ast.Name):
                    self.constants.pop(child.id, None)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                self.constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass

    def visit_Dict(self, node):
        raise _error(_unsupported_construct(node), self.fn, node)

    visit_Set = visit_DictComp = visit_SetComp = visit_Dict

    def _function_value(self, node):
        """The func or builtin that expression *node* names (a local bound to one, or a name
        or attribute of the globals or closure), else None."""
        if isinstance(node, ast.Name) and node.id in self.function_locals:
            return self.function_locals[node.id]
        base = node
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name) or base.id in self.local_names:
            return None
        value = self.resolver.resolve(node)
        if isinstance(value, (Dispatcher, FuncOverloads)) or (
                isinstance(value, types.FunctionType)
                and getattr(value, "__module__", "").split(".")[0] == "numba_sim"):
            return value
        return None

    def _gradient_of(self, func):
        """The function *f* when *func* (a call's function) is ``sim.grad(f)`` or a local bound
        to it, else None."""
        if isinstance(func, ast.Name) and func.id in self.gradient_locals:
            return self.gradient_locals[func.id]
        if isinstance(func, ast.Call) and len(func.args) == 1 and not func.keywords \
                and self.resolver.resolve(func.func) is autodiff_hooks.grad:
            return self._function_value(func.args[0])
        return None

    def _check_gradient_rebinding(self, targets, node):
        """Warp's rule: a local bound to ``sim.grad(f)`` is a static handle, never rebound."""
        for target in targets:
            for child in ast.walk(target):
                if isinstance(child, ast.Name) and child.id in self.gradient_locals:
                    raise _error(f"Cannot reassign local '{child.id}' after binding it to "
                                 f"wp.grad(...). Warp treats wp.grad(...) results as static "
                                 f"function handles; use a different local variable for the "
                                 f"new value.", self.fn, node)

    def _track_function_locals(self, node):
        """Warp's rule: a local bound to a function keeps it (Warp has no function pointers)."""
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return
        name = node.targets[0].id
        new, old = self._function_value(node.value), self.function_locals.get(name)
        if old is not None and new is not old:
            what = "another function" if new is not None else "a non-function value"
            raise _error(f"rebinding function-valued local `{name}` to {what} is not supported "
                         f"(Warp has no function pointers): use another name", self.fn, node)
        if new is not None:
            self.function_locals[name] = new

    def visit_Assign(self, node):
        if isinstance(node.value, ast.List):  # Warp's rule (a list elsewhere is a tuple's kin)
            raise _error(LIST_CONSTRUCT_ERROR, self.fn, node.value)
        self._check_gradient_rebinding(node.targets, node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and not isinstance(node.value.func, ast.Call):
            gradient = self._gradient_of(ast.Call(func=node.value, args=[], keywords=[]).func)
            if gradient is not None:  # g = sim.grad(f): its calls are gradient calls
                self.gradient_locals[node.targets[0].id] = gradient
                return ast.copy_location(ast.Pass(), node)
        self._track_function_locals(node)
        if self.depth == 1:
            self._track_constants(node)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    (self.local_arrays.add if self._local_array(node.value)
                     else self.local_arrays.discard)(target.id)
        if self.is_kernel and self._is_call_to(node.value, tid):
            target = node.targets[0]
            unpacks = isinstance(target, (ast.Tuple, ast.List)) and len(node.targets) == 1
            node.value = self._tid(node.value, index=None if unpacks else 0)
            return node
        value = self._int32_literal(self.visit(node.value))
        statements = []
        if len(node.targets) > 1 or not isinstance(node.targets[0], ast.Name):
            if not isinstance(value, (ast.Name, ast.Constant)):
                temporary = self._temporary()
                statements.append(ast.copy_location(ast.Assign(
                    targets=[ast.Name(id=temporary, ctx=ast.Store())], value=value), node))
                value = ast.copy_location(ast.Name(id=temporary, ctx=ast.Load()), node)
        for target in node.targets:
            target = self._prepare_target(target, node, statements)
            statements.extend(self._with_store_checks(
                target, self._verified(target, self._assign(target, value, node), node), node))
        return statements

    def _prepare_target(self, target, node, statements):
        """*target* with every index along its chain rewritten and made side-effect free,
        so that the component-assignment rewrite may evaluate the chain more than once."""
        if isinstance(target, ast.Subscript):
            target.value = self._prepare_target(target.value, node, statements)
            key = _constant_slice_key(target.slice)
            if key is not None:  # v[1:] = ...: stored by a function with the key baked in
                target.sim_slice_key = key
            else:
                target.slice = self._hoist(self.visit(target.slice), node, statements)
        elif isinstance(target, ast.Attribute):
            target.value = self._prepare_target(target.value, node, statements)
        elif isinstance(target, (ast.Tuple, ast.List)):
            target.elts = [self._prepare_target(e, node, statements) for e in target.elts]
        return target

    def _hoist(self, index, node, statements):
        """A side-effect-free expression for *index* (temporaries for anything else)."""
        if _is_simple(index):
            return index
        temporary = self._temporary()
        statements.append(ast.copy_location(ast.Assign(
            targets=[ast.Name(id=temporary, ctx=ast.Store())], value=index), node))
        return ast.copy_location(ast.Name(id=temporary, ctx=ast.Load()), node)

    def _assign(self, target, value, node):
        """Statements assigning *value* (a simple expression) to *target*."""
        if isinstance(target, ast.Name):
            return [ast.copy_location(ast.Assign(targets=[target], value=value), node)]
        if isinstance(target, (ast.Tuple, ast.List)):
            if all(isinstance(e, ast.Name) for e in target.elts):
                return [ast.copy_location(ast.Assign(targets=[target], value=value), node)]
            statements = []
            for k, element in enumerate(target.elts):
                item = ast.copy_location(ast.Subscript(value=_load(value), slice=ast.Constant(k),
                                                       ctx=ast.Load()), node)
                statements.extend(self._assign(element, item, node))
            return statements
        if isinstance(target, ast.Subscript):
            if hasattr(target, "sim_slice_key"):
                new = self._slice_store(target, value, node)
            else:
                new = _ops("store_item", node, _load(target.value), _load(target.slice), value)
            return self._assign_container(target.value, new, node)
        if isinstance(target, ast.Attribute):
            new = _ops("store_attr", node, _load(target.value), ast.Constant(target.attr), value)
            return self._assign_container(target.value, new, node)
        raise _error("unsupported assignment target in the kernel language", self.fn, node)

    def _assign_container(self, container, new_value, node):
        """Rebind *container* (the base of a component assignment) to *new_value*."""
        if isinstance(container, ast.Name):
            return [ast.copy_location(ast.Assign(targets=[_store(container)], value=new_value),
                                      node)]
        temporary = self._temporary()
        statements = [ast.copy_location(ast.Assign(
            targets=[ast.Name(id=temporary, ctx=ast.Store())], value=new_value), node)]
        return statements + self._assign(container, ast.copy_location(
            ast.Name(id=temporary, ctx=ast.Load()), node), node)

    def visit_AugAssign(self, node):
        self._check_gradient_rebinding([node.target], node)
        op = _BINARY_NAMES.get(type(node.op))
        if op is None:
            raise _error("unsupported augmented assignment in the kernel language", self.fn, node)
        value = self.visit(node.value)
        target = node.target
        statements = []
        op_name = ast.Constant(op)
        if isinstance(target, ast.Name):
            new = _ops(op, node, _load(target), value)
            return [ast.copy_location(ast.Assign(targets=[target], value=new), node)]
        target = self._prepare_target(target, node, statements)  # its indices first, as Python
        if not (isinstance(value, (ast.Name, ast.Constant)) or _is_simple(value)):
            value = self._hoist(value, node, statements)
        checked = self._with_store_checks(target, [], node)
        if checked:
            return statements + [checked[0]] + self._augmented(target, op_name, value, node) + \
                [checked[1]]
        return statements + self._verified(target, self._augmented(target, op_name, value, node),
                                           node)

    def _slice_store(self, target, value, node):
        """``target.value`` with the constant slice ``target.sim_slice_key`` set to *value*."""
        storer = slice_storer(target.sim_slice_key)
        self.helpers["__sim_" + storer.__name__] = storer
        return ast.copy_location(ast.Call(
            func=ast.Name(id="__sim_" + storer.__name__, ctx=ast.Load()),
            args=[_load(target.value), value], keywords=[]), node)

    def _augmented(self, target, op_name, value, node):
        statements = []
        if isinstance(target, ast.Subscript) and hasattr(target, "sim_slice_key"):
            combined = _ops(op_name.value, node, _load(target), value)  # v[1:] op value
            return self._assign_container(target.value,
                                          self._slice_store(target, combined, node), node)
        if isinstance(target, ast.Subscript):
            outer, key = target.value, _load(target.slice)
            if isinstance(outer, ast.Subscript):  # container[index][key] op= value
                new = _ops("update_component", node, _load(outer.value), _load(outer.slice), key,
                           op_name, value)
                return statements + self._assign_container(outer.value, new, node)
            new = _ops("update_item", node, _load(outer), key, op_name, value)
            return statements + self._assign_container(outer, new, node)
        if isinstance(target, ast.Attribute):
            outer = target.value
            if isinstance(outer, ast.Subscript):  # container[index].attr op= value
                new = _ops("update_component", node, _load(outer.value), _load(outer.slice),
                           ast.Constant(target.attr), op_name, value)
                return statements + self._assign_container(outer.value, new, node)
            new = _ops("update_attr", node, _load(outer), ast.Constant(target.attr), op_name, value)
            return statements + self._assign_container(outer, new, node)
        raise _error("unsupported augmented assignment target in the kernel language",
                     self.fn, node)


def _calls_len(expression):
    """Whether *expression* calls ``len``: Warp evaluates ``len(local)`` in ``wp.static``
    from the local's type."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len"
               for n in ast.walk(expression))


_ARRAY_IN_KERNEL = "a Warp array cannot be created inside Warp kernels"


def _unsupported_static_value(value, owner=None, path=()):
    """Why a ``sim.static`` value cannot be a kernel's constant (Warp's rule:
    ``Adjoint.verify_static_return_value``), or None: no value, an array, a struct holding
    an array, or an instance of a plain Python class."""
    if isinstance(value, Struct):
        for field in type(value)._fields:
            problem = _unsupported_static_value(getattr(value, field.name), owner or value,
                                                path + (field.name,))
            if problem is not None:
                return problem
        return None
    if value is None or device_of(value) is not None:
        problem = "None is returned" if value is None else _ARRAY_IN_KERNEL
    elif isinstance(value, (type, types.ModuleType, tuple, list, dict, str, bytes, enum.Enum,
                            Value, np.generic, int, float, complex)) or callable(value):
        return None
    elif type(value).__module__.split(".")[0] in ("numba_sim", "numba", "numpy", "builtins"):
        return None
    else:
        problem = f"value of type {type(value)} cannot be constructed inside Warp kernels"
    if owner is not None:
        cls = type(owner)
        return (f"the returned Warp struct contains a data type that cannot be constructed "
                f"inside Warp kernels: {problem} at {cls.__module__}.{cls.__qualname__}."
                f"{'.'.join(path[:-1])}")
    return problem


_WARP_KIND_NAMES = {"vec": "vector", "mat": "matrix", "quat": "quaternion",
                    "transform": "transformation"}


def _body_nodes(definition):
    """The nodes of *definition*'s body outside nested functions, lambdas and classes (whose
    names are theirs)."""
    stack = list(definition.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _store_counts(definition):
    """Local name -> how often *definition* binds it (a parameter, a nested definition or an
    import: more than once)."""
    arguments = definition.args
    counts = {a.arg: 2 for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs
              + [a for a in (arguments.vararg, arguments.kwarg) if a is not None]}
    for node in _body_nodes(definition):
        names = []
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = [node.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name] * 2
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [(a.asname or a.name).split(".")[0] for a in node.names] * 2
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _calls_bound_once(definition):
    """Local name -> the call it is bound to, for the names *definition* binds once, to a
    call (``v = sim.vec3()``), and never again."""
    counts, calls = _store_counts(definition), {}
    for node in _body_nodes(definition):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call):
            calls[node.targets[0].id] = node.value
    return {name: call for name, call in calls.items() if counts.get(name) == 1}


def _literal_locals(definition):
    """Local name -> int or float for the names *definition* binds once, to a number literal,
    and never again (``n = 3``, ``x = 0.1``): Warp's constants, which may bound a slice
    (ints) or make a float64 of the double written (floats)."""
    stores, values = _store_counts(definition), {}
    for node in _body_nodes(definition):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            value = _literal_int(node.value)
            if value is None and _is_float_literal(node.value):
                value = ast.literal_eval(node.value)
            if value is not None:
                values[node.targets[0].id] = value
    return {name: value for name, value in values.items() if stores.get(name) == 1}


def _local_names(definition):
    """The names a function assigns or takes as parameters (they shadow its globals)."""
    arguments = definition.args
    names = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    names.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    for node in ast.walk(definition):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node is not definition:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def rewrite(fn, is_kernel, debug=False, target="cpu", verify_fp=False, transformers=()):
    """The kernel-language version of *fn*: a new function over the same globals.

    Kernels get the hidden first parameter ``__sim_tid__``; *debug* adds bounds
    and NaN checks on the parameters' arrays (see numba_sim.config); *verify_fp* (a kernel's
    body built while ``sim.config.verify_fp`` is set) prints each non-finite value stored
    into an array parameter, as Warp's ``verify_fp`` does; *transformers* (Warp's
    ``code_transformers``: ``ast.NodeTransformer`` s) rewrite the syntax tree first.
    """
    source, first_line = _source_of(fn)
    tree = ast.parse(source)
    ast.increment_lineno(tree, first_line - 1)
    for transformer in transformers:
        tree = ast.fix_missing_locations(transformer.visit(tree))
    definition = tree.body[0]
    if not isinstance(definition, ast.FunctionDef):
        raise _error("expected a function definition", fn, definition)
    from_package = package_names(fn, definition)
    rewriter = _KernelRewriter(fn, _Resolver(fn, from_package), is_kernel, debug, target,
                               verify_fp and is_kernel)
    rewriter.helpers.update(from_package)
    if not is_kernel:  # a func with sim.ref parameters also returns their final values
        definition = references.rewrite_function(
            definition, fn, lambda message, node: _error(message, fn, node))
    definition = rewriter.visit(definition)
    if is_kernel:
        definition.args.args.insert(0, ast.arg(arg=TID_PARAMETER))
    rewritten = _compile_like(fn, definition, rewriter.helpers)
    rewritten.__sim_statics__ = (rewriter.resolved_statics, rewriter.deferred_statics)
    rewritten.__sim_transformed__ = ast.dump(tree) if transformers else ""
    return rewritten


def _compile_like(fn, definition, helpers=None):
    """Compile *definition* as a function with *fn*'s globals, closure and file name.

    The definition is wrapped in an outer function whose parameters are the
    original free variables (and ``__sim_ops__``), so the compiled code refers
    to them as closure cells; the original cells are then attached to the new
    function, beside a cell holding numba_sim.kernel_ops.
    """
    freevars = fn.__code__.co_freevars
    helpers = helpers or {}
    outer_names = freevars + (OPS,) + tuple(helpers)
    outer = ast.FunctionDef(
        name="__sim_outer__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=v) for v in outer_names],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[definition, ast.Return(value=ast.Name(id=definition.name, ctx=ast.Load()))],
        decorator_list=[], returns=None,
    )
    if "type_params" in ast.FunctionDef._fields:  # Python >= 3.12
        outer.type_params = []
    module = ast.Module(body=[outer], type_ignores=[])
    ast.copy_location(outer, definition)
    ast.fix_missing_locations(module)
    code = compile(module, fn.__code__.co_filename, "exec")
    outer_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner_code = next(c for c in outer_code.co_consts if isinstance(c, types.CodeType)
                      and c.co_name == definition.name)
    cells = dict(zip(freevars, fn.__closure__ or ()))
    cells[OPS] = types.CellType(kernel_ops)
    cells.update({name: types.CellType(helper) for name, helper in helpers.items()})
    closure = tuple(cells[name] for name in inner_code.co_freevars)
    rewritten = types.FunctionType(inner_code, fn.__globals__, fn.__name__, fn.__defaults__,
                                   closure or None)
    rewritten.__qualname__ = fn.__qualname__
    rewritten.__module__ = fn.__module__
    rewritten.__doc__ = fn.__doc__
    rewritten.__wrapped_kernel_source__ = fn
    return rewritten
