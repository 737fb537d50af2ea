// The C ABI of hashgrid.h, included once by entry_points.cpp (so that it is built
// into the host library and into the device code, like every entry point).
// Grids and query states travel as untyped pointers; numba_sim reserves their
// sizes (numba_sim/spatial/common.py) and reads the query state's header
// (numba_sim/typing/hash_grid.py); its tests check both against
// sim_hash_grid_layout(). The CPU build is host-only: hashgrid_host_build.cpp.
#ifndef SIM_HASHGRID_ENTRY_POINTS_H
#define SIM_HASHGRID_ENTRY_POINTS_H

#include "hashgrid.h"

// sizeof(HashGrid), sizeof(HashGridQuery).
SIM_EXPORT void sim_hash_grid_layout(int* sizes) {
    sizes[0] = (int)sizeof(sim::HashGrid);
    sizes[1] = (int)sizeof(sim::HashGridQuery);
}

SIM_EXPORT void sim_hash_grid_set(void* grid, int dim_x, int dim_y, int dim_z, int num_points,
                                  float cell_width, const int* point_ids,
                                  const int* cell_offsets) {
    sim::hash_grid_set(*static_cast<sim::HashGrid*>(grid), dim_x, dim_y, dim_z, num_points,
                       cell_width, point_ids, cell_offsets);
}

// cells[i] = physical cell of points[i] (3 floats each) for i in [begin, end)
// (the CUDA build calls it for one point per thread).
SIM_EXPORT void sim_hash_grid_point_cells(const void* grid, const float* points, int begin,
                                          int end, int* cells) {
    const sim::HashGrid& g = *static_cast<const sim::HashGrid*>(grid);
    for (int i = begin; i < end; ++i) {
        cells[i] = sim::hash_grid_cell(g, sim::load_vec3f(points + 3 * (sim::int64)i));
    }
}

SIM_EXPORT void sim_hash_grid_query_begin(void* query, const void* grid, const float* point,
                                          float radius) {
    sim::hash_grid_query_begin(*static_cast<sim::HashGridQuery*>(query),
                               static_cast<const sim::HashGrid*>(grid), sim::load_vec3f(point),
                               radius);
}

// A query of the points of `group` only (every point on an ungrouped grid),
// continued by sim_hash_grid_query_next_group_range.
SIM_EXPORT void sim_hash_grid_query_begin_group(void* query, const void* grid,
                                                const float* point, float radius, int group) {
    sim::hash_grid_query_begin_group(*static_cast<sim::HashGridQuery*>(query),
                                     static_cast<const sim::HashGrid*>(grid),
                                     sim::load_vec3f(point), radius, group);
}

SIM_EXPORT int sim_hash_grid_query_next_group_range(void* query) {
    return sim::hash_grid_query_next_group_range(*static_cast<sim::HashGridQuery*>(query));
}

// Makes a built grid grouped: sorted_groups[i] is the group of sorted position i
// (null: ungrouped again).
SIM_EXPORT void sim_hash_grid_set_groups(void* grid, const int* sorted_groups) {
    static_cast<sim::HashGrid*>(grid)->sorted_groups = sorted_groups;
}

SIM_EXPORT int sim_hash_grid_query_next_range(void* query) {
    return sim::hash_grid_query_next_range(*static_cast<sim::HashGridQuery*>(query));
}

SIM_EXPORT int sim_hash_grid_point_id(const void* grid, int index) {
    return sim::hash_grid_point_id(static_cast<const sim::HashGrid*>(grid), index);
}

#endif  // SIM_HASHGRID_ENTRY_POINTS_H
