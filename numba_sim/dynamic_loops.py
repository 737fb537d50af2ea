"""Warp's rule for constants and dynamic loops, read from a kernel's or func's syntax tree.

In Warp a local assigned a literal (``total = 0.0``) is a compile-time constant, and a loop
that is not unrolled (a *dynamic* loop) cannot change it: Warp reports "Error mutating a
constant total inside a dynamic loop, use the following syntax: pi = float(3.141) to declare
a dynamic variable".  A loop is unrolled (static) when it is a ``range`` (or
``reversed(range)``) whose arguments are compile-time ints (literals, ints of the globals or
the closure, ``sim.static(...)``, arithmetic of those) of at most ``max_unroll`` iterations;
``while`` loops, loops over other iterables and longer ranges are dynamic.

The check is conservative where Warp's constant folding goes further: a name stays a constant
only while it is assigned literals outside branches and loops.
"""

import ast
import builtins
import operator

DYNAMIC_LOOP_MESSAGE = ("Error mutating a constant {name} inside a dynamic loop, use the "
                        "following syntax: pi = float(3.141) to declare a dynamic variable")

_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _is_literal(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (bool, int, float)


class _Checker:
    def __init__(self, resolve, local_names, static, max_unroll):
        self.resolve, self.local_names = resolve, local_names
        self.static, self.max_unroll = static, max_unroll
        self.constants = {}
        """Local name -> its literal value, while it is a constant."""

    def _int(self, node):
        """The compile-time int of *node*, or None."""
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self._int(node.operand)
            return None if value is None else -value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            left, right = self._int(node.left), self._int(node.right)
            if left is None or right is None or (right == 0 and type(node.op) in
                                                 (ast.FloorDiv, ast.Mod)):
                return None
            return _OPERATORS[type(node.op)](left, right)
        if isinstance(node, ast.Call) and self.resolve(node.func) is self.static \
                and len(node.args) == 1:
            return None  # evaluated by the kernel language: treated as unrolled below
        if isinstance(node, ast.Name) and node.id in self.constants:
            value = self.constants[node.id]
            return value if type(value) is int else None
        if isinstance(node, (ast.Name, ast.Attribute)):
            base = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id not in self.local_names:
                value = self.resolve(node)
                return int(value) if isinstance(value, int) and not isinstance(value, bool) \
                    else None
        return None

    def _is_static_loop(self, node):
        iterator = node.iter
        if isinstance(iterator, ast.Call) and self.resolve(iterator.func) is builtins.reversed \
                and len(iterator.args) == 1:
            iterator = iterator.args[0]
        if not (isinstance(iterator, ast.Call) and self.resolve(iterator.func) is builtins.range
                and 1 <= len(iterator.args) <= 3 and not iterator.keywords):
            return False
        if any(isinstance(a, ast.Call) and self.resolve(a.func) is self.static
               for a in iterator.args):
            return True  # sim.static bounds: compile-time (their count is not known here)
        bounds = [self._int(a) for a in iterator.args]
        if any(b is None for b in bounds) or (len(bounds) == 3 and bounds[2] == 0):
            return False
        return len(range(*bounds)) <= self.max_unroll

    def statements(self, statements, dynamic, branch):
        for statement in statements:
            found = self.statement(statement, dynamic, branch)
            if found is not None:
                return found
        return None

    def statement(self, node, dynamic, branch):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n.id for t in targets for n in ast.walk(t)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
            if dynamic:
                for name in names:
                    if name in self.constants:
                        return name, node
            literal = isinstance(node, ast.Assign) and _is_literal(node.value)
            for name in names:
                if literal and not dynamic and not branch and len(names) == 1:
                    self.constants[name] = ast.literal_eval(node.value)
                else:
                    self.constants.pop(name, None)
            return None
        if isinstance(node, ast.For):
            loop_dynamic = dynamic or not self._is_static_loop(node)
            for n in ast.walk(node.target):
                if isinstance(n, ast.Name):
                    self.constants.pop(n.id, None)
            return self.statements(node.body + node.orelse, loop_dynamic, True)
        if isinstance(node, ast.While):
            return self.statements(node.body + node.orelse, True, True)
        if isinstance(node, ast.If):
            return self.statements(node.body + node.orelse, dynamic, True)
        if isinstance(node, (ast.With, ast.Try)):
            parts = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])]
            parts += [h.body for h in getattr(node, "handlers", [])]
            return self.statements([s for part in parts for s in part], dynamic, True)
        return None


def mutated_constant(definition, resolve, local_names, static, max_unroll):
    """(name, node) of the first assignment in a dynamic loop of *definition* (an
    ``ast.FunctionDef``) to a local that is a constant there, or None.  *resolve* gives
    what a name or dotted name of the globals or closure refers to; *local_names* are the
    function's own names; *static* is ``sim.static``."""
    checker = _Checker(resolve, local_names, static, max_unroll)
    return checker.statements(definition.body, False, False)


__all__ = ["DYNAMIC_LOOP_MESSAGE", "mutated_constant"]
