"""Spatial structures: host objects, their builds, and their kernel-side queries.

Importing this package registers the typing and lowering of the queries in
both Numba targets (CPU and CUDA).
"""

from numba_sim import registry as _registry
from numba_sim.lowering import hash_grid as _hash_grid_lowering  # noqa: F401
from numba_sim.spatial.hash_grid import HashGrid
from numba_sim.spatial.hash_grid_query import (
    hash_grid_point_id,
    hash_grid_query,
    hash_grid_query_next,
)
from numba_sim.typing import hash_grid as _hash_grid_typing  # noqa: F401

_registry.install()

__all__ = ["HashGrid", "hash_grid_query", "hash_grid_point_id", "hash_grid_query_next"]
