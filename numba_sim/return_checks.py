"""A ``@sim.func``'s return annotation, checked against what its code returns (Warp's rule).

Warp refuses to build a function whose returned value does not have the type its ``-> T``
annotation names (``Adjoint._validate_return_type``).  kernel_language.py wraps the value of
each ``return`` of an annotated func in a checker made here, an identity function whose
typing compares the value's Numba type with the annotation and raises Warp's
``WarpCodegenError`` message (a typing error, told as a ``KernelTypingError``, which is a
``WarpCodegenError``) when they differ::

    @sim.func
    def f(x: int) -> sim.int16:
        return sim.int8(x)    # The function `f` has its return type annotated as `int16`
                              # but the code returns a value of type `int8`.

The rule is Warp's, with numba_sim's reading of Python's ``int`` and ``float``: a func
annotated with them may return any int (any float) width, as a func called from plain
``@njit`` code gets int64 and float64 arguments; a literal fits any integer or float
annotation.  Annotations that name no concrete type (``Any``, a generic array, a
``TypeVar``) are not checked.
"""

import builtins
import typing

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.imputils import impl_ret_borrowed
from numba.core.typing.templates import AbstractTemplate, signature

from numba_sim import arrays, registry
from numba_sim.func_overloads import matches
from numba_sim.registry import lowering_registry, typing_registry
from numba_sim.structs import Struct
from numba_sim.types import Value
from numba_sim.typing.structs import StructType
from numba_sim.typing.value_types import ValueType

_CHECKERS = {}


def checked(annotation):
    """Whether a return annotation names types that the check can compare."""
    if typing.get_origin(annotation) is tuple:
        elements = typing.get_args(annotation)
        return bool(elements) and Ellipsis not in elements and all(map(checked, elements))
    if annotation in (builtins.int, builtins.float, builtins.bool):
        return True
    if isinstance(annotation, arrays.array):
        return not annotation.generic
    return isinstance(annotation, type) and (
        issubclass(annotation, (Value, Struct)) or (
            issubclass(annotation, np.generic) and annotation is not np.generic))


def annotation_name(annotation):
    """How Warp writes a type annotation in its messages (``int``, ``int16``,
    ``tuple[int, int]``, ``Array[int32]``)."""
    if typing.get_origin(annotation) is tuple:
        return f"tuple[{', '.join(annotation_name(a) for a in typing.get_args(annotation))}]"
    if isinstance(annotation, arrays.array):
        return f"Array[{arrays.dtype_name(annotation.dtype)}]"
    if isinstance(annotation, type) and issubclass(annotation, Value):
        return annotation.spec.warp_name
    if isinstance(annotation, type) and issubclass(annotation, np.generic):
        return np.dtype(annotation).name
    return getattr(annotation, "__name__", repr(annotation))


def type_name(numba_type):
    """How Warp writes the type of a value in its messages (``int8``, ``float32``, ``vec3f``)."""
    numba_type = types.unliteral(numba_type)
    if isinstance(numba_type, types.Boolean):
        return "bool"
    if isinstance(numba_type, ValueType):
        return numba_type.spec.warp_name
    if isinstance(numba_type, StructType):
        return numba_type.python_class.__name__
    if isinstance(numba_type, types.Array):
        return f"Array[{type_name(numba_type.dtype)}]"
    return str(numba_type)


def _fits(annotation, numba_type):
    lenient = annotation in (builtins.int, builtins.float) or isinstance(numba_type, types.Literal)
    return matches(annotation, numba_type, relaxed=lenient)


def mismatch(name, annotation, numba_type, local_array=False):
    """Warp's message when a value of *numba_type* returned by func *name* does not fit its
    return *annotation*, else None; *local_array*: the value is an array the func made
    (``sim.zeros``), which Warp keeps on the function's stack."""
    head = f"The function `{name}` has its return type annotated as"
    values = len(numba_type) if isinstance(numba_type, types.BaseTuple) else 1
    if typing.get_origin(annotation) is tuple:
        elements = typing.get_args(annotation)
        if len(elements) != values or not isinstance(numba_type, types.BaseTuple):
            return (f"{head} a tuple of {len(elements)} elements but the code returns "
                    f"{values} values.")
        if not all(_fits(a, t) for a, t in zip(elements, numba_type)):
            return (f"{head} `{annotation_name(annotation)}` but the code returns a tuple with "
                    f"types `({', '.join(type_name(t) for t in numba_type)})`.")
        return None
    if isinstance(numba_type, types.BaseTuple):
        return f"{head} `{annotation_name(annotation)}` but the code returns {values} values."
    if local_array and isinstance(annotation, arrays.array) \
            and not isinstance(annotation, arrays.fixedarray):
        return (f"The function `{name}` returns a fixed-size array whereas it has its return "
                f"type annotated as `{annotation_name(annotation)}`.")
    if not _fits(annotation, numba_type):
        return (f"{head} `{annotation_name(annotation)}` but the code returns a value of type "
                f"`{type_name(numba_type)}`.")
    return None


def return_checker(name, annotation, local_array=False):
    """The identity function that checks, when typed, a value returned by func *name*
    against its return *annotation* (declared on both targets once per key)."""
    key = (name, annotation, local_array)
    try:
        checker = _CHECKERS.get(key)
    except TypeError:  # an unhashable annotation: none is made
        return None
    if checker is not None:
        return checker

    def checker(value):
        return value

    checker.__name__ = checker.__qualname__ = f"return_of_{name}"

    class ReturnCheck(AbstractTemplate):
        key = checker

        def generic(self, args, kws):
            if kws or len(args) != 1:
                return None
            message = mismatch(name, annotation, args[0], local_array)
            if message is not None:
                raise TypingError(message)
            return signature(types.unliteral(args[0]), args[0])

    typing_registry.register_global(checker, types.Function(ReturnCheck))

    @lowering_registry.lower(checker, types.Any)
    def lower_checker(context, builder, sig, args):
        value = context.cast(builder, args[0], sig.args[0], sig.return_type)
        return impl_ret_borrowed(context, builder, sig.return_type, value)

    registry.install()
    _CHECKERS[key] = checker
    return checker
