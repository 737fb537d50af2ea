"""The operators of the kernel language (Warp's scalar rules), as functions.

Inside ``@sim.kernel`` / ``@sim.func`` bodies the rewrite
(kernel_language.py) turns ``a + b`` into ``add(a, b)`` and so on.  On scalars
these follow Warp:

* the operands meet at a common type (an int literal adopts the other
  operand's type, float literals are float32, a narrower type widens) and the
  result keeps it: int32 + int32 is int32, float32 * 2.0 is float32;
* ``/`` on integers truncates toward zero and ``%`` takes the sign of the
  dividend (C); ``//`` floors; ``%`` on floats is C's fmod;
* ``**`` on floats stays in the base's float type.

Anything else (value types, arrays, tuples...) keeps Python's / Numba's meaning
of the operator.  Each function here is the Python semantics (a ``@sim.func``
run as Python computes the same numbers); typing/kernel_ops.py and
lowering/kernel_ops.py give the compiled semantics on both targets.

The component-assignment helpers (``store_item``, ``store_attr``,
``update_item``, ``update_attr``, ``update_component``) are what the rewrite
turns ``v.x = 1``, ``m[i, j] = 0``, ``arr[i] += x`` (atomic on arrays) and
``arr[i][0] += x`` into: they return the updated value (or the array, after an
atomic update of its element).
"""

import operator

import numpy as np

from numba_sim import algebra

float32 = np.float32
int32 = np.int32

BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "and_": operator.and_, "or_": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift,
}
"""Name of each kernel operator -> the Python operator it stands for."""

AUGMENTED = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor",
             "lshift", "rshift"}


def _is_scalar(x):
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def common_scalar_type(a, b):
    """The NumPy scalar type two Python-mode operands meet at (Warp's rules)."""
    a_literal, b_literal = type(a) in (int, float), type(b) in (int, float)
    a_type = np.int32 if type(a) is int else np.float32 if type(a) is float else type(a)
    b_type = np.int32 if type(b) is int else np.float32 if type(b) is float else type(b)
    if a_literal and not b_literal and (type(a) is int or np.issubdtype(b_type, np.floating)):
        return b_type
    if b_literal and not a_literal and (type(b) is int or np.issubdtype(a_type, np.floating)):
        return a_type
    return np.promote_types(a_type, b_type).type if a_type != b_type else a_type


def _scalar_binary(name, a, b):
    scalar_type = common_scalar_type(a, b)
    a, b = scalar_type(a), scalar_type(b)
    integer = np.issubdtype(scalar_type, np.integer)
    with np.errstate(all="ignore"):
        if name == "truediv":
            return algebra.div(a, b)
        if name == "mod":
            if integer:
                return scalar_type(a - algebra.div(a, b) * b)
            return scalar_type(np.fmod(a, b))
        if name == "pow" and not integer:
            return scalar_type(np.power(a, b))
        return scalar_type(BINARY[name](a, b))


def _make_binary(name):
    python_operator = BINARY[name]

    def kernel_operator(a, b):
        if _is_scalar(a) and _is_scalar(b):
            return _scalar_binary(name, a, b)
        return python_operator(a, b)

    kernel_operator.__name__ = name
    kernel_operator.__qualname__ = name
    kernel_operator.__doc__ = f"The kernel language's ``{name}`` (Warp's scalar rules)."
    return kernel_operator


globals().update({name: _make_binary(name) for name in BINARY})


def neg(a):
    """The kernel language's unary minus (keeps an int32 an int32)."""
    if _is_scalar(a):
        return (np.int32(a) if type(a) is int else np.float32(a) if type(a) is float else a).__neg__()
    return -a


# --------------------------------------------------------------------------
# Component assignment (Python semantics; compiled in lowering/kernel_ops.py)


def _replace_component(value, key, new):
    """*value* (a value type or struct) with component/row/field *key* set to *new*."""
    from numba_sim.structs import Struct
    from numba_sim.types import Value

    if isinstance(value, Struct):
        result = type(value)._from_fields([getattr(value, f.name) for f in value._fields])
        setattr(result, key, new)
        return result
    if not isinstance(value, Value):
        raise TypeError(f"cannot assign to a component of {type(value).__name__}")
    storage = np.array(value._storage)
    if isinstance(key, str):
        from numba_sim.types import attribute_slice

        found = attribute_slice(value.spec, key)
        if found is None:
            raise AttributeError(f"{value.spec.name} has no attribute {key!r}")
        start, stop, _ = found
        storage.reshape(-1)[start:stop] = np.asarray(new).reshape(-1)
    else:
        storage[key] = np.asarray(new)
    return type(value)._from_components(list(storage.reshape(-1)))


def _component(value, key):
    return getattr(value, key) if isinstance(key, str) else value[key]


def store_item(container, index, value):
    """``container[index] = value``: arrays are written (and returned), values rebuilt."""
    if isinstance(container, np.ndarray) or hasattr(container, "__cuda_array_interface__") \
            or isinstance(container, (list, dict)):
        container[index] = value
        return container
    return _replace_component(container, index, value)


def store_attr(container, name, value):
    """``container.name = value``, returning the rebuilt value or struct."""
    return _replace_component(container, name, value)


def _combine(op, current, value):
    return globals()[op](current, value)


def update_item(container, index, op, value):
    """``container[index] op= value`` (atomic on array elements when compiled)."""
    return store_item(container, index, _combine(op, container[index], value))


def update_attr(container, name, op, value):
    """``container.name op= value``."""
    return store_attr(container, name, _combine(op, getattr(container, name), value))


def update_component(container, index, key, op, value):
    """``container[index][key] op= value`` / ``container[index].key op= value``."""
    element = container[index]
    return store_item(container, index, store_item(element, key, _combine(
        op, _component(element, key), value)) if not isinstance(key, str) else store_attr(
        element, key, _combine(op, getattr(element, key), value)))
