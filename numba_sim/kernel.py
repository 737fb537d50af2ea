"""``@sim.kernel`` and ``@sim.func``.

A :class:`Kernel` is a description: the Python function, its parameters and
its body rewritten into the kernel language (kernel_language.py).  Launching
and compiling belong to launcher.py, which generates and caches the launchers
(per device, launch dimensionality and mode); ``kernel.compile`` and
``kernel.inspect`` hand the kernel to it.
"""

import inspect
import re
import typing
import weakref

from numba.core import types
from numba.core import typing as numba_typing
from numba.core.registry import CPUDispatcher

from numba_sim import (config, kernel_language, kernel_ops, launch_bounds, launcher,
                       module_hash, redefinition, structure_ids)
from numba_sim import autodiff_hooks
from numba_sim.func_overloads import FuncOverloads, annotations_of, scalar_annotation
from numba_sim.annotations import function_annotations
from numba_sim.parameters import Parameter


class Func(CPUDispatcher):
    """A ``@sim.func``: a Numba device function that runs as Python when called from Python.

    It is a Numba CPU dispatcher over the kernel-language version of the
    function, so kernels, other funcs and plain ``@njit`` code call it
    compiled, and numba-cuda compiles it as a device function for CUDA code.
    """

    def __call__(self, *args, **kwargs):
        """Called from Python: the function, run as Python, with Warp's checks of a Python-scope
        call (an overload for the arguments, then their number)."""
        overload = self.get_overload([_python_scope_type(a) for a in args],
                                     {k: _python_scope_type(v) for k, v in kwargs.items()})
        name = self.__name__
        if overload is None:
            raise RuntimeError(f"Error calling function '{name}', no overload found for "
                               f"arguments {args!r}{f' {kwargs!r}' if kwargs else ''}")
        parameters = (overload._python_signature()[0] if isinstance(overload, Func)
                      else inspect.signature(overload.func)).parameters
        given = len(args) + len(kwargs)
        if given > len(parameters):
            raise RuntimeError(f"Invalid number of arguments for function '{name}', expected "
                               f"{len(parameters)}, got {given}")
        return overload.py_func(*args, **kwargs)

    @property
    def func(self):
        """Warp's ``Function.func``: the Python function as written."""
        return getattr(self.py_func, "__wrapped_kernel_source__", self.py_func)

    def get_overload(self, arg_types, kwarg_types=None):
        """Warp's ``Function.get_overload(arg_types, kwarg_types)``: this func if it takes
        arguments of *arg_types* (and keyword arguments of *kwarg_types*), else None.  A
        parameter annotated ``sim.Function`` takes funcs and builtins only (given as
        themselves); the others take what Python-mode runs.  With one argument, a signature,
        it is Numba's ``Dispatcher.get_overload`` (the compiled entry point), which Numba
        calls."""
        if kwarg_types is None:
            return super().get_overload(arg_types)
        signature, function_parameters = self._python_signature()
        try:
            bound = signature.bind(*arg_types, **kwarg_types)
        except TypeError:
            return None
        for name in function_parameters & bound.arguments.keys():
            if not _is_function_value(bound.arguments[name]):
                return None
        return self

    def get_call_template(self, args, kws):
        """Numba's typing of a compiled call: a constant argument (an int, float or bool
        literal) of a parameter annotated with a scalar type takes that type, as Warp
        converts constants (``f(123)`` of ``f(x: int)`` is an int32 inside ``f``; one
        specialization for every literal)."""
        return _constants_converted(self, super().get_call_template, args, kws)

    @property
    def _CUDATypingContext__dispatcher(self):
        """The CUDA device function numba-cuda calls for this func (its typing context reads
        this attribute, else makes a plain one): one that converts constants likewise."""
        cached = self.__dict__.get("_cuda_dispatcher")
        if cached is None:
            targetoptions = dict(self.targetoptions, device=True)
            targetoptions.pop("no_cpython_wrapper", None)  # a CPU option
            targetoptions.setdefault("debug", False)
            targetoptions.setdefault("opt", True)
            cached = self._cuda_dispatcher = _cuda_func_class()(self.py_func, targetoptions)
            cached._sim_func = self
        return cached

    def _scalar_annotations(self):
        """The Numba scalar type each parameter is annotated with (None where it is not a
        scalar type), read once."""
        cached = self.__dict__.get("_scalar_annotations_cache")
        if cached is None:
            cached = self._scalar_annotations_cache = tuple(
                scalar_annotation(a) for a in annotations_of(self))
        return cached

    def _python_signature(self):
        """(signature, names of the parameters annotated ``sim.Function``) of the function
        as written, read once."""
        cached = self.__dict__.get("_python_signature_cache")
        if cached is None:
            annotations = function_annotations(self.func)
            cached = self._python_signature_cache = (
                inspect.signature(self.func),
                frozenset(n for n, a in annotations.items() if a is Func))
        return cached

    def __repr__(self):
        return f"<numba_sim func {self.py_func.__qualname__}>"


def _python_scope_type(value):
    """What Warp's ``get_overload`` takes for an argument of a Python-scope call: a function
    value itself (a ``sim.Function`` parameter's), else the value's type."""
    return value if callable(value) and not isinstance(value, type) else type(value)


def _is_function_value(value):
    """Whether *value* may be passed for a ``sim.Function`` parameter: a ``@sim.func``, an
    overload set, or one of numba_sim's builtins."""
    return isinstance(value, (Func, FuncOverloads)) or (
        callable(value) and getattr(value, "__module__", "").split(".")[0] == "numba_sim")


Function = Func
"""Warp's ``wp.Function``, the class of its ``@wp.func`` s (annotations of function-valued
parameters: ``def apply(g: sim.Function, x: float): return g(x)``)."""

WARP_KERNEL_OPTIONS = frozenset({
    "name", "enable_backward", "launch_bounds", "cuda_max_registers", "enable_cuda_smem_spilling",
    "cluster_dim", "module", "module_options", "entry_point_abi", "grid_stride"})
"""``@wp.kernel(...)``'s options (Warp 1.19). Accepted so that Warp code ports as it is; they
change nothing here (numba_sim compiles each kernel on its own, with numba's defaults),
except ``enable_backward``, which is kept for the adjoint (docs/porting-from-warp.md)."""

WARP_FUNC_OPTIONS = frozenset({"name", "module", "inline"})
"""``@wp.func(...)``'s options (Warp 1.19), accepted with no effect likewise, except
``inline=True``: the func is inlined into its callers on the CPU (Numba's
``inline="always"``: its code joins theirs, where LLVM would call a large func), as Warp
forces inlining; CUDA inlines device code at link time anyway."""


def _check_options(decorator, options, known):
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"@sim.{decorator}: unknown option{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(map(repr, unknown))} (Warp's options are "
                        f"{', '.join(sorted(known))})")


_P = typing.ParamSpec("_P")
_R = typing.TypeVar("_R")


@typing.overload
def func(fn: typing.Callable[_P, _R], /) -> typing.Callable[_P, _R]: ...


@typing.overload
def func(*, name: typing.Optional[str] = None, module: typing.Any = None,
         inline: typing.Optional[bool] = None
         ) -> typing.Callable[[typing.Callable[_P, _R]], typing.Callable[_P, _R]]: ...


def func(fn=None, **options):  # the overloads above are for static type checkers (Warp's)
    """Decorator: a Warp-style device function (``@wp.func``, ``@wp.func(...)``)."""
    _check_options("func", options, WARP_FUNC_OPTIONS)
    inline = options.get("inline")
    if inline is not None and not isinstance(inline, bool):
        raise TypeError(f"inline must be a bool or None, got {type(inline).__name__}: "
                        f"{inline!r}")
    if fn is None:
        return lambda fn: func(fn, **options)
    redefinition.note_definition(fn)
    body = kernel_language.rewrite(fn, is_kernel=False)
    # no CPython wrapper: compiled code calls a func, Python runs it as Python (__call__), so
    # a func may return what Python cannot hold (a local array of structs: Warp's fixedarray)
    targetoptions = {"nopython": True, "boundscheck": None, "no_cpython_wrapper": True}
    if inline:  # WARP_FUNC_OPTIONS
        targetoptions["inline"] = "always"
    dispatcher = Func(body, locals={}, targetoptions=targetoptions)
    dispatcher.__doc__ = fn.__doc__
    result = _with_overloads(fn, dispatcher)
    kernel_ops.note_user_function(fn.__name__, result)  # Warp's operator overloads
    return result


def _constants_converted(dispatcher, base, args, kws):
    """``base(args, kws)`` (a dispatcher's ``get_call_template``) with the literal arguments of
    the parameters *dispatcher*'s func annotates with scalar types converted to those types,
    and only the specialization for them in the template."""
    func = getattr(dispatcher, "_sim_func", dispatcher)
    pysig, folded = dispatcher._compiler.fold_argument_types(args, kws) \
        if hasattr(dispatcher, "_compiler") else dispatcher.fold_argument_types(args, kws)
    annotations = func._scalar_annotations()
    converted = tuple(
        annotation if annotation is not None and isinstance(arg, types.Literal)
        and isinstance(arg.literal_type, (types.Integer, types.Float, types.Boolean))
        else arg for arg, annotation in zip(folded, annotations + (None,) * len(folded)))
    if converted == tuple(folded):
        return base(args, kws)
    template, pysig, _, _ = base(converted, {})
    signatures = [s for s in dispatcher.nopython_signatures if tuple(s.args) == converted]
    template = numba_typing.make_concrete_template(template.__name__, key=template.key,
                                             signatures=signatures or
                                             dispatcher.nopython_signatures)
    return template, pysig, converted, {}


_CUDA_FUNC_CLASS = []


def _cuda_func_class():
    """numba-cuda's device dispatcher with the constant conversion of :class:`Func`."""
    if not _CUDA_FUNC_CLASS:
        from numba.cuda.dispatcher import CUDADispatcher  # CUDA only: numba-cuda on demand

        class CudaFunc(CUDADispatcher):
            def get_call_template(self, args, kws):
                return _constants_converted(self, super().get_call_template, args, kws)

        _CUDA_FUNC_CLASS.append(CudaFunc)
    return _CUDA_FUNC_CLASS[0]


def _with_overloads(fn, dispatcher):
    """*dispatcher*, or the overload set it joins: a module-level ``@sim.func`` defined again
    under its name with other annotations is an overload, as in Warp (func_overloads.py)."""
    previous = fn.__globals__.get(fn.__name__)
    if isinstance(previous, Func) and previous.py_func.__qualname__ == fn.__qualname__ \
            and annotations_of(previous) != annotations_of(fn):
        return FuncOverloads(previous).add(dispatcher)
    if isinstance(previous, FuncOverloads) and previous.__qualname__ == fn.__qualname__:
        return previous.add(dispatcher)
    return dispatcher


class KernelRecord:
    """What numba_sim records of a kernel's source when it is rewritten, under the names of
    Warp's ``Adjoint`` (``kernel.adj``): ``source``, ``fun_name``, ``filename``,
    ``resolved_static_expressions`` (each ``sim.static`` expression evaluated then, by its
    source, -> its value) and ``has_unresolved_static_expressions`` (one read a local
    variable: it stays an expression evaluated when the kernel runs).  Warp's generated code
    (``blocks``, ``build()``) has no counterpart: numba_sim generates none."""

    def __init__(self, kernel):
        fn = kernel.py_func
        self.fun_name = fn.__name__
        self.filename = fn.__code__.co_filename
        try:
            self.source = inspect.getsource(fn)
        except (OSError, TypeError):
            self.source = None
        statics = getattr(kernel.body, "__sim_statics__", ({}, False))
        self.resolved_static_expressions = dict(statics[0])
        self.has_unresolved_static_expressions = statics[1]


class KernelModule:
    """Warp's ``wp.Module`` (``kernel.module``, ``sim.get_module(name)``): the kernels of a
    Python module (one per name; ``@sim.kernel(module="unique")`` makes one per kernel) and
    Warp's module options (``sim.set_module_options``).  numba_sim compiles each kernel on
    its own, at its first launch: the options are Warp's, with Warp's defaults; ``mode``
    (None: ``sim.config.mode``) is the mode the module's kernels compile in
    (:meth:`compile_mode`), ``enable_backward`` is kept for the adjoint, and the others
    configure Warp's own compiler (docs/warp-compatibility.md)."""

    _named = {}
    """Python module name -> its KernelModule (Warp's ``user_modules``)."""

    def __init__(self, name, loader=None):
        if not isinstance(name, str):
            raise TypeError(f"name: expected a module name (str), got {name!r}")
        self.name = name
        self.loader = loader
        self.options = {
            "max_unroll": config.max_unroll, "enable_backward": config.enable_backward,
            "enable_mathdx_gemm": None, "enable_mathdx_solver": None, "enable_mathdx_fft": None,
            "fast_math": False, "fuse_fp": True, "lineinfo": config.lineinfo,
            "cuda_output": None, "mode": None, "optimization_level": None,
            "cpu_compiler_flags": None, "block_dim": 256,
            "compile_time_trace": config.compile_time_trace, "strip_hash": False,
            "extra_build_options": None, "deterministic": config.deterministic,
            "deterministic_max_records": config.deterministic_max_records,
            "default_grid_stride": None}
        self.kernels = weakref.WeakSet()
        """The module's live kernels."""
        self.definitions = {}
        """Kernel name -> the latest kernel defined under it (overloads excluded): the
        module's content, which it keeps alive, as Warp's modules keep their kernels (a
        kernel defined again under its name replaces the earlier one; module_hash.py)."""

    @classmethod
    def named(cls, name):
        """The module of Python module *name* (made on first use, as Warp's ``get_module``)."""
        if not isinstance(name, str):
            raise TypeError(f"name: expected a module name (str), got {name!r}")
        if name not in cls._named:
            cls._named[name] = cls(name)
        return cls._named[name]

    @classmethod
    def of_kernel(cls, fn, module, module_options, name=None):
        """The module of a kernel defined by *fn* with ``@sim.kernel(module=...,
        module_options=...)`` (Warp's rules: options only for a ``"unique"`` module)."""
        if module is None:
            result = cls.named(fn.__module__)
        elif module == "unique":  # named by the kernel's key (Warp's name option, if given)
            result = cls(f"{fn.__module__}.{name or fn.__qualname__}")
        elif isinstance(module, str):
            result = cls.named(module)
        elif isinstance(module, KernelModule):
            result = module
        else:
            raise TypeError(f"module: expected None, 'unique', a module name or a module "
                            f"(sim.get_module(name)), got {module!r}")
        if module_options is not None:
            where = f"@sim.kernel {fn.__qualname__}: module_options"
            if not isinstance(module_options, dict):
                raise TypeError(f"{where}: expected a dict, got {module_options!r}")
            if module != "unique":
                raise ValueError(f'{where} requires module="unique" (use '
                                 f"sim.set_module_options() for a shared module)")
            result.set_options(module_options, where)
        return result

    def set_options(self, options, where="options"):
        """Warp's ``set_module_options``: update the options (known names only)."""
        if not isinstance(options, dict):
            raise TypeError(f"{where}: expected a dict of module options, got {options!r}")
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise ValueError(f"{where}: unknown module option{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))} (Warp's are "
                             f"{', '.join(sorted(self.options))})")
        if options.get("mode") not in (None,) + config.MODES:
            raise ValueError(f"{where}: mode: expected None or one of {config.MODES}, got "
                             f"{options['mode']!r}")
        self.options.update(options)

    def compile_mode(self):
        """The mode the module's kernels compile in: its ``mode`` option, else
        ``sim.config.mode``; ``"verify_fp"`` for release while ``sim.config.verify_fp`` is
        set (a release body that reports non-finite stores, Warp's ``verify_fp``)."""
        mode = self.options["mode"] or config.mode
        return "verify_fp" if mode == "release" and config.verify_fp else mode

    def hash_module(self):
        """Warp's ``Module.hash_module()``: a content hash (hex) of what the module's kernels
        would compile from now (numba_sim/module_hash.py)."""
        return module_hash.hash_module(self)

    def load(self, device=None, block_dim=None):
        """Warp's ``Module.load``: numba_sim compiles each kernel at its first launch (for
        the argument types it is launched with), so this checks *device* and returns True."""
        from numba_sim.host_compat import get_device  # import cycle: host_compat wraps modules

        get_device(device)
        return True

    def __repr__(self):
        return f"<numba_sim kernel module {self.name}>"


class Kernel:
    """A ``@sim.kernel``: launched with :func:`numba_sim.launch` over a grid of threads."""

    def __init__(self, fn, enable_backward=None, annotations=None, body=None, options=None,
                 code_transformers=()):
        self.code_transformers = tuple(code_transformers or ())
        """Warp's ``Kernel(..., code_transformers=[...])``: ``ast.NodeTransformer`` s applied,
        in order, to the kernel's syntax tree before the kernel-language rewrite."""
        self.enable_backward = enable_backward
        """Warp's option, kept for the adjoint (True unless given as False)."""
        self.options = dict(options or {})
        """Warp's ``kernel.options``: the options given to ``@sim.kernel(...)``."""
        self.module = KernelModule.of_kernel(fn, self.options.get("module"),
                                             self.options.get("module_options"),
                                             self.options.get("name"))
        self.module.kernels.add(self)
        signature = inspect.signature(fn)
        for p in signature.parameters.values():
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise TypeError(f"kernel {fn.__qualname__}: parameter {p.name!r} must be a plain "
                                f"positional parameter (no *args, **kwargs or keyword-only)")
        if annotations is None:
            annotations = function_annotations(fn)
        self.py_func = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__  # as Warp's: sim.get_module(kernel.__module__)
        self.key = self.options.get("name") or f"{fn.__module__}.{fn.__qualname__}"
        """Warp's ``kernel.key``: the ``name`` option, else the qualified name."""
        self.parameters = tuple(
            Parameter(name, annotations.get(name, inspect.Parameter.empty))
            for name in signature.parameters
        )
        self.build_error = None
        """The kernel-language error of the kernel's source, raised when it is built (its
        first launch or compile), as Warp reports a kernel's errors (:meth:`body_for`)."""
        defined = body is None  # a definition, not an overload of one
        if defined:
            redefinition.note_definition(fn)
            try:
                body = kernel_language.rewrite(fn, is_kernel=True,
                                               transformers=self.code_transformers)
            except kernel_language.StaticExpressionError:
                raise  # evaluated at declaration, as Warp's static expressions
            except kernel_language.SOURCE_ERRORS as error:
                self.build_error = error
        self.body = body
        if defined:
            self.module.definitions[module_hash.kernel_name(self)] = self
        self.tid_indexed = launch_bounds.tid_indexed(fn, [p.name for p in self.parameters])
        """(parameter, array axis, launch axis) of the arrays every thread indexes with its
        thread index: a launch checks its dim against them (launch_bounds.py)."""
        self.structure_ids = structure_ids.id_parameters(fn, [p.name for p in self.parameters])
        """(parameter, structure kind, ids in its elements) of the parameters whose ids reach
        a query: a launch checks them against the live structures (structure_ids.py)."""
        self.generation = redefinition.current[0]
        """The redefinition generation this kernel's launchers are up to (redefinition.py)."""
        self.reached = None
        """The funcs the kernel reached when its launchers were built (redefinition.py)."""
        self.overloads = []
        """The overloads made by :func:`overload`, tried in order at launch."""
        if defined and any(p.generic for p in self.parameters):
            _GENERIC_KERNELS.setdefault((fn.__module__, fn.__qualname__), []).append(self)
        self._debug_bodies = {}
        self.launchers = {}
        """launcher.py's cache of this kernel's launchers: (device, ndim, mode) -> launcher."""
        self.fast_launch = None
        """Set by launcher.py once a CUDA launch is prepared: sim.launch's shortcut
        (cuda_fast_launch.py)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"kernel {self.__qualname__} is launched with sim.launch({self.__name__}, "
                        "dim=..., inputs=[...]), not called")

    def __repr__(self):
        return f"<numba_sim kernel {self.key}>"

    @property
    def adj(self):
        """Warp's ``kernel.adj`` (its code-generation record), as far as numba_sim has one:
        :class:`KernelRecord`."""
        return KernelRecord(self)

    def body_for(self, mode, target="cpu"):
        """The kernel-language body compiled in *mode* ("release" or "debug") for *target*;
        the kernel's `build_error` if its source is not kernel language."""
        if self.build_error is not None:
            raise self.build_error.with_traceback(None)
        if mode == "release":
            return self.body
        if mode == "verify_fp":  # sim.config.verify_fp: non-finite stores are reported
            key = ("verify_fp", target)
            if key not in self._debug_bodies:
                self._debug_bodies[key] = kernel_language.rewrite(
                    self.py_func, is_kernel=True, target=target, verify_fp=True,
                    transformers=self.code_transformers)
            return self._debug_bodies[key]
        if target not in self._debug_bodies:
            self._debug_bodies[target] = kernel_language.rewrite(
                self.py_func, is_kernel=True, debug=True, target=target,
                transformers=self.code_transformers)
        return self._debug_bodies[target]

    def compile(self, device="cpu", argtypes_or_inputs=(), cc=None, ndim=1, adjoint=False):
        """Compile without launching; on CUDA offline for compute capability *cc*.

        *argtypes_or_inputs* are Numba types (of the host arguments) or example
        arguments.  Returns the compiled launcher's code library (CUDA) or
        dispatcher (CPU).  With *adjoint*, the kernel's adjoint is compiled (for the
        same arguments: numba_sim/autodiff/adjoint_kernel.py).
        """
        if adjoint:  # numba_sim/autodiff/adjoint_launch.py
            kernel, argtypes_or_inputs = autodiff_hooks.adjoint_compile_arguments(
                self, argtypes_or_inputs, ndim)
            return launcher.compile_kernel(kernel, device, argtypes_or_inputs, cc=cc, ndim=ndim)
        return launcher.compile_kernel(self, device, argtypes_or_inputs, cc=cc, ndim=ndim)

    def inspect(self, device="cpu", kind="llvm", argtypes_or_inputs=None, cc=None, ndim=1,
                adjoint=False):
        """Generated code: ``"llvm"`` / ``"asm"`` (cpu) or ``"llvm"`` / ``"ptx"`` / ``"cubin"`` (cuda).

        With *argtypes_or_inputs*, the code of that signature (compiled if need be); without,
        as Numba's ``inspect_llvm()``, a dict of the code of every signature compiled so far
        on *device*, keyed by the launcher's signature (the launch dims' type, then the
        arguments' types).  With *adjoint*, the adjoint kernel's code, and ``kind="source"``
        its generated kernel-language source.
        """
        if adjoint:  # numba_sim/autodiff/adjoint_launch.py and adjoint_kernel.py
            if kind == "source":
                return autodiff_hooks.adjoint_source_text(self, ndim)
            kernel, argtypes_or_inputs = autodiff_hooks.adjoint_compile_arguments(
                self, argtypes_or_inputs, ndim)
            return kernel.inspect(device, kind, argtypes_or_inputs, cc=cc, ndim=ndim)
        if argtypes_or_inputs is None:
            return launcher.inspect_compiled(self, device, kind, cc=cc)
        return launcher.inspect_kernel(self, device, kind, argtypes_or_inputs, cc=cc, ndim=ndim)


def overload(kernel_or_stub, arg_types=None):
    """Warp's ``wp.overload``: the kernel *kernel_or_stub* with its generic parameters
    (``typing.Any``, ``sim.array(dtype=Any)``) given types.

    ``overload(k, [sim.array(dtype=float), float])`` lists every parameter's type;
    ``overload(k, {"value": float})`` names some (the others keep theirs).  As a decorator
    on a function named like a generic kernel of its module, the function's annotations
    give the types (its body must be empty: ``...``).  Called, returns the overload (a
    kernel); as a decorator, the generic kernel (as Warp).  Launching the generic kernel
    picks the first overload whose parameters accept the arguments.
    """
    if arg_types is None and inspect.isfunction(kernel_or_stub):
        stub = kernel_or_stub
        generic = _stub_target(stub)
        arg_types = function_annotations(stub)
        if arg_types.pop("return", None) not in (None, type(None)):
            raise TypeError(f"@sim.overload {stub.__qualname__}: Return annotations are not "
                            f"allowed on @wp.overload stubs (a kernel returns nothing)")
        _add_overload(generic, arg_types, f"@sim.overload {stub.__qualname__}")
        return generic
    if not isinstance(kernel_or_stub, Kernel):
        raise TypeError(f"kernel: expected a @sim.kernel, got {kernel_or_stub!r}")
    return _add_overload(kernel_or_stub, arg_types, f"sim.overload({kernel_or_stub.__name__})")


_GENERIC_KERNELS = {}
"""(Python module, qualified name) -> the generic kernels defined there, oldest first (Warp's
modules keep their kernels: a stub finds its kernel even when nothing else refers to it)."""


def _stub_target(stub):
    """The generic kernel an ``@sim.overload`` stub names: the kernel of its module with its
    qualified name (as Warp, which looks kernels up by name: the stub may be nested in a
    function, or shadow the kernel's global name)."""
    found = stub.__globals__.get(stub.__name__)
    if isinstance(found, Kernel) and found.__qualname__ == stub.__qualname__:
        return found
    candidates = _GENERIC_KERNELS.get((stub.__module__, stub.__qualname__), [])
    names = {k.options.get("name") for k in candidates}
    if len(names) > 1:
        raise RuntimeError(f"@sim.overload {stub.__qualname__}: Ambiguous kernel lookup: the "
                           f"generic kernels {sorted(map(str, names))} share this function; "
                           f"use sim.overload(kernel, arg_types) on the one meant")
    if not candidates:
        raise TypeError(f"@sim.overload {stub.__qualname__}: expected a function named like a "
                        f"@sim.kernel of its module (a generic one), found {found!r}")
    return candidates[-1]


def _add_overload(generic, arg_types, where):
    if not any(p.generic for p in generic.parameters):
        raise TypeError(f"{where}: only generic kernels (a parameter annotated typing.Any or "
                        f"sim.array(dtype=Any)) can be overloaded; {generic.__name__} is not")
    names = [p.name for p in generic.parameters]
    if isinstance(arg_types, dict):
        unknown = sorted(set(arg_types) - set(names))
        if unknown:
            raise TypeError(f"{where}: {', '.join(map(repr, unknown))} "
                            f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'}"
                            f" (the parameters are {', '.join(names)})")
        given = dict(arg_types)
    elif isinstance(arg_types, (list, tuple)):
        if len(arg_types) != len(names):
            raise TypeError(f"{where}: expected {len(names)} types ({', '.join(names)}), "
                            f"got {len(arg_types)}")
        given = dict(zip(names, arg_types))
    else:
        raise TypeError(f"{where}: arg_types: expected a list of types or a dict of "
                        f"parameter names to types, got {arg_types!r}")
    annotations = {p.name: p.annotation for p in generic.parameters if p.annotation is not None}
    annotations.update(given)
    for made in generic.overloads:
        if [p.annotation for p in made.parameters] == [annotations.get(n) for n in names]:
            return made
    made = Kernel(generic.py_func, generic.enable_backward, annotations, generic.body,
                  generic.options, generic.code_transformers)
    made.build_error = generic.build_error
    generic.overloads.append(made)
    return made


def _check_kernel_options(options):
    """Warp's checks of ``@wp.kernel(...)``'s options, made when the kernel is decorated."""
    name = options.get("name")
    if name is not None:
        if not isinstance(name, str):
            raise TypeError(f"@sim.kernel: name must be a str, got {type(name)}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"@sim.kernel: name must be a non-empty valid C++ identifier "
                             f"matching [A-Za-z_][A-Za-z0-9_]*, got {name!r}")
    abi = options.get("entry_point_abi")
    if abi is not None and abi not in ("warp", "external_constant_params"):
        raise ValueError(f"@sim.kernel: entry_point_abi must be 'warp' or "
                         f"'external_constant_params', got {abi!r}")
    if abi == "external_constant_params" and options.get("enable_backward") is not False:
        raise ValueError("@sim.kernel: entry_point_abi='external_constant_params' requires "
                         "enable_backward=False")


def kernel(fn=None, **options):
    """Decorator: a Warp-style kernel (``@wp.kernel``, ``@wp.kernel(...)`` with Warp's
    options: see :data:`WARP_KERNEL_OPTIONS`)."""
    _check_options("kernel", options, WARP_KERNEL_OPTIONS)
    _check_kernel_options(options)
    if fn is None:
        return lambda f: Kernel(f, enable_backward=options.get("enable_backward"), options=options)
    return Kernel(fn, enable_backward=options.get("enable_backward"), options=options)


__all__ = ["Func", "Function", "Kernel", "func", "kernel", "overload"]
