"""``sim.ref[T]``: Warp's pass-by-reference parameters of ``@sim.func``s.

A func parameter annotated ``sim.ref[T]`` (Warp's ``wp.ref[T]``) aliases the caller's
storage: assigning it (``x = ...``, ``x += ...``, ``x.field = ...``, ``x[i] = ...``)
changes the caller's local variable, array element, struct field or vector component.

numba_sim compiles this as copy-in / copy-out, with two AST rewrites that
kernel_language.py applies:

* the func (:func:`rewrite_function`) returns its reference parameters' final values
  beside its result: ``return e`` becomes ``return (e, x, y)`` (``return (x, y)`` for
  a func without a result);
* each call site (:func:`expand_statement`) becomes ``t = f(a[i], v.x)`` followed by
  the write-backs ``a[i] = t[1]``, ``v.x = t[2]``, and the call's value is ``t[0]``
  (``t`` a fresh temporary).  The write-backs are ordinary assignments, so component,
  struct-field and array-element stores follow the kernel language's rules.  A call in
  an ``if`` condition is made before the ``if``; in a ``while`` condition it is an error.

Plain ``@njit`` code, which is not rewritten, gets the func's tuple (its result, then its
references' final values) from such a call.

As in Warp, the argument of a reference parameter must name storage (a local
variable, a parameter, an array element, a field or a component of one) and not a
temporary (a literal, a call's result or a field of it, an arithmetic expression) or
a local assigned a bare literal (``x = 0``: Warp gives it no storage type; write
``x = sim.int32(0)``).  Where copy-in / copy-out differs from Warp's pointers: inside
the func, a reference and another way to the same storage (the array it is an element
of, a second reference to it) are separate copies until the func returns; then the
write-backs are made in parameter order (the last one to the same storage wins).
"""

import ast
import copy
import inspect
import weakref
from dataclasses import dataclass

from numba_sim.arrays import dtype_name
from numba_sim.annotations import function_annotations


class Reference:
    """``sim.ref[T]`` (also ``sim.ref(T)``): the annotation of a reference parameter of
    value type *T* (Warp's ``wp.ref[T]``)."""

    def __init__(self, dtype):
        if isinstance(dtype, Reference):
            raise TypeError(f"ref: expected a value type, got the reference {dtype!r}")
        self.dtype = dtype

    def __class_getitem__(cls, dtype):
        return cls(dtype)

    @property
    def value_type(self):
        return self.dtype

    def __eq__(self, other):
        return isinstance(other, Reference) and self.dtype == other.dtype

    def __hash__(self):
        return hash((Reference, self.dtype))

    def __repr__(self):  # Warp's spelling, which ported code compares
        return f"wp.ref[{_type_name(self.dtype)}]"


ref = Reference


def _type_name(dtype):
    try:
        return dtype_name(dtype)
    except TypeError:
        return getattr(dtype, "__name__", repr(dtype))


@dataclass(frozen=True)
class RefSignature:
    """The calling convention of a func with reference parameters."""

    parameters: tuple      # the func's parameter names, in order
    references: tuple      # the names of its reference parameters, in order
    has_result: bool       # whether it returns a value beside the references


_SIGNATURES = weakref.WeakKeyDictionary()
"""Python function of a ``@sim.func`` with reference parameters -> its RefSignature (the
dispatcher holds the rewritten function, whose ``__wrapped_kernel_source__`` is it)."""


def reference_parameters(fn):
    """The names of *fn*'s parameters annotated ``sim.ref[T]``, in order."""
    annotations = function_annotations(fn)
    return tuple(name for name, annotation in annotations.items()
                 if name != "return" and isinstance(annotation, Reference))


OVERLOADED = "overloaded"
"""`signature_of` a set of overloads of which some take references."""


def signature_of(obj):
    """The RefSignature of a callee object (a ``@sim.func``), None if it takes no
    reference, `OVERLOADED` for overloads of which some take references (the call site
    cannot tell which one a call resolves to before typing)."""
    members = getattr(obj, "members", None)
    if isinstance(members, list):
        signatures = {signature_of(member) for member in members}
        return None if signatures == {None} else OVERLOADED
    fn = getattr(getattr(obj, "py_func", None), "__wrapped_kernel_source__", None)
    return _SIGNATURES.get(fn) if fn is not None else None


def _own_nodes(definition):
    """The nodes of *definition*'s body outside nested functions and classes."""
    stack = list(definition.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _parameter_annotations(fn):
    annotations = function_annotations(fn)
    return tuple(annotations.get(name) for name in inspect.signature(fn).parameters)


def _check_overloads(fn):
    """RuntimeError if *fn* overloads a ``@sim.func`` of the same name whose parameters
    differ from its own only by ``sim.ref`` (Warp's rule: a call could not tell them
    apart)."""
    previous = fn.__globals__.get(fn.__name__)
    members = getattr(previous, "members", None)
    members = members if isinstance(members, list) else [previous]
    given = _parameter_annotations(fn)
    plain = tuple(a.dtype if isinstance(a, Reference) else a for a in given)
    for member in members:
        original = getattr(getattr(member, "py_func", None), "__wrapped_kernel_source__", None)
        if original is None or original.__qualname__ != fn.__qualname__:
            continue
        other = _parameter_annotations(original)
        if other != given and tuple(a.dtype if isinstance(a, Reference) else a
                                    for a in other) == plain:
            raise RuntimeError(f"Cannot overload func {fn.__qualname__!r} with signatures that "
                               "differ only by sim.ref[T] (Warp's wp.ref[T]): a call could "
                               "not tell them apart")


def rewrite_function(definition, fn, error):
    """*definition* (the AST of *fn*) returning its reference parameters' final values;
    unchanged for a func without reference parameters.  *error(message, node)* makes the
    exception to raise."""
    _check_overloads(fn)
    references = reference_parameters(fn)
    if not references:
        return definition
    returns = [node for node in _own_nodes(definition) if isinstance(node, ast.Return)]
    has_result = any(node.value is not None for node in returns)

    def packed(node):
        values = [ast.Name(id=name, ctx=ast.Load()) for name in references]
        if has_result:
            if node.value is None:
                raise error("a func with sim.ref parameters that returns a value must return "
                            "one on every path", node)
            values.insert(0, node.value)
        return ast.copy_location(ast.Tuple(elts=values, ctx=ast.Load()), node)

    for node in returns:
        node.value = packed(node)
    if not has_result:
        definition.body.append(ast.Return(value=packed(ast.Return(value=None))))
    parameters = tuple(a.arg for a in definition.args.posonlyargs + definition.args.args)
    _SIGNATURES[fn] = RefSignature(parameters, references, has_result)
    return definition


# --------------------------------------------------------------------------
# Call sites


def _storage_error(node, constants, local_names):
    """Why *node* cannot be passed to a reference parameter, or None."""
    base = node
    while isinstance(base, (ast.Attribute, ast.Subscript)):
        base = base.value
    if not isinstance(base, ast.Name):
        return (f"the argument {ast.unparse(node)!r} is a temporary value, not storage (a "
                "local variable, an array element, a field or a component of one)")
    if base.id not in local_names:
        return (f"the argument {ast.unparse(node)!r} is not a local variable, a parameter or "
                "a part of one")
    if base is node and base.id in constants:
        value = constants[base.id]
        kind = "int32" if type(value) is int else "float32" if type(value) is float else None
        if kind is not None:
            literal = f"{kind}({value!r})"
            return (f"the local {base.id!r} was assigned the literal {value!r}, a compile-time "
                    f"constant without storage; give it a type: {base.id} = sim.{literal} "
                    f"(Warp: {base.id} = wp.{literal})")
        return f"the local {base.id!r} is a compile-time constant, not storage"
    return None


def _calls_in(node, resolver):
    """(call, RefSignature) of the reference-taking calls in expression *node*, innermost
    first."""
    found = []
    for child in ast.iter_child_nodes(node):
        found.extend(_calls_in(child, resolver))
    if isinstance(node, ast.Call):
        signature = signature_of(resolver.resolve(node.func))
        if signature is not None:
            found.append((node, signature))
    return found


_HEADER_FIELDS = {ast.If: ("test",), ast.For: ("iter",), ast.While: ("test",),
                  ast.With: ("items",)}
"""Compound statements -> the fields that are evaluated before their bodies."""


def _expression_fields(statement):
    fields = _HEADER_FIELDS.get(type(statement))
    if fields is None:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
            return ()
        fields = tuple(name for name, _ in ast.iter_fields(statement))
    return fields


class _CallSiteExpander:
    def __init__(self, rewriter, error):
        self.resolver = rewriter.resolver
        self.constants = rewriter.constants
        self.local_names = rewriter.local_names
        self.new_name = rewriter._temporary
        self.error = error

    def expand(self, statement):
        """*statement* with its reference-taking calls split into call, write-backs and
        use (a list of statements)."""
        fields = _expression_fields(statement)
        calls = [found for name in fields for value in _as_list(getattr(statement, name, None))
                 if isinstance(value, ast.AST) for found in _calls_in(value, self.resolver)]
        if not calls:
            return [statement]
        if isinstance(statement, ast.While):
            raise self.error("a call to a func with sim.ref parameters cannot be a while "
                             "loop's condition (call it in the loop body)", calls[0][0])
        before = []
        replacements = {}
        for call, signature in calls:
            before.extend(self._split(call, signature, statement, replacements))
        statement = _Replacer(replacements).visit(statement)
        if isinstance(statement, ast.Expr) and statement.value is None:
            return before
        return before + [statement]

    def _split(self, call, signature, statement, replacements):
        if signature is OVERLOADED:
            raise self.error(f"{ast.unparse(call.func)} has overloads with sim.ref parameters; "
                             "give them different names (which overload a call takes is "
                             "known only when it is typed)", call)
        bound = self._bind(call, signature)
        _Replacer(replacements).generic_visit(call)  # the calls among its arguments
        name = self.new_name()
        result = [ast.copy_location(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                               value=call), call)]
        for position, parameter in enumerate(signature.references):
            argument = bound[parameter]
            problem = _storage_error(argument, self.constants, self.local_names)
            if problem is not None:
                raise self.error(f"cannot pass to the sim.ref parameter {parameter!r}: "
                                 f"{problem}", argument)
            target = copy.deepcopy(argument)
            target.ctx = ast.Store()
            index = position + signature.has_result
            value = ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()),
                                  slice=ast.Constant(index), ctx=ast.Load())
            result.append(ast.copy_location(ast.Assign(targets=[target], value=value), call))
        if signature.has_result:
            replacements[id(call)] = ast.copy_location(ast.Subscript(
                value=ast.Name(id=name, ctx=ast.Load()), slice=ast.Constant(0),
                ctx=ast.Load()), call)
        elif not (isinstance(statement, ast.Expr) and statement.value is call):
            raise self.error("this func with sim.ref parameters returns no value", call)
        else:
            replacements[id(call)] = None
        return result

    def _bind(self, call, signature):
        if any(isinstance(a, ast.Starred) for a in call.args) or \
                any(k.arg is None for k in call.keywords):
            raise self.error("a func with sim.ref parameters is called with plain positional "
                             "or keyword arguments (no *args or **kwargs)", call)
        bound = dict(zip(signature.parameters, call.args))
        bound.update((k.arg, k.value) for k in call.keywords)
        missing = [name for name in signature.references if name not in bound]
        if missing:
            raise self.error(f"missing the sim.ref argument {missing[0]!r}", call)
        return bound


def _as_list(value):
    return value if isinstance(value, list) else [value]


class _Replacer(ast.NodeTransformer):
    def __init__(self, replacements):
        self.replacements = replacements

    def visit_Call(self, node):
        if id(node) in self.replacements:
            return self.replacements[id(node)]
        return self.generic_visit(node)

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Call) and self.replacements.get(id(node.value), 0) is None:
            node.value = None
            return node
        return self.generic_visit(node)


def expand_statement(statement, rewriter, error):
    """*statement* as a list of statements, its calls to funcs with reference parameters
    made explicit (see the module docstring); nested bodies are expanded when the
    kernel-language *rewriter* visits them.  *error(message, node)* makes the exception."""
    return _CallSiteExpander(rewriter, error).expand(statement)
