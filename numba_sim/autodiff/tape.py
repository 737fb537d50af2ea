"""``sim.Tape``: records launches and runs their adjoints in reverse.

``with tape:`` records every ``sim.launch`` made inside (the launcher's hook,
numba_sim/autodiff_hooks.py: a launch with no tape active costs one list test).
``tape.backward(loss=l)`` seeds ``grad(l)`` with 1 (``l`` a one-element array);
``tape.backward(grads=[(y, dy), ...])`` copies each ``dy`` into ``grad(y)``; then the
recorded launches' adjoints run in reverse order with the recorded arguments, the
gradients of their arrays taken from the registry (numba_sim/autodiff/gradients.py).

What is recorded: launches that run (also those recorded into a CPU ``sim.capture``:
a backward made inside the capture is then captured too, and replaying the graph runs
both).  ``record_cmd=True`` launches are not: a command runs later and maybe many times,
so record its ``launch()`` calls' kernel with ``sim.launch`` under the tape instead.

Debug checks: with ``Tape(check_inputs=True)``, or while ``sim.config.mode == "debug"``,
each recorded launch keeps a checksum of the arrays its kernel reads, taken before it
runs; ``backward`` compares them and names the kernel and the parameter of an array
overwritten between the forward launch and the backward.  With
``sim.config.verify_autograd_array_access``, a recorded launch writing an array that an
earlier one read prints Warp's warning (numba_sim/autodiff/array_access.py).
"""

import sys

from numba_sim import autodiff_hooks, config
from numba_sim.autodiff.adjoint_kernel import backward_enabled
from numba_sim.autodiff.adjoint_launch import launch_recorded_adjoint
from numba_sim.autodiff.array_access import clear_launches
from numba_sim.autodiff.gradients import grad_or_none, requires_grad, struct_arrays
from numba_sim.autodiff import tape_graph
from numba_sim.autodiff.launch_checks import InputChecksums
from numba_sim.structs import Struct


class RecordedLaunch:
    """One launch recorded on a tape: its kernel and arguments."""

    __slots__ = ("kernel", "dim", "inputs", "outputs", "device", "stream", "checksums")

    def __init__(self, kernel, dim, inputs, outputs, device, stream, checksums):
        self.kernel, self.dim, self.device, self.stream = kernel, dim, device, stream
        self.inputs, self.outputs = list(inputs), list(outputs)
        self.checksums = checksums

    def arrays(self):
        """The arrays of the launch that have gradients, those of its structs too."""
        found = []
        for value in self.inputs + self.outputs:
            found += struct_arrays(value) if isinstance(value, Struct) else [value]
        return [a for a in found if grad_or_none(a) is not None]

    def __repr__(self):
        return f"<recorded launch of {getattr(self.kernel, 'key', self.kernel)}, dim={self.dim}>"


class Tape:
    """Warp's ``wp.Tape``."""

    def __init__(self, check_inputs=False):
        if not isinstance(check_inputs, bool):
            raise TypeError(f"check_inputs: expected a bool, got {check_inputs!r}")
        self.check_inputs = check_inputs
        self.launches = []
        """The recorded launches, oldest first (:class:`RecordedLaunch`, or a callable
        recorded with :meth:`record_func`)."""
        self.gradients = {}
        """id(array) -> (array, gradient) of the arrays seeded by :meth:`backward`."""
        self.scopes = []
        """Warp's scope markers, for :meth:`visualize`: ``(launch index, name, metadata)``
        where a scope begins, ``(launch index, None, None)`` where one ends."""
        self._seeded = []

    def __enter__(self):
        if self in autodiff_hooks.tapes:
            raise RuntimeError("Tape: this tape is already recording (a `with tape:` block "
                               "inside another one of the same tape)")
        autodiff_hooks.tapes.append(self)
        return self

    def __exit__(self, *exc):
        autodiff_hooks.tapes.remove(self)
        return False

    # -- recording

    def record_launch(self, kernel, dim, inputs, outputs, device=None, stream=None):
        """Record a launch (the launcher calls this for every launch inside ``with``)."""
        if not hasattr(kernel, "parameters"):
            raise TypeError(f"kernel: expected a @sim.kernel, got {kernel!r}")
        checksums = None
        if self.check_inputs or config.mode == "debug":
            checksums = InputChecksums.of_launch(kernel, list(inputs) + list(outputs))
        self.launches.append(RecordedLaunch(kernel, dim, inputs, outputs, device, stream,
                                            checksums))

    def record_func(self, backward, arrays):
        """Warp's ``Tape.record_func``: *backward* (a function of no arguments) runs at its
        place in the reverse sweep; *arrays* are the arrays whose gradients it writes
        (``zero()`` zeroes them)."""
        if not callable(backward):
            raise TypeError(f"backward: expected a function of no arguments, got {backward!r}")
        for array in arrays:
            requires_grad(array)
        self.launches.append(_RecordedFunction(backward, list(arrays)))

    def record_scope_begin(self, scope_name, metadata=None):
        """Begin a scope grouping the launches recorded next (Warp's; for :meth:`visualize`)."""
        self.scopes.append((len(self.launches), scope_name, {} if metadata is None else metadata))

    def record_scope_end(self, remove_scope_if_empty=True):
        """End the innermost open scope; one in which nothing was recorded is dropped (with
        ``remove_scope_if_empty``).  A RuntimeError (Warp's) when no scope is open."""
        open_scopes = sum(-1 if name is None else 1 for _, name, _ in self.scopes)
        if open_scopes == 0:
            raise RuntimeError("Warp: Error, ended tape scope, but scope not present")
        if remove_scope_if_empty and self.scopes[-1][1] is not None \
                and self.scopes[-1][0] == len(self.launches):
            self.scopes.pop()
        else:
            self.scopes.append((len(self.launches), None, None))

    def visualize(self, filename=None, simplify_graph=True, hide_readonly_arrays=False,
                  array_labels=None, choose_longest_node_name=True, ignore_graph_scopes=False,
                  track_inputs=None, track_outputs=None, track_input_names=None,
                  track_output_names=None, graph_direction="LR"):
        """The recorded launches as GraphViz dot code (Warp's ``Tape.visualize``; written to
        *filename* too when given): numba_sim/autodiff/tape_graph.py."""
        return tape_graph.visualize(self, filename, simplify_graph, hide_readonly_arrays, array_labels,
                         choose_longest_node_name, ignore_graph_scopes, track_inputs,
                         track_outputs, track_input_names, track_output_names, graph_direction)

    # -- the reverse sweep

    def backward(self, loss=None, grads=None):
        """Run the recorded launches' adjoints in reverse, seeded by ``grad(loss) = 1`` or
        by ``grads`` (pairs ``(array, its output gradient)``), or both (as Warp); with
        neither, by the gradients as they are (set beforehand, as Warp's
        ``tape.backward()``)."""
        if loss is not None:
            if getattr(loss, "size", None) != 1:
                raise ValueError(f"loss: expected a one-element array, got "
                                 f"{type(loss).__name__} of shape {getattr(loss, 'shape', None)}")
            seed = grad_or_none(loss)
            if seed is None:
                seed = grad_or_none(requires_grad(loss))
            seed[...] = 1
            self._remember(loss, seed)
        if grads is not None:
            pairs = list(grads.items()) if isinstance(grads, dict) else grads
            if not isinstance(pairs, (list, tuple)):
                raise TypeError(f"grads: expected a list of (array, gradient) pairs, got "
                                f"{type(grads).__name__}")
            for index, pair in enumerate(pairs):
                if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
                    raise TypeError(f"grads[{index}]: expected a pair (array, gradient), got "
                                    f"{pair!r:.80}")
                array, seed_value = pair
                requires_grad(array)
                seed = grad_or_none(array)
                if tuple(getattr(seed_value, "shape", ())) not in ((), tuple(seed.shape)):
                    raise ValueError(f"grads[{index}]: the gradient's shape "
                                     f"{tuple(seed_value.shape)} is not the array's "
                                     f"{tuple(seed.shape)}")
                seed[...] = seed_value
                self._remember(array, seed)
        for entry in reversed(self.launches):
            if isinstance(entry, _RecordedFunction):
                entry.backward()
                continue
            if entry.checksums is not None:
                entry.checksums.check()
            if not _warn_without_backward(entry.kernel):
                launch_recorded_adjoint(entry)
        if config.verify_autograd_array_access:  # the reads are consumed (as Warp)
            clear_launches(self.launches)

    def _remember(self, array, gradient):
        self.gradients[id(array)] = (array, gradient)

    def zero(self):
        """Zero the gradients of every array of the recorded launches and of the seeds."""
        for gradient in self._gradient_arrays():
            gradient[...] = 0

    def reset(self):
        """Forget the recorded launches, after zeroing their gradients (Warp's ``reset``)."""
        if config.verify_autograd_array_access:
            clear_launches(self.launches)
        self.zero()
        self.launches = []
        self.gradients = {}
        self.scopes = []

    def _gradient_arrays(self):
        seen = {}
        for entry in self.launches:
            arrays = entry.arrays if isinstance(entry, _RecordedFunction) else entry.arrays()
            for array in arrays:
                gradient = grad_or_none(array)
                if gradient is not None:
                    seen[id(gradient)] = gradient
        for _, gradient in self.gradients.values():
            seen[id(gradient)] = gradient
        return list(seen.values())

    def __repr__(self):
        return f"<numba_sim Tape of {len(self.launches)} launches>"


def _warn_without_backward(kernel):
    """Warp's rule for a recorded kernel whose adjoint is disabled (``enable_backward=False``
    on the kernel, else on its module): its warning on stderr, and its adjoint skipped (its
    inputs' gradients stay as they are).  Whether it was skipped."""
    if backward_enabled(kernel):
        return False
    where = "is configured with the option 'enable_backward=False'." \
        if kernel.enable_backward is not None else \
        "is defined in a module with the option 'enable_backward=False' set."
    print(f"Warp UserWarning: Running the tape backwards may produce incorrect gradients "
          f"because recorded kernel {kernel.key} {where}", file=sys.stderr)
    return True


class _RecordedFunction:
    __slots__ = ("backward", "arrays")

    def __init__(self, backward, arrays):
        self.backward, self.arrays = backward, arrays
