// The C ABI of cuda_src/: thin extern "C" wrappers over the header algorithms.
//
// This one file is compiled twice: by setup.py into the host library
// numba_sim._native (reached from Numba's CPU target as external symbols),
// and by NVRTC into LTO-IR / PTX linked into CUDA kernels (see
// numba_sim/native.py). Arguments are plain pointers so that one Numba
// lowering serves both targets: vectors are 3 consecutive floats.
#include "geometry.h"

SIM_EXPORT void sim_closest_point_on_segment(const float* a, const float* b, const float* p,
                                             float* out) {
    sim::store_vec3f(out, sim::closest_point_on_segment(sim::load_vec3f(a), sim::load_vec3f(b),
                                                        sim::load_vec3f(p)));
}

// closest_point_edge_edge(p1, q1, p2, q2, epsilon) -> (s, t, distance)
SIM_EXPORT void sim_closest_point_edge_edge(const float* p1, const float* q1, const float* p2,
                                            const float* q2, const float* epsilon, float* out) {
    sim::store_vec3f(out, sim::closest_point_edge_edge(sim::load_vec3f(p1), sim::load_vec3f(q1),
                                                       sim::load_vec3f(p2), sim::load_vec3f(q2),
                                                       *epsilon));
}

// triangle_closest_point(a, b, c, p) -> (u, v), the barycentric weights of a and b
SIM_EXPORT void sim_triangle_closest_point(const float* a, const float* b, const float* c,
                                           const float* p, float* out) {
    sim::closest_point_to_triangle(sim::load_vec3f(a), sim::load_vec3f(b), sim::load_vec3f(c),
                                   sim::load_vec3f(p), out[0], out[1], true);
}

// intersect_tri_tri(v0, v1, v2, u0, u1, u2) -> 1 or 0, in float and in double
SIM_EXPORT void sim_intersect_tri_tri(const float* v0, const float* v1, const float* v2,
                                      const float* u0, const float* u1, const float* u2,
                                      int* out) {
    *out = sim::tri_tri::intersect(v0, v1, v2, u0, u1, u2);
}

SIM_EXPORT void sim_intersect_tri_tri_d(const double* v0, const double* v1, const double* v2,
                                        const double* u0, const double* u1, const double* u2,
                                        int* out) {
    *out = sim::tri_tri::intersect(v0, v1, v2, u0, u1, u2);
}

// ---------------------------------------------------------------------------
// The spatial structures: HashGrid (hashgrid.h), Bvh (bvh.h) and Mesh (mesh.h).
// Each one's entry points are in its own header.
#include "hashgrid_entry_points.h"
#include "bvh_entry_points.h"
#include "mesh_entry_points.h"
