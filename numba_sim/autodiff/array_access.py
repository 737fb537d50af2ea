"""Warp's ``wp.config.verify_autograd_array_access``: write-after-read across tape launches.

With ``sim.config.verify_autograd_array_access = True``, each launch recorded on a tape
marks the arrays its kernel writes, then those it reads (as Warp: a kernel that writes an
array and reads it back is not flagged here), and writing an array that an earlier
recorded launch read prints Warp's warning to stderr: the array "is being written to but
has already been read from in a previous launch. This may corrupt gradient computation in
the backward pass."  ``Tape.backward`` (its reads are consumed) and ``Tape.reset`` clear
the marks of the arrays their launches used.

numba_sim's arrays are plain NumPy / CuPy arrays, so the read mark lives beside them, in a
registry keyed by the array object and holding it weakly (as the gradients do,
numba_sim/autodiff/gradients.py).  Reading through a view marks the arrays it views too
(``a.base``, its base...), as Warp marks a view's parents.

Which array parameters a kernel reads and writes is read off its syntax tree, as Warp's
code generator records it: ``x[i]`` loaded reads ``x``; ``x[i] = v``, ``x[i] += v``,
``x[i].c = v`` and ``atomic_*(x, ...)`` write it (an in-place update is a write only, as
Warp's atomic add); an array passed to a ``@sim.func`` is read / written as the func's
parameter is (through nested funcs, and through a func passed for a ``sim.Function``
parameter).  An array bound to a local name (``row = x[i]`` of a
2-D ``x``, ``y = x``) is not followed.  A kernel that writes an array parameter after
reading it gets Warp's other warning ("... is being written to after it has been read
from within the same kernel ..."), once, when its access is first analysed.
"""

import ast
import inspect
import sys
import weakref

from numba_sim import arrays
from numba_sim.autodiff.adjoint_kernel import _Function
from numba_sim.func_overloads import FuncOverloads
from numba_sim.kernel import Func

_READ = {}
"""id(array) -> weak reference to an array read by a recorded launch."""


def _is_array(value):
    return arrays.device_of(value) is not None


def is_read(array):
    """Whether a launch recorded on a tape read *array* (Warp's ``a._is_read``)."""
    reference = _READ.get(id(array))
    return reference is not None and reference() is array


def set_read(array, value):
    """Set or clear *array*'s read mark (Warp's ``a._is_read = value``)."""
    if not _is_array(array):
        raise TypeError(f"array: expected a NumPy or CuPy array, got {type(array).__name__}")
    if not isinstance(value, (bool, int)):
        raise TypeError(f"value: expected a bool, got {value!r}")
    key = id(array)
    if not value:
        if is_read(array):
            del _READ[key]
        return

    def forget(reference, key=key):
        if _READ.get(key) is reference:
            del _READ[key]

    _READ[key] = weakref.ref(array, forget)


def _views_chain(array):
    while array is not None and _is_array(array):
        yield array
        array = getattr(array, "base", None)


def mark_read(array):
    """Mark *array* and the arrays it views as read (Warp's ``array.mark_read``)."""
    for each in _views_chain(array):
        set_read(each, True)


def clear(array):
    """Clear the read marks of *array* and the arrays it views (Warp's tape flag reset)."""
    for each in _views_chain(array):
        set_read(each, False)


def mark_write(array, arg_name, kernel):
    """Warn on stderr if *array*, passed as *arg_name* to *kernel*, was read by an earlier
    recorded launch (Warp's ``array.mark_write`` and its message)."""
    if not is_read(array):
        return
    code = kernel.py_func.__code__
    print(f"Warp UserWarning: Array {array!r} passed to argument {arg_name} in kernel "
          f"{kernel.py_func.__name__} at {code.co_filename}:{code.co_firstlineno} is being "
          f"written to but has already been read from in a previous launch. This may corrupt "
          f"gradient computation in the backward pass.", file=sys.stderr)


# -- which parameters a kernel or func reads and writes


def _store_chain(target):
    """(the name at the base of an element store's target, the nodes on the way), or
    (None, ()) for a target that stores no element."""
    nodes, node, through_subscript = [], target, False
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        through_subscript = through_subscript or isinstance(node, ast.Subscript)
        nodes.append(node)
        node = node.value
    if isinstance(node, ast.Name) and through_subscript:
        return node.id, nodes
    return None, ()


def _walk(roots):
    for root in roots:
        yield from ast.walk(root)


def _modes_of(function, names, visiting, bindings=None, roots=None):
    """(read names, written names) among *names* (parameters of the parsed *function*) in
    *roots* (its nodes; all of it by default); *bindings*: its ``sim.Function`` parameters
    -> the funcs passed for them."""
    read, written, stores = set(), set(), set()
    roots = [function.definition] if roots is None else roots
    for node in _walk(roots):
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign))
                   else [])
        for target in targets:
            for each in (target.elts if isinstance(target, ast.Tuple) else [target]):
                base, chain = _store_chain(each)
                if base in names:
                    written.add(base)
                    stores.update(id(n) for n in chain)
    for node in _walk(roots):
        if isinstance(node, ast.Subscript) and id(node) not in stores \
                and isinstance(node.value, ast.Name) and node.value.id in names:
            read.add(node.value.id)
        elif isinstance(node, ast.Call):
            _call_modes(function, node, names, read, written, visiting, bindings or {})
    return read, written


def _is_func(value):
    return isinstance(value, (Func, FuncOverloads))


def _call_modes(function, node, names, read, written, visiting, bindings):
    target = function.resolve(node.func)
    if target is None and isinstance(node.func, ast.Name):  # g(...) of a sim.Function g
        target = bindings.get(node.func.id)
    callees = (target.members if isinstance(target, FuncOverloads)
               else [target] if isinstance(target, Func) else [])
    if not callees:
        name = getattr(target, "__name__", "") or ""
        if name.startswith("atomic_") and node.args and isinstance(node.args[0], ast.Name) \
                and node.args[0].id in names:
            written.add(node.args[0].id)
        return
    for callee in callees:
        parameters = list(inspect.signature(callee.func).parameters)
        bound = list(zip(parameters, node.args)) + [(k.arg, k.value) for k in node.keywords]
        passed = {parameter: bindings.get(argument.id) if isinstance(argument, ast.Name)
                  and argument.id in bindings else function.resolve(argument)
                  for parameter, argument in bound}
        callee_read, callee_written, _ = _func_modes(
            callee, visiting, {p: f for p, f in passed.items() if _is_func(f)})
        for parameter, argument in bound:
            if isinstance(argument, ast.Name) and argument.id in names:
                if parameter in callee_read:
                    read.add(argument.id)
                if parameter in callee_written:
                    written.add(argument.id)


def _func_modes(func, visiting, bindings):
    """(read, written, parameter names) of a ``@sim.func``'s parameters, with the funcs
    *bindings* passed for its ``sim.Function`` parameters (cached when there are none)."""
    cached = None if bindings else func.__dict__.get("_sim_array_access")
    if cached is not None:
        return cached
    if func in visiting:  # a recursive func: what the outer visit finds
        return frozenset(), frozenset(), ()
    function = _Function(func.func)
    read, written = _modes_of(function, set(function.parameters), visiting | {func}, bindings)
    cached = (frozenset(read), frozenset(written), tuple(function.parameters))
    if not bindings:
        func._sim_array_access = cached
    return cached


def _statements_in_order(statements):
    """The simple statements and the tests of compound ones, in the order they run first."""
    for statement in statements:
        if isinstance(statement, (ast.If, ast.While)):
            yield statement.test
        elif isinstance(statement, ast.For):
            yield statement.iter
        elif not isinstance(statement, (ast.With, ast.Try)):
            yield statement
            continue
        yield from _statements_in_order(statement.body)
        yield from _statements_in_order(getattr(statement, "orelse", []))


def _warn_read_then_written(kernel, function, names):
    """Warp's warning (its code generator's) for an array parameter *kernel* writes after
    reading it (a statement's values are read before its targets are written)."""
    read_so_far = set()
    for statement in _statements_in_order(function.definition.body):
        read, written = _modes_of(function, names, frozenset(), roots=[statement])
        for name in sorted(written & (read_so_far | read)):
            print(f"Warp UserWarning: Array passed to argument {name} in kernel "
                  f"{kernel.py_func.__name__} at {kernel.py_func.__code__.co_filename}:"
                  f"{statement.lineno} is being written to after it has been read from within "
                  f"the same kernel. This may corrupt gradient computation in the backward "
                  f"pass.", file=sys.stderr)
        read_so_far |= read


def array_modes(kernel):
    """(names of the array parameters *kernel* reads, names of those it writes), by Warp's
    rules (a store, ``+=`` or atomic writes and does not read); cached on the kernel."""
    cached = kernel.__dict__.get("_sim_array_modes")
    if cached is None:
        function = _Function(kernel.py_func, kernel.code_transformers)
        names = {p.name for p in kernel.parameters if p.array is not None}
        read, written = _modes_of(function, names, frozenset())
        cached = kernel._sim_array_modes = (frozenset(read), frozenset(written), function, names)
    return cached[:2]


def access_modes(kernel):
    """:func:`array_modes`, with Warp's warning, once per kernel (as Warp's code generator
    gives it when it builds the kernel), for an array it writes after reading it."""
    read, written = array_modes(kernel)
    if read & written and not kernel.__dict__.get("_sim_read_then_written_warned"):
        kernel._sim_read_then_written_warned = True
        _, _, function, names = kernel._sim_array_modes
        _warn_read_then_written(kernel, function, names)
    return read, written


def check_launch(kernel, args):
    """Mark the arrays of a launch recorded on a tape: writes first (warning on an array an
    earlier launch read), then reads, as Warp's ``Tape._check_kernel_array_access``."""
    read, written = access_modes(kernel)
    for parameter, value in zip(kernel.parameters, args):
        if parameter.name in written and _is_array(value):
            mark_write(value, parameter.name, kernel)
        if parameter.name in read and _is_array(value):
            mark_read(value)


def clear_launches(launches):
    """Clear the read marks of the arrays of *launches* (a tape's recorded launches)."""
    for entry in launches:
        values = entry.arrays if isinstance(entry.arrays, list) else entry.inputs + entry.outputs
        for value in values:
            if _is_array(value):
                clear(value)
