"""Command line: ``python -m numba_sim`` (also installed as ``numba-sim``).

    numba-sim run NAME [--device cpu|cuda] [--frames N] [--out FILE]
                            run a demo (particles, dem, sph, cloth, softbody, pendulum, ant) and
                            write a PNG, a GIF or (the physics demos) a time-sampled USD file
    numba-sim info          versions, threading, CUDA devices, toolkit libraries, cache
    numba-sim cache clear   empty the compilation cache
"""

import argparse
import os
import sys
import time
import typing

import numba
import numpy as np

import numba_sim
from numba_sim import cache, examples, native, render


def _cuda_report():
    lines = []
    try:
        from numba import cuda

        if cuda.is_available():
            for device in cuda.list_devices():
                lines.append(f"  CUDA device {device.id}: {getattr(device.name, 'decode', lambda: device.name)()} "
                             f"(compute capability {device.compute_capability})")
        else:
            lines.append("  CUDA devices: none (no driver or GPU found); CUDA code still compiles "
                         "offline")
    except Exception as e:  # a broken CUDA setup is reported, not fatal
        lines.append(f"  CUDA: unavailable ({e})")
    try:
        lines.append("  NVRTC: %d.%d" % native.nvrtc_version())
    except Exception as e:
        lines.append(f"  NVRTC: not found ({type(e).__name__}: {e})")
    for name, probe in (("nvJitLink", "nvjitlink"), ("NVVM", "nvvm")):
        try:
            module = __import__(f"cuda.bindings.{probe}", fromlist=[probe])
            lines.append(f"  {name}: %d.%d" % tuple(module.version())[:2])
        except Exception as e:
            lines.append(f"  {name}: not found ({type(e).__name__})")
    return lines


@numba.njit(parallel=True)
def _touch_every_thread(n):
    total = 0
    for i in numba.prange(n):
        total += i
    return total


def _threading_layer_in_use():
    """The layer Numba really loaded: it loads one at the first parallel launch, so run one."""
    _touch_every_thread(numba.config.NUMBA_NUM_THREADS * 4)
    return numba.threading_layer()


def info():
    files, size = cache.cache_size()
    lines = [
        f"numba_sim {numba_sim.__version__} (Python {sys.version.split()[0]})",
        f"  numba {numba.__version__}, numpy {np.__version__}",
        f"  threading layer: {_threading_layer_in_use()} in use "
        f"({numba.config.THREADING_LAYER} requested), {numba.config.NUMBA_NUM_THREADS} CPU "
        "threads",
        f"  host library: {_host_library()}",
        *_cuda_report(),
        f"  cache directory: {native.cache_dir()} ({files} files, {size / 1e6:.1f} MB)"
        + ("" if cache.enabled() else " [disabled by NUMBA_SIM_CACHE=0]"),
    ]
    print("\n".join(lines))


def _host_library():
    try:
        return native.host_library_path()
    except ImportError as e:
        return f"not built ({e})"


def cache_clear():
    removed = cache.clear()
    print(f"removed {removed} files from {native.cache_dir()}")


class DemoDefaults(typing.NamedTuple):
    """What ``numba-sim run NAME`` does when it is not told otherwise."""

    frames: int
    extension: str
    options: dict  # keyword arguments of the demo's Example


DEMO_DEFAULTS = {
    "particles": DemoDefaults(120, "gif", {}),
    "dem": DemoDefaults(36, "png", {}),  # finishes within 2 minutes on 2 cores
    # Warp's smoothing length 0.8 makes 62,500 particles at about 3 s a frame; at 2.0 the 4,000
    # particles of the same column collapse across the box in 120 frames (about 15 s on 2 cores).
    "sph": DemoDefaults(120, "gif", {"smoothing_length": 2.0}),
    "cloth": DemoDefaults(90, "png", {}),
    "softbody": DemoDefaults(90, "png", {}),
    "pendulum": DemoDefaults(180, "gif", {}),
    "ant": DemoDefaults(300, "gif", {}),
}
"""Each demo's default frames, output file type and Example options."""

PHYSICS_DEMOS = ("cloth", "softbody", "pendulum", "ant")
"""The demos on ``numba_sim.physics``: they also write USD (``physics.viewer.ViewerUSD``)."""
USD_EXTENSIONS = (".usd", ".usda", ".usdc")


def _default_out(name, frames):
    extension = DEMO_DEFAULTS[name].extension
    return f"{name}.{'png' if frames == 1 else extension}"


def run(name, device, frames, out):
    try:
        from tqdm import tqdm
    except ImportError:
        raise SystemExit("numba-sim run needs tqdm and matplotlib: "
                         "pip install 'numba-sim[examples]'") from None
    example_class = examples.load(name)
    defaults = DEMO_DEFAULTS[name]
    frames = defaults.frames if frames is None else frames
    out = out or _default_out(name, frames)
    animate = out.lower().endswith(".gif")
    start = time.perf_counter()
    example = example_class(device=device, **defaults.options)
    viewer = _physics_viewer(name, out, example_class.title)
    if viewer is not None:  # the physics demos draw (or write) their model through a viewer
        viewer.set_model(example.model)
        _log(viewer, example)
    recorded = [example.positions()] if animate and viewer is None else []
    step_times = []
    for _ in tqdm(range(frames), desc=f"{name} on {device}", unit="frame"):
        frame_start = time.perf_counter()
        example.step()
        if device != "cpu":
            numba_sim.synchronize()
        step_times.append(time.perf_counter() - frame_start)
        if viewer is not None:
            _log(viewer, example)
        elif animate:
            recorded.append(example.positions())
    if viewer is not None:
        viewer.close()
    elif animate:
        render.save_animation(recorded, out, title=example_class.title,
                              triangles=getattr(example, "triangles", lambda: None)())
    else:
        render.save_picture(example.positions(), out,
                            title=f"{example_class.title}, t = {example.sim_time:.2f} s",
                            triangles=getattr(example, "triangles", lambda: None)())
    out = os.path.abspath(out)
    steady = sorted(step_times[1:])[len(step_times[1:]) // 2] if len(step_times) > 1 else step_times[0]
    print(f"{frames} frames in {time.perf_counter() - start:.1f} s (first frame, with compilation: "
          f"{step_times[0]:.2f} s; median frame: {steady:.3f} s); wrote {out}")
    return out


def _physics_viewer(name, out, title):
    """The viewer a physics demo writes *out* with (USD, GIF or PNG); None for the other
    demos, which draw their particles themselves."""
    if name not in PHYSICS_DEMOS:
        return None
    from numba_sim.physics.viewer import ViewerImages, ViewerUSD

    if out.lower().endswith(USD_EXTENSIONS):
        return ViewerUSD(out, fps=60)
    return ViewerImages(out, fps=15, title=title)


def _log(viewer, example):
    """One frame of a physics demo's current state."""
    viewer.begin_frame(example.sim_time)
    viewer.log_state(example.states[0])
    viewer.end_frame()


def _demo_defaults():
    """The ``run --help`` epilog: each demo's default frames and output file."""
    lines = ["demos (default frames, default output):"]
    for name, defaults in DEMO_DEFAULTS.items():
        options = "".join(f", {key}={value}" for key, value in defaults.options.items())
        lines.append(f"  {name:10s} {defaults.frames:4d} frames, "
                     f"{_default_out(name, defaults.frames)}{options}")
    return "\n".join(lines)


def _check_run_arguments(parser, args):
    """A one-line error (argparse's, exit status 2) for each bad ``run`` argument, before
    anything is simulated."""
    try:
        kind, _ = numba_sim.arrays.parse_device(args.device)
    except (TypeError, ValueError):
        parser.error(f"argument --device: expected cpu, cuda or cuda:N, got {args.device!r}")
    if kind == "cuda":
        from numba import cuda

        if not cuda.is_available():
            parser.error(f"argument --device: no CUDA GPU is available (asked for "
                         f"{args.device!r}); use --device cpu")
    if args.frames is not None and args.frames < 1:
        parser.error(f"argument --frames: expected a number of frames >= 1, got {args.frames}")
    if args.out is not None:
        extension = os.path.splitext(args.out)[1].lower()
        if extension in USD_EXTENSIONS and args.name not in PHYSICS_DEMOS:
            parser.error(f"argument --out: USD output is for the physics demos "
                         f"({', '.join(PHYSICS_DEMOS)}); {args.name} writes .png or .gif")
        if extension not in (".png", ".gif") + USD_EXTENSIONS:
            parser.error(f"argument --out: expected a .png, .gif or .usd file, got "
                         f"{args.out!r}")
        directory = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
            parser.error(f"argument --out: cannot write into {directory!r} (no such directory, "
                         "or not writable)")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="numba-sim", description="numba_sim command line")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser(
        "run", help="run a demo and write a picture or animation", epilog=_demo_defaults(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    run_parser.add_argument("name", choices=list(examples.EXAMPLES))
    run_parser.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    run_parser.add_argument("--frames", type=int, default=None,
                            help="frames to simulate (default: the demo's, below)")
    run_parser.add_argument("--out", default=None,
                            help="output file: .png picture, .gif animation or (physics "
                                 "demos) .usd/.usda/.usdc time-sampled USD (default: below)")
    commands.add_parser("info", help="versions, threading, CUDA devices and the cache")
    cache_parser = commands.add_parser("cache", help="manage the compilation cache")
    cache_parser.add_argument("action", choices=["clear"])
    args = parser.parse_args(argv)
    if args.command == "run":
        _check_run_arguments(run_parser, args)
        run(args.name, args.device, args.frames, args.out)
    elif args.command == "info":
        info()
    elif args.command == "cache":
        cache_clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
