"""``sim.Bvh``: Warp's bounding volume hierarchy over boxes, on the CPU or CUDA.

    lowers = np.array(..., dtype=np.float32)      # (n, 3): the boxes' lower corners
    uppers = np.array(..., dtype=np.float32)      # (n, 3): their upper corners
    bvh = sim.Bvh(lowers, uppers)                 # CUDA arrays make a CUDA tree

    @numba.njit(parallel=True)
    def overlaps(bvh, lowers, uppers, counts):
        for i in numba.prange(lowers.shape[0]):
            lo = sim.vec3(lowers[i, 0], lowers[i, 1], lowers[i, 2])
            hi = sim.vec3(uppers[i, 0], uppers[i, 1], uppers[i, 2])
            for j in sim.bvh_query_aabb(bvh, lo, hi):
                counts[i] += 1

Constructors (Warp's): ``"sah"`` (surface area heuristic, 16 bins per axis;
the CPU default), ``"median"`` (split at the median centre along the longest
axis) and ``"lbvh"`` (Karras' linear BVH on 30-bit Morton codes; the CUDA
default, also available on the CPU). On CUDA, SAH and median trees are built
on the host and copied, as in Warp; LBVH is built on the GPU.

The tree keeps the caller's ``lowers`` and ``uppers``: after changing them in
place, :meth:`Bvh.refit` updates the boxes of the tree (same topology) and
:meth:`Bvh.rebuild` builds it anew. Bounds must be finite and lower <= upper
(checked at construction, and by CPU refits and rebuilds). An empty tree
(n == 0) is allowed: its queries yield nothing.

Queries test boxes, as Warp's: they yield the boxes that overlap a box or
that a ray meets, each once, not what the caller put in them. Nodes at
depth 31 and below are leaves whatever their size, so a traversal's stack of
32 entries never overflows; each query (each loop) has its own stack.

Grouped trees (Warp's ``Bvh(..., groups=...)``) keep a subtree per group
id: ``bvh_get_group_root(bvh, group)`` gives its root, and
``bvh_query_aabb(bvh, lo, hi, root)`` / ``bvh_query_ray(bvh, start, dir,
root)`` then visit that group's boxes only.

The algorithms are ``cuda_src/bvh.h`` and ``cuda_src/bvh_host_build.cpp``.
"""

import collections
import threading

import numba
import numpy as np

from numba_sim.spatial.common import (
    BVH_CONSTRUCTORS,
    BVH_LEVELS,
    BVH_WORDS,
    RefittableStructure,
    address,
    aligned_zeros,
    check_finite_rows,
    device_index,
    group_ids,
    host_functions,
    positive_int,
    vec3_array,
)

BvhStats = collections.namedtuple("BvhStats", "depth nodes leaves sah_cost")
BvhStats.__doc__ = """Shape of a tree: its depth (the root is 0), reachable nodes, leaves, and
SAH cost: the sum over inner nodes of area / root area, plus the sum over
leaves of area / root area times their box count."""


class Bvh(RefittableStructure):
    """A bounding volume hierarchy over the boxes ``lowers[i]``-``uppers[i]``.

    ``lowers`` and ``uppers`` are C-contiguous ``(n, 3)`` float32 arrays on one
    device: NumPy arrays make a CPU tree; CUDA arrays (CuPy, or anything with
    ``__cuda_array_interface__``) a tree on the current CUDA device.
    ``constructor`` is ``"sah"``, ``"median"``, ``"lbvh"`` or None (Warp's
    default: SAH on the CPU, LBVH on CUDA); ``leaf_size`` the number of boxes
    a leaf may hold (Warp's, default 1).

    ``groups`` (Warp's): one integer group id per box, on the boxes' device.
    The tree then holds one subtree per group under a balanced tree over the
    groups; ``bvh_get_group_root(bvh, group)`` gives a group's subtree root,
    from which ``bvh_query_aabb`` / ``bvh_query_ray`` (their ``root``
    argument) visit that group's boxes only. Grouped trees are built by SAH
    (the default, also on CUDA, built on the host and copied) or median;
    ``"lbvh"`` with groups is a ValueError.

    ``id`` is the address of the tree's descriptor on its device, as in Warp:
    kernels take the tree itself or ``bvh.id`` (a ``uint64``). Rebuilds, refits
    and Python-mode queries of one tree are serialized by a lock; as in Warp,
    compiled code must not query a tree while it is being rebuilt or refit.
    """

    argument = "bvh"
    cpu_hint = "build the Bvh from NumPy arrays"

    def __init__(self, lowers, uppers, constructor=None, leaf_size=1, groups=None):
        n, device = vec3_array("Bvh", "lowers", lowers)
        n_upper, _ = vec3_array("Bvh", "uppers", uppers, device)
        if n_upper != n:
            raise ValueError(f"Bvh(uppers=...): uppers has {n_upper} rows but lowers has {n}")
        self.device = device
        self.lowers = lowers
        self.uppers = uppers
        self.leaf_size = positive_int("Bvh", "leaf_size", leaf_size)
        host_groups = None if groups is None else group_ids("Bvh", groups, n, device)
        self.groups = groups
        self.constructor = constructor_name("Bvh", constructor, device, grouped=groups is not None)
        self._lock = threading.RLock()
        if device == "cpu":
            self._storage = CpuBvhStorage(lowers, uppers, host_groups)
        else:
            # Function-local on purpose: the CUDA build imports numba-cuda (half a second),
            # which CPU-only programs never pay.
            from numba_sim.spatial.bvh_build_cuda import CudaBvhStorage

            self._storage = CudaBvhStorage(lowers, uppers, device_index(device),
                                           groups=host_groups)
        self._storage.check_boxes("Bvh")
        self._storage.build(BVH_CONSTRUCTORS[self.constructor], self.leaf_size)
        self._register()

    # ---------------------------------------------------------------- properties

    @property
    def num_items(self):
        """Number of boxes."""
        return self._storage.num_items

    def __repr__(self):
        return (f"Bvh({self.num_items} boxes, constructor={self.constructor!r}, "
                f"leaf_size={self.leaf_size}, device={self.device!r})")

    # ------------------------------------------------------------------- methods
    # (refit: RefittableStructure's)

    def rebuild(self, constructor=None):
        """Build the tree anew from the current ``lowers`` / ``uppers``, reusing its buffers.

        ``constructor`` as in the constructor (None: the device's default).
        """
        constructor = constructor_name("Bvh.rebuild", constructor, self.device,
                                       grouped=self.groups is not None)
        with self._lock:
            self._storage.check_boxes("Bvh.rebuild")
            self._storage.build(BVH_CONSTRUCTORS[constructor], self.leaf_size)
            self.constructor = constructor

    def stats(self):
        """The tree's :class:`BvhStats` (depth, nodes, leaves, SAH cost)."""
        with self._lock:
            nodes, root = self._storage.host_nodes()
            out = np.zeros(4, dtype=np.float64)
            host_functions["sim_bvh_stats"](address(nodes), root, self.num_items, address(out))
        return BvhStats(int(out[0]), int(out[1]), int(out[2]), float(out[3]))


class CpuBvhStorage:
    """The descriptor and buffers of a CPU tree, and its builds.

    The descriptor lives in a NumPy array, whose address is the tree's id.
    """

    def __init__(self, lowers, uppers, groups=None):
        self.lowers, self.uppers = lowers, uppers
        self.num_items = n = lowers.shape[0]
        self.groups = groups  # host int32, or None
        self.group_ids = np.zeros(max(n, 1), dtype=np.int32)
        self.group_roots = np.zeros(max(n, 1), dtype=np.int32)
        slots = max(2 * n, 1)
        self.descriptor = np.zeros(BVH_WORDS, dtype=np.uint64)
        self.id = address(self.descriptor)
        self.nodes = aligned_zeros((slots, 8), np.int32)  # 32-byte sim::BvhNode
        self.primitive_indices = np.zeros(max(n, 1), dtype=np.int32)
        self.refit_order = np.zeros(slots, dtype=np.int32)
        self.level_offsets = np.zeros(BVH_LEVELS + 1, dtype=np.int32)

    def check_boxes(self, where):
        check_boxes(where, self.lowers, self.uppers)

    check_inputs = check_boxes

    def build(self, constructor, leaf_size):
        host_functions["sim_bvh_build_host"](
            self.id, address(self.lowers), address(self.uppers), self.num_items, constructor,
            leaf_size, address(self.nodes), address(self.primitive_indices),
            address(self.refit_order), address(self.level_offsets), numba.get_num_threads(),
            *group_arguments(self.groups, self.group_ids, self.group_roots),
        )

    def refit(self):
        host_functions["sim_bvh_refit_host"](self.id)

    def host_nodes(self):
        return self.nodes, counts(self.id)[4]


def group_arguments(groups, ids, roots):
    """The group arguments of ``sim_bvh_build_host`` (null pointers for an ungrouped tree)."""
    if groups is None:
        return 0, 0, 0
    return address(groups), address(ids), address(roots)


def counts(descriptor_address):
    """The descriptor's counts: num_items, num_nodes, num_leaves, max_depth, root, leaf_size,
    constructor (a host descriptor)."""
    out = np.zeros(7, dtype=np.int32)
    host_functions["sim_bvh_counts"](descriptor_address, address(out))
    return out.tolist()


# -------------------------------------------------------------------- validation


class CubqlUnavailableError(ValueError, RuntimeError):
    """``constructor='cubql'``: a ValueError naming the argument, and the RuntimeError that
    Warp raises where cuBQL cannot build the tree."""


def is_cubql_available():
    """Whether the ``'cubql'`` BVH constructor can be used (Warp's ``wp.is_cubql_available``).

    numba_sim builds BVHs with its own SAH, median and LBVH builders and has no cuBQL:
    always False, so code that appends ``"cubql"`` to its constructors when available ports
    unchanged.
    """
    return False


def constructor_name(where, constructor, device, argument="constructor", grouped=False):
    """The constructor's name (None: the device's default; SAH for a grouped tree);
    ValueError naming ``argument``."""
    if constructor is None:
        return "sah" if device == "cpu" or grouped else "lbvh"
    if constructor == "cubql":  # Warp's cuBQL builder: not in numba_sim (is_cubql_available())
        if grouped:
            raise CubqlUnavailableError(f"{where}({argument}='cubql'): Grouped BVHs are not "
                                        "supported by the 'cubql' constructor")
        raise CubqlUnavailableError(f"{where}({argument}='cubql'): cuBQL is not available in "
                                    "numba_sim (sim.is_cubql_available() is False); use 'sah', "
                                    "'median' or 'lbvh'")
    if not isinstance(constructor, str) or constructor not in BVH_CONSTRUCTORS:
        raise ValueError(f"{where}({argument}={constructor!r}): expected 'sah', 'median', "
                         "'lbvh' or None")
    if grouped and constructor == "lbvh":
        raise ValueError(f"{where}({argument}='lbvh'): a grouped tree (groups=...) is built "
                         "by 'sah' or 'median' (on CUDA too: on the host, then copied)")
    return constructor


def check_boxes(where, lowers, uppers):
    """Finite bounds with lowers <= uppers (NumPy arrays); errors name the argument."""
    check_finite_rows(where, "lowers", lowers)
    check_finite_rows(where, "uppers", uppers)
    if not (lowers > uppers).any():  # (a flat reduction first, as check_finite_rows)
        return
    inverted = (lowers > uppers).any(axis=1)
    if inverted.any():
        row = int(np.argmax(inverted))
        raise ValueError(f"{where}(lowers=..., uppers=...): box {row} has lowers[{row}] = "
                         f"{lowers[row].tolist()} above uppers[{row}] = {uppers[row].tolist()}")
