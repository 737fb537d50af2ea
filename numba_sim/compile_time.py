"""Three costs of Numba's compiler that grow faster than the code compiled, made linear.

Measured on the Warp suite's adjoint kernels (``python -m cProfile -m pytest -p no:xdist
tests/warp_suite/test_mat.py -k "float32_cpu and (inverse or svd_float32)"``):

- **Garbage collection.**  A compile allocates millions of short-lived IR objects (variables,
  statements, their copies when a function is inlined).  With CPython's default threshold (a
  young collection every 700 net allocations) the collector runs thousands of times per
  compile of a large kernel, and every older-generation collection walks every live object
  of the process: about a sixth of the compile's CPU time.  While a compile runs, the young
  generation's threshold is raised to :data:`COMPILE_THRESHOLD` (:class:`CompileGcPacing`);
  it is put back when the outermost compile ends, so code between compiles collects as the
  user configured.  Garbage is still collected, only less often.
- **Copying the IR of an inlined function.**  Numba inlines a kernel's body into its launcher
  (``inline="always"``), and ``InlineWorker.inline_ir`` (numba/core/inline_closurecall.py)
  deep-copies the callee one block at a time.  Each block's copy starts from a fresh memo,
  so it copies the function's whole ``Scope`` again, every variable of the function through
  ``copy.deepcopy``'s generic machinery: blocks x variables copies (327,610 variables for a
  180-block adjoint body), a third of that compile.  :func:`copy_block` makes exactly the
  same copy (a scope of its own for each block, whose variables are the ones the block's
  statements use, as ``deepcopy`` leaves them) but builds the scope's variables directly and
  lets ``deepcopy`` copy the rest.  Only the copies that ``copy_ir`` asks for are made this
  way: the inliner module's ``copy`` (Numba's, and numba-cuda's copy of the inliner) is
  replaced by :data:`_COPY_FOR_INLINING`, which forwards every other use to the standard
  module.
- **SSA reconstruction.**  ``numba.core.ssa._run_ssa`` fixes one variable assigned more
  than once at a time, and for each it rewrites every block of the function, statement by
  statement, although only the blocks that assign or use that variable change: variables
  x statements (4 million block-pass steps for the rigid-body adjoint kernels of
  tests/test_physics_rigid_autodiff.py, 16 s of their 71 s compile).  :func:`run_ssa` does
  the same steps in the same order on the blocks that mention the variable (an index made
  once: fixing one variable renames only it) and keeps the others as they are.

Numba's CPU dispatcher broadcasts a ``"numba:compile"`` event around each compile;
numba-cuda's kernels broadcast none, only ``"numba-cuda:run_pass"`` around each compiler
pass (from numba-cuda's own copy of the event module).  One :class:`CompileGcPacing` counts
the nested events of both (a kernel compiles its funcs inside its own compile).
"""

import copy
import gc
import threading
import types

from numba.core import event as numba_event
from numba.core import inline_closurecall, ir
from numba.core import ssa as numba_ssa

COMPILE_THRESHOLD = 100_000
"""The young generation's collection threshold while a Numba compile runs."""


class CompileGcPacing:
    """Raises the young generation's threshold from the start of the outermost compile to
    its end (compiles nest, and may run in several threads: the count is shared)."""

    def __init__(self, threshold=COMPILE_THRESHOLD):
        self.threshold = threshold
        self._lock = threading.Lock()
        self._depth = 0
        self._saved = None

    def start(self):
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._saved = gc.get_threshold()
                young, *older = self._saved
                if young:  # 0: the user disabled automatic collection; leave it so
                    gc.set_threshold(max(young, self.threshold), *older)

    def end(self):
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._saved is not None:
                if gc.get_threshold()[0] == max(self._saved[0], self.threshold):
                    gc.set_threshold(*self._saved)  # unless the user changed it meanwhile
                self._saved = None

    def listen_to(self, event_module, kind):
        """Registers a listener of *event_module*'s compile events, *kind* (Numba's and
        numba-cuda's event modules each check for their own ``Listener`` class)."""
        pacing = self

        class Listener(event_module.Listener):
            def on_start(self, event):
                pacing.start()

            def on_end(self, event):
                pacing.end()

        event_module.register(kind, Listener())


_BLOCKS = {ir.Block}
"""The IR block classes whose copies :func:`copy_block` makes: Numba's, and numba-cuda's
own copy of the IR once it is imported."""
_SCOPES = {ir.Scope}
_VARS = {ir.Var}


def _copy_scope(scope, memo):
    """``copy.deepcopy(scope, memo)``, with the variables defined in *scope* built directly."""
    new = type(scope).__new__(type(scope))
    memo[id(scope)] = new
    localvars = type(scope.localvars).__new__(type(scope.localvars))
    memo[id(scope.localvars)] = localvars
    variables = {}
    for name, var in scope.localvars._con.items():
        if type(var) in _VARS and var.scope is scope:
            # Var.__deepcopy__: the copied scope, the same name and location
            copied = type(var).__new__(type(var))
            copied.scope, copied.name, copied.loc = new, var.name, var.loc
            memo[id(var)] = copied
        else:
            copied = copy.deepcopy(var, memo)
        variables[name] = copied
    localvars._con = variables
    for key, value in scope.__dict__.items():  # in their order, as deepcopy sets them
        setattr(new, key, localvars if key == "localvars" else copy.deepcopy(value, memo))
    return new


def copy_block(block):
    """``copy.deepcopy(block)``, the same objects made faster (module docstring)."""
    memo = {}
    if type(block.scope) in _SCOPES:
        _copy_scope(block.scope, memo)
    return copy.deepcopy(block, memo)


def _deepcopy_for_inlining(value, memo=None, _nil=[]):
    if memo is None and type(value) in _BLOCKS:
        return copy_block(value)
    return copy.deepcopy(value, memo, _nil)


_COPY_FOR_INLINING = types.SimpleNamespace(
    **{name: getattr(copy, name) for name in dir(copy) if not name.startswith("__")})
_COPY_FOR_INLINING.deepcopy = _deepcopy_for_inlining


def _use_copy_block(inliner_module, ir_module):
    """Gives *inliner_module*'s ``copy_ir`` :func:`copy_block` for *ir_module*'s blocks."""
    _BLOCKS.add(ir_module.Block)
    _SCOPES.add(ir_module.Scope)
    _VARS.add(ir_module.Var)
    if inliner_module.copy is copy:
        inliner_module.copy = _COPY_FOR_INLINING


def _ssa_runner(ssa):
    """:func:`run_ssa` for *ssa*, Numba's SSA module or numba-cuda's copy of it."""

    def run_ssa(blocks):
        """``ssa._run_ssa(blocks)``: the same result (module docstring)."""
        if not blocks:
            return {}
        cfg = ssa.compute_cfg_from_blocks(blocks)
        df_plus = ssa._iterated_domfronts(cfg)
        violators = ssa._find_defs_violators(blocks, cfg)
        cache_list_vars = ssa._CacheListVars()
        labels_of = {name: set() for name in violators}
        for label, block in blocks.items():
            for stmt in block.body:
                target = getattr(stmt, "target", None)
                names = [v.name for v in cache_list_vars.get(stmt)]
                if target is not None and hasattr(target, "name"):
                    names.append(target.name)
                for name in names:
                    if name in labels_of:
                        labels_of[name].add(label)
        # private blocks: the ones no variable changes are passed on as they are
        blocks = {label: _copy_of(ssa, block) for label, block in blocks.items()}
        for varname in violators:
            labels = labels_of[varname]
            states = ssa._make_states(blocks)
            states["varname"] = varname
            states["defmap"] = defmap = ssa.defaultdict(list)
            blocks = _rewrite(ssa, blocks, states, ssa._FreshVarHandler(), labels)
            states = ssa._make_states(blocks)
            states["varname"] = varname
            states["defmap"] = defmap
            states["phimap"] = phimap = ssa.defaultdict(list)
            states["cfg"] = cfg
            states["phi_locations"] = ssa._compute_phi_locations(df_plus, defmap)
            blocks = _rewrite(ssa, blocks, states, ssa._FixSSAVars(cache_list_vars), labels)
            for label, philist in phimap.items():
                blocks[label].body = philist + blocks[label].body
        if ssa.compute_cfg_from_blocks(blocks) != cfg:
            raise ssa.errors.CompilerError("CFG mutated in SSA pass")
        return blocks

    return run_ssa


def _copy_of(ssa, block):
    new = ssa.ir.Block(scope=block.scope, loc=block.loc)
    new.body = list(block.body)
    return new


def _rewrite(ssa, blocks, states, handler, labels):
    """``ssa._run_block_rewrite`` of the blocks in *labels*; the others are kept."""
    new_blocks = {}
    for label, block in blocks.items():
        if label in labels:
            new = ssa.ir.Block(scope=block.scope, loc=block.loc)
            states["label"] = label
            states["block"] = block
            new.body = list(ssa._run_ssa_block_pass(states, block, handler))
            block = new
        new_blocks[label] = block
    return new_blocks


def _use_run_ssa(ssa):
    if not getattr(ssa._run_ssa, "__numba_sim__", False):
        ssa._run_ssa = _ssa_runner(ssa)
        ssa._run_ssa.__numba_sim__ = True


PACING = CompileGcPacing()
_installed = []


def install():
    """Paces collection during the CPU target's compiles (:data:`PACING`), gives Numba's
    inliner :func:`copy_block` and its SSA pass :func:`run_ssa` (idempotent); numba-cuda's
    copies are handled when it is imported (:func:`install_cuda`)."""
    if numba_event not in _installed:
        PACING.listen_to(numba_event, "numba:compile")
        _installed.append(numba_event)
        _use_copy_block(inline_closurecall, ir)
        _use_run_ssa(numba_ssa)


def install_cuda():
    """Does the same for numba-cuda's compiles and its own inliner (idempotent)."""
    from numba.cuda.core import event as cuda_event
    from numba.cuda.core import inline_closurecall as cuda_inliner
    from numba.cuda.core import ir as cuda_ir
    from numba.cuda.core import ssa as cuda_ssa

    if cuda_event not in _installed:
        PACING.listen_to(cuda_event, "numba-cuda:run_pass")
        _installed.append(cuda_event)
        _use_copy_block(cuda_inliner, cuda_ir)
        _use_run_ssa(cuda_ssa)
