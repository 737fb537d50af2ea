"""Numba's inlining of ``inline="always"`` functions, made linear in the callee's size.

Kernel bodies are inlined into their launchers and ``@sim.func(inline=True)`` funcs
into their callers by Numba's ``InlineWorker.inline_ir``, which first copies the callee's
IR with ``copy_ir``: one ``copy.deepcopy`` per basic block.  Every block refers to the
function's one ``Scope``, which holds every variable, so each block's copy copies the
whole scope again: the copy costs blocks x variables.  For a large callee that is most of
the compile (measured: Featherstone's step kernel 57 of 74 s, an adjoint kernel of Warp's
matrix tests 10 of 33 s, under cProfile).

The fix shares one memo among the blocks of one ``copy_ir`` call, which is how the IR
was built: the copied blocks share one copied scope and their variables, as the
original blocks share theirs.  Numba's code is unchanged; only the ``copy`` module that
``numba.core.inline_closurecall`` and numba-cuda's twin see is replaced by a stand-in
whose ``deepcopy`` does this for the blocks ``copy_ir`` copies and defers to
:func:`copy.deepcopy` for everything else.  Where a Numba version has no ``copy_ir`` the
stand-in finds none and copies as before.
"""

import copy
import sys
import threading

from numba_sim import _cuda_hook

_INLINING_MODULES = ("numba.core.inline_closurecall", "numba.cuda.core.inline_closurecall")
_COPY_IR = "copy_ir"


def _copy_ir_frame():
    """The frame of Numba's ``copy_ir`` that is copying a block now (its own frame or its
    comprehension's caller), or None."""
    frame = sys._getframe(2)
    for _ in range(2):
        if frame is None:
            return None
        code = frame.f_code
        if code.co_name == _COPY_IR and code.co_filename.endswith("inline_closurecall.py"):
            return frame
        frame = frame.f_back
    return None


class BlockCopier(threading.local):
    """Stands in for the ``copy`` module in Numba's inlining modules (see the module's
    docstring).  The memo is kept with the ``copy_ir`` frame it belongs to: holding the
    frame keeps its id from being reused by a later call while the memo lives."""

    def __init__(self):
        self._frame = None
        self._memo = None

    def __getattr__(self, name):
        return getattr(copy, name)

    def deepcopy(self, x, memo=None, _nil=None):
        if memo is None and type(x).__name__ == "Block":
            frame = _copy_ir_frame()
            if frame is not None:
                if frame is not self._frame:
                    self._frame, self._memo = frame, {}
                return copy.deepcopy(x, self._memo)
        return copy.deepcopy(x, memo)


_COPIER = BlockCopier()


def _patch(name):
    module = sys.modules[name]
    if getattr(module, "copy", None) is copy:
        module.copy = _COPIER


def install():
    """Give Numba's inlining modules (and numba-cuda's) the block copier, once each is
    imported (``_cuda_hook.after_import``: numba_sim imports neither itself)."""
    for name in _INLINING_MODULES:
        _cuda_hook.after_import(name, lambda name=name: _patch(name))
