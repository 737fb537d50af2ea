"""The frame protocol every viewer follows (newton's): ``set_model(model)`` once, then for
each frame ``begin_frame(time)``, ``log_state(state)``, ``end_frame()``; ``close()`` at the
end (or use the viewer as a context manager)."""

import numpy as np

import numba_sim as sim


class Viewer:
    """A viewer's bookkeeping: the model, the frame count and the order of the calls.

    ``num_frames`` (newton's ``ViewerNull`` argument) makes ``is_running()`` false once that
    many frames have ended (None: never)."""

    def __init__(self, num_frames=None):
        if num_frames is not None and (isinstance(num_frames, bool) or
                                       not isinstance(num_frames, (int, np.integer)) or
                                       num_frames < 1):
            raise ValueError(f"{type(self).__name__}: num_frames must be a positive int or "
                             f"None, got {num_frames!r}")
        self.num_frames = num_frames
        self.model = None
        self.frame_count = 0
        self.time = 0.0
        self._in_frame = False
        self._closed = False

    # -------------------------------------------------------------------- protocol
    def set_model(self, model):
        from numba_sim.physics.model import Model

        self._check_open("set_model")
        if not isinstance(model, Model):
            raise ValueError(f"{type(self).__name__}.set_model: model must be a "
                             f"physics.Model, got {model!r}")
        self.model = model
        self._model_set(model)

    def begin_frame(self, time):
        name = f"{type(self).__name__}.begin_frame"
        self._check_open("begin_frame")
        if self.model is None:
            raise RuntimeError(f"{name}: call set_model(model) first")
        if self._in_frame:
            raise RuntimeError(f"{name}: frame {self.frame_count} has not ended "
                               "(call end_frame())")
        time = float(time)
        if not np.isfinite(time):
            raise ValueError(f"{name}: time must be finite, got {time!r}")
        self.time = time
        self._in_frame = True

    def log_state(self, state):
        from numba_sim.physics.model import State

        name = f"{type(self).__name__}.log_state"
        if not self._in_frame:
            raise RuntimeError(f"{name}: call begin_frame(time) first")
        if not isinstance(state, State):
            raise ValueError(f"{name}: state must be a physics.State, got {state!r}")
        self._log_state(state)

    def end_frame(self):
        if not self._in_frame:
            raise RuntimeError(f"{type(self).__name__}.end_frame: no frame has begun")
        self._frame_ended()
        self._in_frame = False
        self.frame_count += 1

    def is_running(self):
        return not self._closed and (self.num_frames is None or
                                     self.frame_count < self.num_frames)

    def close(self):
        if not self._closed:
            self._closed = True
            self._finish()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _check_open(self, call):
        if self._closed:
            raise RuntimeError(f"{type(self).__name__}.{call}: the viewer is closed")

    # ----------------------------------------------------------- what subclasses do
    def _model_set(self, model):
        pass

    def _log_state(self, state):
        pass

    def _frame_ended(self):
        pass

    def _finish(self):
        pass


def host(array):
    """A NumPy copy of a model or state array (CuPy arrays come to the host)."""
    return np.array(sim.to_numpy(array))


class ViewerNull(Viewer):
    """A viewer that draws nothing (headless runs, tests, benchmarks): it keeps the frame
    count and the last state's time, as newton's ``ViewerNull``."""
