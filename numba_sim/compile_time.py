"""Costs of Numba's compiler that grow faster than the code compiled, made linear, and
three of its generic helpers made cheap.

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

Three helpers that every pass calls, given faster code with the same results:

- **Listing an instruction's variables** (``Inst._rec_list_vars``, behind every
  ``list_vars()``: use-def analysis, dead-code removal, SSA) walks the instruction's
  attributes with an ``isinstance`` chain and a new list per level.  The replacement
  (:func:`_list_vars_method`) walks them in the same order into one list, classifying each attribute's type once.
- **Comparing variables** (``Var.__eq__``, e.g. phi stripping's search for a variable's
  last assignment, once per phi input and statement) builds two filtered copies of both
  variables' attribute dicts; for a variable with only its usual attributes (scope, name,
  location) that is a comparison of the names, which :func:`_var_eq` does directly.
- **Finding the reference-counted parts of a value** (``NRTContext.get_meminfos``, at
  every incref and decref the lowering emits) emits an ``extractvalue`` for every member
  of every struct, also for a ``vec3`` or a ``mat33`` that holds no reference at all
  (dead code for LLVM to delete).  It now returns at once for a type that holds none
  (:func:`_holds_meminfo`, decided once per type).

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
from numba.core.runtime.context import NRTContext

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


def _list_vars_method(ir_module):
    """``Inst._rec_list_vars`` for *ir_module* (Numba's IR or numba-cuda's): the variables in
    a value, in the order of the original's recursion (variables, instructions' own
    ``list_vars()``, lists and tuples, dicts' values; anything else holds none)."""
    var_types = getattr(ir_module, "var_types", ir_module.Var)
    inst_types = getattr(ir_module, "inst_types", ir_module.Inst)
    kinds = {}

    def kind_of(kind_type, value):
        if isinstance(value, var_types):
            kind = 0
        elif isinstance(value, inst_types):
            kind = 1
        elif isinstance(value, (list, tuple)):
            kind = 2
        elif isinstance(value, dict):
            kind = 3
        else:
            kind = 4
        kinds[kind_type] = kind
        return kind

    def collect(value, out):
        kind = kinds.get(type(value))
        if kind is None:
            kind = kind_of(type(value), value)
        if kind == 0:
            out.append(value)
        elif kind == 1:
            out.extend(value.list_vars())
        elif kind == 2:
            for item in value:
                collect(item, out)
        elif kind == 3:
            for item in value.values():
                collect(item, out)

    def _rec_list_vars(self, value):
        out = []
        collect(value, out)
        return out

    _rec_list_vars.__numba_sim__ = True
    return _rec_list_vars


_VAR_FIELDS = frozenset(("scope", "name", "loc"))


def _var_eq_method(generic_eq):
    def _var_eq(self, other):
        """``EqualityCheckMixin.__eq__`` (equal attributes but for scope and location):
        for two variables of one type with only the usual attributes, equal names."""
        if type(self) is type(other):
            mine, theirs = self.__dict__, other.__dict__
            if mine.keys() == _VAR_FIELDS and theirs.keys() == _VAR_FIELDS:
                return mine["name"] == theirs["name"]
        return generic_eq(self, other)

    _var_eq.__numba_sim__ = True
    _var_eq.__wrapped__ = generic_eq
    return _var_eq


def _use_fast_ir_helpers(ir_module):
    original = ir_module.Inst._rec_list_vars
    if not getattr(original, "__numba_sim__", False):
        ir_module.Inst._rec_list_vars = _list_vars_method(ir_module)
        ir_module.Inst._rec_list_vars.__wrapped__ = original
    if not getattr(ir_module.Var.__eq__, "__numba_sim__", False):
        ir_module.Var.__eq__ = _var_eq_method(ir_module.Var.__eq__)


def _holds_meminfo(context, fe_type, _visiting=()):
    """Whether a value of *fe_type* holds a reference-counted part: what
    ``get_meminfos`` would find, decided from the data models once per type."""
    manager = context.data_model_manager
    cache = manager.__dict__.setdefault("_numba_sim_holds_meminfo", {})
    held = cache.get(fe_type)
    if held is None:
        if fe_type in _visiting:  # a type that contains itself: Numba's own walk decides
            return True
        model = manager[fe_type]
        held = model.has_nrt_meminfo() or any(
            _holds_meminfo(context, member, _visiting + (fe_type,))
            for member, _ in model.traverse(None))
        cache[fe_type] = held
    return held


def _use_meminfo_shortcut(nrt_context_class):
    original = nrt_context_class.get_meminfos
    if getattr(original, "__numba_sim__", False):
        return

    def get_meminfos(self, builder, ty, val):
        """``NRTContext.get_meminfos``; no instructions for a value that holds none."""
        if not _holds_meminfo(self._context, ty):
            return []
        return original(self, builder, ty, val)

    get_meminfos.__numba_sim__ = True
    get_meminfos.__wrapped__ = original
    nrt_context_class.get_meminfos = get_meminfos


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
        _use_fast_ir_helpers(ir)
        _use_meminfo_shortcut(NRTContext)


def install_cuda():
    """Does the same for numba-cuda's compiles and its own inliner (idempotent)."""
    from numba.cuda.core import event as cuda_event
    from numba.cuda.core import inline_closurecall as cuda_inliner
    from numba.cuda.core import ir as cuda_ir
    from numba.cuda.core import ssa as cuda_ssa
    from numba.cuda.memory_management.nrt_context import NRTContext as CudaNRTContext

    if cuda_event not in _installed:
        PACING.listen_to(cuda_event, "numba-cuda:run_pass")
        _installed.append(cuda_event)
        _use_copy_block(cuda_inliner, cuda_ir)
        _use_run_ssa(cuda_ssa)
        _use_fast_ir_helpers(cuda_ir)
        _use_meminfo_shortcut(CudaNRTContext)
