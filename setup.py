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

if sys.platform == "win32":
    COMPILE_ARGS = ["/std:c++17", "/O2"]
else:
    COMPILE_ARGS = ["-std=c++17", "-O3", "-fvisibility=hidden"]


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
            depends=HEADERS,
            include_dirs=[CUDA_SRC],
            language="c++",
            extra_compile_args=COMPILE_ARGS,
        )
    ],
    cmdclass={"build_py": BuildPyWithCudaSources},
)
