"""Command line: ``python -m numba_sim`` (also installed as ``numba-sim``).

    numba-sim info          versions, threading, CUDA devices, toolkit libraries, cache
    numba-sim cache clear   empty the compilation cache
"""

import argparse
import sys


def _cuda_report():
    lines = []
    try:
        from numba import cuda

        if cuda.is_available():
            for device in cuda.list_devices():
                lines.append(f"  CUDA device {device.id}: {device.name.decode()} "
                             f"(compute capability {device.compute_capability})")
        else:
            lines.append("  CUDA devices: none (no driver or GPU found); CUDA code still compiles "
                         "offline")
    except Exception as e:  # a broken CUDA setup is reported, not fatal
        lines.append(f"  CUDA: unavailable ({e})")
    from numba_sim import native

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
    import numba
    import numpy as np

    import numba_sim
    from numba_sim import cache, native

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
    from numba_sim import native

    try:
        return native.host_library_path()
    except ImportError as e:
        return f"not built ({e})"


def cache_clear():
    from numba_sim import cache, native

    removed = cache.clear()
    print(f"removed {removed} files from {native.cache_dir()}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="numba-sim", description="numba_sim command line")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="versions, threading, CUDA devices and the cache")
    cache_parser = commands.add_parser("cache", help="manage the compilation cache")
    cache_parser.add_argument("action", choices=["clear"])
    args = parser.parse_args(argv)
    if args.command == "info":
        info()
    elif args.command == "cache":
        cache_clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
