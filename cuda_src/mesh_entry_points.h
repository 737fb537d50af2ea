// The C ABI of mesh.h, included once by entry_points.cpp (built into the host
// library and into the device code). Meshes travel as untyped pointers;
// numba_sim reserves their size (numba_sim/spatial/common.py) and reads MeshHit
// results (numba_sim/lowering/mesh.py); its tests check both against
// sim_mesh_layout().
// The CPU builds are host-only: mesh_host_build.cpp.
#ifndef SIM_MESH_ENTRY_POINTS_H
#define SIM_MESH_ENTRY_POINTS_H

#include "mesh.h"

#ifndef SIM_DEVICE_COMPILE
// mesh_host_build.cpp: the edge faces and vertex normals of a host mesh, made
// up to date before the queries that read them (see sim::Mesh::sign_data).
SIM_EXPORT void sim_mesh_prepare_signs(const void* mesh);
#define SIM_MESH_PREPARE_SIGNS(mesh) sim_mesh_prepare_signs(mesh)
#else
#define SIM_MESH_PREPARE_SIGNS(mesh) ((void)0)  // CUDA meshes make them in their build
#endif

// sizeof(Mesh), sizeof(MeshHit), offsetof(Mesh, bvh), offsetof(Mesh,
// edge_length_sum), offsetof(Mesh, solid_angle_props), sizeof(SolidAngleProps),
// offsetof(Mesh, velocities).
SIM_EXPORT void sim_mesh_layout(int* sizes) {
    sizes[0] = (int)sizeof(sim::Mesh);
    sizes[1] = (int)sizeof(sim::MeshHit);
    const sim::Mesh probe{};  // offsets measured on an object: need no offsetof
    const char* base = reinterpret_cast<const char*>(&probe);
    sizes[2] = (int)(reinterpret_cast<const char*>(&probe.bvh) - base);
    sizes[3] = (int)(reinterpret_cast<const char*>(&probe.edge_length_sum) - base);
    sizes[4] = (int)(reinterpret_cast<const char*>(&probe.solid_angle_props) - base);
    sizes[5] = (int)sizeof(sim::SolidAngleProps);
    sizes[6] = (int)(reinterpret_cast<const char*>(&probe.velocities) - base);
}

// Fills a descriptor's mesh part (its BVH is filled by the BVH build).
SIM_EXPORT void sim_mesh_set(void* mesh_ptr, const float* points, const int* indices,
                             float* tri_lowers, float* tri_uppers, const int* edge_faces,
                             float* vertex_normals, float* leaf_points, int num_points,
                             int num_tris) {
    sim::Mesh& mesh = *static_cast<sim::Mesh*>(mesh_ptr);
    mesh.points = points;
    mesh.indices = indices;
    mesh.tri_lowers = tri_lowers;
    mesh.tri_uppers = tri_uppers;
    mesh.edge_faces = edge_faces;
    mesh.vertex_normals = vertex_normals;
    mesh.leaf_points = leaf_points;
    mesh.num_points = num_points;
    mesh.num_tris = num_tris;
}

// Points the mesh at another points array (of the same size).
SIM_EXPORT void sim_mesh_set_points(void* mesh_ptr, const float* points) {
    static_cast<sim::Mesh*>(mesh_ptr)->points = points;
}

// Whether a point of the mesh is nearer than max_dist; *hit (sign, face, u,
// v) when it is.
SIM_EXPORT SIM_HOT int sim_mesh_query_point(const void* mesh, const float* point, float max_dist,
                                    void* hit) {
    if (mesh != nullptr) SIM_MESH_PREPARE_SIGNS(mesh);
    return sim::mesh_query_point(static_cast<const sim::Mesh*>(mesh), sim::load_vec3f(point),
                                 max_dist, *static_cast<sim::MeshHit*>(hit));
}

// Warp's variants of the point query (see mesh.h); *hit (sign, face, u, v)
// when one is found.
SIM_EXPORT SIM_HOT int sim_mesh_query_point_no_sign(const void* mesh, const float* point,
                                                    float max_dist, void* hit) {
    return sim::mesh_query_point_no_sign(static_cast<const sim::Mesh*>(mesh),
                                         sim::load_vec3f(point), max_dist,
                                         *static_cast<sim::MeshHit*>(hit));
}

SIM_EXPORT SIM_HOT int sim_mesh_query_furthest_point_no_sign(const void* mesh, const float* point,
                                                             float min_dist, void* hit) {
    return sim::mesh_query_furthest_point_no_sign(static_cast<const sim::Mesh*>(mesh),
                                                  sim::load_vec3f(point), min_dist,
                                                  *static_cast<sim::MeshHit*>(hit));
}

SIM_EXPORT SIM_HOT int sim_mesh_query_point_sign_normal(const void* mesh, const float* point,
                                                        float max_dist, float epsilon,
                                                        void* hit) {
    if (mesh != nullptr) SIM_MESH_PREPARE_SIGNS(mesh);
    return sim::mesh_query_point_sign_normal(static_cast<const sim::Mesh*>(mesh),
                                             sim::load_vec3f(point), max_dist, epsilon,
                                             *static_cast<sim::MeshHit*>(hit));
}

SIM_EXPORT SIM_HOT int sim_mesh_query_point_sign_winding_number(const void* mesh,
                                                                const float* point,
                                                                float max_dist, float accuracy,
                                                                float threshold, void* hit) {
    return sim::mesh_query_point_sign_winding_number(
        static_cast<const sim::Mesh*>(mesh), sim::load_vec3f(point), max_dist, accuracy,
        threshold, *static_cast<sim::MeshHit*>(hit));
}

// The winding number of the mesh at point (its expansions must exist).
SIM_EXPORT float sim_mesh_winding_number(const void* mesh, const float* point, float accuracy) {
    return sim::mesh_winding_number(*static_cast<const sim::Mesh*>(mesh), sim::load_vec3f(point),
                                    accuracy);
}

// Whether the ray hits the mesh at some 0 <= t < max_t; *hit (t, u, v, sign,
// normal, face) of the closest hit when it does.
SIM_EXPORT SIM_HOT int sim_mesh_query_ray(const void* mesh, const float* start, const float* dir,
                                          float max_t, void* hit, int root) {
    return sim::mesh_query_ray(static_cast<const sim::Mesh*>(mesh), sim::load_vec3f(start),
                               sim::load_vec3f(dir), max_t, *static_cast<sim::MeshHit*>(hit),
                               root);
}

// Whether the ray meets the mesh at some 0 <= t < max_t (any hit; Warp's anyhit).
SIM_EXPORT SIM_HOT int sim_mesh_query_ray_anyhit(const void* mesh, const float* start,
                                                 const float* dir, float max_t, int root) {
    return sim::mesh_query_ray_anyhit(static_cast<const sim::Mesh*>(mesh), sim::load_vec3f(start),
                                      sim::load_vec3f(dir), max_t, root);
}

// How many triangles the ray (t >= 0) meets.
SIM_EXPORT SIM_HOT int sim_mesh_query_ray_count_intersections(const void* mesh,
                                                              const float* start,
                                                              const float* dir, int root) {
    return sim::mesh_query_ray_count_intersections(static_cast<const sim::Mesh*>(mesh),
                                                   sim::load_vec3f(start), sim::load_vec3f(dir),
                                                   root);
}

// The closest point signed by ray parity; *hit (sign, face, u, v) when one is found.
SIM_EXPORT SIM_HOT int sim_mesh_query_point_sign_parity(const void* mesh, const float* point,
                                                        float max_dist, int n_sample,
                                                        float perturbation_scale, void* hit) {
    return sim::mesh_query_point_sign_parity(static_cast<const sim::Mesh*>(mesh),
                                             sim::load_vec3f(point), max_dist, n_sample,
                                             perturbation_scale,
                                             *static_cast<sim::MeshHit*>(hit));
}

// The root of a triangle group's subtree in the mesh's BVH, or -1 (Warp's
// mesh_get_group_root; see bvh_group_root).
SIM_EXPORT int sim_mesh_get_group_root(const void* mesh, int group) {
    const sim::Mesh* m = static_cast<const sim::Mesh*>(mesh);
    return sim::bvh_group_root(m == nullptr ? nullptr : &m->bvh, group);
}

// Starts an AABB query of the triangles' boxes (continued by sim_bvh_query_aabb_next).
SIM_EXPORT void sim_mesh_query_aabb_begin(void* query, const void* mesh, const float* lower,
                                          const float* upper, int root) {
    const sim::Mesh* m = static_cast<const sim::Mesh*>(mesh);
    sim::bvh_query_aabb_begin(*static_cast<sim::BvhQuery*>(query),
                              m == nullptr ? nullptr : &m->bvh, sim::load_vec3f(lower),
                              sim::load_vec3f(upper), root);
}

// The id (address) of the mesh's triangle BVH (Warp's mesh_get_bvh), 0 for no mesh:
// the bvh_query_* entry points take it, and yield face indices.
SIM_EXPORT const void* sim_mesh_get_bvh(const void* mesh) {
    return mesh == nullptr ? nullptr : &static_cast<const sim::Mesh*>(mesh)->bvh;
}

// Starts a sphere query of the triangles (continued by sim_mesh_query_sphere_next);
// `radius` points at the radius, as in sim_bvh_query_sphere_begin.
SIM_EXPORT void sim_mesh_query_sphere_begin(void* query, const void* mesh, const float* center,
                                            const float* radius, int root) {
    sim::mesh_query_sphere_begin(*static_cast<sim::BvhQuery*>(query),
                                 static_cast<const sim::Mesh*>(mesh), sim::load_vec3f(center),
                                 radius[0], root);
}

SIM_EXPORT SIM_HOT int sim_mesh_query_sphere_next(void* query) {
    return sim::mesh_query_sphere_next(*static_cast<sim::BvhQuery*>(query));
}

SIM_EXPORT void sim_mesh_eval_velocity(const void* mesh, int face, float u, float v, float* out) {
    sim::store_vec3f(out, sim::mesh_eval_velocity(static_cast<const sim::Mesh*>(mesh), face, u, v));
}

SIM_EXPORT void sim_mesh_eval_position(const void* mesh, int face, float u, float v, float* out) {
    sim::store_vec3f(out, sim::mesh_eval_position(static_cast<const sim::Mesh*>(mesh), face, u, v));
}

// ---------------------------------------------------------------------------
// Steps of the CUDA builds and refits, one face per call

SIM_EXPORT void sim_mesh_triangle_bounds(const void* mesh, int face) {
    sim::mesh_triangle_bounds(*static_cast<const sim::Mesh*>(mesh), face);
}

SIM_EXPORT void sim_mesh_add_vertex_normals(const void* mesh, int face) {
    sim::mesh_add_vertex_normals(*static_cast<const sim::Mesh*>(mesh), face);
}

// (after the leaf triangles, one node of refit level k per call)
SIM_EXPORT void sim_mesh_solid_angle_level_node(const void* mesh, int k, int i) {
    sim::mesh_solid_angle_level_node(*static_cast<const sim::Mesh*>(mesh), k, i);
}

// (after the BVH's build or refit, one BVH position per call)
SIM_EXPORT void sim_mesh_leaf_triangle(const void* mesh, int position) {
    sim::mesh_leaf_triangle(*static_cast<const sim::Mesh*>(mesh), position);
}

// ---------------------------------------------------------------------------
// Kind-erased box queries: a query variable assigned queries of several kinds
// (numba_sim's BoxQuery[any]) starts by the kind it holds and continues by the
// kind stored in its state. Kinds as numba_sim.typing.bvh.QUERY_KIND_CODES:
// 0 Bvh AABB, 1 Bvh ray, 2 Bvh sphere, 3 Mesh AABB, 4 Mesh sphere, 5 Bvh
// capsule (whose radius is at `radius`).

SIM_EXPORT void sim_box_query_begin_dynamic(void* query, const void* handle, const float* a,
                                            const float* b, const float* radius, int root,
                                            int kind) {
    switch (kind) {
        case 0: sim_bvh_query_aabb_begin(query, handle, a, b, root); break;
        case 1: sim_bvh_query_ray_begin(query, handle, a, b, root); break;
        case 2: sim_bvh_query_sphere_begin(query, handle, a, b, root); break;
        case 3: sim_mesh_query_aabb_begin(query, handle, a, b, root); break;
        case 4: sim_mesh_query_sphere_begin(query, handle, a, b, root); break;
        default: sim_bvh_query_capsule_begin(query, handle, a, b, radius, root); break;
    }
}

SIM_EXPORT int sim_box_query_next_dynamic(void* query) {
    sim::BvhQuery& q = *static_cast<sim::BvhQuery*>(query);
    switch (q.kind) {
        case sim::BVH_QUERY_AABB: return sim::bvh_query_next_item<sim::BVH_QUERY_AABB>(q);
        case sim::BVH_QUERY_RAY: return sim::bvh_query_next_item<sim::BVH_QUERY_RAY>(q);
        case sim::BVH_QUERY_SPHERE: return sim::bvh_query_next_item<sim::BVH_QUERY_SPHERE>(q);
        case sim::BVH_QUERY_CAPSULE: return sim::bvh_query_next_item<sim::BVH_QUERY_CAPSULE>(q);
        default: return sim::mesh_query_sphere_next(q);
    }
}

#endif  // SIM_MESH_ENTRY_POINTS_H
