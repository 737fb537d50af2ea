"""The adjoint's source: a forward replay, then a reverse sweep, as kernel-language text.

The flattened statements (numba_sim/autodiff/flatten.py) are renamed so that each value has
a name of its own (``x__3``; a loop's carried values a head name ``x__h4`` updated by moves
at the end of the body, at ``continue`` and before ``break``; an ``if``'s values merged by
moves at the end of each branch), which the reverse sweep reads.  Each active value ``v``
has an adjoint ``adj__v``, a zero of its type (``zero_of``) made where ``v`` is made.

The reverse of

* an operation ``y = op(a, b)`` accumulates ``adj__a``, ``adj__b`` from the operation's
  adjoint (``adjoint(a, b, adj__y)``, numba_sim.autodiff.adjoint_function, or a func's
  generated adjoint);
* an array read ``y = x[i]`` adds ``adj__y`` into ``adj_x[i]``: a plain ``+`` where every
  read of ``x`` indexes the thread's own element (``x[tid()]``), else ``sim.atomic_add``;
* a store ``x[i] = v`` adds ``adj_x[i]`` into ``adj__v`` (the replay does not store); a
  component store ``x[i].c = v`` / ``x[i][j] = v`` adds ``adj_x[i].c`` and zeroes it
  (``+=`` / ``-=`` of a component keep it);
* a read of a constant slice ``w = v[1:]`` stores ``adj__w`` into the slice of a zero of
  ``v``'s type and adds that (a slice store ``v[1:] = w`` is a component store);
  ``x[i] += v`` / ``sim.atomic_add`` likewise, ``-=`` / ``atomic_sub`` subtracts,
  ``atomic_min`` / ``atomic_max`` add it where ``v`` is the value the array holds (Warp's
  rule: the gradient goes to the winning value);
* an ``if`` branches again on the replayed condition;
* a statement after which the block may have been left (``break``, ``continue``,
  ``return``) guards the reverse of what follows it with a flag the replay set;
* a loop runs again.  When its carried values are needed (``acc *= x[i]``, or a carried
  value read after an update), iteration ``k`` (from the last) first replays the loop from
  its entry values for ``k`` iterations, so that the carried values are exact, then replays
  iteration ``k`` and sweeps it (quadratic in the iteration count, but right where Warp's
  reverse loop reuses the final values).  When every carry is additive (``acc += e``), the
  adjoint of the carry is the same in every iteration, and the iterations are replayed and
  swept in their own order (linear).
"""

import ast
import copy
import itertools
import operator

from numba_sim.autodiff.activity import assigned_names, needs_carried_values
from numba_sim.autodiff.flatten import AtomicUpdate, MultiAssign

BINARY_OPERATORS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.MatMult: operator.matmul,
}
UNARY_OPERATORS = {ast.USub: operator.neg, ast.UAdd: operator.pos}

ZERO = "__sim_zero_of"
RETURNED = "returned__f"
"""The flag a ``return`` inside a loop sets before leaving it (reset where replays start)."""
ATOMIC_ADD = "__sim_atomic_add"
WINNER = "__sim_winner_adjoint"


def _indent(lines, depth=1):
    return ["    " * depth + line for line in lines]


def _block(lines):
    return lines or ["pass"]


class _Renamer(ast.NodeTransformer):
    def __init__(self, env):
        self.env = env

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.env:
            return ast.copy_location(ast.Name(id=self.env[node.id], ctx=ast.Load()), node)
        return node


class _Loop:
    def __init__(self, carried, heads):
        self.carried = carried
        self.heads = heads
        """carried name -> its head name."""
        self.returns = False
        """A ``return`` inside it (or a loop inside it): the replay leaves it and every
        enclosing loop (the flag :data:`RETURNED`)."""


class _Scope:
    """Where a ``break``, ``continue`` or ``return`` leaves to: a loop body or the function;
    its flags are reset where it starts."""

    def __init__(self, loop):
        self.loop = loop
        self.flags = []


class Piece:
    """A statement's (or block's) replay and reverse-sweep lines."""

    def __init__(self, forward=(), reverse=(), may_exit=False, terminates=False):
        self.forward = list(forward)
        self.reverse = list(reverse)
        self.may_exit = may_exit
        """Control may leave the enclosing scope inside it."""
        self.terminates = terminates
        """Control never falls through it."""


class AdjointSource:
    """The adjoint of one kernel or func, as source lines.

    *statements* are its flattened statements, *parameters* its parameter names,
    *activity* the :class:`~numba_sim.autodiff.activity.Activity` of its locals;
    *adjoint_of_call(target, node[, frozen])* gives (the helper name of the adjoint of a
    call's function, the positions of its array parameters, those differentiated), the
    array parameters at the positions *frozen* left undifferentiated; *array_adjoints*
    maps the differentiable arrays to the names of their adjoint arrays; *own_arrays* are the arrays every read of which indexes the thread's own
    element; *error(message, node)* makes a source error.
    """

    def __init__(self, parameters, activity, resolve, adjoint_of_call, own_arrays,
                 array_adjoints, error, returns_value, replay_of=lambda target: None):
        self.env = {p: p for p in parameters}
        self.origin = {p: p for p in parameters}
        self.activity = activity
        self.resolve = resolve
        self.adjoint_of_call = adjoint_of_call
        self.own_arrays = own_arrays
        self.array_adjoints = array_adjoints
        """differentiable array name -> the name of its adjoint array."""
        self.error = error
        self.returns_value = returns_value
        self.replay_of = replay_of
        self.random_states = set()
        """The locals holding random states (made by ``rand_init``): a replayed loop puts
        back the state it started with."""
        """The helper name of a func's custom replay (``@sim.func_replay``), or None."""
        self._counter = itertools.count()
        self.scopes = [_Scope(None)]
        self.loops = []
        self.updated_arrays = set()
        """The arrays the function reads and stores into (``f[i] = f[i] + v``): a store's
        reverse hands the element's adjoint to the stored value and resets it, so that
        the adjoint of the value it overwrote is not counted twice.  Arrays only written
        keep their adjoints (Warp's behaviour: ``grad(y)`` of an output stays readable)."""
        self.definitions = {}
        """renamed local -> the replay line that makes it (to make a query again)."""

    # -- names

    def fresh(self, name, kind=""):
        made = f"{name}__{kind}{next(self._counter)}"
        self.origin[made] = name
        return made

    def is_active_name(self, renamed):
        origin = self.origin.get(renamed)
        return origin is not None and origin in self.activity.active

    @staticmethod
    def adj(renamed):
        return f"adj__{renamed}"

    def rename(self, node):
        return _Renamer(self.env).visit(ast.parse(ast.unparse(node), mode="eval").body) \
            if not isinstance(node, ast.expr) else _Renamer(self.env).visit(_copy(node))

    def text(self, node):
        return ast.unparse(self.rename(node))

    def accumulate(self, atom, gradient):
        """Lines adding *gradient* (an expression) to the adjoint of the renamed *atom*."""
        if isinstance(atom, ast.Name) and self.is_active_name(atom.id):
            return [f"{self.adj(atom.id)} = {self.adj(atom.id)} + {gradient}"]
        return []

    def define(self, name, value_text, active):
        renamed = self.fresh(name)
        self.env[name] = renamed
        lines = [f"{renamed} = {value_text}"]
        self.definitions[renamed] = lines[0]
        if active:
            lines.append(f"{self.adj(renamed)} = {ZERO}({renamed})")
        return renamed, lines

    # -- blocks

    def block(self, statements, trailer=None):
        """The piece of *statements*, then of *trailer()* (made after them: a loop body's
        moves to its heads) if control falls through them."""
        pieces = []
        for statement in statements:
            pieces.append(self.statement(statement))
            if pieces[-1].terminates:
                break  # what follows is never run
        if trailer is not None and not (pieces and pieces[-1].terminates):
            pieces.append(trailer())
        forward, tail = [], []
        terminates = False
        for index in range(len(pieces) - 1, -1, -1):
            piece = pieces[index]
            if piece.may_exit and tail and not piece.terminates:
                flag = self.fresh("live", "f")
                self.scopes[-1].flags.append(flag)
                piece.forward.append(f"{flag} = True")
                tail = [f"if {flag}:"] + _indent(tail)
            tail = tail + piece.reverse
        for piece in pieces:
            forward += piece.forward
            terminates = terminates or piece.terminates
        return Piece(forward, tail, any(p.may_exit for p in pieces), terminates)

    def statement(self, node):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            return self.assignment(node.targets[0].id, node.value, node)
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) \
                and isinstance(node.targets[0].value, ast.Name) \
                and node.targets[0].value.id in self.activity.arrays:
            return self.array_store(node.targets[0], node.value)
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            return self.component_store(node)
        if isinstance(node, MultiAssign):
            return self.multi_assignment(node)
        if isinstance(node, AtomicUpdate):
            return self.atomic_update(node)
        if isinstance(node, ast.If):
            return self.conditional(node)
        if isinstance(node, ast.For):
            return self.for_loop(node)
        if isinstance(node, ast.While):
            return self.while_loop(node)
        if isinstance(node, (ast.Break, ast.Continue)):
            return self.loop_exit(node)
        if isinstance(node, ast.Return):
            return self.function_return(node)
        if isinstance(node, (ast.Pass, ast.Expr)):
            return Piece()  # print, expect_*: not replayed
        raise self.error(f"`{type(node).__name__}` is not differentiated", node)

    # -- values

    def replayed(self, value):
        """*value* renamed, a call of a func with a custom replay calling the replay."""
        renamed = self.rename(value)
        if isinstance(renamed, ast.Call):
            replay = self.replay_of(self.resolve(renamed.func))
            if replay is not None:
                return ast.Call(func=ast.Name(id=replay, ctx=ast.Load()), args=renamed.args,
                                keywords=renamed.keywords)
        return renamed

    def assignment(self, name, value, node):
        active = name in self.activity.active
        value_text = ast.unparse(self.replayed(value))
        renamed_value = self.rename(value)
        renamed, forward = self.define(name, value_text, active)
        reverse = self.operation_adjoint(renamed, renamed_value, node) if active else []
        return Piece(forward, reverse)

    def operation_adjoint(self, out, value, node):
        """The reverse lines of ``out = value`` (*value* renamed)."""
        adj_out = self.adj(out)
        if isinstance(value, ast.Name):
            return self.accumulate(value, adj_out)
        if isinstance(value, ast.Constant) or not self.activity.value_is_active(
                _original(value, self.origin)):
            return []
        if isinstance(value, ast.BinOp):
            target = BINARY_OPERATORS.get(type(value.op))
            return self.call_adjoint(target, [value.left, value.right], adj_out, node)
        if isinstance(value, ast.UnaryOp):
            target = UNARY_OPERATORS.get(type(value.op))
            return self.call_adjoint(target, [value.operand], adj_out, node)
        if isinstance(value, ast.Call):
            return self.call_adjoint(self.resolve(value.func), value.args, adj_out, node)
        if isinstance(value, ast.Subscript):
            base = value.value
            origin = self.origin.get(base.id, base.id) if isinstance(base, ast.Name) else None
            if origin in self.activity.arrays:
                return self.array_read_adjoint(origin, value.slice, adj_out)
            index = value.slice
            if _has_slice(index):  # v[1:], m[:, 0]: a constant slice, scattered back by one
                scattered = self.fresh("g", "s")
                return [f"{scattered} = {ZERO}({ast.unparse(base)})",
                        f"{scattered}[{_index_arguments(index)}] = {adj_out}"] \
                    + self.accumulate(base, scattered)
            return self.call_adjoint(operator.getitem, [base, index], adj_out, node,
                                     differentiated=[True, False])
        if isinstance(value, ast.Attribute):
            return self.call_adjoint(getattr, [value.value], adj_out, node)
        raise self.error(f"`{ast.unparse(value)}`: this expression is not differentiated", node)

    def call_adjoint(self, target, args, adj_out, node, differentiated=None):
        """``adjoint(*args, adj_out)`` and the accumulation of its results."""
        helper, array_params, differentiable_array_params = self.adjoint_of_call(target, node)
        without_adjoint = frozenset(
            position for position in differentiable_array_params
            if not (isinstance(args[position], ast.Name) and self.origin.get(
                args[position].id, args[position].id) in self.array_adjoints))
        if without_adjoint:  # a struct's array, say: the func's adjoint leaves it alone
            helper, array_params, differentiable_array_params = self.adjoint_of_call(
                target, node, without_adjoint)
        gradients = [self.fresh("g", "a") for _ in args]
        passed = [ast.unparse(a) for a in args]
        for position in array_params:
            arg = args[position]
            origin = self.origin.get(arg.id, arg.id) if isinstance(arg, ast.Name) else None
            if position not in differentiable_array_params:
                passed.append(passed[position])  # not differentiated: its adjoint is unused
            elif origin in self.array_adjoints:
                passed.append(self.array_adjoints[origin])
            else:
                raise self.error(f"`{ast.unparse(arg)}`: an array argument of a "
                                 f"differentiated func parameter must be a differentiable "
                                 f"array parameter", node)
        results = [g for i, g in enumerate(gradients) if i not in array_params]
        call = f"{helper}({', '.join(passed + [adj_out])})"
        lines = [f"{', '.join(results)}{',' if len(results) == 1 else ''} = {call}"] \
            if results else [call]
        for position, (arg, gradient) in enumerate(zip(args, gradients)):
            if position in array_params or (differentiated and not differentiated[position]):
                continue
            lines += self.accumulate(arg, gradient)
        return lines

    def array_read_adjoint(self, array, index, adj_value):
        adjoint_array = self.array_adjoints.get(array)
        if adjoint_array is None:
            return []
        index_text = self.text(index)
        if array in self.own_arrays:
            return [f"{adjoint_array}[{index_text}] = {adjoint_array}[{index_text}] + "
                    f"{adj_value}"]
        return [f"{ATOMIC_ADD}({adjoint_array}, {_index_arguments(self.rename(index))}, "
                f"{adj_value})"]

    def multi_assignment(self, node):
        active = any(t in self.activity.active for t in node.targets)
        call = self.rename(node.value)
        renamed = [self.fresh(t) for t in node.targets]
        forward = [f"{', '.join(renamed)} = {ast.unparse(self.replayed(node.value))}"]
        for name, made in zip(node.targets, renamed):
            self.env[name] = made
            if active:
                forward.append(f"{self.adj(made)} = {ZERO}({made})")
        reverse = []
        if active:
            if not isinstance(call, ast.Call):
                raise self.error(f"`{ast.unparse(node.value)}`: only a call's results are "
                                 f"differentiated when unpacked", node)
            adjoints = f"({', '.join(self.adj(r) for r in renamed)},)"
            reverse = self.call_adjoint(self.resolve(call.func), call.args, adjoints, node)
        return Piece(forward, reverse)

    def array_store(self, target, value):
        array = target.value.id
        adjoint_array = self.array_adjoints.get(array)
        renamed = self.rename(value)
        if adjoint_array is None:
            return Piece()
        element = f"{adjoint_array}[{self.text(target.slice)}]"
        reverse = self.accumulate(renamed, element)
        if array in self.updated_arrays:  # overwritten: the old value's adjoint starts at 0
            reverse.append(f"{element} = {ZERO}({element})")
        return Piece([], reverse)

    def atomic_update(self, node):
        forward = []
        index_text = self.text(node.index)
        if node.result is not None:  # the value returned: the element read again
            _, forward = self.define(node.result, f"{node.array}[{index_text}]", False)
        adjoint_array = self.array_adjoints.get(node.array)
        value = self.rename(node.value)
        if adjoint_array is None:
            return Piece(forward)
        element = f"{adjoint_array}[{index_text}]"
        if node.kind == "add":
            reverse = self.accumulate(value, element)
        elif node.kind == "sub":
            reverse = self.accumulate(value, f"-{element}")
        else:  # min / max: the gradient goes to the value the array holds (Warp's rule),
            # component by component for vectors and matrices
            reverse = self.accumulate(value, f"{WINNER}({node.array}[{index_text}], "
                                             f"{ast.unparse(value)}, {element})")
        return Piece(forward, reverse)

    def component_store(self, node):
        """``v.x = a``, ``v[i] = a``, ``v.x += a``: replayed on a copy of ``v``."""
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        base = target
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            base = base.value
        if not isinstance(base, ast.Name) or base.id in self.activity.arrays:
            if isinstance(base, ast.Name) and base.id in self.activity.differentiable_arrays:
                return self.array_component_store(node, target)
            return Piece()  # stores into non-differentiable arrays: not replayed
        active = base.id in self.activity.active
        if active and target.value is not base:
            raise self.error(f"`{ast.unparse(node)}`: nested component assignment of a "
                             f"differentiated value is not differentiated; assign the "
                             f"component to a local first", node)
        previous_name = self.env.get(base.id)
        previous = self.text(base)
        renamed, forward = self.define(base.id, previous, active)
        statement = _copy(node)
        renamer = _Renamer({k: v for k, v in self.env.items() if k != base.id})
        statement = renamer.visit(statement)
        for sub in ast.walk(statement):
            if isinstance(sub, ast.Name) and sub.id == base.id:
                sub.id = renamed
        forward.append(ast.unparse(statement))
        reverse = self.component_store_adjoint(node, target, previous_name, renamed) \
            if active else []
        return Piece(forward, reverse)

    def array_component_store(self, node, target):
        """``arr[i].x = a``, ``arr[i][j] = a``, ``m[i][j, k] = a`` (and ``+=``, ``-=``), the
        replay not storing: the reverse reads the component of the element's adjoint into
        ``a``'s; a plain store then zeroes that component (Warp's rule: the value it
        overwrote had no influence), an update keeps it (the old value's)."""
        element = target.value
        if not (isinstance(element, ast.Subscript) and isinstance(element.value, ast.Name)):
            raise self.error(f"`{ast.unparse(target)}`: only a component of an array element "
                             f"(`arr[i].x`, `arr[i][j]`) is differentiated as a store target; "
                             f"assign the element to a local first", node)
        adjoint_array = self.array_adjoints.get(element.value.id)
        if adjoint_array is None:
            return Piece()
        adjoint_element = f"{adjoint_array}[{self.text(element.slice)}]"
        component = f"{adjoint_element}.{target.attr}" if isinstance(target, ast.Attribute) \
            else f"{adjoint_element}[{_index_arguments(self.rename(target.slice))}]"
        value = self.rename(node.value)
        if isinstance(node, ast.Assign):
            return Piece((), self.accumulate(value, component)
                         + [f"{component} = {ZERO}({component})"])
        if isinstance(node.op, ast.Add):
            return Piece((), self.accumulate(value, component))
        if isinstance(node.op, ast.Sub):
            return Piece((), self.accumulate(value, f"-{component}"))
        raise self.error(f"`{ast.unparse(node)}`: only `=`, `+=` and `-=` of a component of an "
                         f"array element are differentiated", node)

    def component_store_adjoint(self, node, target, previous, renamed):
        """The reverse of ``v.x = a`` / ``v[i] = a`` (and ``+=``, ``-=``) replayed as
        ``new = old; new.x = a``: the component's adjoint goes to ``a``, the others' (all
        of them for ``+=`` and ``-=``) to ``old``."""
        value = self.rename(node.value)
        adjoint = self.adj(renamed)
        if isinstance(target, ast.Attribute):
            def component(of):
                return f"{of}.{target.attr}"
        else:
            index = _index_arguments(self.rename(target.slice))

            def component(of):
                return f"{of}[{index}]"
        if isinstance(node, ast.AugAssign):
            if isinstance(node.op, ast.Add):
                return (self.accumulate(value, component(adjoint))
                        + self.accumulate(ast.Name(id=previous, ctx=ast.Load()), adjoint))
            if isinstance(node.op, ast.Sub):
                return (self.accumulate(value, f"-{component(adjoint)}")
                        + self.accumulate(ast.Name(id=previous, ctx=ast.Load()), adjoint))
            raise self.error(f"`{ast.unparse(node)}`: only `+=` and `-=` of a component are "
                             f"differentiated", node)
        rest = self.fresh("g", "c")
        return (self.accumulate(value, component(adjoint))
                + [f"{rest} = {adjoint}", f"{component(rest)} = {ZERO}({component(rest)})"]
                + self.accumulate(ast.Name(id=previous, ctx=ast.Load()), rest))

    # -- control flow

    def conditional(self, node):
        test = self.text(node.test)
        before = dict(self.env)
        then = self.block(node.body)
        then_env = self.env
        self.env = dict(before)
        otherwise = self.block(node.orelse)
        else_env = self.env
        merged, after = self.merge(before, then_env, else_env, then, otherwise)
        self.env = merged
        forward = [f"if {test}:"] + _indent(_block(then.forward))
        if otherwise.forward:
            forward += ["else:"] + _indent(otherwise.forward)
        forward += after
        reverse = [f"if {test}:"] + _indent(_block(then.reverse))
        if otherwise.reverse:
            reverse += ["else:"] + _indent(otherwise.reverse)
        return Piece(forward, reverse, then.may_exit or otherwise.may_exit,
                     then.terminates and otherwise.terminates)

    def merge(self, before, then_env, else_env, then, otherwise):
        """The names after an ``if``, and the replay lines after it (adjoints of merged
        values); moves appended to the branches that fall through."""
        if then.terminates:
            return dict(else_env), []
        if otherwise.terminates:
            return dict(then_env), []
        merged, after = dict(before), []
        for name in sorted(set(then_env) | set(else_env)):
            a, b = then_env.get(name), else_env.get(name)
            if a == b:
                merged[name] = a
                continue
            if a is None or b is None:  # made in one branch only: valid where it ran
                merged[name] = a or b
                continue
            made = self.fresh(name, "m")
            merged[name] = made
            active = name in self.activity.active
            for piece, source in ((then, a), (otherwise, b)):
                piece.forward.append(f"{made} = {source}")
                if active:
                    piece.reverse[:0] = self.move_adjoint(made, source)
            if active:
                after.append(f"{self.adj(made)} = {ZERO}({made})")
        return merged, after

    def move_adjoint(self, destination, source):
        """The reverse of the move ``destination = source`` (a head or merged name, written
        more than once: its adjoint is handed over and reset)."""
        lines = self.accumulate(ast.Name(id=source, ctx=ast.Load()), self.adj(destination))
        return lines + [f"{self.adj(destination)} = {ZERO}({destination})"]

    def loop_exit(self, node):
        if not self.loops:
            raise self.error("`break` / `continue` outside a loop", node)
        loop = self.loops[-1]
        forward, reverse = [], []
        for name in loop.carried:
            head, current = loop.heads[name], self.env[name]
            if head != current:
                forward.append(f"{head} = {current}")
                if name in self.activity.active:
                    reverse[:0] = self.move_adjoint(head, current)
        forward.append("break" if isinstance(node, ast.Break) else "continue")
        return Piece(forward, reverse, may_exit=True, terminates=True)

    def function_return(self, node):
        forward, reverse = [], []
        if self.loops:  # leaves this loop, then each enclosing one (for_loop, while_loop)
            for loop in self.loops:
                loop.returns = True
            forward.append(f"{RETURNED} = True")
        if node.value is not None and self.returns_value:
            value = self.rename(node.value)
            if isinstance(value, ast.Tuple):  # the caller passes a tuple of adjoints
                for position, element in enumerate(value.elts):
                    reverse += self.accumulate(element, f"adj__ret[{position}]")
            else:
                reverse = self.accumulate(value, "adj__ret")
        forward.append("break")  # leaves the loop, or the replay's one-trip loop
        return Piece(forward, reverse, may_exit=True, terminates=True)

    @staticmethod
    def _returning(loop, forward, restore):
        """A loop with a ``return`` inside: the replay leaves the enclosing loop (or the
        function's one-trip loop) after it when the flag is set, and each replay of it
        starts with the flag reset."""
        if not loop.returns:
            return forward, restore, False
        reset = [f"{RETURNED} = bool(False)"]
        return forward + [f"if {RETURNED}:", "    break"], reset + restore, True

    def loop_body(self, body, loop):
        """(replay lines of one iteration, reverse lines of one iteration)."""
        self.loops.append(loop)
        self.scopes.append(_Scope(loop))
        starts = []
        for name in loop.carried:
            start, lines = self.define(name, loop.heads[name], name in self.activity.active)
            starts += lines
        def moves_to_heads():
            ends, end_reverse = [], []
            for name in loop.carried:
                head, current = loop.heads[name], self.env[name]
                ends.append(f"{head} = {current}")
                if name in self.activity.active:
                    end_reverse[:0] = self.move_adjoint(head, current)
            return Piece(ends, end_reverse)

        piece = self.block(body, moves_to_heads)
        scope = self.scopes.pop()
        self.loops.pop()
        start_reverse = []
        forward = [f"{flag} = False" for flag in scope.flags] + starts + piece.forward
        # the start copies' adjoints flow back to the heads
        for line in starts:
            made, _, source = line.partition(" = ")
            if source in loop.heads.values() and self.is_active_name(made):
                start_reverse += self.accumulate(ast.Name(id=source, ctx=ast.Load()),
                                                 self.adj(made))
        reverse = piece.reverse + start_reverse
        return forward, reverse

    def enter_loop(self, body, target_name=None):
        carried = sorted(n for n in assigned_names(body) if n in self.env and n != target_name)
        heads, forward = {}, []
        entry = {name: self.env[name] for name in carried}
        for name in carried:
            head = self.fresh(name, "h")
            heads[name] = head
            forward.append(f"{head} = {entry[name]}")
            if name in self.activity.active:
                forward.append(f"{self.adj(head)} = {ZERO}({head})")
            self.env[name] = head
        loop = _Loop(carried, heads)
        loop.states = []
        body_reads = {n.id for n in ast.walk(ast.Module(body=list(body), type_ignores=[]))
                      if isinstance(n, ast.Name)}
        for name in sorted(self.random_states & body_reads):
            if name in self.env:
                saved = self.fresh("state", "s")
                forward.append(f"{saved} = __sim_state_value({self.env[name]})")
                loop.states.append((self.env[name], saved))
        return loop, entry, forward

    def exit_loop(self, loop, entry):
        reverse = []
        for name in loop.carried:
            self.env[name] = loop.heads[name]
            if name in self.activity.active:
                reverse += self.accumulate(ast.Name(id=entry[name], ctx=ast.Load()),
                                           self.adj(loop.heads[name]))
        return reverse

    def _remake(self, iterator):
        """The lines that make a loop's iterator again (a spatial query is consumed by its
        loop)."""
        if isinstance(iterator, ast.Name) and iterator.id in self.definitions:
            return [self.definitions[iterator.id]]
        return []

    def for_loop(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.error("a for loop's target must be a name to be differentiated", node)
        iterator = self.rename(node.iter)
        iterator_text = ast.unparse(iterator)
        loop, entry, forward = self.enter_loop(node.body, node.target.id)
        index = self.fresh(node.target.id, "i")
        self.env[node.target.id] = index
        count = self.fresh("n", "c")
        body_forward, body_reverse = self.loop_body(node.body, loop)
        remake = self._remake(iterator)
        forward += [f"{count} = 0", f"for {index} in {iterator_text}:"] + _indent(
            [f"{count} = {count} + 1"] + body_forward)
        restore = [f"{loop.heads[n]} = {entry[n]}" for n in loop.carried] + _restored(loop)
        forward, restore, returns = self._returning(loop, forward, restore)
        if not needs_carried_values(node.body, loop.carried):
            reset = [f"{RETURNED} = bool(False)"] if returns else []
            reverse = reset + _restored(loop) + remake + [f"for {index} in {iterator_text}:"] \
                + _indent(_block(body_forward + body_reverse))
        else:
            k, j = self.fresh("k", "r"), self.fresh("j", "r")
            replay = [f"if {j} == {k}:", "    break", f"{j} = {j} + 1"] + body_forward
            reverse = [f"for {k} in range({count} - 1, -1, -1):"] + _indent(
                restore + remake + [f"{j} = 0", f"for {index} in {iterator_text}:"]
                + _indent(replay)
                + ["for __once in range(1):"] + _indent(_block(body_forward))
                + body_reverse)
        reverse += self.exit_loop(loop, entry)
        self.env[node.target.id] = index
        return Piece(forward, reverse, may_exit=returns)

    def while_loop(self, node):
        loop, entry, forward = self.enter_loop(node.body)
        test = self.text(node.test)
        count = self.fresh("n", "c")
        body_forward, body_reverse = self.loop_body(node.body, loop)
        forward += [f"{count} = 0", f"while {test}:"] + _indent(
            [f"{count} = {count} + 1"] + body_forward)
        restore = [f"{loop.heads[n]} = {entry[n]}" for n in loop.carried] + _restored(loop)
        forward, restore, returns = self._returning(loop, forward, restore)
        k, j = self.fresh("k", "r"), self.fresh("j", "r")
        replay = [f"{j} = {j} + 1"] + body_forward
        reverse = [f"for {k} in range({count} - 1, -1, -1):"] + _indent(
            restore + [f"{j} = 0", f"while {j} < {k}:"] + _indent(replay)
            + ["for __once in range(1):"] + _indent(_block(body_forward)) + body_reverse)
        reverse += self.exit_loop(loop, entry)
        return Piece(forward, reverse, may_exit=returns)


def _restored(loop):
    """The lines putting back the random states a loop started with."""
    return [f"__sim_set_state({state}, {saved})" for state, saved in loop.states]


def _index_arguments(index):
    if isinstance(index, ast.Tuple):
        return ", ".join(ast.unparse(e) for e in index.elts)
    return ast.unparse(index)


def _has_slice(index):
    """Whether the index *index* (an AST) has a slice in it (``1:``, ``:, 0``)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(part, ast.Slice) for part in parts)


def _copy(node):
    return copy.deepcopy(node)


def _original(node, origin):
    """*node* (renamed) with its names back to the names activity knows."""
    node = _copy(node)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in origin:
            sub.id = origin[sub.id]
    return node
