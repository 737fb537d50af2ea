// The fast winding number of a triangle mesh (Barill et al. 2018), as Warp's
// solid_angle.h (after SideFX's UT_SolidAngle, MIT licence, Copyright (c)
// 2018 Side Effects Software Inc.): every BVH node keeps the dipole
// expansion of its triangles (SolidAngleProps, up to second order); a query
// sums the exact solid angles of the triangles of nearby leaves and the
// expansion of far nodes (farther than `accuracy` times the node's radius).
#ifndef SIM_SOLID_ANGLE_H
#define SIM_SOLID_ANGLE_H

#include "sim_vec.h"

namespace sim {

struct SolidAngleProps {
    vec3f average_p;
    vec3f normal;
    vec3f n_ij_diag;
    vec3f n_ijk_diag;
    float sum_permute_n_xyz;
    float two_n_xxy_n_yxx;
    float two_n_xxz_n_zxx;
    float two_n_yyz_n_zyy;
    float two_n_yyx_n_xyy;
    float two_n_zzx_n_xzz;
    float two_n_zzy_n_yzz;
    float n_xy, n_yx, n_yz, n_zy, n_zx, n_xz;
    vec3f box_lower, box_upper;
    vec3f area_p;
    float area;
    float max_p_dist_sq;
};

static_assert(sizeof(SolidAngleProps) == 144, "SolidAngleProps layout changed: update numba_sim");

SIM_FUNC float component(const vec3f& v, int i) { return i == 0 ? v.x : (i == 1 ? v.y : v.z); }
SIM_FUNC vec3f cw_mul3(vec3f a, vec3f b) { return make_vec3f(a.x * b.x, a.y * b.y, a.z * b.z); }
SIM_FUNC vec3f scale3(float s, vec3f a) { return make_vec3f(s * a.x, s * a.y, s * a.z); }
SIM_FUNC vec3f div3(vec3f a, float s) { return make_vec3f(a.x / s, a.y / s, a.z / s); }
SIM_FUNC float warp_min(float a, float b) { return a < b ? a : b; }
SIM_FUNC float warp_max(float a, float b) { return a > b ? a : b; }
SIM_FUNC vec3f min3(vec3f a, vec3f b) {
    return make_vec3f(warp_min(a.x, b.x), warp_min(a.y, b.y), warp_min(a.z, b.z));
}
SIM_FUNC vec3f max3(vec3f a, vec3f b) {
    return make_vec3f(warp_max(a.x, b.x), warp_max(a.y, b.y), warp_max(a.z, b.z));
}

// Integrals of the squared coordinates over the triangle (sorted along axis i).
SIM_FUNC void solid_angle_integrals(vec3f a, vec3f b, vec3f c, vec3f P, float* integral_ii,
                                    float* integral_ij, float* integral_ik, int i) {
    const vec3f oab = sub(b, a), oac = sub(c, a), ocb = sub(b, c);
    const float t = component(oab, i) / component(oac, i);
    const int j = (i == 2) ? 0 : (i + 1);
    const int k = (j == 2) ? 0 : (j + 1);
    const float jdiff = t * component(oac, j) - component(oab, j);
    const float kdiff = t * component(oac, k) - component(oab, k);
    const vec3f cross_a = make_vec3f(jdiff * component(oab, k) - kdiff * component(oab, j),
                                     kdiff * component(oab, i), jdiff * component(oab, i));
    const vec3f cross_c = make_vec3f(jdiff * component(ocb, k) - kdiff * component(ocb, j),
                                     kdiff * component(ocb, i), jdiff * component(ocb, i));
    const float area_scale_a = length(cross_a);
    const float area_scale_c = length(cross_c);
    const float Pai = component(a, i) - component(P, i);
    const float Pci = component(c, i) - component(P, i);
    const float oabi = component(oab, i), ocbi = component(ocb, i);
    const float int_ii_a =
        area_scale_a * (0.5f * Pai * Pai + (2.0f / 3.0f) * Pai * oabi + 0.25f * oabi * oabi);
    const float int_ii_c =
        area_scale_c * (0.5f * Pci * Pci + (2.0f / 3.0f) * Pci * ocbi + 0.25f * ocbi * ocbi);
    *integral_ii = int_ii_a + int_ii_c;
    int jk = j;
    float* integral = integral_ij;
    float diff = jdiff;
    for (;;) {  // j, then k
        if (integral) {
            const float obmidj = component(b, jk) + 0.5f * diff;
            const float oabmidj = obmidj - component(a, jk);
            const float ocbmidj = obmidj - component(c, jk);
            const float Paj = component(a, jk) - component(P, jk);
            const float Pcj = component(c, jk) - component(P, jk);
            const float int_ij_a =
                area_scale_a * (0.5f * Pai * Paj + (1.0f / 3.0f) * Pai * oabmidj +
                                (1.0f / 3.0f) * Paj * oabi + 0.25f * oabi * oabmidj);
            const float int_ij_c =
                area_scale_c * (0.5f * Pci * Pcj + (1.0f / 3.0f) * Pci * ocbmidj +
                                (1.0f / 3.0f) * Pcj * ocbi + 0.25f * ocbi * ocbmidj);
            *integral = int_ij_a + int_ij_c;
        }
        if (jk == k) break;
        jk = k;
        integral = integral_ik;
        diff = kdiff;
    }
}

SIM_FUNC void swap_int(int& a, int& b) {
    const int c = a;
    a = b;
    b = c;
}

// The three vertices ordered along axis i (Warp's three compare-and-swaps).
SIM_FUNC void order_along(const vec3f* values, int i, int* order) {
    order[0] = 0, order[1] = 1, order[2] = 2;
    if (component(values[0], i) > component(values[1], i)) swap_int(order[0], order[1]);
    if (component(values[order[0]], i) > component(values[2], i)) swap_int(order[0], order[2]);
    if (component(values[order[1]], i) > component(values[order[2]], i)) swap_int(order[1], order[2]);
}

SIM_FUNC void triangle_solid_angle_props(vec3f a, vec3f b, vec3f c, SolidAngleProps& d) {
    const vec3f ab = sub(b, a), ac = sub(c, a);
    const vec3f N = scale3(0.5f, cross(ab, ac));
    const float area = sqrt_f(dot(N, N));
    const vec3f P = div3(add(add(a, b), c), 3.0f);
    const float big = 3.402823466e+38f;
    d.box_lower = min3(min3(min3(make_vec3f(big, big, big), a), b), c);
    d.box_upper = max3(max3(max3(make_vec3f(-big, -big, -big), a), b), c);
    d.average_p = P;
    d.area_p = make_vec3f(P.x * area, P.y * area, P.z * area);
    d.normal = N;
    d.area = area;
    d.max_p_dist_sq = 0.0f;
    d.n_ij_diag = make_vec3f(0.0f, 0.0f, 0.0f);
    d.n_xy = d.n_yx = d.n_yz = d.n_zy = d.n_zx = d.n_xz = 0.0f;
    if (area == 0) {
        d.n_ijk_diag = make_vec3f(0.0f, 0.0f, 0.0f);
        d.sum_permute_n_xyz = 0.0f;
        d.two_n_xxy_n_yxx = d.two_n_xxz_n_zxx = d.two_n_yyz_n_zyy = 0.0f;
        d.two_n_yyx_n_xyy = d.two_n_zzx_n_xzz = d.two_n_zzy_n_yzz = 0.0f;
        return;
    }
    const vec3f n = div3(N, area);
    const vec3f values[3] = {a, b, c};
    int ox[3], oy[3], oz[3];
    order_along(values, 0, ox);
    order_along(values, 1, oy);
    order_along(values, 2, oz);
    const float dx = values[ox[2]].x - values[ox[0]].x;
    const float dy = values[oy[2]].y - values[oy[0]].y;
    const float dz = values[oz[2]].z - values[oz[0]].z;
    float integral_xx = 0.0f, integral_xy = 0.0f, integral_yy = 0.0f;
    float integral_yz = 0.0f, integral_zz = 0.0f, integral_zx = 0.0f;
    if (dx > 0) {
        solid_angle_integrals(values[ox[0]], values[ox[1]], values[ox[2]], P, &integral_xx,
                              (dx >= dy && dy > 0) ? &integral_xy : nullptr,
                              (dx >= dz && dz > 0) ? &integral_zx : nullptr, 0);
    }
    if (dy > 0) {
        solid_angle_integrals(values[oy[0]], values[oy[1]], values[oy[2]], P, &integral_yy,
                              (dy >= dz && dz > 0) ? &integral_yz : nullptr,
                              (dx < dy && dx > 0) ? &integral_xy : nullptr, 1);
    }
    if (dz > 0) {
        solid_angle_integrals(values[oz[0]], values[oz[1]], values[oz[2]], P, &integral_zz,
                              (dx < dz && dx > 0) ? &integral_zx : nullptr,
                              (dy < dz && dy > 0) ? &integral_yz : nullptr, 2);
    }
    d.n_ijk_diag = cw_mul3(make_vec3f(integral_xx, integral_yy, integral_zz), n);
    d.sum_permute_n_xyz = 2.0f * (n.x * integral_yz + n.y * integral_zx + n.z * integral_xy);
    d.two_n_xxy_n_yxx = 2.0f * (n.x * integral_xy) + n.y * integral_xx;
    d.two_n_xxz_n_zxx = 2.0f * (n.x * integral_zx) + n.z * integral_xx;
    d.two_n_yyz_n_zyy = 2.0f * (n.y * integral_yz) + n.z * integral_yy;
    d.two_n_yyx_n_xyy = 2.0f * (n.y * integral_xy) + n.x * integral_yy;
    d.two_n_zzx_n_xzz = 2.0f * (n.z * integral_zx) + n.x * integral_zz;
    d.two_n_zzy_n_yzz = 2.0f * (n.z * integral_yz) + n.y * integral_zz;
}

// The expansion of a node from its children's (right may be null); d must
// not be either child.
SIM_FUNC void combine_solid_angle_props(SolidAngleProps& d, const SolidAngleProps* left,
                                        const SolidAngleProps* right) {
    vec3f N = left->normal, area_p = left->area_p;
    float area = left->area;
    if (right) {
        N = add(N, right->normal);
        area_p = add(area_p, right->area_p);
        area = area + right->area;
    }
    d.normal = N;
    d.area_p = area_p;
    d.area = area;
    vec3f lower = left->box_lower, upper = left->box_upper;
    if (right) {
        lower = min3(lower, right->box_lower);
        upper = max3(upper, right->box_upper);
    }
    d.average_p = area > 0 ? div3(area_p, area) : scale3(0.5f, add(lower, upper));
    d.box_lower = lower;
    d.box_upper = upper;
    d.n_ij_diag = left->n_ij_diag;
    d.n_xy = d.n_yx = d.n_yz = d.n_zy = d.n_zx = d.n_xz = 0.0f;
    d.n_ijk_diag = left->n_ijk_diag;
    d.sum_permute_n_xyz = left->sum_permute_n_xyz;
    d.two_n_xxy_n_yxx = left->two_n_xxy_n_yxx;
    d.two_n_xxz_n_zxx = left->two_n_xxz_n_zxx;
    d.two_n_yyz_n_zyy = left->two_n_yyz_n_zyy;
    d.two_n_yyx_n_xyy = left->two_n_yyx_n_xyy;
    d.two_n_zzx_n_xzz = left->two_n_zzx_n_xzz;
    d.two_n_zzy_n_yzz = left->two_n_zzy_n_yzz;
    if (right) {
        d.n_ij_diag = add(d.n_ij_diag, right->n_ij_diag);
        d.n_ijk_diag = add(d.n_ijk_diag, right->n_ijk_diag);
        d.sum_permute_n_xyz += right->sum_permute_n_xyz;
        d.two_n_xxy_n_yxx += right->two_n_xxy_n_yxx;
        d.two_n_xxz_n_zxx += right->two_n_xxz_n_zxx;
        d.two_n_yyz_n_zyy += right->two_n_yyz_n_zyy;
        d.two_n_yyx_n_xyy += right->two_n_yyx_n_xyy;
        d.two_n_zzx_n_xzz += right->two_n_zzx_n_xzz;
        d.two_n_zzy_n_yzz += right->two_n_zzy_n_yzz;
    }
    for (int i = 0; i < (right ? 2 : 1); ++i) {
        const SolidAngleProps& child = i == 0 ? *left : *right;
        const vec3f disp = sub(child.average_p, d.average_p);
        const vec3f n = child.normal;
        d.n_ij_diag = add(d.n_ij_diag, cw_mul3(n, disp));
        const float Nxy = child.n_xy + n.x * disp.y;
        const float Nyx = child.n_yx + n.y * disp.x;
        const float Nyz = child.n_yz + n.y * disp.z;
        const float Nzy = child.n_zy + n.z * disp.y;
        const float Nzx = child.n_zx + n.z * disp.x;
        const float Nxz = child.n_xz + n.x * disp.z;
        d.n_xy += Nxy;
        d.n_yx += Nyx;
        d.n_yz += Nyz;
        d.n_zy += Nzy;
        d.n_zx += Nzx;
        d.n_xz += Nxz;
        d.n_ijk_diag = add(d.n_ijk_diag, add(scale3(2.0f, cw_mul3(disp, child.n_ij_diag)),
                                             cw_mul3(disp, cw_mul3(disp, child.normal))));
        d.sum_permute_n_xyz +=
            disp.x * (Nyz + Nzy) + disp.y * (Nzx + Nxz) + disp.z * (Nxy + Nyx);
        const vec3f nij = child.n_ij_diag;
        d.two_n_xxy_n_yxx += 2 * (disp.y * nij.x + disp.x * child.n_xy + n.x * disp.x * disp.y) +
                             2 * child.n_yx * disp.x + n.y * disp.x * disp.x;
        d.two_n_xxz_n_zxx += 2 * (disp.z * nij.x + disp.x * child.n_xz + n.x * disp.x * disp.z) +
                             2 * child.n_zx * disp.x + n.z * disp.x * disp.x;
        d.two_n_yyz_n_zyy += 2 * (disp.z * nij.y + disp.y * child.n_yz + n.y * disp.y * disp.z) +
                             2 * child.n_zy * disp.y + n.z * disp.y * disp.y;
        d.two_n_yyx_n_xyy += 2 * (disp.x * nij.y + disp.y * child.n_yx + n.y * disp.y * disp.x) +
                             2 * child.n_xy * disp.y + n.x * disp.y * disp.y;
        d.two_n_zzx_n_xzz += 2 * (disp.x * nij.z + disp.z * child.n_zx + n.z * disp.z * disp.x) +
                             2 * child.n_xz * disp.z + n.x * disp.z * disp.z;
        d.two_n_zzy_n_yzz += 2 * (disp.y * nij.z + disp.z * child.n_zy + n.z * disp.z * disp.y) +
                             2 * child.n_yz * disp.z + n.y * disp.z * disp.z;
    }
    const vec3f reach = max3(sub(d.average_p, d.box_lower), sub(d.box_upper, d.average_p));
    d.max_p_dist_sq = dot(reach, reach);
}

// The node's expansion at p: false (and its solid angle) when p is far enough,
// true when the node must be descended (solid_angle 0).
SIM_FUNC bool evaluate_node_solid_angle(vec3f p, const SolidAngleProps& d, float& solid_angle,
                                        float accuracy_sq) {
    vec3f q = sub(p, d.average_p);
    const float qlength2 = dot(q, q);
    if (qlength2 <= d.max_p_dist_sq * accuracy_sq) {
        solid_angle = 0.0f;
        return true;
    }
    const float qlength_m2 = 1.0f / qlength2;
    const float qlength_m1 = sqrt_f(qlength_m2);
    q = mul(q, qlength_m1);
    float omega = -qlength_m2 * dot(q, d.normal);
    const vec3f q2 = cw_mul3(q, q);
    const float qlength_m3 = qlength_m2 * qlength_m1;
    const vec3f nij = d.n_ij_diag;
    omega += qlength_m3 * (nij.x + nij.y + nij.z -
                           3.0f * (dot(q2, nij) + q.x * q.y * (d.n_xy + d.n_yx) +
                                   q.x * q.z * (d.n_zx + d.n_xz) + q.y * q.z * (d.n_yz + d.n_zy)));
    const vec3f q3 = cw_mul3(q2, q);
    const float qlength_m4 = qlength_m2 * qlength_m2;
    const vec3f temp0 = make_vec3f(d.two_n_yyx_n_xyy + d.two_n_zzx_n_xzz,
                                   d.two_n_zzy_n_yzz + d.two_n_xxy_n_yxx,
                                   d.two_n_xxz_n_zxx + d.two_n_yyz_n_zyy);
    const vec3f temp1 = make_vec3f(q.y * d.two_n_xxy_n_yxx + q.z * d.two_n_xxz_n_zxx,
                                   q.z * d.two_n_yyz_n_zyy + q.x * d.two_n_yyx_n_xyy,
                                   q.x * d.two_n_zzx_n_xzz + q.y * d.two_n_zzy_n_yzz);
    omega += qlength_m4 * (1.5f * dot(q, add(scale3(3.0f, d.n_ijk_diag), temp0)) -
                           7.5f * (dot(q3, d.n_ijk_diag) + q.x * q.y * q.z * d.sum_permute_n_xyz +
                                   dot(q2, temp1)));
    if (!is_finite_f(omega)) {
        solid_angle = 0.0f;
        return true;
    }
    solid_angle = omega;
    return false;
}

// The signed solid angle of triangle abc seen from p (Van Oosterom and Strackee).
SIM_FUNC float robust_solid_angle(vec3f a, vec3f b, vec3f c, vec3f p) {
    vec3f qa = sub(a, p), qb = sub(b, p), qc = sub(c, p);
    const float la = length(qa), lb = length(qb), lc = length(qc);
    if (la == 0.0f || lb == 0.0f || lc == 0.0f) return 0.0f;
    qa = div3(qa, la);
    qb = div3(qb, lb);
    qc = div3(qc, lc);
    const float numerator = dot(qa, cross(sub(qb, qa), sub(qc, qa)));
    if (numerator == 0.0f) return 0.0f;
    const float denominator = 1.0f + dot(qa, qb) + dot(qa, qc) + dot(qb, qc);
    return 2.0f * atan2_f(numerator, denominator);
}

}  // namespace sim

#endif  // SIM_SOLID_ANGLE_H
