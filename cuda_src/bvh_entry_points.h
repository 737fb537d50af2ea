// The C ABI of bvh.h, included once by entry_points.cpp (so that it is built
// into the host library and into the device code, like every entry point).
// Trees and query states travel as untyped pointers; numba_sim reserves their
// sizes (numba_sim/spatial/common.py) and its tests check them against
// sim_bvh_layout(). The CPU builds are host-only: bvh_host_build.cpp.
#ifndef SIM_BVH_ENTRY_POINTS_H
#define SIM_BVH_ENTRY_POINTS_H

#include "bvh.h"

// sizeof(BvhNode), sizeof(Bvh), sizeof(BvhQuery).
SIM_EXPORT void sim_bvh_layout(int* sizes) {
    sizes[0] = (int)sizeof(sim::BvhNode);
    sizes[1] = (int)sizeof(sim::Bvh);
    sizes[2] = (int)sizeof(sim::BvhQuery);
}

// Fills a descriptor; `counts` = {num_items, num_nodes, num_leaves, max_depth,
// root, leaf_size, constructor}.
SIM_EXPORT void sim_bvh_set(void* bvh_ptr, void* nodes, int* primitive_indices,
                            int* refit_order, int* level_offsets, const float* lowers,
                            const float* uppers, const int* counts) {
    sim::Bvh& bvh = *static_cast<sim::Bvh*>(bvh_ptr);
    bvh.nodes = static_cast<sim::BvhNode*>(nodes);
    bvh.primitive_indices = primitive_indices;
    bvh.refit_order = refit_order;
    bvh.level_offsets = level_offsets;
    bvh.item_lowers = lowers;
    bvh.item_uppers = uppers;
    bvh.num_items = counts[0];
    bvh.num_nodes = counts[1];
    bvh.num_leaves = counts[2];
    bvh.max_depth = counts[3];
    bvh.root = counts[4];
    bvh.leaf_size = counts[5];
    bvh.constructor = counts[6];
    // (the group fields are the host build's: left as they are)
}

// The descriptor's counts, in sim_bvh_set's order.
SIM_EXPORT void sim_bvh_counts(const void* bvh_ptr, int* counts) {
    const sim::Bvh& bvh = *static_cast<const sim::Bvh*>(bvh_ptr);
    counts[0] = bvh.num_items;
    counts[1] = bvh.num_nodes;
    counts[2] = bvh.num_leaves;
    counts[3] = bvh.max_depth;
    counts[4] = bvh.root;
    counts[5] = bvh.leaf_size;
    counts[6] = bvh.constructor;
}

// Start a query at node `root` (the tree's root when root < 0).
SIM_EXPORT void sim_bvh_query_aabb_begin(void* query, const void* bvh, const float* lower,
                                         const float* upper, int root) {
    sim::bvh_query_aabb_begin(*static_cast<sim::BvhQuery*>(query),
                              static_cast<const sim::Bvh*>(bvh), sim::load_vec3f(lower),
                              sim::load_vec3f(upper), root);
}

SIM_EXPORT void sim_bvh_query_ray_begin(void* query, const void* bvh, const float* start,
                                        const float* dir, int root) {
    sim::bvh_query_ray_begin(*static_cast<sim::BvhQuery*>(query),
                             static_cast<const sim::Bvh*>(bvh), sim::load_vec3f(start),
                             sim::load_vec3f(dir), root);
}

// A sphere query; `radius` points at the radius (the first of the 3 floats that
// numba_sim's box-query state passes as its second vector).
SIM_EXPORT void sim_bvh_query_sphere_begin(void* query, const void* bvh, const float* center,
                                           const float* radius, int root) {
    sim::bvh_query_sphere_begin(*static_cast<sim::BvhQuery*>(query),
                                static_cast<const sim::Bvh*>(bvh), sim::load_vec3f(center),
                                radius[0], root);
}

// A capsule query; `radius` points at the radius, as for spheres.
SIM_EXPORT void sim_bvh_query_capsule_begin(void* query, const void* bvh, const float* start,
                                            const float* dir, const float* radius, int root) {
    sim::bvh_query_capsule_begin(*static_cast<sim::BvhQuery*>(query),
                                 static_cast<const sim::Bvh*>(bvh), sim::load_vec3f(start),
                                 sim::load_vec3f(dir), radius[0], root);
}

// Warp's max_dist (bvh_query_next's third argument) for a query that has not
// yielded yet: bounds rays and capsules, no effect on other kinds.
SIM_EXPORT void sim_bvh_query_set_max_dist(void* query, float max_dist) {
    sim::bvh_query_set_max_dist(*static_cast<sim::BvhQuery*>(query), max_dist);
}

// The root of a group's subtree, or -1 (see bvh_group_root).
SIM_EXPORT int sim_bvh_group_root(const void* bvh, int group) {
    return sim::bvh_group_root(static_cast<const sim::Bvh*>(bvh), group);
}

// The next item of a query (-1: none left).
SIM_EXPORT SIM_HOT int sim_bvh_query_aabb_next(void* query) {
    return sim::bvh_query_next_item<sim::BVH_QUERY_AABB>(*static_cast<sim::BvhQuery*>(query));
}

SIM_EXPORT SIM_HOT int sim_bvh_query_capsule_next(void* query) {
    return sim::bvh_query_next_item<sim::BVH_QUERY_CAPSULE>(*static_cast<sim::BvhQuery*>(query));
}

SIM_EXPORT SIM_HOT int sim_bvh_query_sphere_next(void* query) {
    return sim::bvh_query_next_item<sim::BVH_QUERY_SPHERE>(*static_cast<sim::BvhQuery*>(query));
}

SIM_EXPORT SIM_HOT int sim_bvh_query_ray_next(void* query) {
    return sim::bvh_query_next_item<sim::BVH_QUERY_RAY>(*static_cast<sim::BvhQuery*>(query));
}

// ---------------------------------------------------------------------------
// Steps of the CUDA builds, one element per call (see bvh.h)

SIM_EXPORT int sim_bvh_morton_code(const float* lowers, const float* uppers, int i,
                                   const float* origin, const float* inv_extent) {
    return sim::bvh_morton_code(lowers, uppers, i, origin, inv_extent);
}

SIM_EXPORT void sim_lbvh_build_node(const int* codes, int n, int i, void* nodes, int* parents,
                                    int* ranges) {
    sim::lbvh_build_node(codes, n, i, static_cast<sim::BvhNode*>(nodes), parents, ranges);
}

// Finishes slot s (see lbvh_finish_node); returns its refit group
// (bvh_level_group of its depth) or -1 for an unreachable slot, and sets
// *is_leaf.
SIM_EXPORT int sim_lbvh_finish_node(void* nodes, const int* parents, const int* ranges, int n,
                                    int leaf_size, int s, int* is_leaf) {
    sim::BvhNode* all = static_cast<sim::BvhNode*>(nodes);
    const int depth = sim::lbvh_finish_node(all, parents, ranges, n, leaf_size, s);
    *is_leaf = sim::bvh_is_leaf(all[s]) ? 1 : 0;
    return depth < 0 ? -1 : sim::bvh_level_group(depth);
}

// Refits node i of refit group k (a no-op past the group's end).
SIM_EXPORT void sim_bvh_refit_level_node(const void* bvh, int k, int i) {
    sim::bvh_refit_level_node(*static_cast<const sim::Bvh*>(bvh), k, i);
}

#endif  // SIM_BVH_ENTRY_POINTS_H
