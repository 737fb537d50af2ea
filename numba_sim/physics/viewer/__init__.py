"""Viewers of a simulation, newton's shape: ``viewer.set_model(model)``, then per frame
``viewer.begin_frame(t)``, ``viewer.log_state(state)``, ``viewer.end_frame()``, and
``viewer.close()``.

* ``ViewerNull()``: draws nothing (headless runs);
* ``ViewerUSD(path, fps=60)``: a time-sampled USD file (``usd-core``);
* ``ViewerImages(path)``: a GIF, or PNG pictures, by numba_sim's raster renderer.
"""

from numba_sim.physics.viewer.base import Viewer, ViewerNull
from numba_sim.physics.viewer.images import ViewerImages
from numba_sim.physics.viewer.usd import ViewerUSD

__all__ = ["Viewer", "ViewerImages", "ViewerNull", "ViewerUSD"]
