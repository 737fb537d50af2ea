// Host only (never compiled by NVRTC): building and refitting BVHs on the CPU
// (the layout and the shared steps are in bvh.h). numba_sim/spatial calls
// these entry points through ctypes, which releases the GIL.
//
// SAH and median are top-down builders over "primitive references" (box and
// item index, 32 bytes) that each split moves in place, so every pass reads
// memory in order:
//
// * SAH: 16 bins (fewer for ranges of fewer items) along the longest axis of
//   the box centres, as in Warp; the split of least area(left) * count(left) +
//   area(right) * count(right) wins, and one pass partitions the references,
//   collecting the children's centre bounds on the way (their boxes come from
//   the bins). When every centre coincides, the range is cut in the middle.
// * median: Warp's rule: the centres' median along the longest axis of the
//   node's box (std::nth_element), then one pass for the children's bounds.
//
// A node's two children sit side by side; the subtree of a node over m items
// owns the 2m - 2 slots after its children's (left subtree first), so any
// number of threads writes the same tree; a final pass drops the unused
// slots (leaves of several items leave some), keeping that order. The top of
// the tree is built on the calling thread until the ranges are small; then
// the threads take the remaining subtrees, largest first.
//
// LBVH runs the steps of bvh.h: centre bounds, Morton codes, a radix sort,
// Karras' inner nodes, the depth limit and leaf size, and a refit.
#include <algorithm>
#include <atomic>
#include <vector>

#include "bvh.h"
#include "host_threads.h"

// Growing boxes with SSE's minps / maxps where the target has them: the same
// results lane by lane as the scalar expressions, which GCC leaves scalar
// where a box lives in memory (bins, task bounds): 15-20% of a build.
#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#define SIM_BUILD_SSE 1
#endif

// nth_element with its comparison inlined (GCC otherwise calls it: a third of a
// median build).
#if defined(__GNUC__)
#define SIM_BUILD_FLATTEN __attribute__((flatten))
#else
#define SIM_BUILD_FLATTEN
#endif

namespace {

using sim::Bvh;
using sim::BvhNode;
using sim::int32;
using sim::int64;
using sim::uint32;

const int kBins = 16;
// Below this many items a subtree is built by one thread.
const int64 kMinParallelItems = 4096;

// Boxes and references have a fourth, unused lane, so that growing a box is
// one 4-wide min and max.
struct Box {
    float lower[4];
    float upper[4];

    void reset() {
        for (int k = 0; k < 4; ++k) {
            lower[k] = sim::inf_f();
            upper[k] = -sim::inf_f();
        }
    }
    void grow(const float* lo, const float* hi) {
#ifdef SIM_BUILD_SSE
        // minps(a, b) is a < b ? a : b and maxps(a, b) a > b ? a : b, as below
        _mm_storeu_ps(lower, _mm_min_ps(_mm_loadu_ps(lower), _mm_loadu_ps(lo)));
        _mm_storeu_ps(upper, _mm_max_ps(_mm_loadu_ps(upper), _mm_loadu_ps(hi)));
#else
        for (int k = 0; k < 4; ++k) {
            lower[k] = lower[k] < lo[k] ? lower[k] : lo[k];
            upper[k] = upper[k] > hi[k] ? upper[k] : hi[k];
        }
#endif
    }
    void grow(const Box& b) { grow(b.lower, b.upper); }
    float extent(int k) const { return upper[k] - lower[k]; }
    float area() const {
        const float x = extent(0), y = extent(1), z = extent(2);
        return x < 0.0f ? 0.0f : 2.0f * (x * y + x * z + y * z);
    }
};

// An item during a top-down build: its box (fourth lanes 0) and index.
// `centre` is lower + upper (twice the box centre: only its order matters).
struct PrimRef {
    float lower[4];
    float upper[4];
    int32 index;

    float centre(int k) const { return lower[k] + upper[k]; }
};

void grow_centre(Box& centres, const PrimRef& r) {
#ifdef SIM_BUILD_SSE
    // the centres in all four lanes at once (the fourth lanes are 0: 0 + 0)
    const __m128 c = _mm_add_ps(_mm_loadu_ps(r.lower), _mm_loadu_ps(r.upper));
    _mm_storeu_ps(centres.lower, _mm_min_ps(_mm_loadu_ps(centres.lower), c));
    _mm_storeu_ps(centres.upper, _mm_max_ps(_mm_loadu_ps(centres.upper), c));
#else
    const float c[4] = {r.centre(0), r.centre(1), r.centre(2), 0.0f};
    centres.grow(c, c);
#endif
}

template <int AXIS>
struct CentreLess {
    bool operator()(const PrimRef& a, const PrimRef& b) const {
        return a.centre(AXIS) < b.centre(AXIS);
    }
};

struct Task {
    int32 start, end, depth;
    int32 group_begin, group_end;  // grouped trees: the task's groups (indices of the sorted ids)
    bool group_root;               // ... and whether it is the root of its only group's subtree
    int32 slot;  // the node's slot
    int32 free;  // the first slot of its descendants
    Box bounds;   // of the items' boxes
    Box centres;  // of their centres
};

class TopDownBuilder {
  public:
    TopDownBuilder(PrimRef* refs, BvhNode* slots, int32* slot_depth, int constructor,
                   int32 leaf_size)
        : refs_(refs), slots_(slots), slot_depth_(slot_depth), constructor_(constructor),
          leaf_size_(leaf_size) {}

    // Grouped trees: group g's items are [group_starts[g], group_starts[g + 1]);
    // a task over several groups splits at its median group, and the slot of
    // the task over group g alone goes to group_slots[g].
    void set_groups(const int32* group_starts, int32* group_slots) {
        group_starts_ = group_starts;
        group_slots_ = group_slots;
    }

    // Builds the subtree of `task`; ranges of at most `handoff` items (and
    // leaves) are appended to `deferred` instead when it is not null.
    void build(const Task& task, int64 handoff, std::vector<Task>* deferred) {
        const int32 count = task.end - task.start;
        BvhNode& node = slots_[task.slot];
        for (int k = 0; k < 3; ++k) {
            node.lower[k] = task.bounds.lower[k];
            node.upper[k] = task.bounds.upper[k];
        }
        slot_depth_[task.slot] = task.depth;
        const bool several_groups = group_starts_ && task.group_end - task.group_begin > 1;
        if (group_starts_ && task.group_root) group_slots_[task.group_begin] = task.slot;
        if ((count <= leaf_size_ && !several_groups) || task.depth >= SIM_BVH_MAX_DEPTH) {
            sim::bvh_set_leaf(node, task.start, task.end);
            return;
        }
        Task left, right;
        if (several_groups) {  // the groups below the median id left, the others right
            const int32 group_mid = task.group_begin + (task.group_end - task.group_begin) / 2;
            split_at(task, group_starts_[group_mid], left, right);
            left.group_begin = task.group_begin;
            left.group_end = right.group_begin = group_mid;
            right.group_end = task.group_end;
            left.group_root = left.group_end - left.group_begin == 1;
            right.group_root = right.group_end - right.group_begin == 1;
        } else {
            split(task, left, right);
            left.group_begin = right.group_begin = task.group_begin;
            left.group_end = right.group_end = task.group_end;
            left.group_root = right.group_root = false;
        }
        left.depth = right.depth = task.depth + 1;
        // the children side by side (one cache line), then the left child's
        // 2 m - 2 descendant slots, then the right child's
        left.slot = task.free;
        right.slot = task.free + 1;
        left.free = task.free + 2;
        right.free = task.free + 2 * (left.end - left.start);
        node.left = left.slot;
        node.right = right.slot;
        for (const Task* child : {&left, &right}) {
            if (deferred != nullptr && child->end - child->start <= handoff) {
                deferred->push_back(*child);
            } else {
                build(*child, handoff, deferred);
            }
        }
    }

  private:
    void bounds_of(int32 start, int32 end, Box& bounds, Box& centres) const {
        bounds.reset();
        centres.reset();
        for (int32 i = start; i < end; ++i) {
            bounds.grow(refs_[i].lower, refs_[i].upper);
            grow_centre(centres, refs_[i]);
        }
    }

    void split_at(const Task& task, int32 mid, Task& left, Task& right) const {
        left.start = task.start;
        left.end = right.start = mid;
        right.end = task.end;
        bounds_of(left.start, left.end, left.bounds, left.centres);
        bounds_of(right.start, right.end, right.bounds, right.centres);
    }

    void split(const Task& task, Task& left, Task& right) {
        const int32 mid = task.start + (task.end - task.start) / 2;
        if (constructor_ == sim::BVH_MEDIAN) {
            int axis = 0;
            for (int k = 1; k < 3; ++k) {
                if (task.bounds.extent(k) > task.bounds.extent(axis)) axis = k;
            }
            // one instantiation per axis: the comparison is a fixed-offset load
            // and add per side, inlined
            if (axis == 0) select_median<0>(task, mid);
            if (axis == 1) select_median<1>(task, mid);
            if (axis == 2) select_median<2>(task, mid);
            split_at(task, mid, left, right);
        } else if (!sah_split(task, left, right)) {
            split_at(task, mid, left, right);  // all centres coincide
        }
    }

    template <int AXIS>
    SIM_BUILD_FLATTEN void select_median(const Task& task, int32 mid) {
        std::nth_element(refs_ + task.start, refs_ + mid, refs_ + task.end, CentreLess<AXIS>());
    }

    // Binned SAH along the longest axis of the centres (as Warp); false when
    // the centres coincide. Ranges of fewer than 16 items get a bin per item.
    bool sah_split(const Task& task, Task& left, Task& right) {
        const int count = task.end - task.start;
        const int num_bins = count < kBins ? count : kBins;
        int axis = 0;
        for (int k = 1; k < 3; ++k) {
            if (task.centres.extent(k) > task.centres.extent(axis)) axis = k;
        }
        const float extent = task.centres.extent(axis);
        if (!(extent > 0.0f)) return false;
        const float origin = task.centres.lower[axis];
        const float scale = num_bins / extent;
        auto bin_of = [&](const PrimRef& r) {
            const int b = int((r.centre(axis) - origin) * scale);
            return b < 0 ? 0 : (b >= num_bins ? num_bins - 1 : b);
        };

        Box bins[kBins];
        int32 counts[kBins] = {};
        for (int b = 0; b < num_bins; ++b) bins[b].reset();
        for (int32 i = task.start; i < task.end; ++i) {
            const int b = bin_of(refs_[i]);
            bins[b].grow(refs_[i].lower, refs_[i].upper);
            ++counts[b];
        }

        // sweep from the right (areas and counts of bins b and up), then from
        // the left, costing each split as it goes
        float right_areas[kBins];
        int32 right_counts[kBins];
        Box acc;
        acc.reset();
        int32 n = 0;
        for (int b = num_bins - 1; b > 0; --b) {
            acc.grow(bins[b]);
            n += counts[b];
            right_areas[b] = acc.area();
            right_counts[b] = n;
        }
        float best_cost = sim::inf_f();
        int best_bin = -1;
        acc.reset();
        n = 0;
        for (int b = 0; b < num_bins - 1; ++b) {
            acc.grow(bins[b]);
            n += counts[b];
            if (n == 0 || right_counts[b + 1] == 0) continue;
            const float cost = acc.area() * n + right_areas[b + 1] * right_counts[b + 1];
            if (cost < best_cost) {
                best_cost = cost;
                best_bin = b;
            }
        }
        if (best_bin < 0) return false;

        // partition: bins <= best_bin go left
        left.centres.reset();
        right.centres.reset();
        int32 i = task.start, j = task.end;
        for (;;) {
            while (i < j && bin_of(refs_[i]) <= best_bin) grow_centre(left.centres, refs_[i++]);
            while (i < j && bin_of(refs_[j - 1]) > best_bin) grow_centre(right.centres, refs_[--j]);
            if (i >= j) break;
            std::swap(refs_[i], refs_[j - 1]);
            grow_centre(left.centres, refs_[i++]);
            grow_centre(right.centres, refs_[--j]);
        }
        left.start = task.start;
        left.end = right.start = i;
        right.end = task.end;
        left.bounds.reset();
        right.bounds.reset();
        for (int b = 0; b < num_bins; ++b) (b <= best_bin ? left : right).bounds.grow(bins[b]);
        return true;
    }


    PrimRef* refs_;
    BvhNode* slots_;
    int32* slot_depth_;
    int constructor_;
    int32 leaf_size_;
    const int32* group_starts_ = nullptr;
    int32* group_slots_ = nullptr;
};

// Fills refit_order (reachable nodes by depth, deepest first) and
// level_offsets from the depth of each node (-1: unreachable), and the
// descriptor's counts.
void order_levels(Bvh& bvh, const int32* depths, int32 num_slots) {
    int32 counts[SIM_BVH_LEVELS] = {};
    bvh.num_leaves = 0;
    bvh.max_depth = 0;
    for (int32 s = 0; s < num_slots; ++s) {
        if (depths[s] < 0) continue;
        ++counts[sim::bvh_level_group(depths[s])];
        bvh.max_depth = std::max(bvh.max_depth, depths[s]);
        if (sim::bvh_is_leaf(bvh.nodes[s])) ++bvh.num_leaves;
    }
    bvh.level_offsets[0] = 0;
    for (int k = 0; k < SIM_BVH_LEVELS; ++k) {
        bvh.level_offsets[k + 1] = bvh.level_offsets[k] + counts[k];
    }
    bvh.num_nodes = bvh.level_offsets[SIM_BVH_LEVELS];
    int32 cursor[SIM_BVH_LEVELS];
    for (int k = 0; k < SIM_BVH_LEVELS; ++k) cursor[k] = bvh.level_offsets[k];
    for (int32 s = 0; s < num_slots; ++s) {
        if (depths[s] >= 0) bvh.refit_order[cursor[sim::bvh_level_group(depths[s])]++] = s;
    }
}

// With `groups` (one id per item), the items sorted by group id (stably)
// into `order`, the distinct ids into group_ids and where each group's items
// start into group_starts (num_groups + 1 entries).
void sort_by_group(const int32* groups, int32 n, std::vector<int32>& order,
                   int32* group_ids, std::vector<int32>& group_starts) {
    order.resize(n);
    for (int32 i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [groups](int32 a, int32 b) { return groups[a] < groups[b]; });
    group_starts.clear();
    for (int32 i = 0; i < n; ++i) {
        if (i == 0 || groups[order[i]] != groups[order[i - 1]]) {
            group_ids[group_starts.size()] = groups[order[i]];
            group_starts.push_back(i);
        }
    }
    group_starts.push_back(n);
}

void build_top_down(Bvh& bvh, int constructor, int max_threads, const int32* groups,
                    int32* group_ids, int32* group_roots) {
    const int32 n = bvh.num_items;
    const int32 num_slots = 2 * n - 1;
    std::vector<PrimRef> refs(n);
    std::vector<int32> order, group_starts, group_slots;
    if (groups != nullptr) {
        sort_by_group(groups, n, order, group_ids, group_starts);
        group_slots.assign(group_starts.size() - 1, -1);
    }
    Task root;
    root.start = 0;
    root.end = n;
    root.depth = 0;
    root.slot = 0;
    root.free = 1;
    root.group_begin = 0;
    root.group_end = groups != nullptr ? int32(group_starts.size()) - 1 : 0;
    root.group_root = root.group_end == 1;
    root.bounds.reset();
    root.centres.reset();
    for (int32 i = 0; i < n; ++i) {
        PrimRef& r = refs[i];
        const int32 item = groups != nullptr ? order[i] : i;
        for (int k = 0; k < 3; ++k) {
            r.lower[k] = bvh.item_lowers[3 * (int64)item + k];
            r.upper[k] = bvh.item_uppers[3 * (int64)item + k];
        }
        r.lower[3] = r.upper[3] = 0.0f;
        r.index = item;
        root.bounds.grow(r.lower, r.upper);
        grow_centre(root.centres, r);
    }

    // The builder's slot s is bvh.nodes[s + 1] (the caller's array has 2 n nodes),
    // compacted in place below.
    BvhNode* slots = bvh.nodes + 1;
    std::vector<int32> slot_depth(num_slots, -1);
    TopDownBuilder builder(refs.data(), slots, slot_depth.data(), constructor,
                           bvh.leaf_size);
    if (groups != nullptr) builder.set_groups(group_starts.data(), group_slots.data());
    const int threads = sim::chunk_count(n, max_threads, kMinParallelItems);
    if (threads <= 1) {
        builder.build(root, 0, nullptr);
    } else {
        std::vector<Task> tasks;
        builder.build(root, std::max<int64>(n / (4 * threads), kMinParallelItems / 4), &tasks);
        std::sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) {
            return a.end - a.start > b.end - b.start;
        });
        std::atomic<size_t> next(0);
        sim::parallel_chunks(threads, threads, 1, [&](int64, int64) {
            for (size_t t = next++; t < tasks.size(); t = next++) {
                builder.build(tasks[t], 0, nullptr);
            }
        });
    }

    // drop the unused slots, in place (slot s moves down to new_index[s] <= s + 1,
    // after every earlier one): the others keep their (depth-first) order, from
    // slot 1 on. Every subtree drops an even number of slots, so each pair of
    // children keeps starting at an even slot: 64 bytes, one cache line of the
    // caller's (64-byte aligned) node array. Slot 0 is an unreachable filler.
    std::vector<int32> new_index(num_slots);
    int32 used = 1;
    for (int32 s = 0; s < num_slots; ++s) new_index[s] = slot_depth[s] >= 0 ? used++ : -1;
    std::vector<int32> depths(used);
    depths[0] = -1;
    sim::bvh_set_leaf(bvh.nodes[0], 0, 0);
    for (int k = 0; k < 3; ++k) bvh.nodes[0].lower[k] = bvh.nodes[0].upper[k] = 0.0f;
    for (int32 s = 0; s < num_slots; ++s) {
        if (slot_depth[s] < 0) continue;
        BvhNode node = slots[s];
        if (!sim::bvh_is_leaf(node)) {
            node.left = new_index[node.left];
            node.right = new_index[node.right];
        }
        bvh.nodes[new_index[s]] = node;
        depths[new_index[s]] = slot_depth[s];
    }
    for (int32 i = 0; i < n; ++i) bvh.primitive_indices[i] = refs[i].index;
    bvh.root = 1;
    order_levels(bvh, depths.data(), used);
    if (groups != nullptr) {
        bvh.num_groups = int32(group_slots.size());
        for (int32 g = 0; g < bvh.num_groups; ++g) {
            group_roots[g] = group_slots[g] >= 0 ? new_index[group_slots[g]] : -1;
        }
        bvh.group_ids = group_ids;
        bvh.group_roots = group_roots;
    }
}

// Stable LSD radix sort of (code, index) pairs by code (30-bit codes).
void sort_codes(std::vector<int32>& codes, std::vector<int32>& indices) {
    const int32 n = int32(codes.size());
    std::vector<int32> codes_tmp(n), indices_tmp(n);
    const int bits = 10;
    std::vector<int32> counts(1 << bits);
    for (int shift = 0; shift < 30; shift += bits) {
        std::fill(counts.begin(), counts.end(), 0);
        for (int32 i = 0; i < n; ++i) ++counts[(uint32(codes[i]) >> shift) & ((1u << bits) - 1)];
        int32 sum = 0;
        for (int32& c : counts) {
            const int32 count = c;
            c = sum;
            sum += count;
        }
        for (int32 i = 0; i < n; ++i) {
            const int32 position = counts[(uint32(codes[i]) >> shift) & ((1u << bits) - 1)]++;
            codes_tmp[position] = codes[i];
            indices_tmp[position] = indices[i];
        }
        codes.swap(codes_tmp);
        indices.swap(indices_tmp);
    }
}

void build_lbvh(Bvh& bvh, int max_threads) {
    const int32 n = bvh.num_items;
    const int32 num_slots = 2 * n - 1;
    const float* lowers = bvh.item_lowers;
    const float* uppers = bvh.item_uppers;
    float origin[3], inv_extent[3];
    {
        Box centres;
        centres.reset();
        for (int64 j = 0; j < n; ++j) {
            float c[4] = {};
            for (int k = 0; k < 3; ++k) c[k] = 0.5f * (lowers[3 * j + k] + uppers[3 * j + k]);
            centres.grow(c, c);
        }
        for (int k = 0; k < 3; ++k) {
            origin[k] = centres.lower[k];
            const float extent = centres.extent(k);
            inv_extent[k] = extent > 0.0f ? 1.0f / extent : 0.0f;
        }
    }
    std::vector<int32> codes(n), indices(n);
    sim::parallel_chunks(n, max_threads, kMinParallelItems, [&](int64 begin, int64 end) {
        for (int64 i = begin; i < end; ++i) {
            codes[i] = sim::bvh_morton_code(lowers, uppers, int32(i), origin, inv_extent);
            indices[i] = int32(i);
        }
    });
    sort_codes(codes, indices);
    std::copy(indices.begin(), indices.end(), bvh.primitive_indices);

    std::vector<int32> parents(num_slots), ranges(2 * std::max(n - 1, 1)), depths(num_slots);
    sim::parallel_chunks(n, max_threads, kMinParallelItems, [&](int64 begin, int64 end) {
        for (int64 i = begin; i < end; ++i) {
            sim::lbvh_build_node(codes.data(), n, int32(i), bvh.nodes, parents.data(),
                                 ranges.data());
        }
    });
    sim::parallel_chunks(num_slots, max_threads, kMinParallelItems, [&](int64 begin, int64 end) {
        for (int64 s = begin; s < end; ++s) {
            depths[s] = sim::lbvh_finish_node(bvh.nodes, parents.data(), ranges.data(), n,
                                              bvh.leaf_size, int32(s));
        }
    });
    bvh.root = 0;
    order_levels(bvh, depths.data(), num_slots);
    for (int32 i = 0; i < bvh.num_nodes; ++i) sim::bvh_refit_node(bvh, bvh.refit_order[i]);
}

}  // namespace

// Builds the tree of items [0, n) (boxes lowers / uppers, 3 floats each,
// finite and lower <= upper, as numba_sim checks) with `constructor`
// (BvhConstructor) and at most leaf_size items per leaf (but any number at the
// depth limit), on up to max_threads threads, into the caller's buffers:
// nodes (2n slots of 32 bytes, best 64-byte aligned), primitive_indices (n),
// refit_order (2n), level_offsets (SIM_BVH_LEVELS + 1); and fills the
// descriptor at `bvh`. n == 0 makes an empty tree (queries yield nothing).
//
// Grouped trees: `groups` (one id per item, or null) and, for them, group_ids
// and group_roots (n entries each: the distinct ids ascending, and their
// subtrees' roots), with the SAH or median constructor only.
SIM_EXPORT void sim_bvh_build_host(void* bvh_ptr, const float* lowers, const float* uppers, int n,
                                   int constructor, int leaf_size, void* nodes,
                                   int* primitive_indices, int* refit_order, int* level_offsets,
                                   int max_threads, const int* groups, int* group_ids,
                                   int* group_roots) {
    Bvh& bvh = *static_cast<Bvh*>(bvh_ptr);
    bvh.nodes = n > 0 ? static_cast<BvhNode*>(nodes) : nullptr;
    bvh.primitive_indices = primitive_indices;
    bvh.refit_order = refit_order;
    bvh.level_offsets = level_offsets;
    bvh.item_lowers = lowers;
    bvh.item_uppers = uppers;
    bvh.num_items = n;
    bvh.leaf_size = leaf_size < 1 ? 1 : leaf_size;
    bvh.constructor = constructor;
    bvh.num_groups = 0;
    bvh.group_ids = bvh.group_roots = nullptr;
    bvh.root = 0;
    bvh.num_nodes = bvh.num_leaves = bvh.max_depth = 0;
    for (int k = 0; k <= SIM_BVH_LEVELS; ++k) level_offsets[k] = 0;
    if (n <= 0) return;
    if (constructor == sim::BVH_LBVH) {
        build_lbvh(bvh, max_threads);
    } else {
        build_top_down(bvh, constructor, max_threads, groups, group_ids, group_roots);
    }
}

// Recomputes every node's box from the items' boxes (refit_order, one thread).
SIM_EXPORT void sim_bvh_refit_host(void* bvh_ptr) {
    const Bvh& bvh = *static_cast<const Bvh*>(bvh_ptr);
    for (int32 i = 0; i < bvh.num_nodes; ++i) sim::bvh_refit_node(bvh, bvh.refit_order[i]);
}

// Statistics of the tree at `root` of `nodes` (any device's nodes, copied to
// the host): out = {depth, nodes, leaves, SAH cost}. The SAH cost is the sum
// over inner nodes of area / root area plus the sum over leaves of area /
// root area times their item count (all areas count as equal when the root's
// is zero).
SIM_EXPORT void sim_bvh_stats(const void* nodes_ptr, int root, int num_items, double* out) {
    out[0] = out[1] = out[2] = out[3] = 0.0;
    if (num_items <= 0) return;
    const BvhNode* nodes = static_cast<const BvhNode*>(nodes_ptr);
    auto area = [](const BvhNode& node) {
        const double x = node.upper[0] - node.lower[0];
        const double y = node.upper[1] - node.lower[1];
        const double z = node.upper[2] - node.lower[2];
        return 2.0 * (x * y + x * z + y * z);
    };
    const double root_area = area(nodes[root]);
    std::vector<std::pair<int32, int32>> stack = {{root, 0}};
    while (!stack.empty()) {
        const auto [index, depth] = stack.back();
        stack.pop_back();
        const BvhNode& node = nodes[index];
        const double weight = root_area > 0.0 ? area(node) / root_area : 1.0;
        out[0] = std::max(out[0], double(depth));
        out[1] += 1.0;
        if (sim::bvh_is_leaf(node)) {
            out[2] += 1.0;
            out[3] += weight * (node.right - sim::bvh_leaf_begin(node));
        } else {
            out[3] += weight;
            stack.push_back({node.right, depth + 1});
            stack.push_back({node.left, depth + 1});
        }
    }
}
