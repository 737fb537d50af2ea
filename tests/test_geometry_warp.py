"""The geometry builtins give Warp's CPU numbers bit for bit (warp-lang's kernels on the CPU).

closest_point_edge_edge and intersect_tri_tri are Warp builtins; triangle_closest_point is
the closest_point_to_triangle of Warp's native code (mesh queries), which Warp's tests write
as a @wp.func: compared with that. Skipped when warp-lang is not installed.
"""

import numpy as np
import pytest

from test_geometry import edge_cases, edge_edge, tri_tri, tri_tri_cases, triangle, triangle_cases

wp = pytest.importorskip("warp")


@pytest.fixture(scope="module")
def warp_kernels():
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def edge_edge_kernel(c: wp.array2d(dtype=float), eps: float, out: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        out[i] = wp.closest_point_edge_edge(wp.vec3(c[i, 0], c[i, 1], c[i, 2]),
                                            wp.vec3(c[i, 3], c[i, 4], c[i, 5]),
                                            wp.vec3(c[i, 6], c[i, 7], c[i, 8]),
                                            wp.vec3(c[i, 9], c[i, 10], c[i, 11]), eps)

    @wp.func
    def triangle_closest_point(a: wp.vec3, b: wp.vec3, c: wp.vec3, p: wp.vec3):
        # Warp's tests' copy of its native closest_point_to_triangle
        ab = b - a
        ac = c - a
        ap = p - a
        d1 = wp.dot(ab, ap)
        d2 = wp.dot(ac, ap)
        if d1 <= 0.0 and d2 <= 0.0:
            return wp.vec2(1.0, 0.0)
        bp = p - b
        d3 = wp.dot(ab, bp)
        d4 = wp.dot(ac, bp)
        if d3 >= 0.0 and d4 <= d3:
            return wp.vec2(0.0, 1.0)
        vc = d1 * d4 - d3 * d2
        v = d1 / (d1 - d3)
        if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
            return wp.vec2(1.0 - v, v)
        cp = p - c
        d5 = wp.dot(ab, cp)
        d6 = wp.dot(ac, cp)
        if d6 >= 0.0 and d5 <= d6:
            return wp.vec2(0.0, 0.0)
        vb = d5 * d2 - d1 * d6
        w = d2 / (d2 - d6)
        if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
            return wp.vec2(1.0 - w, 0.0)
        va = d3 * d6 - d5 * d4
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
            return wp.vec2(0.0, 1.0 - w)
        denom = 1.0 / (va + vb + vc)
        v = vb * denom
        w = vc * denom
        return wp.vec2(1.0 - v - w, v)

    @wp.kernel
    def triangle_kernel(c: wp.array2d(dtype=float), out: wp.array(dtype=wp.vec2)):
        i = wp.tid()
        out[i] = triangle_closest_point(wp.vec3(c[i, 0], c[i, 1], c[i, 2]),
                                        wp.vec3(c[i, 3], c[i, 4], c[i, 5]),
                                        wp.vec3(c[i, 6], c[i, 7], c[i, 8]),
                                        wp.vec3(c[i, 9], c[i, 10], c[i, 11]))

    @wp.kernel
    def tri_tri_kernel(c: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=int)):
        i = wp.tid()
        out[i, 0] = wp.intersect_tri_tri(
            wp.vec3(float(c[i, 0]), float(c[i, 1]), float(c[i, 2])),
            wp.vec3(float(c[i, 3]), float(c[i, 4]), float(c[i, 5])),
            wp.vec3(float(c[i, 6]), float(c[i, 7]), float(c[i, 8])),
            wp.vec3(float(c[i, 9]), float(c[i, 10]), float(c[i, 11])),
            wp.vec3(float(c[i, 12]), float(c[i, 13]), float(c[i, 14])),
            wp.vec3(float(c[i, 15]), float(c[i, 16]), float(c[i, 17])))
        out[i, 1] = wp.intersect_tri_tri(
            wp.vec3d(c[i, 0], c[i, 1], c[i, 2]), wp.vec3d(c[i, 3], c[i, 4], c[i, 5]),
            wp.vec3d(c[i, 6], c[i, 7], c[i, 8]), wp.vec3d(c[i, 9], c[i, 10], c[i, 11]),
            wp.vec3d(c[i, 12], c[i, 13], c[i, 14]), wp.vec3d(c[i, 15], c[i, 16], c[i, 17]))

    def run(kernel, cases, out_shape, dtype, *extra):
        out = wp.zeros(out_shape, dtype=dtype, device="cpu")
        wp.launch(kernel, dim=len(cases), device="cpu",
                  inputs=[wp.array(cases, device="cpu"), *extra, out])
        return out.numpy()

    return {
        "edge_edge": lambda c, eps: run(edge_edge_kernel, c, len(c), wp.vec3, eps),
        "triangle": lambda c: run(triangle_kernel, c, len(c), wp.vec2),
        "tri_tri": lambda c: run(tri_tri_kernel, c, (len(c), 2), int),
    }


@pytest.mark.parametrize("eps", [1e-6, 0.5])
def test_closest_point_edge_edge_bit_for_bit(warp_kernels, eps):
    cases = edge_cases(4000, seed=11)
    assert np.array_equal(edge_edge(cases, eps), warp_kernels["edge_edge"](cases, eps))


def test_triangle_closest_point_bit_for_bit(warp_kernels):
    cases = triangle_cases(4000, seed=12)
    assert np.array_equal(triangle(cases), warp_kernels["triangle"](cases))


def test_intersect_tri_tri_equals_warps(warp_kernels):
    cases = tri_tri_cases(4000, seed=13)
    ours = tri_tri(cases)
    warps = warp_kernels["tri_tri"](cases)
    assert np.array_equal(ours, warps)
    assert 0.1 < ours.mean() < 0.9  # both answers occur
