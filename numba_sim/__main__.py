"""Command line: ``python -m numba_sim`` (also installed as ``numba-sim``).

    numba-sim run NAME [--device cpu|cuda] [--frames N] [--out FILE]
                            run a demo (particles, dem, sph) and write a PNG or a GIF
    numba-sim info          versions, threading, CUDA devices, toolkit libraries, cache
    numba-sim cache clear   empty the compilation cache
"""

import argparse
import sys
import time

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


def info():
    files, size = cache.cache_size()
    lines = [
        f"numba_sim {numba_sim.__version__} (Python {sys.version.split()[0]})",
        f"  numba {numba.__version__}, numpy {np.__version__}",
        f"  threading layer: {numba.config.THREADING_LAYER} requested, "
        f"{numba.config.NUMBA_NUM_THREADS} CPU threads",
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


DEFAULT_FRAMES = {"particles": 120, "dem": 36, "sph": 2}
"""Frames each demo runs by default (the DEM default finishes within 2 minutes on 2 cores)."""


def run(name, device, frames, out):
    try:
        from tqdm import tqdm
    except ImportError:
        raise SystemExit("numba-sim run needs tqdm and matplotlib: "
                         "pip install 'numba-sim[examples]'") from None
    example_class = examples.load(name)
    frames = DEFAULT_FRAMES.get(name, 10) if frames is None else frames
    out = out or f"{name}.{'gif' if frames > 1 and name == 'particles' else 'png'}"
    animate = out.lower().endswith(".gif")
    start = time.perf_counter()
    example = example_class(device=device)
    recorded = [example.positions()] if animate else []
    step_times = []
    for _ in tqdm(range(frames), desc=f"{name} on {device}", unit="frame"):
        frame_start = time.perf_counter()
        example.step()
        if device != "cpu":
            numba_sim.synchronize()
        step_times.append(time.perf_counter() - frame_start)
        if animate:
            recorded.append(example.positions())
    title = f"{example_class.title}, t = {example.sim_time:.2f} s"
    if animate:
        render.save_animation(recorded, out, title=example_class.title)
    else:
        render.save_picture(example.positions(), out, title=title)
    steady = sorted(step_times[1:])[len(step_times[1:]) // 2] if len(step_times) > 1 else step_times[0]
    print(f"{frames} frames in {time.perf_counter() - start:.1f} s (first frame, with compilation: "
          f"{step_times[0]:.2f} s; median frame: {steady:.3f} s); wrote {out}")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="numba-sim", description="numba_sim command line")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run a demo and write a picture or animation")
    run_parser.add_argument("name", choices=["particles", "dem", "sph"])
    run_parser.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    run_parser.add_argument("--frames", type=int, default=None, help="frames to simulate")
    run_parser.add_argument("--out", default=None, help="output file: .png picture or .gif animation")
    commands.add_parser("info", help="versions, threading, CUDA devices and the cache")
    cache_parser = commands.add_parser("cache", help="manage the compilation cache")
    cache_parser.add_argument("action", choices=["clear"])
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.name, args.device, args.frames, args.out)
    elif args.command == "info":
        info()
    elif args.command == "cache":
        cache_clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
