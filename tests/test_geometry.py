"""Geometry builtins (cuda_src/geometry.h): closest_point_edge_edge, triangle_closest_point,
intersect_tri_tri against float64 brute force, Python mode against compiled code (the same
host function, so bit for bit), the typing errors, and the CUDA path compiled and linked
offline. Warp's own numbers: tests/test_geometry_warp.py."""

import numba
import numpy as np
import pytest
from numba.core import types

import numba_sim as sim

N = 2000


def edge_cases(n=N, seed=1):
    """``(n, 12)`` float32 rows p1, q1, p2, q2, with degenerate and parallel edges mixed in."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(-2.0, 2.0, size=(n, 12)).astype(np.float32)
    c[::11, 3:6] = c[::11, 0:3]  # edge 1 a point
    c[5::13, 9:12] = c[5::13, 6:9]  # edge 2 a point
    c[7::17, 9:12] = c[7::17, 6:9] + (c[7::17, 3:6] - c[7::17, 0:3])  # parallel edges
    c[3::19, 6:9] = c[3::19, 0:3]  # touching edges
    return c


def triangle_cases(n=N, seed=2):
    """``(n, 12)`` float32 rows a, b, c, p; p spread around the triangle."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1.0, 1.0, size=(n, 12)).astype(np.float32)
    c[:, 9:12] *= 2.0
    return c


def tri_tri_cases(n=N, seed=3):
    """``(n, 18)`` rows v0, v1, v2, u0, u1, u2: random pairs, coplanar pairs, shared vertices."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1.0, 1.0, size=(n, 18))
    c[1::7, [2, 5, 8, 11, 14, 17]] = 0.25  # coplanar, in z = 0.25
    c[2::9, 9:12] = c[2::9, 0:3]  # a shared vertex
    return c


@numba.njit
def edge_edge_all(cases, eps, out):
    for i in range(cases.shape[0]):
        c = cases[i]
        r = sim.closest_point_edge_edge(sim.vec3(c[0], c[1], c[2]), sim.vec3(c[3], c[4], c[5]),
                                        sim.vec3(c[6], c[7], c[8]), sim.vec3(c[9], c[10], c[11]),
                                        eps)
        out[i, 0], out[i, 1], out[i, 2] = r[0], r[1], r[2]


@numba.njit
def triangle_all(cases, out):
    for i in range(cases.shape[0]):
        c = cases[i]
        r = sim.triangle_closest_point(sim.vec3(c[0], c[1], c[2]), sim.vec3(c[3], c[4], c[5]),
                                       sim.vec3(c[6], c[7], c[8]), sim.vec3(c[9], c[10], c[11]))
        out[i, 0], out[i, 1] = r[0], r[1]


@numba.njit
def tri_tri_all(cases, out):
    for i in range(cases.shape[0]):
        c = cases[i]
        out[i, 0] = sim.intersect_tri_tri(
            sim.vec3(c[0], c[1], c[2]), sim.vec3(c[3], c[4], c[5]), sim.vec3(c[6], c[7], c[8]),
            sim.vec3(c[9], c[10], c[11]), sim.vec3(c[12], c[13], c[14]),
            sim.vec3(c[15], c[16], c[17]))
        out[i, 1] = sim.intersect_tri_tri(
            sim.vec3d(c[0], c[1], c[2]), sim.vec3d(c[3], c[4], c[5]), sim.vec3d(c[6], c[7], c[8]),
            sim.vec3d(c[9], c[10], c[11]), sim.vec3d(c[12], c[13], c[14]),
            sim.vec3d(c[15], c[16], c[17]))


def edge_edge(cases, eps=1e-6):
    out = np.empty((len(cases), 3), np.float32)
    edge_edge_all(cases, np.float32(eps), out)
    return out


def triangle(cases):
    out = np.empty((len(cases), 2), np.float32)
    triangle_all(cases, out)
    return out


def tri_tri(cases):
    out = np.empty((len(cases), 2), np.int32)
    tri_tri_all(cases, out)
    return out


def segment_distance_brute(p1, q1, p2, q2, samples=801):
    """The distance between two segments, in float64, by dense sampling plus projection."""
    s = np.linspace(0.0, 1.0, samples)
    points1 = p1 + s[:, None] * (q1 - p1)
    d2 = q2 - p2
    e = d2 @ d2
    t = np.clip(((points1 - p2) @ d2) / e, 0.0, 1.0) if e > 0 else np.zeros(samples)
    points2 = p2 + t[:, None] * d2
    return np.min(np.linalg.norm(points1 - points2, axis=1))


def test_edge_edge_distance_equals_brute_force():
    cases = edge_cases(400)
    out = edge_edge(cases)
    assert np.all((out[:, :2] >= 0.0) & (out[:, :2] <= 1.0))
    c = cases.astype(np.float64)
    for row, (s, t, d) in zip(c, out):
        p1, q1, p2, q2 = row[0:3], row[3:6], row[6:9], row[9:12]
        # the returned parameters give points d apart ...
        gap = np.linalg.norm((p2 + t * (q2 - p2)) - (p1 + s * (q1 - p1)))
        assert d == pytest.approx(gap, rel=1e-4, abs=1e-5)
        # ... and no pair of points of the two edges is closer
        assert d <= segment_distance_brute(p1, q1, p2, q2) + 1e-4


def test_edge_edge_degenerate_edges_have_parameter_zero():
    p = sim.vec3(1.0, 2.0, 3.0)
    r = sim.closest_point_edge_edge(p, p, sim.vec3(0.0, 0.0, 0.0), sim.vec3(0.0, 0.0, 4.0), 1e-6)
    assert r[0] == 0.0 and r[1] == pytest.approx(0.75) and r[2] == pytest.approx(np.sqrt(5.0))
    r = sim.closest_point_edge_edge(p, p, p, p, 1e-6)
    assert tuple(r) == (0.0, 0.0, 0.0)
    # epsilon decides what is degenerate: a 0.01-long edge is a point for epsilon 1e-3
    r = sim.closest_point_edge_edge(sim.vec3(0.0, 0.0, 0.0), sim.vec3(0.01, 0.0, 0.0),
                                    sim.vec3(0.01, 1.0, 0.0), sim.vec3(0.01, 2.0, 0.0), 1e-3)
    assert r[0] == 0.0 and r[2] == pytest.approx(np.hypot(0.01, 1.0))


def test_triangle_closest_point_equals_brute_force():
    cases = triangle_cases(500)
    out = triangle(cases).astype(np.float64)
    c = cases.astype(np.float64)
    a, b, cc, p = c[:, 0:3], c[:, 3:6], c[:, 6:9], c[:, 9:12]
    w = 1.0 - out[:, 0] - out[:, 1]
    assert np.all(out >= -1e-6) and np.all(w >= -1e-6)
    q = out[:, :1] * a + out[:, 1:2] * b + w[:, None] * cc
    ours = np.linalg.norm(q - p, axis=1)
    # brute force: a dense barycentric sampling of each triangle
    k = 120
    i, j = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
    keep = i + j <= k
    u, v = i[keep] / k, j[keep] / k
    samples = (u[None, :, None] * a[:, None] + v[None, :, None] * b[:, None]
               + (1 - u - v)[None, :, None] * cc[:, None])
    brute = np.min(np.linalg.norm(samples - p[:, None], axis=2), axis=1)
    assert np.all(ours <= brute + 1e-5)
    assert np.all(ours >= brute - 0.03 * np.linalg.norm(b - a, axis=1) - 1e-5)


def test_triangle_closest_point_regions():
    a, b, c = sim.vec3(0.0, 0.0, 0.0), sim.vec3(1.0, 0.0, 0.0), sim.vec3(0.0, 1.0, 0.0)
    assert tuple(sim.triangle_closest_point(a, b, c, sim.vec3(-1.0, -1.0, 0.0))) == (1.0, 0.0)
    assert tuple(sim.triangle_closest_point(a, b, c, sim.vec3(2.0, -1.0, 0.0))) == (0.0, 1.0)
    assert tuple(sim.triangle_closest_point(a, b, c, sim.vec3(-1.0, 2.0, 0.0))) == (0.0, 0.0)
    u, v = sim.triangle_closest_point(a, b, c, sim.vec3(0.5, -1.0, 3.0))
    assert (u, v) == (0.5, 0.5)
    u, v = sim.triangle_closest_point(a, b, c, sim.vec3(0.25, 0.25, -1.0))
    assert (u, v) == pytest.approx((0.5, 0.25))


def separated_by_axis(v, u):
    """Whether the triangles (3x3 float64 each) are separated (the 11 axes of the SAT)."""
    ev = [v[1] - v[0], v[2] - v[1], v[0] - v[2]]
    eu = [u[1] - u[0], u[2] - u[1], u[0] - u[2]]
    axes = [np.cross(ev[0], ev[1]), np.cross(eu[0], eu[1])]
    axes += [np.cross(a, b) for a in ev for b in eu]
    for axis in axes:
        if np.dot(axis, axis) < 1e-20:
            continue
        pv, pu = v @ axis, u @ axis
        scale = 1e-9 * (np.abs(pv).max() + np.abs(pu).max() + 1.0)
        if pv.max() < pu.min() - scale or pu.max() < pv.min() - scale:
            return True
    return False


def test_intersect_tri_tri_equals_separating_axes():
    cases = tri_tri_cases()
    out = tri_tri(cases)
    non_coplanar = np.ones(len(cases), bool)
    non_coplanar[1::7] = False  # coplanar pairs: the SAT above has no in-plane edge normals
    non_coplanar[2::9] = False  # touching at a shared vertex: Moeller's test may say either
    agree = 0
    for row, (f32, f64), check in zip(cases, out, non_coplanar):
        if not check:
            continue
        v, u = row[:9].reshape(3, 3), row[9:].reshape(3, 3)
        expected = 0 if separated_by_axis(v, u) else 1
        assert f64 == expected
        agree += f32 == expected
    assert agree >= 0.99 * non_coplanar.sum()


def test_intersect_tri_tri_coplanar_and_touching():
    def t(*values, d=False):
        vec = sim.vec3d if d else sim.vec3
        return [vec(*values[i:i + 3]) for i in range(0, 9, 3)]

    for d in (False, True):
        a = t(0, 0, 0, 2, 0, 0, 0, 2, 0, d=d)
        assert sim.intersect_tri_tri(*a, *t(1, 1, -1, 1, 1, 1, 1, -1, 0, d=d)) == 1  # Warp's doc
        assert sim.intersect_tri_tri(*a, *t(0.5, 0.5, 0, 3, 0.5, 0, 0.5, 3, 0, d=d)) == 1
        assert sim.intersect_tri_tri(*a, *t(0.2, 0.2, 0, 0.4, 0.2, 0, 0.2, 0.4, 0, d=d)) == 1
        assert sim.intersect_tri_tri(*a, *t(3, 3, 0, 4, 3, 0, 3, 4, 0, d=d)) == 0
        assert sim.intersect_tri_tri(*a, *t(0, 0, 1, 2, 0, 1, 0, 2, 1, d=d)) == 0  # parallel


def test_python_mode_equals_compiled():
    cases = edge_cases(300)
    ours = edge_edge(cases)
    for row, expected in zip(cases, ours):
        r = sim.closest_point_edge_edge(*(sim.vec3(*row[k:k + 3]) for k in range(0, 12, 3)), 1e-6)
        assert np.array_equal(np.asarray(r), expected)
    cases = triangle_cases(300)
    ours = triangle(cases)
    for row, expected in zip(cases, ours):
        r = sim.triangle_closest_point(*(sim.vec3(*row[k:k + 3]) for k in range(0, 12, 3)))
        assert np.array_equal(np.asarray(r), expected)
    cases = tri_tri_cases(300)
    ours = tri_tri(cases)
    for row, expected in zip(cases, ours):
        f32 = sim.intersect_tri_tri(*(sim.vec3(*row[k:k + 3]) for k in range(0, 18, 3)))
        f64 = sim.intersect_tri_tri(*(sim.vec3d(*row[k:k + 3]) for k in range(0, 18, 3)))
        assert (f32, f64) == tuple(expected)
        assert isinstance(f32, np.int32)


@pytest.mark.parametrize("call, message", [
    (lambda: sim.closest_point_edge_edge(sim.vec3(), sim.vec3(), sim.vec3(), sim.vec3()),
     "closest_point_edge_edge.*epsilon"),
    (lambda: sim.closest_point_edge_edge(sim.vec3(), sim.vec3(), sim.vec3(), sim.vec3d(), 0.0),
     "closest_point_edge_edge.*four vec3"),
    (lambda: sim.triangle_closest_point(sim.vec3(), sim.vec3(), sim.vec3()),
     "triangle_closest_point.*four vec3"),
    (lambda: sim.intersect_tri_tri(*[sim.vec3()] * 5, sim.vec3d()),
     "intersect_tri_tri.*six vec3 values or six vec3d"),
    (lambda: sim.intersect_tri_tri(*[sim.vec2()] * 6), "intersect_tri_tri.*six vec3"),
])
def test_bad_arguments_name_the_builtin(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_typing_errors_in_compiled_code():
    @numba.njit
    def bad(a):
        return sim.intersect_tri_tri(a, a, a, a, a, sim.vec3d(0.0, 0.0, 0.0))

    with pytest.raises(numba.core.errors.TypingError, match="intersect_tri_tri.*six vec3"):
        bad(sim.vec3(0.0, 0.0, 0.0))


def geometry_kernel(edges, triangles, pairs, out_edges, out_triangles, out_pairs):
    i = numba.cuda.grid(1)
    if i < edges.shape[0]:
        c = edges[i]
        r = sim.closest_point_edge_edge(sim.vec3(c[0], c[1], c[2]), sim.vec3(c[3], c[4], c[5]),
                                        sim.vec3(c[6], c[7], c[8]), sim.vec3(c[9], c[10], c[11]),
                                        np.float32(1e-6))
        out_edges[i, 0], out_edges[i, 1], out_edges[i, 2] = r[0], r[1], r[2]
        c = triangles[i]
        b = sim.triangle_closest_point(sim.vec3(c[0], c[1], c[2]), sim.vec3(c[3], c[4], c[5]),
                                       sim.vec3(c[6], c[7], c[8]), sim.vec3(c[9], c[10], c[11]))
        out_triangles[i, 0], out_triangles[i, 1] = b[0], b[1]
        d = pairs[i]
        out_pairs[i, 0] = sim.intersect_tri_tri(
            sim.vec3(d[0], d[1], d[2]), sim.vec3(d[3], d[4], d[5]), sim.vec3(d[6], d[7], d[8]),
            sim.vec3(d[9], d[10], d[11]), sim.vec3(d[12], d[13], d[14]),
            sim.vec3(d[15], d[16], d[17]))
        out_pairs[i, 1] = sim.intersect_tri_tri(
            sim.vec3d(d[0], d[1], d[2]), sim.vec3d(d[3], d[4], d[5]), sim.vec3d(d[6], d[7], d[8]),
            sim.vec3d(d[9], d[10], d[11]), sim.vec3d(d[12], d[13], d[14]),
            sim.vec3d(d[15], d[16], d[17]))


GEOMETRY_KERNEL_ARGTYPES = (types.float32[:, ::1], types.float32[:, ::1], types.float64[:, ::1],
                            types.float32[:, ::1], types.float32[:, ::1], types.int32[:, ::1])


def test_cuda_kernel_compiles_and_links_offline(offline_cuda, private_device_code_cache):
    cubin = offline_cuda.cubin(geometry_kernel, GEOMETRY_KERNEL_ARGTYPES)
    assert cubin[:4] == b"\x7fELF"
