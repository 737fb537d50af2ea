"""Symbolic scalars: run :mod:`numba_sim.algebra` formulas as LLVM IR.

A :class:`Sym` holds one LLVM value of a Numba scalar type; its Python
operators emit the matching instruction into the builder, so a formula written
for NumPy scalars lowers unchanged on the CPU and the CUDA target.  Arithmetic
is plain IEEE (no fast-math), integer ``/`` and ``%`` truncate as in C, and
division never raises (Warp's semantics: inf/NaN for floats).
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing import signature
from numba.np import numpy_support

from numba_sim.native import is_cuda_context

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

    def fma(self, b, c):
        """``self * b + c`` rounded once (``llvm.fma``; integers multiply and add)."""
        b, c = self._coerce(b), self._coerce(c)
        if not isinstance(self.type, types.Float):
            return self * b + c
        return self._wrap(self.type, self.builder.fma(self.value, b.value, c.value))

    def emit_call(self, pyfunc, *others):
        """Call the target's implementation of *pyfunc* (e.g. math.sqrt)."""
        operands = [self] + [self._coerce(o) for o in others]
        sig = signature(self.type, *[o.type for o in operands])
        impl = self.context.get_function(pyfunc, sig)
        return self._wrap(self.type, impl(self.builder, [o.value for o in operands]))

    def emit_libm(self, name):
        """Call the C math library's *name* on this float (``cbrtf`` / ``cbrt``).

        For functions Numba does not lower itself: the CPU target calls libm by
        name (resolved in the process, like Numba's own ``sinf``), CUDA calls
        libdevice's ``__nv_`` function of the same name.
        """
        suffix = "f" if self.type == types.float32 else ""
        prefix = "__nv_" if is_cuda_context(self.context) else ""
        llvm_type = self.context.get_value_type(self.type)
        fn = cgutils.insert_pure_function(self.builder.module,
                                          ir.FunctionType(llvm_type, [llvm_type]),
                                          name=f"{prefix}{name}{suffix}")
        return self._wrap(self.type, self.builder.call(fn, [self.value]))

    def select(self, a, b):
        """``a if self else b`` for a boolean Sym."""
        reference = a if isinstance(a, Sym) else b
        a, b = reference._coerce(a), reference._coerce(b)
        return reference._wrap(reference.type, self.builder.select(self.value, a.value, b.value))

    def branch(self, then, otherwise):
        """``then() if self else otherwise()`` for a boolean Sym, with a real branch.

        *then* and *otherwise* return lists of scalars (Syms or plain numbers) of
        matching types; only the taken side's instructions run.  For results
        that are expensive to compute and usually not needed (``inverse`` of a
        singular matrix), where :meth:`select` would compute both.
        """
        builder = self.builder
        with builder.if_else(self.value, likely=True) as (on_true, on_false):
            with on_true:
                taken = then()
                taken_block = builder.basic_block
            with on_false:
                skipped = otherwise()
                skipped_block = builder.basic_block
        merged = []
        for a, b in zip(taken, skipped):
            reference = a if isinstance(a, Sym) else b
            if not isinstance(reference, Sym):
                raise TypeError("Sym.branch needs a symbolic value on one side of each result")
            with builder.goto_block(taken_block):
                a = reference._coerce(a)
            with builder.goto_block(skipped_block):
                b = reference._coerce(b)
            phi = builder.phi(a.value.type)
            phi.add_incoming(a.value, taken_block)
            phi.add_incoming(b.value, skipped_block)
            merged.append(reference._wrap(reference.type, phi))
        return merged

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
