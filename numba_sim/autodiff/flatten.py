"""The first step of an adjoint: a kernel's (or func's) statements in three-address form.

Every differentiable operation gets a statement of its own, whose operands are names or
constants (``t = a * b``, ``t = sim.dot(u, v)``, ``t = x[i]``, ``t = v.x``), so that the
reverse sweep (numba_sim/autodiff/adjoint_source.py) can take each operation's adjoint in
turn.  What is not differentiated stays whole: comparisons and boolean logic, array indices,
constants read from modules (``sim.pi``), ``sim.static(...)``, calls with keyword
arguments (but for the builtins whose keywords are compile-time constants, ``sim.vector(s,
length=3)``: their values are flattened).  ``a if c else b`` becomes an ``if`` statement (only the taken side is
evaluated, as in the forward code), augmented assignments of names become assignments
(``x += e`` is ``x = x + e``), ``arr[i] += e`` an :class:`AtomicUpdate`, and Warp's query
loops ``while hash_grid_query_next(q, j):`` become ``for j in q:``.
"""

import ast
import itertools

from numba_sim.builtins.forms import KEYWORD_FORM
from numba_sim.builtins.linalg import output_form_assignment
from numba_sim.typing.value_access import factory_as_builtin

_QUERY_NEXT = ("hash_grid_query_next", "bvh_query_next", "mesh_query_aabb_next",
               "mesh_query_point_next")


class AtomicUpdate(ast.stmt):
    """``array[index] op= value`` (op ``+`` or ``-``) or ``sim.atomic_<kind>(array, *index,
    value)``, the statement form of an atomic update of an array element; *kind* is
    ``"add"``, ``"sub"``, ``"min"`` or ``"max"``; *result* the name its returned value goes to
    (or None)."""

    _fields = ("array", "index", "value", "kind", "result")


class MultiAssign(ast.stmt):
    """``a, b = f(x, y)``: a call of flattened arguments whose result is unpacked."""

    _fields = ("targets", "value")


class Flattener:
    def __init__(self, fn, locals_, arrays, error, resolve):
        self.fn = fn
        self.arrays = arrays
        """The names of the array parameters."""
        self.locals = locals_
        """The function's parameters and assigned names (everything else is global)."""
        self.error = error
        self.resolve = resolve
        self._temporaries = itertools.count()

    def temporary(self):
        name = f"__t{next(self._temporaries)}"  # never a renamed name (name__N)
        self.locals.add(name)
        return name

    # -- expressions

    def _is_global_chain(self, node):
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id not in self.locals

    def atom(self, node, out):
        """A name or constant holding *node*'s value, after the statements appended to *out*."""
        if isinstance(node, (ast.Name, ast.Constant)) or self._is_global_chain(node):
            return node
        name = self.temporary()
        self.assign(name, node, out)
        return ast.Name(id=name, ctx=ast.Load())

    def assign(self, target, node, out):
        """Statements computing *node* into the local *target* (a name)."""
        store = ast.Name(id=target, ctx=ast.Store())
        kind = self._atomic_kind(node)
        if kind is not None:  # old = sim.atomic_add(...)
            out.append(self._atomic(node, kind, target, out))
            return
        if isinstance(node, ast.IfExp):
            test = self.atom(node.test, out)
            then, otherwise = [], []
            self.assign(target, node.body, then)
            self.assign(target, node.orelse, otherwise)
            out.append(ast.If(test=test, body=then, orelse=otherwise))
            return
        out.append(ast.Assign(targets=[store], value=self.operation(node, out)))

    def operation(self, node, out):
        """*node* with its differentiable operands turned into atoms."""
        if isinstance(node, ast.BinOp):
            return ast.BinOp(left=self.atom(node.left, out), op=node.op,
                             right=self.atom(node.right, out))
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            return ast.UnaryOp(op=node.op, operand=self.atom(node.operand, out))
        if isinstance(node, ast.Call) and (not node.keywords or self._keyword_form(node)) \
                and not any(isinstance(a, ast.Starred) for a in node.args) \
                and self._flattens_call(node):
            return ast.Call(func=node.func, args=[self.atom(a, out) for a in node.args],
                            keywords=node.keywords)
        if isinstance(node, ast.Subscript):
            value = node.value if isinstance(node.value, ast.Name) else self.atom(node.value, out)
            return ast.Subscript(value=value, slice=node.slice, ctx=ast.Load())
        if isinstance(node, ast.Attribute) and not self._is_global_chain(node):
            return ast.Attribute(value=self.atom(node.value, out), attr=node.attr,
                                 ctx=ast.Load())
        if isinstance(node, ast.Tuple):
            return ast.Tuple(elts=[self.atom(e, out) for e in node.elts], ctx=ast.Load())
        return node  # comparisons, boolean logic, constants: not differentiated, kept whole

    def _keyword_form(self, node):
        """Whether *node* calls a builtin whose keywords are compile-time constants
        (``sim.vector(s, length=3)``, ``sim.types.matrix(..., shape=(2, 2))``): its values
        are flattened, its keywords kept (the adjoint reads them off the result's type)."""
        return hasattr(factory_as_builtin(self.resolve(node.func)), KEYWORD_FORM)

    def _flattens_call(self, node):
        target = self.resolve(node.func)
        name = getattr(target, "__name__", None)
        return name not in ("static", "tid") and target is not None

    # -- statements

    def block(self, statements):
        out = []
        for statement in statements:
            start = len(out)
            self.statement(statement, out)
            for made in out[start:]:  # the user's line, for error messages
                for node in ast.walk(made):
                    if isinstance(node, (ast.stmt, ast.expr)) and not hasattr(node, "lineno"):
                        ast.copy_location(node, statement)
        return out

    def statement(self, node, out):
        if isinstance(node, ast.Assign):
            if len(node.targets) > 1:
                value = self.atom(node.value, out)
                for target in node.targets:
                    self.statement(ast.Assign(targets=[target], value=value), out)
                return
            self._assign_to(node.targets[0], node.value, out, node)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self._assign_to(node.target, node.value, out, node)
        elif isinstance(node, ast.AugAssign):
            self._augmented(node, out)
        elif isinstance(node, ast.Expr):
            self._expression_statement(node, out)
        elif isinstance(node, ast.If):
            test = self.atom(node.test, out)
            out.append(ast.If(test=test, body=self.block(node.body),
                              orelse=self.block(node.orelse)))
        elif isinstance(node, ast.For):
            if node.orelse:
                raise self.error("a for loop's else block is not differentiated", node)
            iterator = node.iter
            if not (isinstance(iterator, ast.Call) and self._is_range(iterator.func)) \
                    and not self._is_reversed_range(iterator):
                iterator = self.atom(iterator, out)
            out.append(ast.For(target=node.target, iter=iterator, body=self.block(node.body),
                               orelse=[]))
        elif isinstance(node, ast.While):
            if node.orelse:
                raise self.error("a while loop's else block is not differentiated", node)
            query = self._query_loop(node)
            if query is not None:
                self.statement(query, out)
                return
            out.append(ast.While(test=node.test, body=self.block(node.body), orelse=[]))
        elif isinstance(node, ast.Return):
            if isinstance(node.value, ast.Tuple):  # return a, b: each its own adjoint
                value = ast.Tuple(elts=[self.atom(e, out) for e in node.value.elts],
                                  ctx=ast.Load())
            else:
                value = None if node.value is None else self.atom(node.value, out)
            out.append(ast.Return(value=value))
        elif isinstance(node, (ast.Break, ast.Continue, ast.Pass)):
            out.append(node)
        elif isinstance(node, (ast.Assert, ast.Global, ast.Nonlocal)):
            return  # checks only: not replayed in the adjoint
        else:
            raise self.error(f"`{type(node).__name__}` statements are not differentiated", node)

    def _is_range(self, func):
        return self.resolve(func) in (range,)

    def _is_reversed_range(self, iterator):
        """``reversed(range(...))``: kept in the loop header, as a range is (the kernel
        language iterates it backwards; it is no value to name)."""
        return isinstance(iterator, ast.Call) and self.resolve(iterator.func) is reversed \
            and len(iterator.args) == 1 and not iterator.keywords \
            and isinstance(iterator.args[0], ast.Call) and self._is_range(iterator.args[0].func)

    def _query_loop(self, node):
        """``while hash_grid_query_next(q, j):`` as ``for j in q:`` (Warp's spelling)."""
        test = node.test
        if isinstance(test, ast.Call) and len(test.args) == 2 \
                and getattr(self.resolve(test.func), "__name__", None) in _QUERY_NEXT \
                and isinstance(test.args[1], ast.Name):
            return ast.For(target=ast.Name(id=test.args[1].id, ctx=ast.Store()),
                           iter=test.args[0], body=node.body, orelse=[])
        return None

    def _assign_to(self, target, value, out, node):
        if isinstance(target, ast.Name):
            self.assign(target.id, value, out)
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                atoms = [self.atom(e, out) for e in value.elts]
                copies = []
                for element, atom in zip(target.elts, atoms):
                    if isinstance(atom, ast.Name) and any(
                            atom.id == e.id for e in target.elts):  # a, b = b, a
                        name = self.temporary()
                        out.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                              value=atom))
                        atom = ast.Name(id=name, ctx=ast.Load())
                    copies.append(ast.Assign(targets=[ast.Name(id=element.id, ctx=ast.Store())],
                                             value=atom))
                out.extend(copies)
            else:
                out.append(MultiAssign(targets=[e.id for e in target.elts],
                                       value=self.operation(value, out)))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            out.append(ast.Assign(targets=[target], value=self.atom(value, out)))
        else:  # component stores (v.x = ..., arr[i].y = ...): kept whole
            out.append(ast.Assign(targets=[target], value=self.atom(value, out)))

    def _augmented(self, node, out):
        target = node.target
        if isinstance(target, ast.Name):
            self.assign(target.id, ast.BinOp(left=ast.Name(id=target.id, ctx=ast.Load()),
                                             op=node.op, right=node.value), out)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and isinstance(node.op, (ast.Add, ast.Sub)) and target.value.id in self.arrays:
            out.append(AtomicUpdate(array=target.value.id, index=target.slice,
                                    value=self.atom(node.value, out),
                                    kind="add" if isinstance(node.op, ast.Add) else "sub",
                                    result=None))
        else:
            out.append(ast.AugAssign(target=target, op=node.op, value=self.atom(node.value, out)))

    def _expression_statement(self, node, out):
        call = node.value
        kind = self._atomic_kind(call)
        assignment = output_form_assignment(node, self.resolve)
        if assignment is not None:  # Warp's svd3(A, U, sigma, V): U, sigma, V = svd3(A)
            self.statement(assignment, out)
        elif kind is not None:
            out.append(self._atomic(call, kind, None, out))
        elif isinstance(call, ast.Call):
            out.append(node)  # print, expect_*: kept whole
        else:
            return  # a docstring or a bare expression: no effect

    def _atomic_kind(self, call):
        if not isinstance(call, ast.Call) or call.keywords:
            return None
        name = getattr(self.resolve(call.func), "__name__", None)
        if name in ("atomic_add", "atomic_sub", "atomic_min", "atomic_max") \
                and getattr(self.resolve(call.func), "__module__", "").startswith("numba_sim") \
                and len(call.args) >= 3 and isinstance(call.args[0], ast.Name):
            return name[len("atomic_"):]
        return None

    def _atomic(self, call, kind, result, out):
        index = call.args[1:-1]
        index = index[0] if len(index) == 1 else ast.Tuple(elts=list(index), ctx=ast.Load())
        return AtomicUpdate(array=call.args[0].id, index=index,
                            value=self.atom(call.args[-1], out), kind=kind, result=result)


def flatten(fn, definition, locals_, arrays, error, resolve):
    """*definition*'s body in three-address form (see the module docstring); *locals_* are
    its parameters and assigned names, *arrays* the names of its array parameters, *error*
    makes the error of a node, *resolve* gives the object a call's function names."""
    return Flattener(fn, locals_, arrays, error, resolve).block(definition.body)
