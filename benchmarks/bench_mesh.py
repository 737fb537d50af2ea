"""Mesh benchmark (issue 10), side by side in one run.

A closed icosphere of radius 1 subdivided 7 times (327,680 triangles,
163,842 points): the build; 100,000 closest-point queries (with sign) from
points uniform in the ball of radius 1.5 around its centre; 100,000 rays
from points uniform in that ball, in random directions (closest hit, max_t
100). Compared:

* numba_sim: ``sim.Mesh`` (all cores) and ``@njit(parallel=True)`` loops using
  ``sim.mesh_query_point`` / ``sim.mesh_query_ray`` (also with one thread);
* Warp's CPU Mesh (warp-lang, one thread): ``wp.Mesh`` and the same loops as
  kernels.

Distances, signs (away from the surface) and ray hits are checked to agree.
The contestants take turns, round after round, and the medians over rounds
and their ratios are printed, per core (one thread each) and on all cores.

    python benchmarks/bench_mesh.py [--level 7] [--queries 100000] [--repeat 5] [--json FILE]
"""

import argparse
import os
import sys

import numba
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "tests")]
from mesh_shapes import icosphere  # noqa: E402
from report import (cpu_warp, finish, interleaved_medians, load_average,  # noqa: E402
                    timed_both_ways, versus_warp_table)

import numba_sim as sim  # noqa: E402

MAX_DIST = 10.0
MAX_T = 100.0


@numba.njit(parallel=True)
def signed_distances(mesh, queries, out):
    for i in numba.prange(queries.shape[0]):
        p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        q = sim.mesh_query_point(mesh, p, MAX_DIST)
        if q.result:
            out[i] = q.sign * sim.length(sim.mesh_eval_position(mesh, q.face, q.u, q.v) - p)


@numba.njit(parallel=True)
def ray_casts(mesh, starts, directions, out):
    for i in numba.prange(starts.shape[0]):
        start = sim.vec3(starts[i, 0], starts[i, 1], starts[i, 2])
        direction = sim.vec3(directions[i, 0], directions[i, 1], directions[i, 2])
        r = sim.mesh_query_ray(mesh, start, direction, MAX_T)
        out[i] = r.t * r.sign if r.result else 0.0


def ball(n, radius, seed):
    rng = np.random.default_rng(seed)
    directions = rng.normal(size=(n, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return (directions * radius * rng.uniform(0, 1, (n, 1)) ** (1 / 3)).astype(np.float32)


def numba_sim_runners(points, faces, queries, starts, directions):
    meshes = {"mesh": sim.Mesh(points, faces)}
    distances = np.zeros(len(queries), np.float32)
    hits = np.zeros(len(starts), np.float32)

    def build():
        meshes["mesh"] = sim.Mesh(points, faces)

    def closest_point():
        signed_distances(meshes["mesh"], queries, distances)

    def rays():
        ray_casts(meshes["mesh"], starts, directions, hits)

    return {"build": build, "closest point": closest_point, "rays": rays}, (distances, hits)


def warp_runners(points, faces, queries, starts, directions):
    """Warp's build and queries on its CPU device, or None without warp-lang."""
    wp = cpu_warp()
    if wp is None:
        return None

    @wp.kernel
    def warp_distances(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3),
                       out: wp.array(dtype=float)):
        i = wp.tid()
        p = queries[i]
        q = wp.mesh_query_point(mesh, p, 10.0)
        if q.result:
            out[i] = q.sign * wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - p)

    @wp.kernel
    def warp_rays(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3),
                  directions: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
        i = wp.tid()
        r = wp.mesh_query_ray(mesh, starts[i], directions[i], 100.0)
        if r.result:
            out[i] = r.t * wp.sign(r.sign)

    def array(values, dtype=wp.vec3):
        return wp.array(values, dtype=dtype, device="cpu")

    w_points, w_queries, w_starts, w_directions = map(array, (points, queries, starts,
                                                              directions))
    w_faces = array(faces.reshape(-1), wp.int32)
    distances = wp.zeros(len(queries), dtype=float, device="cpu")
    hits = wp.zeros(len(starts), dtype=float, device="cpu")
    meshes = {"mesh": wp.Mesh(w_points, w_faces)}

    def build():
        meshes["mesh"] = wp.Mesh(w_points, w_faces)

    def closest_point():
        wp.launch(warp_distances, dim=len(queries), device="cpu",
                  inputs=[meshes["mesh"].id, w_queries, distances])
        wp.synchronize_device("cpu")

    def rays():
        wp.launch(warp_rays, dim=len(starts), device="cpu",
                  inputs=[meshes["mesh"].id, w_starts, w_directions, hits])
        wp.synchronize_device("cpu")

    return {"build": build, "closest point": closest_point, "rays": rays}, (distances, hits)


def run(level, num_queries, repeat):
    points, faces = icosphere(level)
    queries = ball(num_queries, 1.5, seed=0)
    starts = ball(num_queries, 1.5, seed=1)
    directions = np.random.default_rng(2).normal(size=(num_queries, 3)).astype(np.float32)
    runners, (distances, hits) = numba_sim_runners(points, faces, queries, starts, directions)
    timed = timed_both_ways(runners)
    warp = warp_runners(points, faces, queries, starts, directions)
    if warp is not None:
        for task, fn in warp[0].items():
            timed[f"warp {task}"] = fn
    times = interleaved_medians(timed, repeat)
    if warp is not None:
        warp_distances, warp_hits = warp[1][0].numpy(), warp[1][1].numpy()
        assert np.allclose(np.abs(distances), np.abs(warp_distances), rtol=1e-4, atol=1e-6)
        away = np.abs(distances) > 1e-3
        assert np.array_equal(np.sign(distances[away]), np.sign(warp_distances[away])), \
            "signs differ"
        assert np.allclose(hits, warp_hits, rtol=1e-4, atol=1e-6), "ray hits differ"
    table = versus_warp_table(
        f"Mesh: icosphere of {len(faces):,} triangles; {num_queries:,} closest points and "
        f"{num_queries:,} rays from points uniform in the ball of radius 1.5", times, runners,
        warp is not None)
    table.note(f"{(distances < 0).mean():.1%} of the query points inside, "
               f"{(hits != 0).mean():.1%} of the rays hit; distances, signs and hits checked "
               "equal to Warp's")
    return [table]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", type=int, default=7)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="also write the tables to this file (python -m benchmarks)")
    args = parser.parse_args(argv)
    before = load_average()
    finish(run(args.level, args.queries, args.repeat), args, before)


if __name__ == "__main__":
    main()
