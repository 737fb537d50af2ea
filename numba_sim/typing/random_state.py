"""The Numba type of Warp's random state, and its Python counterpart.

Warp's random state is a ``uint32`` that the ``rand*`` and ``sample_*``
builtins advance *in place*.  Numba passes values, so the state here is a
handle: the Numba type :data:`random_state` is represented by a pointer to a
``uint32`` slot on the stack of the function that created it
(``rand_init``).  Every draw loads, advances and stores through the pointer,
so

* ``s = rand_init(seed, offset)`` followed by ``randf(s)``, ``randf(s)``
  yields consecutive numbers of Warp's sequence;
* passing ``s`` to a ``@sim.func`` or a plain ``@njit`` function passes the
  pointer: draws made there advance the caller's state;
* ``t = s`` makes ``t`` the same state (Warp's assignment aliases too).

The data model converts at the edges where a pointer would outlive its slot:
a state *returned* from a function travels as its ``uint32`` value and the
caller puts it in a new slot of its own (``as_return`` / ``from_return``), and
a state stored as data (in a record or array) is stored by value.  So a
function may create a state and return it.  LLVM promotes the slots to
registers once the functions are inlined (CPU and CUDA alike).

Each call site that makes a state (``rand_init``, or a call returning one) has
one slot per function invocation, in the entry block: in a loop, the call
re-initializes that slot, so a handle kept from an earlier iteration
(``first = s``) follows it.

A plain ``uint32`` (say, a state stored in an array and loaded back) is not a
state: the builtins reject it at typing, since it could not be advanced in
place.

A state converts to integer types (it loads the current value): it can be
stored into a ``uint32`` array.  In Python, :class:`RandomState` is a mutable
object holding a ``np.uint32`` that draws advance, so a ``@sim.func`` run as
Python behaves like the compiled one; it is passed to and returned from
``@njit`` functions as a state (advanced in place by the call).
"""

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.datamodel import models
from numba.core.errors import TypingError
from numba.core.extending import register_model, typeof_impl
from numba.core.typeconv import Conversion
from numba.core.typing.templates import AbstractTemplate, signature

from numba_sim.registry import typing_registry

_u32 = ir.IntType(32)


class RandomState:
    """Warp's random state in Python: a ``uint32`` that draws advance in place."""

    __slots__ = ("_value",)

    def __init__(self, value):
        self.value = value

    @property
    def value(self):
        """The current state, a ``np.uint32``."""
        return self._value

    @value.setter
    def value(self, value):
        self._value = np.uint32(int(value) & 0xFFFFFFFF)

    def __int__(self):
        return int(self.value)

    __index__ = __int__

    def __eq__(self, other):
        if isinstance(other, RandomState):
            return self.value == other.value
        return NotImplemented

    __hash__ = None  # mutable

    def __repr__(self):
        return f"RandomState({int(self.value)})"

    def copy(self):
        """An independent state with the same value."""
        return RandomState(self.value)


class RandomStateType(types.Type):
    """Numba type of a random state: a handle to a ``uint32`` slot."""

    def __init__(self):
        super().__init__(name="RandomState")

    def can_convert_to(self, typingctx, other):
        if isinstance(other, types.Integer):
            return Conversion.unsafe  # reads the current value (Warp's state is a uint32)
        return None


random_state = RandomStateType()
"""The (only) instance of :class:`RandomStateType`."""


@register_model(RandomStateType)
class RandomStateModel(models.PrimitiveModel):
    """``i32*`` in registers and arguments; the ``i32`` value when returned or stored."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _u32.as_pointer())

    # A returned pointer would point into the callee's finished frame: return the
    # value, and give it a new slot in the caller.
    def get_return_type(self):
        return _u32

    def as_return(self, builder, value):
        return builder.load(value)

    def from_return(self, builder, value):
        return new_slot(builder, value)

    # Stored as data (records, arrays, closures): the value, copied into a slot on load.
    def get_data_type(self):
        return _u32

    def as_data(self, builder, value):
        return builder.load(value)

    def from_data(self, builder, value):
        return new_slot(builder, value)


def new_slot(builder, value):
    """A new stack slot (in the function's entry block) holding the ``i32`` *value*."""
    slot = cgutils.alloca_once(builder, _u32, name="random_state")
    builder.store(value, slot)
    return slot


@typeof_impl.register(RandomState)
def _typeof_random_state(value, c):
    return random_state


# --------------------------------------------------------------------------
# The state transition: Warp's PCG hash and the two primitives built on it


_PCG_MULTIPLIER = np.uint32(747796405)
_PCG_INCREMENT = np.uint32(2891336453)
_PCG_MIX = np.uint32(277803737)


def pcg_hash(x):
    """Warp's ``rand_pcg`` (Jarzynski and Olano 2020): uint32 arithmetic, wrapping.

    A plain Python function, compiled where compiled code calls it
    (:func:`numba_sim.lowering.random_state.lower_advance`; the random builtins
    declare it a compiled helper).  Numba widens uint32 products to uint64 and
    ``np.uint32`` truncates them back (LLVM then emits 32-bit instructions); in
    Python, NumPy's uint32 arithmetic wraps (run under
    ``np.errstate(over="ignore")``).
    """
    x = np.uint32(x)
    b = np.uint32(x * _PCG_MULTIPLIER + _PCG_INCREMENT)
    c = np.uint32(np.uint32((b >> ((b >> np.uint32(28)) + np.uint32(4))) ^ b) * _PCG_MIX)
    return np.uint32((c >> np.uint32(22)) ^ c)


def advance(state):
    """Advance *state* in place (``state = rand_pcg(state)``) and return the new uint32."""
    with np.errstate(over="ignore"):
        state.value = pcg_hash(state.value)
    return state.value


def new_state(value):
    """A new state holding the uint32 *value*."""
    return RandomState(value)


def state_of(value):
    """The state a draw advances when given *value*: a state itself, or a new state holding
    an integer (``randf(states[i])``: Warp's state is a uint32, and the draw advances a copy
    of the array's element, which keeps its value)."""
    return value if isinstance(value, RandomState) else RandomState(value)


def _expects_state(name, args):
    if len(args) != 1 or args[0] != random_state:
        raise TypingError(f"{name}({', '.join(map(str, args))}): expected a random state made by "
                          "rand_init(seed[, offset])")


@typing_registry.register_global(advance)
class AdvanceTemplate(AbstractTemplate):
    def generic(self, args, kws):
        _expects_state("advance", args)
        return signature(types.uint32, random_state)


@typing_registry.register_global(new_state)
class NewStateTemplate(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) == 1 and isinstance(args[0], types.Integer):
            return signature(random_state, types.uint32)
        raise TypingError(f"new_state({', '.join(map(str, args))}): expected one integer")


@typing_registry.register_global(state_of)
class StateOfTemplate(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) == 1 and args[0] == random_state:
            return signature(random_state, random_state)
        if len(args) == 1 and isinstance(args[0], types.Integer):
            return signature(random_state, types.uint32)
        raise TypingError(f"expected a random state (made by rand_init) or its uint32 value, "
                          f"got {', '.join(map(str, args))}")
