// Host only (never compiled by NVRTC): the CPU build of a hash grid, on a team
// of std::threads. numba_sim/spatial/hash_grid.py (a CPU grid's storage) calls
// it through ctypes, which releases the GIL, so grids built from several
// Python threads build at the same time. (The CUDA build is numba_sim/spatial/hash_grid_build_cuda.py;
// both take the cell of a point from hashgrid.h.)
//
// The points are cut into one chunk per thread, and the threads go through
// the steps together, meeting at a blocking barrier between them (no spinning:
// the cores may be shared with other processes):
//
// 1. the cell of every point of the chunk (hash_grid_cell);
// 2. a least-significant-digit radix sort of (cell, point index) pairs by
//    cell, one digit per pass: each chunk counts its digits; each thread
//    then derives, from all the counts, where its chunk's run of each digit
//    starts (after all smaller digits, then after earlier chunks), and
//    scatters its chunk there. The sort is stable, so the points of a cell
//    stay in index order whatever the thread count (as Warp's radix sort);
// 3. the cell offsets from the sorted cells: position i is the first of every
//    cell after the previous position's cell up to its own, and n that of
//    every cell after the last point's.
//
// A grouped build (sim_hash_grid_group_host, after this build) then orders
// each cell's run by group and records the group of every sorted position.
//
// Two barriers per pass; the usual grid (21 bits of cell index) takes two
// passes of 11 bits, so 2^11 counters per chunk stay in the L1 cache.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "hashgrid.h"

namespace {

using sim::int32;
using sim::int64;

const int kMaxDigitBits = 11;
// Fewer points per thread than this are not worth a thread.
const int64 kMinPointsPerThread = 32768;

// Threads wait here for each other, blocked (not spinning).
class Barrier {
  public:
    explicit Barrier(int count) : count_(count) {}

    void wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        const unsigned long long generation = generation_;
        if (++waiting_ == count_) {
            waiting_ = 0;
            ++generation_;
            lock.unlock();
            changed_.notify_all();
            return;
        }
        changed_.wait(lock, [&] { return generation != generation_; });
    }

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    const int count_;
    int waiting_ = 0;
    unsigned long long generation_ = 0;
};

// Holds the team back until every thread has started (or one failed to).
class StartGate {
  public:
    // Returns whether to go (false: starting the team failed, give up).
    bool wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return state_ != kClosed; });
        return state_ == kOpen;
    }

    void set(bool go) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            state_ = go ? kOpen : kCancelled;
        }
        changed_.notify_all();
    }

  private:
    enum State { kClosed, kOpen, kCancelled };
    std::mutex mutex_;
    std::condition_variable changed_;
    State state_ = kClosed;
};

struct Build {
    const sim::HashGrid* grid;
    const float* points;
    int64 num_points;
    int64 num_cells;
    int32* keys[2];    // cells: row 0 is filled in step 1, a pass reads one row and writes the other
    int32* values[2];  // point indices, moved along with the keys
    int32* cell_offsets;
    int passes;
    int digit_bits;
    int chunks;
    std::vector<int64> counts;     // chunks x radix: digit counts of the current pass
    std::vector<int64> positions;  // chunks x radix: where each chunk's digits go next

    int64 chunk_begin(int c) const {
        const int64 size = (num_points + chunks - 1) / chunks;
        const int64 begin = size * c;
        return begin < num_points ? begin : num_points;
    }
    int64 chunk_end(int c) const { return c + 1 == chunks ? num_points : chunk_begin(c + 1); }
};

void run_chunk(Build& b, Barrier& barrier, int c) {
    const int64 begin = b.chunk_begin(c);
    const int64 end = b.chunk_end(c);
    const int64 radix = int64(1) << b.digit_bits;
    const int32 mask = int32(radix - 1);
    int64* counts = &b.counts[c * radix];
    int64* positions = &b.positions[c * radix];

    for (int pass = 0; pass < b.passes; ++pass) {
        const int32* keys_in = b.keys[pass % 2];
        const int32* values_in = b.values[pass % 2];
        int32* keys_out = b.keys[1 - pass % 2];
        int32* values_out = b.values[1 - pass % 2];
        const int shift = pass * b.digit_bits;

        for (int64 d = 0; d < radix; ++d) counts[d] = 0;
        if (pass == 0) {  // the cells, counted as they come
            const sim::HashGrid grid = *b.grid;
            for (int64 i = begin; i < end; ++i) {
                const int32 cell = sim::hash_grid_cell(grid, sim::load_vec3f(b.points + 3 * i));
                b.keys[0][i] = cell;
                ++counts[cell & mask];
            }
        } else {
            for (int64 i = begin; i < end; ++i) ++counts[(keys_in[i] >> shift) & mask];
        }
        barrier.wait();  // all counts known

        int64 start = 0;
        for (int64 d = 0; d < radix; ++d) {
            for (int k = 0; k < b.chunks; ++k) {
                if (k == c) positions[d] = start;
                start += b.counts[k * radix + d];
            }
        }
        for (int64 i = begin; i < end; ++i) {
            const int32 key = keys_in[i];
            const int64 position = positions[(key >> shift) & mask]++;
            keys_out[position] = key;
            values_out[position] = pass == 0 ? int32(i) : values_in[i];
        }
        barrier.wait();  // pass done: counts may be reused, keys_out is complete
    }

    const int32* sorted = b.keys[b.passes % 2];
    int64 previous = begin > 0 ? sorted[begin - 1] : -1;
    for (int64 i = begin; i < end; ++i) {
        const int64 cell = sorted[i];
        for (int64 k = previous + 1; k <= cell; ++k) b.cell_offsets[k] = int32(i);
        previous = cell;
    }
    if (end == b.num_points && (begin < end || c == 0)) {  // the last chunk with points
        for (int64 k = previous + 1; k <= b.num_cells; ++k) b.cell_offsets[k] = int32(b.num_points);
    }
}

}  // namespace

// Builds the grid whose descriptor is at `grid` from points[0 .. num_points)
// (3 floats each) with cells of edge cell_width, on at most max_threads
// threads. keys and values are 2 x capacity int32 (capacity >= num_points);
// cell_offsets has dim_x * dim_y * dim_z + 1 entries. Returns the row of
// `values` that holds the cell-sorted point indices, or -1 when out of memory
// (the grid is then left empty).
SIM_EXPORT int sim_hash_grid_build_host(void* grid, const float* points, int num_points,
                                        int dim_x, int dim_y, int dim_z, float cell_width,
                                        int* keys, int* values, int capacity,
                                        int* cell_offsets, int max_threads) {
    sim::HashGrid& descriptor = *static_cast<sim::HashGrid*>(grid);
    Build b;
    b.grid = &descriptor;
    b.points = points;
    b.num_points = num_points;
    b.num_cells = int64(dim_x) * dim_y * dim_z;
    b.keys[0] = keys;
    b.keys[1] = keys + capacity;
    b.values[0] = values;
    b.values[1] = values + capacity;
    b.cell_offsets = cell_offsets;

    int bits = 1;
    while (bits < 31 && (int64(1) << bits) < b.num_cells) ++bits;
    b.passes = (bits + kMaxDigitBits - 1) / kMaxDigitBits;
    b.digit_bits = (bits + b.passes - 1) / b.passes;
    const int final_row = b.passes % 2;

    int64 wanted = num_points / kMinPointsPerThread;
    if (wanted > max_threads) wanted = max_threads;
    b.chunks = wanted > 1 ? int(wanted) : 1;
    try {
        b.counts.resize(size_t(b.chunks) << b.digit_bits);
        b.positions.resize(size_t(b.chunks) << b.digit_bits);
    } catch (...) {
        sim::hash_grid_set(descriptor, dim_x, dim_y, dim_z, 0, cell_width, nullptr, nullptr);
        return -1;
    }
    sim::hash_grid_set(descriptor, dim_x, dim_y, dim_z, num_points, cell_width,
                       b.values[final_row], cell_offsets);

    Barrier barrier(b.chunks);
    if (b.chunks > 1) {
        StartGate gate;
        std::vector<std::thread> team;
        bool started = true;
        try {
            team.reserve(size_t(b.chunks - 1));
            for (int c = 1; c < b.chunks; ++c) {
                team.emplace_back([&b, &barrier, &gate, c] {
                    if (gate.wait()) run_chunk(b, barrier, c);
                });
            }
        } catch (...) {  // no more threads to be had: build on this one alone
            started = false;
        }
        gate.set(started);
        if (started) run_chunk(b, barrier, 0);
        for (std::thread& t : team) t.join();
        if (started) return final_row;
        b.chunks = 1;
    }
    Barrier alone(1);
    run_chunk(b, alone, 0);
    return final_row;
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
