"""``@sim.kernel`` and ``@sim.func``.

A :class:`Kernel` is a description: the Python function, its parameters and
its body rewritten into the kernel language (kernel_language.py).  Launching
and compiling belong to launcher.py, which generates and caches the launchers
(per device, launch dimensionality and mode); ``kernel.compile`` and
``kernel.inspect`` hand the kernel to it.
"""

import inspect

from numba.core.registry import CPUDispatcher

from numba_sim import kernel_language, launcher
from numba_sim.func_overloads import FuncOverloads, annotations_of
from numba_sim.parameters import Parameter


class Func(CPUDispatcher):
    """A ``@sim.func``: a Numba device function that runs as Python when called from Python.

    It is a Numba CPU dispatcher over the kernel-language version of the
    function, so kernels, other funcs and plain ``@njit`` code call it
    compiled, and numba-cuda compiles it as a device function for CUDA code.
    """

    def __call__(self, *args, **kwargs):
        return self.py_func(*args, **kwargs)

    def __repr__(self):
        return f"<numba_sim func {self.py_func.__qualname__}>"


WARP_KERNEL_OPTIONS = frozenset({
    "name", "enable_backward", "launch_bounds", "cuda_max_registers", "enable_cuda_smem_spilling",
    "cluster_dim", "module", "module_options", "entry_point_abi", "grid_stride"})
"""``@wp.kernel(...)``'s options (Warp 1.19). Accepted so that Warp code ports as it is; they
change nothing here (numba_sim compiles each kernel on its own, with numba's defaults),
except ``enable_backward``, which is kept for the adjoint (docs/porting-from-warp.md)."""

WARP_FUNC_OPTIONS = frozenset({"name", "module", "inline"})
"""``@wp.func(...)``'s options (Warp 1.19), accepted with no effect likewise."""


def _check_options(decorator, options, known):
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"@sim.{decorator}: unknown option{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(map(repr, unknown))} (Warp's options are "
                        f"{', '.join(sorted(known))})")


def func(fn=None, **options):
    """Decorator: a Warp-style device function (``@wp.func``, ``@wp.func(...)``)."""
    _check_options("func", options, WARP_FUNC_OPTIONS)
    if fn is None:
        return func
    body = kernel_language.rewrite(fn, is_kernel=False)
    dispatcher = Func(body, locals={}, targetoptions={"nopython": True, "boundscheck": None})
    dispatcher.__doc__ = fn.__doc__
    return _with_overloads(fn, dispatcher)


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


class KernelModule:
    """Warp's ``kernel.module``: the kernel's Python module name and Warp's module options
    (numba_sim compiles each kernel on its own: the options are kept, as Warp code and
    tests read them, and change nothing but ``enable_backward``, kept for the adjoint)."""

    def __init__(self, name):
        self.name = name
        self.options = {"enable_backward": True, "max_unroll": 16, "fast_math": False,
                        "mode": "release"}

    def __repr__(self):
        return f"<numba_sim kernel module {self.name}>"


class Kernel:
    """A ``@sim.kernel``: launched with :func:`numba_sim.launch` over a grid of threads."""

    def __init__(self, fn, enable_backward=None, annotations=None, body=None, options=None):
        self.enable_backward = enable_backward
        """Warp's option, kept for the adjoint (True unless given as False)."""
        self.options = dict(options or {})
        """Warp's ``kernel.options``: the options given to ``@sim.kernel(...)``."""
        self.module = KernelModule(fn.__module__)
        signature = inspect.signature(fn)
        for p in signature.parameters.values():
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise TypeError(f"kernel {fn.__qualname__}: parameter {p.name!r} must be a plain "
                                f"positional parameter (no *args, **kwargs or keyword-only)")
        if annotations is None:
            annotations = inspect.get_annotations(fn, eval_str=True)
        self.py_func = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.key = f"{fn.__module__}.{fn.__qualname__}"
        self.parameters = tuple(
            Parameter(name, annotations.get(name, inspect.Parameter.empty))
            for name in signature.parameters
        )
        self.body = kernel_language.rewrite(fn, is_kernel=True) if body is None else body
        self.overloads = []
        """The overloads made by :func:`overload`, tried in order at launch."""
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

    def body_for(self, mode, target="cpu"):
        """The kernel-language body compiled in *mode* ("release" or "debug") for *target*."""
        if mode == "release":
            return self.body
        if target not in self._debug_bodies:
            self._debug_bodies[target] = kernel_language.rewrite(self.py_func, is_kernel=True,
                                                                 debug=True, target=target)
        return self._debug_bodies[target]

    def compile(self, device="cpu", argtypes_or_inputs=(), cc=None, ndim=1):
        """Compile without launching; on CUDA offline for compute capability *cc*.

        *argtypes_or_inputs* are Numba types (of the host arguments) or example
        arguments.  Returns the compiled launcher's code library (CUDA) or
        dispatcher (CPU).
        """
        return launcher.compile_kernel(self, device, argtypes_or_inputs, cc=cc, ndim=ndim)

    def inspect(self, device="cpu", kind="llvm", argtypes_or_inputs=None, cc=None, ndim=1):
        """Generated code: ``"llvm"`` / ``"asm"`` (cpu) or ``"llvm"`` / ``"ptx"`` / ``"cubin"`` (cuda).

        With *argtypes_or_inputs*, the code of that signature (compiled if need be); without,
        as Numba's ``inspect_llvm()``, a dict of the code of every signature compiled so far
        on *device*, keyed by the launcher's signature (the launch dims' type, then the
        arguments' types).
        """
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
        generic = stub.__globals__.get(stub.__name__)
        if not isinstance(generic, Kernel):
            raise TypeError(f"@sim.overload {stub.__qualname__}: expected a function named like "
                            f"a @sim.kernel of its module, found {generic!r}")
        arg_types = inspect.get_annotations(stub, eval_str=True)
        arg_types.pop("return", None)
        _add_overload(generic, arg_types, f"@sim.overload {stub.__qualname__}")
        return generic
    if not isinstance(kernel_or_stub, Kernel):
        raise TypeError(f"kernel: expected a @sim.kernel, got {kernel_or_stub!r}")
    return _add_overload(kernel_or_stub, arg_types, f"sim.overload({kernel_or_stub.__name__})")


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
                  generic.options)
    generic.overloads.append(made)
    return made


def kernel(fn=None, **options):
    """Decorator: a Warp-style kernel (``@wp.kernel``, ``@wp.kernel(...)`` with Warp's
    options: see :data:`WARP_KERNEL_OPTIONS`)."""
    _check_options("kernel", options, WARP_KERNEL_OPTIONS)
    if fn is None:
        return lambda f: Kernel(f, enable_backward=options.get("enable_backward"), options=options)
    return Kernel(fn, enable_backward=options.get("enable_backward"), options=options)


__all__ = ["Func", "Kernel", "func", "kernel", "overload"]
