"""numba_sim's own typing and lowering registries, installed into both targets.

Numba keeps typing templates and lowering implementations per target: the CPU
target (``numba.core.registry.cpu_target``) and numba-cuda's target
(``numba.cuda.descriptor.cuda_target``) each have their own contexts.  Every
declaration of numba_sim goes into the two registries below, and
:func:`install` loads whatever is new into both targets' contexts.  It is
idempotent (each context keeps a stream position per registry) and is called
at import and again whenever types are created later (``@sim.struct``).
"""

import sys
import threading

from numba.core import imputils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.typing import templates

from numba_sim import compile_time, ir_rewrites

typing_registry = templates.Registry()
lowering_registry = imputils.Registry("numba_sim")

_install_lock = threading.Lock()


_cuda_installed = False
"""Whether numba_sim is registered in numba-cuda's target (done on first CUDA use)."""


def _targets():
    from numba.core.registry import cpu_target

    if not _cuda_installed:
        return (cpu_target,)
    from numba.cuda.descriptor import cuda_target

    return (cpu_target, cuda_target)


def _builtins_first(target_context):
    """Make sure our registry is not the first lowering registry of a context.

    Numba's ``@intrinsic`` puts its lowering into the *first* registry of the
    target context (``_get_target_registry`` in numba/core/typing/templates.py)
    and relies on a refresh to load it from there.  A context refresh reloads
    the target's builtin registry, never ours, so when numba_sim is imported
    before anything was compiled, the builtin registry must go in first.
    """
    if target_context._registries:
        return
    for cls in type(target_context).__mro__:
        if cls.__name__ == "BaseContext":
            target_context.install_registry(sys.modules[cls.__module__].builtin_registry)
            return


def install_cuda():
    """Register numba_sim in numba-cuda's target too (idempotent).

    numba-cuda takes about half a second to import, so numba_sim does not
    import it: this runs when ``numba.cuda`` gets imported (an import hook),
    from numba-cuda's ``numba_extensions`` entry points, and before numba_sim's
    own CUDA compilations.
    """
    global _cuda_installed
    if _cuda_installed:
        return
    with _install_lock:
        _cuda_installed = True
    ir_rewrites.register_cuda()
    compile_time.install_cuda()
    install()


def install():
    """Load new typing and lowering declarations into the CPU (and CUDA) targets."""
    compile_time.install()
    with _install_lock, global_compiler_lock:
        for target in _targets():
            target.typing_context.install_registry(typing_registry)
            _builtins_first(target.target_context)
            target.target_context.install_registry(lowering_registry)
