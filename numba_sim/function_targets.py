"""What a ``sim.Function`` parameter of a ``@sim.func`` takes in a kernel (Warp's rule).

``def apply(g: sim.Function, x: float): return g(x)`` is called with a ``@sim.func`` (or an
overload set) or with a builtin that is called as a plain function (``sim.sin``,
``sim.min``).  The kernel language's special forms are not functions of that kind, as in
Warp ("wp.Function parameters support user-defined Warp functions and simple built-in Warp
functions"): ``printf`` and ``print`` (variadic, with a literal format), ``tid`` and
``static`` (resolved by the kernel rewrite), the ``expect_*`` checks (they print the
source of their arguments) and the atomics (they update their array argument in place).
A kernel that passes one is a compile error naming the parameter and the builtin, raised
when the kernel is built (kernel_language.py), instead of the error of the call inside the
func (``printf``'s "fmt must be a string literal").
"""

import functools

from numba_sim.builtins import atomics
from numba_sim.builtins.debug import EXPECTATIONS, kernel_print, printf
from numba_sim.func_overloads import FuncOverloads, is_func
from numba_sim.threads import static, tid

__all__ = ["function_parameters", "special_form_name"]


@functools.cache
def _special_forms():
    forms = {printf: "printf", kernel_print: "print", tid: "tid", static: "static"}
    forms.update({e: e.__name__ for e in EXPECTATIONS})
    forms.update({getattr(atomics, n): n for n in atomics.__all__})
    return forms


def special_form_name(value):
    """The name of *value* if it is one of the kernel language's special forms, else None."""
    try:
        return _special_forms().get(value)
    except TypeError:  # not hashable: not a builtin
        return None


def function_parameters(callee):
    """``{position: name}`` and the names of *callee*'s parameters annotated ``sim.Function``
    (every overload's, for an overload set); empty for anything but a func."""
    members = callee.members if isinstance(callee, FuncOverloads) else \
        [callee] if is_func(callee) else []
    positions, names = {}, set()
    for member in members:
        signature, function_names = member._python_signature()
        for position, name in enumerate(signature.parameters):
            if name in function_names:
                positions.setdefault(position, name)
                names.add(name)
    return positions, names
