"""Symbolic scalars: run :mod:`numba_sim.algebra` formulas as LLVM IR.

A :class:`Sym` holds one LLVM value of a Numba scalar type; its Python
operators emit the matching instruction into the builder, so a formula written
for NumPy scalars lowers unchanged on the CPU and the CUDA target.  Arithmetic
is plain IEEE (no fast-math), integer ``/`` and ``%`` truncate as in C, and
division never raises (Warp's semantics: inf/NaN for floats).
"""

from llvmlite import ir
from numba.core import types
from numba.core.typing import signature
from numba.np import numpy_support

_FLOAT_OPS = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv", "rem": "frem"}
_SIGNED_OPS = {"add": "add", "sub": "sub", "mul": "mul", "div": "sdiv", "rem": "srem"}
_UNSIGNED_OPS = {"add": "add", "sub": "sub", "mul": "mul", "div": "udiv", "rem": "urem"}


class Sym:
    """One scalar LLVM value with its Numba type, usable in formulas."""

    __slots__ = ("context", "builder", "type", "value")

    def __init__(self, context, builder, numba_type, value):
        self.context = context
        self.builder = builder
        self.type = numba_type
        self.value = value

    # -- construction helpers
    def _wrap(self, numba_type, value):
        return Sym(self.context, self.builder, numba_type, value)

    def constant(self, value):
        return self._wrap(self.type, self.context.get_constant(self.type, value))

    def _coerce(self, other):
        if isinstance(other, Sym):
            if other.type != self.type:
                return other.cast_to(self.type)
            return other
        return self.constant(other)

    @property
    def np_dtype(self):
        return numpy_support.as_dtype(self.type)

    # -- conversions and calls
    def cast_to(self, numba_type):
        value = self.context.cast(self.builder, self.value, self.type, numba_type)
        return self._wrap(numba_type, value)

    def cast(self, scalar_type):
        """Convert to the NumPy scalar type *scalar_type* (np.float32, ...)."""
        return self.cast_to(numpy_support.from_dtype(scalar_type))

    def emit_call(self, pyfunc, *others):
        """Call the target's implementation of *pyfunc* (e.g. math.sqrt)."""
        operands = [self] + [self._coerce(o) for o in others]
        sig = signature(self.type, *[o.type for o in operands])
        impl = self.context.get_function(pyfunc, sig)
        return self._wrap(self.type, impl(self.builder, [o.value for o in operands]))

    def select(self, a, b):
        """``a if self else b`` for a boolean Sym."""
        reference = a if isinstance(a, Sym) else b
        a, b = reference._coerce(a), reference._coerce(b)
        return reference._wrap(reference.type, self.builder.select(self.value, a.value, b.value))

    # -- arithmetic
    def _arith(self, name, other, reflected=False):
        other = self._coerce(other)
        lhs, rhs = (other, self) if reflected else (self, other)
        if isinstance(self.type, types.Float):
            opname = _FLOAT_OPS[name]
        elif isinstance(self.type, types.Integer) and self.type.signed:
            opname = _SIGNED_OPS[name]
        else:
            opname = _UNSIGNED_OPS[name]
        return self._wrap(self.type, getattr(self.builder, opname)(lhs.value, rhs.value))

    def __add__(self, other):
        return self._arith("add", other)

    def __radd__(self, other):
        return self._arith("add", other, reflected=True)

    def __sub__(self, other):
        return self._arith("sub", other)

    def __rsub__(self, other):
        return self._arith("sub", other, reflected=True)

    def __mul__(self, other):
        return self._arith("mul", other)

    def __rmul__(self, other):
        return self._arith("mul", other, reflected=True)

    def __truediv__(self, other):
        return self._arith("div", other)

    def __rtruediv__(self, other):
        return self._arith("div", other, reflected=True)

    def __mod__(self, other):
        return self._arith("rem", other)

    def __neg__(self):
        if isinstance(self.type, types.Float):  # fsub -0.0, x: NVVM's IR has no fneg
            return self._wrap(self.type, self.builder.fsub(self.constant(-0.0).value, self.value))
        return self._wrap(self.type, self.builder.neg(self.value))

    def __pos__(self):
        return self

    # -- comparisons and logic (results are boolean Syms)
    def _compare(self, op, other):
        other = self._coerce(other)
        if isinstance(self.type, types.Float):
            value = self.builder.fcmp_ordered(op, self.value, other.value)
            if op == "!=":  # NaN != x is true, as in C
                value = self.builder.fcmp_unordered(op, self.value, other.value)
        elif isinstance(self.type, types.Integer) and self.type.signed:
            value = self.builder.icmp_signed(op, self.value, other.value)
        else:
            value = self.builder.icmp_unsigned(op, self.value, other.value)
        return self._wrap(types.boolean, value)

    def __lt__(self, other):
        return self._compare("<", other)

    def __le__(self, other):
        return self._compare("<=", other)

    def __gt__(self, other):
        return self._compare(">", other)

    def __ge__(self, other):
        return self._compare(">=", other)

    def __eq__(self, other):
        return self._compare("==", other)

    def __ne__(self, other):
        return self._compare("!=", other)

    def __and__(self, other):
        return self._wrap(types.boolean, self.builder.and_(self.value, self._coerce(other).value))

    def __or__(self, other):
        return self._wrap(types.boolean, self.builder.or_(self.value, self._coerce(other).value))

    def __invert__(self):
        return self._wrap(types.boolean, self.builder.not_(self.value))

    __hash__ = None

    def __bool__(self):
        raise TypeError("a symbolic scalar has no truth value at compile time; use algebra.select")


def llvm_value(context, numba_type, component):
    """The LLVM value of a formula result component (Sym or plain number)."""
    if isinstance(component, Sym):
        return component.value
    if isinstance(component, ir.Value):
        return component
    return context.get_constant(numba_type, component)
