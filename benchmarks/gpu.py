"""GPU benchmark: one script, a few minutes, medians and ratios, every result checked.

1. The particle update at 16M particles (CuPy arrays, CUDA events) as effective
   bandwidth, and its ratio to a CuPy device-to-device copy of the same bytes
   (target >= 0.7); the result is checked against NumPy.
2. Launch overhead, host time of one launch of a 1-thread kernel without a
   synchronize, median of --launches: ``sim.launch``, numba-cuda's dispatcher
   (CuPy and Numba device arrays) and a bare ``cuLaunchKernel`` of the same
   compiled kernel (the floor); the target is <= 5 us for ``sim.launch``.
3. A captured CUDA graph of 100 small launches: wall time of ``graph.launch()``
   to a completed synchronize, per launch, median of 20 (target <= 1 us).
4. HashGrid build of 1M points against a CuPy sort-based reference build
   (cell index, argsort, cell ranges), and a neighbour-count query.
5. Bvh box queries and Mesh closest-point queries on the GPU, checked
   against brute force computed with CuPy.

    python benchmarks/gpu.py [--repeat 20] [--launches 10000]
"""

import argparse
import time

import numpy as np


def event_median(cupy, fn, repeat):
    """Median GPU time (s) of fn() between CUDA events on the current stream."""
    stream = cupy.cuda.get_current_stream()
    fn()
    stream.synchronize()
    events = [cupy.cuda.Event() for _ in range(repeat + 1)]
    events[0].record(stream)
    for k in range(repeat):
        fn()
        events[k + 1].record(stream)
    events[-1].synchronize()
    return float(np.median([cupy.cuda.get_elapsed_time(events[k], events[k + 1])
                            for k in range(repeat)])) / 1e3


def host_launch_median(fn, count, synchronize, every=200):
    """Median host time (s) of fn() over *count* calls, synchronizing (untimed) every *every*."""
    fn()
    synchronize()
    samples = np.empty(count)
    clock = time.perf_counter_ns
    for k in range(count):
        if k % every == 0:
            synchronize()
        start = clock()
        fn()
        samples[k] = clock() - start
    synchronize()
    return float(np.median(samples)) / 1e9


def particle_update(sim, cupy, repeat):
    integrate = integrate_kernel(sim)
    n = 16 * 1024 * 1024
    rng = np.random.default_rng(0)
    x0 = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    v0 = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    x, v = cupy.asarray(x0), cupy.asarray(v0)
    sim.launch(integrate, dim=n, inputs=[x, v, 0.01])
    f32 = np.float32
    v1 = v0 + np.array([0, -9.8, 0], f32) * f32(0.01)
    x1 = x0 + v1 * f32(0.01)
    ok = np.allclose(x.get(), x1, rtol=1e-6, atol=1e-6) and np.allclose(v.get(), v1, rtol=1e-6,
                                                                        atol=1e-6)
    t_update = event_median(cupy, lambda: sim.launch(integrate, dim=n, inputs=[x, v, 0.01]), repeat)
    moved = 4 * x.nbytes  # read x and v, write x and v
    source = cupy.zeros(moved // 2, dtype=np.uint8)
    target = cupy.empty_like(source)
    t_memcpy = event_median(
        cupy, lambda: target.data.copy_from_device_async(source.data, source.nbytes), repeat)
    t_kernel = event_median(cupy, lambda: cupy.copyto(target, source), repeat)
    t_copy = min(t_memcpy, t_kernel)
    bandwidth, copy_bandwidth = moved / t_update, moved / t_copy
    print(f"particle update, 16M: {t_update * 1e3:.3f} ms, {bandwidth / 1e9:.0f} GB/s; "
          f"D2D copy of the same bytes {copy_bandwidth / 1e9:.0f} GB/s (memcpy "
          f"{t_memcpy * 1e3:.3f} ms, copy kernel {t_kernel * 1e3:.3f} ms); "
          f"ratio {bandwidth / copy_bandwidth:.2f} (target >= 0.7); "
          f"result {'equals NumPy' if ok else 'DIFFERS FROM NUMPY'}")


def integrate_kernel(sim):
    @sim.kernel
    def integrate(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
        i = sim.tid()
        v[i] = v[i] + sim.vec3(0.0, -9.8, 0.0) * dt
        x[i] = x[i] + v[i] * dt

    return integrate


def launch_overhead(sim, cupy, launches):
    from numba import cuda

    integrate = integrate_kernel(sim)

    @sim.kernel
    def one(a: sim.array(dtype=float)):
        i = sim.tid()
        a[i] = a[i] + 1.0

    @cuda.jit
    def plain_one(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = a[i] + 1.0

    a = cupy.zeros(1, dtype=np.float32)
    device_a = cuda.to_device(np.zeros(1, np.float32))
    stream = cupy.cuda.get_current_stream()
    sync = stream.synchronize
    figures = {}
    figures["sim.launch"] = host_launch_median(lambda: sim.launch(one, dim=1, inputs=[a]),
                                               launches, sync)
    x = cupy.zeros((64, 3), dtype=np.float32)
    figures["sim.launch, 2 vec3 arrays + float"] = host_launch_median(
        lambda: sim.launch(integrate, dim=64, inputs=[x, x, 0.01]), launches, sync)
    figures["numba-cuda, CuPy array"] = host_launch_median(lambda: plain_one[1, 32](a),
                                                           launches, cuda.synchronize)
    figures["numba-cuda, device array"] = host_launch_median(lambda: plain_one[1, 32](device_a),
                                                             launches, cuda.synchronize)
    on_a = 2  # measurements above that add to a
    try:
        figures["bare cuLaunchKernel (cuda.bindings)"] = bare_launch(plain_one, device_a,
                                                                     launches)
    except Exception as e:  # noqa: BLE001 - the floor is informative only
        print(f"bare cuLaunchKernel: not measured ({type(e).__name__}: {e})")
    from numba_sim.launcher import launcher_for

    prepared = launcher_for(one, "cuda", 1)._prepared.get(cupy.cuda.runtime.getDevice())
    if prepared is not None:  # the driver call of sim.launch alone: the floor it stands on
        from numba_sim._native import launch as native_launch

        prepared.launch(((1,), a), 1, 256, stream.ptr)  # fills the buffer
        figures["numba_sim._native.launch of the filled buffer"] = host_launch_median(
            lambda: native_launch(prepared.function, 1, 256, stream.ptr,
                                  prepared._pointer_address), launches, sync)
        on_a += 1
    # every measurement launches once more than it times (its warm-up)
    on_device_array = (1 + launches) * (2 if len(figures) > 4 + (prepared is not None) else 1)
    ok = int(a.get()[0]) == on_a * (1 + launches) + (prepared is not None) and int(
        device_a.copy_to_host()[0]) == on_device_array
    text = ", ".join(f"{name} {t * 1e6:.2f} us" for name, t in figures.items())
    print(f"launch overhead (host time, 1 thread, median of {launches}): {text}; "
          f"sim.launch / numba-cuda {figures['sim.launch'] / figures['numba-cuda, CuPy array']:.2f} "
          f"(target <= 5 us); prepared launch {'used' if prepared else 'NOT PREPARED'}; "
          f"counts {'right' if ok else 'WRONG'}")
    return one, a


def bare_launch(dispatcher, device_array, launches):
    """cuLaunchKernel of the dispatcher's compiled kernel with prepacked arguments."""
    import ctypes

    from cuda.bindings import driver
    from numba import cuda

    (kernel,) = dispatcher.overloads.values()
    handle = kernel._codelibrary.get_cufunc().handle
    if type(handle).__name__ == "CUkernel":
        error, handle = driver.cuKernelGetFunction(handle)
        assert error == 0, error
    values = [0, 0, 1, 4, device_array.device_ctypes_pointer.value, 1, 4]
    slots = (ctypes.c_int64 * len(values))(*values)
    pointers = (ctypes.c_void_p * len(values))(
        *[ctypes.addressof(slots) + 8 * k for k in range(len(values))])
    address = ctypes.addressof(pointers)
    stream = 0

    def go():
        driver.cuLaunchKernel(handle, 1, 1, 1, 32, 1, 1, 0, stream, address, 0)

    return host_launch_median(go, launches, cuda.synchronize)


def graph_replay(sim, cupy, one, a):
    before = int(a.get()[0])
    with sim.capture() as graph:
        for _ in range(100):
            sim.launch(one, dim=1, inputs=[a])
    stream = cupy.cuda.get_current_stream()
    samples = []
    for _ in range(21):
        start = time.perf_counter()
        graph.launch(stream)
        stream.synchronize()
        samples.append(time.perf_counter() - start)
    per_launch = float(np.median(samples[1:])) / 100
    ok = int(a.get()[0]) == before + 2100
    print(f"graph of 100 launches: {per_launch * 1e6:.2f} us per launch (median of 20, wall "
          f"time to a completed synchronize; target <= 1 us); counts {'right' if ok else 'WRONG'}")


def hash_grid(sim, cupy, repeat):
    count = 1_000_000
    side = (count / 20000) ** (1 / 3)
    radius = 0.05
    points = cupy.asarray(np.random.default_rng(0).uniform(0, side, (count, 3)).astype(np.float32))
    dims = (128, 128, 128)
    grid = sim.HashGrid(*dims, device="cuda")
    grid.reserve(count)
    t_build = event_median(cupy, lambda: grid.build(points, radius), repeat)

    cell_of = cupy.ElementwiseKernel(
        "float32 x, float32 y, float32 z, float32 inv, int32 dx, int32 dy, int32 dz",
        "int32 cell",
        """int ix = (int)floorf(x * inv), iy = (int)floorf(y * inv), iz = (int)floorf(z * inv);
           ix = ((ix % dx) + dx) % dx; iy = ((iy % dy) + dy) % dy; iz = ((iz % dz) + dz) % dz;
           cell = (iz * dy + iy) * dx + ix;""", "sim_bench_cell_of")
    cells_total = dims[0] * dims[1] * dims[2]
    boundaries = cupy.arange(cells_total + 1, dtype=np.int32)

    def reference_build():
        cells = cell_of(points[:, 0], points[:, 1], points[:, 2], np.float32(1 / radius),
                        *[np.int32(d) for d in dims])
        order = cupy.argsort(cells)
        sorted_cells = cells[order]
        return order, cupy.searchsorted(sorted_cells, boundaries)

    t_reference = event_median(cupy, reference_build, repeat)
    order, ranges = reference_build()

    @sim.kernel
    def neighbours(grid: sim.uint64, points: sim.array(dtype=sim.vec3),
                   counts: sim.array(dtype=sim.int32), radius: float):
        i = sim.tid()
        p = points[i]
        c = int(0)
        for j in sim.hash_grid_query(grid, p, radius):
            if sim.length(points[j] - p) <= radius:
                c += 1
        counts[i] = c

    counts = cupy.zeros(count, dtype=np.int32)
    t_query = event_median(
        cupy, lambda: sim.launch(neighbours, dim=count, inputs=[grid.id, points, counts, radius]),
        repeat)
    graph_note = ""
    try:  # the same build replayed from a CUDA graph: its GPU time without host launches
        with sim.capture() as graph:
            grid.build(points, radius)
        t_graph = event_median(cupy, lambda: graph.launch(cupy.cuda.get_current_stream()),
                               repeat)
        graph_note = f" (replayed from a CUDA graph {t_graph * 1e3:.3f} ms)"
    except Exception as e:  # noqa: BLE001 - informative only
        graph_note = f" (graph replay failed: {type(e).__name__}: {e})"
    sizes = cupy.diff(ranges)
    print(f"HashGrid 1M points: build {t_build * 1e3:.3f} ms{graph_note}, CuPy sort-based "
          f"reference build "
          f"{t_reference * 1e3:.3f} ms, ratio reference/ours {t_reference / t_build:.2f} "
          f"(target >= 1); query {t_query * 1e3:.3f} ms, mean neighbours "
          f"{float(counts.mean()):.1f}; reference cells hold {int(sizes.sum())} points")


def bvh_and_mesh(sim, cupy, repeat):
    from numba_sim import spatial

    rng = np.random.default_rng(3)
    n = 200_000
    centres = rng.uniform(0, 1, (n, 3))
    half = rng.uniform(0, 0.004, (n, 3))
    lowers = cupy.asarray((centres - half).astype(np.float32))
    uppers = cupy.asarray((centres + half).astype(np.float32))
    t_build = event_median(cupy, lambda: spatial.Bvh(lowers, uppers), max(3, repeat // 4))
    bvh = spatial.Bvh(lowers, uppers)

    @sim.kernel
    def overlaps(bvh: sim.uint64, lowers: sim.array(dtype=sim.vec3),
                 uppers: sim.array(dtype=sim.vec3), counts: sim.array(dtype=sim.int32)):
        i = sim.tid()
        c = int(0)
        for j in sim.bvh_query_aabb(bvh, lowers[i], uppers[i]):
            c += 1
        counts[i] = c

    counts = cupy.zeros(n, dtype=np.int32)
    t_query = event_median(
        cupy, lambda: sim.launch(overlaps, dim=n, inputs=[bvh.id, lowers, uppers, counts]), repeat)
    sample = 2000
    brute = cupy.zeros(sample, dtype=np.int32)
    for start in range(0, sample, 250):
        lo, hi = lowers[start:start + 250, None, :], uppers[start:start + 250, None, :]
        hit = cupy.all((lo <= uppers[None, :, :]) & (lowers[None, :, :] <= hi), axis=2)
        brute[start:start + 250] = hit.sum(axis=1)
    bvh_ok = bool(cupy.array_equal(counts[:sample], brute))
    print(f"Bvh (LBVH on the GPU) 200k boxes: build {t_build * 1e3:.3f} ms, box queries "
          f"{t_query * 1e3:.3f} ms ({n / t_query / 1e6:.0f} M queries/s, mean "
          f"{float(counts.mean()):.1f} hits); first {sample} counts "
          f"{'equal brute force' if bvh_ok else 'DIFFER FROM BRUTE FORCE'}")

    # a sphere of 2 x 80 x 160 triangles; closest points of random queries
    u, w = np.meshgrid(np.linspace(0, np.pi, 81), np.linspace(0, 2 * np.pi, 161), indexing="ij")
    vertices = np.stack([np.sin(u) * np.cos(w), np.cos(u), np.sin(u) * np.sin(w)], -1)
    vertices = vertices.reshape(-1, 3).astype(np.float32)
    index = np.arange(81 * 161).reshape(81, 161)
    a, b, c, d = index[:-1, :-1], index[1:, :-1], index[1:, 1:], index[:-1, 1:]
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3),
                            np.stack([a, c, d], -1).reshape(-1, 3)]).astype(np.int32)
    mesh = spatial.Mesh(cupy.asarray(vertices), cupy.asarray(faces))
    m = 500_000
    queries = cupy.asarray(rng.uniform(-1.5, 1.5, (m, 3)).astype(np.float32))

    @sim.kernel
    def closest(mesh: sim.uint64, queries: sim.array(dtype=sim.vec3),
                distance: sim.array(dtype=float)):
        i = sim.tid()
        p = queries[i]
        q = sim.mesh_query_point(mesh, p, 10.0)
        distance[i] = sim.length(sim.mesh_eval_position(mesh, q.face, q.u, q.v) - p)

    distance = cupy.zeros(m, dtype=np.float32)
    t_mesh = event_median(
        cupy, lambda: sim.launch(closest, dim=m, inputs=[mesh.id, queries, distance]), repeat)
    checked = 1000
    brute_distance = brute_closest_distance(cupy, cupy.asarray(vertices)[cupy.asarray(faces)],
                                            queries[:checked])
    error = float(cupy.max(cupy.abs(distance[:checked] - brute_distance)))
    print(f"Mesh {len(faces)} triangles: closest point of {m} points {t_mesh * 1e3:.3f} ms "
          f"({m / t_mesh / 1e6:.0f} M queries/s); first {checked} distances vs brute force: "
          f"max |difference| {error:.1e} {'(equal)' if error < 1e-5 else '(DIFFERENT)'}")


def brute_closest_distance(cupy, triangles, points):
    """Distance from each point to the nearest triangle (Ericson's region tests), in float64."""
    tri = triangles.astype(np.float64)[None]
    p = points.astype(np.float64)[:, None, :]
    a, b, c = tri[..., 0, :], tri[..., 1, :], tri[..., 2, :]
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = (ab * ap).sum(-1), (ac * ap).sum(-1)
    bp = p - b
    d3, d4 = (ab * bp).sum(-1), (ac * bp).sum(-1)
    cp = p - c
    d5, d6 = (ab * cp).sum(-1), (ac * cp).sum(-1)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    denom = va + vb + vc
    v = cupy.where(denom != 0, vb / cupy.where(denom != 0, denom, 1), 0)
    w = cupy.where(denom != 0, vc / cupy.where(denom != 0, denom, 1), 0)
    closest = a + ab * v[..., None] + ac * w[..., None]
    edges = []
    for s, e, ds, de in ((a, b, d1, d3), (a, c, d2, d6)):
        t = cupy.clip(ds / cupy.where(ds - de != 0, ds - de, 1), 0, 1)
        edges.append(s + (e - s) * t[..., None])
    bc = c - b
    t = cupy.clip(((p - b) * bc).sum(-1) / cupy.maximum((bc * bc).sum(-1), 1e-300), 0, 1)
    edges.append(b + bc * t[..., None])
    inside = (va >= 0) & (vb >= 0) & (vc >= 0)
    best = cupy.where(inside, cupy.linalg.norm(closest - p, axis=-1), np.inf)
    for q in edges:
        best = cupy.minimum(best, cupy.linalg.norm(q - p, axis=-1))
    return best.min(axis=1).astype(np.float32)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--launches", type=int, default=10_000)
    args = parser.parse_args(argv)

    import cupy
    from numba import cuda

    import numba_sim as sim

    if not cuda.is_available():
        raise SystemExit("no CUDA GPU: nothing to benchmark")
    device = cuda.get_current_device()
    print(f"GPU: {getattr(device.name, 'decode', lambda: device.name)()} (cc {device.compute_capability})", flush=True)
    particle_update(sim, cupy, args.repeat)
    one, a = launch_overhead(sim, cupy, args.launches)
    graph_replay(sim, cupy, one, a)
    hash_grid(sim, cupy, args.repeat)
    bvh_and_mesh(sim, cupy, args.repeat)


if __name__ == "__main__":
    main()
