"""``ViewerImages``: pictures of a simulation drawn by numba_sim's raster renderer
(numba_sim/raster.py, the demos' renderer): a GIF of every frame, or PNGs (the last frame,
or one per frame when the path holds ``{frame}``).

Bodies are drawn as their shapes' surfaces, cloth and soft bodies as their triangles,
other particles as discs; y is up in the picture, so a z-up (or x-up) model is turned
onto y first."""

import os

import numpy as np

from numba_sim import raster
from numba_sim.physics.viewer.base import Viewer, host
from numba_sim.physics.viewer.shapes import BodyGeometry, particle_surface


def to_y_up(up_axis):
    """The rotation matrix taking the model's up axis to y (right-handed)."""
    if up_axis == 1:
        return np.eye(3)
    if up_axis == 2:  # (x, y, z) -> (x, z, -y)
        return np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    return np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # x -> y


class ViewerImages(Viewer):
    """Draw the frames into *path*: ``.gif`` (all frames, *fps*), ``.png`` (the last frame
    at ``close()``), or a ``.png`` path with ``{frame}`` (e.g. ``out/frame_{frame:04d}.png``:
    one picture per frame).  The camera is fitted to the first frame logged, grown to hold
    later ones for a GIF."""

    def __init__(self, path, fps=30, title="", num_frames=None):
        super().__init__(num_frames)
        path = os.fspath(path)
        extension = os.path.splitext(path)[1].lower()
        if extension not in (".png", ".gif"):
            raise ValueError(f"ViewerImages: path must end in .png or .gif, got {path!r}")
        self.per_frame = "{frame" in path
        if self.per_frame and extension != ".png":
            raise ValueError(f"ViewerImages: a {{frame}} pattern needs a .png path, got {path!r}")
        directory = os.path.dirname(os.path.abspath(path.split("{", 1)[0] or "."))
        if not os.path.isdir(directory):
            raise ValueError(f"ViewerImages: cannot write {path!r}: no directory {directory!r}")
        fps = float(fps)
        if not fps > 0.0:
            raise ValueError(f"ViewerImages: fps must be > 0, got {fps!r}")
        self.path, self.fps, self.title = path, fps, title
        self.gif = extension == ".gif"
        self._scenes = []  # (vertices, discs) per frame for a GIF; the last one for a PNG
        self.written = []

    def _model_set(self, model):
        self._rotation = to_y_up(model.up_axis)
        self._bodies = BodyGeometry(model, host)
        self._surface = particle_surface(model, host)
        count = model.particle_count
        on_surface = np.zeros(count, dtype=bool)
        if self._surface is not None:
            on_surface[np.unique(self._surface)] = True
        self._loose = np.flatnonzero(~on_surface)
        particles = self._surface if self._surface is not None else np.zeros((0, 3), np.int64)
        self._triangles = np.concatenate([particles, self._bodies.triangles + count])

    def _log_state(self, state):
        particles = host(state.particle_q).reshape(-1, 3).astype(np.float64)
        bodies = self._bodies.world(host(state.body_q)) if len(self._bodies.local) else \
            np.zeros((0, 3))
        vertices = np.concatenate([particles, bodies]) @ self._rotation.T
        discs = particles[self._loose] @ self._rotation.T
        scene = (vertices, discs)
        if self.gif:
            self._scenes.append(scene)
        else:
            self._scenes = [scene]

    def _frame_ended(self):
        if self.per_frame and self._scenes:
            path = self.path.format(frame=self.frame_count)
            raster.save_png(self._draw(self._scenes[-1], self._view([self._scenes[-1]]),
                                       self.frame_count), path)
            self.written.append(path)

    def _view(self, scenes):
        """A camera on everything above the ground (what is below it is hidden by it: a
        static sphere half in the ground does not stretch the colour scale)."""
        sets = [np.column_stack([s[:, 0], np.maximum(s[:, 1], 0.0), s[:, 2]])
                for scene in scenes for s in scene if len(s)]
        return raster.View.fitted(*sets) if sets else raster.View.fitted(np.zeros((1, 3)))

    def _draw(self, scene, view, frame):
        vertices, discs = scene
        title = f"{self.title} (frame {frame})" if self.title else f"frame {frame}"
        triangles = self._triangles if len(self._triangles) else None
        return view.frame(vertices if triangles is not None else None, triangles, title,
                          discs=discs if triangles is not None else vertices)

    def _finish(self):
        if not self._scenes or self.per_frame:
            return
        view = self._view(self._scenes)
        if self.gif:
            first = self.frame_count - len(self._scenes)
            images = [self._draw(scene, view, first + k) for k, scene in enumerate(self._scenes)]
            raster.save_gif(images, self.path, fps=self.fps)
        else:
            raster.save_png(self._draw(self._scenes[-1], view, self.frame_count - 1), self.path)
        self.written.append(self.path)
