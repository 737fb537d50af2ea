"""CUDA runtime glue: foreign arrays, streams, devices and graph capture.

* Arrays from CuPy, Numba, or anything with ``__cuda_array_interface__`` pass
  zero-copy; DLPack producers (e.g. torch) are imported through CuPy.  They are
  wrapped without synchronizing on their producer's stream: numba_sim launches
  on CuPy's current stream (or the ``stream=`` given), which is the stream the
  producer's work was queued on in the usual single-stream program.
* ``with sim.capture() as graph:`` records launches (and HashGrid builds after
  ``reserve``) on a capturing CuPy stream; ``graph.launch()`` replays them.
"""

import contextlib

from numba_sim import arrays


def as_cuda_array(value):
    """A CUDA array object for *value*, or *value* itself if it is not an array."""
    if hasattr(value, "__cuda_array_interface__") and not hasattr(value, "gpu_data"):
        from numba import cuda

        return cuda.from_cuda_array_interface(value.__cuda_array_interface__, owner=value,
                                              sync=False)
    if arrays.is_dlpack_cuda(value) and not hasattr(value, "__cuda_array_interface__"):
        return arrays.cupy_module().from_dlpack(value)
    return value


def numba_stream(stream):
    """A numba-cuda stream for *stream* (CuPy or Numba stream; None: CuPy's current one)."""
    from numba import cuda

    if stream is None:
        cupy = arrays.cupy_or_none()
        return cuda.external_stream(cupy.cuda.get_current_stream().ptr) if cupy else 0
    if hasattr(stream, "ptr") and not hasattr(stream, "handle"):  # a CuPy stream
        return cuda.external_stream(stream.ptr)
    return stream


def current_stream_function():
    """A function giving the CUstream handle (an int) that launches go on by default:
    CuPy's current stream (the legacy default stream, 0, without CuPy)."""
    cupy = arrays.cupy_or_none()
    if cupy is None:
        return lambda: 0
    current = cupy.cuda.get_current_stream
    return lambda: current().ptr


def stream_handle(stream):
    """The CUstream handle (an int) of *stream* (CuPy or Numba stream, a handle, or None
    for CuPy's current stream), or None for anything else."""
    if stream is None:
        return current_stream_function()()
    if type(stream) is int:
        return stream
    if hasattr(stream, "handle"):  # a Numba stream
        return int(stream.handle)
    ptr = getattr(stream, "ptr", None)  # a CuPy stream
    return ptr if isinstance(ptr, int) else None


def current_device_function():
    """A function giving the ordinal of the calling thread's current CUDA device."""
    cupy = arrays.cupy_or_none()
    if cupy is not None:
        return cupy.cuda.runtime.getDevice
    from numba import cuda

    return lambda: cuda.get_current_device().id


@contextlib.contextmanager
def on_device(ordinal):
    """Make CUDA device *ordinal* current (None: leave the current device)."""
    if ordinal is None:
        yield
        return
    from numba import cuda

    with cuda.gpus[ordinal]:
        yield


class Graph:
    """A captured CUDA graph: ``launch()`` replays the recorded work."""

    def __init__(self):
        self._graph = None

    def launch(self, stream=None):
        if self._graph is None:
            raise RuntimeError("the graph is still being captured; launch it after the "
                               "'with sim.capture()' block")
        if stream is None:
            self._graph.launch()
        else:
            self._graph.launch(stream)


@contextlib.contextmanager
def capture(device="cuda", stream=None):
    """Record the CUDA work issued inside the block into a replayable :class:`Graph`.

    Launches inside go on the capturing stream (CuPy's current stream within
    the block).  Everything recorded must be capturable: kernels already
    compiled or compilable, HashGrid builds after ``reserve`` (no allocation).
    """
    cupy = arrays.cupy_module()
    kind, ordinal = arrays.parse_device(device)
    if kind != "cuda":
        raise ValueError(f"device: graph capture needs a CUDA device, got {device!r}")
    with cupy.cuda.Device(ordinal or 0):
        capturing = stream or cupy.cuda.Stream(non_blocking=True)
        graph = Graph()
        with capturing:
            capturing.begin_capture()
            try:
                yield graph
            finally:
                graph._graph = capturing.end_capture()
