// The C ABI of cuda_src/: thin extern "C" wrappers over the header algorithms.
//
// This one file is compiled twice: by setup.py into the host library
// numba_sim._native (reached from Numba's CPU target as external symbols),
// and by NVRTC into LTO-IR / PTX linked into CUDA kernels (see
// numba_sim/native.py). Arguments are plain pointers so that one Numba
// lowering serves both targets: vectors are 3 consecutive floats.
#include "geometry.h"

SIM_EXPORT void sim_closest_point_on_segment(const float* a, const float* b, const float* p,
                                             float* out) {
    sim::store_vec3f(out, sim::closest_point_on_segment(sim::load_vec3f(a), sim::load_vec3f(b),
                                                        sim::load_vec3f(p)));
}

// ---------------------------------------------------------------------------
// The spatial structures: HashGrid (hashgrid.h), Bvh (bvh.h) and Mesh (mesh.h).
// Each one's entry points are in its own header.
#include "hashgrid_entry_points.h"
#include "bvh_entry_points.h"
#include "mesh_entry_points.h"
