// Host only (never compiled by NVRTC): the CPU build of a hash grid, on a team
// of std::threads. numba_sim/spatial/hash_grid.py (a CPU grid's storage) calls
// it through ctypes, which releases the GIL, so grids built from several
// Python threads build at the same time. (The CUDA build is numba_sim/spatial/hash_grid_build_cuda.py;
// both take the cell of a point from hashgrid.h.)
//
// A sort by cell in two steps, each moving every point once:
//
// 1. the cell of every point (hash_grid_cell) and a stable scatter by the
//    cell's high bits into buckets of 2^low_bits consecutive cells (at most
//    2^11 buckets, so each thread's counters and write streams stay in the
//    L1 cache): each chunk of points counts its buckets, a scan over
//    (bucket, chunk) gives every chunk where its run of each bucket starts,
//    and each chunk scatters its points there in index order;
// 2. each bucket (a few hundred points of a big grid, in the L1 cache) is
//    counting-sorted by the cell's low bits into its final place, in index
//    order, in its own stretch of cell_offsets: the counts of its cells, an
//    inclusive scan (SIMD: every cell of the grid passes through it, and in a
//    sparse grid the cells outnumber the points) makes them the ends of the
//    cells' runs, and a scatter from the last point to the first, decrementing,
//    leaves the starts (cell_offsets[num_cells] = n).
//
// The sort is stable, so the points of a cell stay in index order whatever the
// thread count (as Warp's radix sort). Step 1 splits the points into one chunk
// per thread, step 2 the buckets (host_threads.h).
#include <algorithm>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "hashgrid.h"
#include "host_threads.h"

namespace {

using sim::int32;
using sim::int64;

// Fewer points per thread than this are not worth a thread (and buckets: the
// same number of cells).
const int64 kMinPointsPerThread = 32768;
const int kMaxBucketBits = 11;

int bits_for(int64 count) {
    int bits = 0;
    while (bits < 31 && (int64(1) << bits) < count) ++bits;
    return bits;
}

// values[i] += offset + values[0] + ... + values[i - 1], in place (an inclusive scan).
void inclusive_scan(int32* values, int64 count, int32 offset) {
    int64 i = 0;
#if defined(__SSE2__)
    __m128i carry = _mm_set1_epi32(offset);
    for (; i + 4 <= count; i += 4) {
        __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(values + i));
        x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
        x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
        x = _mm_add_epi32(x, carry);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(values + i), x);
        carry = _mm_shuffle_epi32(x, _MM_SHUFFLE(3, 3, 3, 3));
    }
    offset = _mm_cvtsi128_si32(carry);
#endif
    for (; i < count; ++i) {
        offset += values[i];
        values[i] = offset;
    }
}

}  // namespace

// Builds the grid whose descriptor is at `grid` from points[0 .. num_points)
// (3 floats each) with cells of edge cell_width, on at most max_threads
// threads. keys and values are 2 x capacity int32 (capacity >= num_points):
// row 0 of keys holds each point's cell at first, row 1 of both the bucketed
// points, and row 0 of both ends up with the cells and point indices in cell
// order. cell_offsets has dim_x * dim_y * dim_z + 1 entries. Returns the row
// (0) of `values` that holds the cell-sorted point indices, or -1 when out of
// memory (the grid is then left empty).
SIM_EXPORT int sim_hash_grid_build_host(void* grid, const float* points, int num_points,
                                        int dim_x, int dim_y, int dim_z, float cell_width,
                                        int* keys, int* values, int capacity,
                                        int* cell_offsets, int max_threads) {
    const int row = 0;
    sim::HashGrid& descriptor = *static_cast<sim::HashGrid*>(grid);
    const int64 n = num_points;
    const int64 num_cells = int64(dim_x) * dim_y * dim_z;
    const int cell_bits = bits_for(num_cells);
    const int bucket_bits = std::min(kMaxBucketBits, cell_bits / 2);
    const int low_bits = cell_bits - bucket_bits;
    const int64 buckets = int64(1) << bucket_bits;
    int32* cells = keys;                    // step 1 in; step 2 out (sorted cells)
    int32* bucketed_cells = keys + capacity;
    int32* bucketed_ids = values + capacity;
    int32* point_ids = values;

    const int chunks = sim::chunk_count(n, max_threads, kMinPointsPerThread);
    const int64 chunk_size = (n + chunks - 1) / chunks;
    std::vector<int64> starts;  // chunks x buckets: where each chunk's run of a bucket goes
    try {
        starts.assign(size_t(chunks) << bucket_bits, 0);
    } catch (...) {
        sim::hash_grid_set(descriptor, dim_x, dim_y, dim_z, 0, cell_width, nullptr, nullptr);
        return -1;
    }
    sim::hash_grid_set(descriptor, dim_x, dim_y, dim_z, num_points, cell_width, point_ids,
                       cell_offsets);
    const sim::HashGrid g = descriptor;

    sim::parallel_chunks(n, max_threads, kMinPointsPerThread, [&](int64 begin, int64 end) {
        int64* counts = &starts[size_t(begin / chunk_size) << bucket_bits];
        for (int64 i = begin; i < end; ++i) {
            const int32 cell = sim::hash_grid_cell(g, sim::load_vec3f(points + 3 * i));
            cells[i] = cell;
            ++counts[cell >> low_bits];
        }
    });
    int64 position = 0;
    for (int64 b = 0; b < buckets; ++b) {
        for (int c = 0; c < chunks; ++c) {
            int64& entry = starts[(size_t(c) << bucket_bits) + size_t(b)];
            const int64 count = entry;
            entry = position;
            position += count;
        }
    }
    sim::parallel_chunks(n, max_threads, kMinPointsPerThread, [&](int64 begin, int64 end) {
        int64* next = &starts[size_t(begin / chunk_size) << bucket_bits];
        for (int64 i = begin; i < end; ++i) {
            const int32 cell = cells[i];
            const int64 at = next[cell >> low_bits]++;
            bucketed_cells[at] = cell;
            bucketed_ids[at] = int32(i);
        }
    });
    // After the scatter, the last chunk's entry for bucket b is where bucket b ends
    // (the scan ran bucket by bucket, chunk by chunk).
    const int64 last = int64(chunks - 1) << bucket_bits;
    auto bucket_end = [&](int64 b) { return starts[size_t(last + b)]; };
    auto bucket_begin = [&](int64 b) { return b == 0 ? int64(0) : bucket_end(b - 1); };

    const int64 min_buckets = std::max<int64>(1, kMinPointsPerThread >> low_bits);
    sim::parallel_chunks(buckets, max_threads, min_buckets, [&](int64 first, int64 stop) {
        for (int64 b = first; b < stop; ++b) {
            const int64 begin = bucket_begin(b);
            const int64 end = bucket_end(b);
            const int64 first_cell = b << low_bits;
            if (first_cell >= num_cells) break;  // the buckets past the last cell are empty
            const int64 bucket_cells = std::min(num_cells, (b + 1) << low_bits) - first_cell;
            int32* offsets = cell_offsets + first_cell;  // counts, then ends, then starts
            std::fill(offsets, offsets + bucket_cells, 0);
            for (int64 k = begin; k < end; ++k) ++offsets[bucketed_cells[k] - first_cell];
            inclusive_scan(offsets, bucket_cells, int32(begin));
            for (int64 k = end; k-- > begin;) {  // backwards: stable
                const int32 cell = bucketed_cells[k];
                const int32 to = --offsets[cell - first_cell];
                cells[to] = cell;
                point_ids[to] = bucketed_ids[k];
            }
        }
    });
    cell_offsets[num_cells] = int32(n);
    return row;
}

// Makes the grid at `grid`, just built by sim_hash_grid_build_host, grouped:
// groups[i] (group_stride bytes apart) is the group of point i; sorted_cells and
// point_ids are the build's sorted rows of keys and values. Each cell's run of
// point_ids is reordered by (group as uint32, point index) and sorted_groups[k]
// receives the group of sorted position k. Returns 0, or -1 when out of memory
// (the grid is then left ungrouped).
SIM_EXPORT int sim_hash_grid_group_host(void* grid, const char* groups, long long group_stride,
                                        const int* sorted_cells, int* point_ids,
                                        int* sorted_groups) {
    sim::HashGrid& descriptor = *static_cast<sim::HashGrid*>(grid);
    const int64 n = descriptor.num_points;
    auto group_of = [&](int32 point) {
        return *reinterpret_cast<const int32*>(groups + group_stride * int64(point));
    };
    std::vector<unsigned long long> run;  // (group as uint32) << 32 | point index
    descriptor.sorted_groups = nullptr;
    try {
        for (int64 begin = 0; begin < n;) {
            int64 end = begin + 1;
            while (end < n && sorted_cells[end] == sorted_cells[begin]) ++end;
            if (end - begin == 1) {
                sorted_groups[begin] = group_of(point_ids[begin]);
            } else {
                run.clear();
                for (int64 k = begin; k < end; ++k) {
                    const unsigned int g = (unsigned int)group_of(point_ids[k]);
                    run.push_back((static_cast<unsigned long long>(g) << 32) |
                                  (unsigned int)point_ids[k]);
                }
                std::sort(run.begin(), run.end());
                for (int64 k = begin; k < end; ++k) {
                    const unsigned long long entry = run[size_t(k - begin)];
                    point_ids[k] = int32(entry & 0xffffffffu);
                    sorted_groups[k] = int32(entry >> 32);
                }
            }
            begin = end;
        }
    } catch (...) {
        return -1;
    }
    descriptor.sorted_groups = sorted_groups;
    return 0;
}
