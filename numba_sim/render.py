"""Pictures and animations of particle demos (matplotlib; the ``examples`` extra).

Particles are drawn in 3D, coloured by height, above a grey ground plane at
y = 0 (the simulations use y as "up"; the plot puts it on the vertical axis).
"""

import numpy as np


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("numba_sim: pictures need matplotlib; install it with "
                          "pip install 'numba-sim[examples]'") from None
    return plt


def _limits(positions):
    finite = positions[np.all(np.isfinite(positions), axis=1)]
    if len(finite) == 0:
        finite = np.zeros((1, 3))
    low, high = finite.min(axis=0), finite.max(axis=0)
    center, half = (low + high) / 2, max(float((high - low).max()) / 2, 1e-3) * 1.1
    return center, half


def _draw(axes, positions, title, center, half, point_size):
    axes.clear()
    x, y, z = positions[:, 0], positions[:, 1], positions[:, 2]
    ground = max(half, 1.0)
    gx, gz = np.meshgrid([center[0] - ground, center[0] + ground],
                         [center[2] - ground, center[2] + ground])
    axes.plot_surface(gx, gz, np.zeros_like(gx), color="0.8", alpha=0.6, zorder=0)
    axes.scatter(x, z, y, c=y, cmap="viridis", s=point_size, depthshade=False, linewidths=0,
                 zorder=1)
    axes.set_xlim(center[0] - half, center[0] + half)
    axes.set_ylim(center[2] - half, center[2] + half)
    axes.set_zlim(-0.05 * half, max(center[1] + half, 0.1))
    axes.set_xlabel("x")
    axes.set_ylabel("z")
    axes.set_zlabel("y (up)")
    axes.set_title(title)


def _point_size(count):
    return float(np.clip(30000.0 / max(count, 1), 0.3, 8.0))


def save_picture(positions, path, title=""):
    """A PNG of one frame of particle *positions* ((n, 3) array)."""
    plt = _pyplot()
    positions = np.asarray(positions, dtype=np.float64)
    figure = plt.figure(figsize=(7, 6), dpi=110)
    axes = figure.add_subplot(projection="3d", computed_zorder=False)
    center, half = _limits(positions)
    _draw(axes, positions, title, center, half, _point_size(len(positions)))
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def save_animation(frames, path, title="", fps=15):
    """A GIF of a list of particle position arrays (one per frame)."""
    plt = _pyplot()
    from matplotlib.animation import FuncAnimation, PillowWriter

    frames = [np.asarray(f, dtype=np.float64) for f in frames]
    figure = plt.figure(figsize=(6, 5), dpi=80)
    axes = figure.add_subplot(projection="3d", computed_zorder=False)
    center, half = _limits(np.concatenate(frames))
    size = _point_size(len(frames[0]))

    def update(k):
        _draw(axes, frames[k], f"{title} (frame {k})", center, half, size)

    animation = FuncAnimation(figure, update, frames=len(frames))
    animation.save(path, writer=PillowWriter(fps=fps))
    plt.close(figure)
