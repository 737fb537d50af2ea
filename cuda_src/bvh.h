// Bounding volume hierarchy over axis-aligned boxes: Warp's wp.Bvh.
//
// What host and device share: the tree layout, the queries (box overlap and
// ray, one hit per call), the refit of one node, and the per-element steps of
// the LBVH build (Morton codes, Karras' internal nodes, depth limit), which the
// host build (bvh_host_build.cpp) runs in loops and the CUDA build
// (numba_sim/spatial/bvh_build_cuda.py) one element per thread. The top-down
// SAH and median builders are host code (bvh_host_build.cpp); on CUDA their
// trees are built on the host and copied, as in Warp.
//
// Layout. `nodes` holds 32-byte nodes: lower bound and `left`, upper bound and
// `right`. An inner node's children are nodes[left] and nodes[right]; a leaf
// has the top bit of `left` set and covers the positions [left & 0x7fffffff,
// right) of `primitive_indices`, which maps positions to the caller's item
// (box) indices. The nodes reachable from `root` are the tree; a build may leave
// unreachable slots (LBVH nodes below a collapsed subtree, the top-down
// builders' slot 0, which puts every pair of children in one cache line).
//
// Depth. As in Warp, a node at depth >= 31 (the root has depth 0) is always a
// leaf, whatever its size, so that a traversal stack of 32 entries never
// overflows (Warp's traversal pushes both children of inner nodes at depths up
// to 30: d + 2 <= 32 entries; the one here holds at most one node per depth
// from 1 to 31).
//
// Refit. `refit_order` lists the reachable nodes by depth, deepest first, and
// level_offsets[k] is where depth 31 - k starts in it (k = 0..32). Refitting
// the nodes of one depth after those of all greater depths updates every node
// from up-to-date children: on the host one pass over refit_order, on CUDA one
// launch per depth. The items' boxes are the caller's arrays (item_lowers /
// item_uppers, 3 floats per box), read again by every refit, as in Warp.
//
// Groups (Warp's Bvh(groups=...)). The items are sorted by group; a
// balanced tree over the groups (split at the median group id) ends in one
// subtree per group, built by the constructor; group_roots gives each
// group's subtree root, where a query may start (bvh_group_root). The depth
// limit counts from the tree's root, so a group subtree below depth g may go
// 31 - g levels deep.
//
// Queries test boxes, not what the caller put in them: an AABB query yields
// every item whose box overlaps the query box (closed boxes: touching counts),
// a ray query every item whose box the ray start + t * dir, t >= 0, meets.
// Each such item comes out exactly once, in no particular order. A query with
// a NaN coordinate (or, for rays, an infinite one) yields nothing.
#ifndef SIM_BVH_H
#define SIM_BVH_H

#include "sim_vec.h"

#if !defined(SIM_DEVICE_COMPILE) && (defined(__SSE2__) || defined(_M_X64))
#include <immintrin.h>
#endif

#define SIM_BVH_STACK_SIZE 32
#define SIM_BVH_MAX_DEPTH 31
#define SIM_BVH_LEVELS 32
#define SIM_BVH_LEAF_BIT 0x80000000u

namespace sim {

// Constructors, numbered as Warp's BvhConstructor.
enum BvhConstructor { BVH_SAH = 0, BVH_MEDIAN = 1, BVH_LBVH = 2 };

struct BvhNode {
    float lower[3];
    int32 left;  // inner: left child; leaf: first position | SIM_BVH_LEAF_BIT
    float upper[3];
    int32 right;  // inner: right child; leaf: end position
};

// The descriptor of a built tree; its address on its device is the tree's id.
struct Bvh {
    BvhNode* nodes;            // 2 * num_items slots
    int32* primitive_indices;  // num_items: position -> item index
    int32* refit_order;        // the num_nodes reachable nodes, deepest first
    int32* level_offsets;      // SIM_BVH_LEVELS + 1 entries
    const float* item_lowers;  // num_items x 3, the caller's boxes
    const float* item_uppers;
    int32 num_items;
    int32 num_nodes;  // reachable nodes
    int32 num_leaves;
    int32 max_depth;
    int32 root;
    int32 leaf_size;
    int32 constructor;
    // Grouped trees (Bvh(groups=...)): the distinct group ids, ascending, and
    // the root node of each group's subtree; num_groups 0 for an ungrouped tree.
    int32 num_groups;
    const int32* group_ids;
    const int32* group_roots;
};

// A query's kind, kept in its state (q.kind) for the kind-erased traversal
// (sim_box_query_next_dynamic); BVH_QUERY_MESH_SPHERE is mesh.h's sphere query.
enum BvhQueryKind {
    BVH_QUERY_AABB = 0,
    BVH_QUERY_RAY = 1,
    BVH_QUERY_SPHERE = 2,
    BVH_QUERY_MESH_SPHERE = 3,
    BVH_QUERY_CAPSULE = 4
};

// The state of one traversal, on the caller's stack. AABB queries keep the
// box in a / b; ray and capsule queries the start in a, the direction's
// reciprocal in b; spheres the centre in a, radius^2 in b[0]. `c` holds a
// capsule's radius and the bound on the ray parameter of rays and capsules
// (Warp's max_dist). Private to this file: numba_sim only reserves its size.
struct BvhQuery {
    const Bvh* bvh;
    float a[3];
    float b[3];
    float c[2];
    int32 count;     // entries on the stack
    int32 prim_cur;  // the leaf being enumerated: positions [prim_cur, prim_end)
    int32 prim_end;
    int32 kind;
    int32 stack[SIM_BVH_STACK_SIZE];
};

static_assert(sizeof(BvhNode) == 32, "BvhNode layout changed: update numba_sim");
static_assert(sizeof(Bvh) == 96, "Bvh layout changed: update numba_sim");
static_assert(sizeof(BvhQuery) == 184, "BvhQuery layout changed: update numba_sim");

SIM_FUNC bool bvh_is_leaf(const BvhNode& node) { return node.left < 0; }
SIM_FUNC int32 bvh_leaf_begin(const BvhNode& node) { return node.left & 0x7fffffff; }
SIM_FUNC int32 bvh_leaf_code(int32 begin) { return (int32)((uint32)begin | SIM_BVH_LEAF_BIT); }

SIM_FUNC void bvh_set_leaf(BvhNode& node, int32 begin, int32 end) {
    node.left = bvh_leaf_code(begin);
    node.right = end;
}

SIM_FUNC bool is_nan_f(float x) { return !(x == x); }
SIM_FUNC bool is_finite_f(float x) { return x - x == 0.0f; }

// ---------------------------------------------------------------------------
// Box tests (written so that NaN never passes)

SIM_FUNC bool box_overlap(const float* lower, const float* upper, const float* q_lower,
                          const float* q_upper) {
    return q_lower[0] <= upper[0] && q_upper[0] >= lower[0] && q_lower[1] <= upper[1] &&
           q_upper[1] >= lower[1] && q_lower[2] <= upper[2] && q_upper[2] >= lower[2];
}

// Minimum and maximum in one instruction each (unlike fminf / fmaxf on the
// host); when b is NaN, both return a.
SIM_FUNC float fast_min(float a, float b) { return b < a ? b : a; }
SIM_FUNC float fast_max(float a, float b) { return b > a ? b : a; }

// 1 / d, with +inf for both zeros (-0.0 + 0.0 is +0.0): see ray_box.
SIM_FUNC float ray_reciprocal(float d) { return 1.0f / (d + 0.0f); }

// Whether the ray start + t * dir (t >= 0), given by its (finite) start and
// the ray_reciprocal of its (finite) direction, meets the closed box; `t_enter`
// receives the entry parameter (negative when the start is inside the box).
//
// A direction component of 0 has the reciprocal +inf: the slab then gives
// -inf / +inf (no constraint) when the start is between its planes, an empty
// interval when outside, and NaN where the start lies on a plane (0 * inf):
// in t0 on the lower plane, in t1 on the upper one.
// The operands below are ordered so that a NaN bound is ignored (fast_min /
// fast_max keep their first operand), which counts a start on a face plane as
// inside the slab, as for any other ray touching the box.
SIM_FUNC bool ray_box(const float* start, const float* inv_dir, const float* lower,
                      const float* upper, float& t_enter) {
    float t_min = -inf_f();
    float t_max = inf_f();
    for (int k = 0; k < 3; ++k) {
        const float t0 = (lower[k] - start[k]) * inv_dir[k];
        const float t1 = (upper[k] - start[k]) * inv_dir[k];
        t_min = fast_max(t_min, fast_min(t0, t1));  // NaN only when t0 is
        t_max = fast_min(t_max, fast_max(t1, t0));  // NaN only when t1 is
    }
    t_enter = t_min;
    // (& rather than &&: no branches, which mispredict in traversals)
    return (t_max >= t_min) & (t_max >= 0.0f) & (t_min < inf_f());  // entering at +inf: never
}

// ---------------------------------------------------------------------------
// Queries

// Whether the closed box is within sqrt(radius_sq) of `center` (the squared
// distance from the centre to the box, 0 inside it; tangent contact counts).
SIM_FUNC bool sphere_box(const float* center, float radius_sq, const float* lower,
                         const float* upper) {
    float distance_sq = 0.0f;
    for (int k = 0; k < 3; ++k) {
        if (center[k] < lower[k]) {
            const float d = lower[k] - center[k];
            distance_sq += d * d;
        } else if (center[k] > upper[k]) {
            const float d = center[k] - upper[k];
            distance_sq += d * d;
        }
    }
    return distance_sq <= radius_sq;
}

// The box test of a query kind: a and b are (lower, upper) for AABB queries,
// (start, 1 / dir) for rays and capsules, (centre, {radius^2, 0, 0}) for
// spheres; c = {capsule radius, max_dist}. A ray meets a box entered before
// max_dist (Warp's half-open bound); a capsule (Warp's conservative sweep) a
// box grown by its radius entered at max_dist at the latest.
template <int KIND>
SIM_FUNC bool bvh_query_test(const float* a, const float* b, const float* c, const float* lower,
                             const float* upper) {
    if (KIND == BVH_QUERY_AABB) return box_overlap(lower, upper, a, b);
    if (KIND == BVH_QUERY_SPHERE) return sphere_box(a, b[0], lower, upper);
    float t;
    if (KIND == BVH_QUERY_CAPSULE) {
        const float grown_lower[3] = {lower[0] - c[0], lower[1] - c[0], lower[2] - c[0]};
        const float grown_upper[3] = {upper[0] + c[0], upper[1] + c[0], upper[2] + c[0]};
        return ray_box(a, b, grown_lower, grown_upper, t) && !(t > c[1]);
    }
    return ray_box(a, b, lower, upper, t) && !(t >= c[1]);
}

// The test of a query's box against inner nodes, set up once per call of
// bvh_query_next_item: bvh_query_test, except for AABB and ray queries on x86
// hosts, which test a node's box with SSE (a node is 32 bytes, its bounds 4
// floats each with the child index as the ignored fourth lane): the same
// comparisons lane by lane, without the branches of the scalar && chain or
// the 3 dependent slab steps, which mispredict and stall in a traversal.
template <int KIND>
struct BvhNodeTest {
    const float* a;
    const float* b;
    const float* c;
    SIM_FUNC BvhNodeTest(const float* a_, const float* b_, const float* c_) : a(a_), b(b_), c(c_) {}
    SIM_FUNC bool operator()(const BvhNode& node) const {
        return bvh_query_test<KIND>(a, b, c, node.lower, node.upper);
    }
};

#if !defined(SIM_DEVICE_COMPILE) && (defined(__SSE2__) || defined(_M_X64))
template <>
struct BvhNodeTest<BVH_QUERY_AABB> {
    __m128 lower, upper;
    BvhNodeTest(const float* a, const float* b, const float*)
        : lower(_mm_setr_ps(a[0], a[1], a[2], 0.0f)), upper(_mm_setr_ps(b[0], b[1], b[2], 0.0f)) {}
    bool operator()(const BvhNode& node) const {
        // q_lower <= upper && q_upper >= lower per lane (ordered: NaN fails)
        const __m128 ok = _mm_and_ps(_mm_cmple_ps(lower, _mm_loadu_ps(node.upper)),
                                     _mm_cmpge_ps(upper, _mm_loadu_ps(node.lower)));
        return (_mm_movemask_ps(ok) & 7) == 7;
    }
};

template <>
struct BvhNodeTest<BVH_QUERY_RAY> {
    __m128 start, inv_dir;
    float max_dist;
    BvhNodeTest(const float* a, const float* b, const float* c)
        : start(_mm_setr_ps(a[0], a[1], a[2], 0.0f)), inv_dir(_mm_setr_ps(b[0], b[1], b[2], 0.0f)),
          max_dist(c[1]) {}
    bool operator()(const BvhNode& node) const {
        // ray_box's slabs in three lanes: fast_min(x, y) is minps(y, x) and
        // fast_max(x, y) maxps(y, x), NaN handling included; the lanes are then
        // folded in ray_box's order, so the results are the same bits
        const __m128 t0 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(node.lower), start), inv_dir);
        const __m128 t1 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(node.upper), start), inv_dir);
        const __m128 near = _mm_min_ps(t1, t0);  // fast_min(t0, t1)
        const __m128 far = _mm_max_ps(t0, t1);   // fast_max(t1, t0)
        float n[4], f[4];
        _mm_storeu_ps(n, near);
        _mm_storeu_ps(f, far);
        const float t_min = fast_max(fast_max(fast_max(-inf_f(), n[0]), n[1]), n[2]);
        const float t_max = fast_min(fast_min(fast_min(inf_f(), f[0]), f[1]), f[2]);
        return (t_max >= t_min) & (t_max >= 0.0f) & (t_min < inf_f()) & !(t_min >= max_dist);
    }
};
#endif

// The root of group `group`'s subtree (Warp's bvh_get_group_root), or -1
// when no item has that group. An ungrouped tree is one group, 0.
SIM_FUNC int32 bvh_group_root(const Bvh* bvh, int32 group) {
    if (bvh == nullptr || bvh->nodes == nullptr || bvh->num_items <= 0) return -1;
    if (bvh->num_groups <= 0) return group == 0 ? bvh->root : -1;
    int32 lo = 0, hi = bvh->num_groups;
    while (lo < hi) {
        const int32 mid = (lo + hi) >> 1;
        if (bvh->group_ids[mid] < group) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < bvh->num_groups && bvh->group_ids[lo] == group ? bvh->group_roots[lo] : -1;
}

// The stack holds nodes whose box passed the test: the start node when it
// does. The traversal starts at `root`, or at the tree's root when root < 0
// (Warp's -1); a root past the node slots yields nothing.
template <int KIND>
SIM_FUNC void bvh_query_start(BvhQuery& q, const Bvh* bvh, bool valid, int32 root) {
    q.bvh = bvh;
    if (KIND != BVH_QUERY_CAPSULE) q.c[0] = 0.0f;  // (a capsule's radius is set)
    q.c[1] = inf_f();  // max_dist (bvh_query_set_max_dist)
    q.prim_cur = 0;
    q.prim_end = 0;
    q.count = 0;
    if (valid && bvh != nullptr && bvh->nodes != nullptr && bvh->num_items > 0) {
        const int32 start = root < 0 ? bvh->root : root;
        if (start >= 2 * (int64)bvh->num_items) return;
        const BvhNode& node = bvh->nodes[start];
        if (bvh_query_test<KIND>(q.a, q.b, q.c, node.lower, node.upper)) {
            q.stack[0] = start;
            q.count = 1;
        }
    }
}

SIM_FUNC void bvh_query_aabb_begin(BvhQuery& q, const Bvh* bvh, vec3f lower, vec3f upper,
                                   int32 root = -1) {
    q.kind = BVH_QUERY_AABB;
    store_vec3f(q.a, lower);
    store_vec3f(q.b, upper);
    const bool valid = !(is_nan_f(lower.x) || is_nan_f(lower.y) || is_nan_f(lower.z) ||
                         is_nan_f(upper.x) || is_nan_f(upper.y) || is_nan_f(upper.z));
    bvh_query_start<BVH_QUERY_AABB>(q, bvh, valid, root);
}

SIM_FUNC void bvh_query_ray_begin(BvhQuery& q, const Bvh* bvh, vec3f start, vec3f dir,
                                  int32 root = -1) {
    q.kind = BVH_QUERY_RAY;
    store_vec3f(q.a, start);
    q.b[0] = ray_reciprocal(dir.x);
    q.b[1] = ray_reciprocal(dir.y);
    q.b[2] = ray_reciprocal(dir.z);
    const bool valid = is_finite_f(start.x) && is_finite_f(start.y) && is_finite_f(start.z) &&
                       is_finite_f(dir.x) && is_finite_f(dir.y) && is_finite_f(dir.z);
    bvh_query_start<BVH_QUERY_RAY>(q, bvh, valid, root);
}

// Items whose box is within `radius` of `center` (Warp's bvh_query_sphere: an
// exact sphere-box test; a negative radius counts as 0, a NaN centre or radius
// finds nothing).
SIM_FUNC void bvh_query_sphere_begin(BvhQuery& q, const Bvh* bvh, vec3f center, float radius,
                                     int32 root = -1) {
    q.kind = BVH_QUERY_SPHERE;
    store_vec3f(q.a, center);
    const float r = radius > 0.0f ? radius : 0.0f;
    q.b[0] = r * r;
    q.b[1] = 0.0f;
    q.b[2] = 0.0f;
    const bool valid = !(is_nan_f(center.x) || is_nan_f(center.y) || is_nan_f(center.z) ||
                         is_nan_f(radius));
    bvh_query_start<BVH_QUERY_SPHERE>(q, bvh, valid, root);
}

// Items whose box, grown by `radius`, the segment start + t * dir meets with
// t <= max_dist (Warp's bvh_query_capsule: a conservative sweep of the capsule
// around the segment; pass dir = p1 - p0 and max_dist 1). A negative radius
// counts as 0; non-finite inputs find nothing.
SIM_FUNC void bvh_query_capsule_begin(BvhQuery& q, const Bvh* bvh, vec3f start, vec3f dir,
                                      float radius, int32 root = -1) {
    q.kind = BVH_QUERY_CAPSULE;
    store_vec3f(q.a, start);
    q.b[0] = ray_reciprocal(dir.x);
    q.b[1] = ray_reciprocal(dir.y);
    q.b[2] = ray_reciprocal(dir.z);
    q.c[0] = radius > 0.0f ? radius : 0.0f;
    const bool valid = is_finite_f(start.x) && is_finite_f(start.y) && is_finite_f(start.z) &&
                       is_finite_f(dir.x) && is_finite_f(dir.y) && is_finite_f(dir.z) &&
                       !is_nan_f(radius);
    bvh_query_start<BVH_QUERY_CAPSULE>(q, bvh, valid, root);
}

// Bounds the ray parameter of a ray or capsule query that has not yielded yet
// (Warp's max_dist of bvh_query_next; no effect on other kinds): the start
// node, which begin tested without a bound, is tested again.
template <int KIND>
SIM_FUNC void bvh_query_bound(BvhQuery& q, float max_dist) {
    q.c[1] = max_dist;
    if (q.count == 1 && q.prim_cur == q.prim_end) {
        const BvhNode& node = q.bvh->nodes[q.stack[0]];
        if (!bvh_query_test<KIND>(q.a, q.b, q.c, node.lower, node.upper)) q.count = 0;
    }
}

SIM_FUNC void bvh_query_set_max_dist(BvhQuery& q, float max_dist) {
    if (q.kind == BVH_QUERY_RAY) bvh_query_bound<BVH_QUERY_RAY>(q, max_dist);
    if (q.kind == BVH_QUERY_CAPSULE) bvh_query_bound<BVH_QUERY_CAPSULE>(q, max_dist);
}

// The next item whose box passes the query's test, or -1 when there is none.
// Inner nodes test both children and descend into those that pass, keeping
// one on the stack when both do (so it holds at most one node per depth).
// The state is worked on in locals and stored back before returning.
template <int KIND>
SIM_FUNC int32 bvh_query_next_item(BvhQuery& q) {
    const Bvh& bvh = *q.bvh;
    const BvhNode* nodes = bvh.nodes;
    const int32* primitive_indices = bvh.primitive_indices;
    const float a[3] = {q.a[0], q.a[1], q.a[2]};
    const float b[3] = {q.b[0], q.b[1], q.b[2]};
    const float c[2] = {q.c[0], q.c[1]};
    const BvhNodeTest<KIND> node_test(a, b, c);
    int32 count = q.count;
    int32 cur = q.prim_cur;
    int32 end = q.prim_end;
    int32 found = -1;
    for (;;) {
        while (cur < end) {
            const int32 item = primitive_indices[cur++];
            if (bvh_query_test<KIND>(a, b, c, bvh.item_lowers + 3 * (int64)item,
                                     bvh.item_uppers + 3 * (int64)item)) {
                found = item;
                break;
            }
        }
        if (found >= 0 || count == 0) break;
        int32 index = q.stack[--count];  // its box passed
        for (;;) {
            const BvhNode& node = nodes[index];
            if (bvh_is_leaf(node)) {
                cur = bvh_leaf_begin(node);
                end = node.right;
                // a one-item leaf's box is the item's box, which passed
                if (end - cur == 1) found = primitive_indices[cur++];
                break;
            }
            const BvhNode& left = nodes[node.left];
            const BvhNode& right = nodes[node.right];
            const bool hit_left = node_test(left);
            const bool hit_right = node_test(right);
            if (hit_left) {
                if (hit_right) q.stack[count++] = node.right;
                index = node.left;
            } else if (hit_right) {
                index = node.right;
            } else {
                break;
            }
        }
        if (found >= 0) break;
    }
    q.count = count;
    q.prim_cur = cur;
    q.prim_end = end;
    return found;
}

// ---------------------------------------------------------------------------
// Refit

SIM_FUNC void bvh_refit_node(const Bvh& bvh, int32 index) {
    BvhNode& node = bvh.nodes[index];
    float lower[3], upper[3];
    if (bvh_is_leaf(node)) {
        const int32 begin = bvh_leaf_begin(node);
        for (int k = 0; k < 3; ++k) {
            lower[k] = inf_f();
            upper[k] = -inf_f();
        }
        for (int32 i = begin; i < node.right; ++i) {
            const int64 item = 3 * (int64)bvh.primitive_indices[i];
            for (int k = 0; k < 3; ++k) {
                lower[k] = min_f(lower[k], bvh.item_lowers[item + k]);
                upper[k] = max_f(upper[k], bvh.item_uppers[item + k]);
            }
        }
    } else {
        const BvhNode& a = bvh.nodes[node.left];
        const BvhNode& b = bvh.nodes[node.right];
        for (int k = 0; k < 3; ++k) {
            lower[k] = min_f(a.lower[k], b.lower[k]);
            upper[k] = max_f(a.upper[k], b.upper[k]);
        }
    }
    for (int k = 0; k < 3; ++k) {
        node.lower[k] = lower[k];
        node.upper[k] = upper[k];
    }
}

// Refits the nodes of one depth: entries [level_offsets[k], level_offsets[k + 1])
// of refit_order hold depth 31 - k. `i` counts from the start of the level.
SIM_FUNC void bvh_refit_level_node(const Bvh& bvh, int32 k, int32 i) {
    const int32 position = bvh.level_offsets[k] + i;
    if (position < bvh.level_offsets[k + 1]) bvh_refit_node(bvh, bvh.refit_order[position]);
}

// ---------------------------------------------------------------------------
// LBVH build steps (Karras 2012), one element each; the caller sorts the codes.
// Inner node i (0 <= i < n - 1) is slot i, the leaf of sorted position k is
// slot n - 1 + k, the root is slot 0 (the only leaf when n == 1).

// Spreads the 10 low bits of v three bits apart.
SIM_FUNC uint32 morton_spread(uint32 v) {
    v = (v * 0x00010001u) & 0xFF0000FFu;
    v = (v * 0x00000101u) & 0x0F00F00Fu;
    v = (v * 0x00000011u) & 0xC30C30C3u;
    v = (v * 0x00000005u) & 0x49249249u;
    return v;
}

SIM_FUNC uint32 morton_axis(float x) {
    const float scaled = x * 1024.0f;  // NaN-free: the caller checked the boxes
    if (!(scaled > 0.0f)) return 0u;
    return scaled >= 1023.0f ? 1023u : (uint32)scaled;
}

// 30-bit Morton code of item i's box centre, in the frame of the centres'
// bounds: `origin` is their lower corner, `inv_extent` 1 / their size (0 for
// a flat axis).
SIM_FUNC int32 bvh_morton_code(const float* lowers, const float* uppers, int32 i,
                               const float* origin, const float* inv_extent) {
    uint32 code = 0;
    for (int k = 0; k < 3; ++k) {
        const int64 j = 3 * (int64)i + k;
        const float centre = 0.5f * (lowers[j] + uppers[j]);
        code |= morton_spread(morton_axis((centre - origin[k]) * inv_extent[k])) << (2 - k);
    }
    return (int32)code;
}

// Length of the common prefix of the keys (code, position) at i and j; -1 when
// j is outside [0, n).
SIM_FUNC int32 lbvh_delta(const int32* codes, int32 n, int32 i, int32 j) {
    if (j < 0 || j >= n) return -1;
    const uint32 a = (uint32)codes[i];
    const uint32 b = (uint32)codes[j];
    if (a != b) return clz_u32(a ^ b);
    return 32 + clz_u32((uint32)i ^ (uint32)j);
}

// Slot i of the Karras tree over n sorted codes: inner node i (for i < n - 1:
// its children, their parents and its range of positions [first, last]) and
// the leaf of position i.
SIM_FUNC void lbvh_build_node(const int32* codes, int32 n, int32 i, BvhNode* nodes,
                              int32* parents, int32* ranges) {
    const int32 leaf = n - 1 + i;
    bvh_set_leaf(nodes[leaf], i, i + 1);
    if (i == 0) parents[0] = -1;
    if (i >= n - 1) return;
    const int32 d = lbvh_delta(codes, n, i, i + 1) > lbvh_delta(codes, n, i, i - 1) ? 1 : -1;
    const int32 delta_min = lbvh_delta(codes, n, i, i - d);
    int32 length_max = 2;
    while (lbvh_delta(codes, n, i, i + length_max * d) > delta_min) length_max *= 2;
    int32 length = 0;
    for (int32 t = length_max / 2; t >= 1; t /= 2) {
        if (lbvh_delta(codes, n, i, i + (length + t) * d) > delta_min) length += t;
    }
    const int32 j = i + length * d;
    const int32 delta_node = lbvh_delta(codes, n, i, j);
    int32 split = 0;
    int32 t = length;
    do {
        t = (t + 1) / 2;
        if (lbvh_delta(codes, n, i, i + (split + t) * d) > delta_node) split += t;
    } while (t > 1);
    const int32 gamma = i + split * d + (d < 0 ? -1 : 0);
    const int32 first = i < j ? i : j;
    const int32 last = i < j ? j : i;
    const int32 left = first == gamma ? n - 1 + gamma : gamma;
    const int32 right = last == gamma + 1 ? n - 1 + gamma + 1 : gamma + 1;
    nodes[i].left = left;
    nodes[i].right = right;
    parents[left] = i;
    parents[right] = i;
    ranges[2 * i] = first;
    ranges[2 * i + 1] = last;
}

// Whether an inner slot of the Karras tree becomes a leaf: at the depth limit,
// or holding no more than leaf_size items. Both only grow along a path, so
// the top-most such node of a path is the one that becomes a leaf.
SIM_FUNC bool lbvh_collapses(int32 depth, int32 first, int32 last, int32 leaf_size) {
    return depth >= SIM_BVH_MAX_DEPTH || last - first + 1 <= leaf_size;
}

// Finishes slot s of the Karras tree: its depth (walking up the parents), and
// whether it is reachable from the root; a reachable inner node that
// collapses becomes a leaf over its range. Returns the depth, or -1 for an
// unreachable slot.
SIM_FUNC int32 lbvh_finish_node(BvhNode* nodes, const int32* parents, const int32* ranges,
                                int32 n, int32 leaf_size, int32 s) {
    int32 depth = 0;
    for (int32 p = parents[s]; p >= 0; p = parents[p]) ++depth;
    const int32 parent = parents[s];
    if (parent >= 0 &&
        lbvh_collapses(depth - 1, ranges[2 * parent], ranges[2 * parent + 1], leaf_size)) {
        return -1;
    }
    if (s < n - 1 && lbvh_collapses(depth, ranges[2 * s], ranges[2 * s + 1], leaf_size)) {
        bvh_set_leaf(nodes[s], ranges[2 * s], ranges[2 * s + 1] + 1);
    }
    return depth;
}

// The slot of refit_order's level group for a node at `depth` (deepest first).
SIM_FUNC int32 bvh_level_group(int32 depth) { return SIM_BVH_MAX_DEPTH - depth; }

}  // namespace sim

#endif  // SIM_BVH_H
