"""Gradients beside plain NumPy / CuPy arrays: a registry keyed by the array object.

``requires_grad(a)`` registers a zero array of ``a``'s shape, dtype and device as ``a``'s
gradient and returns ``a``; ``grad(a)`` returns it.  The registry holds the array weakly
(NumPy ndarrays and CuPy arrays support weak references): the entry goes when the array
goes, so registering never keeps an array alive.

Views: a view (``a[1:]``, ``a.reshape(...)``) is another array object, with no gradient
of its own; register it if a kernel is launched on it.  A gradient is found by the object,
never by its memory, so two views of one buffer have independent gradients (as two Warp
arrays made with ``ptr=`` have).

Structs: the arrays a struct holds have their gradients beside them, as any array (Warp's
struct arrays have gradients: an adjoint kernel takes the float arrays a kernel reads
through a struct parameter as arrays of their own).  ``grad(s)`` of a struct instance is a
struct of the same class whose arrays are those gradients (Warp's ``tape.gradients[s]``).
"""

import weakref

from numba_sim import autodiff_hooks
from numba_sim.arrays import device_of, zeros_like

_GRADIENTS = {}
"""id(array) -> (weak reference to the array, its gradient array)."""


def _describe(array):
    return (f"{type(array).__module__}.{type(array).__name__} of shape "
            f"{tuple(getattr(array, 'shape', ()))} and dtype {getattr(array, 'dtype', None)} "
            f"at {id(array):#x}")


def _entry(array):
    entry = _GRADIENTS.get(id(array))
    if entry is not None and entry[0]() is array:
        return entry
    return None


def requires_grad(array, grad=None):
    """Register a gradient for *array* (a zero array like it, or *grad*, which must match its
    shape, dtype and device) and return *array*.  An array already registered keeps its
    gradient unless *grad* is given."""
    if device_of(array) is None:
        raise TypeError(f"requires_grad: array: expected a NumPy or CuPy array, got "
                        f"{type(array).__name__} {array!r:.80}")
    if grad is None:
        if _entry(array) is not None:
            return array
        grad = zeros_like(array)
    else:
        if device_of(grad) != device_of(array) or tuple(grad.shape) != tuple(array.shape) \
                or grad.dtype != array.dtype:
            raise ValueError(f"requires_grad: grad: expected an array like the array "
                             f"({_describe(array)} on {device_of(array)}), got {_describe(grad)}"
                             f" on {device_of(grad)}")
    key = id(array)

    def forget(_reference, key=key):
        entry = _GRADIENTS.get(key)
        if entry is not None and entry[0] is _reference:
            del _GRADIENTS[key]

    try:
        reference = weakref.ref(array, forget)
    except TypeError:
        raise TypeError(f"requires_grad: array: {type(array).__name__} does not support weak "
                        f"references; pass a NumPy or CuPy array") from None
    _GRADIENTS[key] = (reference, grad)
    return array


def struct_arrays(value):
    """The arrays a struct instance holds, nested structs followed."""
    from numba_sim.structs import Struct

    found = []
    for field in value._fields:
        member = getattr(value, field.name)
        if isinstance(member, Struct):
            found += struct_arrays(member)
        elif device_of(member) is not None:
            found.append(member)
    return found


def _struct_gradient(value):
    """A struct of *value*'s class whose arrays are the gradients of *value*'s (None where an
    array has none), nested structs likewise; its other fields are *value*'s."""
    from numba_sim.structs import Struct

    gradient = type(value)()
    for field in value._fields:
        member = getattr(value, field.name)
        if isinstance(member, Struct):
            member = _struct_gradient(member)
        elif device_of(member) is not None:
            member = grad_or_none(member)
        setattr(gradient, field.name, member)
    return gradient


def grad(array):
    """*array*'s gradient (registered by ``requires_grad``); KeyError naming the array if
    it has none.  Of a struct instance: the struct of its arrays' gradients (KeyError if
    none of them has one)."""
    from numba_sim.structs import Struct

    if isinstance(array, Struct):
        if not any(_entry(a) is not None for a in struct_arrays(array)):
            raise KeyError(f"grad: no gradient registered for an array of this "
                           f"{type(array).__name__}; allocate its arrays with "
                           f"requires_grad=True or call sim.requires_grad on them")
        return _struct_gradient(array)
    entry = _entry(array)
    if entry is None:
        raise KeyError(f"grad: no gradient registered for the array {_describe(array)}; "
                       f"allocate it with requires_grad=True or call sim.requires_grad(a)")
    return entry[1]


def grad_or_none(array):
    """*array*'s gradient, or None (also for anything that is not an array)."""
    entry = _GRADIENTS.get(id(array))
    if entry is not None and entry[0]() is array:
        return entry[1]
    return None


def has_grad(array):
    return grad_or_none(array) is not None


autodiff_hooks.register_gradient = requires_grad
autodiff_hooks.has_gradient = has_grad


def registered_gradients():
    """The gradients of the live registered arrays (for ``Tape.zero``)."""
    return [entry[1] for entry in list(_GRADIENTS.values()) if entry[0]() is not None]
