// Plain-old-data 3-vector and the few operations the algorithms need.
#ifndef SIM_VEC_H
#define SIM_VEC_H

#include "sim_config.h"

namespace sim {

struct vec3f {
    float x, y, z;
};

SIM_FUNC vec3f make_vec3f(float x, float y, float z) {
    vec3f v = {x, y, z};
    return v;
}

// Reads 3 consecutive floats (the C ABI layout of vec3f).
SIM_FUNC vec3f load_vec3f(const float* p) { return make_vec3f(p[0], p[1], p[2]); }

SIM_FUNC void store_vec3f(float* p, vec3f v) {
    p[0] = v.x;
    p[1] = v.y;
    p[2] = v.z;
}

SIM_FUNC vec3f add(vec3f a, vec3f b) { return make_vec3f(a.x + b.x, a.y + b.y, a.z + b.z); }
SIM_FUNC vec3f sub(vec3f a, vec3f b) { return make_vec3f(a.x - b.x, a.y - b.y, a.z - b.z); }
SIM_FUNC vec3f mul(vec3f a, float s) { return make_vec3f(a.x * s, a.y * s, a.z * s); }
SIM_FUNC float dot(vec3f a, vec3f b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
SIM_FUNC float length(vec3f a) { return sqrt_f(dot(a, a)); }
SIM_FUNC vec3f cross(vec3f a, vec3f b) {
    return make_vec3f(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

// Component-wise clamp of v into [lo, hi].
SIM_FUNC vec3f clamp(vec3f v, vec3f lo, vec3f hi) {
    return make_vec3f(clamp_f(v.x, lo.x, hi.x), clamp_f(v.y, lo.y, hi.y), clamp_f(v.z, lo.z, hi.z));
}

}  // namespace sim

#endif  // SIM_VEC_H
