"""Run numba_sim's set-up of a Numba module as soon as that module is imported.

numba_sim does not import numba-cuda itself (half a second of start-up that a
CPU-only program should not pay), nor Numba's inlining modules before a compile needs
them.  A meta-path finder wraps the loader of each such module so that, once the module
has executed, its callback runs (``numba.cuda``: numba_sim's typing and lowering are
installed there; the inlining modules: ``numba_inlining``'s block copier); if the
module is already imported, the callback runs at once.
"""

import importlib.abc
import sys

from numba_sim import registry

_CALLBACKS = {}
"""module name -> the callable run once that module has executed"""


class _InstallAfterImport(importlib.abc.Loader):
    def __init__(self, loader, callback):
        self.loader = loader
        self.callback = callback

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.callback()

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        callback = _CALLBACKS.get(fullname)
        if callback is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and not isinstance(spec.loader, _InstallAfterImport):
                    spec.loader = _InstallAfterImport(spec.loader, callback)
                return spec
        return None


def after_import(name, callback):
    """Run *callback* once module *name* has been imported (now, if it is already)."""
    if name in sys.modules:
        callback()
        return
    _CALLBACKS[name] = callback
    if not any(isinstance(f, _AfterImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImportFinder())


def install():
    after_import("numba.cuda", registry.install_cuda)
