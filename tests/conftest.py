"""Shared pytest fixtures, and a private compilation cache for the session."""

import os
import shutil
import tempfile
import types

import pytest
from hypothesis import settings

# The suite compiles into a cache of its own (unless NUMBA_SIM_CACHE_DIR is set), so that
# its result never depends on what earlier runs left in the user's cache.  Loads from a
# warm cache are tested on purpose, by running the same program twice (test_cache.py).
_PRIVATE_CACHE = None
if "NUMBA_SIM_CACHE_DIR" not in os.environ:
    _PRIVATE_CACHE = tempfile.mkdtemp(prefix="numba_sim_test_cache_")
    os.environ["NUMBA_SIM_CACHE_DIR"] = _PRIVATE_CACHE


# Property tests draw the same examples on every run, so that a result never depends on
# luck; `pytest --hypothesis-profile=explore` draws fresh ones to hunt for new failures.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("deterministic")


def pytest_sessionfinish(session, exitstatus):
    if _PRIVATE_CACHE is not None:
        shutil.rmtree(_PRIVATE_CACHE, ignore_errors=True)


class OfflineCuda:
    """Stands in for a CUDA device, so kernels compile and link without a driver.

    numba-cuda asks ``get_current_device()`` for the compute capability when it
    compiles device functions; this object answers with
    :attr:`compute_capability`. :meth:`cubin` compiles a kernel the way
    ``@cuda.jit`` does and links it, through numba-cuda's own linker
    (nvJitLink), into a cubin for a chosen architecture.
    """

    def __init__(self, compute_capability=(7, 5)):
        self.device = types.SimpleNamespace(
            compute_capability=compute_capability, id=0, name=b"numba_sim offline device"
        )

    @property
    def compute_capability(self):
        return self.device.compute_capability

    @compute_capability.setter
    def compute_capability(self, cc):
        self.device.compute_capability = tuple(cc)

    def get_current_device(self):
        return self.device

    def compile(self, pyfunc, argtypes, cc=None, lto=True, debug=False):
        """Lower ``pyfunc`` as a kernel; returns its ``CUDACodeLibrary``."""
        from numba.core import types as nbtypes
        from numba.cuda.compiler import compile_cuda, kernel_fixup

        cc = tuple(cc or self.compute_capability)
        self.compute_capability = cc
        nvvm_options = {"opt": 0 if debug else 3, "fastmath": False}
        if debug:
            nvvm_options["g"] = None
        cres = compile_cuda(
            pyfunc,
            nbtypes.void,
            tuple(argtypes),
            debug=debug,
            nvvm_options=nvvm_options,
            cc=cc,
            lto=lto,
        )
        kernel_fixup(cres.library.get_function(cres.fndesc.llvm_func_name), debug)
        return cres.library

    def cubin(self, pyfunc, argtypes, cc=None, lto=True, debug=False):
        """Compile ``pyfunc`` as a kernel and link it into a cubin (ELF bytes)."""
        library = self.compile(pyfunc, argtypes, cc=cc, lto=lto, debug=debug)
        return bytes(library.get_cubin(cc=tuple(cc or self.compute_capability)).code)


@pytest.fixture
def offline_cuda(monkeypatch):
    """An :class:`OfflineCuda` installed as numba-cuda's current device."""
    numba_cuda = pytest.importorskip("numba.cuda")
    if numba_cuda.config.ENABLE_CUDASIM:
        pytest.skip("compiles real CUDA code; the CUDA simulator is enabled")
    import numba.cuda.api
    import numba.cuda.compiler
    import numba.cuda.dispatcher

    offline = OfflineCuda()
    for module in (numba.cuda, numba.cuda.api, numba.cuda.compiler, numba.cuda.dispatcher):
        monkeypatch.setattr(module, "get_current_device", offline.get_current_device)
    return offline


@pytest.fixture(scope="module")
def private_device_code_cache(tmp_path_factory):
    """Keeps the device code a test module builds out of the user's cache."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("NUMBA_SIM_CACHE_DIR", str(tmp_path_factory.mktemp("numba_sim_cache")))
        yield
