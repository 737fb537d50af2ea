"""Register numba_sim in numba-cuda's target as soon as ``numba.cuda`` is imported.

numba_sim does not import numba-cuda itself (half a second of start-up that a
CPU-only program should not pay).  A meta-path finder wraps the loader of
``numba.cuda`` so that, once the module has executed, numba_sim's typing and
lowering are installed there; if it is already imported, this happens at once.
"""

import importlib.abc
import sys

from numba_sim import registry

_TARGET = "numba.cuda"


class _InstallAfterImport(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        registry.install_cuda()

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _NumbaCudaFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != _TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and not isinstance(spec.loader, _InstallAfterImport):
                    spec.loader = _InstallAfterImport(spec.loader)
                return spec
        return None


def install():
    if _TARGET in sys.modules:
        registry.install_cuda()
    elif not any(isinstance(f, _NumbaCudaFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _NumbaCudaFinder())
