"""``Tape.visualize``: the recorded launches as a GraphViz diagram (Warp's ``Tape.visualize``).

Each recorded launch is a node (its kernel's name, its dim in the tooltip); each array it
reads or writes is a node too (an ellipse labelled by ``array_labels`` (pairs, or a dict of
hashable arrays) or by a kernel parameter name it is passed for, the longest one with
``choose_longest_node_name`` or else the first; the tooltip ``array: dtype=..., shape=...``),
with an edge from every array a launch reads to the launch and from the launch to every
array it writes (which parameters a kernel reads and writes: Warp's rules,
numba_sim/autodiff/array_access.py).  A backward function recorded with
``Tape.record_func`` is a node of its own.

The tape's scopes (``record_scope_begin`` / ``record_scope_end``) are clusters.  With
``simplify_graph``, a sequence of launches that repeats back to back (the same kernels with
the same arrays) is drawn once, in a cluster labelled ``repeated <n>x``; the longest
coverage wins, the shortest period among equals, and repeats do not cross a scope's edge.
``hide_readonly_arrays`` leaves out the arrays no launch writes (unless listed in
``track_inputs`` / ``track_outputs``).
"""

import html

import numpy as np

from numba_sim.autodiff.array_access import array_modes


def _kernel_name(kernel):
    function = getattr(kernel, "py_func", None)
    return getattr(function, "__name__", None) or str(getattr(kernel, "key", kernel))


def _array_tooltip(array):
    dtype = getattr(array, "dtype", None)
    return f"array: dtype={np.dtype(dtype).name if dtype is not None else '?'}, " \
           f"shape={tuple(getattr(array, 'shape', ()))}"


class _Launch:
    """One recorded entry as the diagram sees it: a name, a tooltip, its arrays."""

    def __init__(self, entry):
        self.reads, self.writes = [], []
        kernel = getattr(entry, "kernel", None)
        if kernel is None:  # a function recorded with Tape.record_func
            self.name, self.tooltip = getattr(entry.backward, "__name__", "func"), "record_func"
            self.writes = [(None, a) for a in entry.arrays]
            return
        self.name = _kernel_name(kernel)
        self.tooltip = f"dim={entry.dim}"
        read, written = array_modes(kernel)
        for parameter, value in zip(kernel.parameters, list(entry.inputs) + list(entry.outputs)):
            if parameter.array is None or not hasattr(value, "shape"):
                continue
            if parameter.name in read or parameter.name not in written:
                self.reads.append((parameter.name, value))
            if parameter.name in written:
                self.writes.append((parameter.name, value))

    def key(self):
        """What makes two launches the same node of a repeated sequence."""
        return (self.name, tuple(id(a) for _, a in self.reads),
                tuple(id(a) for _, a in self.writes))


def _segments(count, scopes, ignore_scopes):
    """The launches' nesting as a tree: [("launch", i) | ("scope", name, children)]."""
    root = []
    stack = [root]
    markers = [] if ignore_scopes else sorted(
        enumerate(scopes), key=lambda item: (item[1][0], item[0]))
    position = 0
    for _, (index, name, _metadata) in markers:
        while position < min(index, count):
            stack[-1].append(("launch", position))
            position += 1
        if name is not None:
            scope = ("scope", name, [])
            stack[-1].append(scope)
            stack.append(scope[2])
        elif len(stack) > 1:
            stack.pop()
    while position < count:
        stack[-1].append(("launch", position))
        position += 1
    return root


def _repeats(items, keys):
    """*items* (a segment's children) with back-to-back repeated runs of launches grouped as
    ("repeat", count, children)."""
    out, i = [], 0
    while i < len(items):
        best = None  # (coverage, -period, count)
        for period in range(1, (len(items) - i) // 2 + 1):
            block = items[i:i + period]
            if any(item[0] != "launch" for item in block):
                break
            pattern = [keys[item[1]] for item in block]
            count = 1
            while i + (count + 1) * period <= len(items) and all(
                    item[0] == "launch" and keys[item[1]] == pattern[k]
                    for k, item in enumerate(items[i + count * period:i + (count + 1) * period])):
                count += 1
            if count > 1 and (best is None or (count * period, -period) > best[:2]):
                best = (count * period, -period, count)
        if best is None:
            out.append(items[i])
            i += 1
        else:
            period = -best[1]
            out.append(("repeat", best[2], items[i:i + period]))
            i += best[0]
    return out


def visualize(tape, filename=None, simplify_graph=True, hide_readonly_arrays=False,
              array_labels=None, choose_longest_node_name=True, ignore_graph_scopes=False,
              track_inputs=None, track_outputs=None, track_input_names=None,
              track_output_names=None, graph_direction="LR"):
    """The dot code of *tape*'s diagram (written to *filename* too when given)."""
    if graph_direction not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"graph_direction: expected 'LR', 'RL', 'TB' or 'BT', got "
                         f"{graph_direction!r}")
    launches = [_Launch(entry) for entry in tape.launches]
    labels = {}
    pairs = array_labels.items() if isinstance(array_labels, dict) else (array_labels or ())
    for array, label in pairs:
        labels[id(array)] = str(label)
    tracked = {}
    for arrays_, names in ((track_inputs, track_input_names), (track_outputs, track_output_names)):
        for k, array in enumerate(arrays_ or ()):
            tracked[id(array)] = array
            if names and k < len(names):
                labels[id(array)] = str(names[k])

    written = {id(a) for launch in launches for _, a in launch.writes}
    names = {}
    for launch in launches:
        for name, array in launch.reads + launch.writes:
            if name is not None:
                names.setdefault(id(array), []).append(name)
    arrays, lines, edges = {}, [], []

    def array_node(array):
        key = id(array)
        if hide_readonly_arrays and key not in written and key not in tracked:
            return None
        if key not in arrays:
            arrays[key] = f"a{len(arrays)}"
            known = names.get(key)
            automatic = (max(known, key=len) if choose_longest_node_name else known[0]) \
                if known else arrays[key]
            label = labels.get(key, automatic)
            lines.append(f'    {arrays[key]} [label=<{html.escape(label)}>, shape=ellipse, '
                         f'style=filled, fillcolor="lightgray", '
                         f'tooltip="{html.escape(_array_tooltip(array))}"];')
        return arrays[key]

    for array in tracked.values():
        array_node(array)

    def emit(items, depth):
        indent = "    " * depth
        for item in items:
            if item[0] == "launch":
                launch = launches[item[1]]
                node = f"k{item[1]}"
                lines.append(f'{indent}{node} [label=<<b>{html.escape(launch.name)}</b>>, '
                             f'shape=box, style="rounded,filled", fillcolor="lightblue", '
                             f'tooltip="{html.escape(launch.tooltip)}"];')
                for _, array in launch.reads:
                    source = array_node(array)
                    if source is not None:
                        edges.append(f"    {source} -> {node};")
                for _, array in launch.writes:
                    target = array_node(array)
                    if target is not None:
                        edges.append(f"    {node} -> {target};")
            else:
                label = item[1] if item[0] == "scope" else f"repeated {item[1]}x"
                children = item[2]
                lines.append(f"{indent}subgraph cluster_{len(lines)} {{")
                lines.append(f'{indent}    label="{html.escape(label)}"; style=rounded;')
                emit(_repeats(children, keys) if simplify_graph and item[0] == "scope"
                     else children, depth + 1)
                lines.append(f"{indent}}}")

    keys = [launch.key() for launch in launches]
    tree = _segments(len(launches), getattr(tape, "scopes", []), ignore_graph_scopes)
    emit(_repeats(tree, keys) if simplify_graph else tree, 1)
    chart = "\n".join(lines + edges)
    code = f"""digraph " " {{
    graph [fontname="Helvetica,Arial,sans-serif",tooltip=" "];
    node [fontname="Helvetica,Arial,sans-serif", margin="0.05,0.02", width=0, height=0, tooltip=" "];
    edge [fontname="Helvetica,Arial,sans-serif",tooltip=" "];
    rankdir={graph_direction};

{chart}
}}
"""
    if filename is not None:
        with open(filename, "w") as f:
            f.write(code)
    return code
