"""The launcher's hook into autodiff: the tapes recording now, and the interception of a
launch while one records or of an ``adjoint=True`` launch.

``numba_sim.launcher.launch`` reads :data:`tapes` on every launch, so that a launch with no
tape active costs one list test; the rest is imported when first needed.
"""

tapes = []
"""The ``sim.Tape`` s inside whose ``with`` block the launches run, innermost last."""


def intercept(kernel, dim, inputs, outputs, device, stream, record_cmd, adjoint, adj_inputs,
              adj_outputs):
    """``sim.launch`` with ``adjoint=True`` (the adjoint launch) or while a tape records."""
    from numba_sim import launcher
    from numba_sim.autodiff import adjoint_launch

    if adjoint:
        if record_cmd:
            raise TypeError("record_cmd: adjoint launches are not recorded as commands; "
                            "launch them with record_cmd=False")
        return adjoint_launch.launch_adjoint(kernel, dim, inputs, outputs, adj_inputs,
                                             adj_outputs, device=device, stream=stream)
    if adj_inputs is not None or adj_outputs is not None:
        raise TypeError("adj_inputs / adj_outputs: given without adjoint=True")
    if record_cmd:  # a recorded command runs later, perhaps many times: not on the tape
        return launcher.launch_forward(kernel, dim, inputs, outputs, device, stream, record_cmd)
    tape = tapes[-1]
    tape.record_launch(kernel, dim, inputs, outputs, device, stream)
    launcher.launch_forward(kernel, dim, inputs, outputs, device, stream)
