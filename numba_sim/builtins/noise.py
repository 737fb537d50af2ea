"""Perlin noise: Warp's ``noise``, ``pnoise`` and ``curlnoise`` (warp/native/noise.h), bit
for bit.

``noise(state, x)`` for a float, vec2, vec3 or vec4 point; ``pnoise(state, x, px[, py, pz,
pt])`` tiles with integer periods (each > 0); ``curlnoise(state, xy_or_xyz_or_xyzt[,
octaves=1, lacunarity=2.0, gain=0.5])`` is a divergence-free field (vec2 for a vec2 point,
vec3 otherwise) summed over octaves.  *state* is a uint32 seed (any integer: its low 32
bits), or a random state (``rand_init(seed)``, as in Warp), whose current value is read
and not advanced.

The gradients at the lattice points are Warp's: the PCG hash of ``ix * 73856093 ^ iy *
19349663 ^ ... + state`` (C's precedence: the state is added to the last product),
``randf`` draws in [-0.5, 0.5) normalized; the interpolation is the quintic
``smootherstep``.  Everything is float32 arithmetic in Warp's order, with the uint32 hash
wrapping as in C, and the compiled builtins are the functions below compiled by Numba for
the target (as the random builtins, :mod:`numba_sim.builtins.random`), so the CPU, CUDA and
Python mode give Warp's numbers (only ``sqrt``, correctly rounded everywhere, is a library
call).
"""

import numpy as np
from numba.core import types

from numba_sim.builtins.forms import Overload, Param, compiled_helper, intrinsic_builtin
from numba_sim.builtins.random import _as_uint32, _sqrt
from numba_sim.lowering.intrinsics import compiled
from numba_sim.lowering.symbolic import Sym
from numba_sim.types import PUBLIC_NAMES
from numba_sim.typing.random_state import RandomState, RandomStateType, pcg_hash
from numba_sim.typing.value_types import VALUE_TYPES

vec2, vec3, vec4 = (PUBLIC_NAMES[n] for n in ("vec2", "vec3", "vec4"))
_VEC2, _VEC3, _VEC4 = (VALUE_TYPES[cls.spec] for cls in (vec2, vec3, vec4))

F32 = types.float32
I32 = types.int32
U32 = types.uint32
_F2, _F3, _F4 = (types.UniTuple(F32, n) for n in (2, 3, 4))

_P1, _P2, _P3, _P4 = (np.uint32(p) for p in (73856093, 19349663, 53471161, 10000019))
_CURL_OFFSET_2 = np.uint32(10019689)
_CURL_OFFSET_3 = np.uint32(13112221)
_INV_2_24 = np.float32(1.0 / 16777216.0)
_ZERO, _HALF, _ONE, _TWO = (np.float32(x) for x in (0.0, 0.5, 1.0, 2.0))
_MINUS_ONE = np.float32(-1.0)
_SIX, _TEN, _FIFTEEN, _THIRTY = (np.float32(x) for x in (6.0, 10.0, 15.0, 30.0))
_EIGHT = np.uint32(8)


# --------------------------------------------------------------------------
# Warp's helpers, in its operation order


@compiled_helper(U32, U32)
def _next(state):
    return pcg_hash(state)


@compiled_helper(F32, U32)
def _unit(state):
    """randf's value for a state already advanced: ``(state >> 8) * 2^-24``."""
    return np.float32(np.uint32(state >> _EIGHT)) * _INV_2_24


@compiled_helper(U32, U32, U32)
def _rand_init(seed, offset):
    return pcg_hash(np.uint32(seed + pcg_hash(offset)))


@compiled_helper(U32, I32, U32)
def _times(i, p):
    return np.uint32(_as_uint32(np.int64(i)) * p)


@compiled_helper(F32, F32)
def _smootherstep(t):
    return t * t * t * (t * (t * _SIX - _FIFTEEN) + _TEN)


@compiled_helper(F32, F32)
def _smootherstep_gradient(t):
    return _THIRTY * t * t * (t * (t - _TWO) + _ONE)


@compiled_helper(F32, F32, F32, F32)
def _interpolate(a0, a1, t):
    return (a1 - a0) * _smootherstep(t) + a0


def _lower_floor(context, builder, sig, args):
    """C's ``floorf`` (libm on the CPU, libdevice on CUDA)."""
    return Sym(context, builder, F32, args[0]).emit_libm("floor").value


@compiled_helper(F32, F32, lower=_lower_floor)
def _floor(x):
    return np.floor(np.float32(x))


@compiled_helper(I32, F32)
def _cell(x):
    return np.int32(_floor(x))


@compiled_helper(F32, F32)
def _fraction(x):
    return x - _floor(x)


@compiled_helper(I32, I32, I32)
def _c_mod(a, b):
    """C's ``a % b`` (the sign of a); b > 0 (Warp's requirement on periods)."""
    r = np.int32(abs(np.int64(a)) % np.int64(b))
    return np.int32(-r) if a < 0 else r


# Lattice gradients


@compiled_helper(F32, U32, I32)
def _gradient_1d(state, ix):
    idx = np.uint32(_times(ix, _P1) + state)
    return (_ONE - _MINUS_ONE) * _unit(_next(idx)) + _MINUS_ONE


@compiled_helper(_F2, U32)
def _normalized_square(idx):
    s1 = _next(idx)
    s2 = _next(s1)
    x = _unit(s1) - _HALF
    y = _unit(s2) - _HALF
    length = _sqrt(x * x + y * y)
    if length > _ZERO:
        return (x / length, y / length)
    return (_ZERO, _ZERO)


@compiled_helper(_F3, U32)
def _normalized_cube(idx):
    s1 = _next(idx)
    s2 = _next(s1)
    s3 = _next(s2)
    x = _unit(s1) - _HALF
    y = _unit(s2) - _HALF
    z = _unit(s3) - _HALF
    length = _sqrt(x * x + y * y + z * z)
    if length > _ZERO:
        return (x / length, y / length, z / length)
    return (_ZERO, _ZERO, _ZERO)


@compiled_helper(_F4, U32)
def _normalized_hypercube(idx):
    s1 = _next(idx)
    s2 = _next(s1)
    s3 = _next(s2)
    s4 = _next(s3)
    a = _unit(s1) - _HALF
    b = _unit(s2) - _HALF
    c = _unit(s3) - _HALF
    d = _unit(s4) - _HALF
    length = _sqrt(_ZERO + a * a + b * b + c * c + d * d)  # Warp's generic dot starts at 0
    if length > _ZERO:
        return (a / length, b / length, c / length, d / length)
    return (_ZERO, _ZERO, _ZERO, _ZERO)


@compiled_helper(_F2, U32, I32, I32)
def _gradient_2d(state, ix, iy):
    return _normalized_square(np.uint32(_times(ix, _P1) ^ np.uint32(_times(iy, _P2) + state)))


@compiled_helper(_F3, U32, I32, I32, I32)
def _gradient_3d(state, ix, iy, iz):
    return _normalized_cube(np.uint32(np.uint32(_times(ix, _P1) ^ _times(iy, _P2))
                                      ^ np.uint32(_times(iz, _P3) + state)))


@compiled_helper(_F4, U32, I32, I32, I32, I32)
def _gradient_4d(state, ix, iy, iz, it):
    head = np.uint32(np.uint32(_times(ix, _P1) ^ _times(iy, _P2)) ^ _times(iz, _P3))
    return _normalized_hypercube(np.uint32(head ^ np.uint32(_times(it, _P4) + state)))


@compiled_helper(F32, U32, I32, I32, F32, F32)
def _dot_2d(state, ix, iy, dx, dy):
    g = _gradient_2d(state, ix, iy)
    return dx * g[0] + dy * g[1]


@compiled_helper(F32, U32, I32, I32, I32, F32, F32, F32)
def _dot_3d(state, ix, iy, iz, dx, dy, dz):
    g = _gradient_3d(state, ix, iy, iz)
    return dx * g[0] + dy * g[1] + dz * g[2]


@compiled_helper(F32, U32, I32, I32, I32, I32, F32, F32, F32, F32)
def _dot_4d(state, ix, iy, iz, it, dx, dy, dz, dt):
    g = _gradient_4d(state, ix, iy, iz, it)
    return dx * g[0] + dy * g[1] + dz * g[2] + dt * g[3]


# Noise on the lattice cell (x0, x1) x (y0, y1) ... at the offsets (dx, dy, ...)


@compiled_helper(F32, U32, I32, I32, F32)
def _noise_1d(state, x0, x1, dx):
    v0 = dx * _gradient_1d(state, x0)
    v1 = (dx - _ONE) * _gradient_1d(state, x1)
    return _interpolate(v0, v1, dx)


@compiled_helper(F32, U32, I32, I32, I32, I32, F32, F32)
def _noise_2d(state, x0, y0, x1, y1, dx, dy):
    xi0 = _interpolate(_dot_2d(state, x0, y0, dx, dy), _dot_2d(state, x1, y0, dx - _ONE, dy), dx)
    xi1 = _interpolate(_dot_2d(state, x0, y1, dx, dy - _ONE),
                       _dot_2d(state, x1, y1, dx - _ONE, dy - _ONE), dx)
    return _interpolate(xi0, xi1, dy)


@compiled_helper(F32, U32, I32, I32, I32, I32, I32, I32, F32, F32, F32)
def _noise_3d(state, x0, y0, z0, x1, y1, z1, dx, dy, dz):
    ex, ey, ez = dx - _ONE, dy - _ONE, dz - _ONE
    xi00 = _interpolate(_dot_3d(state, x0, y0, z0, dx, dy, dz),
                        _dot_3d(state, x1, y0, z0, ex, dy, dz), dx)
    xi10 = _interpolate(_dot_3d(state, x0, y1, z0, dx, ey, dz),
                        _dot_3d(state, x1, y1, z0, ex, ey, dz), dx)
    yi0 = _interpolate(xi00, xi10, dy)
    xi01 = _interpolate(_dot_3d(state, x0, y0, z1, dx, dy, ez),
                        _dot_3d(state, x1, y0, z1, ex, dy, ez), dx)
    xi11 = _interpolate(_dot_3d(state, x0, y1, z1, dx, ey, ez),
                        _dot_3d(state, x1, y1, z1, ex, ey, ez), dx)
    yi1 = _interpolate(xi01, xi11, dy)
    return _interpolate(yi0, yi1, dz)


@compiled_helper(F32, U32, I32, I32, I32, I32, I32, I32, I32, F32, F32, F32, F32)
def _noise_4d_slab(state, x0, y0, z0, x1, y1, z1, t, dx, dy, dz, dt):
    """Warp's noise_4d, the 3-D interpolation at the time index *t* (offset dt)."""
    ex, ey, ez = dx - _ONE, dy - _ONE, dz - _ONE
    xi00 = _interpolate(_dot_4d(state, x0, y0, z0, t, dx, dy, dz, dt),
                        _dot_4d(state, x1, y0, z0, t, ex, dy, dz, dt), dx)
    xi10 = _interpolate(_dot_4d(state, x0, y1, z0, t, dx, ey, dz, dt),
                        _dot_4d(state, x1, y1, z0, t, ex, ey, dz, dt), dx)
    yi0 = _interpolate(xi00, xi10, dy)
    xi01 = _interpolate(_dot_4d(state, x0, y0, z1, t, dx, dy, ez, dt),
                        _dot_4d(state, x1, y0, z1, t, ex, dy, ez, dt), dx)
    xi11 = _interpolate(_dot_4d(state, x0, y1, z1, t, dx, ey, ez, dt),
                        _dot_4d(state, x1, y1, z1, t, ex, ey, ez, dt), dx)
    yi1 = _interpolate(xi01, xi11, dy)
    return _interpolate(yi0, yi1, dz)


@compiled_helper(F32, U32, types.UniTuple(I32, 4), types.UniTuple(I32, 4), _F4)
def _noise_4d(state, cell0, cell1, d):
    z0 = _noise_4d_slab(state, cell0[0], cell0[1], cell0[2], cell1[0], cell1[1], cell1[2],
                        cell0[3], d[0], d[1], d[2], d[3])
    z1 = _noise_4d_slab(state, cell0[0], cell0[1], cell0[2], cell1[0], cell1[1], cell1[2],
                        cell1[3], d[0], d[1], d[2], d[3] - _ONE)
    return _interpolate(z0, z1, d[3])


# Gradients of the noise (for curlnoise)


@compiled_helper(_F2, F32, F32, F32, _F2, _F2, _F2)
def _interpolate_gradient_2d(a0, a1, t, d_a0, d_a1, d_t):
    s, g = _smootherstep(t), (a1 - a0) * _smootherstep_gradient(t)
    return ((d_a1[0] - d_a0[0]) * s + g * d_t[0] + d_a0[0],
            (d_a1[1] - d_a0[1]) * s + g * d_t[1] + d_a0[1])


@compiled_helper(_F3, F32, F32, F32, _F3, _F3, _F3)
def _interpolate_gradient_3d(a0, a1, t, d_a0, d_a1, d_t):
    s, g = _smootherstep(t), (a1 - a0) * _smootherstep_gradient(t)
    return ((d_a1[0] - d_a0[0]) * s + g * d_t[0] + d_a0[0],
            (d_a1[1] - d_a0[1]) * s + g * d_t[1] + d_a0[1],
            (d_a1[2] - d_a0[2]) * s + g * d_t[2] + d_a0[2])


@compiled_helper(_F4, F32, F32, F32, _F4, _F4, _F4)
def _interpolate_gradient_4d(a0, a1, t, d_a0, d_a1, d_t):
    s, g = _smootherstep(t), (a1 - a0) * _smootherstep_gradient(t)
    return ((d_a1[0] - d_a0[0]) * s + g * d_t[0] + d_a0[0],
            (d_a1[1] - d_a0[1]) * s + g * d_t[1] + d_a0[1],
            (d_a1[2] - d_a0[2]) * s + g * d_t[2] + d_a0[2],
            (d_a1[3] - d_a0[3]) * s + g * d_t[3] + d_a0[3])


@compiled_helper(_F2, U32, I32, I32, I32, I32, F32, F32)
def _noise_2d_gradient(state, x0, y0, x1, y1, dx, dy):
    ex, ey = dx - _ONE, dy - _ONE
    g00 = _gradient_2d(state, x0, y0)
    g10 = _gradient_2d(state, x1, y0)
    g01 = _gradient_2d(state, x0, y1)
    g11 = _gradient_2d(state, x1, y1)
    v00 = dx * g00[0] + dy * g00[1]
    v10 = ex * g10[0] + dy * g10[1]
    v01 = dx * g01[0] + ey * g01[1]
    v11 = ex * g11[0] + ey * g11[1]
    along_x = (_ONE, _ZERO)
    xi0 = _interpolate(v00, v10, dx)
    gxi0 = _interpolate_gradient_2d(v00, v10, dx, g00, g10, along_x)
    xi1 = _interpolate(v01, v11, dx)
    gxi1 = _interpolate_gradient_2d(v01, v11, dx, g01, g11, along_x)
    return _interpolate_gradient_2d(xi0, xi1, dy, gxi0, gxi1, (_ZERO, _ONE))


@compiled_helper(F32, _F3, _F3)
def _dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@compiled_helper(_F3, U32, I32, I32, I32, I32, I32, I32, F32, F32, F32)
def _noise_3d_gradient(state, x0, y0, z0, x1, y1, z1, dx, dy, dz):
    ex, ey, ez = dx - _ONE, dy - _ONE, dz - _ONE
    g000 = _gradient_3d(state, x0, y0, z0)
    g100 = _gradient_3d(state, x1, y0, z0)
    g010 = _gradient_3d(state, x0, y1, z0)
    g110 = _gradient_3d(state, x1, y1, z0)
    g001 = _gradient_3d(state, x0, y0, z1)
    g101 = _gradient_3d(state, x1, y0, z1)
    g011 = _gradient_3d(state, x0, y1, z1)
    g111 = _gradient_3d(state, x1, y1, z1)
    v000 = _dot3((dx, dy, dz), g000)
    v100 = _dot3((ex, dy, dz), g100)
    v010 = _dot3((dx, ey, dz), g010)
    v110 = _dot3((ex, ey, dz), g110)
    v001 = _dot3((dx, dy, ez), g001)
    v101 = _dot3((ex, dy, ez), g101)
    v011 = _dot3((dx, ey, ez), g011)
    v111 = _dot3((ex, ey, ez), g111)
    along_x = (_ONE, _ZERO, _ZERO)
    xi00 = _interpolate(v000, v100, dx)
    gxi00 = _interpolate_gradient_3d(v000, v100, dx, g000, g100, along_x)
    xi10 = _interpolate(v010, v110, dx)
    gxi10 = _interpolate_gradient_3d(v010, v110, dx, g010, g110, along_x)
    xi01 = _interpolate(v001, v101, dx)
    gxi01 = _interpolate_gradient_3d(v001, v101, dx, g001, g101, along_x)
    xi11 = _interpolate(v011, v111, dx)
    gxi11 = _interpolate_gradient_3d(v011, v111, dx, g011, g111, along_x)
    along_y = (_ZERO, _ONE, _ZERO)
    yi0 = _interpolate(xi00, xi10, dy)
    gyi0 = _interpolate_gradient_3d(xi00, xi10, dy, gxi00, gxi10, along_y)
    yi1 = _interpolate(xi01, xi11, dy)
    gyi1 = _interpolate_gradient_3d(xi01, xi11, dy, gxi01, gxi11, along_y)
    return _interpolate_gradient_3d(yi0, yi1, dz, gyi0, gyi1, (_ZERO, _ZERO, _ONE))


_I4 = types.UniTuple(I32, 4)
_VALUE_AND_GRADIENT = types.Tuple((F32, _F4))


@compiled_helper(_VALUE_AND_GRADIENT, U32, I32, I32, I32, I32, F32, F32, F32, F32)
def _corner_4d(state, ix, iy, iz, it, ox, oy, oz, ot):
    """(Warp's generic vec4 ``dot(d, g)``, which starts from 0, and the lattice gradient g)."""
    g = _gradient_4d(state, ix, iy, iz, it)
    return _ZERO + ox * g[0] + oy * g[1] + oz * g[2] + ot * g[3], g


@compiled_helper(_VALUE_AND_GRADIENT, _VALUE_AND_GRADIENT, _VALUE_AND_GRADIENT, F32, _F4)
def _edge_4d(a, b, t, unit):
    return _interpolate(a[0], b[0], t), _interpolate_gradient_4d(a[0], b[0], t, a[1], b[1], unit)


@compiled_helper(_VALUE_AND_GRADIENT, U32, I32, I32, I32, I32, I32, F32, F32, F32, F32)
def _x_edge_4d(state, x0, x1, y, z, t, dx, oy, oz, ot):
    return _edge_4d(_corner_4d(state, x0, y, z, t, dx, oy, oz, ot),
                    _corner_4d(state, x1, y, z, t, dx - _ONE, oy, oz, ot), dx,
                    (_ONE, _ZERO, _ZERO, _ZERO))


@compiled_helper(_VALUE_AND_GRADIENT, U32, _I4, _I4, _F4, I32, I32, F32, F32)
def _y_edge_4d(state, c0, c1, d, z, t, oz, ot):
    a = _x_edge_4d(state, c0[0], c1[0], c0[1], z, t, d[0], d[1], oz, ot)
    b = _x_edge_4d(state, c0[0], c1[0], c1[1], z, t, d[0], d[1] - _ONE, oz, ot)
    return _edge_4d(a, b, d[1], (_ZERO, _ONE, _ZERO, _ZERO))


@compiled_helper(_VALUE_AND_GRADIENT, U32, _I4, _I4, _F4, I32, F32)
def _z_edge_4d(state, c0, c1, d, t, ot):
    a = _y_edge_4d(state, c0, c1, d, c0[2], t, d[2], ot)
    b = _y_edge_4d(state, c0, c1, d, c1[2], t, d[2] - _ONE, ot)
    return _edge_4d(a, b, d[2], (_ZERO, _ZERO, _ONE, _ZERO))


@compiled_helper(_F4, U32, _I4, _I4, _F4)
def _noise_4d_gradient(state, c0, c1, d):
    """Warp's noise_4d_gradient: interpolated along x, then y, z and t."""
    a = _z_edge_4d(state, c0, c1, d, c0[3], d[3])
    b = _z_edge_4d(state, c0, c1, d, c1[3], d[3] - _ONE)
    return _interpolate_gradient_4d(a[0], b[0], d[3], a[1], b[1], (_ZERO, _ZERO, _ZERO, _ONE))


# --------------------------------------------------------------------------
# The builtins' implementations


def _noise1(state, x):
    x0 = _cell(x)
    return _noise_1d(state, x0, np.int32(x0 + np.int32(1)), _fraction(x))


def _noise2(state, xy):
    x0, y0 = _cell(xy[0]), _cell(xy[1])
    return _noise_2d(state, x0, y0, np.int32(x0 + np.int32(1)), np.int32(y0 + np.int32(1)),
                     _fraction(xy[0]), _fraction(xy[1]))


def _noise3(state, p):
    x0, y0, z0 = _cell(p[0]), _cell(p[1]), _cell(p[2])
    one = np.int32(1)
    return _noise_3d(state, x0, y0, z0, np.int32(x0 + one), np.int32(y0 + one),
                     np.int32(z0 + one), _fraction(p[0]), _fraction(p[1]), _fraction(p[2]))


def _noise4(state, p):
    one = np.int32(1)
    cell0 = (_cell(p[0]), _cell(p[1]), _cell(p[2]), _cell(p[3]))
    cell1 = (np.int32(cell0[0] + one), np.int32(cell0[1] + one), np.int32(cell0[2] + one),
             np.int32(cell0[3] + one))
    d = (_fraction(p[0]), _fraction(p[1]), _fraction(p[2]), _fraction(p[3]))
    return _noise_4d(state, cell0, cell1, d)


@compiled_helper(types.UniTuple(I32, 2), F32, I32)
def _periodic(x, period):
    """Warp's ``x0 = mod((int)floor(x), p)``, ``x1 = mod(x0 + 1, p)``."""
    x0 = _c_mod(_cell(x), period)
    return x0, _c_mod(np.int32(x0 + np.int32(1)), period)


def _pnoise1(state, x, px):
    x0, x1 = _periodic(x, px)
    return _noise_1d(state, x0, x1, _fraction(x))


def _pnoise2(state, xy, px, py):
    x0, x1 = _periodic(xy[0], px)
    y0, y1 = _periodic(xy[1], py)
    return _noise_2d(state, x0, y0, x1, y1, _fraction(xy[0]), _fraction(xy[1]))


def _pnoise3(state, p, px, py, pz):
    x0, x1 = _periodic(p[0], px)
    y0, y1 = _periodic(p[1], py)
    z0, z1 = _periodic(p[2], pz)
    return _noise_3d(state, x0, y0, z0, x1, y1, z1, _fraction(p[0]), _fraction(p[1]),
                     _fraction(p[2]))


def _pnoise4(state, p, px, py, pz, pt):
    x0, x1 = _periodic(p[0], px)
    y0, y1 = _periodic(p[1], py)
    z0, z1 = _periodic(p[2], pz)
    t0, t1 = _periodic(p[3], pt)
    d = (_fraction(p[0]), _fraction(p[1]), _fraction(p[2]), _fraction(p[3]))
    return _noise_4d(state, (x0, y0, z0, t0), (x1, y1, z1, t1), d)


@compiled_helper(_VEC2, U32, _VEC2, U32, F32, F32)
def _curl2(state, xy, octaves, lacunarity, gain):
    sx, sy = _ZERO, _ZERO
    freq, amplitude = _ONE, _ONE
    for _ in range(octaves):
        px, py = freq * xy[0], freq * xy[1]
        x0, y0 = _cell(px), _cell(py)
        g = _noise_2d_gradient(state, x0, y0, np.int32(x0 + np.int32(1)),
                               np.int32(y0 + np.int32(1)), _fraction(px), _fraction(py))
        sx, sy = sx + amplitude * g[0], sy + amplitude * g[1]
        amplitude = amplitude * gain
        freq = freq * lacunarity
    return vec2(-sy, sx)


@compiled_helper(_F3, _F3, F32, _F3)
def _accumulate(total, amplitude, g):
    return (total[0] + amplitude * g[0], total[1] + amplitude * g[1],
            total[2] + amplitude * g[2])


def _curl3(state, p, octaves, lacunarity, gain):
    s1 = s2 = s3 = (_ZERO, _ZERO, _ZERO)
    freq, amplitude = _ONE, _ONE
    one = np.int32(1)
    for _ in range(octaves):
        px, py, pz = freq * p[0], freq * p[1], freq * p[2]
        x0, y0, z0 = _cell(px), _cell(py), _cell(pz)
        x1, y1, z1 = np.int32(x0 + one), np.int32(y0 + one), np.int32(z0 + one)
        dx, dy, dz = _fraction(px), _fraction(py), _fraction(pz)
        g1 = _noise_3d_gradient(state, x0, y0, z0, x1, y1, z1, dx, dy, dz)
        state = _rand_init(state, _CURL_OFFSET_2)
        g2 = _noise_3d_gradient(state, x0, y0, z0, x1, y1, z1, dx, dy, dz)
        state = _rand_init(state, _CURL_OFFSET_3)
        g3 = _noise_3d_gradient(state, x0, y0, z0, x1, y1, z1, dx, dy, dz)
        s1 = _accumulate(s1, amplitude, g1)
        s2 = _accumulate(s2, amplitude, g2)
        s3 = _accumulate(s3, amplitude, g3)
        amplitude = amplitude * gain
        freq = freq * lacunarity
    return vec3(s3[1] - s2[2], s1[2] - s3[0], s2[0] - s1[1])


@compiled_helper(_F4, _F4, F32, _F4)
def _accumulate4(total, amplitude, g):
    return (total[0] + amplitude * g[0], total[1] + amplitude * g[1],
            total[2] + amplitude * g[2], total[3] + amplitude * g[3])


def _curl4(state, p, octaves, lacunarity, gain):
    s1 = s2 = s3 = (_ZERO, _ZERO, _ZERO, _ZERO)
    freq, amplitude = _ONE, _ONE
    one = np.int32(1)
    for _ in range(octaves):
        q = (freq * p[0], freq * p[1], freq * p[2], freq * p[3])
        c0 = (_cell(q[0]), _cell(q[1]), _cell(q[2]), _cell(q[3]))
        c1 = (np.int32(c0[0] + one), np.int32(c0[1] + one), np.int32(c0[2] + one),
              np.int32(c0[3] + one))
        d = (_fraction(q[0]), _fraction(q[1]), _fraction(q[2]), _fraction(q[3]))
        g1 = _noise_4d_gradient(state, c0, c1, d)
        state = _rand_init(state, _CURL_OFFSET_2)
        g2 = _noise_4d_gradient(state, c0, c1, d)
        state = _rand_init(state, _CURL_OFFSET_3)
        g3 = _noise_4d_gradient(state, c0, c1, d)
        s1 = _accumulate4(s1, amplitude, g1)
        s2 = _accumulate4(s2, amplitude, g2)
        s3 = _accumulate4(s3, amplitude, g3)
        amplitude = amplitude * gain
        freq = freq * lacunarity
    return vec3(s3[1] - s2[2], s1[2] - s3[0], s2[0] - s1[1])


# --------------------------------------------------------------------------
# Parameters and overloads


class _ValueParam(Param):
    """A parameter of exactly one value type (float32 vectors, as Warp's noise takes)."""

    def matches(self, argtype):
        return argtype == self.converted


_NUMBER = (int, float, np.integer, np.floating)
STATE = Param("a uint32 state", (types.Integer, RandomStateType), U32,
              python=(int, np.integer, RandomState))  # a random state: its current value
FLOAT = Param("a float", (types.Integer, types.Float), F32, python=_NUMBER)
PERIOD = Param("an int period", (types.Integer,), I32, python=(int, np.integer))
OCTAVES = Param("a uint32 octave count", (types.Integer,), U32, python=(int, np.integer))
VEC2 = _ValueParam("a vec2", (), _VEC2, python=vec2)
VEC3 = _ValueParam("a vec3", (), _VEC3, python=vec3)
VEC4 = _ValueParam("a vec4", (), _VEC4, python=vec4)

_PYTHON_CONVERSIONS = {STATE: _as_uint32, FLOAT: np.float32, PERIOD: np.int32,
                       OCTAVES: np.uint32}


def _overload(params, result, impl):
    """The overload running *impl*: compiled at the converted types, and in Python with the
    arguments converted as compiled code converts them."""
    conversions = [_PYTHON_CONVERSIONS.get(p) for p in params]

    def python(*args):
        return impl(*[a if c is None else c(np.int64(int(a)) if c is _as_uint32 else a)
                      for c, a in zip(conversions, args)])

    python.__name__ = impl.__name__
    return Overload(params, result, python, compiled(impl))


noise = intrinsic_builtin(
    "noise",
    "noise(state, x): Warp's Perlin noise in [-1, 1] at x (a float, vec2, vec3 or vec4), for\n"
    "the uint32 seed *state*.",
    _overload((STATE, FLOAT), F32, _noise1),
    _overload((STATE, VEC2), F32, _noise2),
    _overload((STATE, VEC3), F32, _noise3),
    _overload((STATE, VEC4), F32, _noise4),
)

pnoise = intrinsic_builtin(
    "pnoise",
    "pnoise(state, x, px[, py, pz, pt]): Warp's periodic Perlin noise: noise tiled with the\n"
    "integer period of each axis (each > 0).",
    _overload((STATE, FLOAT, PERIOD), F32, _pnoise1),
    _overload((STATE, VEC2, PERIOD, PERIOD), F32, _pnoise2),
    _overload((STATE, VEC3, PERIOD, PERIOD, PERIOD), F32, _pnoise3),
    _overload((STATE, VEC4, PERIOD, PERIOD, PERIOD, PERIOD), F32, _pnoise4),
)


def _curl_defaults(impl, point, result):
    """curlnoise's overloads of 2 to 5 arguments (Warp's defaults: octaves=1,
    lacunarity=2.0, gain=0.5)."""
    def given0(state, p):
        return impl(state, p, np.uint32(1), np.float32(2.0), np.float32(0.5))

    def given1(state, p, octaves):
        return impl(state, p, octaves, np.float32(2.0), np.float32(0.5))

    def given2(state, p, octaves, lacunarity):
        return impl(state, p, octaves, lacunarity, np.float32(0.5))

    def given3(state, p, octaves, lacunarity, gain):
        return impl(state, p, octaves, lacunarity, gain)

    bodies = (given0, given1, given2, given3)
    return [_overload((STATE, point) + (OCTAVES, FLOAT, FLOAT)[:k], result, body)
            for k, body in enumerate(bodies)]


compiled_helper(_VEC3, U32, _VEC3, U32, F32, F32)(_curl3)
compiled_helper(_VEC3, U32, _VEC4, U32, F32, F32)(_curl4)

curlnoise = intrinsic_builtin(
    "curlnoise",
    "curlnoise(state, xy, octaves=1, lacunarity=2.0, gain=0.5): Warp's divergence-free noise\n"
    "field: the curl of Perlin noise summed over *octaves* (each *lacunarity* times the\n"
    "frequency and *gain* times the amplitude of the last); a vec2 for a vec2 point, a vec3\n"
    "for a vec3 or vec4 point.",
    *_curl_defaults(_curl2, VEC2, _VEC2),
    *_curl_defaults(_curl3, VEC3, _VEC3),
    *_curl_defaults(_curl4, VEC4, _VEC3),
    keywords=tuple(("state", point, "octaves", "lacunarity", "gain")
                   for point in ("xy", "xyz", "xyzt")),  # Warp's names
)

__all__ = ["noise", "pnoise", "curlnoise"]
