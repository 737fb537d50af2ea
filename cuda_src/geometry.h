// Geometric queries on points, segments (and later triangles and boxes).
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

}  // namespace sim

#endif  // SIM_GEOMETRY_H
