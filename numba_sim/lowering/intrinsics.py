"""Lowerings shared by intrinsic builtins (:func:`numba_sim.builtins.forms.intrinsic_builtin`).

An intrinsic builtin names its lowering, ``lower(context, builder, sig, args)``.
Most have no IR of their own: their compiled code is their Python
implementation compiled for the target (:func:`compiled`), or the target's
implementation of a ``math`` function (:func:`math_function`).  Builtins with
IR of their own keep it with their family (:mod:`numba_sim.lowering.atomics`).
All of these work on the CPU and the CUDA target alike.
"""


def compiled(python):
    """The lowering that compiles *python* for the target at the call's signature.

    Numba compiles the Python function with the signature's argument types
    (``compile_internal``, cached per signature and target), so Python mode and
    compiled code run the same function: the functions it calls must be typed
    in compiled code too (Numba's, or numba_sim's compiled helpers).
    """
    def lower(context, builder, sig, args):
        return context.compile_internal(builder, python, sig, args)

    lower.__name__ = f"lower_{python.__name__}"
    return lower


def math_function(function):
    """The lowering that calls the target's implementation of ``math`` *function* at the
    call's signature (float32 ``math.sin`` is libm's ``sinf`` on the CPU, libdevice's
    ``__nv_sinf`` on CUDA)."""
    def lower(context, builder, sig, args):
        return context.get_function(function, sig)(builder, args)

    lower.__name__ = f"lower_math_{function.__name__}"
    return lower
