"""Warp's gradient-debugging tools (``warp.autograd``) on numba_sim's Tape and launches.

``import numba_sim.autograd`` (as Warp's ``import warp.autograd``):

- :func:`jacobian`: the Jacobians of a kernel (or of a Python function that launches
  kernels and returns arrays) by reverse mode: one ``tape.backward()`` per output scalar,
  seeded with that scalar's unit gradient;
- :func:`jacobian_fd`: the same by central finite differences (forward launches only);
- :func:`gradcheck`: both, compared (``|ad - fd| <= atol + rtol |fd|``, no NaN);
- :func:`gradcheck_tape`: :func:`gradcheck` of every kernel launch recorded on a tape;
- :func:`jacobian_plot`: the Jacobians as a Matplotlib figure.

Warp's signatures, defaults, keys and messages.  A Jacobian is the array
``J[output scalar, input scalar]`` (float32 or float64: the input's scalar type, NaN where
not evaluated), on the input's device: Warp's Jacobian of a ``vec3`` input has one
``vec3`` column per element, which is the same matrix as ``J`` reshaped; numba_sim's arrays
are their scalars, so ``J`` is that matrix.  As in Warp, only arrays with a gradient
(``requires_grad=True``, ``sim.requires_grad``) are differentiated, a kernel's inputs
precede its outputs, and struct arguments are not differentiated.
"""

import inspect
import itertools
import re
from typing import Any

import numpy as np

import numba_sim as sim
from numba_sim import arrays
from numba_sim.autodiff import array_access
from numba_sim.autodiff.adjoint_kernel import backward_enabled
from numba_sim.autodiff.gradients import grad_or_none
from numba_sim.autodiff.tape import Tape
from numba_sim.kernel import Kernel

__all__ = ["FunctionMetadata", "gradcheck", "gradcheck_tape", "jacobian", "jacobian_fd",
           "jacobian_plot"]


@sim.kernel(enable_backward=False)
def compute_fd_kernel(left: sim.array(dtype=Any), right: sim.array(dtype=Any),
                      eps: Any, fd: sim.array(dtype=Any)):
    """The central difference quotient, in the outputs' precision."""
    tid = sim.tid()
    fd[tid] = (right[tid] - left[tid]) / (2.0 * eps)


# --------------------------------------------------------------------------
# arrays


def _is_array(value):
    return arrays.device_of(value) is not None


def _xp(a):
    return arrays.cupy_module() if arrays.device_of(a) == "cuda" else np


def _differentiable(value):
    return _is_array(value) and grad_or_none(value) is not None


def _flat_view(a, what):
    """*a*'s scalars as a 1-D view (writes reach *a*)."""
    if not arrays.c_contiguous(a):
        raise ValueError(f"{what}: expected a C-contiguous array (its scalars are perturbed "
                         f"or read through a flat view), got strides {a.strides}")
    return a.reshape(-1)


def _copy(a):
    return a.copy() if _is_array(a) else a


def _scalar_type(dtype):
    return np.dtype(dtype).type


def _zero_grads(values):
    for value in values:
        gradient = grad_or_none(value) if _is_array(value) else None
        if gradient is not None:
            gradient[...] = 0


def _as_output_list(outputs):
    if _is_array(outputs):
        return [outputs]
    if not isinstance(outputs, (list, tuple)):
        raise TypeError(f"function: expected it to return an array or a list of arrays, got "
                        f"{type(outputs).__name__}")
    return list(outputs)


def _snapshot_array_inputs(inputs):
    """Copies of the top-level array inputs, with their read marks (Warp's
    ``verify_autograd_array_access``; None for the others)."""
    return [(a.copy(), array_access.is_read(a)) if _is_array(a) else None for a in inputs]


def _restore_array_inputs(inputs, snapshot):
    """Put back the inputs' values and read marks (the check's own tape marks reads; a
    caller's pending tape keeps its own)."""
    for a, saved in zip(inputs, snapshot):
        if saved is not None:
            a[...] = saved[0]
            array_access.set_read(a, saved[1])


def _eval_function(function, inputs, snapshot):
    """``function(*inputs)``, the inputs restored from *snapshot* if it raises."""
    try:
        return function(*inputs)
    except BaseException:
        if snapshot is not None:
            _restore_array_inputs(inputs, snapshot)
        raise


def _check_sequence(name, value):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}: expected a list, got {type(value).__name__} {value!r:.60}")
    return list(value)


# --------------------------------------------------------------------------
# what is differentiated, and its names


def warp_key(kernel_or_function):
    """Warp's key of a kernel or function: its qualified name, dots as ``__``."""
    if isinstance(kernel_or_function, Kernel):
        name = kernel_or_function.options.get("name")
        if name:
            return name
        kernel_or_function = kernel_or_function.py_func
    return re.sub("[^0-9a-zA-Z_]+", "", kernel_or_function.__qualname__.replace(".", "__"))


def _kernel_keys(kernel):
    return {kernel.key, warp_key(kernel)}


def _array_dtype(annotation, value):
    """A kernel array parameter's dtype: its annotation's, or the value's scalar type."""
    dtype = getattr(annotation, "dtype", None)
    if dtype is None or getattr(annotation, "generic", False):
        return _scalar_type(value.dtype) if _is_array(value) else None
    return dtype


class FunctionMetadata:
    """Warp's ``FunctionMetadata``: the labels, strides and dtypes of the inputs and
    outputs of a kernel or function (a dtype is None for an argument that is not an
    array)."""

    def __init__(self, key=None, input_labels=None, output_labels=None, input_strides=None,
                 output_strides=None, input_dtypes=None, output_dtypes=None):
        self.key = key
        self.input_labels = input_labels
        self.output_labels = output_labels
        self.input_strides = input_strides
        self.output_strides = output_strides
        self.input_dtypes = input_dtypes
        self.output_dtypes = output_dtypes

    @property
    def is_empty(self):
        return self.key is None

    def input_is_array(self, i):
        return self.input_dtypes[i] is not None

    def output_is_array(self, i):
        return self.output_dtypes[i] is not None

    def update_from_kernel(self, kernel, inputs, outputs=()):
        """From *kernel*'s parameters (the first ``len(inputs)`` are its inputs)."""
        parameters = kernel.parameters
        if len(inputs) > len(parameters):
            raise ValueError(f"inputs: {kernel.key} takes {len(parameters)} arguments, got "
                             f"{len(inputs)} inputs")
        values = list(inputs) + list(outputs) + [None] * len(parameters)
        described = []
        for parameter, value in zip(parameters, values):
            if isinstance(parameter.annotation, arrays.array):
                described.append((getattr(value, "strides", None),
                                  _array_dtype(parameter.annotation, value)))
            else:
                described.append((None, None))
        self.key = warp_key(kernel)
        self.input_labels = [p.name for p in parameters[:len(inputs)]]
        self.output_labels = [p.name for p in parameters[len(inputs):]]
        self.input_strides = [s for s, _ in described[:len(inputs)]]
        self.input_dtypes = [d for _, d in described[:len(inputs)]]
        self.output_strides = [s for s, _ in described[len(inputs):]]
        self.output_dtypes = [d for _, d in described[len(inputs):]]

    def update_from_function(self, function, inputs, outputs=None):
        """From *function*'s signature and its outputs (evaluated if not given)."""
        self.key = function.__name__
        self.input_labels = list(inspect.signature(function).parameters)
        if outputs is None:
            outputs = function(*inputs)
        outputs = _as_output_list(outputs)
        self.output_labels = [f"output_{i}" for i in range(len(outputs))]
        self.input_strides = [a.strides if _is_array(a) else None for a in inputs]
        self.input_dtypes = [_scalar_type(a.dtype) if _is_array(a) else None for a in inputs]
        self.output_strides = [a.strides if _is_array(a) else None for a in outputs]
        self.output_dtypes = [_scalar_type(a.dtype) if _is_array(a) else None for a in outputs]


def _resolve_mask(input_output_mask, metadata, n_inputs):
    """The (input index, output index) pairs of Warp's mask of names or indices."""
    names = list(metadata.input_labels) + list(metadata.output_labels)

    def index(name, offset):
        if isinstance(name, (int, np.integer)):
            return int(name)
        if name not in names:
            raise ValueError(f"input_output_mask: {name!r} is not an argument of "
                             f"{metadata.key} (its arguments: {', '.join(map(str, names))})")
        return names.index(name) + offset

    pairs = set()
    for entry in _check_sequence("input_output_mask", input_output_mask or []):
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2):
            raise ValueError(f"input_output_mask: expected (input, output) pairs, got {entry!r}")
        pairs.add((index(entry[0], 0), index(entry[1], -n_inputs)))
    return pairs


def _pairs(inputs, outputs, mask):
    """The differentiated (input index, output index) pairs: arrays with gradients, in
    the mask if there is one (decided before any backward pass registers more)."""
    return [(i, o) for i, o in itertools.product(range(len(inputs)), range(len(outputs)))
            if (not mask or (i, o) in mask) and _differentiable(inputs[i])
            and _differentiable(outputs[o])]


def _check_kernel_outputs(outputs):
    if outputs is None or len(outputs) == 0:
        raise ValueError("A list of output arguments must be provided to compute kernel "
                         "Jacobians")


def _check_backward(kernel):
    if not backward_enabled(kernel):
        raise ValueError(f"Kernel must have backward pass enabled to compute Jacobians "
                         f"({kernel.key} has enable_backward=False, its own or its module's)")


def _recorded_kernels(tape):
    return [entry for entry in tape.launches if hasattr(entry, "kernel")]


def _empty_jacobian(rows, input_array):
    xp = _xp(input_array)
    return xp.full((rows, input_array.size), np.nan, dtype=input_array.dtype)


# --------------------------------------------------------------------------
# the Jacobians


def jacobian(function, dim=None, inputs=None, outputs=None, input_output_mask=None,
             device=None, max_blocks=0, block_dim=None, max_outputs_per_var=-1,
             plot_jacobians=False, metadata=None, restore_inputs=True):
    """Warp's ``jacobian``: ``{(input index, output index): J}`` by reverse mode.

    *function* is a ``@sim.kernel`` (then *dim*, *inputs*, *outputs* are its launch; its
    adjoint runs from the recorded launch, the forward is not run) or a Python function
    of *inputs* returning an array or a list of arrays (run once under a tape; with
    *restore_inputs* its array inputs are put back afterwards).  Row ``r`` of ``J`` is the
    gradient of the output's scalar ``r``; rows from *max_outputs_per_var* on stay NaN.
    """
    inputs = _check_sequence("inputs", inputs)
    metadata = FunctionMetadata() if metadata is None else metadata
    snapshot = None
    tape = Tape()
    if isinstance(function, Kernel):
        _check_backward(function)
        _check_kernel_outputs(outputs)
        outputs = _check_sequence("outputs", outputs)
        if metadata.is_empty:
            metadata.update_from_kernel(function, inputs, outputs)
        tape.record_launch(function, dim, inputs, outputs, device=device)
    else:
        snapshot = _snapshot_array_inputs(inputs) if restore_inputs else None
        with tape:
            outputs = _eval_function(function, inputs, snapshot)
        outputs = _as_output_list(outputs)
    try:
        for entry in _recorded_kernels(tape):
            _check_backward(entry.kernel)
        if metadata.is_empty:
            metadata.update_from_function(function, inputs, outputs)
        pairs = _pairs(inputs, outputs, _resolve_mask(input_output_mask, metadata, len(inputs)))
        jacobians = {}
        for input_i, output_i in pairs:
            source, target = inputs[input_i], outputs[output_i]
            seed = _flat_view(grad_or_none(target), f"the gradient of output {output_i}")
            rows = seed.shape[0]
            result = _empty_jacobian(rows, source)
            for row in range(min(rows, max_outputs_per_var) if max_outputs_per_var > 0 else rows):
                tape.zero()
                _zero_grads(inputs + outputs)
                seed[row] = 1
                tape.backward()
                result[row] = grad_or_none(source).reshape(-1)
            tape.zero()
            _zero_grads(inputs + outputs)
            jacobians[input_i, output_i] = result
    finally:
        if snapshot is not None:
            _restore_array_inputs(inputs, snapshot)
    if plot_jacobians:
        jacobian_plot(jacobians, metadata)
    return jacobians


def jacobian_fd(function, dim=None, inputs=None, outputs=None, input_output_mask=None,
                device=None, max_blocks=0, block_dim=None, max_inputs_per_var=-1, eps=1e-4,
                plot_jacobians=False, metadata=None, restore_inputs=True):
    """Warp's ``jacobian_fd``: ``{(input index, output index): J}`` by central differences
    ``(f(x + eps) - f(x - eps)) / 2 eps`` in the output's precision, one input scalar at a
    time (columns from *max_inputs_per_var* on stay NaN).  Only forward launches: a
    kernel with ``enable_backward=False`` is fine.  A kernel's outputs are written into
    copies; a function's inputs are put back from a snapshot before each evaluation and
    at the end with *restore_inputs*, else each perturbed scalar is reset by copy."""
    inputs = _check_sequence("inputs", inputs)
    metadata = FunctionMetadata() if metadata is None else metadata
    is_kernel = isinstance(function, Kernel)
    snapshot = None
    if is_kernel:
        _check_kernel_outputs(outputs)
        outputs = _check_sequence("outputs", outputs)
        if metadata.is_empty:
            metadata.update_from_kernel(function, inputs, outputs)
    else:
        snapshot = _snapshot_array_inputs(inputs) if restore_inputs else None
        outputs = _as_output_list(_eval_function(function, inputs, snapshot))
        try:
            if metadata.is_empty:
                metadata.update_from_function(function, inputs, outputs)
        finally:
            if snapshot is not None:
                _restore_array_inputs(inputs, snapshot)
    mask = _resolve_mask(input_output_mask, metadata, len(inputs))
    pairs = _pairs(inputs, outputs, mask)
    outputs_copy = [_copy(o) for o in outputs]

    def evaluate(output_i, probe_outputs):
        """The output *output_i* of one evaluation (a kernel launch into *probe_outputs*)."""
        if is_kernel:
            sim.launch(function, dim, inputs=inputs, outputs=probe_outputs, device=device,
                       record_tape=False)
            return probe_outputs[output_i]
        return _as_output_list(_eval_function(function, inputs, snapshot))[output_i]

    jacobians = {}
    try:
        for input_i, output_i in pairs:
            source = inputs[input_i]
            flat_input = _flat_view(source, f"inputs[{input_i}]")
            scalar = _scalar_type(source.dtype)
            columns = flat_input.shape[0]
            if max_inputs_per_var > 0:
                columns = min(columns, max_inputs_per_var)
            result = None
            original = None if snapshot is not None else flat_input.copy()
            for column in range(columns):
                probes = [[_copy(o) for o in outputs_copy] for _ in range(2)]
                flat_input[column] += scalar(-eps)
                left = _copy(evaluate(output_i, probes[0]))
                if snapshot is not None:
                    _restore_array_inputs(inputs, snapshot)
                    flat_input[column] += scalar(eps)
                else:
                    flat_input[column] += scalar(2 * eps)
                right = _copy(evaluate(output_i, probes[1]))
                if snapshot is not None:
                    _restore_array_inputs(inputs, snapshot)
                else:
                    flat_input[...] = original
                flat_left = _flat_view(left, f"output {output_i}")
                quotient = _xp(left).empty_like(flat_left)
                sim.launch(compute_fd_kernel, flat_left.shape[0],
                           inputs=[flat_left, _flat_view(right, f"output {output_i}"),
                                   _scalar_type(left.dtype)(eps), quotient], record_tape=False)
                if result is None:
                    result = _empty_jacobian(flat_left.shape[0], source)
                result[:, column] = quotient
            if result is None:
                result = _empty_jacobian(outputs[output_i].size, source)
            jacobians[input_i, output_i] = result
    finally:
        if snapshot is not None:
            _restore_array_inputs(inputs, snapshot)
    if plot_jacobians:
        jacobian_plot(jacobians, metadata)
    return jacobians


# --------------------------------------------------------------------------
# gradient checks


class _Colors:
    OKGREEN = "\033[92m"
    FAIL = "\033[91m"
    ENDC = "\033[0m"


def gradcheck(function, dim=None, inputs=None, outputs=None, *, eps=1e-4, atol=1e-3,
              rtol=1e-2, raise_exception=True, input_output_mask=None, device=None,
              max_blocks=0, block_dim=None, max_inputs_per_var=-1, max_outputs_per_var=-1,
              plot_relative_error=False, plot_absolute_error=False, show_summary=True,
              restore_inputs=True):
    """Warp's ``gradcheck``: whether the reverse-mode Jacobians (:func:`jacobian`) of a
    kernel or function match the finite-difference ones (:func:`jacobian_fd`):
    ``|ad - fd| <= atol + rtol |fd|`` everywhere evaluated, and no NaN in ``ad``.  With
    *raise_exception* a failure is a ValueError naming the kernel; *show_summary* prints
    Warp's table (errors and where they are largest)."""
    if inputs is None:
        raise ValueError("The inputs argument must be provided")
    metadata = FunctionMetadata()
    common = dict(dim=dim, inputs=inputs, outputs=outputs, input_output_mask=input_output_mask,
                  device=device, max_blocks=max_blocks, block_dim=block_dim,
                  restore_inputs=restore_inputs, plot_jacobians=False, metadata=metadata)
    jacs_ad = jacobian(function, max_outputs_per_var=max_outputs_per_var, **common)
    jacs_fd = jacobian_fd(function, max_inputs_per_var=max_inputs_per_var, eps=eps, **common)

    summary, relative_errors, absolute_errors = [], {}, {}
    success, any_mismatch, any_nan = True, False, False
    for (input_i, output_i), jac_fd in jacs_fd.items():
        jac_ad = jacs_ad[input_i, output_i]
        ad, fd = sim.to_numpy(jac_ad), sim.to_numpy(jac_fd)
        if plot_relative_error or plot_absolute_error:
            denominator = np.where(np.abs(ad) < 1e-8, ad.dtype.type(1e-8), ad)
            relative_errors[input_i, output_i] = (ad - fd) / denominator
            absolute_errors[input_i, output_i] = np.abs(ad - fd)
        if max_outputs_per_var > 0:
            ad, fd = ad[:max_outputs_per_var], fd[:max_outputs_per_var]
        if max_inputs_per_var > 0:
            ad, fd = ad[:, :max_inputs_per_var], fd[:, :max_inputs_per_var]
        matches = np.allclose(ad, fd, atol=atol, rtol=rtol)
        has_nan = bool(np.any(np.isnan(ad)))
        any_mismatch = any_mismatch or not matches
        any_nan = any_nan or has_nan
        success = success and matches and not has_nan
        if show_summary:
            summary.append(_summary_row(metadata, input_i, output_i, ad, fd, matches, has_nan))
    if show_summary:
        print_table(["Input", "Output", "Max Abs Error", "AD at MAE", "FD at MAE",
                     "Max Rel Error", "Pass"], summary)
        color, verdict = (_Colors.OKGREEN, "passed") if success else (_Colors.FAIL, "failed")
        print(f"{color}Gradient check for kernel {metadata.key} {verdict}{_Colors.ENDC}")
    if plot_relative_error:
        jacobian_plot(relative_errors, metadata,
                      title=f"{metadata.key} kernel Jacobian relative error")
    if plot_absolute_error:
        jacobian_plot(absolute_errors, metadata,
                      title=f"{metadata.key} kernel Jacobian absolute error")
    if raise_exception and (any_mismatch or any_nan):
        why = ("finite difference and autodiff gradients do not match" if any_mismatch
               else "gradient contains NaN values")
        raise ValueError(f"Gradient check failed for kernel {metadata.key}, input {input_i}, "
                         f"output {output_i}: {why}")
    return success


def _summary_row(metadata, input_i, output_i, ad, fd, matches, has_nan):
    error = np.abs(ad - fd)
    where = np.unravel_index(np.argmax(error), ad.shape) if error.size else ()
    status = (f"{_Colors.FAIL}NaN" if has_nan else f"{_Colors.OKGREEN}PASS" if matches
              else f"{_Colors.FAIL}FAIL") + _Colors.ENDC
    return [metadata.input_labels[input_i], metadata.output_labels[output_i],
            f"{error.max() if error.size else 0.0:.3e} at {tuple(int(i) for i in where)}",
            f"{ad[where] if error.size else 0.0:.3e}", f"{fd[where] if error.size else 0.0:.3e}",
            f"{np.abs((ad - fd) / (fd + 1e-8)).max() if error.size else 0.0:.3e}", status]


def gradcheck_tape(tape, *, eps=1e-4, atol=1e-3, rtol=1e-2, raise_exception=True,
                   input_output_masks=None, blacklist_kernels=None, whitelist_kernels=None,
                   max_inputs_per_var=-1, max_outputs_per_var=-1, plot_relative_error=False,
                   plot_absolute_error=False, show_summary=True, reverse_launches=False,
                   skip_to_launch_index=0):
    """Warp's ``gradcheck_tape``: :func:`gradcheck` of every kernel launch recorded on
    *tape* with its recorded arguments (functions recorded with ``record_func`` and
    kernels whose backward is disabled are skipped).  Kernels are named in the masks and
    lists by Warp's key (the function's name) or numba_sim's ``kernel.key``."""
    if not isinstance(tape, Tape):
        raise TypeError(f"tape: expected a sim.Tape, got {type(tape).__name__}")
    masks = dict(input_output_masks or {})
    blacklist = set(blacklist_kernels or ())
    whitelist = set(whitelist_kernels or ())
    launches = list(reversed(tape.launches)) if reverse_launches else list(tape.launches)
    overall = True
    for index, entry in enumerate(launches):
        if index < skip_to_launch_index or not hasattr(entry, "kernel"):
            continue
        kernel, keys = entry.kernel, _kernel_keys(entry.kernel)
        if (whitelist and not keys & whitelist) or keys & blacklist or \
                not backward_enabled(kernel):
            continue
        if not entry.outputs:
            raise ValueError(f"gradcheck_tape: launch {index} of {kernel.key} was recorded "
                             f"with no outputs: launch it with the arrays it writes as "
                             f"outputs=[...] (a kernel's inputs precede its outputs, as Warp's "
                             f"gradient checks need)")
        mask = next((masks[k] for k in keys if k in masks), None)
        overall = gradcheck(
            kernel, entry.dim, entry.inputs, entry.outputs, eps=eps, atol=atol, rtol=rtol,
            raise_exception=raise_exception, input_output_mask=mask, device=entry.device,
            max_inputs_per_var=max_inputs_per_var, max_outputs_per_var=max_outputs_per_var,
            plot_relative_error=plot_relative_error, plot_absolute_error=plot_absolute_error,
            show_summary=show_summary) and overall
    return overall


def print_table(headers, cells):
    """Print Warp's summary table (the colour codes take no width)."""

    def width(text):
        return len(re.sub(r"\033\[\d+m", "", str(text)))

    widths = [max(width(cell) for cell in column) for column in zip(headers, *cells)]
    print("".join(f"{header:{w}} | " for header, w in zip(headers, widths)))
    print("-" * (sum(widths) + 3 * len(widths) - 1))
    for row in cells:
        print("".join(f"{cell:{w + len(str(cell)) - width(cell)}} | "
                      for cell, w in zip(row, widths)))


# --------------------------------------------------------------------------
# plots


def _component_count(dtype):
    """The scalars per element of an array dtype (1 for scalars), None if unknown."""
    count = getattr(dtype, "_length_", None)
    if count is not None:
        return count
    try:
        return 1 if np.dtype(dtype).kind in "fiub" else None
    except TypeError:
        return None


def _plot_metadata(kernel, inputs):
    if isinstance(kernel, Kernel):
        if inputs is None:
            raise ValueError("inputs must be provided when kernel is a Warp kernel")
        metadata = FunctionMetadata()
        metadata.update_from_kernel(kernel, list(inputs))
        return metadata
    if isinstance(kernel, FunctionMetadata):
        return kernel
    raise ValueError("Invalid kernel argument: must be a Warp kernel or a FunctionMetadata object")


def _check_plot_indices(metadata, input_indices, output_indices):
    for i in input_indices:
        labels, dtypes = metadata.input_labels or [], metadata.input_dtypes or []
        if not 0 <= i < len(labels):
            raise ValueError(f"Invalid Jacobian input index {i}: plotting metadata defines "
                             f"{len(labels)} inputs")
        if labels[i] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian input index {i}: "
                             f"missing label")
        if i >= len(dtypes) or dtypes[i] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian input index {i}: "
                             f"missing array dtype")
        if _component_count(dtypes[i]) is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian input index {i}: array "
                             f"dtype has no component count")
    for o in output_indices:
        labels = metadata.output_labels or []
        if not 0 <= o < len(labels):
            raise ValueError(f"Invalid Jacobian output index {o}: plotting metadata defines "
                             f"{len(labels)} outputs")
        if labels[o] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian output index {o}: "
                             f"missing label")


def jacobian_plot(jacobians, kernel, inputs=None, show_plot=True, show_colorbar=True,
                  scale_colors_per_submatrix=False, title=None, colormap="coolwarm",
                  log_scale=False):
    """Warp's ``jacobian_plot``: the Jacobians in one Matplotlib figure, a column of
    panels per input and a row per output (needs ``matplotlib``).  *kernel* is the
    ``@sim.kernel`` (with *inputs*) or a :class:`FunctionMetadata`.  Returns the figure
    (None when there is nothing to plot)."""
    metadata = _plot_metadata(kernel, inputs)
    import matplotlib.pyplot as plt  # optional dependency, only for plots
    from matplotlib.ticker import MaxNLocator

    jacobians = dict(sorted(jacobians.items(), key=lambda item: (item[0][1], item[0][0])))
    input_indices = sorted({i for i, _ in jacobians})
    output_indices = sorted({o for _, o in jacobians})
    if not input_indices or not output_indices:
        return None
    _check_plot_indices(metadata, input_indices, output_indices)
    matrices = {key: np.asarray(sim.to_numpy(j)).reshape(j.shape[0], -1)
                for key, j in jacobians.items()}
    column_of = {i: c for c, i in enumerate(input_indices)}
    row_of = {o: r for r, o in enumerate(output_indices)}
    widths = [next(m for (i, _), m in matrices.items() if i == index).shape[1]
              for index in input_indices]
    heights = [next(m for (_, o), m in matrices.items() if o == index).shape[0]
               for index in output_indices]
    fig, axs = plt.subplots(ncols=len(widths), nrows=len(heights), figsize=(7, 7),
                            layout="constrained", sharex="col", sharey="row",
                            gridspec_kw={"wspace": 0.1, "hspace": 0.1, "width_ratios": widths,
                                         "height_ratios": heights},
                            subplot_kw={"aspect": 1}, squeeze=False)
    title = title if title is not None else f"{metadata.key or 'unknown'} kernel Jacobian"
    fig.suptitle(title)
    fig.canvas.manager.set_window_title(title)
    finite = [m[~np.isnan(m)] for m in matrices.values()]
    finite = [m for m in finite if m.size]
    vmin = min(m.min() for m in finite) if finite else 0
    vmax = max(m.max() for m in finite) if finite else 0
    has_plot = np.zeros((len(heights), len(widths)), dtype=bool)
    for i, o in matrices:
        has_plot[row_of[o], column_of[i]] = True
    for r, c in zip(*np.nonzero(~has_plot)):
        axs[r, c].axis("off")
    for (i, o), matrix in matrices.items():
        r, c = row_of[o], column_of[i]
        ax = axs[r, c]
        ax.tick_params(which="major", width=1, length=7)
        ax.tick_params(which="minor", width=1, length=4, color="gray")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if scale_colors_per_submatrix:
            finite_here = matrix[~np.isnan(matrix)]
            vmin, vmax = (finite_here.min(), finite_here.max()) if finite_here.size else (0, 0)
        image = ax.imshow(np.log10(np.abs(matrix) + 1e-8) if log_scale else matrix,
                          cmap=colormap, aspect="auto", interpolation="nearest",
                          extent=[0, matrix.shape[1], 0, matrix.shape[0]], vmin=vmin, vmax=vmax)
        if r == len(heights) - 1 or not has_plot[r + 1:, c].any():
            ax.set_xlabel(metadata.input_labels[i])  # the last panel of its column
        if c == 0 or not has_plot[r, :c].any():
            ax.set_ylabel(metadata.output_labels[o])  # the first panel of its row
        ax.grid(color="gray", which="minor", linestyle="--", linewidth=0.5)
        ax.grid(color="black", which="major", linewidth=1.0)
        if show_colorbar and scale_colors_per_submatrix:
            plt.colorbar(image, ax=ax, orientation="vertical", pad=0.02)
    if show_colorbar and not scale_colors_per_submatrix:
        mappable = plt.cm.ScalarMappable(cmap=colormap)
        mappable.set_array([vmin, vmax])
        mappable.set_clim(vmin, vmax)
        plt.colorbar(mappable, ax=axs, orientation="vertical", pad=0.02)
    if show_plot:
        plt.show()
    return fig
