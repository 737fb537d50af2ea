"""A tracing scalar: run an operation's formula once, get its reverse-mode adjoint.

A :class:`Traced` wraps one scalar of a formula (a NumPy scalar in Python, a
:class:`~numba_sim.lowering.symbolic.Sym` when lowering) and looks like one to
:mod:`numba_sim.algebra` (it has ``emit_call``), so ``formula(sig, *traced_args)``
computes the forward values as usual and, on the side, records a Wengert list
(a :class:`Tape`) of the elementary operations it performed: ``+ - * / %`` and
negation, ``fma``, casts, the math functions of :func:`numba_sim.algebra.call`
and ``cbrt``/``rint``, :func:`~numba_sim.algebra.select` and
:func:`~numba_sim.algebra.branch`.  Comparisons and boolean logic give inactive
(non-differentiable) values; integer values are never active.

:meth:`Tape.backward` then sweeps the list in reverse and emits the adjoints with
the same polymorphic helpers, on the same kind of scalars: NumPy numbers in
Python, LLVM instructions when lowering (so an adjoint lowers on the CPU and on
CUDA like any other formula).

Branches keep their structure: where the formula took a real branch
(``algebra.branch`` on a symbolic condition, only the taken side computed), the
reverse sweep branches on the same condition and, inside the taken side,
recomputes that side's forward values and sweeps them (the forward values of
the first branch do not dominate the second one in the IR, so they are
recomputed, not reused).

The elementary rules follow Warp's hand-written adjoints (warp/native/builtin.h)
where Warp picks a convention: ``abs`` routes +1 at 0, ``sqrt`` and ``atan2``,
``asin``, ``acos`` give 0 where their derivative is unbounded (Warp's
``if (d > 0)``; for ``sqrt`` Warp's own gives inf, see docs/autodiff.md),
``floor ceil trunc rint`` and comparisons give 0, ``/`` uses Warp's
``adj_b -= adj_ret * ret / b``.
"""

import math
import threading

import numpy as np

from numba_sim import algebra


class _Recording(threading.local):
    def __init__(self):
        self.tapes = []


_recording = _Recording()
"""Per thread, the stack of tapes being recorded (the innermost records new operations)."""


def _base(x):
    return x.value if isinstance(x, Traced) else x


def _is_active(x):
    return isinstance(x, Traced) and x.active


def _scalar_type(x):
    return algebra.scalar_type_of(_base(x))


def _is_float(x):
    return np.issubdtype(np.dtype(_scalar_type(x)), np.floating)


class Entry:
    """One recorded operation: *outputs* computed from *parents*; ``pullback(g)`` returns
    one contribution (or None) per parent, *g* the adjoint of the one output, or for a
    *branch* (any number of outputs) the list of the outputs' adjoints."""

    __slots__ = ("outputs", "parents", "pullback", "branch")

    def __init__(self, outputs, parents, pullback, branch):
        self.outputs = outputs
        self.parents = parents
        self.pullback = pullback
        self.branch = branch


class Tape:
    """A Wengert list; ``with Tape():`` records the operations of traced values."""

    def __init__(self):
        self.entries = []
        self.members = set()  # ids of the values recorded here

    def __enter__(self):
        _recording.tapes.append(self)
        return self

    def __exit__(self, *exc):
        _recording.tapes.pop()

    def record(self, outputs, parents, pullback, branch=False):
        self.entries.append(Entry(outputs, parents, pullback, branch))
        for out in outputs:
            self.members.add(id(out))

    def outer_parents(self):
        """The active values from outside this tape that its operations read, in order."""
        seen, found = set(), []
        for entry in self.entries:
            for parent in entry.parents:
                if _is_active(parent) and id(parent) not in self.members \
                        and id(parent) not in seen:
                    seen.add(id(parent))
                    found.append(parent)
        return found

    def backward(self, seeds):
        """Sweep in reverse from *seeds* ((value, adjoint) pairs): a dict id -> adjoint."""
        adjoints = {}
        for value, adjoint in seeds:
            if _is_active(value) and adjoint is not None:
                _accumulate(adjoints, value, adjoint)
        for entry in reversed(self.entries):
            incoming = [adjoints.get(id(out)) for out in entry.outputs]
            if all(g is None for g in incoming):
                continue
            if not entry.branch:
                contributions = entry.pullback(incoming[0])
            else:
                contributions = entry.pullback([
                    algebra.zero_like(out.value) if g is None else g
                    for out, g in zip(entry.outputs, incoming)])
            for parent, contribution in zip(entry.parents, contributions):
                if contribution is not None and _is_active(parent):
                    _accumulate(adjoints, parent, contribution)
        return adjoints


def _accumulate(adjoints, value, contribution):
    """Add *contribution* (converted to the type of *value*) to the adjoint of *value*."""
    contribution = _base(contribution)
    if algebra.scalar_type_of(contribution) is not value.scalar_type:
        contribution = algebra.cast(contribution, value.scalar_type)
    previous = adjoints.get(id(value))
    adjoints[id(value)] = contribution if previous is None else previous + contribution


def _record(value, parents, pullback):
    """A new traced value computed from *parents*; recorded if any parent is active."""
    active = any(_is_active(p) for p in parents) and _is_float(value)
    out = Traced(value, active)
    if active:
        _recording.tapes[-1].record((out,), parents, pullback)
    return out


def _inactive(value):
    return Traced(value, False)


def _zero(x):
    return algebra.zero_like(_base(x))


def _guarded(condition, value, reference):
    """``value if condition else 0`` (Warp's ``if (d > 0) adj += ...``)."""
    return algebra.select(condition, value, _zero(reference))


# --------------------------------------------------------------------------
# Elementary rules of the math functions: (g, ret, *args) -> one contribution per argument
# (all in base scalars).  Written in Warp's operation order where Warp has the adjoint.


def _sqrt_rule(g, y, x):
    return (_guarded(y > _zero(y), (0.5 * (1 / y)) * g, y),)


def _asin_acos_rule(sign):
    def rule(g, y, x):
        d = algebra.sqrt(1 - x * x)
        return (_guarded(d > _zero(d), sign * ((1 / d) * g), d),)

    return rule


def _atan2_rule(g, ret, y, x):
    d = x * x + y * y
    positive = d > _zero(d)
    return _guarded(positive, (x / d) * g, d), _guarded(positive, -((y / d) * g), d)


def _log_rule(base):
    def rule(g, y, x):
        if base is None:
            return ((1 / x) * g,)
        return ((1 / x) * (1 / algebra.call(math.log, algebra.cast(base, _scalar_type(x)))) * g,)

    return rule


def _pow_rule(g, ret, a, b):
    return (b * algebra.call(math.pow, a, b - 1) * g,
            algebra.call(math.log, a) * ret * g)


def _copysign_rule(g, ret, x, y):
    one = algebra.one_like(x)
    same = algebra.call(math.copysign, one, x) == algebra.call(math.copysign, one, y)
    return algebra.select(same, g, -g), None


def _zero_rule(g, ret, *args):
    return (None,) * len(args)


MATH_RULES = {
    math.sqrt: _sqrt_rule,
    math.exp: lambda g, y, x: (y * g,),
    math.log: _log_rule(None),
    math.log2: _log_rule(2.0),
    math.log10: _log_rule(10.0),
    math.pow: _pow_rule,
    math.sin: lambda g, y, x: (algebra.call(math.cos, x) * g,),
    math.cos: lambda g, y, x: (-(algebra.call(math.sin, x) * g),),
    math.tan: lambda g, y, x: ((1 / (algebra.call(math.cos, x) * algebra.call(math.cos, x)))
                               * g,),
    math.asin: _asin_acos_rule(1),
    math.acos: _asin_acos_rule(-1),
    math.atan: lambda g, y, x: (g / (x * x + 1),),
    math.atan2: _atan2_rule,
    math.sinh: lambda g, y, x: (algebra.call(math.cosh, x) * g,),
    math.cosh: lambda g, y, x: (algebra.call(math.sinh, x) * g,),
    math.tanh: lambda g, y, x: ((1 - y * y) * g,),
    math.fabs: lambda g, y, x: (algebra.select(x < _zero(x), -g, g),),
    math.copysign: _copysign_rule,
    math.floor: _zero_rule, math.ceil: _zero_rule, math.trunc: _zero_rule,
}
"""The adjoint of each function :func:`numba_sim.algebra.call` takes."""

LIBM_FUNCTIONS = {"cbrt": algebra.cbrt, "rint": algebra.rint}
LIBM_RULES = {
    "cbrt": lambda g, y, x: ((1 / 3) * (1 / (y * y)) * g,),
    "rint": _zero_rule,
}


class Traced:
    """A formula scalar that records what is computed from it (see the module docstring)."""

    __slots__ = ("value", "active", "__weakref__")

    def __init__(self, value, active):
        self.value = value
        self.active = active

    # -- what algebra's polymorphic helpers ask of a symbolic scalar
    @property
    def np_dtype(self):
        return np.dtype(algebra.scalar_type_of(self.value))

    @property
    def scalar_type(self):
        return algebra.scalar_type_of(self.value)

    def constant(self, value):
        if algebra._is_symbolic(self.value):
            return _inactive(self.value.constant(value))
        return _inactive(algebra.cast(value, self.scalar_type))

    def cast(self, scalar_type):
        source = self.scalar_type
        return _record(algebra.cast(self.value, scalar_type), (self,),
                       lambda g: (algebra.cast(g, source),))

    def emit_call(self, pyfunc, *others):
        if pyfunc not in MATH_RULES:
            raise TypeError(f"numba_sim autodiff: no adjoint rule for math function "
                            f"{pyfunc.__name__}")
        args = (self,) + others
        bases = [_base(a) for a in args]
        value = algebra.call(pyfunc, *bases)
        return _record(value, args, lambda g: MATH_RULES[pyfunc](g, value, *bases))

    def emit_libm(self, name):
        value = LIBM_FUNCTIONS[name](self.value)
        x = self.value
        return _record(value, (self,), lambda g: LIBM_RULES[name](g, value, x))

    def fma(self, b, c):
        a_, b_, c_ = self.value, _base(b), _base(c)
        return _record(algebra.muladd(a_, b_, c_), (self, b, c),
                       lambda g: (g * b_, g * a_, g))

    def select(self, a, b):
        cond = self.value
        value = algebra.select(cond, _base(a), _base(b))
        return _record(value, (a, b), lambda g: (algebra.select(cond, g, _zero(g)),
                                                 algebra.select(cond, _zero(g), g)))

    def branch(self, then, otherwise):
        if not algebra._is_symbolic(self.value):  # Python: the taken side, recorded inline
            return then() if self.value else otherwise()
        return _symbolic_branch(self.value, then, otherwise)

    # -- arithmetic
    def _binary(self, other, forward, pullback, reflected=False):
        a, b = (other, self) if reflected else (self, other)
        a_, b_ = _base(a), _base(b)
        value = forward(a_, b_)
        return _record(value, (a, b), lambda g: pullback(g, value, a_, b_))

    def __add__(self, other):
        return self._binary(other, lambda a, b: a + b, lambda g, y, a, b: (g, g))

    def __radd__(self, other):
        return self._binary(other, lambda a, b: a + b, lambda g, y, a, b: (g, g), True)

    def __sub__(self, other):
        return self._binary(other, lambda a, b: a - b, lambda g, y, a, b: (g, -g))

    def __rsub__(self, other):
        return self._binary(other, lambda a, b: a - b, lambda g, y, a, b: (g, -g), True)

    def __mul__(self, other):
        return self._binary(other, lambda a, b: a * b, lambda g, y, a, b: (g * b, g * a))

    def __rmul__(self, other):
        return self._binary(other, lambda a, b: a * b, lambda g, y, a, b: (g * b, g * a), True)

    def __truediv__(self, other):
        return self._binary(other, algebra.div, _div_pullback)

    def __rtruediv__(self, other):
        return self._binary(other, algebra.div, _div_pullback, True)

    def __mod__(self, other):
        return self._binary(other, algebra.remainder, _mod_pullback)

    def __neg__(self):
        return _record(-self.value, (self,), lambda g: (-g,))

    def __pos__(self):
        return self

    # -- comparisons and logic: inactive results
    def _compare(self, other, op):
        return _inactive(op(self.value, _base(other)))

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        return self._compare(other, lambda a, b: a != b)

    def __and__(self, other):
        return self._compare(other, lambda a, b: a & b)

    def __rand__(self, other):
        return self._compare(other, lambda a, b: b & a)

    def __or__(self, other):
        return self._compare(other, lambda a, b: a | b)

    def __ror__(self, other):
        return self._compare(other, lambda a, b: b | a)

    def __invert__(self):
        return _inactive(~self.value)

    __hash__ = None

    def __bool__(self):
        if algebra._is_symbolic(self.value):
            raise TypeError("a traced symbolic scalar has no truth value at compile time")
        return bool(self.value)

    def __repr__(self):
        return f"Traced({self.value!r}{', active' if self.active else ''})"


def _div_pullback(g, y, a, b):
    return algebra.div(g, b), -algebra.div(g * y, b)


def _mod_pullback(g, y, a, b):
    """fmod(a, b) = a - trunc(a / b) * b: d/da 1, d/db -trunc(a / b) (0 for integers)."""
    if algebra.is_integer(a):
        return None, None
    return g, -(g * algebra.call(math.trunc, algebra.div(a, b)))


# --------------------------------------------------------------------------
# Real branches


def _flat(values):
    if isinstance(values, (list, tuple)):
        return [x for v in values for x in _flat(v)]
    return [values]


def _side(function):
    """Run one side of a branch on a tape of its own: (tape, results)."""
    with Tape() as tape:
        results = function()
    return tape, results


def _symbolic_branch(cond, then, otherwise):
    """``algebra.branch`` on a symbolic condition, with its reverse branch recorded."""
    recorded = {}

    def forward(function, label):
        def run():
            tape, results = _side(function)
            recorded[label] = (tape, results)
            return [_base(r) for r in results]

        return run

    merged = cond.branch(forward(then, "then"), forward(otherwise, "otherwise"))
    then_tape, then_results = recorded["then"]
    else_tape, else_results = recorded["otherwise"]
    outer = _union(then_tape.outer_parents() + else_tape.outer_parents()
                   + [r for r in then_results + else_results if _is_active(r)])
    outer = [p for p in outer if id(p) not in then_tape.members | else_tape.members]
    outputs = []
    for value, a, b in zip(merged, then_results, else_results):
        outputs.append(Traced(value, (_is_active(a) or _is_active(b)) and _is_float(value)))
    if not outer or not any(o.active for o in outputs):
        return [Traced(o.value, False) for o in outputs]

    def reverse_side(function):
        def run(adjoints_of_outputs):
            tape, results = _side(function)  # recompute the side's forward values here
            found = tape.backward(list(zip(results, adjoints_of_outputs)))
            return [found.get(id(p), _zero(p)) for p in outer]

        return run

    def pullback(adjoints_of_outputs):
        adjoints_of_outputs = [_base(g) for g in adjoints_of_outputs]
        return cond.branch(lambda: reverse_side(then)(adjoints_of_outputs),
                           lambda: reverse_side(otherwise)(adjoints_of_outputs))

    active_outputs = tuple(outputs)
    _recording.tapes[-1].record(active_outputs, tuple(outer), pullback, branch=True)
    return outputs


def _union(values):
    seen, found = set(), []
    for v in values:
        if id(v) not in seen:
            seen.add(id(v))
            found.append(v)
    return found


# --------------------------------------------------------------------------
# Entry points


def watch(value, differentiable=True):
    """A formula input: a scalar, or a (nested) list of scalars, as traced values."""
    if isinstance(value, (list, tuple)):
        return type(value)(watch(v, differentiable) for v in value)
    return Traced(value, differentiable and np.issubdtype(
        np.dtype(algebra.scalar_type_of(value)), np.floating))


def gradients(outputs, output_adjoints, inputs, tape):
    """The adjoints of *inputs* (nested like them; a zero where none) given those of
    *outputs* (nested alike), by a reverse sweep of *tape*."""
    seeds = list(zip(_flat(outputs), _flat(output_adjoints)))
    found = tape.backward(seeds)

    def collect(value):
        if isinstance(value, (list, tuple)):
            return [collect(v) for v in value]
        g = found.get(id(value))
        return algebra.zero_like(value.value) if g is None else g

    return collect(inputs)
