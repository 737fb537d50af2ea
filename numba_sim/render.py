"""Pictures and animations of the demos: PNG and GIF files drawn by numba_sim/raster.py.

Particles are drawn as discs, and a cloth or soft body as its triangles, coloured by height
above a grey ground plane at y = 0 (the simulations use y as "up"), with a colour bar and
the axis directions. An animation keeps one camera for all its frames and shows its
progress while it draws.
"""

import numpy as np

from numba_sim import raster


def save_picture(positions, path, title="", triangles=None):
    """A PNG of particle *positions* ((n, 3)) and, with *triangles* ((m, 3) indices), of the
    surface they make."""
    positions = np.asarray(positions)
    raster.save_png(raster.View.fitted(positions).frame(positions, triangles, title), path)


def save_animation(frames, path, title="", fps=15, triangles=None, progress=True):
    """A GIF of a list of particle position arrays (one per frame, each its own copy)."""
    frames = [np.asarray(f) for f in frames]
    view = raster.View.fitted(*frames)
    numbered = enumerate(frames)
    if progress:
        try:
            from tqdm import tqdm

            numbered = tqdm(numbered, total=len(frames), desc="drawing", unit="frame")
        except ImportError:
            pass
    images = [view.frame(f, triangles, f"{title} (frame {k})") for k, f in numbered]
    raster.save_gif(images, path, fps=fps)
