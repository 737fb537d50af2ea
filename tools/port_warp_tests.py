"""Port the installed warp-lang's own unit tests to numba_sim (issue 17's instrument).

    python tools/port_warp_tests.py            # (re)write tests/warp_suite/ and its manifest
    python tools/port_warp_tests.py --report   # run the ported suite, write the table into
                                               # docs/warp-compatibility.md
    python tools/port_warp_tests.py --check    # is tests/warp_suite/ what this script writes?

What it reads: ``warp/tests/test_*.py`` at the top level and in ``geometry/`` and
``matrix/``, and the helper modules they import (``geometry/utils.py``,
``matrix/utils.py``; ``unittest_utils.py`` is replaced by
``tests/warp_suite/_warp_compat.py``).  What it writes: ``tests/warp_suite/test_<name>.py``
(never edited by hand: rerun this script), ``tests/warp_suite/_<dir>_utils.py`` and
``tests/warp_suite/manifest.json`` (per file: the rewrites applied and how often, the
cases, the out-of-scope cases and their reasons; the files left out and why).

Everything decided here is a fixed list in this file:
- ``REWRITES``: the textual rewrites, in order (``METHOD_REWRITES`` first, on the
  syntax tree's positions, then the line rewrites);
- ``LEFT_OUT``: files left out entirely, with the reason;
- ``OUT_OF_SCOPE_MARKERS``: what makes a case out of scope (fp16/bf16, tiles),
  matched against the source of the code the case uses (the test
  function and, transitively, every module-level definition it names);
- ``OUT_OF_SCOPE_CASES``: cases out of scope by name, with the reason.
A case is never judged by numba_sim's behaviour or error text.

The cases of a file are the test methods Warp itself registers on this machine
(its module imported with Warp, in a subprocess) plus, for each ``get_test_devices()``
case, its CUDA twin (the ported suite registers it and skips it without a GPU).
"""

import argparse
import ast
import collections
import json
import os
import re
import subprocess
import sys
import time
import tokenize
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "warp_suite"
MANIFEST = OUT / "manifest.json"
KNOWN_FAILURES = OUT / "known_failures.json"
DOC = REPO / "docs" / "warp-compatibility.md"
SUBDIRS = ("", "geometry", "matrix")
HELPERS = {"geometry/utils.py": "_geometry_utils", "matrix/utils.py": "_matrix_utils"}
"""Helper modules, ported under these names; Warp's auxiliary modules (``aux_*.py``,
imported by some tests) are ported under their own names."""


def warp_tests_dir():
    import warp

    return Path(warp.__file__).resolve().parent / "tests"


# --------------------------------------------------------------------------
# Files left out entirely (relative to warp/tests), with the reason

_INTERNALS = "tests Warp's internals ({}), which numba_sim does not have"
LEFT_OUT = {
    "test_allocation_tracker.py": _INTERNALS.format("its memory allocation tracker"),
    "test_allocator.py": _INTERNALS.format("its device allocators"),
    "test_apic.py": _INTERNALS.format("APIC, its CPU graph capture and replay format"),
    "test_apic_load_from_bytes.py": _INTERNALS.format("APIC graph serialization"),
    "test_apic_mesh.py": _INTERNALS.format("APIC graph serialization of meshes"),
    "test_apic_utility_algorithms.py": _INTERNALS.format("APIC graph capture of warp.utils"),
    "test_array_subclass.py": _INTERNALS.format("subclassing its wp.array container"),
    "test_block_dim_dispatch.py": _INTERNALS.format("CUDA block-dimension module variants"),
    "test_codegen_instancing.py": _INTERNALS.format("module instancing of generated code"),
    "test_compilation.py": _INTERNALS.format("its C++/CUDA compilation pipeline"),
    "test_context.py": _INTERNALS.format("its runtime context"),
    "test_core_library_binary.py": _INTERNALS.format("its native core library binary"),
    "test_cpu_block_codegen.py": _INTERNALS.format("CPU block code generation"),
    "test_cpu_block_dim.py": _INTERNALS.format("CPU block dimensions"),
    "test_cpu_precompiled_headers.py": _INTERNALS.format("precompiled C++ headers"),
    "test_cpu_vectorization.py": _INTERNALS.format("C++ vectorization of CPU kernels"),
    "test_ctypes.py": _INTERNALS.format("the ctypes layout of its C++ types"),
    "test_cuda_profiler.py": "CUDA-only profiler (ScopedCudaProfiler); no CPU case",
    "test_diagnostics.py": _INTERNALS.format("C++ compiler diagnostics"),
    "test_examples.py": "runs Warp's own example scripts (USD, OpenGL, warp.sim)",
    "test_external_build.py": _INTERNALS.format("building its native library"),
    "test_fabricarray.py": "Warp's Omniverse Fabric array containers (wp.fabricarray)",
    "test_fsai.py": "warp.optim's FSAI preconditioner (a library written on warp.sparse)",
    "test_implicit_init.py": _INTERNALS.format("lazy runtime initialization"),
    "test_import.py": _INTERNALS.format("its import of submodules"),
    "test_indexedarray.py": "Warp's indexed-array container (wp.indexedarray)",
    "test_kernel_cache.py": _INTERNALS.format("its kernel cache directory"),
    "test_linear_solvers.py": "warp.optim.linear (a library written on warp.sparse)",
    "test_logger.py": _INTERNALS.format("its logger"),
    "test_module_contamination.py": _INTERNALS.format("module hashing across files"),
    "test_module_hashing.py": _INTERNALS.format("module content hashes"),
    "test_module_parallel_load.py": _INTERNALS.format("parallel module loading"),
    "test_module_variants.py": _INTERNALS.format("module option variants"),
    "test_modules_lite.py": _INTERNALS.format("its own module list"),
    "test_reload.py": _INTERNALS.format("module reloading"),
    "test_render_opengl.py": "warp.render's OpenGL renderer",
    "test_runlength_encode.py": "warp.utils.runlength_encode (a library written in Warp)",
    "test_array_reduce.py": "warp.utils.array_sum / array_inner (a library written in Warp)",
    "test_coloring.py": "warp's graph coloring library (C++ in Warp's core)",
    "test_snippet.py": "wp.func_native: CUDA C++ snippets inside kernels",
    "test_sparse.py": "warp.sparse (a library written in Warp)",
    "test_transient_module.py": _INTERNALS.format("transient modules"),
    "test_unique_module.py": _INTERNALS.format('module="unique" module naming'),
    "test_utils.py": "warp.utils' library functions (scan, radix sort, ...)",
    "test_version.py": _INTERNALS.format("its version string"),
    "test_template_launch_bounds.py": _INTERNALS.format("CUDA launch-bounds templates"),
    "test_cuda_graph_capture.py": "CUDA-only",
    "geometry/test_marching_cubes.py": "wp.MarchingCubes (not in numba_sim)",
    "geometry/test_sparse_marching_cubes.py": "warp.geometry's sparse marching cubes",
    "geometry/test_surface_nets.py": "warp.geometry's surface nets",
    "geometry/test_swept_volume.py": "warp.geometry's swept volumes",
    "geometry/test_delaunay.py": "warp.geometry's Delaunay triangulation",
    "geometry/test_volume.py": "wp.Volume (NanoVDB volumes)",
    "geometry/test_volume_validation.py": "wp.Volume (NanoVDB volumes)",
    "geometry/test_volume_write.py": "wp.Volume (NanoVDB volumes)",
}

# --------------------------------------------------------------------------
# Out of scope: fp16/bf16 and tiles (issue 17), decided by what a case uses

OUT_OF_SCOPE_MARKERS = (
    (re.compile(r"\bbfloat16\b|\bbf16\b"), "bf16"),
    (re.compile(r"\bfloat16\b|\bhalf\b|\b(vec[234]|mat(22|33|44)|quat|transform|"
                r"spatial_vector|spatial_matrix)h\b|\bfp16\b|np\.float16"), "fp16"),
    (re.compile(r"\btile(_\w+)?\s*\(|\buntile\b|\blaunch_tiled\b|\bTile\w*\b|\btile\b"),
     "tiles"),
)
"""Autodiff was out of scope until numba_sim had it (issue 24); its cases count now."""

OUT_OF_SCOPE_CASES = {
    # (file, case without device suffix) -> reason
    # a case named by a dtype is fp16 by its name only (_BY_NAME_WHEN_TYPED), but these cast
    # to and from float16 whatever their dtype (their kernels cast_float16, cast_float32...)
    ("test_vec_constructors.py", "test_casting_constructors_float32"): "fp16",
    ("test_vec_constructors.py", "test_casting_constructors_float64"): "fp16",
    ("test_quat.py", "test_casting_constructors_float32"): "fp16",
    ("test_quat.py", "test_casting_constructors_float64"): "fp16",
}

OUT_OF_SCOPE_FILES = {
    # every case of these files, whatever its name
    "test_bf16.py": "bf16",
    "test_fp16.py": "fp16",
}

# --------------------------------------------------------------------------
# The rewrites, in order

METHOD_REWRITES = {
    # Warp array method -> (number of arguments, replacement template)
    "numpy": (0, "sim.to_numpy({0})"),
    "to": (1, "wpc.to_device({0}, {1})"),
    "zero_": (0, "wpc.zero_({0})"),
    "fill_": (1, "wpc.fill_({0}, {1})"),
    "assign": (1, "wpc.assign({0}, {1})"),
    "list": (0, "wpc.list_({0})"),
    "numpy_dtype": (0, "{0}.numpy_dtype"),  # a struct's NumPy dtype: numba_sim's attribute
}

ATTRIBUTE_REWRITES = {
    # Warp array property -> replacement template (host code only: never inside a
    # @wp.kernel / @wp.func / @wp.struct ..., where ``s.grad`` is a struct's field)
    "is_contiguous": "wpc.is_contiguous({0})",
    "grad": "wpc.grad({0})",                 # a.grad -> its gradient beside it, or None
    "gradients": "wpc.tape_gradients({0})",  # tape.gradients[a] -> a mapping by array
    "requires_grad": "wpc.has_grad({0})",    # a.requires_grad -> whether it has a gradient
    "_is_read": "wpc.is_read({0})",          # a._is_read -> its read mark, kept beside it
}

DTYPE_ATTRIBUTE_REWRITES = {
    # ``X.dtype.<attribute>`` (Warp's value type of an array's elements) -> replacement
    # template: numba_sim's array of vectors / matrices keeps its elements' dims trailing,
    # and Warp's attribute exists only on a matrix (``_shape_``) or vector (``_length_``) type
    "_shape_": "wpc.element_shape({0})",    # a.dtype._shape_ -> the trailing two dims
    "_length_": "wpc.element_length({0})",  # a.dtype._length_ -> the trailing dim
}

ATTRIBUTE_STORE_REWRITES = {
    # ``X.<property> = value`` (one target) -> replacement template
    "grad": "sim.requires_grad({0}, grad={1})",
    "requires_grad": "wpc.set_requires_grad({0}, {1})",
    "_is_read": "wpc.set_is_read({0}, {1})",
}

ATTRIBUTE_AUGMENTED_REWRITES = {
    # ``X.<property> op= value`` -> replacement template ({op}: the operator, as written)
    "grad": "wpc.grad({0})[...] {op}= {1}",  # a.grad *= 2: in place on the gradient beside it
}

KERNEL_DECORATORS = ("kernel", "func", "func_grad", "func_replay", "func_native", "struct")
"""Decorators of kernel-language code: the attribute rewrites stay out of their bodies."""

HOST_NAMES = (
    "Kernel", "clone", "dtype_from_numpy", "dtype_to_numpy", "empty_like", "full_like",
    "get_cuda_device_count", "get_cuda_devices", "get_devices", "init", "is_cpu_available",
    "is_cuda_available", "ones_like", "synchronize_device",
)  # the same list as tests/warp_suite/_warp_compat.py's HOST_NAMES (checked on port)

OUT_OF_SCOPE_TYPES = ("float16", "bfloat16", "half") + tuple(
    f"{composite}h" for composite in ("vec2", "vec3", "vec4", "mat22", "mat33", "mat44", "quat",
                                      "transform", "spatial_vector", "spatial_matrix"))
"""Warp's scalar types that are out of scope (fp16, bf16) and its composites of float16:
Warp's tests name them at module level (a loop over every dtype registers one case per
type), so they become placeholders (_warp_compat.py's ``out_of_scope_type``, which rejects
a name it does not list)."""

REWRITES = (
    ("unittest_utils", r"\bwarp\.tests\.unittest_utils\b", "warp_suite._warp_compat",
     "Warp's test helpers -> the host compatibility module"),
    ("helper_modules", r"\bwarp\.tests\.(geometry|matrix)\.utils\b", r"warp_suite._\1_utils",
     "Warp's geometry/matrix test helpers -> their ported copies"),
    ("warp_test_modules", r"\bwarp\.tests\.(\w+)\b", r"warp_suite.\1",
     "warp.tests.<module> (auxiliary modules, other test files) -> its ported copy"),
    ("warp_test_package_imports", r"^([ \t]*)from warp\.tests import\b", r"\1from warp_suite import",
     "from warp.tests import <module> -> from warp_suite import <its ported copy>"),
    ("import_warp_as_wp", r"^([ \t]*)import warp as wp\b.*$",
     r"\1import numba_sim as sim\n\1from warp_suite import _warp_compat as wpc",
     "import warp as wp -> import numba_sim as sim (+ the compat module as wpc)"),
    ("import_warp", r"^([ \t]*)import warp$", r"\1import numba_sim as sim",
     "import warp -> import numba_sim as sim"),
    ("import_warp_as_other", r"^([ \t]*)import warp as (?!wp\b)(\w+)[ \t]*$",
     r"\1import numba_sim as \2",
     "import warp as <other name> -> import numba_sim as <that name> (its uses keep the name)"),
    ("out_of_scope_types", r"\b(?:wp|warp)\.(?:types\.)?(" + "|".join(OUT_OF_SCOPE_TYPES) + r")\b",
     r"wpc.out_of_scope_type('\1')",
     "wp.float16, wp.bfloat16, wp.vec3h, ... -> a compat placeholder (out of scope: fp16, "
     "bf16) that fails, naming it, only when used as a type"),
    ("warp_submodule_uses", r"\b(?:wp|warp)\.(_src|optim|examples|sparse|fem|render|utils|"
     r"autograd|sim|jax_experimental)\b",
     r"wpc.warp_module('\1')",
     "wp.<Warp submodule> -> a compat placeholder that fails, naming it, when used"),
    ("wp_types", r"\b(?:wp|warp)\.types\.", "sim.types.",
     "wp.types.X -> sim.types.X (Warp's type factories vector, matrix, ...: numba_sim.types)"),
    ("host_names", r"\b(?:wp|warp)\.(" + "|".join(HOST_NAMES) + r")\b", r"wpc.\1",
     "wp.<host function numba_sim spells differently> -> wpc.<it> (compat module)"),
    ("flat_assets", r'os\.path\.dirname\(__file__\), "\.\.", "assets"',
     'os.path.dirname(__file__), "assets"',
     "a geometry/ or matrix/ file's ../assets -> assets (the ported suite is flat)"),
    ("wp", r"\bwp\b", "sim", "wp -> sim (every other name)"),
    ("warp_dot", r"\bwarp\.(?!tests\b)(?=[A-Za-z_])", "sim.", "warp.X -> sim.X"),
)


# --------------------------------------------------------------------------
# Rewriting


def _line_offsets(data):
    offsets, pos = [0], 0
    for line in data.splitlines(keepends=True):
        pos += len(line)
        offsets.append(pos)
    return offsets


_WALKS = {}


def _walk(node):
    """``ast.walk(node)`` as a list, kept per node: the generator walks the same statements
    and definitions again for every case and every pass.  The entry holds the node, so its
    id cannot be reused while it is kept; ``generate`` and ``rewrite_methods`` clear it."""
    entry = _WALKS.get(id(node))
    if entry is None:
        entry = _WALKS[id(node)] = (node, list(ast.walk(node)))
    return entry[1]


def _module_receiver(node):
    """Whether *node* is Warp's, NumPy's or numba_sim's module (its functions of these
    names are not array methods)."""
    return isinstance(node, ast.Name) and node.id in ("wp", "np", "warp", "sim")


def _kernel_code(tree):
    """The ids of the nodes inside kernel-language definitions (functions and classes
    decorated ``@wp.kernel``, ``@wp.func``, ``@wp.struct``, ...)."""
    inside = set()
    for node in _walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = target.attr if isinstance(target, ast.Attribute) else \
                    getattr(target, "id", None)
                if name in KERNEL_DECORATORS:
                    inside.update(id(n) for n in _walk(node))
                    break
    return inside


_AUGMENTED_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _method_calls(tree):
    """(node, rewrite key, template, receiver, arguments) of each array method call and
    property to rewrite."""
    called = set()
    kernel_code = _kernel_code(tree)
    for node in _walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Attribute) \
                and node.targets[0].attr in ATTRIBUTE_STORE_REWRITES \
                and id(node) not in kernel_code \
                and not _module_receiver(node.targets[0].value):
            target = node.targets[0]
            yield (node, f"attribute_{target.attr}_store", ATTRIBUTE_STORE_REWRITES[target.attr],
                   target.value, [node.value])
    for node in _walk(tree):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute) \
                and node.target.attr in ATTRIBUTE_AUGMENTED_REWRITES \
                and id(node) not in kernel_code and not _module_receiver(node.target.value):
            operator_text = _AUGMENTED_OPERATORS.get(type(node.op))
            if operator_text is not None:
                template = ATTRIBUTE_AUGMENTED_REWRITES[node.target.attr].replace(
                    "{op}", operator_text)
                yield (node, f"attribute_{node.target.attr}_augmented", template,
                       node.target.value, [node.value])
    for node in _walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            called.add(id(node.func))
            if node.func.attr in METHOD_REWRITES and not node.keywords \
                    and len(node.args) == METHOD_REWRITES[node.func.attr][0] \
                    and not any(isinstance(a, ast.Starred) for a in node.args) \
                    and not _module_receiver(node.func.value):
                yield (node, f"method_{node.func.attr}", METHOD_REWRITES[node.func.attr][1],
                       node.func.value, node.args)
    for node in _walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "backward" and id(node) not in kernel_code:
            for keyword in node.keywords:
                if keyword.arg == "grads" and isinstance(keyword.value, ast.Dict) \
                        and keyword.value.keys and None not in keyword.value.keys:
                    entries = keyword.value
                    parts = [p for pair in zip(entries.keys, entries.values) for p in pair]
                    template = "[" + ", ".join(f"({{{2 * i}}}, {{{2 * i + 1}}})"
                                               for i in range(len(entries.keys))) + "]"
                    yield (entries, "backward_grads_pairs", template, parts[0], parts[1:])
    for node in _walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in DTYPE_ATTRIBUTE_REWRITES \
                and isinstance(node.ctx, ast.Load) and id(node) not in kernel_code \
                and isinstance(node.value, ast.Attribute) and node.value.attr == "dtype" \
                and not _module_receiver(node.value.value):
            yield (node, f"dtype_attribute{node.attr}", DTYPE_ATTRIBUTE_REWRITES[node.attr],
                   node.value.value, [])
    for node in _walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ATTRIBUTE_REWRITES \
                and isinstance(node.ctx, ast.Load) and id(node) not in called \
                and id(node) not in kernel_code and not _module_receiver(node.value):
            yield (node, f"attribute_{node.attr}", ATTRIBUTE_REWRITES[node.attr], node.value, [])


def rewrite_methods(source, counts):
    """Warp array methods and properties -> compat calls, by the syntax tree's positions
    (innermost first)."""
    data = source.encode()
    while True:
        _WALKS.clear()
        tree = ast.parse(data)
        calls = list(_method_calls(tree))
        if not calls:
            return data.decode()
        offsets = _line_offsets(data)

        def span(node):
            return (offsets[node.lineno - 1] + node.col_offset,
                    offsets[node.end_lineno - 1] + node.end_col_offset)

        spans = [(span(c[0]), c) for c in calls]
        # innermost: no other matching call inside its span
        inner = [(s, c) for s, c in spans
                 if not any(o is not c and s[0] <= t[0] and t[1] <= s[1] and t != s
                            for t, o in spans)]
        for (start, end), (_, key, template, receiver, arguments) in sorted(
                inner, key=lambda x: -x[0][0]):
            def text(node):
                a, b = span(node)
                return data[a:b].decode()
            replacement = template.format(text(receiver), *(text(a) for a in arguments))
            counts[key] += 1
            data = data[:start] + replacement.encode() + data[end:]


def _warp_module(name):
    return name is not None and (name == "warp" or name.startswith("warp.")) \
        and not name.startswith("warp.tests")


def rewrite_imports(source, counts):
    """Imports of Warp's own submodules (``warp._src...``, ``warp.optim``, ``warp.examples``)
    -> placeholders from the compat module that fail, naming the Warp module, when a case
    uses them (so that the cases that do not use them still run)."""
    data = source.encode()
    offsets = _line_offsets(data)
    edits = []
    for node in ast.walk(ast.parse(data)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _warp_module(node.module) \
                and node.module != "warp":
            targets = [a.asname or a.name for a in node.names]
            names = ", ".join(repr(a.name) for a in node.names)
            text = (f"{', '.join(targets)}{',' if len(targets) == 1 else ''} = "
                    f"wpc.warp_internal({node.module!r}, {names})")
            counts["warp_submodule_imports"] += 1
        elif isinstance(node, ast.Import) and any(_warp_module(a.name) and a.name != "warp"
                                                  for a in node.names):
            if len(node.names) != 1:
                raise SystemExit(f"unexpected import form: {ast.unparse(node)}")
            alias = node.names[0]
            if alias.asname:
                text = f"{alias.asname} = wpc.warp_internal({alias.name!r})"
            else:  # import warp.x: its uses are warp.x.<name>, rewritten to wpc.warp.x
                text = "pass  # port_warp_tests: a Warp submodule; its uses -> wpc.warp_module"
            counts["warp_submodule_imports"] += 1
        else:
            continue
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        edits.append((start, end, text))
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text.encode() + data[end:]
    return data.decode()


def _first_line(stmt):
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])


def _string_continuation_lines(source):
    """The line numbers inside a multi-line string literal (after its first line): their
    text is the string's, so they are never re-indented."""
    lines = source.splitlines(keepends=True)
    inside = set()
    for tok in tokenize.generate_tokens(iter(lines).__next__):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
    return inside


GUARD = "try:  # tools/port_warp_tests.py: if this fails, only the cases that use it fail\n"
ON_FAILURE = {
    "definition": "except Exception as _error:\n    {name} = wpc.failed_definition({name!r}, _error)\n",
    "registration": "except Exception as _error:\n    wpc.failed_registration({cls}, {name}, "
                    "{devices}, _error)\n",
}


def replace_definitions(source, dropped, guarded, counts):
    """Rewrite 0 on the module-level definitions: those only out-of-scope cases use ->
    placeholders (defining them may already need the out-of-scope feature: a ``vec3h``
    annotation, a tile builtin); the *guarded* ones (statement, what to do on failure) ->
    ``try: <statement> except: <placeholder that raises the error when a case uses it>``."""
    lines = source.splitlines(keepends=True)
    in_strings = _string_continuation_lines(source)
    edits = [(_first_line(stmt), stmt, reason) for stmt, reason in dropped] \
        + [(_first_line(stmt), stmt, on_failure) for stmt, on_failure in guarded]
    for first, stmt, what in sorted(edits, key=lambda e: -e[0]):
        if isinstance(what, str):
            name = _defined_name(stmt)
            new = [f"{name} = wpc.out_of_scope_definition({name!r}, {what!r})  # "
                   f"tools/port_warp_tests.py: used only by out-of-scope cases\n"]
            counts["out_of_scope_definitions"] += 1
        else:
            kind, fields = what
            body = [line if number in in_strings or not line.strip() else "    " + line
                    for number, line in enumerate(lines[first - 1:stmt.end_lineno], first)]
            body[-1] = body[-1] if body[-1].endswith("\n") else body[-1] + "\n"
            new = [GUARD, *body, ON_FAILURE[kind].format(**fields)]
            counts[f"guarded_{kind}s"] += 1
        lines[first - 1:stmt.end_lineno] = new
    return "".join(lines)


def rewrite_source(source, dropped=(), guarded=()):
    counts = collections.Counter()
    source = replace_definitions(source, dropped, guarded, counts)
    source = rewrite_imports(source, counts)
    source = rewrite_methods(source, counts)
    source, strings = _protect_strings(source, counts)
    for key, pattern, replacement, _ in REWRITES:
        source, n = re.subn(pattern, replacement, source, flags=re.MULTILINE)
        if n:
            counts[key] += n
    source = re.sub(r"\x00(\d+)\x00", lambda m: strings[int(m.group(1))], source)
    return source, dict(sorted(counts.items()))


def _string_annotations(source, lines, offsets):
    """The (start, end) offsets of the string annotations of *source*'s functions
    (``def f(a: "wp.array(dtype=T)") -> "wp.vec3":``): they are code that Python evaluates,
    so the line rewrites apply inside them."""
    spans = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = node.args
        annotations = [a.annotation for a in arguments.posonlyargs + arguments.args
                       + arguments.kwonlyargs + [arguments.vararg, arguments.kwarg]
                       if a is not None] + [node.returns]
        for annotation in annotations:
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                spans.add((_offset(lines, offsets, annotation.lineno, annotation.col_offset),
                           _offset(lines, offsets, annotation.end_lineno,
                                   annotation.end_col_offset)))
    return spans


def _offset(lines, offsets, lineno, byte_column):
    """The character offset in the source of an AST position (its column counts UTF-8
    bytes)."""
    line = lines[lineno - 1]
    return offsets[lineno - 1] + len(line.encode()[:byte_column].decode())


ASSET_DIR_STRINGS = re.compile(r'("\.\.")\s*,\s*("assets")')
"""A geometry/ or matrix/ file's path to Warp's test assets (``"..", "assets"``): code that
the rewrite ``flat_assets`` changes, so its strings are not protected."""

MODULE_PATH_STRING = re.compile(r"""(["'])warp\.tests\.\w+\1""")
"""A string literal that is the path of one of Warp's test modules (``importlib.import_module(
"warp.tests.aux_test_unresolved_func")``, ``sys.modules[...]``): it names a module as code
does, so the line rewrites apply inside it (its ported copy)."""


PYTHON_SOURCE_STRING = re.compile(r"^[ \t]*import warp(?: as wp)?[ \t]*$", re.MULTILINE)
"""A string literal that is the source of a Python module that imports Warp (a template that
a test writes to a file and imports or runs: a multi-line string with a line ``import warp``
or ``import warp as wp``): it is code, so it gets the line rewrites (`rewrite_code_string`).
A one-line string with ``\\n`` escapes is not recognized (it stays as Warp wrote it)."""

INTERNAL_IMPORT_LINE = re.compile(
    r"^([ \t]*)from (warp\.(?!tests\b)[\w.]+) import ([\w, ]+?)[ \t]*$", re.MULTILINE)


def _internal_import_line(match):
    """``from warp._src import context`` in a module source string -> rewrite 0's form."""
    indent, module, names = match.groups()
    aliases = [n.split(" as ") for n in (n.strip() for n in names.split(","))]
    targets = [a[-1].strip() for a in aliases]
    quoted = ", ".join(repr(a[0].strip()) for a in aliases)
    return (f"{indent}{', '.join(targets)}{',' if len(targets) == 1 else ''} = "
            f"wpc.warp_internal({module!r}, {quoted})")


WPC_IMPORT = re.compile(r"^[ \t]*from warp_suite import _warp_compat as wpc\n", re.MULTILINE)


def rewrite_code_string(text, counts):
    """The line rewrites applied to a string literal that is a Python module's source
    (`PYTHON_SOURCE_STRING`); the compat module's import that rewrite 4 adds is dropped where
    the rewritten source does not use it (a test may run the source in a subprocess, which
    cannot import ``warp_suite``).  Its one-line imports of Warp's own submodules get rewrite
    0's placeholders (`rewrite_imports`, which works on the file's syntax tree)."""
    imports = []  # the placeholder lines, kept from the line rewrites (they name Warp modules)

    def placeholder(match):
        imports.append(_internal_import_line(match))
        return f"\x01{len(imports) - 1}\x01"

    text = INTERNAL_IMPORT_LINE.sub(placeholder, text)
    for key, pattern, replacement, _ in REWRITES:
        text, n = re.subn(pattern, replacement, text, flags=re.MULTILINE)
        if n:
            counts[key] += n
    text = re.sub(r"\x01(\d+)\x01", lambda m: imports[int(m.group(1))], text)
    if not re.search(r"\bwpc\.", text):
        text = WPC_IMPORT.sub("", text)
    counts["python_source_strings"] += 1
    return text


def _protect_strings(source, counts=None):
    """*source* with every string literal replaced by a numbered placeholder (the line
    rewrites apply to code only: messages and docstrings keep Warp's names), except the
    string annotations of functions, which are code (`_string_annotations`), and the paths
    of Warp's test modules (`MODULE_PATH_STRING`). A string literal that is a Python
    module's source importing Warp (`PYTHON_SOURCE_STRING`) is protected rewritten
    (`rewrite_code_string`)."""
    counts = collections.Counter() if counts is None else counts
    lines = source.splitlines(keepends=True)
    offsets = _line_offsets(source)
    annotations = _string_annotations(source, lines, offsets)
    spans = [(offsets[tok.start[0] - 1] + tok.start[1], offsets[tok.end[0] - 1] + tok.end[1])
             for tok in tokenize.generate_tokens(iter(lines).__next__)
             if tok.type == tokenize.STRING]
    asset_dirs = {offset for match in ASSET_DIR_STRINGS.finditer(source)
                  for offset in (match.start(), match.start(2))}
    spans = [span for span in spans if span not in annotations
             and not MODULE_PATH_STRING.fullmatch(source[span[0]:span[1]])
             and span[0] not in asset_dirs]
    strings, parts, pos = [], [], 0
    for start, end in spans:
        parts.append(source[pos:start])
        parts.append(f"\x00{len(strings)}\x00")
        text = source[start:end]
        strings.append(rewrite_code_string(text, counts) if PYTHON_SOURCE_STRING.search(text)
                       else text)
        pos = end
    parts.append(source[pos:])
    return "".join(parts), strings


# --------------------------------------------------------------------------
# Cases: what Warp registers, and what each uses


ENUMERATE = r"""
import importlib, inspect, json, sys, types, unittest
import warp as wp
wp.config.quiet = True
module = importlib.import_module(sys.argv[1])

def names(obj, depth=0, seen=None):
    seen = set() if seen is None else seen
    out = set()
    if depth > 5 or id(obj) in seen:
        return out
    seen.add(id(obj))
    if isinstance(obj, wp.Kernel):
        out.add(obj.func.__name__)
        obj = obj.func
    if isinstance(obj, types.FunctionType):
        if obj.__module__ == module.__name__:
            out.add(obj.__name__)
            # a closure (make_test(...).<locals>.test): the module-level factory holds its source
            out.add(obj.__qualname__.split(".")[0])
        for cell in obj.__closure__ or ():
            try:
                out |= names(cell.cell_contents, depth + 1, seen)
            except ValueError:
                pass
        for d in obj.__defaults__ or ():
            out |= names(d, depth + 1, seen)
        if hasattr(obj, "__wrapped__"):
            out |= names(obj.__wrapped__, depth + 1, seen)
    elif isinstance(obj, (list, tuple)):
        for o in obj[:20]:
            out |= names(o, depth + 1, seen)
    return out

cases = []
for cname, cls in vars(module).items():
    if isinstance(cls, type) and issubclass(cls, unittest.TestCase) and cls.__module__ == module.__name__:
        for attr in sorted(vars(cls)):
            if attr.startswith("test") and callable(getattr(cls, attr)):
                fn = getattr(cls, attr)
                skip_all = getattr(fn, "__name__", "") == "skip_test_func"
                cases.append({"class": cname, "name": attr, "uses": sorted(names(fn)),
                              "no_devices": skip_all})
print("@@CASES@@" + json.dumps(cases))
"""


def enumerate_cases(rel):
    module = "warp.tests." + rel[:-3].replace("/", ".")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    result = subprocess.run([sys.executable, "-c", ENUMERATE, module], capture_output=True,
                            text=True, timeout=900, env=env, cwd="/tmp")
    for line in result.stdout.splitlines():
        if line.startswith("@@CASES@@"):
            return json.loads(line[len("@@CASES@@"):]), None
    return None, (result.stderr.strip().splitlines() or ["no output"])[-1]


def _registration_call(node):
    for sub in _walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) \
                and sub.func.id in _REGISTRATIONS:
            return True
    return False


def _is_testcase(stmt):
    return isinstance(stmt, ast.ClassDef) and any(
        (isinstance(b, ast.Attribute) and b.attr == "TestCase")
        or (isinstance(b, ast.Name) and b.id == "TestCase") for b in stmt.bases)


def definitions(tree):
    """Module-level name -> the statements that define or fill it (registrations and
    TestCase classes excluded: they name every case)."""
    table = collections.defaultdict(list)
    for stmt in tree.body:
        if _is_testcase(stmt):
            continue
        if isinstance(stmt, (ast.If,)) and "__main__" in ast.unparse(stmt.test):
            continue
        if _registration_call(stmt):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            table[stmt.name].append(stmt)
            continue
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                table[sub.id].append(stmt)
            elif isinstance(sub, (ast.Subscript, ast.Attribute)) and isinstance(
                    sub.ctx, ast.Store):
                base = sub
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if isinstance(base, ast.Name):
                    table[base.id].append(stmt)
    return table


def class_methods(tree):
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, ast.FunctionDef):
                    out[(stmt.name, item.name)] = item
    return out


def reached(seeds, table):
    """*seeds* (AST nodes) and every module-level definition they name, transitively."""
    seen, queue, nodes = set(), list(seeds), []
    while queue:
        node = queue.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        for sub in _walk(node):
            if isinstance(sub, ast.Name) and sub.id in table:
                queue.extend(n for n in table[sub.id] if id(n) not in seen)
    return nodes


_UNPARSED = {}


def _unparsed(node):
    """``ast.unparse(node)``, kept per node as ``_walk`` keeps walks (and cleared with them)."""
    entry = _UNPARSED.get(id(node))
    if entry is None:
        entry = _UNPARSED[id(node)] = (node, ast.unparse(node))
    return entry[1]


def used_source(nodes):
    """The source of *nodes*, comments dropped."""
    return "\n".join(_unparsed(node) for node in nodes)


def module_level_statements(tree):
    """The statements run at import other than definitions, TestCase classes, the
    registrations and the ``__main__`` block."""
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                             ast.ImportFrom)) or _registration_call(stmt):
            continue
        if isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test):
            continue
        yield stmt


_DTYPE_IN_NAME = re.compile(r"\b(float|int|uint)(8|16|32|64)\b|\bbool\b|"
                            r"\b(vec[234]|mat(22|33|44)|quat|transform)[dfhi]\b")
_BY_NAME_WHEN_TYPED = ("fp16", "bf16")


def out_of_scope_reason(rel, case, text):
    """The reason *case* (its name without the device suffix; *text* the source it uses)
    is out of scope, or None.  A case parameterized by a dtype (its name names one, as
    ``test_length_float32``) is fp16/bf16 by its name only: its source lists every dtype."""
    reason = OUT_OF_SCOPE_FILES.get(rel) or OUT_OF_SCOPE_CASES.get((rel, case))
    if reason:
        return reason
    name = case.replace("_", " ")  # the markers' word boundaries, in a snake_case name
    typed = _DTYPE_IN_NAME.search(name) is not None
    found = [label for pattern, label in OUT_OF_SCOPE_MARKERS
             if pattern.search(name)
             or (not (typed and label in _BY_NAME_WHEN_TYPED) and pattern.search(text))]
    return " + ".join(dict.fromkeys(found)) or None


_DEVICE_SUFFIX = re.compile(r"_(cpu|cuda_\d+)$")


def classify(rel, source, cases):
    """Per case: its device ("cpu", "cuda" or None) and its out-of-scope reason; and the
    module-level function and class definitions that only out-of-scope cases use."""
    tree = ast.parse(source)
    table = definitions(tree)
    methods = class_methods(tree)
    result = []
    users = collections.defaultdict(set)  # id(definition) -> reasons of the cases using it
    for case in cases:
        base = _DEVICE_SUFFIX.sub("", case["name"])
        device = "cpu" if case["name"].endswith("_cpu") else None
        seeds = [n for name in case["uses"] for n in table.get(name, ())]
        method = methods.get((case["class"], case["name"]))
        if method is not None:
            seeds.append(method)
        nodes = reached(seeds, table)
        reason = out_of_scope_reason(rel, base, used_source(nodes))
        for node in nodes:
            users[id(node)].add(reason)
        entry = {"class": case["class"], "name": case["name"], "base": base,
                 "device": device, "out_of_scope": reason}
        if case["no_devices"]:
            entry["device"] = "cuda"
        result.append(entry)
        if device == "cpu":  # Warp's CUDA twin of a get_test_devices() case
            result.append(dict(entry, name=base + "_cuda_0", device="cuda"))
    return result, droppable(rel, tree, table, users)


def _single_assignment(stmt):
    """``name = <expression>`` at module level (the generator may leave it out)."""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], ast.Name)


def _defined_name(stmt):
    return stmt.targets[0].id if isinstance(stmt, ast.Assign) else stmt.name


def _signature(stmt):
    """What defining *stmt* evaluates: decorators, annotations, defaults, bases, and a
    class body's statements other than its methods' bodies."""
    parts = list(stmt.decorator_list)
    if isinstance(stmt, ast.ClassDef):
        parts += stmt.bases + [k.value for k in stmt.keywords]
        for item in stmt.body:
            parts += _signature(item) if isinstance(item, (ast.FunctionDef, ast.ClassDef)) \
                else [item]
        return parts
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = stmt.args
        parts += [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs
                  + [args.vararg, args.kwarg] if a is not None and a.annotation is not None]
        parts += args.defaults + [d for d in args.kw_defaults if d is not None]
        if stmt.returns is not None:
            parts.append(stmt.returns)
    return parts


def droppable(rel, tree, table, users):
    """The module-level definitions (functions, classes, ``name = ...``) to leave out, with
    the reason: those
    only out-of-scope cases use, and those no in-scope case uses whose own definition uses
    an out-of-scope feature (a ``@wp.func_grad``, a ``vec3h`` annotation) — unless running
    the module needs them (module-level code, or the definition of one that stays)."""
    candidates = {}
    for stmt in tree.body:
        if not (isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) or _single_assignment(stmt)) \
                or _is_testcase(stmt):
            continue
        reasons = users.get(id(stmt), set())
        if reasons and None not in reasons:
            candidates[id(stmt)] = (stmt, " + ".join(sorted(reasons)))
        elif not reasons:
            own = out_of_scope_reason(rel, "", ast.unparse(stmt))
            if own:
                candidates[id(stmt)] = (stmt, own)
    while True:
        keep = [key for key in candidates if key in _needed(tree, table, candidates, True)]
        if not keep:
            return list(candidates.values())
        for key in keep:
            del candidates[key]


def _needed(tree, table, excluded, with_helpers, guarded_registrations=frozenset()):
    """The ids of the module-level definitions that running the module needs when the
    definitions in *excluded* (ids) are not run: module-level code, the data the
    registrations loop over, the signatures of the definitions that stay and, with
    *with_helpers*, what the TestCase classes' helper methods (setUp, ...) name (a guarded
    registration, in *guarded_registrations*, needs nothing: its failure fails its cases)."""
    kept_signatures = [part for stmt in tree.body
                       if isinstance(stmt, (ast.FunctionDef, ast.ClassDef))
                       and id(stmt) not in excluded for part in _signature(stmt)]
    helpers = [item for stmt in tree.body if isinstance(stmt, ast.ClassDef)
               for item in stmt.body if isinstance(item, ast.FunctionDef)
               and not item.name.startswith("test")] if with_helpers else []
    run = [stmt for stmt in module_level_statements(tree) if id(stmt) not in excluded]
    # the registrations run too: the data they loop over is needed, and what they call
    # (the test functions they pass are not: an out-of-scope case is registered without
    # calling it)
    passed, evaluated = _registration_names(tree, guarded_registrations)
    run += [d for name in passed | evaluated for d in table.get(name, ())
            if name in evaluated or not isinstance(d, (ast.FunctionDef, ast.ClassDef))]
    return {id(n) for n in reached(run + kept_signatures + helpers, table)}


_REGISTRATIONS = ("add_function_test", "add_kernel_test", "add_function_test_register_kernel")


def _registration_names(tree, guarded=frozenset()):
    """The names the registrations name: (those passed as an argument, those evaluated
    otherwise, e.g. called to build an input)."""
    passed, evaluated = set(), set()
    for stmt in tree.body:
        if not _registration_call(stmt) or id(stmt) in guarded:
            continue
        direct = set()
        for sub in _walk(stmt):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) \
                    and sub.func.id in _REGISTRATIONS:
                direct |= {id(a) for a in sub.args + [k.value for k in sub.keywords]
                           if isinstance(a, ast.Name)}
        for sub in _walk(stmt):
            if isinstance(sub, ast.Name) and sub.id not in _REGISTRATIONS:
                (passed if id(sub) in direct else evaluated).add(sub.id)
    return passed, evaluated


_REGISTRATION_PARAMETERS = {
    # Warp's registration helpers (unittest_utils.py): their leading parameters
    "add_function_test": ("cls", "name", "func", "devices"),
    "add_function_test_register_kernel": ("cls", "name", "func", "devices"),
    "add_kernel_test": ("cls", "kernel", "dim", "name", "expect", "inputs", "devices"),
}


def _guardable_registration(stmt):
    """For a module-level ``add_*_test(...)`` statement that evaluates more than names and
    constants (``inputs=[Struct()]``): the source of its class, case name and devices (what
    ``wpc.failed_registration`` registers as failing when the statement raises); else None."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id in _REGISTRATION_PARAMETERS):
        return None
    call = stmt.value
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None
                                                                 for k in call.keywords):
        return None
    bound = dict(zip(_REGISTRATION_PARAMETERS[call.func.id], call.args))
    bound.update((k.arg, k.value) for k in call.keywords)
    if "cls" not in bound or "name" not in bound or not all(
            isinstance(n, (ast.Name, ast.Constant, ast.JoinedStr, ast.FormattedValue))
            for key in ("cls", "name", "devices") if key in bound
            for n in ast.walk(bound[key]) if not isinstance(n, ast.expr_context)):
        return None
    if not any(isinstance(n, (ast.Call, ast.Subscript, ast.Attribute)) for n in ast.walk(call)
               if n is not call):
        return None
    devices = bound.get("devices")
    return {"cls": ast.unparse(bound["cls"]), "name": ast.unparse(bound["name"]),
            "devices": "get_test_devices()" if devices is None and call.func.id
            == "add_kernel_test" else ast.unparse(devices) if devices is not None else "None"}


def guardable(tree, table, dropped_lines):
    """The module-level statements whose failure (a name numba_sim or the compat module
    lacks, used in a decorator, an annotation or a value) must fail only the cases that use
    them, not the import of the whole file, as (statement, (kind, fields)):
    - registrations (``add_kernel_test(..., inputs=[S()])``) that evaluate more than names:
      on failure, their cases are registered as failing with the error;
    - the definitions that running the module does not need: the functions and classes
      whose definition evaluates something (decorators, annotations, defaults, bases, a
      class body) and the ``name = <expression>`` that calls, subscripts or looks up an
      attribute, defined once (not an overload set)."""
    excluded = {id(stmt) for stmt in tree.body if stmt.lineno in dropped_lines}
    registrations = {}
    for stmt in tree.body:
        fields = _guardable_registration(stmt)
        if fields is not None:
            registrations[id(stmt)] = (stmt, ("registration", fields))
    candidates = {}
    for stmt in tree.body:
        if id(stmt) in excluded or _is_testcase(stmt):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            evaluates = bool(_signature(stmt))
        elif _single_assignment(stmt):
            evaluates = any(isinstance(n, (ast.Call, ast.Subscript, ast.Attribute))
                            for n in ast.walk(stmt.value))
        else:
            continue
        shares_a_line = any(other is not stmt and other.lineno <= stmt.end_lineno
                            and _first_line(stmt) <= other.end_lineno for other in tree.body)
        if evaluates and not shares_a_line and len(table.get(_defined_name(stmt), ())) == 1:
            candidates[id(stmt)] = stmt
    while True:
        needed = _needed(tree, table, excluded | set(candidates), False, set(registrations))
        keep = [key for key in candidates if key in needed]
        if not keep:
            return list(registrations.values()) + [
                (stmt, ("definition", {"name": _defined_name(stmt)}))
                for stmt in sorted(candidates.values(), key=lambda stmt: stmt.lineno)]
        for key in keep:
            del candidates[key]


# --------------------------------------------------------------------------
# Porting


HEADER = '''\
# Generated by tools/port_warp_tests.py from warp/tests/{rel} (warp-lang {version}).
# Do not edit: rerun the script. The rewrites applied are listed in manifest.json.
'''

DECLARATION = '''\
# ---- tools/port_warp_tests.py: the out-of-scope cases (its fixed list; docs/warp-compatibility.md)
from warp_suite import _warp_compat as wpc  # noqa: E402
wpc.declare_out_of_scope(__name__, {reasons})
'''

FOOTER = '''
# ---- tools/port_warp_tests.py: skip the out-of-scope cases defined as TestCase methods
wpc.mark_out_of_scope(globals())
'''


def insert_declaration(source, declaration):
    """*declaration* before the first statement that is not the docstring or a
    ``from __future__`` import."""
    tree = ast.parse(source)
    line = len(source.splitlines()) + 1
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            continue
        line = stmt.lineno
        break
    lines = source.splitlines(keepends=True)
    return "".join(lines[:line - 1]) + declaration + "".join(lines[line - 1:])


def ported_name(rel):
    return "test_" + Path(rel).stem[len("test_"):] + ".py"


def insert_footer(source, footer):
    match = re.search(r'^if __name__ == "__main__":', source, flags=re.MULTILINE)
    if match is None:
        return source.rstrip("\n") + "\n" + footer
    return source[:match.start()] + footer.lstrip("\n") + "\n\n" + source[match.start():]


def generate(rel, source, cases, version):
    """(ported text, manifest entry) of one file from Warp's cases, or (None, the reason it
    is left out).  Deterministic: ``--check`` regenerates from the manifest's cases."""
    try:
        return _generate(rel, source, cases, version)
    finally:
        _WALKS.clear()
        _UNPARSED.clear()


def _generate(rel, source, cases, version):
    classified, dropped = classify(rel, source, cases)
    if not classified:
        return None, "no test cases registered by Warp"
    if all(c["out_of_scope"] or c["device"] == "cuda" for c in classified):
        reasons = sorted({c["out_of_scope"] for c in classified if c["out_of_scope"]})
        cuda_only = sum(1 for c in classified if c["device"] == "cuda"
                        and not c["out_of_scope"] and not c["name"].endswith("_cuda_0"))
        return None, ("every case out of scope (" + ", ".join(reasons) + ")"
                      + (f" or CUDA-only ({cuda_only})" if cuda_only else ""))
    tree = ast.parse(source)
    guarded = guardable(tree, definitions(tree), {stmt.lineno for stmt, _ in dropped})
    text, counts = rewrite_source(source, dropped, guarded)
    reasons = {f"{c['class']}.{c['base']}": c["out_of_scope"]
               for c in classified if c["out_of_scope"]}
    declared = json.dumps(reasons, indent=4, sort_keys=True).replace("\n}", ",\n}") \
        if reasons else "{}"
    body = insert_footer(insert_declaration(text, DECLARATION.format(reasons=declared)), FOOTER)
    entry = {"ported": ported_name(rel), "rewrites": counts, "warp_cases": cases,
             "cases": classified}
    return HEADER.format(rel=rel, version=version) + body, entry


def helper_modules(root):
    return dict(HELPERS, **{p.name: p.stem for p in sorted(root.glob("aux_*.py"))})


ASSETS = OUT / "assets"
ASSETS_NOTICE = """# Assets

The files here are NVIDIA Warp's test data (`warp/tests/assets/`, warp-lang {version}, Apache
License 2.0, Copyright (c) 2022 NVIDIA CORPORATION & AFFILIATES), copied by
`tools/port_warp_tests.py`: only those that the ported tests read beside them
(`os.path.join(os.path.dirname(__file__), "assets/<name>")`): {names}.
"""


def referenced_assets(source, available):
    """The names of Warp's test assets (*available*) that the code of *source* names in a
    string literal (``"assets/pnoise_golden.npy"``; comments are not code)."""
    found = set()
    for tok in tokenize.generate_tokens(iter(source.splitlines(keepends=True)).__next__):
        if tok.type == tokenize.STRING:
            found |= {name for name in available if re.search(
                r"(^|[/\"'])" + re.escape(name) + r"[\"']", tok.string)}
    return found


def asset_files(root, manifest):
    """{name: bytes} of the assets the ported files read (a file in geometry/ or matrix/
    reads ``../assets``: the rewrite ``flat_assets`` points it at the flat suite's copy)."""
    available = sorted(p.name for p in (root / "assets").iterdir() if p.is_file())
    names = set()
    for rel in manifest["files"]:
        names |= referenced_assets((root / rel).read_text(), available)
    return {name: (root / "assets" / name).read_bytes() for name in sorted(names)}


def assets_notice(names, version):
    return ASSETS_NOTICE.format(version=version, names=", ".join(f"`{n}`" for n in names))


def port(jobs=2, only=None):
    import warp

    compat_names = _compat_host_names()
    if tuple(sorted(compat_names)) != tuple(sorted(HOST_NAMES)):
        raise SystemExit("HOST_NAMES differs from tests/warp_suite/_warp_compat.py's")
    root = warp_tests_dir()
    files = sorted(str(p.relative_to(root)) for sub in SUBDIRS
                   for p in (root / sub).glob("test_*.py"))
    if only:
        files = [f for f in files if any(o in f for o in only)]
    OUT.mkdir(exist_ok=True)
    manifest = json.loads(MANIFEST.read_text()) if (only and MANIFEST.exists()) else {
        "warp_version": warp.__version__, "files": {}, "left_out": {}}
    manifest["warp_version"] = warp.__version__
    manifest["rewrites"] = [{"id": k, "pattern": p, "replacement": r, "why": w}
                            for k, p, r, w in REWRITES]
    manifest["method_rewrites"] = {k: v[1] for k, v in METHOD_REWRITES.items()}
    manifest["attribute_rewrites"] = dict(ATTRIBUTE_REWRITES)
    manifest["attribute_augmented_rewrites"] = dict(ATTRIBUTE_AUGMENTED_REWRITES)
    manifest["attribute_store_rewrites"] = dict(ATTRIBUTE_STORE_REWRITES)
    manifest["dtype_attribute_rewrites"] = dict(DTYPE_ATTRIBUTE_REWRITES)
    manifest["backward_grads_pairs"] = ("tape.backward(grads={a: g, ...}) -> grads=[(a, g), "
                                        "...] (NumPy arrays cannot be dict keys)")
    for helper, target in helper_modules(root).items():
        text, counts = rewrite_source((root / helper).read_text())
        (OUT / f"{target}.py").write_text(
            HEADER.format(rel=helper, version=warp.__version__) + text)
        manifest.setdefault("helpers", {})[helper] = {"ported": f"{target}.py", "rewrites": counts}

    todo = []
    for rel in files:
        manifest["files"].pop(rel, None)
        manifest["left_out"].pop(rel, None)
        if rel in LEFT_OUT:
            manifest["left_out"][rel] = LEFT_OUT[rel]
            _remove(rel)
        else:
            todo.append(rel)

    def one(rel):
        return rel, enumerate_cases(rel)

    with ThreadPoolExecutor(jobs) as pool:
        for rel, (cases, error) in pool.map(one, todo):
            if cases is None:
                raise SystemExit(f"{rel}: Warp could not import it here: {error}")
            text, entry = generate(rel, (root / rel).read_text(), cases, warp.__version__)
            if text is None:
                manifest["left_out"][rel] = entry
                _remove(rel)
                print(f"left out {rel}: {entry}")
                continue
            (OUT / ported_name(rel)).write_text(text)
            manifest["files"][rel] = entry
            n_oos = sum(1 for c in entry["cases"] if c["out_of_scope"])
            print(f"ported {rel}: {len(entry['cases'])} cases, {n_oos} out of scope, "
                  f"rewrites {sum(entry['rewrites'].values())}")
    manifest["files"] = dict(sorted(manifest["files"].items()))
    manifest["left_out"] = dict(sorted(manifest["left_out"].items()))
    assets = asset_files(root, manifest)
    manifest["assets"] = sorted(assets)
    MANIFEST.write_text(_dump(manifest) + "\n")
    ASSETS.mkdir(exist_ok=True)
    for path in ASSETS.iterdir():
        if path.name not in assets and path.name != "NOTICE.md":
            path.unlink()
    for name, data in assets.items():
        (ASSETS / name).write_bytes(data)
    (ASSETS / "NOTICE.md").write_text(assets_notice(assets, warp.__version__))


def check():
    """The differences between tests/warp_suite/ and what this script generates from the
    installed Warp's sources and the manifest's record of Warp's cases (no Warp import):
    a list of messages, empty when the ported suite is exactly the generated one."""
    import importlib.metadata

    manifest = json.loads(MANIFEST.read_text())
    version = importlib.metadata.version("warp-lang")
    problems = []
    if manifest["warp_version"] != version:
        problems.append(f"ported from warp-lang {manifest['warp_version']}, installed {version}")
    root = warp_tests_dir()
    for helper, target in helper_modules(root).items():
        text = HEADER.format(rel=helper, version=version) + rewrite_source(
            (root / helper).read_text())[0]
        if (OUT / f"{target}.py").read_text() != text:
            problems.append(f"{target}.py differs from its generated text")
    expected = set()
    for rel, entry in manifest["files"].items():
        text, generated = generate(rel, (root / rel).read_text(), entry["warp_cases"], version)
        expected.add(entry["ported"])
        if text is None:
            problems.append(f"{rel} is ported but would be left out: {generated}")
        elif (OUT / entry["ported"]).read_text() != text:
            problems.append(f"{entry['ported']} differs from its generated text")
        elif generated != entry:
            problems.append(f"{rel}: the manifest's entry differs from the generated one")
    assets = asset_files(root, manifest)
    if manifest.get("assets") != sorted(assets):
        problems.append(f"the manifest's assets {manifest.get('assets')} are not those the ported "
                        f"files read: {sorted(assets)}")
    on_disk_assets = {p.name: p.read_bytes() for p in ASSETS.glob("*")} if ASSETS.is_dir() else {}
    if on_disk_assets != dict(assets, **{"NOTICE.md": assets_notice(assets, version).encode()}):
        problems.append("tests/warp_suite/assets/ differs from Warp's assets the ported files "
                        "read (and its NOTICE.md)")
    on_disk = {p.name for p in OUT.glob("test_*.py")}
    problems += [f"{name} is not generated" for name in sorted(on_disk - expected)]
    for sub in SUBDIRS:
        for path in (root / sub).glob("test_*.py"):
            rel = str(path.relative_to(root))
            if rel not in manifest["files"] and rel not in manifest["left_out"]:
                problems.append(f"{rel} is neither ported nor listed as left out")
    return problems


def _dump(value, depth=0):
    """JSON with one line per case (the manifest stays readable and diffable)."""
    pad = " " * (depth + 1)
    if isinstance(value, dict) and depth < 3:
        items = [f"{pad}{json.dumps(k)}: {_dump(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}" if items else "{}"
    if isinstance(value, list) and value and isinstance(value[0], dict):
        items = [pad + json.dumps(v, separators=(",", ":")) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * depth + "]"
    return json.dumps(value)


def _remove(rel):
    path = OUT / ported_name(rel)
    if path.exists():
        path.unlink()


def _compat_host_names():
    tree = ast.parse((OUT / "_warp_compat.py").read_text())
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and getattr(stmt.targets[0], "id", "") == "HOST_NAMES":
            return ast.literal_eval(stmt.value)
    return ()


# --------------------------------------------------------------------------
# Report: run the ported suite, one pytest process per file, and write the table


def run_file(name, timeout):
    xml = Path("/tmp") / f"warp_suite_{os.getpid()}_{name}.xml"
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             f"tests/warp_suite/{name}", f"--junitxml={xml}", "-o", "junit_family=xunit1"],
            cwd=REPO, capture_output=True, text=True, timeout=timeout,
            env=dict(os.environ, WARP_SUITE_TRUE_OUTCOMES="1"))
        tail = proc.stdout[-2000:]
    except subprocess.TimeoutExpired:
        return name, None, f"timed out after {timeout} s", time.monotonic() - start
    elapsed = time.monotonic() - start
    if not xml.exists():
        return name, None, f"no report (exit status {proc.returncode}): " + " ".join(
            (tail.strip().splitlines() or ["crashed"])[-1:]), elapsed
    results = {}
    tree = ET.parse(xml)
    xml.unlink()
    for tc in tree.iter("testcase"):
        # "Class.case" (a case name may recur in several TestCase classes of a file)
        case = tc.get("name")
        if case != "import":
            case = f"{(tc.get('classname') or '').rsplit('.', 1)[-1]}.{case}"
        failure = tc.find("failure")
        error = tc.find("error")
        skipped = tc.find("skipped")
        if failure is not None or error is not None:
            node = failure if failure is not None else error
            results[case] = ("failed", _cause(node.get("message") or "", node.text or ""))
        elif skipped is not None:
            results[case] = ("skipped", skipped.get("message") or "")
        else:
            results[case] = ("passed", "")
    if proc.returncode not in (0, 1) and not results:
        return name, None, (proc.stdout + proc.stderr)[-500:], elapsed
    return name, results, None, elapsed


def _cause(message, text):
    """One line naming a failure's cause: the exception and its first line."""
    lines = [ln for ln in text.splitlines() if re.match(r"^E\s+\w", ln)]
    first = lines[0][1:].strip() if lines else message.strip().splitlines()[0] if message.strip() else "?"
    if re.match(r"[\w.]*KernelTypingError: File ", first):  # the message is its last line
        said = next((ln[1:].strip() for ln in lines[1:] if ln[1:].strip().startswith("kernel ")), None)
        if said:
            first = f"{first.split(':')[0]}: {said}"
    if "TypingError" in first or "LoweringError" in first:  # Numba's first line says little
        detail = next((ln[1:].strip() for ln in lines[1:] if re.search(
            r"Untyped global name|Unknown attribute|No implementation of function|Invalid use|"
            r"[A-Z]\w+Error:|not supported|Cannot|cannot|has no attribute|unexpected", ln)
            and not ln[1:].strip().startswith(("During:", "Failed in"))), None)
        if detail:
            first = f"{first.split(':')[0]}: {detail}"
    first = re.sub(r"0x[0-9a-f]+", "0x…", first)
    return first[:200]


REPORT_RESULTS = OUT / "report_results.json"
"""What the last ``--report`` of each file found: its table row, its failing and skipped
cases by cause, its time, and the run (full or partial) it came from; a partial report
(``--report test_x``) re-runs its files and rebuilds the table, the causes and
known_failures.json from these, so the other files keep the outcomes of their last run."""


def file_outcomes(info, run):
    """The table row and the causes (cause -> cases) of one ported file's run."""
    _, results, problem, elapsed = run
    row, causes = collections.Counter(), collections.defaultdict(list)
    for case in info["cases"]:
        if case["device"] == "cuda":
            row["cuda"] += 1
            continue
        if case["out_of_scope"]:
            row["out_of_scope"] += 1
            continue
        row["cases"] += 1
        outcome = (results or {}).get(f"{case['class']}.{case['name']}")
        if results is None:
            outcome = ("failed", f"the file did not run: {problem}")
        elif outcome is None:
            outcome = ("failed", "not among the cases the ported file registered")
            error = next((v for k, v in results.items() if v[0] == "failed"), None)
            if error:
                outcome = ("failed", error[1])
        if outcome[0] == "passed":
            row["passed"] += 1
        elif outcome[0] == "skipped":
            row["skipped"] += 1
            causes[f"skipped: {outcome[1]}"].append(f"{info['ported']}::{case['name']}")
        else:
            row["failed"] += 1
            causes[outcome[1]].append(f"{info['ported']}::{case['name']}")
    return dict(row), dict(causes), elapsed


SKIPPED_CAUSE = re.compile(r"^- \*\*\d+\*\* — `(skipped: [^`]*)`: (.*?)(?: and \d+ more)?$")
TABLE_ROW = re.compile(r"^\| ([\w/]+\.py) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| [^|]* \| "
                       r"(\d+) \| (\d+) \|$")


def seed_results(manifest):
    """The records of `REPORT_RESULTS` rebuilt from an earlier report that did not keep
    them: known_failures.json (each file's failing cases and causes), the doc's list of
    skipped cases and its table (times, and the counts, checked: a file whose counts differ
    is left out, so a partial report must run it); None if a skip list is cut short or
    the doc has no report (then only a full report can start the records)."""
    doc = DOC.read_text()
    known = json.loads(KNOWN_FAILURES.read_text()) if KNOWN_FAILURES.exists() else {}
    skipped = {}
    for line in doc.splitlines():
        match = SKIPPED_CAUSE.match(line)
        if match:
            if line.endswith("more"):
                return None
            for shown in re.findall(r"`([^`]*)`", match.group(2)):
                stem, case = shown.split("::")
                skipped[(f"test_{stem}.py", case)] = match.group(1)
    table = {m.group(1): m for m in map(TABLE_ROW.match, doc.splitlines()) if m}
    header = re.search(r"ported; run ([^,]+), (\d+) s wall with (\d+) files", doc)
    if header is None:
        return None
    stored = {"full_run": {"when": header.group(1), "wall": int(header.group(2)),
                           "jobs": int(header.group(3))}, "partial_run": None, "files": {}}
    for rel, info in manifest["files"].items():
        name, failed = info["ported"], known.get(info["ported"], {})
        results = {}
        for case in info["cases"]:
            key = f"{case['class']}.{case['name']}"
            cause = failed.get(key) or failed.get("*") or failed.get("import")
            results[key] = ("failed", cause) if cause else \
                ("skipped", skipped[(name, case["name"])].removeprefix("skipped: ")) \
                if (name, case["name"]) in skipped else ("passed", "")
        row, causes, _ = file_outcomes(info, (name, results, None, 0))
        listed = table.get(rel)
        if listed is None or [row.get(k, 0) for k in ("cases", "passed", "failed", "skipped",
                                                      "out_of_scope", "cuda")] != \
                [int(listed.group(i)) for i in range(2, 8)]:
            continue  # (a case its run did not register): not seeded, a report must run it
        stored["files"][rel] = {"row": row, "causes": causes, "elapsed": int(listed.group(8))}
    return stored


def report(jobs=2, timeout=900, only=None):
    manifest = json.loads(MANIFEST.read_text())
    names = {rel: info["ported"] for rel, info in manifest["files"].items()}
    if only:
        names = {r: n for r, n in names.items() if any(o in r for o in only)}
    stored = json.loads(REPORT_RESULTS.read_text()) if REPORT_RESULTS.exists() else \
        seed_results(manifest) if only else None
    missing = [rel for rel in manifest["files"] if rel not in (stored or {}).get("files", {})]
    if only and (stored is None or set(missing) - set(names)):
        raise SystemExit(f"a partial --report rebuilds the table from the last report of "
                         f"every file ({REPORT_RESULTS.relative_to(REPO)}), which lacks "
                         f"{', '.join(sorted(set(missing) - set(names))) or 'every file'}: "
                         f"run the full --report first")
    start = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:
        runs = list(pool.map(lambda n: run_file(n, timeout), names.values()))
    wall = time.monotonic() - start
    when = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
    by_name = {r[0]: r for r in runs}
    if not only or stored is None:
        stored = {"full_run": {"when": when, "wall": round(wall), "jobs": jobs}, "files": {}}
    earlier = (stored.get("partial_run") or {}).get("files", []) if only else []
    stored["partial_run"] = {"when": when, "files": sorted(set(earlier) | set(names))} \
        if only else None
    for rel, name in names.items():
        row, causes, elapsed = file_outcomes(manifest["files"][rel], by_name[name])
        stored["files"][rel] = {"row": row, "causes": causes, "elapsed": round(elapsed)}
    stored["files"] = {rel: stored["files"][rel] for rel in manifest["files"]
                       if rel in stored["files"]}
    REPORT_RESULTS.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
    rows, causes, totals = [], collections.defaultdict(list), collections.Counter()
    for rel, entry in stored["files"].items():
        row = collections.Counter(entry["row"])
        rows.append((rel, row, ", ".join(sorted({c["out_of_scope"] for c in manifest["files"][
            rel]["cases"] if c["out_of_scope"]})), entry["elapsed"]))
        totals.update(row)
        for cause, cases in entry["causes"].items():
            causes[cause].extend(cases)
    write_doc(manifest, rows, causes, totals, stored)
    write_known_failures(by_name, merge=bool(only))
    print(f"in scope {totals['cases']}, passed {totals['passed']}, failed {totals['failed']}, "
          f"out of scope {totals['out_of_scope']}, cuda {totals['cuda']}; {wall:.0f} s")
    for rel in names:
        row = stored["files"][rel]["row"]
        print(f"  {rel}: {row.get('cases', 0)} cases, passed {row.get('passed', 0)}, "
              f"failed {row.get('failed', 0)}, skipped {row.get('skipped', 0)}")


def write_known_failures(runs, merge=False):
    """tests/warp_suite/known_failures.json: the items that failed in this run (with their
    cause), which the normal suite expects to fail (``xfail``, not strict: a case that starts
    passing shows as XPASS; one that passed and fails now is a failure).  *merge* (a
    partial report): only the files run are replaced; the others keep their entries."""
    known = json.loads(KNOWN_FAILURES.read_text()) if merge and KNOWN_FAILURES.exists() else {}
    for name, results, problem, _ in sorted(runs.values()):
        failed = {case: cause for case, (status, cause) in (results or {}).items()
                  if status == "failed"}
        if results is None:
            failed = {"*": f"the file did not run: {problem}"}
        for case, cause in list(failed.items()):
            if case.endswith("_cpu"):
                failed[case[:-len("_cpu")] + "_cuda_0"] = cause
        known.pop(name, None)
        if failed:
            known[name] = dict(sorted(failed.items()))
    KNOWN_FAILURES.write_text(json.dumps(dict(sorted(known.items())), indent=1,
                                         sort_keys=True) + "\n")


def write_doc(manifest, rows, causes, totals, stored):
    full, partial = stored["full_run"], stored.get("partial_run")
    lines = [
        "<!-- generated by `python tools/port_warp_tests.py --report`; do not edit by hand -->",
        f"Warp {manifest['warp_version']}'s tests, ported; run {full['when']}, "
        f"{full['wall']} s wall with {full['jobs']} files at a time (one pytest process per "
        "file)" + (f"; re-run {partial['when']}: {', '.join(partial['files'])}."
                   if partial else "."),
        "",
        f"**In-scope CPU cases: {totals['cases']}; passed {totals['passed']} "
        f"({100.0 * totals['passed'] / max(totals['cases'], 1):.1f} %), failed {totals['failed']}"
        + (f", skipped {totals['skipped']}" if totals["skipped"] else "")
        + f".** Out of scope: {totals['out_of_scope']}. CUDA cases (skipped without a GPU): "
        f"{totals['cuda']}.",
        "",
        "Columns: in-scope CPU cases, of which passed, failed, and skipped by the test itself "
        "(e.g. Warp's own skip without USD); then the cases out of scope, why, and the CUDA "
        "cases (not run here).",
        "",
        "| file | cases | passed | failed | skipped | out of scope | reason out of scope "
        "| CUDA cases | time (s) |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for rel, row, oos, elapsed in rows:
        lines.append(f"| {rel} | {row['cases']} | {row['passed']} | {row['failed']} | "
                     f"{row['skipped']} | {row['out_of_scope']} | {oos} | {row['cuda']} | "
                     f"{elapsed:.0f} |")
    lines.append(f"| **total** | {totals['cases']} | {totals['passed']} | {totals['failed']} | "
                 f"{totals['skipped']} | {totals['out_of_scope']} | | {totals['cuda']} | |")
    lines += ["", "### Failing cases, grouped by cause", ""]
    for cause, cases in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        cause_text = " ".join(cause.split()).replace("|", "\\|").replace("`", "'")
        shown = ", ".join(f"`{c.split('::')[0][5:-3]}::{c.split('::')[1]}`" for c in cases[:6])
        more = f" and {len(cases) - 6} more" if len(cases) > 6 else ""
        lines.append(f"- **{len(cases)}** — `{cause_text}`: {shown}{more}")
    lines += ["", "### Files left out", "", "| file | reason |", "|---|---|"]
    for rel, reason in manifest["left_out"].items():
        lines.append(f"| {rel} | {reason} |")
    block = "\n".join(lines)
    doc = DOC.read_text()
    begin, end = "<!-- report:begin -->", "<!-- report:end -->"
    doc = doc[:doc.index(begin) + len(begin)] + "\n" + block + "\n" + doc[doc.index(end):]
    DOC.write_text(doc)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="run the ported suite and "
                        "write the table into docs/warp-compatibility.md")
    parser.add_argument("--check", action="store_true", help="verify that tests/warp_suite/ "
                        "is exactly what this script generates (exit status 1 if not)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=900, help="seconds per file (report)")
    parser.add_argument("only", nargs="*", help="only files whose path contains one of these")
    args = parser.parse_args()
    if args.check:
        problems = check()
        print("\n".join(problems) or "tests/warp_suite/ is up to date")
        raise SystemExit(1 if problems else 0)
    if args.report:
        report(args.jobs, args.timeout, args.only)
    else:
        port(args.jobs, args.only)


if __name__ == "__main__":
    main()
