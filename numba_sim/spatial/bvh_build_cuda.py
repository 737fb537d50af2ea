"""Building and refitting a BVH on CUDA.

SAH and median trees are built on the host (the boxes are copied there) and
copied to the device, as in Warp. LBVH runs on the GPU, on the current
stream, from the steps of ``cuda_src/bvh.h`` (LTO-inlined, one element per
thread) and the radix sort of :mod:`numba_sim.spatial.cuda_radix_sort`:

1. ``centre_bounds_kernel`` - the bounds of the box centres (block
   reductions, then float atomics), after ``reset_bounds_kernel``;
2. ``morton_kernel`` - a 30-bit Morton code per box and the identity order;
3. the stable radix sort of (code, index) pairs;
4. ``karras_kernel`` - Karras' inner node and the leaf of each position;
5. ``finish_kernel`` - depth, reachability and the depth limit / leaf size of
   each slot, counted per depth (atomics);
6. ``levels_kernel`` (one thread) - the offsets of the depths in
   ``refit_order`` and the descriptor; ``scatter_kernel`` - refit_order;
7. the refit: one launch of ``refit_kernel`` per depth, deepest first.

A refit is step 7 alone. Every buffer is allocated with the tree (the
LBVH's scratch at its first LBVH build), so builds and refits allocate
nothing afterwards. Checking the boxes (finite, lower <= upper) needs the
host: ``check_boxes_kernel`` flags the first bad box, and the build reads the
flag back (a synchronization), before it touches the tree.
"""

import math

import numpy as np
from numba import cuda, float32, int32

from numba_sim import cuda_runtime
from numba_sim.cuda_launch import kernel
from numba_sim.spatial import cuda_radix_sort
from numba_sim.spatial.build_intrinsics import (
    native_lbvh_build_node,
    native_lbvh_finish_node,
    native_morton_code,
    native_refit_level_node,
    native_set_bvh,
)
from numba_sim.spatial.common import (
    BVH_CONSTRUCTORS,
    BVH_GROUP_WORDS,
    BVH_LEVELS,
    BVH_WORDS,
    address,
    host_functions,
)

_THREADS = 256
MAX_DEPTH = BVH_LEVELS - 1
LBVH = BVH_CONSTRUCTORS["lbvh"]
_INT32_MAX = 2**31 - 1


def check_boxes_kernel(lowers, uppers, n, first_bad):
    """``first_bad[0]`` = least i whose box is not finite or has lower > upper."""
    i = cuda.grid(1)
    if i < n:
        good = True
        for k in range(3):
            lo = lowers[i, k]
            hi = uppers[i, k]
            if not (lo - lo == 0.0 and hi - hi == 0.0 and lo <= hi):
                good = False
        if not good:
            cuda.atomic.min(first_bad, 0, i)


def reset_bounds_kernel(bounds):
    k = cuda.grid(1)
    if k < 3:
        bounds[k] = math.inf
        bounds[k + 3] = -math.inf


def centre_bounds_kernel(lowers, uppers, n, bounds):
    """``bounds`` = (min x, y, z, max x, y, z) of the box centres."""
    low = cuda.shared.array((3, _THREADS), float32)
    high = cuda.shared.array((3, _THREADS), float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for k in range(3):
        if i < n:
            c = float32(0.5) * (lowers[i, k] + uppers[i, k])
            low[k, t] = c
            high[k, t] = c
        else:
            low[k, t] = math.inf
            high[k, t] = -math.inf
    cuda.syncthreads()
    step = _THREADS // 2
    while step > 0:
        if t < step:
            for k in range(3):
                low[k, t] = min(low[k, t], low[k, t + step])
                high[k, t] = max(high[k, t], high[k, t + step])
        cuda.syncthreads()
        step //= 2
    if t == 0:
        for k in range(3):
            cuda.atomic.min(bounds, k, low[k, 0])
            cuda.atomic.max(bounds, k + 3, high[k, 0])


def frame_kernel(bounds, frame):
    """``frame`` = (origin x, y, z, 1 / extent x, y, z) of the centres (0 for a flat axis)."""
    if cuda.grid(1) == 0:
        for k in range(3):
            extent = bounds[k + 3] - bounds[k]
            frame[k] = bounds[k]
            frame[k + 3] = float32(1.0) / extent if extent > 0 else float32(0.0)


def morton_kernel(lowers, uppers, n, frame, codes, order):
    i = cuda.grid(1)
    if i < n:
        codes[i] = native_morton_code(lowers, uppers, i, frame[:3], frame[3:])
        order[i] = i


def karras_kernel(codes, n, nodes, parents, ranges):
    i = cuda.grid(1)
    if i < n:
        native_lbvh_build_node(codes, n, i, nodes, parents, ranges)


def finish_kernel(nodes, parents, ranges, n, leaf_size, groups, level_counts):
    """Finish each slot; count reachable nodes per refit group (level_counts[32]: leaves)."""
    s = cuda.grid(1)
    if s < 2 * n - 1:
        is_leaf = cuda.local.array(1, int32)
        group = native_lbvh_finish_node(nodes, parents, ranges, n, leaf_size, s, is_leaf)
        groups[s] = group
        if group >= 0:
            cuda.atomic.add(level_counts, group, 1)
            if is_leaf[0] != 0:
                cuda.atomic.add(level_counts, BVH_LEVELS, 1)


def levels_kernel(bvh_id, nodes, primitive_indices, refit_order, level_offsets, lowers, uppers,
                  n, leaf_size, level_counts, cursors, counts):
    """Offsets of the refit groups, their cursors, and the descriptor (one thread)."""
    if cuda.grid(1) == 0:
        total = 0
        max_depth = 0
        for k in range(BVH_LEVELS):
            level_offsets[k] = total
            cursors[k] = total
            if level_counts[k] > 0 and MAX_DEPTH - k > max_depth:
                max_depth = MAX_DEPTH - k
            total += level_counts[k]
        level_offsets[BVH_LEVELS] = total
        counts[0] = n
        counts[1] = total
        counts[2] = level_counts[BVH_LEVELS]
        counts[3] = max_depth
        counts[4] = 0
        counts[5] = leaf_size
        counts[6] = LBVH
        native_set_bvh(bvh_id, nodes, primitive_indices, refit_order, level_offsets, lowers,
                       uppers, counts)


def scatter_kernel(groups, num_slots, cursors, refit_order):
    s = cuda.grid(1)
    if s < num_slots:
        group = groups[s]
        if group >= 0:
            refit_order[cuda.atomic.add(cursors, group, 1)] = s


def refit_kernel(bvh_id, k, count):
    i = cuda.grid(1)
    if i < count:
        native_refit_level_node(bvh_id, k, i)


def set_descriptor_kernel(bvh_id, nodes, primitive_indices, refit_order, level_offsets, lowers,
                          uppers, counts):
    if cuda.grid(1) == 0:
        native_set_bvh(bvh_id, nodes, primitive_indices, refit_order, level_offsets, lowers,
                       uppers, counts)


KERNELS = (check_boxes_kernel, reset_bounds_kernel, centre_bounds_kernel, frame_kernel,
           morton_kernel, karras_kernel, finish_kernel, levels_kernel, scatter_kernel,
           refit_kernel, set_descriptor_kernel)


def _blocks(count):
    return max(1, (count + _THREADS - 1) // _THREADS)


class CudaBvhStorage:
    """The descriptor and buffers of a CUDA tree, and its builds.

    The descriptor is its own, or the one at ``descriptor_id`` (a mesh's BVH).
    """

    def __init__(self, lowers, uppers, device_index, descriptor_id=None, groups=None,
                 descriptor=None):
        """``descriptor``: (device array, word) holding the descriptor at ``descriptor_id``
        (a mesh's), for a grouped tree's descriptor words."""
        self.device_index = device_index
        self.groups = groups  # host int32 (a grouped tree: built on the host), or None
        self._descriptor_words = descriptor
        self.lowers = as_device_array(lowers)
        self.uppers = as_device_array(uppers)
        self.num_items = n = self.lowers.shape[0]
        self.slots = slots = max(2 * n, 1)
        self.root = 0
        with cuda.gpus[device_index]:
            if descriptor_id is None:
                self.descriptor = cuda.to_device(np.zeros(BVH_WORDS, dtype=np.uint64))
            self.nodes = cuda.device_array((slots, 8), dtype=np.int32)
            self.primitive_indices = cuda.device_array(max(n, 1), dtype=np.int32)
            self.refit_order = cuda.device_array(slots, dtype=np.int32)
            self.level_offsets = cuda.to_device(np.zeros(BVH_LEVELS + 1, dtype=np.int32))
            self.counts = cuda.device_array(7, dtype=np.int32)
            self.flag = cuda.device_array(1, dtype=np.int32)
        self.id = device_address(self.descriptor) if descriptor_id is None else descriptor_id
        self.scratch = None
        self.set_groups(groups)

    def set_groups(self, groups):
        """Make the tree grouped (``groups``: one host int32 id per item), before a build."""
        self.groups = groups
        if groups is not None:
            n = self.num_items
            with cuda.gpus[self.device_index]:
                self.group_ids = cuda.device_array(max(n, 1), dtype=np.int32)
                self.group_roots = cuda.device_array(max(n, 1), dtype=np.int32)

    def check_boxes(self, where, stream=None):
        """ValueError naming the first box that is not finite or has lower > upper."""
        bad = first_bad_box(self.lowers, self.uppers, self.flag, stream)
        if bad is not None:
            lo = self.lowers[bad].copy_to_host().tolist()
            hi = self.uppers[bad].copy_to_host().tolist()
            raise ValueError(f"{where}(lowers=..., uppers=...): box {bad} (lowers[{bad}] = {lo}, "
                             f"uppers[{bad}] = {hi}) is not finite or has lower > upper")

    def build(self, constructor, leaf_size, stream=None):
        stream = cuda_runtime.numba_stream(stream)
        with cuda.gpus[self.device_index]:
            if self.num_items == 0 or constructor != LBVH:
                self._build_on_host(constructor, leaf_size, stream)
            else:
                self._build_lbvh(leaf_size, stream)

    def refit(self, stream=None):
        if self.num_items == 0:
            return
        stream = cuda_runtime.numba_stream(stream)
        bvh_id = np.uint64(self.id)
        with cuda.gpus[self.device_index]:
            for k in range(BVH_LEVELS):  # deepest first; a launch per depth
                kernel(refit_kernel)[_blocks(self.num_items), _THREADS, stream](
                    bvh_id, k, self.num_items)

    def host_nodes(self):
        with cuda.gpus[self.device_index]:
            return self.nodes.copy_to_host(), self.root

    # ---------------------------------------------------------------- builds

    def _build_on_host(self, constructor, leaf_size, stream):
        """SAH / median (or an empty tree): built by the host library, copied here."""
        n = self.num_items
        lowers = np.ascontiguousarray(self.lowers.copy_to_host(stream=stream))
        uppers = np.ascontiguousarray(self.uppers.copy_to_host(stream=stream))
        host = {
            "descriptor": np.zeros(BVH_WORDS, dtype=np.uint64),
            "nodes": np.zeros((self.slots, 8), dtype=np.int32),
            "primitive_indices": np.zeros(max(n, 1), dtype=np.int32),
            "refit_order": np.zeros(self.slots, dtype=np.int32),
            "level_offsets": np.zeros(BVH_LEVELS + 1, dtype=np.int32),
            "group_ids": np.zeros(max(n, 1), dtype=np.int32),
            "group_roots": np.zeros(max(n, 1), dtype=np.int32),
        }
        groups = (0, 0, 0) if self.groups is None else (
            address(self.groups), address(host["group_ids"]), address(host["group_roots"]))
        host_functions["sim_bvh_build_host"](
            address(host["descriptor"]), address(lowers), address(uppers), n, constructor,
            leaf_size, address(host["nodes"]), address(host["primitive_indices"]),
            address(host["refit_order"]), address(host["level_offsets"]), 1, *groups,
        )
        counts = np.zeros(7, dtype=np.int32)
        host_functions["sim_bvh_counts"](address(host["descriptor"]), address(counts))
        self.root = int(counts[4])
        for name in ("nodes", "primitive_indices", "refit_order", "level_offsets"):
            getattr(self, name).copy_to_device(host[name], stream=stream)
        self.counts.copy_to_device(counts, stream=stream)
        kernel(set_descriptor_kernel)[1, 1, stream](
            np.uint64(self.id), self.nodes, self.primitive_indices, self.refit_order,
            self.level_offsets, self.lowers, self.uppers, self.counts)
        _synchronize(stream)  # before the host buffers go
        if self.groups is not None and n:
            self._set_groups(host, int(counts[6]))

    def _set_groups(self, host, constructor):
        """The group tables of a grouped tree, and the descriptor's words that point to them."""
        self.group_ids.copy_to_device(host["group_ids"])
        self.group_roots.copy_to_device(host["group_roots"])
        num_groups = int(np.frombuffer(host["descriptor"].tobytes(), np.int32)[
            2 * BVH_GROUP_WORDS + 1])
        words = np.array([(num_groups << 32) | (constructor & 0xFFFFFFFF),
                          device_address(self.group_ids), device_address(self.group_roots)],
                         dtype=np.uint64)
        array, first = self._descriptor_words or (self.descriptor, 0)
        first += BVH_GROUP_WORDS
        array[first:first + 3].copy_to_device(words)

    def _scratch(self):
        if self.scratch is None:
            n = self.num_items
            block_counts, block_sums = cuda_radix_sort.scratch_sizes(n)
            self.scratch = {
                "keys": cuda.device_array((2, n), dtype=np.int32),
                "values": cuda.device_array((2, n), dtype=np.int32),
                "block_counts": cuda.device_array(block_counts, dtype=np.int32),
                "block_sums": cuda.device_array(block_sums, dtype=np.int32),
                "bounds": cuda.device_array(6, dtype=np.float32),
                "frame": cuda.device_array(6, dtype=np.float32),
                "parents": cuda.device_array(self.slots, dtype=np.int32),
                "ranges": cuda.device_array(2 * max(n - 1, 1), dtype=np.int32),
                "groups": cuda.device_array(self.slots, dtype=np.int32),
                "level_counts": cuda.device_array(BVH_LEVELS + 1, dtype=np.int32),
                "cursors": cuda.device_array(BVH_LEVELS, dtype=np.int32),
            }
        return self.scratch

    def _build_lbvh(self, leaf_size, stream):
        n, slots = self.num_items, 2 * self.num_items - 1  # Karras' slots; the root is slot 0
        self.root = 0
        s = self._scratch()
        keys, values = s["keys"], s["values"]
        blocks, slot_blocks = _blocks(n), _blocks(slots)
        kernel(reset_bounds_kernel)[1, 32, stream](s["bounds"])
        kernel(centre_bounds_kernel)[blocks, _THREADS, stream](self.lowers, self.uppers, n,
                                                               s["bounds"])
        kernel(frame_kernel)[1, 1, stream](s["bounds"], s["frame"])
        kernel(morton_kernel)[blocks, _THREADS, stream](self.lowers, self.uppers, n, s["frame"],
                                                        keys[0], values[0])
        row = cuda_radix_sort.sort_pairs(keys, values, n, 30, s["block_counts"],
                                         s["block_sums"], stream)
        self.primitive_indices.copy_to_device(values[row], stream=stream)
        kernel(karras_kernel)[blocks, _THREADS, stream](keys[row], n, self.nodes, s["parents"],
                                                        s["ranges"])
        s["level_counts"].copy_to_device(np.zeros(BVH_LEVELS + 1, dtype=np.int32), stream=stream)
        kernel(finish_kernel)[slot_blocks, _THREADS, stream](
            self.nodes, s["parents"], s["ranges"], n, leaf_size, s["groups"], s["level_counts"])
        kernel(levels_kernel)[1, 1, stream](
            np.uint64(self.id), self.nodes, self.primitive_indices, self.refit_order,
            self.level_offsets, self.lowers, self.uppers, n, leaf_size, s["level_counts"],
            s["cursors"], self.counts)
        kernel(scatter_kernel)[slot_blocks, _THREADS, stream](s["groups"], slots, s["cursors"],
                                                              self.refit_order)
        self.refit(stream)


def first_bad_box(lowers, uppers, flag, stream=None):
    """The least i where lowers[i] / uppers[i] is not finite or lower > upper, or None.

    Waits for the GPU (the answer is read back); ``flag`` is a 1-element int32
    device array.
    """
    n = lowers.shape[0]
    if n == 0:
        return None
    stream = cuda_runtime.numba_stream(stream)
    flag.copy_to_device(np.array([_INT32_MAX], dtype=np.int32), stream=stream)
    kernel(check_boxes_kernel)[_blocks(n), _THREADS, stream](lowers, uppers, n, flag)
    bad = int(flag.copy_to_host(stream=stream)[0])
    return None if bad == _INT32_MAX else bad


def device_address(array):
    """The device address of a device array's data."""
    return int(array.__cuda_array_interface__["data"][0])


def _synchronize(stream):
    if hasattr(stream, "synchronize"):
        stream.synchronize()
    else:
        cuda.synchronize()


def as_device_array(array):
    """A numba device array viewing ``array`` (any CUDA array), without copying."""
    array = cuda_runtime.as_cuda_array(array)
    if not hasattr(array, "gpu_data"):
        array = cuda.as_cuda_array(array, sync=False)
    return array
