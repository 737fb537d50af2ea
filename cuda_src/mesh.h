// Triangle meshes: Warp's wp.Mesh queries on a BVH over the triangles' boxes.
//
// The mesh keeps the caller's points (num_points x 3 floats) and its own copy
// of the indices (num_tris x 3); the BVH (bvh.h) is built over the triangles'
// boxes, which the mesh owns and refits recompute. The queries read the
// triangles' points from `leaf_points`, a copy in the BVH's leaf order that
// builds and refits make (no index lookups, neighbouring triangles side by
// side). A face's local edge k runs from its vertex k to vertex (k + 1) % 3.
//
// Closest point (mesh_query_point). Depth first, nearer child first: the
// farther child waits on a stack with the squared distance from the query
// point to its box, and nodes no nearer than the best point so far are
// skipped. Each triangle's closest point comes from Ericson's Voronoi-region
// test, which also says which feature (face interior, edge or vertex) it
// lies on.
// Zero-area triangles have no closest point of their own: their points lie on
// the edges of others, and they are skipped (Warp skips them too).
//
// Sign (Warp's convention: negative inside, for counter-clockwise faces seen
// from outside). Baerentzen and Aanaes' angle-weighted pseudo-normal of the
// feature the closest point lies on: the face normal for a point inside the
// face, the sum of the two unit face normals on an edge, and the sum of the
// unit normals of the faces around a vertex, each weighted by its angle
// there. sign = -1 when (p - closest) points against it, +1 otherwise. For a
// closed, consistently wound 2-manifold mesh this is exact (whichever of
// several equally close faces wins, they share the feature and its normal).
// Open meshes, inconsistent winding, edges shared by more than two faces and
// self-intersections make it unreliable near the offending features. The
// edge normals come from `edge_faces` (the face across each edge, -1 for none,
// from the topology, found once), the vertex normals from `vertex_normals`
// (sums, recomputed by every refit). Warp decides the sign by casting three
// rays instead; both agree on closed meshes.
//
// Ray (mesh_query_ray). The closest hit with 0 <= t < max_t, nearer child
// first, pruning boxes entered after the best hit. The triangle test is Woop,
// Benthin and Wald's watertight test (as Warp's, with its double-precision
// fallback on edges): a ray through an edge or vertex shared by triangles hits
// at least one of them and never slips between. sign is +1 for a hit on a
// triangle's front (counter-clockwise) side, -1 on its back.
#ifndef SIM_MESH_H
#define SIM_MESH_H

#include "bvh.h"
#include "geometry.h"
#include "solid_angle.h"

namespace sim {

struct Mesh {
    const float* points;   // num_points x 3, the caller's
    const int32* indices;  // num_tris x 3
    float* tri_lowers;     // num_tris x 3: the triangles' boxes, items of `bvh`
    float* tri_uppers;
    const int32* edge_faces;  // num_tris x 3: the face across each edge, or -1
    float* vertex_normals;    // num_points x 3: angle-weighted normal sums
    float* leaf_points;       // num_tris x 9: the triangles' points, in BVH position order
    int32 num_points;
    int32 num_tris;
    Bvh bvh;
    // The sum of the faces' edge lengths (Warp's average_edge_length times
    // 3 num_tris): cleared by face 0's mesh_triangle_bounds, summed by
    // mesh_add_vertex_normals (in face order on the host, as Warp sums it).
    mutable float edge_length_sum;
    // Host meshes: which of edge_faces (bit 1) and vertex_normals with
    // edge_length_sum (bit 2) are up to date. They serve the signed point
    // queries only, so a host build leaves them to the first such query
    // (sim_mesh_prepare_signs) and a refit marks the normals stale; CUDA meshes
    // compute them in their build and never read this.
    int32 sign_data;
    // One per BVH node slot (Mesh(support_winding_number=True)), else null:
    // the nodes' dipole expansions, recomputed after every build and refit.
    SolidAngleProps* solid_angle_props;
    // num_points x 3, the caller's (Mesh(velocities=...)), or null.
    const float* velocities;
};

static_assert(sizeof(Mesh) == 184, "Mesh layout changed: update numba_sim");
// Where the embedded tree sits: a mesh query's state holds the tree, and its
// triangles are found from it (mesh_of_bvh).
#define SIM_MESH_BVH_OFFSET 64
SIM_ASSERT_OFFSET(Mesh, bvh, SIM_MESH_BVH_OFFSET, "Mesh layout changed: update mesh_of_bvh");

SIM_FUNC const Mesh& mesh_of_bvh(const Bvh* bvh) {
    return *reinterpret_cast<const Mesh*>(reinterpret_cast<const char*>(bvh) -
                                          SIM_MESH_BVH_OFFSET);
}

// The result of mesh_query_point / mesh_query_ray, as numba_sim reads it.
struct MeshHit {
    float t;  // ray parameter (ray queries)
    float u;  // barycentric weight of the face's vertex 0
    float v;  // ... of vertex 1 (vertex 2 gets 1 - u - v)
    float sign;
    float normal[3];  // unit face normal (ray queries)
    int32 face;
};

static_assert(sizeof(MeshHit) == 32, "MeshHit layout changed: update numba_sim");

SIM_FUNC vec3f mesh_point(const Mesh& mesh, int32 i) {
    return load_vec3f(mesh.points + 3 * (int64)i);
}

SIM_FUNC vec3f normalized(vec3f a) {
    const float l = length(a);
    return l > 0.0f ? mul(a, 1.0f / l) : make_vec3f(0.0f, 0.0f, 0.0f);
}

SIM_FUNC void mesh_face(const Mesh& mesh, int32 f, vec3f& a, vec3f& b, vec3f& c) {
    const int32* v = mesh.indices + 3 * (int64)f;
    a = mesh_point(mesh, v[0]);
    b = mesh_point(mesh, v[1]);
    c = mesh_point(mesh, v[2]);
}

// ---------------------------------------------------------------------------
// Per-face steps of builds and refits (host loops, one face per CUDA thread)

SIM_FUNC void mesh_triangle_bounds(const Mesh& mesh, int32 f) {
    if (f == 0) mesh.edge_length_sum = 0.0f;  // summed by the next step
    vec3f a, b, c;
    mesh_face(mesh, f, a, b, c);
    float* lower = mesh.tri_lowers + 3 * (int64)f;
    float* upper = mesh.tri_uppers + 3 * (int64)f;
    lower[0] = fast_min(fast_min(a.x, b.x), c.x);
    lower[1] = fast_min(fast_min(a.y, b.y), c.y);
    lower[2] = fast_min(fast_min(a.z, b.z), c.z);
    upper[0] = fast_max(fast_max(a.x, b.x), c.x);
    upper[1] = fast_max(fast_max(a.y, b.y), c.y);
    upper[2] = fast_max(fast_max(a.z, b.z), c.z);
}

// The angle between two vectors of lengths la and lb (0 when one is zero).
SIM_FUNC float angle_between(vec3f a, vec3f b, float la, float lb) {
    if (!(la > 0.0f && lb > 0.0f)) return 0.0f;
    return acos_f(clamp_f(dot(a, b) / (la * lb), -1.0f, 1.0f));
}

// The points of the triangle at BVH position i, copied where the queries read
// them (leaf by leaf, without going through the indices).
SIM_FUNC void mesh_leaf_triangle(const Mesh& mesh, int32 i) {
    const int32* corners = mesh.indices + 3 * (int64)mesh.bvh.primitive_indices[i];
    float* out = mesh.leaf_points + 9 * (int64)i;
    for (int k = 0; k < 3; ++k) {
        const float* p = mesh.points + 3 * (int64)corners[k];
        out[3 * k + 0] = p[0];
        out[3 * k + 1] = p[1];
        out[3 * k + 2] = p[2];
    }
}

// Adds face f's unit normal, times its angle at each vertex, to that vertex's
// sum (atomically on the device; the host runs it on one thread).
SIM_FUNC void mesh_add_vertex_normals(const Mesh& mesh, int32 f) {
    vec3f p[3];
    mesh_face(mesh, f, p[0], p[1], p[2]);
    // edge[k]: the length of the edge opposite corner k (|p - q| == |q - p|
    // exactly, so the corner angles below reuse them)
    const float edge[3] = {length(sub(p[2], p[1])), length(sub(p[0], p[2])),
                           length(sub(p[0], p[1]))};
    atomic_add_f(&mesh.edge_length_sum, edge[2] + edge[1] + edge[0]);
    const vec3f n = normalized(cross(sub(p[1], p[0]), sub(p[2], p[0])));
    if (n.x == 0.0f && n.y == 0.0f && n.z == 0.0f) return;  // zero area
    for (int k = 0; k < 3; ++k) {
        const vec3f corner = p[k];
        const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        // the edges from the corner to k1 and to k2 are opposite k2 and k1
        const float angle = angle_between(sub(p[k1], corner), sub(p[k2], corner), edge[k2],
                                          edge[k1]);
        float* sum = mesh.vertex_normals + 3 * (int64)mesh.indices[3 * (int64)f + k];
        atomic_add_f(sum + 0, angle * n.x);
        atomic_add_f(sum + 1, angle * n.y);
        atomic_add_f(sum + 2, angle * n.z);
    }
}

// ---------------------------------------------------------------------------
// Closest point

// Feature of a triangle that a closest point lies on.
enum { FEATURE_FACE = 0, FEATURE_VERTEX = 1, FEATURE_EDGE = 4 };  // + vertex / edge number

// Ericson's closest point of triangle abc to p (Real-Time Collision Detection
// 5.1.5): barycentric weights (u, v) of a and b, and the feature.
SIM_FUNC vec3f closest_point_on_triangle(vec3f a, vec3f b, vec3f c, vec3f p, float& u, float& v,
                                         int32& feature) {
    const vec3f ab = sub(b, a), ac = sub(c, a), ap = sub(p, a);
    const float d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0.0f && d2 <= 0.0f) {
        u = 1.0f, v = 0.0f, feature = FEATURE_VERTEX + 0;
        return a;
    }
    const vec3f bp = sub(p, b);
    const float d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0.0f && d4 <= d3) {
        u = 0.0f, v = 1.0f, feature = FEATURE_VERTEX + 1;
        return b;
    }
    const float vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) {
        const float s = d1 / (d1 - d3);
        u = 1.0f - s, v = s, feature = FEATURE_EDGE + 0;  // edge ab
        return add(a, mul(ab, s));
    }
    const vec3f cp = sub(p, c);
    const float d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0.0f && d5 <= d6) {
        u = 0.0f, v = 0.0f, feature = FEATURE_VERTEX + 2;
        return c;
    }
    const float vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) {
        const float s = d2 / (d2 - d6);
        u = 1.0f - s, v = 0.0f, feature = FEATURE_EDGE + 2;  // edge ca
        return add(a, mul(ac, s));
    }
    const float va = d3 * d6 - d5 * d4;
    if (va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f) {
        const float s = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        u = 0.0f, v = 1.0f - s, feature = FEATURE_EDGE + 1;  // edge bc
        return add(b, mul(sub(c, b), s));
    }
    const float denom = 1.0f / (va + vb + vc);
    v = vb * denom;
    const float w = vc * denom;
    u = 1.0f - v - w;
    feature = FEATURE_FACE;
    return add(a, add(mul(ab, v), mul(ac, w)));
}

// The pseudo-normal of `feature` of face f (see the top of this file).
SIM_FUNC vec3f mesh_feature_normal(const Mesh& mesh, int32 f, int32 feature) {
    vec3f a, b, c;
    mesh_face(mesh, f, a, b, c);
    const vec3f n = normalized(cross(sub(b, a), sub(c, a)));
    if (feature >= FEATURE_EDGE) {
        const int32 g = mesh.edge_faces[3 * (int64)f + feature - FEATURE_EDGE];
        if (g < 0) return n;
        vec3f d, e, h;
        mesh_face(mesh, g, d, e, h);
        return add(n, normalized(cross(sub(e, d), sub(h, d))));
    }
    if (feature >= FEATURE_VERTEX) {
        const int32 vertex = mesh.indices[3 * (int64)f + feature - FEATURE_VERTEX];
        return load_vec3f(mesh.vertex_normals + 3 * (int64)vertex);
    }
    return n;
}

// The nodes a nearer-child-first traversal left for later, with their keys (a
// squared distance, or a ray's entry parameter); at most one per depth.
struct NodeStack {
    int32 nodes[SIM_BVH_STACK_SIZE];
    float keys[SIM_BVH_STACK_SIZE];
    int32 count = 0;

    SIM_FUNC void push(int32 node, float key) {
        nodes[count] = node;
        keys[count++] = key;
    }

    // The latest node whose key is below `limit` (dropping the others on the
    // way), or -1 when none is left.
    SIM_FUNC int32 pop_below(float limit) {
        while (count > 0) {
            --count;
            if (keys[count] < limit) return nodes[count];
        }
        return -1;
    }
};

SIM_FUNC float box_distance_sq(vec3f p, const float* lower, const float* upper) {
    const float dx = fast_max(fast_max(lower[0] - p.x, p.x - upper[0]), 0.0f);
    const float dy = fast_max(fast_max(lower[1] - p.y, p.y - upper[1]), 0.0f);
    const float dz = fast_max(fast_max(lower[2] - p.z, p.z - upper[2]), 0.0f);
    return dx * dx + dy * dy + dz * dz;
}

// On the host, asks the caches for what a visit of `node` (a node of a mesh's
// BVH) will read: its children's boxes (one cache line, the builders put
// siblings side by side), or a leaf's triangles. Issued for both children of a
// node as soon as they are found reachable, it overlaps the memory latency of
// one level with the tests of the level above (the traversal of a mesh larger
// than the caches is otherwise a chain of dependent misses). Nothing on the
// device.
SIM_FUNC void prefetch_below(const Bvh& bvh, const BvhNode& node) {
#ifndef SIM_DEVICE_COMPILE
    if (bvh_is_leaf(node)) {
        const char* first = reinterpret_cast<const char*>(
            mesh_of_bvh(&bvh).leaf_points + 9 * (int64)bvh_leaf_begin(node));
        __builtin_prefetch(first);
        __builtin_prefetch(first + 64);
    } else {
        __builtin_prefetch(bvh.nodes + node.left);
    }
#else
    (void)bvh;
    (void)node;
#endif
}

// Visits the leaves of the mesh's BVH nearest first. `key(node, k)` sets a
// node's key (the squared distance to its box, or the ray's entry parameter)
// and is false when the query cannot reach the node at all; a node whose key
// is not below `best`, which `leaf(node)` lowers as it finds closer triangles,
// is skipped. The nearer child is entered at once, the other kept pending.
//
// `root` starts the traversal at that node (a group's subtree root) instead
// of the tree's root (root < 0); a root past the node slots visits nothing.
template <class Key, class Leaf>
SIM_FUNC void visit_nearest_first(const Bvh& bvh, const float& best, Key key, Leaf leaf,
                                  int32 root = -1) {
    const BvhNode* nodes = bvh.nodes;
    NodeStack pending;
    float k;
    const int32 start = root < 0 ? bvh.root : root;
    if (start >= 2 * (int64)bvh.num_items) return;
    int32 index = key(nodes[start], k) && k < best ? start : -1;
    while (index >= 0 || (index = pending.pop_below(best)) >= 0) {
        const BvhNode& node = nodes[index];
        if (bvh_is_leaf(node)) {
            leaf(node);
            index = -1;
            continue;
        }
        float kl, kr;
        const bool hl = key(nodes[node.left], kl) & (kl < best);
        const bool hr = key(nodes[node.right], kr) & (kr < best);
        if (hl) prefetch_below(bvh, nodes[node.left]);
        if (hr) prefetch_below(bvh, nodes[node.right]);
        // Without branches on which children are reachable (they mispredict
        // often): the farther child is written to the stack in any case and
        // kept only when both are reachable.
        const bool left_first = hl & (!hr | (kl <= kr));
        const int32 near_node = left_first ? node.left : node.right;
        pending.nodes[pending.count] = left_first ? node.right : node.left;
        pending.keys[pending.count] = left_first ? kr : kl;
        pending.count += int32(hl & hr);
        index = (hl | hr) ? near_node : -1;
    }
}

// The point of the mesh closest to p, if one is closer than max_dist: its
// face, barycentric u, v (weights of the face's vertices 0 and 1) and sign.
SIM_FUNC bool mesh_query_point(const Mesh* mesh_ptr, vec3f p, float max_dist, MeshHit& hit) {
    hit.face = -1;
    hit.t = hit.u = hit.v = 0.0f;
    hit.sign = 0.0f;
    hit.normal[0] = hit.normal[1] = hit.normal[2] = 0.0f;
    if (mesh_ptr == nullptr || mesh_ptr->num_tris <= 0 || mesh_ptr->bvh.nodes == nullptr) {
        return false;
    }
    if (!(is_finite_f(p.x) && is_finite_f(p.y) && is_finite_f(p.z)) || !(max_dist > 0.0f)) {
        return false;
    }
    const Mesh& mesh = *mesh_ptr;
    float best = max_dist * max_dist;  // squared; a point must be strictly nearer
    int32 best_face = -1, best_feature = 0;
    float best_u = 0.0f, best_v = 0.0f;
    vec3f best_point = p;
    const auto box_distance = [&](const BvhNode& node, float& key) {
        key = box_distance_sq(p, node.lower, node.upper);
        return true;
    };
    visit_nearest_first(mesh.bvh, best, box_distance, [&](const BvhNode& leaf) {
        for (int32 i = bvh_leaf_begin(leaf); i < leaf.right; ++i) {
            const float* corners = mesh.leaf_points + 9 * (int64)i;
            const vec3f a = load_vec3f(corners), b = load_vec3f(corners + 3);
            const vec3f c = load_vec3f(corners + 6);
            const vec3f n = cross(sub(b, a), sub(c, a));
            if (n.x == 0.0f && n.y == 0.0f && n.z == 0.0f) continue;  // zero area
            float u, v;
            int32 feature;
            const vec3f q = closest_point_on_triangle(a, b, c, p, u, v, feature);
            const vec3f d = sub(q, p);
            const float dist = dot(d, d);
            if (dist < best) {
                best = dist;
                best_face = mesh.bvh.primitive_indices[i];
                best_u = u;
                best_v = v;
                best_feature = feature;
                best_point = q;
            }
        }
    });
    if (best_face < 0) return false;
    hit.face = best_face;
    hit.u = best_u;
    hit.v = best_v;
    const vec3f normal = mesh_feature_normal(mesh, best_face, best_feature);
    hit.sign = dot(sub(p, best_point), normal) < 0.0f ? -1.0f : 1.0f;
    return true;
}

// ---------------------------------------------------------------------------
// Warp's variants of the closest point: mesh_query_point_no_sign,
// mesh_query_furthest_point_no_sign, mesh_query_point_sign_normal. Each
// triangle is handled as Warp handles it (warp/native/mesh.h), operation for
// operation: slivers (|n| / sum of squared edge lengths < 1e-6) are skipped,
// the point comes from closest_point_to_triangle (geometry.h) and is
// evaluated as u a + v b + w c. Only the order of the traversal is this BVH's
// (it decides between exactly equally distant faces).

// Warp's normalize (a division by the length; zero for a zero vector).
SIM_FUNC vec3f warp_normalize(vec3f a) {
    const float l = sqrt_f(a.x * a.x + a.y * a.y + a.z * a.z);
    return l > 0.0f ? make_vec3f(a.x / l, a.y / l, a.z / l) : make_vec3f(0.0f, 0.0f, 0.0f);
}

SIM_FUNC vec3f barycentric_point(vec3f a, vec3f b, vec3f c, float u, float v, float w) {
    return add(add(mul(a, u), mul(b, v)), mul(c, w));
}

// Whether Warp skips the triangle abc as a sliver (its normal n comes back).
SIM_FUNC bool warp_sliver(vec3f a, vec3f b, vec3f c, vec3f& n) {
    const vec3f e0 = sub(b, a), e1 = sub(c, a), e2 = sub(c, b);
    n = cross(e0, e1);
    return length(n) / (dot(e0, e0) + dot(e1, e1) + dot(e2, e2)) < 1.e-6f;
}

SIM_FUNC void clear_hit(MeshHit& hit) {
    hit.face = -1;
    hit.t = hit.u = hit.v = 0.0f;
    hit.sign = 0.0f;
    hit.normal[0] = hit.normal[1] = hit.normal[2] = 0.0f;
}

SIM_FUNC bool mesh_queryable(const Mesh* mesh) {
    return mesh != nullptr && mesh->num_tris > 0 && mesh->bvh.nodes != nullptr;
}

// The closest point nearer than max_dist, without a sign (sign 0).
SIM_FUNC bool mesh_query_point_no_sign(const Mesh* mesh_ptr, vec3f p, float max_dist,
                                       MeshHit& hit) {
    clear_hit(hit);
    if (!mesh_queryable(mesh_ptr)) return false;
    const Mesh& mesh = *mesh_ptr;
    float best = max_dist * max_dist;
    int32 best_face = -1;
    float best_v = 0.0f, best_w = 0.0f;
    const auto box_distance = [&](const BvhNode& node, float& key) {
        key = box_distance_sq(p, node.lower, node.upper);
        return true;
    };
    visit_nearest_first(mesh.bvh, best, box_distance, [&](const BvhNode& leaf) {
        for (int32 i = bvh_leaf_begin(leaf); i < leaf.right; ++i) {
            const float* corners = mesh.leaf_points + 9 * (int64)i;
            const vec3f a = load_vec3f(corners), b = load_vec3f(corners + 3);
            const vec3f c = load_vec3f(corners + 6);
            vec3f n;
            if (warp_sliver(a, b, c, n)) continue;
            float u, v;
            closest_point_to_triangle(a, b, c, p, u, v);
            const float w = 1.f - u - v;
            const vec3f d = sub(barycentric_point(a, b, c, u, v, w), p);
            const float dist_sq = dot(d, d);
            if (dist_sq < best) {
                best = dist_sq;
                best_v = v;
                best_w = w;
                best_face = mesh.bvh.primitive_indices[i];
            }
        }
    });
    if (best_face < 0) return false;
    hit.face = best_face;
    hit.u = 1.0f - best_v - best_w;
    hit.v = best_v;
    return true;
}

// The largest squared distance from p to a point of the box (Warp's
// furthest_distance_to_aabb_sq).
SIM_FUNC float box_furthest_distance_sq(vec3f p, const float* lower, const float* upper) {
    const float q[3] = {p.x, p.y, p.z};
    float sum = 0.0f;
    for (int k = 0; k < 3; ++k) {
        const float dl = abs_f(q[k] - lower[k]), du = abs_f(q[k] - upper[k]);
        const float d = dl > du ? dl : du;
        sum = k == 0 ? d * d : sum + d * d;
    }
    return sum;
}

// The point of the mesh farthest from p, if farther than min_dist (sign 0).
// Farthest first: the keys are the negated largest squared distances.
SIM_FUNC bool mesh_query_furthest_point_no_sign(const Mesh* mesh_ptr, vec3f p, float min_dist,
                                                MeshHit& hit) {
    clear_hit(hit);
    if (!mesh_queryable(mesh_ptr)) return false;
    const Mesh& mesh = *mesh_ptr;
    float best = -(min_dist * min_dist);  // the negated squared distance to beat
    int32 best_face = -1;
    float best_v = 0.0f, best_w = 0.0f;
    const auto box_distance = [&](const BvhNode& node, float& key) {
        key = -box_furthest_distance_sq(p, node.lower, node.upper);
        return true;
    };
    visit_nearest_first(mesh.bvh, best, box_distance, [&](const BvhNode& leaf) {
        for (int32 i = bvh_leaf_begin(leaf); i < leaf.right; ++i) {
            const float* corners = mesh.leaf_points + 9 * (int64)i;
            const vec3f a = load_vec3f(corners), b = load_vec3f(corners + 3);
            const vec3f c = load_vec3f(corners + 6);
            vec3f n;
            if (warp_sliver(a, b, c, n)) continue;
            float u, v;
            furthest_point_to_triangle(a, b, c, p, u, v);
            const float w = 1.f - u - v;
            const vec3f d = sub(barycentric_point(a, b, c, u, v, w), p);
            const float dist_sq = dot(d, d);
            if (-dist_sq < best) {
                best = -dist_sq;
                best_v = v;
                best_w = w;
                best_face = mesh.bvh.primitive_indices[i];
            }
        }
    });
    if (best_face < 0) return false;
    hit.face = best_face;
    hit.u = 1.0f - best_v - best_w;
    hit.v = best_v;
    return true;
}

// The closest point nearer than max_dist, signed by Warp's angle-weighted
// pseudo-normal with a tolerance: faces within epsilon times the mean edge
// length of the closest distance count as equally close, their normals
// weighted by the angle of the feature the point lies on (a vertex: the
// face's angle there; an edge: pi; the interior: 2 pi). sign -1 inside.
SIM_FUNC bool mesh_query_point_sign_normal(const Mesh* mesh_ptr, vec3f p, float max_dist,
                                           float epsilon, MeshHit& hit) {
    clear_hit(hit);
    if (!mesh_queryable(mesh_ptr)) return false;
    const Mesh& mesh = *mesh_ptr;
    const float average_edge_length = mesh.edge_length_sum / (float)(mesh.num_tris * 3);
    const float eps = average_edge_length * epsilon;
    const float eps_sq = eps * eps;
    float min_dist = max_dist;
    float bound = (min_dist + eps) * (min_dist + eps);  // squared reach of the search
    int32 min_face = -1;
    float min_v = 0.0f, min_w = 0.0f;
    vec3f normal_sum = make_vec3f(0.0f, 0.0f, 0.0f);
    const auto box_distance = [&](const BvhNode& node, float& key) {
        key = box_distance_sq(p, node.lower, node.upper);
        return true;
    };
    visit_nearest_first(mesh.bvh, bound, box_distance, [&](const BvhNode& leaf) {
        for (int32 i = bvh_leaf_begin(leaf); i < leaf.right; ++i) {
            const float* corners = mesh.leaf_points + 9 * (int64)i;
            const vec3f a = load_vec3f(corners), b = load_vec3f(corners + 3);
            const vec3f c = load_vec3f(corners + 6);
            const vec3f e0 = sub(b, a), e1 = sub(c, a), e2 = sub(c, b);
            const vec3f normal = cross(e0, e1);
            const float e0_sq = dot(e0, e0), e1_sq = dot(e1, e1), e2_sq = dot(e2, e2);
            if (length(normal) / (e0_sq + e1_sq + e2_sq) < 1.e-6f) continue;
            float u, v;
            closest_point_to_triangle(a, b, c, p, u, v);
            const float w = 1.f - u - v;
            const vec3f q = barycentric_point(a, b, c, u, v, w);
            const vec3f d = sub(q, p);
            const float dist = sqrt_f(dot(d, d));
            if (!(dist < min_dist + eps)) continue;
            const vec3f cp = sub(q, a), cq = sub(q, b), cr = sub(q, c);
            const float cp_sq = dot(cp, cp), cq_sq = dot(cq, cq), cr_sq = dot(cr, cr);
            float weight;
            if (cp_sq < eps_sq) {
                weight = acos_f(dot(warp_normalize(e0), warp_normalize(e1)));
            } else if (cq_sq < eps_sq) {
                weight = acos_f(dot(warp_normalize(e2), warp_normalize(mul(e0, -1.0f))));
            } else if (cr_sq < eps_sq) {
                weight = acos_f(dot(warp_normalize(mul(e1, -1.0f)), warp_normalize(mul(e2, -1.0f))));
            } else {
                const float e0cp = dot(e0, cp), e2cq = dot(e2, cq), e1cp = dot(e1, cp);
                if ((cp_sq * e0_sq - e0cp * e0cp < eps_sq * e0_sq) ||
                    (cq_sq * e2_sq - e2cq * e2cq < eps_sq * e2_sq) ||
                    (cp_sq * e1_sq - e1cp * e1cp < eps_sq * e1_sq)) {
                    weight = 3.14159265359f;  // on an edge
                } else {
                    weight = 2.0f * 3.14159265359f;
                }
            }
            const vec3f n = warp_normalize(normal);
            const vec3f weighted = make_vec3f(weight * n.x, weight * n.y, weight * n.z);
            if (dist > min_dist - eps) {  // as close as the closest: accumulate
                normal_sum = add(normal_sum, weighted);
                if (dist < min_dist) {
                    min_dist = dist;
                    min_v = v;
                    min_w = w;
                    min_face = mesh.bvh.primitive_indices[i];
                }
            } else {  // closer
                min_dist = dist;
                min_v = v;
                min_w = w;
                min_face = mesh.bvh.primitive_indices[i];
                normal_sum = weighted;
            }
            bound = (min_dist + eps) * (min_dist + eps);
        }
    });
    if (!(min_dist < max_dist) || min_face < 0) return false;
    hit.face = min_face;
    hit.u = 1.0f - min_v - min_w;
    hit.v = min_v;
    const int32* corners = mesh.indices + 3 * (int64)min_face;
    const vec3f a = mesh_point(mesh, corners[0]), b = mesh_point(mesh, corners[1]);
    const vec3f c = mesh_point(mesh, corners[2]);
    const vec3f closest = barycentric_point(a, b, c, hit.u, hit.v, min_w);
    hit.sign = dot(normal_sum, sub(p, closest)) > 0.0f ? 1.0f : -1.0f;
    return true;
}

// ---------------------------------------------------------------------------
// Winding number (Mesh(support_winding_number=True)): the solid-angle
// expansions of the BVH's nodes, built bottom up after every build and refit
// (a leaf combines its triangles in order, an inner node its children, as
// Warp does), and Warp's traversal, which sums exact solid angles of the
// triangles of leaves near p and the expansions of inner nodes far from it.

SIM_FUNC void mesh_solid_angle_node(const Mesh& mesh, int32 index) {
    const BvhNode& node = mesh.bvh.nodes[index];
    SolidAngleProps* props = mesh.solid_angle_props;
    SolidAngleProps combined;
    if (bvh_is_leaf(node)) {
        for (int32 i = bvh_leaf_begin(node); i < node.right; ++i) {
            const float* corners = mesh.leaf_points + 9 * (int64)i;
            const vec3f a = load_vec3f(corners), b = load_vec3f(corners + 3);
            const vec3f c = load_vec3f(corners + 6);
            if (i == bvh_leaf_begin(node)) {
                triangle_solid_angle_props(a, b, c, props[index]);
            } else {
                SolidAngleProps triangle;
                triangle_solid_angle_props(a, b, c, triangle);
                combine_solid_angle_props(combined, &props[index], &triangle);
                props[index] = combined;
            }
        }
        return;
    }
    combine_solid_angle_props(combined, &props[node.left], &props[node.right]);
    props[index] = combined;
}

// (the CUDA build: the nodes of refit level k, one per call)
SIM_FUNC void mesh_solid_angle_level_node(const Mesh& mesh, int32 k, int32 i) {
    const int32 position = mesh.bvh.level_offsets[k] + i;
    if (mesh.solid_angle_props != nullptr && position < mesh.bvh.level_offsets[k + 1]) {
        mesh_solid_angle_node(mesh, mesh.bvh.refit_order[position]);
    }
}

// The total solid angle of the mesh seen from p (Warp's solid_angle_iterative).
SIM_FUNC float mesh_solid_angle(const Mesh& mesh, vec3f p, float accuracy_sq) {
    int32 stack[SIM_BVH_STACK_SIZE + 1];
    int32 at_child[SIM_BVH_STACK_SIZE + 1];  // 0: left next, 1: right next, 2: done
    float angle[SIM_BVH_STACK_SIZE + 1];
    stack[0] = mesh.bvh.root;
    at_child[0] = 0;
    angle[0] = 0.0f;
    int32 count = 1;
    while (count) {
        const int32 index = stack[count - 1];
        const BvhNode& node = mesh.bvh.nodes[index];
        if (bvh_is_leaf(node)) {
            angle[count - 1] = 0.f;
            for (int32 i = bvh_leaf_begin(node); i < node.right; ++i) {
                const float* corners = mesh.leaf_points + 9 * (int64)i;
                angle[count - 1] += robust_solid_angle(load_vec3f(corners), load_vec3f(corners + 3),
                                                       load_vec3f(corners + 6), p);
            }
            count--;
        } else if (at_child[count - 1] == 0) {
            if (evaluate_node_solid_angle(p, mesh.solid_angle_props[index], angle[count - 1],
                                          accuracy_sq)) {
                stack[count] = node.left;
                at_child[count - 1] = 1;
                angle[count] = 0.0f;
                at_child[count] = 0;
                count++;
            } else {
                count--;
            }
        } else if (at_child[count - 1] == 1) {
            angle[count - 1] += angle[count];
            stack[count] = node.right;
            at_child[count - 1] = 2;
            angle[count] = 0.0f;
            at_child[count] = 0;
            count++;
        } else {
            angle[count - 1] += angle[count];
            count--;
        }
    }
    return angle[0];
}

SIM_FUNC float mesh_winding_number(const Mesh& mesh, vec3f p, float accuracy) {
    return mesh_solid_angle(mesh, p, accuracy * accuracy) * 0.07957747154f;  // / (4 pi)
}

SIM_FUNC bool mesh_query_ray(const Mesh* mesh_ptr, vec3f start, vec3f dir, float max_t,
                             MeshHit& hit, int32 root = -1);

// Warp's inside test without a winding number: of three rays along +x, +y and
// +z, at least two whose closest hit is a back face (-1, inside) or not (+1).
SIM_FUNC float mesh_inside_by_rays(const Mesh* mesh, vec3f p) {
    int votes = 0;
    for (int i = 0; i < 3; ++i) {
        MeshHit hit;
        const vec3f dir = make_vec3f(float(i == 0), float(i == 1), float(i == 2));
        if (mesh_query_ray(mesh, p, dir, inf_f(), hit) && hit.sign < 0.0f) ++votes;
    }
    return votes >= 2 ? -1.0f : 1.0f;
}

// The closest point (as mesh_query_point_no_sign), signed by the winding
// number (-1 when above `threshold`); without expansions (the mesh was made
// without support_winding_number), by Warp's fallback, three rays.
SIM_FUNC bool mesh_query_point_sign_winding_number(const Mesh* mesh_ptr, vec3f p, float max_dist,
                                                   float accuracy, float threshold,
                                                   MeshHit& hit) {
    if (!mesh_query_point_no_sign(mesh_ptr, p, max_dist, hit)) return false;
    if (mesh_ptr->solid_angle_props == nullptr) {
        hit.sign = mesh_inside_by_rays(mesh_ptr, p);
    } else {
        hit.sign = mesh_winding_number(*mesh_ptr, p, accuracy) > threshold ? -1.0f : 1.0f;
    }
    return true;
}

// ---------------------------------------------------------------------------
// Ray

// a * b - c * d with one rounding (nearly): Kahan's product difference with
// fused multiply-adds on the device; on the host, where the library is built
// for CPUs that may lack FMA (a call into libm), the exact products in double.
SIM_FUNC float diff_product(float a, float b, float c, float d) {
#ifdef SIM_DEVICE_COMPILE
    const float cd = c * d;
    return fmaf(a, b, -cd) + fmaf(-c, d, cd);
#else
    const float cd = c * d;
    return __builtin_fmaf(a, b, -cd) + __builtin_fmaf(-c, d, cd);
#endif
}

// Woop, Benthin and Wald's watertight ray-triangle test, set up once per ray:
// the axis kz of the direction's largest component, kx and ky the others (in
// the order that keeps the winding), and the shear that maps the ray onto +z.
struct WatertightRay {
    float start[3];
    int kx, ky, kz;
    float sx, sy, sz;
};

SIM_FUNC WatertightRay watertight_ray(const float* start, const float* dir) {
    WatertightRay r;
    for (int k = 0; k < 3; ++k) r.start[k] = start[k];
    const float ax = abs_f(dir[0]), ay = abs_f(dir[1]), az = abs_f(dir[2]);
    r.kz = ax > ay ? (ax > az ? 0 : 2) : (ay > az ? 1 : 2);
    r.kx = r.kz == 2 ? 0 : r.kz + 1;
    r.ky = r.kx == 2 ? 0 : r.kx + 1;
    const float dz = dir[r.kz];
    if (dz < 0.0f) {  // keep the winding
        const int k = r.kx;
        r.kx = r.ky;
        r.ky = k;
    }
    r.sx = dir[r.kx] / dz;
    r.sy = dir[r.ky] / dz;
    r.sz = 1.0f / dz;
    return r;
}

// Whether the ray hits the triangle of the points a, b, c (3 floats each); t,
// the weights u, v of a and b, and the side (det > 0: front) when it does.
SIM_FUNC bool watertight_hit(const WatertightRay& r, const float* a, const float* b,
                             const float* c, float& t, float& u, float& v, float& det) {
    const int kx = r.kx, ky = r.ky, kz = r.kz;
    const float az = a[kz] - r.start[kz], bz = b[kz] - r.start[kz], cz = c[kz] - r.start[kz];
    const float Ax = (a[kx] - r.start[kx]) - r.sx * az, Ay = (a[ky] - r.start[ky]) - r.sy * az;
    const float Bx = (b[kx] - r.start[kx]) - r.sx * bz, By = (b[ky] - r.start[ky]) - r.sy * bz;
    const float Cx = (c[kx] - r.start[kx]) - r.sx * cz, Cy = (c[ky] - r.start[ky]) - r.sy * cz;
    float U = diff_product(Cx, By, Cy, Bx);
    float V = diff_product(Ax, Cy, Ay, Cx);
    float W = diff_product(Bx, Ay, By, Ax);
    if (U == 0.0f || V == 0.0f || W == 0.0f) {  // on an edge: decide in double precision
        U = (float)((double)Cx * (double)By - (double)Cy * (double)Bx);
        V = (float)((double)Ax * (double)Cy - (double)Ay * (double)Cx);
        W = (float)((double)Bx * (double)Ay - (double)By * (double)Ax);
    }
    // (| and & rather than || and &&: one branch, not up to six that mispredict)
    if (((U < 0.0f) | (V < 0.0f) | (W < 0.0f)) & ((U > 0.0f) | (V > 0.0f) | (W > 0.0f))) {
        return false;
    }
    det = U + V + W;
    if (det == 0.0f) return false;
    // (Warp's roundings: each z scaled first)
    const float T = U * (r.sz * az) + V * (r.sz * bz) + W * (r.sz * cz);
    const float inv_det = 1.0f / det;
    t = T * inv_det;
    u = U * inv_det;
    v = V * inv_det;
    return true;
}

// A ray set up for the mesh's traversals: its start, the ray_reciprocal of its
// direction and the watertight triangle test's shear; false (nothing to hit) for
// an empty mesh, a non-finite start or direction, or a zero direction.
struct MeshRay {
    float start[3];
    float inv_dir[3];
    WatertightRay ray;
};

SIM_FUNC bool mesh_ray(const Mesh* mesh, vec3f start, vec3f dir, MeshRay& r) {
    if (mesh == nullptr || mesh->num_tris <= 0 || mesh->bvh.nodes == nullptr) return false;
    const bool finite = is_finite_f(start.x) && is_finite_f(start.y) && is_finite_f(start.z) &&
                        is_finite_f(dir.x) && is_finite_f(dir.y) && is_finite_f(dir.z);
    if (!finite || (dir.x == 0.0f && dir.y == 0.0f && dir.z == 0.0f)) return false;
    const float d[3] = {dir.x, dir.y, dir.z};
    r.start[0] = start.x;
    r.start[1] = start.y;
    r.start[2] = start.z;
    for (int k = 0; k < 3; ++k) r.inv_dir[k] = ray_reciprocal(d[k]);
    r.ray = watertight_ray(r.start, d);
    return true;
}

// The closest hit of the ray start + t * dir with 0 <= t < max_t: its t,
// face, barycentric u, v, sign and unit face normal; from BVH node `root`
// (a group's root, mesh_get_group_root) when root >= 0.
SIM_FUNC bool mesh_query_ray(const Mesh* mesh_ptr, vec3f start, vec3f dir, float max_t,
                             MeshHit& hit, int32 root) {
    hit.face = -1;
    hit.t = hit.u = hit.v = 0.0f;
    hit.sign = 0.0f;
    hit.normal[0] = hit.normal[1] = hit.normal[2] = 0.0f;
    MeshRay r;
    if (!mesh_ray(mesh_ptr, start, dir, r) || is_nan_f(max_t)) return false;
    const Mesh& mesh = *mesh_ptr;
    const float* s = r.start;
    const float* inv = r.inv_dir;
    const WatertightRay& ray = r.ray;
    float best_t = max_t;
    int32 best = -1;  // BVH position of the closest hit
    float best_u = 0.0f, best_v = 0.0f, best_det = 0.0f;
    const auto ray_entry = [&](const BvhNode& node, float& key) {
        return ray_box(s, inv, node.lower, node.upper, key);
    };
    visit_nearest_first(mesh.bvh, best_t, ray_entry, [&](const BvhNode& leaf) {
        for (int32 i = bvh_leaf_begin(leaf); i < leaf.right; ++i) {
            const float* corners = mesh.leaf_points + 9 * (int64)i;
            float t, u, v, det;
            if (watertight_hit(ray, corners, corners + 3, corners + 6, t, u, v, det) &&
                ((t >= 0.0f) & (t < best_t))) {
                best_t = t;
                best = i;
                best_u = u;
                best_v = v;
                best_det = det;
            }
        }
    }, root);
    if (best < 0) return false;
    const float* corners = mesh.leaf_points + 9 * (int64)best;
    const vec3f a = load_vec3f(corners), b = load_vec3f(corners + 3), c = load_vec3f(corners + 6);
    store_vec3f(hit.normal, warp_normalize(cross(sub(b, a), sub(c, a))));
    hit.t = best_t;
    hit.u = best_u;
    hit.v = best_v;
    hit.sign = best_det > 0.0f ? 1.0f : -1.0f;
    hit.face = mesh.bvh.primitive_indices[best];
    return true;
}

// Whether the ray start + t * dir meets the mesh at some 0 <= t < max_t (Warp's
// mesh_query_ray_anyhit): the traversal stops at the first hit it finds.
SIM_FUNC bool mesh_query_ray_anyhit(const Mesh* mesh_ptr, vec3f start, vec3f dir, float max_t,
                                    int32 root = -1) {
    MeshRay r;
    if (!mesh_ray(mesh_ptr, start, dir, r) || !(max_t > 0.0f)) return false;
    const Mesh& mesh = *mesh_ptr;
    const float* s = r.start;
    const float* inv = r.inv_dir;
    const WatertightRay& ray = r.ray;
    float bound = max_t;  // -inf once a hit is found: every pending node is then skipped
    const auto ray_entry = [&](const BvhNode& node, float& key) {
        return ray_box(s, inv, node.lower, node.upper, key);
    };
    visit_nearest_first(mesh.bvh, bound, ray_entry, [&](const BvhNode& leaf) {
        for (int32 i = bvh_leaf_begin(leaf); i < leaf.right; ++i) {
            const float* corners = mesh.leaf_points + 9 * (int64)i;
            float t, u, v, det;
            if (watertight_hit(ray, corners, corners + 3, corners + 6, t, u, v, det) &&
                ((t >= 0.0f) & (t < max_t))) {
                bound = -inf_f();
                return;
            }
        }
    }, root);
    return bound < 0.0f;
}

// The number of the mesh's triangles that the ray start + t * dir (t >= 0) meets
// (Warp's mesh_query_ray_count_intersections). The triangle test is watertight:
// a ray through a shared edge or vertex meets one triangle there, so the
// count's parity tells inside from outside for a closed mesh.
SIM_FUNC int32 mesh_query_ray_count_intersections(const Mesh* mesh_ptr, vec3f start, vec3f dir,
                                                  int32 root = -1) {
    MeshRay r;
    if (!mesh_ray(mesh_ptr, start, dir, r)) return 0;
    const Mesh& mesh = *mesh_ptr;
    const float* s = r.start;
    const float* inv = r.inv_dir;
    const WatertightRay& ray = r.ray;
    const float everywhere = inf_f();
    int32 count = 0;
    const auto ray_entry = [&](const BvhNode& node, float& key) {
        const bool hit = ray_box(s, inv, node.lower, node.upper, key);
        key = -1.0f;  // every box the ray meets is visited (below +inf)
        return hit;
    };
    visit_nearest_first(mesh.bvh, everywhere, ray_entry, [&](const BvhNode& leaf) {
        for (int32 i = bvh_leaf_begin(leaf); i < leaf.right; ++i) {
            const float* corners = mesh.leaf_points + 9 * (int64)i;
            float t, u, v, det;
            count += int32(watertight_hit(ray, corners, corners + 3, corners + 6, t, u, v, det) &&
                           t >= 0.0f);
        }
    }, root);
    return count;
}

// Warp's random numbers (rand.h), for its parity sign's ray directions.
SIM_FUNC uint32 warp_rand_pcg(uint32 state) {
    const uint32 b = state * 747796405u + 2891336453u;
    const uint32 c = ((b >> ((b >> 28u) + 4u)) ^ b) * 277803737u;
    return (c >> 22u) ^ c;
}

SIM_FUNC float warp_randf(uint32& state, float low, float high) {
    state = warp_rand_pcg(state);
    return (high - low) * (float(state >> 8) * (1.0f / 16777216.0f)) + low;
}

// The closest point (as mesh_query_point_no_sign), signed by ray parity (Warp's
// mesh_query_point_sign_parity): n_sample rays along (1, 1, 1) perturbed by up to
// perturbation_scale in each component (Warp's fixed seed, 42; the components
// drawn x, y, z in turn) each vote inside when they cross the mesh an odd number
// of times; -1 (inside) when at least half vote so.
SIM_FUNC bool mesh_query_point_sign_parity(const Mesh* mesh_ptr, vec3f p, float max_dist,
                                           int32 n_sample, float perturbation_scale,
                                           MeshHit& hit) {
    if (!mesh_query_point_no_sign(mesh_ptr, p, max_dist, hit)) return false;
    uint32 state = warp_rand_pcg(42u);
    int32 votes = 0;
    for (int32 i = 0; i < n_sample; ++i) {
        vec3f dir;
        do {
            const float x = warp_randf(state, -perturbation_scale, perturbation_scale);
            const float y = warp_randf(state, -perturbation_scale, perturbation_scale);
            const float z = warp_randf(state, -perturbation_scale, perturbation_scale);
            dir = make_vec3f(1.0f + x, 1.0f + y, 1.0f + z);
        } while (dot(dir, dir) < 1e-8f);
        votes += mesh_query_ray_count_intersections(mesh_ptr, p, dir) % 2;
    }
    hit.sign = 2 * votes >= n_sample ? -1.0f : 1.0f;
    return true;
}

// The point of face f with barycentric weights u, v (and 1 - u - v); the
// origin for a face outside the mesh.
SIM_FUNC vec3f mesh_eval_position(const Mesh* mesh, int32 f, float u, float v) {
    if (mesh == nullptr || f < 0 || f >= mesh->num_tris) return make_vec3f(0.0f, 0.0f, 0.0f);
    vec3f a, b, c;
    mesh_face(*mesh, f, a, b, c);
    return add(add(mul(a, u), mul(b, v)), mul(c, 1.0f - u - v));
}

// The velocity u * v0 + v * v1 + (1 - u - v) * v2 of face f's vertices
// (Warp's mesh_eval_velocity); zeros for a face outside the mesh or a mesh
// without velocities.
SIM_FUNC vec3f mesh_eval_velocity(const Mesh* mesh, int32 f, float u, float v) {
    if (mesh == nullptr || mesh->velocities == nullptr || f < 0 || f >= mesh->num_tris) {
        return make_vec3f(0.0f, 0.0f, 0.0f);
    }
    const int32* corners = mesh->indices + 3 * (int64)f;
    const vec3f a = load_vec3f(mesh->velocities + 3 * (int64)corners[0]);
    const vec3f b = load_vec3f(mesh->velocities + 3 * (int64)corners[1]);
    const vec3f c = load_vec3f(mesh->velocities + 3 * (int64)corners[2]);
    return add(add(mul(a, u), mul(b, v)), mul(c, 1.0f - u - v));
}

// ---------------------------------------------------------------------------
// Sphere query (Warp's mesh_query_sphere): the faces whose triangle is within
// `radius` of `center`. The tree is traversed with the sphere-box test of
// bvh.h; each candidate face is then tested exactly: the squared distance from
// the centre to its closest point (a degenerate, zero-area face as its longest
// edge, as in Warp) against radius^2.

SIM_FUNC void mesh_query_sphere_begin(BvhQuery& q, const Mesh* mesh, vec3f center, float radius,
                                      int32 root = -1) {
    bvh_query_sphere_begin(q, mesh == nullptr ? nullptr : &mesh->bvh, center, radius, root);
    q.kind = BVH_QUERY_MESH_SPHERE;
}

SIM_FUNC bool mesh_face_within(const Mesh& mesh, int32 face, vec3f center, float radius_sq) {
    vec3f a, b, c;
    mesh_face(mesh, face, a, b, c);
    const vec3f ab = sub(b, a), ac = sub(c, a);
    const vec3f n = cross(ab, ac);
    vec3f closest;
    if (dot(n, n) == 0.0f) {
        const vec3f bc = sub(c, b);
        const float lab = dot(ab, ab), lac = dot(ac, ac), lbc = dot(bc, bc);
        if (lab >= lac && lab >= lbc) {
            closest = closest_point_on_segment(a, b, center);
        } else if (lac >= lbc) {
            closest = closest_point_on_segment(a, c, center);
        } else {
            closest = closest_point_on_segment(b, c, center);
        }
    } else {
        float u, v;
        int32 feature;
        closest = closest_point_on_triangle(a, b, c, center, u, v, feature);
    }
    const vec3f d = sub(closest, center);
    return dot(d, d) <= radius_sq;
}

// The next face within the sphere, or -1 when there is none.
SIM_FUNC int32 mesh_query_sphere_next(BvhQuery& q) {
    for (;;) {
        const int32 face = bvh_query_next_item<BVH_QUERY_SPHERE>(q);
        if (face < 0) return -1;
        if (mesh_face_within(mesh_of_bvh(q.bvh), face, load_vec3f(q.a), q.b[0])) return face;
    }
}

}  // namespace sim

#endif  // SIM_MESH_H
