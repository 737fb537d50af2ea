"""Random numbers: Warp's PCG generator, bit for bit (warp/native/rand.h).

``s = rand_init(seed[, offset])`` makes a state; every draw (``randi``,
``randu``, ``randf``, ``randn``, ``sample_*``) advances it in place and
returns the next number of Warp's sequence, also when ``s`` is passed to a
``@sim.func`` or a plain ``@njit`` function (see
:mod:`numba_sim.typing.random_state` for how the state is represented).

Each builtin is an intrinsic builtin (:func:`numba_sim.builtins.forms.intrinsic_builtin`)
declared by the Python functions of its overloads below: run as Python on a
:class:`~numba_sim.typing.random_state.RandomState` they are the Python
semantics, and the compiled builtin is the same function compiled by Numba for
the CPU or CUDA target (:func:`numba_sim.lowering.intrinsics.compiled`); the
helpers they call are :func:`~numba_sim.builtins.forms.compiled_helper` s.  The
uint32 arithmetic of Warp wraps as in C (NumPy uint32 in Python), floating
point in float32 throughout with the target's math library (libm on the CPU,
libdevice on CUDA; in Python the C library's float functions through ctypes).
So ``randi``, ``randu`` and ``randf`` are bit-identical to Warp everywhere, and
the others are bit-identical to Warp's CPU backend on the CPU and in Python
(same libm) and agree to an ulp or two on CUDA (libdevice).
"""

import ctypes
import ctypes.util
import math

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing import signature

from numba_sim.builtins.forms import Overload, Param, compiled_helper, intrinsic_builtin
from numba_sim.lowering import random_state as _random_state_lowering  # noqa: F401 (registers)
from numba_sim.lowering.intrinsics import compiled, math_function
from numba_sim.types import PUBLIC_NAMES
from numba_sim.typing.random_state import (
    RandomState, RandomStateType, advance, new_state, pcg_hash, random_state,
)
from numba_sim.typing.value_types import VALUE_TYPES

vec2 = PUBLIC_NAMES["vec2"]
vec3 = PUBLIC_NAMES["vec3"]
_VEC2, _VEC3 = (VALUE_TYPES[cls.spec] for cls in (vec2, vec3))

_INV_2_24 = np.float32(1.0 / 16777216.0)
_RANDN_EPSILON = np.float32(5.96e-8)
_TWO_PI = np.float32(2.0) * np.float32(math.pi)  # Warp's 2.f * M_PI_F
_MINUS_TWO = np.float32(-2.0)
_ZERO = np.float32(0.0)
_HALF = np.float32(0.5)
_ONE = np.float32(1.0)
_TWO = np.float32(2.0)
_ONE_THIRD = np.float32(1.0) / np.float32(3.0)  # Warp's 1.f / 3.f


# --------------------------------------------------------------------------
# float32 math: the target's in compiled code, the C library's in Python


def _c_math_library():
    name = ctypes.util.find_library("m") or ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


_LIBM = _c_math_library()


def _float32_function(function, c_name, arity=1):
    """``math`` *function* on float32 arguments, returning float32.

    Compiled, it is the target's float32 function (libm's on the CPU,
    libdevice's on CUDA), as Numba lowers ``math`` on float32.  In Python it
    calls the same C function the CPU code calls (libm's ``c_name``) when the C
    library can be loaded, so Python and compiled CPU results agree bit for
    bit; otherwise it rounds the double-precision result to float32.
    """
    c_function = getattr(_LIBM, c_name, None) if _LIBM is not None else None
    if c_function is not None:
        c_function.restype = ctypes.c_float
        c_function.argtypes = [ctypes.c_float] * arity

    def float32_function(*args):
        values = [float(a) for a in args]
        if c_function is not None:
            return np.float32(c_function(*values))
        return np.float32(function(*values))

    float32_function.__name__ = float32_function.__qualname__ = f"float32_{function.__name__}"
    params = (types.float32,) * arity
    return compiled_helper(types.float32, *params, lower=math_function(function))(float32_function)


_sqrt = _float32_function(math.sqrt, "sqrtf")
_log = _float32_function(math.log, "logf")
_cos = _float32_function(math.cos, "cosf")
_sin = _float32_function(math.sin, "sinf")
_acos = _float32_function(math.acos, "acosf")
_pow = _float32_function(math.pow, "powf", arity=2)
_exp = _float32_function(math.exp, "expf")


# --------------------------------------------------------------------------
# Warp's integer arithmetic: uint32, wrapping (see pcg_hash)


compiled_helper(types.uint32, types.uint32)(pcg_hash)


@compiled_helper(types.uint32, types.int64)
def _as_uint32(x):
    """C's ``uint32(x)``: the low 32 bits of an integer."""
    return np.uint32(np.int64(x))


@compiled_helper(types.uint32, types.uint32, types.int64, types.int64)
def _modulo_in_range(u, low, high):
    """Warp's ``state % (max - min) + min`` in uint32 arithmetic (an empty range gives *low*)."""
    span = _as_uint32(np.int64(high) - np.int64(low))
    return np.uint32(u % max(span, np.uint32(1)) + _as_uint32(low))


# --------------------------------------------------------------------------
# The implementations of the overloads (Python semantics and compiled code alike)


def _init(seed):
    return new_state(pcg_hash(_as_uint32(seed)))


def _init_with_offset(seed, offset):
    return new_state(pcg_hash(np.uint32(_as_uint32(seed) + pcg_hash(_as_uint32(offset)))))


def _randi(state):
    return np.int32(advance(state))


def _randi_in_range(state, low, high):
    return np.int32(_modulo_in_range(advance(state), low, high))


def _randu(state):
    return advance(state)


def _randu_in_range(state, low, high):
    return _modulo_in_range(advance(state), low, high)


@compiled_helper(types.float32, random_state)
def _randf(state):
    return np.float32(advance(state) >> np.uint32(8)) * _INV_2_24


def _randf_in_range(state, low, high):
    return (np.float32(high) - np.float32(low)) * _randf(state) + np.float32(low)


@compiled_helper(types.float32, random_state)
def _angle(state):
    """``randf(state, 0.f, 2.f * M_PI_F)``."""
    return (_TWO_PI - _ZERO) * _randf(state) + _ZERO


def _randn(state):
    radius = _sqrt(_MINUS_TWO * _log(_randf(state) + _RANDN_EPSILON))
    return radius * _cos(_TWO_PI * _randf(state))


def _sample_triangle(state):
    r = _sqrt(_randf(state))
    return vec2(_ONE - r, _randf(state) * r)


def _sample_unit_ring(state):
    theta = _angle(state)
    return vec2(_cos(theta), _sin(theta))


def _sample_unit_disk(state):
    r = _sqrt(_randf(state))
    theta = _angle(state)
    return vec2(r * _cos(theta), r * _sin(theta))


@compiled_helper(_VEC3, types.float32, types.float32, types.float32)
def _point_on_sphere(phi, theta, r):
    """Warp's ``(r *) cos(theta) * sin(phi), (r *) sin(theta) * sin(phi), (r *) cos(phi)``."""
    sin_phi = _sin(phi)
    return vec3(r * _cos(theta) * sin_phi, r * _sin(theta) * sin_phi, r * _cos(phi))


@compiled_helper(_VEC3, types.float32, types.float32)
def _point_on_unit_sphere(phi, theta):
    sin_phi = _sin(phi)
    return vec3(_cos(theta) * sin_phi, _sin(theta) * sin_phi, _cos(phi))


@compiled_helper(types.float32, random_state)
def _cube_root_of_uniform(state):
    return _pow(_randf(state), _ONE_THIRD)


def _sample_unit_sphere_surface(state):
    phi = _acos(_ONE - _TWO * _randf(state))
    return _point_on_unit_sphere(phi, _angle(state))


def _sample_unit_sphere(state):
    phi = _acos(_ONE - _TWO * _randf(state))
    theta = _angle(state)
    return _point_on_sphere(phi, theta, _cube_root_of_uniform(state))


def _sample_unit_hemisphere_surface(state):
    phi = _acos(_ONE - _randf(state))
    return _point_on_unit_sphere(phi, _angle(state))


def _sample_unit_hemisphere(state):
    phi = _acos(_ONE - _randf(state))
    theta = _angle(state)
    return _point_on_sphere(phi, theta, _cube_root_of_uniform(state))


def _sample_unit_square(state):
    x = _randf(state) - _HALF
    return vec2(x, _randf(state) - _HALF)


def _sample_unit_cube(state):
    x = _randf(state) - _HALF
    y = _randf(state) - _HALF
    return vec3(x, y, _randf(state) - _HALF)


# --------------------------------------------------------------------------
# The builtins: parameter kinds and overloads


_STATE_HINT = ("the state is made by rand_init(seed[, offset]) and advanced in place by each "
               "draw; a plain uint32 (a value loaded from an array, say) cannot be advanced in "
               "place")

STATE = Param("a random state", (RandomStateType,), random_state, hint=_STATE_HINT,
              python=RandomState)
SEED = Param("an int", (types.Integer,), types.int64)  # any integer: Warp uses its low 32 bits
INT = Param("an int", (types.Integer,), types.int32)
UINT = Param("a uint32", (types.Integer,), types.uint32)
FLOAT = Param("a float", (types.Integer, types.Float), types.float32)


rand_init = intrinsic_builtin(
    "rand_init",
    "rand_init(seed[, offset]): a new random state, Warp's ``rand_pcg(uint32(seed))`` or\n"
    "``rand_pcg(uint32(seed) + rand_pcg(uint32(offset)))``.\n\n"
    "Give each thread its own *offset* (``sim.tid()``) for independent sequences.",
    Overload((SEED,), random_state, _init),
    Overload((SEED, SEED), random_state, _init_with_offset),
)

randi = intrinsic_builtin(
    "randi",
    "randi(state[, low, high]): a random int32 in [-2^31, 2^31), or in [low, high)\n"
    "(Warp's ``state % (high - low) + low`` in uint32 arithmetic; needs high > low).",
    Overload((STATE,), types.int32, _randi),
    Overload((STATE, INT, INT), types.int32, _randi_in_range),
)

randu = intrinsic_builtin(
    "randu",
    "randu(state[, low, high]): a random uint32 in [0, 2^32), or in [low, high).",
    Overload((STATE,), types.uint32, _randu),
    Overload((STATE, UINT, UINT), types.uint32, _randu_in_range),
)

randf = intrinsic_builtin(
    "randf",
    "randf(state[, low, high]): a random float32 in [0, 1) in steps of 2^-24, or\n"
    "``(high - low) * randf(state) + low``.",
    Overload((STATE,), types.float32, _randf),
    Overload((STATE, FLOAT, FLOAT), types.float32, _randf_in_range),
)

randn = intrinsic_builtin(
    "randn",
    "randn(state): a standard normal float32 (Box-Muller, two uniform draws).",
    Overload((STATE,), types.float32, _randn),
)


def _sampler(name, doc, result, impl):
    return intrinsic_builtin(name, doc, Overload((STATE,), result, impl))


sample_triangle = _sampler(
    "sample_triangle", "sample_triangle(state): uniform barycentric coordinates (u, v) in a "
    "triangle (w = 1 - u - v).", _VEC2, _sample_triangle)
sample_unit_ring = _sampler(
    "sample_unit_ring", "sample_unit_ring(state): a uniform point on the unit circle.",
    _VEC2, _sample_unit_ring)
sample_unit_disk = _sampler(
    "sample_unit_disk", "sample_unit_disk(state): a uniform point in the unit disk.",
    _VEC2, _sample_unit_disk)
sample_unit_sphere_surface = _sampler(
    "sample_unit_sphere_surface",
    "sample_unit_sphere_surface(state): a uniform point on the unit sphere.",
    _VEC3, _sample_unit_sphere_surface)
sample_unit_sphere = _sampler(
    "sample_unit_sphere", "sample_unit_sphere(state): a uniform point in the unit ball.",
    _VEC3, _sample_unit_sphere)
sample_unit_hemisphere_surface = _sampler(
    "sample_unit_hemisphere_surface",
    "sample_unit_hemisphere_surface(state): a uniform point on the unit hemisphere (z >= 0).",
    _VEC3, _sample_unit_hemisphere_surface)
sample_unit_hemisphere = _sampler(
    "sample_unit_hemisphere",
    "sample_unit_hemisphere(state): a uniform point in the unit half-ball (z >= 0).",
    _VEC3, _sample_unit_hemisphere)
sample_unit_square = _sampler(
    "sample_unit_square", "sample_unit_square(state): a uniform point in [-0.5, 0.5)^2.",
    _VEC2, _sample_unit_square)
sample_unit_cube = _sampler(
    "sample_unit_cube", "sample_unit_cube(state): a uniform point in [-0.5, 0.5)^3.",
    _VEC3, _sample_unit_cube)



# --------------------------------------------------------------------------
# Poisson draws: Warp's rand.h (NumPy's methods in float32), float32 throughout


def _f32(*values):
    return tuple(np.float32(v) for v in values)


_LOGGAM_SERIES = np.array([
    8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04, -5.952380952380952e-04,
    8.417508417508418e-04, -1.917526917526918e-03, 6.410256410256410e-03, -2.955065359477124e-02,
    1.796443723688307e-01, -1.39243221690590e+00], dtype=np.float32)
_LG2PI, _SEVEN = _f32(1.8378770664093453, 7.0)
_B0, _B1, _A0, _A1, _IA0, _IA1, _IA2, _VR0, _VR1, _VR2 = _f32(
    0.931, 2.53, -0.059, 0.02483, 1.1239, 1.1328, 3.4, 0.9277, 3.6224, 2.0)
_US_ACCEPT, _US_REJECT, _K_SHIFT, _TEN = _f32(0.07, 0.013, 0.43, 10.0)


@compiled_helper(types.float32, types.float32)
def _loggam(x):
    """Warp's ``random_loggam``: log(Gamma(x)) by Stirling's series."""
    if x == _ONE or x == _TWO:
        return _ZERO
    n = np.uint32(_SEVEN - x) if x < _SEVEN else np.uint32(0)
    x0 = x + np.float32(n)
    x2 = (_ONE / x0) * (_ONE / x0)
    gl0 = _LOGGAM_SERIES[9]
    for i in range(8, -1, -1):
        gl0 *= x2
        gl0 += _LOGGAM_SERIES[i]
    gl = gl0 / x0 + _HALF * _LG2PI + (x0 - _HALF) * _log(x0) - x0
    if x < _SEVEN:
        for _ in range(n):
            gl -= _log(x0 - _ONE)
            x0 -= _ONE
    return gl


@compiled_helper(types.uint32, random_state, types.float32)
def _poisson_multiplication(state, lam):
    """Warp's ``random_poisson_mult`` (small rates): count uniforms until their product
    falls to exp(-lam)."""
    enlam = _exp(-lam)
    count = np.uint32(0)
    product = _ONE
    while True:
        product *= _randf(state)
        if product > enlam:
            count += np.uint32(1)
        else:
            return count


@compiled_helper(types.uint32, random_state, types.float32)
def _poisson_rejection(state, lam):
    """Warp's ``random_poisson`` (rates >= 10): Hoermann's transformed rejection."""
    slam = _sqrt(lam)
    loglam = _log(lam)
    b = _B0 + _B1 * slam
    a = _A0 + _A1 * b
    invalpha = _IA0 + _IA1 / (b - _IA2)
    vr = _VR0 - _VR1 / (b - _VR2)
    while True:
        u = _randf(state) - _HALF
        v = _randf(state)
        us = _HALF - abs(u)
        k = np.floor((_TWO * a / us + b) * u + lam + _K_SHIFT)
        if us >= _US_ACCEPT and v <= vr:
            return np.uint32(k)
        if k < _ZERO or (us < _US_REJECT and v > us):
            continue
        if (_log(v) + _log(invalpha) - _log(a / (us * us) + b)) <= \
                (-lam + k * loglam - _loggam(k + _ONE)):
            return np.uint32(k)


def _poisson(state, lam):
    if lam >= _TEN:
        return _poisson_rejection(state, lam)
    if lam == _ZERO:
        return np.uint32(0)
    return _poisson_multiplication(state, lam)


poisson = intrinsic_builtin(
    "poisson",
    "poisson(state, lam): a Poisson-distributed uint32 of rate lam (a float32 >= 0): Warp's\n"
    "multiplication method below 10, Hoermann's transformed rejection from 10; advances state.",
    Overload((STATE, FLOAT), types.uint32, _poisson),
)


def _sample_cdf(state, cdf):
    """Warp's ``sample_cdf``: ``lower_bound(cdf, randf(state))``, the first index whose
    entry is >= the draw (binary search over the whole array)."""
    u = _randf(state)
    lower, upper = 0, cdf.shape[0] - 1
    while lower < upper:
        middle = lower + (upper - lower) // 2
        if cdf[middle] < u:
            lower = middle + 1
        else:
            upper = middle
    return np.int32(lower)


def _sample_cdf_typer(*args):
    usage = "sample_cdf(a random state, a 1-D float32 array)"
    if len(args) != 2:
        raise TypingError(f"{usage}: got {len(args)} arguments")
    state, cdf = args
    if not isinstance(state, RandomStateType):
        raise TypingError(f"{usage}: got {state} for the state; {_STATE_HINT}")
    if not (isinstance(cdf, types.Array) and cdf.ndim == 1 and cdf.dtype == types.float32):
        raise TypingError(f"{usage}: got {cdf} for the cdf")
    return signature(types.int32, state, cdf)


def _sample_cdf_python(state, cdf):
    if not isinstance(state, RandomState):
        raise TypeError(f"sample_cdf: expected a random state, got {type(state).__name__}; "
                        f"{_STATE_HINT}")
    cdf = np.asarray(cdf)
    if cdf.ndim != 1 or cdf.dtype != np.float32:
        raise TypeError(f"sample_cdf: expected a 1-D float32 array for the cdf, got "
                        f"{cdf.ndim}-D {cdf.dtype}")
    return _sample_cdf(state, cdf)


sample_cdf = intrinsic_builtin(
    "sample_cdf",
    "sample_cdf(state, cdf): a draw from the discrete distribution of the cumulative\n"
    "distribution cdf (a 1-D float32 array, non-decreasing, last entry 1.0): the first index i\n"
    "with cdf[i] >= randf(state), found by binary search (Warp's lower_bound); advances state.",
    typer=_sample_cdf_typer, python=_sample_cdf_python, lower=compiled(_sample_cdf),
)

STATE_TAKERS = (randi, randu, randf, randn, poisson, sample_cdf, sample_triangle,
                sample_unit_ring, sample_unit_disk, sample_unit_sphere_surface,
                sample_unit_sphere, sample_unit_hemisphere_surface, sample_unit_hemisphere,
                sample_unit_square, sample_unit_cube)
"""The builtins whose first parameter is a random state (the kernel rewrite gives them a
copy of a state loaded from an array: kernel_language.py)."""

__all__ = [
    "sample_cdf", "poisson",
    "rand_init", "randi", "randu", "randf", "randn", "sample_triangle", "sample_unit_ring",
    "sample_unit_disk", "sample_unit_sphere_surface", "sample_unit_sphere",
    "sample_unit_hemisphere_surface", "sample_unit_hemisphere", "sample_unit_square",
    "sample_unit_cube",
]
