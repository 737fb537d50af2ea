"""Adjoint kernels and funcs: generated from the kernel language's syntax tree, compiled as
kernel-language functions.

``adjoint_kernel(kernel, ndim)`` is the adjoint of a ``@sim.kernel`` for launches of *ndim*
dimensions: another :class:`~numba_sim.kernel.Kernel` whose parameters are the kernel's,
then ``adj_<name>`` for each differentiable parameter (arrays of float-based dtypes, float
and float value-type scalars), as Warp's adjoint kernels take them.  Its body
(numba_sim/autodiff/adjoint_source.py) replays the forward computation without its stores
and sweeps it in reverse; it goes through the kernel-language rewrite and Numba like any
kernel, for the CPU and for CUDA, and it is built and compiled only when first needed
(an adjoint launch, ``tape.backward``, ``kernel.compile(..., adjoint=True)``), so the
forward compile time does not change.

``adjoint_func(func)`` is the adjoint of a ``@sim.func``: a func taking the func's
arguments, the adjoint arrays of its array parameters and ``adj_ret`` (when it returns a
value), and returning one adjoint per non-array parameter; ``@sim.func_grad(f)`` replaces
it (numba_sim/autodiff/custom_adjoints.py).
"""

import ast
import builtins
import hashlib
import inspect
import linecache
import sys

import numpy as np
from numba.core.errors import TypingError

from numba_sim import arrays, autodiff_hooks, kernel_language
from numba_sim.annotations import function_annotations, function_namespace
from numba_sim.autodiff import adjoint_helpers
from numba_sim.autodiff.activity import Activity
from numba_sim.autodiff.array_views import inline_array_views
from numba_sim.autodiff.adjoint_source import (
    ATOMIC_ADD, RETURNED, ZERO, AdjointSource, _indent)
from numba_sim.autodiff.flatten import MultiAssign, flatten
from numba_sim.builtins.random import rand_init
from numba_sim.func_overloads import FuncOverloads
from numba_sim.kernel import Func, Kernel
from numba_sim.kernel import func as make_func
from numba_sim.structs import Struct
from numba_sim.types import Value

_PYTHON_BUILTINS_AS_SIM = {builtins.min: "min", builtins.max: "max", builtins.abs: "abs"}
"""Python builtins a kernel calls whose adjoints are those of numba_sim's builtins."""


class AdjointError(kernel_language.KernelSourceError):
    """A kernel or func whose adjoint cannot be generated (the construct is named)."""


def is_differentiable_dtype(dtype):
    """Whether elements of *dtype* (a scalar type or a value type) are floats."""
    try:
        scalar, _ = arrays.storage_of(dtype)
    except (TypeError, ValueError, AttributeError):
        return False
    return np.dtype(scalar).kind == "f"


def _is_struct(annotation):
    """A ``@sim.struct`` class (its differentiable arrays: :func:`struct_array_chains`)."""
    return isinstance(annotation, type) and issubclass(annotation, Struct)


def _annotation_kind(annotation):
    """("array", differentiable) / ("value", differentiable) / (None, assumed) of an
    annotation."""
    if isinstance(annotation, arrays.array):
        return "array", not annotation.generic and is_differentiable_dtype(annotation.dtype)
    if annotation is None or annotation is inspect.Parameter.empty:
        return None, True
    if annotation in (builtins.float,):
        return "value", True
    if annotation in (builtins.int, builtins.bool):
        return "value", False
    if isinstance(annotation, type) and (issubclass(annotation, (Value, np.generic))):
        return "value", is_differentiable_dtype(annotation)
    return "value", False  # structs, spatial structures, generic annotations


def struct_array_chains(cls, prefix=()):
    """(field chain, annotation) of the differentiable arrays of the struct class *cls*,
    nested structs followed: ``(("x",), array(float32))``, ``(("inner", "v"), ...)``."""
    for field in cls._fields:
        annotation = field.annotation
        if isinstance(annotation, arrays.array):
            if not annotation.generic and is_differentiable_dtype(annotation.dtype):
                yield prefix + (field.name,), annotation
        elif _is_struct(annotation):
            yield from struct_array_chains(annotation, prefix + (field.name,))


def _attribute_chain(node):
    """``a.b.c`` as ("a", "b", "c"); None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id, *reversed(parts)) if isinstance(node, ast.Name) and parts else None


class _StructArrayFields(ast.NodeTransformer):
    """Reads of struct parameters' arrays (``p.x``, ``w.inner.v``) as names of their own
    (``p__x``), which the adjoint kernel takes as array parameters: their gradients are the
    gradients of the struct's arrays (Warp's struct arrays have gradients)."""

    def __init__(self, names):
        self.names = names

    def visit_Attribute(self, node):
        name = self.names.get(_attribute_chain(node))
        if name is not None and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)
        return self.generic_visit(node)


def _struct_field_parameters(kernel, function):
    """[(parameter, field chain, name, annotation)] of the struct parameters' differentiable
    arrays that *function*'s body reads through their full chain, and never assigns; the
    body is rewritten to read them by name."""
    used, assigned = set(), set()
    for node in ast.walk(function.definition):
        chain = _attribute_chain(node) if isinstance(node, ast.Attribute) else None
        if chain is not None:
            (used if isinstance(node.ctx, ast.Load) else assigned).add(chain)
    assigned |= {c[:k] for c in assigned for k in range(2, len(c))}  # p.inner = ... too
    found, taken = [], set(function.locals)
    for parameter in kernel.parameters:
        if not _is_struct(parameter.annotation):
            continue
        for chain, annotation in struct_array_chains(parameter.annotation):
            full = (parameter.name, *chain)
            if full not in used or any(full[:k] in assigned for k in range(2, len(full) + 1)):
                continue
            name = "__".join(full)
            while name in taken:
                name = "_" + name
            taken.add(name)
            found.append((parameter.name, chain, name, annotation))
    if found:
        names = {(p, *chain): name for p, chain, name, _ in found}
        function.definition = ast.fix_missing_locations(
            _StructArrayFields(names).visit(function.definition))
        function.parameters += [name for _, _, name, _ in found]
        function.locals |= set(names.values())
    return found


class _Function:
    """A kernel's or func's source, parsed, with what its adjoint needs to know."""

    def __init__(self, fn, transformers=()):
        self.fn = fn
        source, first_line = kernel_language._source_of(fn)
        tree = ast.parse(source)
        ast.increment_lineno(tree, first_line - 1)
        for transformer in transformers:
            tree = ast.fix_missing_locations(transformer.visit(tree))
        self.definition = tree.body[0]
        self.namespace = function_namespace(fn)
        self.parameters = [a.arg for a in self.definition.args.args]
        self.locals = set(self.parameters) | kernel_language._local_names(self.definition)

    def error(self, message, node):
        error = kernel_language._error(message, self.fn, node)
        return AdjointError(f"adjoint of {self.fn.__qualname__}: {error.msg}",
                            (error.filename, error.lineno, error.offset, error.text))

    def resolve(self, node):
        """The object a call's function expression names (None for a local or unknown)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.locals:
            return None
        package = sys.modules["numba_sim"]
        value = self.namespace.get(node.id, getattr(builtins, node.id,
                                                    getattr(package, node.id, None)))
        for part in reversed(parts):
            value = getattr(value, part, None)
        return value


class _Helpers:
    """The helper objects the generated source calls, by the names it calls them."""

    def __init__(self):
        self.objects = dict(adjoint_helpers.HELPERS)
        self.objects[ATOMIC_ADD] = sys.modules["numba_sim"].atomic_add
        self._names = {}

    def name_of(self, obj, stem):
        key = id(obj)
        if key not in self._names:
            name = f"__sim_{stem}_{len(self._names)}"
            self._names[key] = name
            self.objects[name] = obj
        return self._names[key]


def _adjoint_of_call(function, helpers):
    """The ``adjoint_of_call`` of :class:`AdjointSource`: (helper name, positions of array
    arguments) of a call's adjoint."""
    def adjoint_of_call(target, node, frozen=frozenset()):
        if target is getattr:  # v.x: the attribute's adjoint, (value, adj_ret)
            adjoint = autodiff_hooks.adjoint_attribute(node.value.attr)
            return helpers.name_of(adjoint, "adj"), (), ()
        if isinstance(target, FuncOverloads):
            raise function.error(f"`{ast.unparse(node.value)}`: calls of overloaded funcs "
                                 "are not differentiated yet", node)
        if isinstance(target, Func):
            adjoint, array_positions, differentiable_positions = adjoint_func(target, frozen)
            return helpers.name_of(adjoint, "adj"), array_positions, differentiable_positions
        if target is None:
            raise function.error(f"`{ast.unparse(node.value)}`: the function called is not "
                                 "known when the adjoint is generated", node)
        target = _PYTHON_BUILTINS_AS_SIM.get(target, target)
        if isinstance(target, str):
            target = getattr(sys.modules["numba_sim"], target)
        try:
            adjoint = autodiff_hooks.adjoint_function(target)  # autodiff/op_adjoints.py
        except TypingError as error:  # no adjoint: named, with the kernel's line
            raise function.error(f"`{ast.unparse(node.value)}`: {error}", node) from None
        return helpers.name_of(adjoint, "adj"), (), ()

    return adjoint_of_call


def _replay_of(helpers):
    """The ``replay_of`` of :class:`AdjointSource`: the helper name of a func's custom
    replay (``@sim.func_replay``), or None."""
    def replay_of(target):
        replay = getattr(target, "__dict__", {}).get("_sim_custom_replay")
        return None if replay is None else helpers.name_of(replay, "replay")

    return replay_of


def _own_arrays(statements, arrays_, ndim):
    """The arrays every read of which indexes the thread's own element: ``x[i]`` with ``i =
    tid()`` in a 1-D launch, ``x[i, j]`` with ``i, j = tid()`` in a 2-D one (a plain ``+``
    of its adjoint is then enough); arrays passed to calls are not."""
    tid_names, assigned = None, {}
    for node in ast.walk(ast.Module(body=statements, type_ignores=[])):
        targets = []
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            targets = [node.targets[0].id]
            if _is_tid_call(node.value) and ndim == 1:
                tid_names = (node.targets[0].id,)
        elif isinstance(node, MultiAssign):
            targets = list(node.targets)
            if _is_tid_call(node.value) and len(targets) == ndim:
                tid_names = tuple(targets)
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        for target in targets:
            assigned[target] = assigned.get(target, 0) + 1
    if tid_names is None or any(assigned.get(n, 0) != 1 for n in tid_names):
        return set()
    own = set(arrays_)
    for node in ast.walk(ast.Module(body=statements, type_ignores=[])):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id in own and isinstance(node.ctx, ast.Load):
            index = node.slice
            names = tuple(e.id if isinstance(e, ast.Name) else None for e in index.elts) \
                if isinstance(index, ast.Tuple) else (
                    (index.id,) if isinstance(index, ast.Name) else (None,))
            if names != tid_names:
                own.discard(node.value.id)
        elif isinstance(node, ast.Call):
            for arg in node.args:
                if isinstance(arg, ast.Name):
                    own.discard(arg.id)
    return own


def _is_tid_call(node):
    return isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(
        node.func, "id", None)) == "tid" and not node.args


def _compile_source(fn, name, lines, helpers):
    """The function *name* defined by *lines*, with *fn*'s namespace and the *helpers*; its
    source is kept in ``linecache`` under a name of its own, so that the kernel-language
    rewrite, the cache and error messages read it as any source."""
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]  # the same name in every run
    filename = f"<numba_sim adjoint of {fn.__module__}.{fn.__qualname__} {digest}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = dict(function_namespace(fn))
    namespace.update(helpers.objects)
    namespace.setdefault("__name__", fn.__module__)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 (generated source)
    made = namespace[name]
    made.__module__ = fn.__module__
    made.__qualname__ = f"{fn.__qualname__}.{name}"
    return made


def _analysed(function, differentiable_values, differentiable_arrays, array_names):
    statements = flatten(function.fn, function.definition, function.locals, array_names,
                         function.error, function.resolve)
    activity = Activity(statements, differentiable_values, differentiable_arrays,
                        array_names, function.resolve)
    return statements, activity


def _random_states(statements, resolve):
    """The locals assigned a random state (``s = rand_init(...)``)."""
    return {node.targets[0].id for node in ast.walk(ast.Module(body=statements, type_ignores=[]))
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and resolve(node.value.func) is rand_init}


def _updated_arrays(statements, array_names):
    """The arrays the statements both read (``x[i]`` loads) and store into."""
    read, stored = set(), set()
    for node in ast.walk(ast.Module(body=statements, type_ignores=[])):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id in array_names:
            (read if isinstance(node.ctx, ast.Load) else stored).add(node.value.id)
    return read & stored


def _body(source, statements, function_scope_init):
    source.random_states = _random_states(statements, source.resolve)
    source.updated_arrays = _updated_arrays(statements, source.activity.arrays)
    piece = source.block(statements)
    flags = [f"{flag} = False" for flag in source.scopes[0].flags]
    flags.append(f"{RETURNED} = bool(False)")  # a dynamic variable (Warp's loop rule)
    return function_scope_init + flags + ["for __once in range(1):"] + _indent(
        piece.forward or ["pass"]) + piece.reverse


def adjoint_kernel(kernel, ndim=1):
    """The adjoint kernel of *kernel* for launches of *ndim* dimensions (made once)."""
    cache = kernel.__dict__.setdefault("_adjoint_kernels", {})
    made = cache.get(ndim)
    if made is None:
        made = cache[ndim] = _make_adjoint_kernel(kernel, ndim)
    return made


def differentiable_parameters(kernel):
    """The names of *kernel*'s differentiable parameters, in order."""
    return [p.name for p in kernel.parameters
            if _annotation_kind(p.annotation)[1] and p.annotation is not None
            and not p.generic]


def backward_enabled(kernel):
    """Whether *kernel*'s adjoint may be generated: its ``enable_backward`` option, else its
    module's (Warp's rule: the kernel's setting is the more specific)."""
    if kernel.enable_backward is not None:
        return bool(kernel.enable_backward)
    return kernel.module.options.get("enable_backward") is not False


def _make_adjoint_kernel(kernel, ndim):
    if not backward_enabled(kernel):
        raise RuntimeError(f"kernel {kernel.key}: its adjoint was not generated "
                           f"(@sim.kernel(enable_backward=False))")
    if kernel.build_error is not None:
        raise kernel.build_error.with_traceback(None)
    function = _Function(kernel.py_func, kernel.code_transformers)
    inline_array_views(function.definition, {
        p.name: p.annotation.ndim for p in kernel.parameters
        if isinstance(p.annotation, arrays.array) and p.annotation.ndim})
    fields = _struct_field_parameters(kernel, function)
    field_names = [name for _, _, name, _ in fields]
    differentiable = differentiable_parameters(kernel)
    kinds = {p.name: _annotation_kind(p.annotation)[0] for p in kernel.parameters}
    kinds.update((name, "array") for name in field_names)
    array_names = {n for n, k in kinds.items() if k == "array"} | {
        p.name for p in kernel.parameters if _is_struct(p.annotation)}  # containers
    differentiable_arrays = [n for n in differentiable if kinds[n] == "array"] + field_names
    values = [n for n in differentiable if kinds[n] != "array"]
    differentiable = differentiable + field_names
    statements, activity = _analysed(function, values, differentiable_arrays, array_names)
    helpers = _Helpers()
    adjoint_names = {n: f"adj_{n}" for n in differentiable}
    taken = set(function.locals)
    for name in adjoint_names:
        while adjoint_names[name] in taken:
            adjoint_names[name] = "_" + adjoint_names[name]
    source = AdjointSource(function.parameters, activity, function.resolve,
                           _adjoint_of_call(function, helpers),
                           _own_arrays(statements, differentiable_arrays, ndim),
                           {n: adjoint_names[n] for n in differentiable_arrays},
                           function.error, returns_value=False, replay_of=_replay_of(helpers))
    init = [f"{source.adj(n)} = {adjoint_names[n]}" for n in values]
    name = f"{kernel.__name__}__adjoint_{ndim}d"
    params = function.parameters + [adjoint_names[n] for n in differentiable]
    lines = [f"def {name}({', '.join(params)}):"] + _indent(_body(source, statements, init))
    fn = _compile_source(kernel.py_func, name, lines, helpers)
    annotations = {p.name: p.annotation for p in kernel.parameters if p.annotation is not None}
    annotations.update((name, annotation) for _, _, name, annotation in fields)
    for n in differentiable:
        annotations[adjoint_names[n]] = annotations[n]
    made = Kernel(fn, enable_backward=False, annotations=annotations,
                  options={"module": "unique"})
    made.forward_kernel = kernel
    made.adjoint_parameters = [n for n in differentiable if n not in field_names]
    made.struct_fields = [(parameter, chain) for parameter, chain, _, _ in fields]
    """(struct parameter, field chain) of the arrays the adjoint takes after the kernel's
    arguments, and whose adjoints it takes last"""
    return made


def adjoint_func(func, frozen=frozenset()):
    """(the adjoint func of the ``@sim.func`` *func*, positions of its array parameters,
    positions of its differentiable array parameters); the array parameters at the
    positions *frozen* are not differentiated (the caller has no adjoint for its argument
    there: an array of a struct, say)."""
    made = func.__dict__.setdefault("_sim_adjoints", {})
    key = frozenset(frozen)
    cached = made.get(key)
    if cached is None:
        custom = func.__dict__.get("_sim_custom_adjoint")
        cached = made[key] = custom if custom is not None else _make_adjoint_func(func, key)
    return cached


def _make_adjoint_func(func, frozen):
    fn = func.func  # as written
    function = _Function(fn)
    annotations = function_annotations(fn)
    kinds = {n: _annotation_kind(annotations.get(n)) for n in function.parameters}
    array_names = {n for n, (k, _) in kinds.items() if k == "array"}
    containers = array_names | {n for n in function.parameters
                                if _is_struct(annotations.get(n))}
    differentiable_arrays = [n for position, n in enumerate(function.parameters)
                             if kinds[n][0] == "array" and kinds[n][1] and position not in frozen]
    values = [n for n in function.parameters if kinds[n][0] != "array" and kinds[n][1]]
    statements, activity = _analysed(function, values, differentiable_arrays, containers)
    returns_value = any(isinstance(n, ast.Return) and n.value is not None
                        for n in ast.walk(function.definition))
    helpers = _Helpers()
    adjoint_arrays = {n: f"adj__{n}" for n in differentiable_arrays}
    source = AdjointSource(function.parameters, activity, function.resolve,
                           _adjoint_of_call(function, helpers), set(), adjoint_arrays,
                           function.error, returns_value=returns_value,
                           replay_of=_replay_of(helpers))
    init = [f"{source.adj(n)} = {ZERO}({n})" for n in values]
    name = f"{fn.__name__}__adjoint"
    array_positions = tuple(i for i, n in enumerate(function.parameters) if n in array_names)
    differentiable_positions = tuple(i for i, n in enumerate(function.parameters)
                                     if n in adjoint_arrays)
    params = function.parameters + [adjoint_arrays.get(n, f"adj__unused_{n}")
                                    for n in function.parameters if n in array_names]
    if returns_value:
        params.append("adj__ret")
    results = [source.adj(n) if n in values else "0" if n in containers else f"{ZERO}({n})"
               for n in function.parameters if n not in array_names]  # 0: a struct's
    body = _body(source, statements, init)
    body.append(f"return ({', '.join(results)}{',' if len(results) == 1 else ''})"
                if results else "return")
    lines = [f"def {name}({', '.join(params)}):"] + _indent(body)
    return (make_func(_compile_source(fn, name, lines, helpers)), array_positions,
            differentiable_positions)


def adjoint_source_text(kernel_or_func, ndim=1):
    """The generated source of an adjoint (for ``kernel.inspect(..., adjoint=True)``)."""
    made = adjoint_kernel(kernel_or_func, ndim).py_func if isinstance(kernel_or_func, Kernel) \
        else adjoint_func(kernel_or_func)[0].func
    return inspect.getsource(made)


autodiff_hooks.adjoint_source_text = adjoint_source_text
