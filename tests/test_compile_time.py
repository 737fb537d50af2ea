"""numba_sim/compile_time.py: the paced collector and the inliner's block copy."""

import copy
import gc

import numba
import numpy as np
from numba.core import inline_closurecall, ir
from numba.core.compiler import run_frontend
from numba.extending import intrinsic

import numba_sim as sim
from numba_sim import compile_time


def _shape(value):
    """A structural signature of *value* that also records which of its parts are one object."""
    seen = {}

    def walk(x):
        if isinstance(x, (int, float, str, bool, type(None))):
            return repr(x)
        if id(x) in seen:
            return f"<same as {seen[id(x)]}>"
        seen[id(x)] = len(seen)
        if isinstance(x, dict):
            return "{" + ",".join(f"{walk(k)}:{walk(v)}" for k, v in x.items()) + "}"
        if isinstance(x, (set, frozenset)):
            return type(x).__name__ + str(sorted(map(repr, x)))
        if isinstance(x, (list, tuple)):
            return type(x).__name__ + "[" + ",".join(map(walk, x)) + "]"
        if hasattr(x, "__dict__"):
            return type(x).__name__ + "(" + ",".join(
                f"{k}={walk(v)}" for k, v in x.__dict__.items()) + ")"
        return type(x).__name__ + repr(x)

    return walk(value)


def _branchy(a, b):
    total = 0.0
    for i in range(a):
        if i % 3 == 0:
            total += b
        elif i % 3 == 1:
            total -= i
        else:
            total *= 0.5
    return total


def test_block_copies_are_the_objects_deepcopy_makes():
    blocks = run_frontend(_branchy).blocks
    assert len(blocks) > 4
    for block in blocks.values():
        fast, generic = compile_time.copy_block(block), copy.deepcopy(block)
        assert _shape(fast) == _shape(generic) and fast == generic
        # a scope of its own per block, whose variables are those its statements use
        assert fast.scope is not block.scope
        for var in (v for stmt in fast.body for v in stmt.list_vars()):
            assert var.scope is fast.scope
            assert fast.scope.localvars.get(var.name) is var
        # and nothing of the original was changed or shared mutably
        assert all(new is not old for new, old in zip(fast.body, block.body))


def test_the_inliner_copies_blocks_through_copy_block_and_nothing_else():
    sim.zeros(1)  # numba_sim installed
    shim = inline_closurecall.copy
    assert shim is not copy and shim.deepcopy is not copy.deepcopy
    values = [1, [2, 3], {"a": (4,)}]
    assert shim.deepcopy(values) == values and shim.deepcopy(values) is not values
    assert shim.copy is copy.copy


def test_numba_cudas_inliner_copies_its_own_blocks_the_same_way():
    from numba.cuda.core import inline_closurecall as cuda_inliner
    from numba.cuda.core import ir as cuda_ir

    sim.zeros(1)
    from numba_sim import registry

    registry.install_cuda()
    assert cuda_inliner.copy is inline_closurecall.copy
    loc = cuda_ir.Loc("f.py", 1)
    scope = cuda_ir.Scope(None, loc)
    block = cuda_ir.Block(scope, loc)
    a, b = scope.define("a", loc), scope.define("b", loc)
    block.append(cuda_ir.Assign(a, b, loc))
    fast, generic = cuda_inliner.copy.deepcopy(block), copy.deepcopy(block)
    assert _shape(fast) == _shape(generic) and fast.scope is not scope
    assert fast.body[0].value is fast.scope.localvars.get("a")


def test_inlined_functions_compute_what_they_did():
    @numba.njit(inline="always")
    def inner(a, b):
        return _branchy_jit(a, b) + 1.0

    @numba.njit
    def outer(a, b):
        return inner(a, b) * 2.0

    assert outer(10, 1.5) == (_branchy(10, 1.5) + 1.0) * 2.0


_branchy_jit = numba.njit(_branchy)

_thresholds_seen = []


@intrinsic
def _record_threshold(typingctx, x):
    _thresholds_seen.append(gc.get_threshold())  # runs while the caller compiles
    sig = x(x)

    def codegen(context, builder, signature, args):
        return args[0]

    return sig, codegen


def _thresholds_during_a_compile(value):
    """The collector's thresholds seen while a fresh function compiled (and ran right);
    each call passes a *value* of a type not typed before (Numba caches an intrinsic's
    typing per argument type)."""
    _thresholds_seen.clear()

    @numba.njit
    def uses_intrinsic(x):
        return _record_threshold(x) + 1

    assert uses_intrinsic(value) == value + 1
    assert _thresholds_seen
    return set(_thresholds_seen)


def test_collection_is_paced_only_while_a_compile_runs():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert _thresholds_during_a_compile(np.int64(2)) == {(compile_time.COMPILE_THRESHOLD, 10, 10)}
        assert gc.get_threshold() == (700, 10, 10)
        # a user who disabled automatic collection keeps it disabled, during and after
        gc.set_threshold(0, 10, 10)
        assert _thresholds_during_a_compile(np.float64(2.5)) == {(0, 10, 10)}
        assert gc.get_threshold() == (0, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_a_threshold_the_user_sets_during_a_compile_is_kept():
    before = gc.get_threshold()
    pacing = compile_time.CompileGcPacing(threshold=50_000)
    try:
        gc.set_threshold(700, 10, 10)
        pacing.start()
        pacing.start()  # nested
        assert gc.get_threshold() == (50_000, 10, 10)
        pacing.end()
        assert gc.get_threshold() == (50_000, 10, 10)
        gc.set_threshold(1234, 5, 5)
        pacing.end()
        assert gc.get_threshold() == (1234, 5, 5)
    finally:
        gc.set_threshold(*before)


def test_inlining_counts_scope_copies_per_block():
    """The copy keeps Numba's per-block scopes: each copied block has its own."""
    blocks = run_frontend(_branchy).blocks
    copies = [compile_time.copy_block(b) for b in blocks.values()]
    assert len({id(c.scope) for c in copies}) == len(copies)
    assert all(isinstance(c, ir.Block) for c in copies)


def _dump(blocks):
    lines = []
    for label in sorted(blocks):
        lines.append(f"label {label}:")
        for stmt in blocks[label].body:
            text = str(stmt)
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) \
                    and stmt.value.op == "phi":
                text += f" <- {[str(v) for v in stmt.value.incoming_values]}"
                text += f" {stmt.value.incoming_blocks}"
            lines.append("  " + text)
    return "\n".join(lines)


def _loops_and_breaks(a):
    y = 0
    for i in range(len(a)):
        y = y + a[i]
        if y > 5:
            break
        y = y * 2
    else:
        y = -1
    return y


@sim.kernel
def _reassigning_kernel(a: sim.array(dtype=float), b: sim.array(dtype=float)):
    i = sim.tid()
    v = a[i]
    acc = float(0.0)
    for j in range(4):
        if v > 0.0:
            acc = acc + v * float(j)
        else:
            acc = acc - v
        v = v * 0.5
    b[i] = acc


def test_ssa_reconstruction_gives_numbas_ir_exactly():
    import importlib.util

    from numba_sim.autodiff.adjoint_kernel import adjoint_kernel

    spec = importlib.util.find_spec("numba.core.ssa")
    numbas = importlib.util.module_from_spec(spec)  # Numba's own, not the installed one
    spec.loader.exec_module(numbas)
    functions = [_branchy, _loops_and_breaks, _reassigning_kernel.body_for("release"),
                 adjoint_kernel(_reassigning_kernel).body_for("release")]
    for fn in functions:
        reference = numbas._run_ssa(run_frontend(fn).blocks)
        ours = compile_time._ssa_runner(numbas)(run_frontend(fn).blocks)
        assert _dump(ours) == _dump(reference), fn.__name__
        assert any(isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                   and s.value.op == "phi" for b in ours.values() for s in b.body)
    from numba.core import ssa

    assert getattr(ssa._run_ssa, "__numba_sim__", False)  # what Numba's compiles call


def _statements(fn):
    return [stmt for block in run_frontend(fn).blocks.values() for stmt in block.body]


def test_listing_variables_gives_numbas_lists(monkeypatch):
    from numba_sim.autodiff.adjoint_kernel import adjoint_kernel

    sim.zeros(1)
    fast = ir.Inst._rec_list_vars
    assert getattr(fast, "__numba_sim__", False)
    functions = [_branchy, _loops_and_breaks, adjoint_kernel(_reassigning_kernel).body_for("release")]
    statements = [stmt for fn in functions for stmt in _statements(fn)]
    ours = [stmt.list_vars() for stmt in statements]
    monkeypatch.setattr(ir.Inst, "_rec_list_vars", fast.__wrapped__)
    numbas = [stmt.list_vars() for stmt in statements]
    assert sum(map(len, numbas)) > 100
    assert [list(map(id, v)) for v in ours] == [list(map(id, v)) for v in numbas]
    # values the walk meets: nested lists, tuples and dicts, and things that hold no variable
    loc = ir.Loc("f.py", 1)
    scope = ir.Scope(None, loc)
    a, b, c = (scope.define(name, loc) for name in "abc")
    nested = ir.Expr.build_tuple([a, b], loc)
    value = {"x": [a, (b, {"k": c})], "y": 3, "z": nested, "w": None}
    monkeypatch.setattr(ir.Inst, "_rec_list_vars", fast)
    assert fast(nested, value) == fast.__wrapped__(nested, value) == [a, b, c, a, b]


def test_variables_compare_as_numba_compares_them():
    sim.zeros(1)
    generic = ir.Var.__eq__.__wrapped__
    one, other = ir.Loc("f.py", 1), ir.Loc("g.py", 9)
    s1, s2 = ir.Scope(None, one), ir.Scope(None, other)
    pairs = [(ir.Var(s1, "a", one), ir.Var(s2, "a", other)),   # equal: scope and place ignored
             (ir.Var(s1, "a", one), ir.Var(s1, "b", one)),     # different names
             (ir.Var(s1, "a", one), ir.Const(1, one)),         # different types
             (ir.Var(s1, "a", one), "a")]
    tagged = ir.Var(s1, "a", one)
    tagged.extra = 1  # an attribute of its own: compared as the generic mixin compares
    pairs += [(tagged, ir.Var(s1, "a", one)), (tagged, tagged)]
    results = [(x == y, generic(x, y)) for x, y in pairs]
    assert [fast for fast, _ in results] == [slow for _, slow in results]
    assert [fast for fast, _ in results] == [True, False, False, False, False, True]


def test_values_without_references_get_no_meminfo_walk():
    from llvmlite import ir as llvm_ir
    from numba.core import types
    from numba.core.registry import cpu_target
    from numba.core.runtime.context import NRTContext

    sim.zeros(1)
    # a context of its own: the target's base context would cache a disabled NRTContext
    # (``nrt`` is a cached property, made with the context's enable_nrt, False there), which
    # every later compile of this process would inherit through ``subtarget``
    context = cpu_target.target_context.subtarget(enable_nrt=True)
    array = types.float32[:]
    plain = [types.float32, numba.typeof(sim.vec3()), numba.typeof(sim.mat33()),
             types.UniTuple(types.int64, 3)]
    counted = [array, types.Tuple([types.float64, array, array]), types.Optional(array),
               types.ListType(types.int64)]
    assert [compile_time._holds_meminfo(context, t) for t in plain + counted] == \
        [False] * len(plain) + [True] * len(counted)
    assert getattr(NRTContext.get_meminfos, "__numba_sim__", False)
    # what is found is what Numba's walk finds, and nothing is emitted for the rest
    module = llvm_ir.Module()
    function = llvm_ir.Function(module, llvm_ir.FunctionType(llvm_ir.VoidType(), []), "f")
    builder = llvm_ir.IRBuilder(function.append_basic_block())
    for fe_type in plain + counted:
        value = llvm_ir.Constant(context.get_value_type(fe_type), llvm_ir.Undefined)
        before = len(builder.block.instructions)
        ours = context.nrt.get_meminfos(builder, fe_type, value)
        emitted = len(builder.block.instructions) - before
        numbas = NRTContext.get_meminfos.__wrapped__(context.nrt, builder, fe_type, value)
        assert [t for t, _ in ours] == [t for t, _ in numbas]
        assert (emitted == 0) == (fe_type in plain)
    assert len(context.nrt.get_meminfos(builder, counted[1], llvm_ir.Constant(
        context.get_value_type(counted[1]), llvm_ir.Undefined))) == 2
    assert "nrt" not in vars(cpu_target.target_context)


def test_compiles_after_the_meminfo_test_still_reference_count():
    @numba.njit
    def total(n):
        return np.ones(n).sum()

    assert total(4) == 4.0
