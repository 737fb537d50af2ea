"""Build of numba_sim's host library; the package metadata is in setup.cfg.

``cuda_src/*.cpp`` compile (C++17, -O3) into the extension module
``numba_sim._native``, whose ``extern "C"`` entry points numba_sim's CPU
target calls by name (see numba_sim/native.py). The sources are also copied
into the package as ``numba_sim/_cuda_src`` so that an installed numba_sim can
compile them for CUDA with NVRTC at first use.
"""

import glob
import os
import shutil
import sys

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA_SRC = "cuda_src"
SOURCES = sorted(glob.glob(os.path.join(CUDA_SRC, "*.cpp")))
HEADERS = sorted(glob.glob(os.path.join(CUDA_SRC, "*.h")))

EXPORTS_MAP = os.path.join(CUDA_SRC, "host_exports.map")

if sys.platform == "win32":
    COMPILE_ARGS = ["/std:c++17", "/O2"]
else:
    COMPILE_ARGS = ["-std=c++17", "-O3", "-fvisibility=hidden"]
# Export PyInit__native and sim_* only: the library is loaded with RTLD_GLOBAL, and a
# toolchain that links the C++ runtime statically would otherwise export all of it.
LINK_ARGS = [f"-Wl,--version-script={EXPORTS_MAP}"] if sys.platform.startswith("linux") else []


class BuildPyWithCudaSources(build_py):
    """build_py that also installs cuda_src/ as package data numba_sim/_cuda_src."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "numba_sim", "_cuda_src")
        os.makedirs(target, exist_ok=True)
        for path in SOURCES + HEADERS:
            shutil.copy2(os.path.join(HERE, path), target)


setup(
    ext_modules=[
        Extension(
            "numba_sim._native",
            sources=SOURCES,
            depends=HEADERS + [EXPORTS_MAP],
            include_dirs=[CUDA_SRC],
            language="c++",
            extra_compile_args=COMPILE_ARGS,
            extra_link_args=LINK_ARGS,
            libraries=["dl"] if sys.platform.startswith("linux") else [],  # dlopen of libcuda
        )
    ],
    cmdclass={"build_py": BuildPyWithCudaSources},
)
