"""``sim.map(func, *inputs, out=None)``: Warp's ``wp.map``, an elementwise kernel made from a
``@sim.func``, a builtin or a lambda and launched over the broadcast shape of the inputs.

The kernel is generated as source (``__sim_map__``, registered in :mod:`linecache` so that
the kernel language can read it like any other kernel) with one parameter per input and per
output, and cached per function, input types and broadcast pattern (:data:`map_cache`).

* Inputs: arrays (NumPy or CUDA) and single values (scalars, value types, structs: the same
  for every element).  At least one input is an array.  NumPy's broadcasting rules give the
  output shape: an axis of length 1 repeats.
* Element types: an array's elements are its scalars, unless the function is a
  ``@sim.func`` whose parameter is annotated with a value type or a struct: then the
  array's trailing storage axes are that type (numba_sim's value arrays carry no element
  type of their own).  Python's ``float`` / ``int`` values are float32 / int32, as in Warp.
* Outputs: the function's result type(s), found by typing the call; a tuple result gives
  one output array per item (returned as a list).  ``out`` gives the arrays to write (one
  array, or a list of them); they must have the result's shape and dtype.
* A lambda becomes a ``@sim.func`` made from its source (its body is kernel language) over
  its globals and closure variables.
* ``return_kernel=True`` returns the kernel instead of launching it; launch it with the
  inputs and outputs as parameters, in that order.
"""

import ast
import builtins
import inspect
import itertools
import linecache

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.registry import cpu_target
from numba.core.typing.typeof import typeof
from numba.np import numpy_support

from numba_sim import arrays, autodiff_hooks
from numba_sim.annotations import function_annotations
from numba_sim.kernel import Func, func, kernel
from numba_sim.launcher import launch
from numba_sim.structs import Struct
from numba_sim.threads import tid as thread_index
from numba_sim.types import Value, matrix, vector
from numba_sim.typing.structs import StructType
from numba_sim.typing.value_types import ValueType

map_cache = {}
"""(function, input kinds, broadcast pattern, output types) -> the generated kernel."""

_SOURCES = itertools.count()


# --------------------------------------------------------------------------
# Inputs


def _is_array(value):
    return isinstance(value, np.ndarray) or arrays.device_of(value) == "cuda"


def _annotations(fn):
    """The parameter annotations of a ``@sim.func`` (None for a builtin or a lambda)."""
    if not isinstance(fn, Func):
        return None
    source = getattr(fn.py_func, "__wrapped_kernel_source__", fn.py_func)
    given = function_annotations(source)
    return [given.get(name) for name in inspect.signature(source).parameters]


def _annotated_type(annotation):
    """What an annotation asks of an argument: a value or struct class, a NumPy dtype for a
    scalar type (``float`` is float32), or None (none, ``Any``, generic)."""
    if _is_element_class(annotation):
        return annotation
    if annotation in (builtins.float, builtins.int) or (
            isinstance(annotation, type) and issubclass(annotation, np.number)):
        return arrays.element_dtype(annotation)
    return None


def _check_annotations(name, annotations, elements):
    """Warp's rule for a ``@sim.func``: its annotated parameters take their types only."""
    for annotation, element in zip(annotations, elements):
        expected, given = _annotated_type(annotation), _annotated_type(element)
        if expected is not None and given is not None and expected != given:
            raise TypeError(f"Function {name} does not support the provided argument types "
                            f"{', '.join(_dtype_name(e) for e in elements)}")


def _is_element_class(annotation):
    """Whether *annotation* is a value class or a struct class."""
    return isinstance(annotation, type) and issubclass(annotation, (Value, Struct))


def _array_input(value, annotation):
    """(element type, shape of elements) of an array input."""
    if _is_element_class(annotation):
        _, storage = arrays.storage_of(annotation)
        if storage and tuple(value.shape[len(value.shape) - len(storage):]) != tuple(storage):
            raise TypeError(f"sim.map: an array of shape {tuple(value.shape)} cannot hold "
                            f"{annotation.__name__} elements (trailing axes {tuple(storage)})")
        return annotation, tuple(value.shape[:len(value.shape) - len(storage)])
    return np.dtype(value.dtype).type, tuple(value.shape)


def _element_choices(value, annotation):
    """The (element type, shape of elements) an array input may stand for, most likely first:
    the annotated type, else its scalars, then (for a builtin or a lambda, which say nothing
    of it) a vector of its last axis and a matrix of its last two (numba_sim's value arrays
    carry no element type: an ``(n, 3)`` float32 array is n vec3s to ``transform_point``)."""
    choices = [_array_input(value, annotation)]
    scalar = np.dtype(value.dtype)
    if annotation is not None or scalar.kind not in "iuf" or scalar.itemsize < 4:
        return choices
    shape = tuple(value.shape)
    if len(shape) >= 2:
        choices.append((vector(shape[-1], scalar.type), shape[:-1]))
    if len(shape) >= 3:
        choices.append((matrix(shape[-2:], scalar.type), shape[:-2]))
    return choices


def _value_type(value):
    """The kernel parameter type of a single (non-array) input: Warp's for Python numbers."""
    if isinstance(value, (bool, np.bool_)):
        return builtins.bool
    if isinstance(value, int):
        return np.int32
    if isinstance(value, float):
        return np.float32
    return type(value)


def broadcast_shape(shapes):
    """NumPy's broadcast of *shapes*, with Warp's message when they do not broadcast."""
    result = shapes[0]
    for shape in shapes[1:]:
        try:
            result = np.broadcast_shapes(result, shape)
        except ValueError:
            raise ValueError(f"Shapes {result} and {shape} are not broadcastable") from None
    return tuple(result)


# --------------------------------------------------------------------------
# The function: a lambda made a @sim.func; typing its call


def _lambda_source(fn):
    """The source of the lambda *fn* as the ``ast.Lambda`` node of its file."""
    code = fn.__code__
    source = "".join(linecache.getlines(code.co_filename))
    names = list(code.co_varnames[:code.co_argcount])
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno \
                and [a.arg for a in node.args.args] == names:
            return node
    raise TypeError(f"sim.map: cannot read the source of the lambda defined at "
                    f"{code.co_filename}:{code.co_firstlineno} (a lambda must be written in a "
                    f"file or a notebook cell)")


_LAMBDA_FUNCS = {}
"""`_lambda_key` of a lambda -> its ``@sim.func`` (a lambda evaluated again, in a loop or a
function called again, is a new object with the same code)."""


def _closure_value_key(value):
    """A closure variable's value as part of a cache key: itself if hashable, else its id."""
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value), value)


def _lambda_key(fn):
    """What the ``@sim.func`` of the lambda *fn* is made of: its source (file, line, body),
    the module it reads its globals from and the values of its closure variables."""
    node = _lambda_source(fn)
    closure = tuple((var, _closure_value_key(cell.cell_contents))
                    for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    return ("lambda", fn.__code__.co_filename, ast.unparse(node), id(fn.__globals__), closure)


def _lambda_func(fn, key):
    """The ``@sim.func`` of the lambda *fn* (of key *key*), over its globals and closure
    variables (made once per key)."""
    made = _LAMBDA_FUNCS.get(key)
    if made is not None:
        return made
    node = _lambda_source(fn)
    name = f"__sim_map_lambda_{next(_SOURCES)}"
    params = ", ".join(a.arg for a in node.args.args)
    text = f"def {name}({params}):\n    return {ast.unparse(node.body)}\n"
    namespace = dict(fn.__globals__)
    for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        namespace[var] = cell.cell_contents
    made = _LAMBDA_FUNCS[key] = func(_define(name, text, namespace))
    return made


def _define(name, text, namespace):
    """The function *name* of the source *text*, run in *namespace*, with its source kept in
    :mod:`linecache` (the kernel language reads it)."""
    filename = f"<numba_sim map {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 (generated code)
    return namespace[name]


def _numba_type(element):
    """The Numba type of an element type (value class, struct class, scalar type)."""
    if _is_element_class(element):
        return typeof(element())
    if element is builtins.bool:
        return types.boolean
    return numpy_support.from_dtype(np.dtype(element))


def _result_types(fn, name, argtypes):
    """The Python-side types of *fn*'s results for Numba argument types *argtypes*."""
    context = cpu_target.typing_context
    context.refresh()
    try:
        sig = context.resolve_function_type(context.resolve_value_type(fn), tuple(argtypes), {})
    except TypingError as error:
        raise TypeError(f"Function {name} does not support the provided argument types "
                        f"{', '.join(builtins.map(str, argtypes))}: {str(error).splitlines()[0]}") from None
    if sig is None:
        raise TypeError(f"Function {name} does not support the provided argument types "
                        f"{', '.join(builtins.map(str, argtypes))}")
    result = sig.return_type
    if result is types.none:
        raise TypeError("The provided function must return a value")
    items = list(result.types) if isinstance(result, types.BaseTuple) else [result]
    return [_python_type(t) for t in items], isinstance(result, types.BaseTuple)


def _typed_inputs(fn, name, choices):
    """(inputs described, result types, whether a tuple) of the first combination of the
    inputs' element *choices* (see `_element_choices`) that *fn* accepts: the inputs' first
    choices unless *fn* rejects them."""
    first_error = None
    for described in itertools.islice(itertools.product(*choices), _MAX_ELEMENT_COMBINATIONS):
        try:
            results, tuple_result = _result_types(
                fn, name, [_numba_type(element) for _, element, _ in described])
        except TypeError as error:
            first_error = first_error or error
            continue
        return list(described), results, tuple_result
    raise first_error


_MAX_ELEMENT_COMBINATIONS = 16
"""How many combinations of the inputs' element choices `_typed_inputs` tries at most."""


def _python_type(numba_type):
    if isinstance(numba_type, (ValueType, StructType)):
        return numba_type.python_class
    if isinstance(numba_type, types.Boolean):
        return builtins.bool
    return np.dtype(str(numba_type)).type


def _function_arity(fn):
    target = getattr(fn, "py_func", fn)
    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    return len(params)


# --------------------------------------------------------------------------
# The kernel


def _index(shape, out_ndim, indices):
    """The index expression of an input of *shape* in an output of *out_ndim* dims."""
    offset = out_ndim - len(shape)
    parts = ["0" if n == 1 else indices[offset + d] for d, n in enumerate(shape)]
    return ", ".join(parts)


def _make_kernel(fn, inputs, shape, results, tuple_result):
    """Generate and compile-lazily the kernel of ``out = fn(*inputs)`` over *shape*."""
    ndim = len(shape)
    indices = [f"__i{d}" for d in range(ndim)]
    namespace = {"__name__": __name__, "__sim_map_func": fn, "__sim_tid": thread_index}
    params, args = [], []
    for k, (kind, element, in_shape) in enumerate(inputs):
        if kind == "array":
            namespace[f"__A{k}"] = arrays.array(dtype=element, ndim=max(len(in_shape), 1))
            params.append(f"in{k}: __A{k}")
            args.append(f"in{k}[{_index(in_shape, ndim, indices)}]")
        else:
            namespace[f"__A{k}"] = element
            params.append(f"in{k}: __A{k}")
            args.append(f"in{k}")
    for k, element in enumerate(results):
        namespace[f"__R{k}"] = arrays.array(dtype=element, ndim=ndim)
        params.append(f"out{k}: __R{k}")
    name = f"__sim_map__{next(_SOURCES)}"
    targets = ", ".join(indices)
    call = f"__sim_map_func({', '.join(args)})"
    lines = [f"def {name}({', '.join(params)}):", f"    {targets} = __sim_tid()"]
    where = ", ".join(indices)
    if tuple_result:
        names = [f"__r{k}" for k in range(len(results))]
        lines.append(f"    {', '.join(names)} = {call}")
        lines += [f"    out{k}[{where}] = {r}" for k, r in enumerate(names)]
    else:
        lines.append(f"    out0[{where}] = {call}")
    return kernel(_define(name, "\n".join(lines) + "\n", namespace))


# --------------------------------------------------------------------------
# Outputs


def _dtype_name(element):
    return getattr(element, "__name__", str(element))


def _expected(element, shape):
    storage_dtype, storage = arrays.storage_of(element)
    return tuple(shape) + tuple(storage), np.dtype(storage_dtype)


def _check_outputs(out, results, shape):
    outputs = out if isinstance(out, (list, tuple)) else [out]
    if not isinstance(out, (list, tuple)) and len(results) > 1:
        raise TypeError(f"Invalid output provided, expected {len(results)} Warp arrays with shape "
                        f"{shape} and dtypes ({', '.join(_dtype_name(r) for r in results)})")
    if len(outputs) != len(results):
        raise TypeError(f"Number of provided output arrays ({len(outputs)}) does not match "
                        f"expected number of function outputs ({len(results)})")
    for k, (array, element) in enumerate(zip(outputs, results)):
        which = f"Output array {k}" if len(results) > 1 else "Output array"
        full_shape, dtype = _expected(element, shape)
        if tuple(array.shape) != full_shape:
            raise TypeError(f"{which} shape {tuple(array.shape)} does not match expected shape "
                            f"{full_shape}")
        if np.dtype(array.dtype) != dtype:
            raise TypeError(f"{which} dtype {np.dtype(array.dtype).name} does not match expected "
                            f"dtype {_dtype_name(element)}")
    return outputs


# --------------------------------------------------------------------------


def map(func, *inputs, out=None, return_kernel=False, block_dim=None, device=None):  # noqa: A001
    """Warp's ``wp.map``: ``func`` (a ``@sim.func``, a builtin or a lambda) applied to the
    elements of the array inputs (broadcast as NumPy does; single values repeat), written to
    new arrays or to *out*.  Returns the output array, a list of them for a tuple result, or
    with ``return_kernel=True`` the kernel.  See :mod:`numba_sim.map_kernels`."""
    if not callable(func):
        raise TypeError(f"sim.map: func: expected a @sim.func, a builtin or a lambda, got "
                        f"{func!r}")
    name = getattr(func, "__qualname__", getattr(func, "__name__", repr(func)))
    name = name.replace("<", "_").replace(">", "_").replace(".", "_")  # as Warp names funcs
    arity = _function_arity(func)
    if arity is not None and arity != len(inputs):
        raise TypeError(f"Number of input arguments ({len(inputs)}) does not match expected "
                        f"number of function arguments ({arity})")
    if inspect.isfunction(func) and func.__name__ == "<lambda>":
        function_key = _lambda_key(func)
        callee = _lambda_func(func, function_key)
    else:
        function_key = callee = func
    annotations = _annotations(callee) or [None] * len(inputs)
    choices = [[("array", element, shape) for element, shape in _element_choices(value, annotation)]
               if _is_array(value) else [("value", _value_type(value), ())]
               for value, annotation in zip(inputs, annotations)]
    if not any(kind == "array" for (kind, _, _), *_ in choices):
        raise ValueError("map requires at least one warp.array input")
    described, results, tuple_result = _typed_inputs(callee, name, choices)
    if annotations is not None and isinstance(callee, Func) and callee is func:
        _check_annotations(name, annotations, [element for _, element, _ in described])
    shape = broadcast_shape([shape for kind, _, shape in described if kind == "array"])
    key = (function_key, tuple((kind, element, tuple(n == 1 for n in s)) for kind, element, s in described),
           len(shape), tuple(results))
    made = map_cache.get(key)
    if made is None:
        made = map_cache[key] = _make_kernel(callee, described, shape, results, tuple_result)
    if return_kernel:
        return made
    device = device or next(arrays.device_of(v) for v in inputs if _is_array(v))
    if out is None:
        # Warp's rule: the outputs have gradients when an input array has one
        differentiable = any(_is_array(v) and autodiff_hooks.has_gradient(v) for v in inputs)
        outputs = [arrays.empty(shape, dtype=element, device=device,
                                requires_grad=differentiable) for element in results]
    else:
        outputs = _check_outputs(out, results, shape)
    launch_inputs = [v if kind == "array" or not isinstance(v, (int, float)) else element(v)
                     for v, (kind, element, _) in zip(inputs, described)]
    launch(made, dim=shape or (1,), inputs=launch_inputs, outputs=list(outputs), device=device)
    if out is not None:
        return out
    return outputs if tuple_result else outputs[0]


__all__ = ["map", "map_cache"]
