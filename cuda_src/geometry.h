// Geometric queries on points, segments and triangles: Warp's algorithms
// (warp/native/intersect.h, intersect_tri.h), operation for operation, so that
// the host build gives Warp's CPU numbers bit for bit.
#ifndef SIM_GEOMETRY_H
#define SIM_GEOMETRY_H

#include "sim_vec.h"

namespace sim {

// The point of segment [a, b] closest to p. The segment parameter is clamped
// to [0, 1]; a degenerate segment (a == b) yields a.
SIM_FUNC vec3f closest_point_on_segment(vec3f a, vec3f b, vec3f p) {
    vec3f ab = sub(b, a);
    float denom = dot(ab, ab);
    if (denom <= 0.0f) {
        return a;
    }
    float t = clamp_f(dot(sub(p, a), ab) / denom, 0.0f, 1.0f);
    return add(a, mul(ab, t));
}

// Warp's clamp (min(max(x, lo), hi) with its own comparisons).
SIM_FUNC float warp_clamp(float x, float lo, float hi) {
    const float m = x > lo ? x : lo;  // wp::max(a, b) = a > b ? a : b
    return m < hi ? m : hi;           // wp::min(a, b) = a < b ? a : b
}

// a * b - c * d with Kahan's compensation (two fused multiply-adds), as Warp's
// diff_product (fmaf is exact on every platform, in hardware or in libm).
SIM_FUNC float diff_product_f(float a, float b, float c, float d) {
    const float cd = c * d;
#ifdef SIM_DEVICE_COMPILE
    return fmaf(a, b, -cd) + fmaf(-c, d, cd);
#else
    return __builtin_fmaf(a, b, -cd) + __builtin_fmaf(-c, d, cd);
#endif
}

// Closest points of the edges [p1, q1] and [p2, q2] (Ericson, Real-Time
// Collision Detection 5.1.9, as warp::closest_point_edge_edge): (s, t, d) with
// the points p1 + s (q1 - p1), p2 + t (q2 - p2) and their distance d. An edge
// whose squared length is <= epsilon is a point (its parameter 0).
SIM_FUNC vec3f closest_point_edge_edge(vec3f p1, vec3f q1, vec3f p2, vec3f q2, float epsilon) {
    const vec3f d1 = sub(q1, p1);
    const vec3f d2 = sub(q2, p2);
    const vec3f r = sub(p1, p2);
    const float a = dot(d1, d1);
    const float e = dot(d2, d2);
    const float f = dot(d2, r);
    float s = 0.0f, t = 0.0f;
    const bool degen1 = a <= epsilon, degen2 = e <= epsilon;
    if (degen1 && degen2) {
        // both points: s = t = 0
    } else if (degen1) {
        t = warp_clamp(f / e, 0.0f, 1.0f);
    } else if (degen2) {
        s = warp_clamp(-dot(d1, r) / a, 0.0f, 1.0f);
    } else {
        const float c = dot(d1, r);
        const float b = dot(d1, d2);
        const float denom = diff_product_f(a, e, b, b);
        float s_init = 0.0f;
        if (denom > 0.0f) s_init = warp_clamp(diff_product_f(b, f, c, e) / denom, 0.0f, 1.0f);
        const float t_init = (b * s_init + f) / e;
        if (t_init < 0.0f) {
            s = warp_clamp(-c / a, 0.0f, 1.0f);
        } else if (t_init > 1.0f) {
            s = warp_clamp((b - c) / a, 0.0f, 1.0f);
            t = 1.0f;
        } else {
            s = s_init;
            t = t_init;
        }
    }
    const vec3f c1 = add(p1, mul(d1, s));
    const vec3f c2 = add(p2, mul(d2, t));
    return make_vec3f(s, t, length(sub(c2, c1)));
}

// Barycentric weights (u, v) of a and b of the point of triangle abc closest
// to p (c weighs 1 - u - v): Ericson's Voronoi-region test, as Warp's native
// closest_point_to_triangle (its mesh queries). On edge bc that one sets u to
// 1 - v - w, which may round to a few ulp off 0; `exact_bc` sets it to 0, as
// the triangle_closest_point of Warp's tests (the builtin's form).
SIM_FUNC void closest_point_to_triangle(vec3f a, vec3f b, vec3f c, vec3f p, float& u, float& v,
                                        bool exact_bc = false) {
    const vec3f ab = sub(b, a), ac = sub(c, a), ap = sub(p, a);
    float w;
    const float d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0.0f && d2 <= 0.0f) {
        v = 0.0f, w = 0.0f, u = 1.0f - v - w;
        return;
    }
    const vec3f bp = sub(p, b);
    const float d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0.0f && d4 <= d3) {
        v = 1.0f, w = 0.0f, u = 1.0f - v - w;
        return;
    }
    const float vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) {
        v = d1 / (d1 - d3), w = 0.0f, u = 1.0f - v - w;
        return;
    }
    const vec3f cp = sub(p, c);
    const float d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0.0f && d5 <= d6) {
        v = 0.0f, w = 1.0f, u = 1.0f - v - w;
        return;
    }
    const float vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) {
        v = 0.0f, w = d2 / (d2 - d6), u = 1.0f - v - w;
        return;
    }
    const float va = d3 * d6 - d5 * d4;
    if (va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f) {
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6)), v = 1.0f - w;
        u = exact_bc ? 0.0f : 1.0f - v - w;
        return;
    }
    const float denom = 1.0f / (va + vb + vc);
    v = vb * denom, w = vc * denom, u = 1.0f - v - w;
}

// Barycentric weights (u, v) of the vertex of abc farthest from p (Warp's
// furthest_point_to_triangle: the farthest point of a triangle is a vertex).
SIM_FUNC void furthest_point_to_triangle(vec3f a, vec3f b, vec3f c, vec3f p, float& u, float& v) {
    const vec3f pa = sub(p, a), pb = sub(p, b), pc = sub(p, c);
    const float dist_a = dot(pa, pa), dist_b = dot(pb, pb), dist_c = dot(pc, pc);
    if (dist_a > dist_b && dist_a > dist_c) {
        u = 1.0f, v = 0.0f;
    } else if (dist_b > dist_c) {
        u = 0.0f, v = 1.0f;
    } else {
        u = 0.0f, v = 0.0f;
    }
}

// ---------------------------------------------------------------------------
// Triangle-triangle intersection: Moeller's "A Fast Triangle-Triangle
// Intersection Test" (1997, the division-free version), as Warp's
// NoDivTriTriIsect, in float or double (T). 1 when the triangles intersect
// (coplanar ones when they overlap in their plane), else 0.
namespace tri_tri {

template <class T> SIM_FUNC T abs_t(T x) { return x < T(0) ? -x : x; }

template <class T> SIM_FUNC void cross3(T* dest, const T* v1, const T* v2) {
    dest[0] = v1[1] * v2[2] - v1[2] * v2[1];
    dest[1] = v1[2] * v2[0] - v1[0] * v2[2];
    dest[2] = v1[0] * v2[1] - v1[1] * v2[0];
}

template <class T> SIM_FUNC T dot3(const T* v1, const T* v2) {
    return v1[0] * v2[0] + v1[1] * v2[1] + v1[2] * v2[2];
}

template <class T> SIM_FUNC void sub3(T* dest, const T* v1, const T* v2) {
    dest[0] = v1[0] - v2[0];
    dest[1] = v1[1] - v2[1];
    dest[2] = v1[2] - v2[2];
}

// Franklin Antonio's edge test (Graphics Gems III): whether edge V0 + (Ax, Ay)
// crosses edge U0-U1, projected on the axes i0, i1.
template <class T>
SIM_FUNC bool edge_edge(T Ax, T Ay, const T* V0, const T* U0, const T* U1, int i0, int i1) {
    const T Bx = U0[i0] - U1[i0];
    const T By = U0[i1] - U1[i1];
    const T Cx = V0[i0] - U0[i0];
    const T Cy = V0[i1] - U0[i1];
    const T f = Ay * Bx - Ax * By;
    const T d = By * Cx - Bx * Cy;
    if ((f > 0 && d >= 0 && d <= f) || (f < 0 && d <= 0 && d >= f)) {
        const T e = Ax * Cy - Ay * Cx;
        if (f > 0) {
            if (e >= 0 && e <= f) return true;
        } else {
            if (e <= 0 && e >= f) return true;
        }
    }
    return false;
}

template <class T>
SIM_FUNC bool edge_against_tri_edges(const T* V0, const T* V1, const T* U0, const T* U1,
                                     const T* U2, int i0, int i1) {
    const T Ax = V1[i0] - V0[i0];
    const T Ay = V1[i1] - V0[i1];
    return edge_edge(Ax, Ay, V0, U0, U1, i0, i1) || edge_edge(Ax, Ay, V0, U1, U2, i0, i1) ||
           edge_edge(Ax, Ay, V0, U2, U0, i0, i1);
}

template <class T>
SIM_FUNC bool point_in_tri(const T* V0, const T* U0, const T* U1, const T* U2, int i0, int i1) {
    T a = U1[i1] - U0[i1];
    T b = -(U1[i0] - U0[i0]);
    T c = -a * U0[i0] - b * U0[i1];
    const T d0 = a * V0[i0] + b * V0[i1] + c;
    a = U2[i1] - U1[i1];
    b = -(U2[i0] - U1[i0]);
    c = -a * U1[i0] - b * U1[i1];
    const T d1 = a * V0[i0] + b * V0[i1] + c;
    a = U0[i1] - U2[i1];
    b = -(U0[i0] - U2[i0]);
    c = -a * U2[i0] - b * U2[i1];
    const T d2 = a * V0[i0] + b * V0[i1] + c;
    return d0 * d1 > 0.0 && d0 * d2 > 0.0;
}

template <class T>
SIM_FUNC int coplanar(const T* N, const T* V0, const T* V1, const T* V2, const T* U0, const T* U1,
                      const T* U2) {
    // project onto the axis-aligned plane that maximizes the triangles' area
    const T A0 = abs_t(N[0]), A1 = abs_t(N[1]), A2 = abs_t(N[2]);
    int i0, i1;
    if (A0 > A1) {
        if (A0 > A2) {
            i0 = 1, i1 = 2;
        } else {
            i0 = 0, i1 = 1;
        }
    } else {
        if (A2 > A1) {
            i0 = 0, i1 = 1;
        } else {
            i0 = 0, i1 = 2;
        }
    }
    if (edge_against_tri_edges(V0, V1, U0, U1, U2, i0, i1)) return 1;
    if (edge_against_tri_edges(V1, V2, U0, U1, U2, i0, i1)) return 1;
    if (edge_against_tri_edges(V2, V0, U0, U1, U2, i0, i1)) return 1;
    // one triangle inside the other
    if (point_in_tri(V0, U0, U1, U2, i0, i1)) return 1;
    if (point_in_tri(U0, V0, V1, V2, i0, i1)) return 1;
    return 0;
}

// The interval of the triangle on the line of intersection (NEWCOMPUTE_INTERVALS);
// false when the triangles are coplanar.
template <class T>
SIM_FUNC bool intervals(T VV0, T VV1, T VV2, T D0, T D1, T D2, T D0D1, T D0D2, T& A, T& B, T& C,
                        T& X0, T& X1) {
    if (D0D1 > 0.0f) {
        A = VV2, B = (VV0 - VV2) * D2, C = (VV1 - VV2) * D2, X0 = D2 - D0, X1 = D2 - D1;
    } else if (D0D2 > 0.0f) {
        A = VV1, B = (VV0 - VV1) * D1, C = (VV2 - VV1) * D1, X0 = D1 - D0, X1 = D1 - D2;
    } else if (D1 * D2 > 0.0f || D0 != 0.0f) {
        A = VV0, B = (VV1 - VV0) * D0, C = (VV2 - VV0) * D0, X0 = D0 - D1, X1 = D0 - D2;
    } else if (D1 != 0.0f) {
        A = VV1, B = (VV0 - VV1) * D1, C = (VV2 - VV1) * D1, X0 = D1 - D0, X1 = D1 - D2;
    } else if (D2 != 0.0f) {
        A = VV2, B = (VV0 - VV2) * D2, C = (VV1 - VV2) * D2, X0 = D2 - D0, X1 = D2 - D1;
    } else {
        return false;
    }
    return true;
}

template <class T> SIM_FUNC void sort2(T& a, T& b) {
    if (a > b) {
        const T c = a;
        a = b;
        b = c;
    }
}

template <class T>
SIM_FUNC int intersect(const T* V0, const T* V1, const T* V2, const T* U0, const T* U1,
                       const T* U2) {
    const double epsilon = 0.000001;  // Moeller's coplanarity tolerance (a double, as Warp's)
    T E1[3], E2[3], N1[3], N2[3], D[3];
    // plane of triangle 1: N1.X + d1 = 0, and the signed distances of triangle 2's points
    sub3(E1, V1, V0);
    sub3(E2, V2, V0);
    cross3(N1, E1, E2);
    const T d1 = -dot3(N1, V0);
    T du0 = dot3(N1, U0) + d1, du1 = dot3(N1, U1) + d1, du2 = dot3(N1, U2) + d1;
    if (abs_t(du0) < epsilon) du0 = 0.0;
    if (abs_t(du1) < epsilon) du1 = 0.0;
    if (abs_t(du2) < epsilon) du2 = 0.0;
    const T du0du1 = du0 * du1, du0du2 = du0 * du2;
    if (du0du1 > 0.0f && du0du2 > 0.0f) return 0;
    // plane of triangle 2, and the signed distances of triangle 1's points
    sub3(E1, U1, U0);
    sub3(E2, U2, U0);
    cross3(N2, E1, E2);
    const T d2 = -dot3(N2, U0);
    T dv0 = dot3(N2, V0) + d2, dv1 = dot3(N2, V1) + d2, dv2 = dot3(N2, V2) + d2;
    if (abs_t(dv0) < epsilon) dv0 = 0.0;
    if (abs_t(dv1) < epsilon) dv1 = 0.0;
    if (abs_t(dv2) < epsilon) dv2 = 0.0;
    const T dv0dv1 = dv0 * dv1, dv0dv2 = dv0 * dv2;
    if (dv0dv1 > 0.0f && dv0dv2 > 0.0f) return 0;
    // the direction of the line of intersection, and its largest axis
    cross3(D, N1, N2);
    T max = abs_t(D[0]);
    int index = 0;
    const T bb = abs_t(D[1]), cc = abs_t(D[2]);
    if (bb > max) max = bb, index = 1;
    if (cc > max) max = cc, index = 2;
    const T vp0 = V0[index], vp1 = V1[index], vp2 = V2[index];
    const T up0 = U0[index], up1 = U1[index], up2 = U2[index];
    T a, b, c, x0, x1;
    if (!intervals(vp0, vp1, vp2, dv0, dv1, dv2, dv0dv1, dv0dv2, a, b, c, x0, x1)) {
        return coplanar(N1, V0, V1, V2, U0, U1, U2);
    }
    T d, e, f, y0, y1;
    if (!intervals(up0, up1, up2, du0, du1, du2, du0du1, du0du2, d, e, f, y0, y1)) {
        return coplanar(N1, V0, V1, V2, U0, U1, U2);
    }
    const T xx = x0 * x1, yy = y0 * y1, xxyy = xx * yy;
    T isect1[2], isect2[2];
    T tmp = a * xxyy;
    isect1[0] = tmp + b * x1 * yy;
    isect1[1] = tmp + c * x0 * yy;
    tmp = d * xxyy;
    isect2[0] = tmp + e * xx * y1;
    isect2[1] = tmp + f * xx * y0;
    sort2(isect1[0], isect1[1]);
    sort2(isect2[0], isect2[1]);
    if (isect1[1] < isect2[0] || isect2[1] < isect1[0]) return 0;
    return 1;
}

}  // namespace tri_tri

}  // namespace sim

#endif  // SIM_GEOMETRY_H
