"""Import-time checks that fail loudly, with the fix in the message."""

import os


class SetupError(ImportError):
    """numba_sim cannot work with the installed Numba setup."""


def _numba_cuda_implementation():
    """'NVIDIA' when ``numba.cuda`` is numba-cuda, without importing it (it is slow to import)."""
    import sys

    module = sys.modules.get("numba.cuda")
    if module is not None:
        return getattr(module, "implementation", None)
    # numba-cuda installs a meta-path finder (via a .pth file) redirecting numba.cuda to it
    redirected = any(type(f).__name__ == "NumbaCudaFinder" for f in sys.meta_path)
    return "NVIDIA" if redirected else "Numba"


def check_numba_cuda():
    """``numba.cuda`` must be NVIDIA's numba-cuda, not Numba's deprecated copy."""
    implementation = _numba_cuda_implementation()
    if implementation != "NVIDIA":
        raise SetupError(
            "numba_sim needs NVIDIA's numba-cuda package, but numba.cuda is Numba's built-in "
            f"(deprecated) CUDA target (implementation={implementation!r}). Fix: "
            "pip install 'numba-cuda[cu13]' (the cu13 extra brings NVVM/NVRTC/nvJitLink)."
        )


def preload_tbb():
    """Make pip's TBB loadable by Numba; returns the path loaded, or None.

    The ``tbb`` wheel puts ``libtbb.so.12`` in ``<prefix>/lib``, which the dynamic loader
    does not search outside conda, and Numba's ``tbbpool`` asks for it by name only: in a
    virtual environment the TBB layer then fails to load.  Loading the library by its path
    first (with RTLD_GLOBAL) lets the loader find it by name afterwards.
    """
    import ctypes
    import site
    import sys

    if not sys.platform.startswith("linux"):
        return None
    for prefix in (sys.prefix, site.getuserbase(), sys.base_prefix):
        path = os.path.join(prefix, "lib", "libtbb.so.12")
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
            return path
    return None


def thread_safe_layers():
    """Names of Numba's thread-safe threading layers that can load here."""
    available = []
    for name, module in (("tbb", "tbbpool"), ("omp", "omppool")):
        try:
            __import__(f"numba.np.ufunc.{module}")
        except (ImportError, OSError):
            continue
        available.append(name)
    return available


def check_threading_layer():
    """Require a thread-safe threading layer (tbb or omp), never workqueue.

    Numba's workqueue layer aborts the process when two Python threads run
    parallel code at once.  Unless the user chose a layer explicitly, select
    Numba's "threadsafe" choice: tbb (a dependency where it has wheels, made
    loadable by ``preload_tbb``), else omp.  TBB's work stealing lets the
    launching thread take the chunks of a worker that a busy machine has
    descheduled, where OpenMP's static chunks wait for it (issue 21).
    """
    from numba import config

    if os.environ.get("NUMBA_THREADING_LAYER", "default") in ("default", "tbb", "threadsafe",
                                                              "safe"):
        preload_tbb()
    if not thread_safe_layers():
        raise SetupError(
            "numba_sim runs CPU kernels on all cores and needs a thread-safe Numba threading "
            "layer, but only 'workqueue' is available (it aborts when several Python threads "
            "launch parallel code). Fix: pip install tbb, or install the system OpenMP runtime "
            "(libgomp, e.g. apt-get install libgomp1)."
        )
    # Idle GNU OpenMP workers spin for milliseconds after a parallel kernel and take the
    # cores from the native builds that follow (HashGrid): let them sleep instead.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if "NUMBA_THREADING_LAYER" not in os.environ and config.THREADING_LAYER == "default":
        # Numba re-reads its configuration from the environment now and then.
        os.environ["NUMBA_THREADING_LAYER"] = "threadsafe"
        config.THREADING_LAYER = "threadsafe"
    elif config.THREADING_LAYER == "workqueue":
        raise SetupError(
            "NUMBA_THREADING_LAYER is 'workqueue', which is not thread-safe; numba_sim needs "
            "'tbb', 'omp', 'threadsafe' or 'safe'. Fix: unset it or set NUMBA_THREADING_LAYER=omp."
        )


def run_all():
    check_numba_cuda()
    check_threading_layer()
