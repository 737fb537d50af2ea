"""Kernel-side BVH functions, and how they run when called from Python.

``bvh_query_aabb(bvh, lower, upper)`` and ``bvh_query_ray(bvh, start, dir)``
(and Warp's ``bvh_query_next``, which numba_sim replaces by ``for j in
query:`` loops) are typed and lowered for compiled code in
:mod:`numba_sim.typing.bvh` / :mod:`numba_sim.lowering.bvh`. Called from
Python (a ``@sim.func`` run as Python, a test) they run the very same
``cuda_src/bvh.h`` traversal of the host library through ctypes, on CPU
trees: the ``sim.Bvh`` itself or its ``id``.
"""

import numpy as np

from numba_sim.spatial.bvh import Bvh
from numba_sim.spatial.common import (
    BVH_QUERY_BYTES,
    address,
    cpu_structure,
    host_functions,
    vec3_argument,
)


class BoxQuery:
    """A BVH traversal run as Python: iterating yields item indices (np.int32).

    ``begin`` and ``next_item`` name the entry points (see
    numba_sim.typing.bvh.QUERY_KINDS); ``structure`` is the CPU Bvh or Mesh.
    """

    def __init__(self, structure, begin, next_item, a, b, root=-1, radius=None):
        self._structure = structure
        self._begin = begin
        self._next = next_item
        self._a = a
        self._b = b
        self._root = root
        self._extra = () if radius is None else (address(radius),)  # capsules
        self._radius = radius

    def __iter__(self):
        begin, next_item = host_functions[self._begin], host_functions[self._next]
        found = []
        with self._structure._lock:  # no rebuild while the library walks the tree
            state = np.zeros(BVH_QUERY_BYTES // 8, dtype=np.uint64)
            begin(address(state), self._structure.id, address(self._a), address(self._b),
                  *self._extra, self._root)
            while (item := next_item(address(state))) >= 0:
                found.append(np.int32(item))
        yield from found


#: Warp's name of its (kind-erased) BVH query type, for annotations of ``@sim.func``
#: parameters that take a query: every BVH traversal, compiled or run as Python, is a box
#: query in numba_sim (a func's parameters are typed from its arguments).
BvhQuery = BoxQuery


def _bvh(bvh, function):
    return cpu_structure(bvh, Bvh, function)


def root_argument(root, function, name="root"):
    """``root`` as an int (a node index, or -1 for the tree's root); TypeError naming it."""
    if isinstance(root, (bool, np.bool_)) or not isinstance(root, (int, np.integer)):
        what = "an integer group id" if name == "group" else (
            "an integer node index (-1: the tree's root)")
        raise TypeError(f"{function}({name}=...): expected {what}, not {type(root).__name__}")
    return int(root)


def bvh_query_aabb(bvh, lower, upper, root=-1):
    """Start a query of the boxes of ``bvh`` that overlap the box ``lower``-``upper`` (vec3).

    ``for j in bvh_query_aabb(bvh, lo, hi):`` yields the index (int32) of every
    box that overlaps the query box (closed boxes: touching counts), each
    once, in no particular order; ``bvh`` is a ``sim.Bvh`` or its ``id``.
    A query may be stored and iterated later (each loop starts afresh).
    ``root`` (Warp's) starts the traversal at that node, as a group's root
    from :func:`bvh_get_group_root`; -1 (or any negative) is the tree's root.
    """
    return BoxQuery(_bvh(bvh, "bvh_query_aabb"), "sim_bvh_query_aabb_begin",
                    "sim_bvh_query_aabb_next", vec3_argument(lower, "bvh_query_aabb", "lower"),
                    vec3_argument(upper, "bvh_query_aabb", "upper"),
                    root_argument(root, "bvh_query_aabb"))


def bvh_query_ray(bvh, start, dir, root=-1):
    """Start a query of the boxes of ``bvh`` that the ray ``start + t * dir`` (t >= 0) meets.

    ``for j in bvh_query_ray(bvh, start, dir):`` yields the index (int32) of
    every box the ray meets (a start inside a box counts), each once, in no
    particular order: test the items themselves for the exact hits, as in Warp.
    ``root`` as for :func:`bvh_query_aabb`.
    """
    return BoxQuery(_bvh(bvh, "bvh_query_ray"), "sim_bvh_query_ray_begin",
                    "sim_bvh_query_ray_next", vec3_argument(start, "bvh_query_ray", "start"),
                    vec3_argument(dir, "bvh_query_ray", "dir"),
                    root_argument(root, "bvh_query_ray"))


def sphere_radius(radius, function):
    """The second vector of a sphere query's state: (radius, 0, 0) as float32."""
    if isinstance(radius, (bool, np.bool_)) or not isinstance(radius, (int, float, np.number)):
        raise TypeError(f"{function}(radius=...): expected a number, not {type(radius).__name__}")
    return np.array([radius, 0.0, 0.0], dtype=np.float32)


def bvh_query_sphere(bvh, center, radius, root=-1):
    """Start a query of the boxes of ``bvh`` within ``radius`` of ``center`` (Warp's).

    ``for j in bvh_query_sphere(bvh, center, radius):`` yields the index (int32)
    of every box whose closest point to ``center`` is at most ``radius`` away
    (an exact sphere-box test; touching counts), each once, in no particular
    order. A negative radius counts as 0. ``root`` as for :func:`bvh_query_aabb`.
    """
    return BoxQuery(_bvh(bvh, "bvh_query_sphere"), "sim_bvh_query_sphere_begin",
                    "sim_bvh_query_sphere_next",
                    vec3_argument(center, "bvh_query_sphere", "center"),
                    sphere_radius(radius, "bvh_query_sphere"),
                    root_argument(root, "bvh_query_sphere"))


def bvh_query_capsule(bvh, start, dir, radius, root=-1):
    """Start a conservative capsule sweep of ``bvh`` (Warp's): the boxes that the segment
    ``start + t * dir`` meets once grown by ``radius`` (an axis-aligned growth, so boxes near
    the capsule's rounded ends may be extra candidates, never missed ones).

    Sweep from p0 to p1 with ``dir = p1 - p0`` and Warp's ``while bvh_query_next(q, j, 1.0):``
    (the loop's max_dist bounds t, contact at t = max_dist included); a plain
    ``for j in q:`` has no bound. A negative radius counts as 0. ``root`` as for
    :func:`bvh_query_aabb`.
    """
    return BoxQuery(_bvh(bvh, "bvh_query_capsule"), "sim_bvh_query_capsule_begin",
                    "sim_bvh_query_capsule_next",
                    vec3_argument(start, "bvh_query_capsule", "start"),
                    vec3_argument(dir, "bvh_query_capsule", "dir"),
                    root_argument(root, "bvh_query_capsule"),
                    radius=sphere_radius(radius, "bvh_query_capsule")[:1])


def bvh_query_bounded(query, max_dist):
    """The query with Warp's ``max_dist`` (rays and capsules): what the kernel language
    makes of ``while bvh_query_next(query, index, max_dist):`` (compiled code only)."""
    raise TypeError("bvh_query_next(query, index, max_dist) is a kernel-language loop: "
                    "`while sim.bvh_query_next(query, index, max_dist):` in a kernel or func")


def bvh_get_group_root(bvh, group):
    """The root node of ``group``'s subtree in a grouped ``bvh`` (Warp's), or -1.

    ``Bvh(..., groups=...)`` keeps one subtree per group id; pass the root to
    ``bvh_query_aabb`` / ``bvh_query_ray`` to visit that group's boxes only.
    -1 when no box has that group (a query from -1 visits the whole tree, as
    in Warp). An ungrouped tree is one group, 0.
    """
    bvh = _bvh(bvh, "bvh_get_group_root")
    group = root_argument(group, "bvh_get_group_root", "group")
    with bvh._lock:
        return np.int32(host_functions["sim_bvh_group_root"](bvh.id, group))


QUERY_NEXT_MESSAGE = (
    "Warp's bvh_query_next(query, index) form is replaced in numba_sim by a loop: "
    "`for index in sim.bvh_query_aabb(bvh, lower, upper):` (or sim.bvh_query_ray)"
)


def bvh_query_next(query, index):
    """Warp's output-argument form; numba_sim uses ``for j in bvh_query_aabb(...)``."""
    raise TypeError(QUERY_NEXT_MESSAGE)
