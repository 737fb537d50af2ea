"""Overloaded ``@sim.func``: several definitions of one name with different parameter types.

As in Warp, defining a ``@sim.func`` again in a module under the same name with other
parameter annotations adds an overload instead of replacing the function::

    @sim.func
    def custom(x: int): return x + 1

    @sim.func
    def custom(x: float): return x + 1.0

A call picks the overload whose annotations match the argument types exactly, else one they
convert to: an int literal to an int or float, another int or float to one of its kind
(``custom(1)`` is the ``int`` one: an int literal is Warp's int32; plain ``@njit`` code's
float64 goes to ``float``), in definition order, overloads with a generic (``Any``)
parameter after the specialized ones.  Compiled
(kernels, funcs, ``@njit`` and ``@cuda.jit`` code, both targets) the choice is made when the
call is typed and the chosen function is called as any ``@sim.func``; called from Python it
is made from the Python values.  A redefinition with the same annotations replaces that
overload (a notebook cell run again).
"""

import builtins
import inspect
import typing

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing.templates import AbstractTemplate
from numba.np import numpy_support

from numba_sim import arrays, registry
from numba_sim.annotations import function_annotations
from numba_sim.structs import Struct
from numba_sim.types import GenericValue, Value, generic_scalar_accepts, is_generic_annotation
from numba_sim.typing.structs import StructType
from numba_sim.typing.value_types import ValueType


def annotations_of(fn):
    """*fn*'s parameter annotations, in order (None where a parameter has none); for a
    ``@sim.func``, those of the function as written."""
    fn = getattr(fn, "py_func", fn)
    fn = getattr(fn, "__wrapped_kernel_source__", fn)
    given = function_annotations(fn)
    return tuple(given.get(name) for name in inspect.signature(fn).parameters)


def scalar_annotation(annotation):
    """The Numba scalar type *annotation* names (``int`` -> int32, ``float`` -> float32,
    ``sim.float64``), or None."""
    if annotation in (builtins.float, builtins.int, builtins.bool) or (
            isinstance(annotation, type) and issubclass(annotation, np.generic)):
        return numpy_support.from_dtype(arrays.element_dtype(annotation))
    return None


def _element_matches(element, numba_dtype):
    if isinstance(element, type) and issubclass(element, Value):
        return isinstance(numba_dtype, ValueType) and numba_dtype.spec == element.spec
    if isinstance(element, type) and issubclass(element, Struct):
        return isinstance(numba_dtype, StructType) and numba_dtype.python_class is element
    return numba_dtype == numpy_support.from_dtype(element)


def matches(annotation, argtype, relaxed=False):
    """Whether a compiled argument of Numba type *argtype* fits *annotation*; *relaxed* lets
    an int literal fit any integer or float annotation, and another integer or float one of
    its kind (plain ``@njit`` code's int64 and float64)."""
    if annotation is None or annotation is typing.Any:
        return True
    if isinstance(annotation, typing.TypeVar):  # Warp's Int, Float, Scalar
        if isinstance(argtype, types.IntegerLiteral):
            return generic_scalar_accepts(annotation, np.int32)
        return isinstance(argtype, (types.Integer, types.Float)) and generic_scalar_accepts(
            annotation, numpy_support.as_dtype(types.unliteral(argtype)))
    if isinstance(annotation, GenericValue):
        return isinstance(argtype, ValueType) and annotation.accepts(argtype.spec)
    scalar = scalar_annotation(annotation)
    if scalar is not None:
        if isinstance(argtype, types.IntegerLiteral):  # Warp's int literal: an int32
            return isinstance(scalar, (types.Integer, types.Float)) if relaxed else \
                scalar == types.int32
        if relaxed and isinstance(argtype, (types.Integer, types.Float)):
            return type(types.unliteral(argtype)) is type(scalar)
        return types.unliteral(argtype) == scalar
    if isinstance(annotation, type) and issubclass(annotation, Value):
        return isinstance(argtype, ValueType) and argtype.spec == annotation.spec
    if isinstance(annotation, type) and issubclass(annotation, Struct):
        return isinstance(argtype, StructType) and argtype.python_class is annotation
    if isinstance(annotation, arrays.array):
        return isinstance(argtype, types.Array) and argtype.ndim == annotation.ndim and (
            annotation.generic or _element_matches(annotation.dtype, argtype.dtype))
    return False


def python_matches(annotation, value, relaxed=False):
    """Whether the Python value *value* fits *annotation* (a Python int is an int literal)."""
    if annotation is None or annotation is typing.Any:
        return True
    if isinstance(annotation, typing.TypeVar):
        dtype = np.int32 if isinstance(value, int) else np.float32 if isinstance(
            value, float) else getattr(value, "dtype", None)
        return dtype is not None and generic_scalar_accepts(annotation, dtype)
    if isinstance(annotation, GenericValue):
        return isinstance(value, Value) and annotation.accepts(value.spec)
    scalar = scalar_annotation(annotation)
    if scalar is not None:
        if isinstance(value, (bool, np.bool_)):
            return isinstance(scalar, types.Boolean)
        if isinstance(value, int):
            return isinstance(scalar, types.Integer) or (relaxed and isinstance(scalar, types.Float))
        if isinstance(value, float):
            return isinstance(scalar, types.Float)
        if isinstance(value, np.generic):
            return numpy_support.from_dtype(value.dtype) == scalar
        return False
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    if isinstance(annotation, arrays.array):
        return isinstance(value, np.ndarray)
    return False


def is_func(value):
    """Whether *value* is a ``@sim.func`` (:class:`numba_sim.kernel.Func`), known by the
    signature method every func has, so that the modules kernel.py imports can tell one
    without importing kernel.py."""
    return (not isinstance(value, type)  # (the class itself, sim.Function, is not a func)
            and callable(getattr(value, "_python_signature", None)) and hasattr(value, "func"))


class FuncOverloads:
    """The overloads of one ``@sim.func`` name (see the module docstring)."""

    def __init__(self, first):
        self.__name__ = first.py_func.__name__
        self.__qualname__ = first.py_func.__qualname__
        self.__doc__ = first.__doc__
        self.members = [first]
        _register(self)

    def add(self, func):
        """Add *func*, or let it replace the overload with the same annotations."""
        signature = annotations_of(func)
        for k, member in enumerate(self.members):
            if annotations_of(member) == signature:
                self.members[k] = func
                return self
        self.members.append(func)
        return self

    def _ranked(self):
        """The members, those without a generic (``Any`` or missing) annotation first: a
        specialization beats the generic form, as in Warp."""
        return sorted(self.members, key=lambda member: any(
            is_generic_annotation(a) for a in annotations_of(member)))

    def choose(self, argtypes):
        """The member a compiled call with *argtypes* resolves to, or a TypingError."""
        for relaxed in (False, True):
            for member in self._ranked():
                signature = annotations_of(member)
                if len(signature) == len(argtypes) and all(
                        matches(a, t, relaxed) for a, t in zip(signature, argtypes)):
                    return member
        raise TypingError(f"{self.__name__}({', '.join(map(str, argtypes))}): no overload "
                          f"accepts these types; the overloads are {self.describe()}")

    def describe(self):
        return "; ".join(f"{self.__name__}({', '.join(_describe(a) for a in annotations_of(m))})"
                         for m in self.members)

    def __call__(self, *args):
        for relaxed in (False, True):
            for member in self._ranked():
                signature = annotations_of(member)
                if len(signature) == len(args) and all(
                        python_matches(a, v, relaxed) for a, v in zip(signature, args)):
                    return member(*args)
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"{self.__name__}({got}): no overload accepts these arguments; the "
                        f"overloads are {self.describe()}")

    def __repr__(self):
        return f"<numba_sim func {self.__qualname__} (overloaded)>"


def _describe(annotation):
    if annotation is None:
        return "any"
    return getattr(annotation, "__name__", repr(annotation))


def _register(overloads):
    """Type and lower calls of *overloads* on both targets, through the chosen member."""

    class Template(AbstractTemplate):
        key = overloads
        prefer_literal = True  # an int literal is Warp's int32 (see ``matches``)

        def generic(self, args, kws):
            if kws:
                raise TypingError(f"{overloads.__name__}: keyword arguments are not supported")
            member = overloads.choose(args)
            function_type = self.context.resolve_value_type(member)
            return self.context.resolve_function_type(function_type, args, {})

    Template.__name__ = f"Overloads_{overloads.__name__}"
    registry.typing_registry.register_global(overloads, types.Function(Template))

    @registry.lowering_registry.lower(overloads, types.VarArg(types.Any))
    def call_member(context, builder, sig, args):
        member = overloads.choose(sig.args)
        function_type = context.typing_context.resolve_value_type(member)
        function_type.get_call_type(context.typing_context, sig.args, {})
        return context.get_function(function_type, sig)(builder, args)

    registry.install()
