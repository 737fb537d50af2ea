"""Spatial structures: host objects, their builds, and their kernel-side queries.

This package is the host side only: the typing and lowering of the queries
(numba_sim/typing, numba_sim/lowering) import it, never the reverse, and
numba_sim/_registration.py registers them in both Numba targets.
"""

from numba_sim.spatial.bvh import Bvh, is_cubql_available
from numba_sim.spatial.bvh_query import (
    BvhQuery,
    bvh_get_group_root,
    bvh_query_aabb,
    bvh_query_capsule,
    bvh_query_next,
    bvh_query_ray,
    bvh_query_sphere,
)
from numba_sim.spatial.hash_grid import HashGrid
from numba_sim.spatial.hash_grid_query import (
    hash_grid_point_id,
    hash_grid_query,
    hash_grid_query_next,
)
from numba_sim.spatial.mesh import Mesh
from numba_sim.spatial.mesh_query import (
    MeshQuery,
    MeshQueryAABB,
    mesh_eval_position,
    mesh_eval_velocity,
    mesh_get_bvh,
    mesh_get_group_root,
    mesh_query_aabb,
    mesh_query_aabb_next,
    mesh_query_next,
    mesh_query_furthest_point_no_sign,
    mesh_query_point,
    mesh_query_point_no_sign,
    mesh_query_point_sign_normal,
    mesh_query_point_sign_parity,
    mesh_query_point_sign_winding_number,
    mesh_query_ray,
    mesh_query_ray_anyhit,
    mesh_query_ray_count_intersections,
    mesh_query_sphere,
)

__all__ = ["HashGrid", "hash_grid_query", "hash_grid_point_id", "hash_grid_query_next",
           "Bvh", "bvh_query_aabb", "bvh_query_ray", "bvh_query_next", "bvh_get_group_root",
           "Mesh", "mesh_query_point", "mesh_query_ray", "mesh_query_aabb", "mesh_eval_position",
           "mesh_query_aabb_next", "mesh_query_point_no_sign", "mesh_query_point_sign_normal",
           "mesh_query_furthest_point_no_sign", "mesh_query_point_sign_winding_number",
           "mesh_get_group_root", "mesh_eval_velocity", "is_cubql_available",
           "bvh_query_sphere", "mesh_query_sphere", "mesh_query_next", "BvhQuery",
           "MeshQuery", "MeshQueryAABB", "mesh_get_bvh", "bvh_query_capsule",
           "mesh_query_point_sign_parity", "mesh_query_ray_anyhit",
           "mesh_query_ray_count_intersections"]
