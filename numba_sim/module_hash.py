"""Warp's ``Module.hash_module()`` for numba_sim's modules (:class:`numba_sim.kernel.KernelModule`).

The hash is a content hash of what the module's kernels compile from now, as Warp's is:

- each kernel's code (its code object: instructions, constants and names, nested code
  objects included; not its file, line numbers or comments, so a module loaded from a
  temporary file that is gone hashes as one loaded from disk), its parameters'
  annotations, its defaults and its options;
- the current values of the globals and closure variables it reads: numbers, strings,
  NumPy scalars and arrays (which Numba compiles in as constants), tuples, lists and dicts
  of them, value-type and struct values by value; ``@sim.func`` s (each overload) and
  the funcs they read, by their content (code, annotations, defaults, what they read), so
  editing a func a kernel calls changes the kernel's module's hash; ``@sim.struct`` classes
  by their fields; other functions, classes and modules by name;
- the module's options.

Module names are not part of the hash (Warp's is the same for two modules with the same
content). A kernel defined again under the same name replaces the earlier one: only the
latest definition of each name counts, as in Warp's modules.
"""

import hashlib
import types

import numpy as np

from numba_sim import arrays
from numba_sim.func_overloads import FuncOverloads, is_func
from numba_sim.structs import Struct

__all__ = ["describe", "hash_module", "kernel_content", "kernel_name"]


def hash_module(module):
    """The hex SHA-256 of *module*'s options and its kernels' contents."""
    digest = hashlib.sha256(repr(sorted(module.options.items(), key=str)).encode())
    for item in sorted(kernel_content(k) for k in list(module.definitions.values())):
        digest.update(item.encode())
    return digest.hexdigest()


def kernel_name(kernel):
    """The name a kernel has in its module: its ``name`` option, else its qualified name."""
    return kernel.options.get("name") or kernel.py_func.__qualname__


def kernel_content(kernel):
    """A kernel's code, parameters, options and the values it reads from outside, as text."""
    seen = set()
    options = sorted(((k, v) for k, v in kernel.options.items() if k != "module"), key=str)
    annotations = [(p.name, describe(p.annotation, seen)) for p in kernel.parameters]
    return repr((kernel_name(kernel), _function_content(kernel.py_func, seen),
                 annotations, options))


def _function_content(fn, seen):
    """*fn*'s code, defaults and the values it reads (the globals its code names, its
    closure), described."""
    reads = {}
    for name in _names(fn.__code__):
        if name in fn.__globals__:
            reads[name] = fn.__globals__[name]
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            reads[name] = cell.cell_contents
        except ValueError:  # not yet bound
            reads[name] = None
    described = sorted((name, describe(value, seen)) for name, value in reads.items())
    defaults = [describe(d, seen) for d in fn.__defaults__ or ()]
    kwdefaults = sorted((k, describe(v, seen)) for k, v in (fn.__kwdefaults__ or {}).items())
    return (_code(fn.__code__), defaults, kwdefaults, described)


def _names(code):
    """The global names *code* and its nested code objects (comprehensions, lambdas) read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _code(code):
    """What a code object computes: its instructions, constants (nested code objects
    recursively) and the names it uses; not its file, first line or line table."""
    consts = tuple(_code(c) if isinstance(c, types.CodeType) else f"{type(c).__name__}:{c!r}"
                   for c in code.co_consts)
    return (code.co_code.hex(), consts, code.co_names, code.co_varnames, code.co_freevars,
            code.co_argcount, code.co_kwonlyargcount, code.co_flags)


def describe(value, seen=None):
    """A stable description of a value a kernel or func reads (never an address)."""
    seen = set() if seen is None else seen
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}({', '.join(describe(v, seen) for v in value)})"
    if isinstance(value, dict):  # a table a kernel reads (``sim.static(table[key])``)
        items = sorted((repr(k), describe(v, seen)) for k, v in value.items())
        return f"dict({', '.join(f'{k}: {v}' for k, v in items)})"
    if isinstance(value, np.ndarray):  # a global array compiles in as a constant (Numba's)
        data = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return f"ndarray({value.dtype}, {value.shape}, {data})"
    if isinstance(value, FuncOverloads):
        return f"funcs {value.__qualname__}[{'; '.join(describe(m, seen) for m in value.members)}]"
    if is_func(value):
        fn = value.func
        if id(fn) in seen:  # a func that (indirectly) reads itself: by name the second time
            return f"func {fn.__qualname__}"
        seen.add(id(fn))
        annotations = sorted((k, describe(v, seen))
                             for k, v in getattr(fn, "__annotations__", {}).items())
        return f"func {fn.__qualname__}{(annotations, _function_content(fn, seen))!r}"
    if isinstance(value, type) and issubclass(value, Struct) and value is not Struct:
        fields = [(f.name, describe(f.annotation, seen)) for f in value._fields]
        return f"struct {value.__qualname__}{fields!r}"
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if _is_array_annotation(value):
        return f"array(dtype={describe(value.dtype, seen)}, ndim={value.ndim})"
    name = getattr(value, "__qualname__", None)
    if name is not None:
        return f"{getattr(value, '__module__', '')}.{name}"
    if hasattr(value, "spec") or hasattr(value, "numpy_value") or isinstance(value, Struct):
        return f"{type(value).__qualname__}:{value!r}"  # a value type or struct value
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def _is_array_annotation(value):
    return type(value) is arrays.array
