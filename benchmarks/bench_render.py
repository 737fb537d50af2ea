"""Rendering benchmark (issue 22): one frame of 100,000 particles, to a PNG-ready image.

numba_sim.raster (projection, z-buffer and discs in compiled code, annotations by Pillow)
against matplotlib's 3D scatter drawn to an Agg canvas (what numba_sim.render used before),
taking turns; medians and the ratio.

    python benchmarks/bench_render.py [--points 100000] [--repeat 5] [--json FILE]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import Table, finish, interleaved_medians, load_average, ms, ratio  # noqa: E402

from numba_sim import raster  # noqa: E402


def matplotlib_frame(points):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(7.2, 5.6), dpi=100)
    axes = figure.add_subplot(projection="3d", computed_zorder=False)
    scatter = axes.scatter(points[:, 0], points[:, 2], points[:, 1], c=points[:, 1], s=1,
                           cmap="viridis", depthshade=False, linewidths=0)
    figure.colorbar(scatter, ax=axes, label="height y")
    axes.set(xlabel="x", ylabel="z", zlabel="y (up)")
    figure.canvas.draw()
    image = np.asarray(figure.canvas.buffer_rgba())[..., :3].copy()
    plt.close(figure)
    return image


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="also write the tables to this file (python -m benchmarks)")
    args = parser.parse_args(argv)
    before = load_average()
    points = np.random.default_rng(0).random((args.points, 3)).astype(np.float32) * [4, 2, 4]
    view = raster.View.fitted(points)
    images = {}
    times = interleaved_medians({
        "raster": lambda: images.__setitem__("raster", view.frame(points, title="particles")),
        "matplotlib": lambda: images.__setitem__("matplotlib", matplotlib_frame(points)),
    }, args.repeat)
    drawn = (images["raster"] != 255).any(axis=2).mean()
    assert drawn > 0.2, "the raster frame is almost empty"
    table = Table(f"one frame of {args.points:,} particles, 720 x 560 pixels",
                  ["renderer", "time per frame", "vs matplotlib"])
    table.add("numba_sim.raster", ms(times["raster"]), ratio(times["matplotlib"],
                                                             times["raster"]))
    table.add("matplotlib 3D scatter (Agg)", ms(times["matplotlib"]), "1.00x")
    table.note(f"{drawn:.0%} of the raster frame's pixels drawn (ground, particles, colour bar)")
    finish([table], args, before)


if __name__ == "__main__":
    main()
