// Hash grid: Warp's uniform spatial hash for fixed-radius neighbour queries.
//
// Space is cut into cubic cells of edge `cell_width`; a point p lies in the
// virtual cell floor(p / cell_width) (per axis), which is wrapped modulo the
// grid's dims onto a physical cell (the grid is periodic, so far-apart points
// can share a cell: queries return a superset of the neighbours that callers
// filter by distance, as in Warp). Points are sorted by physical cell;
// `cell_offsets` (num_cells + 1 entries) gives each cell's run of sorted
// positions [cell_offsets[c], cell_offsets[c + 1]) and `point_ids` maps a
// sorted position back to the point's index.
//
// The build (cell of each point, stable sort by cell, cell offsets) runs on
// the grid's device: hashgrid_host_build.cpp on the CPU, numba-cuda kernels
// (numba_sim/spatial/hash_grid_build_cuda.py) on CUDA. This file holds what
// they and the queries share: the descriptor layout, the cell of a point and
// the query traversal.
//
// A query visits each touched physical cell once: cells (x, y, z) with
// x in [floor((p.x - r) / w), floor((p.x + r) / w)] and the same for y and z,
// at most dim cells per axis. Cells consecutive along x are consecutive in
// the cell order, so the query hands out one contiguous run of sorted
// positions per (y, z) row of touched cells (two where the row wraps around
// the grid's x end). On the CPU that keeps calls into this code coarse: the
// caller loops over a run in its own compiled code.
//
// Grouped grids (Warp's build(points, radius, groups=...)): within each cell
// the sorted positions are ordered by group id (as uint32, then point index),
// and `sorted_groups` holds the group of each sorted position, so the points
// of one group in one cell are a contiguous sub-run found by binary search. A
// query given a group (hash_grid_query_begin_group, continued by
// hash_grid_query_next_group_range) then hands out one such sub-run per
// touched cell instead of one run per row; a query without a group, or on an
// ungrouped grid, returns every group (Warp's rule). Every int32 is a valid
// group id. Queries without a group run exactly the ungrouped code.
//
// Non-finite coordinates never fail (Warp's rule): a NaN coordinate maps to
// virtual cell 0 and an infinite one to the extreme representable cell, so
// such points are stored, and may be returned as candidates (a distance test
// then rejects them). A query at a NaN position, or with a NaN radius, visits
// cell (0, 0, 0) along the NaN axes; a negative radius visits no cell.
#ifndef SIM_HASHGRID_H
#define SIM_HASHGRID_H

#include "sim_vec.h"

namespace sim {

// Rows of touched cells whose runs a host query reads up front (a query whose
// radius is at most the cell width touches at most 3 x 3 rows).
#define SIM_HASH_GRID_RUNS 9

// The descriptor of a built grid; its address on its device is the grid's id.
struct HashGrid {
    const int32* point_ids;     // sorted position -> point index (num_points entries)
    const int32* cell_offsets;  // cell -> first sorted position (num_cells + 1 entries)
    const int32* sorted_groups; // sorted position -> group id (grouped builds; else null)
    int32 dim_x;
    int32 dim_y;
    int32 dim_z;
    int32 num_points;
    float cell_width;
    float cell_width_inv;
};

// The state of one query, on the caller's stack. The first three fields are
// read by numba_sim's compiled iteration (numba_sim/lowering/hash_grid.py;
// numba_sim/typing/hash_grid.py declares the same layout): the current run
// [index, end) of sorted positions and the array mapping them to point
// indices. The rest is private.
struct HashGridQuery {
    const int32* point_ids;
    int32 index;
    int32 end;
    const int32* cell_offsets;
    int32 dim_x;
    int32 dim_y;
    int32 x_first;   // physical x of the first cell of every row
    int32 x_count;   // cells per row (<= dim_x)
    int32 y_first;
    int32 y_count;
    int32 z_first;
    int32 z_count;   // 0 once the query is exhausted (or touches nothing)
    int32 row_y;     // row being visited: offsets from y_first / z_first
    int32 row_z;
    int32 row_part;  // 1 while the wrapped second half of a row is pending
    int32 dim_z;
    // grouped queries only (hash_grid_query_begin_group):
    const int32* sorted_groups;  // the grid's (null: an ungrouped grid, every point)
    int32 group;
    int32 row_x;     // the cell of the row being visited
    // host queries without a group (hash_grid_query_begin): the runs of all rows,
    // read up front when there are at most SIM_HASH_GRID_RUNS rows and none wraps
    // around the grid's x end (else run_count is 0 and the rows are read one by one)
    int32 run_count;
    int32 run_next;  // the next run to hand out
    int32 run_begin[SIM_HASH_GRID_RUNS];
    int32 run_end[SIM_HASH_GRID_RUNS];
};

static_assert(sizeof(HashGrid) == 48, "HashGrid layout changed: update numba_sim");
static_assert(sizeof(HashGridQuery) == 168, "HashGridQuery layout changed: update numba_sim");
SIM_ASSERT_OFFSET(HashGridQuery, index, 8, "HashGridQuery header layout changed: update numba_sim");
SIM_ASSERT_OFFSET(HashGridQuery, end, 12, "HashGridQuery header layout changed: update numba_sim");

#ifndef SIM_INT32_MAX
#define SIM_INT32_MAX 2147483647
#endif

// floor(v) as a virtual cell coordinate, defined for every float: values
// beyond [INT32_MIN, INT32_MAX - 1] (infinities included) saturate, NaN gives
// 0. Stopping at INT32_MAX - 1 lets a query step one cell past any end
// without overflow. Same results on host and device (Warp's rule).
SIM_FUNC int32 hash_grid_cell_coord(float v) {
#ifdef SIM_DEVICE_COMPILE
    // rounds down, saturates and maps NaN to 0 in one instruction
    int32 c = __float2int_rd(v);
    return c < SIM_INT32_MAX - 1 ? c : SIM_INT32_MAX - 1;
#else
    // float(INT32_MAX) rounds to 2^31: compare against the exact bounds +-2^31.  Inside
    // them, floor is the truncation less one where it rounded up: x86-64's baseline has
    // no floor instruction (SSE4.1's roundss), and floorf's call cost a build 10 ns a point
    if (v >= -2147483648.0f && v < 2147483648.0f) {
        const int32 t = (int32)v;  // exact: |v| >= 2^24 is an integer already
        return (float)t > v ? t - 1 : t;
    }
    if (v >= 2147483648.0f) return SIM_INT32_MAX - 1;
    if (v < -2147483648.0f) return -SIM_INT32_MAX - 1;
    return 0;  // NaN
#endif
}

// v modulo dim, in [0, dim).
SIM_FUNC int32 hash_grid_wrap(int32 v, int32 dim) {
    if (v >= 0 && v < dim) return v;  // the usual case, without a division
    int32 r = v % dim;
    return r < 0 ? r + dim : r;
}

// Number of distinct physical cells along one axis for virtual cells
// first..last: none when last < first, never more than dim.
SIM_FUNC int32 hash_grid_axis_count(int32 first, int32 last, int32 dim) {
    const int64 span = (int64)last - (int64)first + 1;
    if (span <= 0) return 0;
    return span < (int64)dim ? (int32)span : dim;
}

// (first + offset) modulo dim, for first in [0, dim) and offset in [0, dim).
SIM_FUNC int32 hash_grid_wrapped_offset(int32 first, int32 offset, int32 dim) {
    return offset < dim - first ? first + offset : offset - (dim - first);
}

SIM_FUNC int32 hash_grid_num_cells(const HashGrid& grid) {
    return grid.dim_x * grid.dim_y * grid.dim_z;
}

// The physical cell of a point (its index in cell_offsets).
SIM_FUNC int32 hash_grid_cell(const HashGrid& grid, vec3f p) {
    const float inv = grid.cell_width_inv;
    const int32 x = hash_grid_wrap(hash_grid_cell_coord(p.x * inv), grid.dim_x);
    const int32 y = hash_grid_wrap(hash_grid_cell_coord(p.y * inv), grid.dim_y);
    const int32 z = hash_grid_wrap(hash_grid_cell_coord(p.z * inv), grid.dim_z);
    return (z * grid.dim_y + y) * grid.dim_x + x;
}

// Fills a descriptor (pointers to buffers owned by the caller).
SIM_FUNC void hash_grid_set(HashGrid& grid, int32 dim_x, int32 dim_y, int32 dim_z,
                            int32 num_points, float cell_width, const int32* point_ids,
                            const int32* cell_offsets) {
    grid.point_ids = point_ids;
    grid.cell_offsets = cell_offsets;
    grid.sorted_groups = nullptr;
    grid.dim_x = dim_x;
    grid.dim_y = dim_y;
    grid.dim_z = dim_z;
    grid.num_points = num_points;
    grid.cell_width = cell_width;
    grid.cell_width_inv = 1.0f / cell_width;
}

SIM_FUNC int32 hash_grid_query_next_range(HashGridQuery& q);
SIM_FUNC int32 hash_grid_query_next_group_range(HashGridQuery& q);

// The touched cells of a query for the neighbours of p within radius (none for
// an unbuilt, empty or null grid, a negative radius), before its first run.
SIM_FUNC void hash_grid_query_set_cells(HashGridQuery& q, const HashGrid* grid, vec3f p,
                                        float radius) {
    q.index = 0;
    q.end = 0;
    q.row_y = 0;
    q.row_z = 0;
    q.row_part = 0;
    q.z_count = 0;
    if (grid == nullptr || grid->point_ids == nullptr || grid->cell_offsets == nullptr ||
        grid->num_points <= 0) {
        q.point_ids = nullptr;
        q.cell_offsets = nullptr;
        q.dim_x = q.dim_y = q.dim_z = 1;
        q.x_first = q.x_count = q.y_first = q.y_count = q.z_first = 0;
        return;
    }
    const float inv = grid->cell_width_inv;
    const int32 x0 = hash_grid_cell_coord((p.x - radius) * inv);
    const int32 y0 = hash_grid_cell_coord((p.y - radius) * inv);
    const int32 z0 = hash_grid_cell_coord((p.z - radius) * inv);
    const int32 x1 = hash_grid_cell_coord((p.x + radius) * inv);
    const int32 y1 = hash_grid_cell_coord((p.y + radius) * inv);
    const int32 z1 = hash_grid_cell_coord((p.z + radius) * inv);
    q.point_ids = grid->point_ids;
    q.cell_offsets = grid->cell_offsets;
    q.dim_x = grid->dim_x;
    q.dim_y = grid->dim_y;
    q.dim_z = grid->dim_z;
    q.x_first = hash_grid_wrap(x0, grid->dim_x);
    q.y_first = hash_grid_wrap(y0, grid->dim_y);
    q.z_first = hash_grid_wrap(z0, grid->dim_z);
    q.x_count = hash_grid_axis_count(x0, x1, grid->dim_x);
    q.y_count = hash_grid_axis_count(y0, y1, grid->dim_y);
    const int32 z_count = hash_grid_axis_count(z0, z1, grid->dim_z);
    q.z_count = (q.x_count > 0 && q.y_count > 0) ? z_count : 0;
}

// Starts a query for the neighbours of p within radius, positioned at its
// first non-empty run of sorted positions [q.index, q.end) (an empty run when
// there is none). Continued by hash_grid_query_next_range.
//
// On the host, the runs of all rows (at most SIM_HASH_GRID_RUNS of them, none
// wrapping) are read here at once: their cell_offsets loads are independent,
// so they overlap instead of each waiting for the caller to use up the run
// before (a query's time was mostly those dependent loads on grids larger
// than the caches). The runs and their order are those of the row-by-row path.
SIM_FUNC void hash_grid_query_begin(HashGridQuery& q, const HashGrid* grid, vec3f p, float radius) {
    hash_grid_query_set_cells(q, grid, p, radius);
#ifndef SIM_DEVICE_COMPILE
    q.run_count = 0;
    q.run_next = 0;
    if (q.z_count > 0 && q.x_count <= q.dim_x - q.x_first &&
        (int64)q.y_count * q.z_count <= SIM_HASH_GRID_RUNS) {
        int32 n = 0;
        for (int32 row_z = 0; row_z < q.z_count; ++row_z) {
            const int32 z = hash_grid_wrapped_offset(q.z_first, row_z, q.dim_z);
            for (int32 row_y = 0; row_y < q.y_count; ++row_y) {
                const int32 y = hash_grid_wrapped_offset(q.y_first, row_y, q.dim_y);
                const int32 first_cell = (z * q.dim_y + y) * q.dim_x + q.x_first;
                q.run_begin[n] = q.cell_offsets[first_cell];
                q.run_end[n] = q.cell_offsets[first_cell + q.x_count];
                ++n;
            }
        }
        q.run_count = n;
    }
#endif
    hash_grid_query_next_range(q);
}

// The same, for the points of `group` only (of every point on an ungrouped
// grid). Continued by hash_grid_query_next_group_range.
SIM_FUNC void hash_grid_query_begin_group(HashGridQuery& q, const HashGrid* grid, vec3f p,
                                          float radius, int32 group) {
    hash_grid_query_set_cells(q, grid, p, radius);
    q.sorted_groups = q.cell_offsets != nullptr ? grid->sorted_groups : nullptr;
    q.group = group;
    q.row_x = 0;
    hash_grid_query_next_group_range(q);
}

// First position in [lo, hi) of groups (ascending as uint32) whose group is not
// below `key` (`above`: above `key`).
SIM_FUNC int32 hash_grid_group_bound(const int32* groups, int32 lo, int32 hi, uint32 key,
                                     bool above) {
    while (lo < hi) {
        const int32 mid = lo + (hi - lo) / 2;
        const uint32 g = (uint32)groups[mid];
        if (g < key || (above && g == key)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// hash_grid_query_next_range for a query of one group: one sub-run per cell
// (the whole cell's run on an ungrouped grid).
SIM_FUNC int32 hash_grid_query_next_group_range(HashGridQuery& q) {
    const uint32 key = (uint32)q.group;
    while (q.row_z < q.z_count) {
        const int32 x = hash_grid_wrapped_offset(q.x_first, q.row_x, q.dim_x);
        const int32 y = hash_grid_wrapped_offset(q.y_first, q.row_y, q.dim_y);
        const int32 z = hash_grid_wrapped_offset(q.z_first, q.row_z, q.dim_z);
        const int32 cell = (z * q.dim_y + y) * q.dim_x + x;
        if (++q.row_x >= q.x_count) {
            q.row_x = 0;
            if (++q.row_y >= q.y_count) {
                q.row_y = 0;
                ++q.row_z;
            }
        }
        int32 begin = q.cell_offsets[cell];
        int32 end = q.cell_offsets[cell + 1];
        if (begin < end && q.sorted_groups != nullptr) {
            begin = hash_grid_group_bound(q.sorted_groups, begin, end, key, false);
            end = hash_grid_group_bound(q.sorted_groups, begin, end, key, true);
        }
        if (begin < end) {
            q.index = begin;
            q.end = end;
            return 1;
        }
    }
    q.index = q.end;
    return 0;
}

// Moves the query to its next non-empty run of sorted positions, stored in
// [q.index, q.end); returns 0 (and leaves an empty run) when none is left.
SIM_FUNC int32 hash_grid_query_next_range(HashGridQuery& q) {
#ifndef SIM_DEVICE_COMPILE
    if (q.run_count > 0) {  // the runs read by hash_grid_query_begin
        while (q.run_next < q.run_count) {
            const int32 begin = q.run_begin[q.run_next];
            const int32 end = q.run_end[q.run_next];
            ++q.run_next;
            if (begin < end) {
                q.index = begin;
                q.end = end;
                return 1;
            }
        }
        q.index = q.end;
        return 0;
    }
#endif
    while (q.row_z < q.z_count) {
        // physical row (y, z) and its cells along x, [x_first, x_first + x_count),
        // split in two parts where they run past the grid's end (written so
        // that no intermediate exceeds the dims, which may be near 2^31)
        const int32 y = hash_grid_wrapped_offset(q.y_first, q.row_y, q.dim_y);
        const int32 z = hash_grid_wrapped_offset(q.z_first, q.row_z, q.dim_z);
        const int32 row_start = (z * q.dim_y + y) * q.dim_x;
        const int32 x_room = q.dim_x - q.x_first;  // cells before the x end
        const bool wraps = q.x_count > x_room;
        int32 first_cell, stop_cell;
        if (q.row_part == 0) {
            first_cell = row_start + q.x_first;
            stop_cell = first_cell + (wraps ? x_room : q.x_count);
        } else {
            first_cell = row_start;
            stop_cell = row_start + (q.x_count - x_room);
        }
        if (q.row_part == 0 && wraps) {
            q.row_part = 1;
        } else {
            q.row_part = 0;
            if (++q.row_y >= q.y_count) {
                q.row_y = 0;
                ++q.row_z;
            }
        }
        const int32 begin = q.cell_offsets[first_cell];
        const int32 end = q.cell_offsets[stop_cell];
        if (begin < end) {
            q.index = begin;
            q.end = end;
            return 1;
        }
    }
    q.index = q.end;
    return 0;
}

// The index of the point at cell-sorted position `index` (Warp's
// hash_grid_point_id); -1 for an unbuilt grid or an index out of range.
SIM_FUNC int32 hash_grid_point_id(const HashGrid* grid, int32 index) {
    if (grid == nullptr || grid->point_ids == nullptr || index < 0 || index >= grid->num_points) {
        return -1;
    }
    return grid->point_ids[index];
}

}  // namespace sim

#endif  // SIM_HASHGRID_H
