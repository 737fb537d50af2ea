"""A stable LSD radix sort of (key, value) int32 pairs on CUDA, with caller-owned buffers.

The hash-grid build sorts (cell, point index) pairs with it. Nothing here
allocates device memory: buffers come from the caller (sized by
:func:`scratch_sizes`), so a build after ``reserve`` can be captured in a CUDA
graph. CuPy's sort would allocate; CUB is not reachable from numba-cuda.

One pass per digit of :data:`DIGIT_BITS` bits (16 buckets):

* ``radix_count_kernel`` - each block of :data:`BLOCK` keys counts its
  digits (shared-memory atomics) into ``block_counts[digit * blocks + block]``;
* an exclusive scan of ``block_counts`` (digit-major, so every (digit, block)
  run starts after all smaller digits and all earlier blocks);
* ``radix_scatter_kernel`` - each key's rank among the equal digits before it
  in its block comes from a block-wide prefix sum of 16 packed 8-bit counters
  (two uint64 words per thread, :data:`BLOCK` <= 255 keeps them from
  carrying), so the scatter is stable.

``key_offsets_kernel`` then turns sorted keys into the first position of each
key (a binary search per key), which is how the grid gets its cell offsets.

The kernels are plain numba-cuda, launched through numba_sim's prepared
launches; under the CUDA simulator this file imports nothing of numba_sim, so
that tests can load it alone and run its kernels there.
"""

import functools

from numba import cuda, int32, uint64

BLOCK = 128
DIGIT_BITS = 4
RADIX = 1 << DIGIT_BITS
SCAN_BLOCK = 256


def radix_count_kernel(keys, num_keys, shift, block_counts):
    counts = cuda.shared.array(RADIX, int32)
    t = cuda.threadIdx.x
    for digit in range(t, RADIX, BLOCK):
        counts[digit] = 0
    cuda.syncthreads()
    i = cuda.blockIdx.x * BLOCK + t
    if i < num_keys:
        cuda.atomic.add(counts, (keys[i] >> shift) & (RADIX - 1), 1)
    cuda.syncthreads()
    for digit in range(t, RADIX, BLOCK):
        block_counts[digit * cuda.gridDim.x + cuda.blockIdx.x] = counts[digit]


def radix_scatter_kernel(keys_in, values_in, keys_out, values_out, num_keys, shift, block_offsets):
    low = cuda.shared.array(BLOCK, uint64)  # counters of digits 0-7, 8 bits each
    high = cuda.shared.array(BLOCK, uint64)  # digits 8-15
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + t
    valid = i < num_keys
    digit = 0
    if valid:
        digit = (keys_in[i] >> shift) & (RADIX - 1)
    field = uint64(8 * (digit & 7))
    one = uint64(1) << field if valid else uint64(0)
    low[t] = one if digit < 8 else uint64(0)
    high[t] = one if digit >= 8 else uint64(0)
    cuda.syncthreads()
    step = 1
    while step < BLOCK:  # inclusive prefix sums of both words (Hillis-Steele)
        add_low = low[t - step] if t >= step else uint64(0)
        add_high = high[t - step] if t >= step else uint64(0)
        cuda.syncthreads()
        low[t] += add_low
        high[t] += add_high
        cuda.syncthreads()
        step *= 2
    if valid:
        word = low[t] if digit < 8 else high[t]
        rank = int32((word >> field) & uint64(0xFF)) - 1  # equal digits before this key
        position = block_offsets[digit * cuda.gridDim.x + cuda.blockIdx.x] + rank
        keys_out[position] = keys_in[i]
        values_out[position] = values_in[i]


@cuda.jit(device=True)
def scan_tile_inclusive(tile, t, value):
    """Thread *t* puts *value* in the shared *tile* of SCAN_BLOCK; then the tile holds its
    inclusive prefix sums (Hillis-Steele). Every thread of the block must call it."""
    tile[t] = value
    cuda.syncthreads()
    step = 1
    while step < SCAN_BLOCK:
        add = tile[t - step] if t >= step else 0
        cuda.syncthreads()
        tile[t] += add
        cuda.syncthreads()
        step *= 2


def scan_blocks_kernel(data, count, block_sums):
    """Exclusive scan of each SCAN_BLOCK tile of ``data``; tile totals to ``block_sums``."""
    tile = cuda.shared.array(SCAN_BLOCK, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * SCAN_BLOCK + t
    value = data[i] if i < count else 0
    scan_tile_inclusive(tile, t, value)
    if i < count:
        data[i] = tile[t] - value
    if t == SCAN_BLOCK - 1:
        block_sums[cuda.blockIdx.x] = tile[t]


def scan_block_sums_kernel(block_sums, count):
    """Exclusive scan of ``block_sums[:count]`` by one block, tile after tile."""
    tile = cuda.shared.array(SCAN_BLOCK, int32)
    t = cuda.threadIdx.x
    carry = 0
    for base in range(0, count, SCAN_BLOCK):
        i = base + t
        value = block_sums[i] if i < count else 0
        scan_tile_inclusive(tile, t, value)
        if i < count:
            block_sums[i] = carry + tile[t] - value
        carry += tile[SCAN_BLOCK - 1]
        cuda.syncthreads()


def scan_add_kernel(data, count, block_sums):
    i = cuda.grid(1)
    if i < count:
        data[i] += block_sums[i // SCAN_BLOCK]


def key_offsets_kernel(sorted_keys, num_keys, offsets, num_offsets):
    """``offsets[k]`` = first position whose key is >= k, for k < num_offsets."""
    k = cuda.grid(1)
    if k < num_offsets:
        low = 0
        high = num_keys
        while low < high:
            middle = (low + high) // 2
            if sorted_keys[middle] < k:
                low = middle + 1
            else:
                high = middle
        offsets[k] = low


KERNELS = (
    radix_count_kernel,
    radix_scatter_kernel,
    scan_blocks_kernel,
    scan_block_sums_kernel,
    scan_add_kernel,
    key_offsets_kernel,
)


@functools.cache
def kernel(body):
    """``kernel(body)[blocks, threads, stream](*args)``: numba_sim's prepared launches
    of ``cuda.jit(body)``; under the CUDA simulator, the simulator's kernel."""
    if cuda.config.ENABLE_CUDASIM:
        return cuda.jit(body)
    # Function-local on purpose: under the CUDA simulator this module imports nothing of
    # numba_sim (tests load it alone there; numba_sim's CUDA target needs a real numba-cuda).
    from numba_sim.cuda_launch import kernel as prepared_kernel

    return prepared_kernel(body)


def _blocks(count, threads):
    return max(1, (count + threads - 1) // threads)


def scratch_sizes(capacity):
    """``(block_counts, block_sums)`` lengths the sort of ``capacity`` keys needs."""
    counts = RADIX * _blocks(capacity, BLOCK)
    return counts, _blocks(counts, SCAN_BLOCK)


def passes_for(key_bits):
    return max(1, -(-key_bits // DIGIT_BITS))


def exclusive_scan(data, count, block_sums, stream):
    """Exclusive scan of ``data[:count]`` (int32) in place."""
    blocks = _blocks(count, SCAN_BLOCK)
    kernel(scan_blocks_kernel)[blocks, SCAN_BLOCK, stream](data, count, block_sums)
    kernel(scan_block_sums_kernel)[1, SCAN_BLOCK, stream](block_sums, blocks)
    kernel(scan_add_kernel)[blocks, SCAN_BLOCK, stream](data, count, block_sums)


def rows(pair):
    """The two rows of a ``(2, n)`` device array (a pair of rows is returned as it is)."""
    return pair if isinstance(pair, tuple) else (pair[0], pair[1])


def sort_pairs(keys, values, count, key_bits, block_counts, block_sums, stream):
    """Sort ``(keys[0][:count], values[0][:count])`` by key (non-negative, < 2**key_bits).

    ``keys`` and ``values`` are ``(2, capacity)`` int32 device arrays, or pairs
    of their rows (slicing a device array costs more than a launch); each pass
    reads one row and writes the other, and the result is in row
    ``passes_for(key_bits) % 2``, which is returned.
    """
    keys, values = rows(keys), rows(values)
    blocks = _blocks(count, BLOCK)
    passes = passes_for(key_bits)
    for pass_index in range(passes):
        source, target = pass_index % 2, 1 - pass_index % 2
        shift = pass_index * DIGIT_BITS
        kernel(radix_count_kernel)[blocks, BLOCK, stream](keys[source], count, shift, block_counts)
        exclusive_scan(block_counts, RADIX * blocks, block_sums, stream)
        kernel(radix_scatter_kernel)[blocks, BLOCK, stream](
            keys[source], values[source], keys[target], values[target], count, shift, block_counts
        )
    return passes % 2


def key_offsets(sorted_keys, count, offsets, num_offsets, stream):
    """``offsets[k]`` = first position of key >= k in ``sorted_keys[:count]``."""
    kernel(key_offsets_kernel)[_blocks(num_offsets, 256), 256, stream](
        sorted_keys, count, offsets, num_offsets
    )


