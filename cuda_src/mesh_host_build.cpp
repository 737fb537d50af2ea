// Host only (never compiled by NVRTC): building and refitting meshes on the
// CPU (the layout and the per-face steps are in mesh.h), and the edge
// adjacency, which CUDA meshes take from here too (it depends on the indices
// only). numba_sim/spatial calls these entry points through ctypes.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "host_threads.h"
#include "mesh.h"

using sim::int32;
using sim::int64;

// bvh_host_build.cpp
SIM_EXPORT void sim_bvh_build_host(void* bvh_ptr, const float* lowers, const float* uppers, int n,
                                   int constructor, int leaf_size, void* nodes,
                                   int* primitive_indices, int* refit_order, int* level_offsets,
                                   int max_threads, const int* groups, int* group_ids,
                                   int* group_roots);
SIM_EXPORT void sim_bvh_refit_host(void* bvh_ptr);

namespace {

const int64 kMinFacesPerThread = 16384;

void triangle_bounds(const sim::Mesh& mesh, int max_threads) {
    sim::parallel_chunks(mesh.num_tris, max_threads, kMinFacesPerThread,
                         [&](int64 begin, int64 end) {
                             for (int64 f = begin; f < end; ++f) {
                                 sim::mesh_triangle_bounds(mesh, int32(f));
                             }
                         });
}

void leaf_triangles(const sim::Mesh& mesh, int max_threads) {
    sim::parallel_chunks(mesh.num_tris, max_threads, kMinFacesPerThread,
                         [&](int64 begin, int64 end) {
                             for (int64 i = begin; i < end; ++i) {
                                 sim::mesh_leaf_triangle(mesh, int32(i));
                             }
                         });
}

const int32 kEdgeFacesReady = 1;
const int32 kNormalsReady = 2;

void vertex_normals(const sim::Mesh& mesh) {
    std::fill(mesh.vertex_normals, mesh.vertex_normals + 3 * (int64)mesh.num_points, 0.0f);
    mesh.edge_length_sum = 0.0f;
    for (int32 f = 0; f < mesh.num_tris; ++f) sim::mesh_add_vertex_normals(mesh, f);
}

// The nodes' solid-angle expansions, deepest first (with support_winding_number).
void solid_angle_props(const sim::Mesh& mesh) {
    if (mesh.solid_angle_props == nullptr) return;
    for (int32 i = 0; i < mesh.bvh.num_nodes; ++i) {
        sim::mesh_solid_angle_node(mesh, mesh.bvh.refit_order[i]);
    }
}

// sim_mesh_edge_faces with half-edge numbers and bucket offsets of type Index.
template <typename Index>
void edge_faces_of(const int* indices, int num_tris, int num_points, int* edge_faces) {
    // half-edges bucketed by their lower vertex (a counting sort); half-edge
    // 3 f + k runs from vertex k of face f to vertex (k + 1) % 3
    const int64 num_half_edges = 3 * (int64)num_tris;
    std::vector<Index> starts(int64(num_points) + 1, 0);
    for (int64 h = 0; h < num_half_edges; h += 3) {
        for (int k = 0; k < 3; ++k) {
            const int32 a = indices[h + k], b = indices[h + (k == 2 ? 0 : k + 1)];
            ++starts[std::min(a, b) + 1];
        }
    }
    for (int64 v = 0; v < num_points; ++v) starts[v + 1] += starts[v];
    std::vector<Index> cursor(starts.begin(), starts.end() - 1);
    std::vector<std::pair<int32, Index>> bucket(num_half_edges);  // (upper vertex, half-edge)
    for (int64 h = 0; h < num_half_edges; h += 3) {
        for (int k = 0; k < 3; ++k) {
            const int32 a = indices[h + k], b = indices[h + (k == 2 ? 0 : k + 1)];
            bucket[cursor[std::min(a, b)]++] = {std::max(a, b), Index(h + k)};
        }
    }
    for (int64 v = 0; v < num_points; ++v) {
        for (Index i = starts[v]; i < starts[v + 1]; ++i) {
            const Index h = bucket[i].second;
            Index other = -1;
            int64 matches = 0;
            if (bucket[i].first != v) {
                for (Index j = starts[v]; j < starts[v + 1]; ++j) {
                    if (j != i && bucket[j].first == bucket[i].first) {
                        other = bucket[j].second;
                        ++matches;
                    }
                }
            }
            edge_faces[h] = matches == 1 ? int32(other / 3) : -1;
        }
    }
}

}  // namespace

// edge_faces[3 f + k] = the face across edge k of face f (from its vertex k to
// vertex (k + 1) % 3): the other face with that edge when exactly two faces
// have it, else -1 (a boundary edge, an edge of three or more faces, or an
// edge joining a vertex to itself). Faces are matched by vertex pair,
// whichever way they run along it. Indices must be in [0, num_points).
SIM_EXPORT void sim_mesh_edge_faces(const int* indices, int num_tris, int num_points,
                                    int* edge_faces) {
    // 32-bit bookkeeping (half the memory traffic) whenever it can count every half-edge
    if (3 * (int64)num_tris < (int64)2147483647) {
        edge_faces_of<int32>(indices, num_tris, num_points, edge_faces);
    } else {
        edge_faces_of<int64>(indices, num_tris, num_points, edge_faces);
    }
}

// Builds the mesh whose descriptor was filled by sim_mesh_set (its points,
// indices and buffers): the triangles' boxes, the BVH over the boxes
// into the BVH buffers (as sim_bvh_build_host), the leaf-ordered points and
// (with support_winding_number) the solid-angle expansions, on up to
// max_threads threads. `groups` (one per triangle, or null) makes a grouped
// BVH (as sim_bvh_build_host).
// Makes a host mesh's edge_faces, vertex_normals and edge_length_sum up to
// date (see sim::Mesh::sign_data): the signed point queries call it first, so
// the first of them after a build or refit computes what is missing, once,
// under a lock (queries run on many threads), and the others see it ready.
SIM_EXPORT void sim_mesh_prepare_signs(const void* mesh_ptr) {
    sim::Mesh& mesh = *const_cast<sim::Mesh*>(static_cast<const sim::Mesh*>(mesh_ptr));
    std::atomic<int32>& state = *reinterpret_cast<std::atomic<int32>*>(&mesh.sign_data);
    const int32 ready = kEdgeFacesReady | kNormalsReady;
    if (state.load(std::memory_order_acquire) == ready) return;
    static std::mutex lock;
    std::lock_guard<std::mutex> guard(lock);
    const int32 now = state.load(std::memory_order_relaxed);
    if (!(now & kEdgeFacesReady)) {
        sim_mesh_edge_faces(mesh.indices, mesh.num_tris, mesh.num_points,
                            const_cast<int*>(mesh.edge_faces));
    }
    if (!(now & kNormalsReady)) vertex_normals(mesh);
    state.store(ready, std::memory_order_release);
}

SIM_EXPORT void sim_mesh_build_host(void* mesh_ptr, int constructor,
                                    int leaf_size, void* nodes, int* primitive_indices,
                                    int* refit_order, int* level_offsets, int max_threads,
                                    const int* groups, int* group_ids, int* group_roots) {
    sim::Mesh& mesh = *static_cast<sim::Mesh*>(mesh_ptr);
    mesh.sign_data = 0;  // edge faces and normals: at the first signed query
    triangle_bounds(mesh, max_threads);
    sim_bvh_build_host(&mesh.bvh, mesh.tri_lowers, mesh.tri_uppers, mesh.num_tris, constructor,
                       leaf_size, nodes, primitive_indices, refit_order, level_offsets,
                       max_threads, groups, group_ids, group_roots);
    leaf_triangles(mesh, max_threads);
    solid_angle_props(mesh);
}

// After the points moved: the triangles' boxes (the vertex normals go stale), the BVH,
// the leaf-ordered copy of the points and the solid-angle expansions.
SIM_EXPORT void sim_mesh_refit_host(void* mesh_ptr, int max_threads) {
    sim::Mesh& mesh = *static_cast<sim::Mesh*>(mesh_ptr);
    mesh.sign_data &= kEdgeFacesReady;  // the normals: at the next signed query
    triangle_bounds(mesh, max_threads);
    sim_bvh_refit_host(&mesh.bvh);
    leaf_triangles(mesh, max_threads);
    solid_angle_props(mesh);
}
