"""Launching adjoint kernels: ``sim.launch(..., adjoint=True, adj_inputs=, adj_outputs=)``
and the tape's reverse sweep.

An adjoint launch passes the kernel's arguments, then the adjoint of each differentiable
parameter (numba_sim/autodiff/adjoint_kernel.py).  ``adj_inputs`` / ``adj_outputs`` hold
one entry per input / output, as Warp's: the gradient array of an array (None: the
gradient registered beside the array, as Warp's adjoint then uses the array's ``.grad``;
where it has none a scratch zero array, so that the kernel reads zeros and what it
accumulates there is dropped), and
for scalars and values their adjoint (None: zero; accumulated inside the kernel and not
returned, as in Warp).  The entry of a struct parameter is a struct of its arrays' adjoints
(None, or a None field: the gradients registered beside the struct's arrays).  Entries of
parameters that are not differentiable are ignored.
"""

import numpy as np

from numba_sim import arrays, autodiff_hooks, config, launcher
from numba_sim.autodiff.adjoint_kernel import adjoint_kernel
from numba_sim.autodiff.array_access import check_launch
from numba_sim.autodiff.gradients import grad_or_none, requires_grad
from numba_sim.structs import Struct


def _ndim(dim):
    return len(dim) if isinstance(dim, (tuple, list)) else 1


def _adjoint_argument(kernel, parameter, value, adjoint, where):
    """The adjoint argument of *parameter* (whose argument is *value*)."""
    if parameter.array is not None:
        if adjoint is None:  # Warp's adjoint then uses the array's .grad
            return gradient_or_scratch(value)
        if arrays.device_of(adjoint) is None or tuple(adjoint.shape) != tuple(value.shape) \
                or adjoint.dtype != value.dtype:
            raise ValueError(f"{where}: the adjoint of {kernel.__qualname__}'s parameter "
                             f"{parameter.name!r} must be an array like its argument (shape "
                             f"{tuple(value.shape)}, dtype {value.dtype}), got "
                             f"{type(adjoint).__name__} {getattr(adjoint, 'shape', adjoint)!r}")
        return adjoint
    if adjoint is None:
        if parameter.value_class is not None:
            return parameter.value_class()
        return parameter.scalar(0) if parameter.scalar is not None else 0.0
    return adjoint


def launch_adjoint(kernel, dim, inputs, outputs, adj_inputs, adj_outputs, device=None,
                   stream=None, record_cmd=False):
    """``sim.launch(kernel, dim, inputs, outputs, adjoint=True, adj_inputs=...,
    adj_outputs=...)``; with ``record_cmd``, the recorded launch of the adjoint kernel
    (whose ``set_param_*(..., adjoint=True)`` set a parameter's adjoint)."""
    if not hasattr(kernel, "parameters"):
        raise TypeError(f"kernel: expected a @sim.kernel, got {kernel!r}")
    inputs, outputs = list(inputs), list(outputs)
    adj_inputs = [None] * len(inputs) if adj_inputs is None else list(adj_inputs)
    adj_outputs = [None] * len(outputs) if adj_outputs is None else list(adj_outputs)
    if len(adj_inputs) != len(inputs):
        raise ValueError(f"adj_inputs: expected {len(inputs)} entries (one per input), got "
                         f"{len(adj_inputs)}")
    if len(adj_outputs) != len(outputs):
        raise ValueError(f"adj_outputs: expected {len(outputs)} entries (one per output), got "
                         f"{len(adj_outputs)}")
    args, adjoints = inputs + outputs, adj_inputs + adj_outputs
    if kernel.overloads:
        kernel = launcher._overload_for(kernel, args)
    if len(args) != len(kernel.parameters):
        names = ", ".join(p.name for p in kernel.parameters)
        raise TypeError(f"{kernel.__qualname__} takes {len(kernel.parameters)} arguments "
                        f"({names}), {len(args)} given")
    adjoint = adjoint_kernel(kernel, _ndim(dim))
    differentiable = set(adjoint.adjoint_parameters)
    extra = []
    for index, (parameter, value, adj) in enumerate(zip(kernel.parameters, args, adjoints)):
        if parameter.name in differentiable:
            where = (f"adj_inputs[{index}]" if index < len(inputs)
                     else f"adj_outputs[{index - len(inputs)}]")
            extra.append(_adjoint_argument(kernel, parameter, value, adj, where))
    fields, field_adjoints = [], []
    names = [p.name for p in kernel.parameters]
    for name, chain in adjoint.struct_fields:
        index = names.index(name)
        value = _field(args[index], chain)
        fields.append(value)
        given = _field(adjoints[index], chain) if isinstance(adjoints[index], Struct) else None
        field_adjoints.append(given if given is not None else gradient_or_scratch(value))
    return launcher.launch_forward(adjoint, dim, args + fields + extra + field_adjoints, [],
                                   device, stream, record_cmd)


def _field(value, chain):
    """The array at *chain* (field names) of the struct *value*, or None where a field on
    the way is None."""
    for name in chain:
        if value is None:
            return None
        value = getattr(value, name)
    return value


def gradient_or_scratch(value):
    """The adjoint argument of an array given none: its registered gradient (Warp's
    ``.grad``), else a scratch zero array (what accumulates there is dropped); None for
    None."""
    if value is None:
        return None
    registered = grad_or_none(value)
    return registered if registered is not None else arrays.zeros_like(value)


def intercept(kernel, dim, inputs, outputs, device, stream, record_cmd, adjoint, adj_inputs,
              adj_outputs):
    """``sim.launch`` with ``adjoint=True`` (the adjoint launch) or while a tape records
    (numba_sim/autodiff_hooks.py)."""
    if adjoint:
        return launch_adjoint(kernel, dim, inputs, outputs, adj_inputs, adj_outputs,
                              device=device, stream=stream, record_cmd=record_cmd)
    if adj_inputs is not None or adj_outputs is not None:
        raise TypeError("adj_inputs / adj_outputs: given without adjoint=True")
    if record_cmd or not autodiff_hooks.tapes:
        # a recorded command runs later, perhaps many times: not on the tape
        return launcher.launch_forward(kernel, dim, inputs, outputs, device, stream, record_cmd)
    autodiff_hooks.tapes[-1].record_launch(kernel, dim, inputs, outputs, device, stream)
    if config.verify_autograd_array_access:  # numba_sim/autodiff/array_access.py
        check_launch(launcher._overload_for(kernel, list(inputs) + list(outputs))
                     if kernel.overloads else kernel, list(inputs) + list(outputs))
    launcher.launch_forward(kernel, dim, inputs, outputs, device, stream)


def launch_recorded_adjoint(entry):
    """The adjoint launch of a tape's recorded launch, with the registered gradients.  A
    float array without one gets one registered now (a zero array), so that the gradient
    flows through intermediate arrays (a solver's scratch forces) from the launch that
    reads them to the launch that wrote them."""
    args = entry.inputs + entry.outputs
    adjoints = [requires_grad_of(a) if arrays.device_of(a) is not None
                and np.dtype(a.dtype).kind == "f" else None for a in args]
    launch_adjoint(entry.kernel, entry.dim, entry.inputs, entry.outputs,
                   adjoints[:len(entry.inputs)], adjoints[len(entry.inputs):],
                   device=entry.device, stream=entry.stream)


def requires_grad_of(array):
    """*array*'s gradient, registered first if it has none."""
    gradient = grad_or_none(array)
    return gradient if gradient is not None else grad_or_none(requires_grad(array))


def adjoint_compile_arguments(kernel, argtypes_or_inputs, ndim):
    """(the adjoint kernel, its argument types or example arguments) for
    ``kernel.compile(..., adjoint=True)`` given the kernel's own: each differentiable
    parameter's adjoint has its argument's type (an example array serves as its own
    adjoint's example)."""
    adjoint = adjoint_kernel(kernel, ndim)
    if argtypes_or_inputs is None:
        return adjoint, None
    given = list(argtypes_or_inputs)
    names = [p.name for p in kernel.parameters]
    if len(given) != len(names):
        raise TypeError(f"argtypes_or_inputs: {kernel.__qualname__} takes {len(names)} "
                        f"arguments ({', '.join(names)}), {len(given)} given")
    return adjoint, given + [given[names.index(n)] for n in adjoint.adjoint_parameters]


autodiff_hooks.intercept = intercept
autodiff_hooks.gradient_or_scratch = gradient_or_scratch
autodiff_hooks.adjoint_compile_arguments = adjoint_compile_arguments
