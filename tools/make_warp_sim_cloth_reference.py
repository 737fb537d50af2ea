"""Reference frames of warp.sim 1.9.1's own cloth example, for tests/test_physics_cloth_example.py.

Runs ``warp/examples/sim/example_cloth.py`` (semi-implicit integrator, the default
64 x 32 grid, 32 substeps a frame, the bunny mesh) on Warp's CPU backend and writes
``tests/data/physics_warp_sim_cloth.npz``: the particle positions after frames
``FRAMES`` for every ``STRIDE``-th particle, with the example's parameters.

warp.sim exists only up to warp-lang 1.9.1, so this runs in a venv of its own
(the example also imports ``pxr``)::

    python3 -m venv /work/venvs/warp191
    /work/venvs/warp191/bin/pip install warp-lang==1.9.1 numpy usd-core
    /work/venvs/warp191/bin/python tools/make_warp_sim_cloth_reference.py

``--no-mesh`` runs the example with and without the bunny and prints, per frame, how far
apart the two runs are: they are bit-identical up to frame 23 (the bunny first touches
the cloth in frame 24), so the frames kept (up to 20) need no mesh shapes, which
numba_sim's physics layer does not have yet.
"""

import argparse
import os

import numpy as np

FRAMES = (1, 2, 4, 8, 12, 16, 20)
STRIDE = 4
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "data",
                   "physics_warp_sim_cloth.npz")


def run(frames, keep_mesh=True):
    import warp as wp
    import warp.sim
    from warp.examples.sim import example_cloth

    wp.config.quiet = True
    wp.init()
    add_shape_mesh = warp.sim.ModelBuilder.add_shape_mesh
    if not keep_mesh:  # the example's only shape is the bunny
        warp.sim.ModelBuilder.add_shape_mesh = lambda builder, *args, **kwargs: None
    try:
        with wp.ScopedDevice("cpu"):
            example = example_cloth.Example(stage_path=None)
    finally:
        warp.sim.ModelBuilder.add_shape_mesh = add_shape_mesh
    positions = {}
    for frame in range(1, max(frames) + 1):
        example.step()
        if frame in frames:
            positions[frame] = example.state_0.particle_q.numpy().copy()
    return example, positions


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-mesh", action="store_true",
                        help="compare with a run without the bunny instead of writing the file")
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    import warp as wp

    if wp.__version__ != "1.9.1":
        raise SystemExit(f"needs warp-lang 1.9.1 (warp.sim), found {wp.__version__}")
    if args.no_mesh:
        frames = tuple(range(1, 41))
        _, with_mesh = run(frames)
        _, without = run(frames, keep_mesh=False)
        for frame in frames:
            print(frame, float(np.abs(with_mesh[frame] - without[frame]).max()))
        return
    example, positions = run(FRAMES)
    model = example.model
    np.savez_compressed(
        args.out,
        frames=np.array(FRAMES, dtype=np.int32),
        stride=np.int32(STRIDE),
        particle_count=np.int32(model.particle_count),
        initial=model.particle_q.numpy()[::STRIDE],
        positions=np.stack([positions[f][::STRIDE] for f in FRAMES]).astype(np.float32),
        substeps=np.int32(example.sim_substeps),
        frame_dt=np.float32(example.frame_dt),
        warp_version=np.array(wp.__version__),
    )
    print(f"wrote {os.path.normpath(args.out)}: frames {FRAMES}, {model.particle_count} particles "
          f"(every {STRIDE}th kept)")


if __name__ == "__main__":
    main()
