"""sim.Mesh on CUDA without a GPU: kernels link offline, the build runs in the simulator.

* Query kernels (mesh object or uint64 id; point, ray and box queries,
  eval_position) compile and link into cubins for sm_75 and sm_90, with and
  without LTO; with LTO nothing is left to call. (The build kernels are
  linked by tests/test_bvh_cuda.py, with the BVH's.)
* The CUDA mesh build (numba_sim/spatial/mesh_build_cuda.py, with a GPU LBVH)
  runs under the CUDA simulator in a subprocess, its native steps served by
  the host library: the descriptor it makes must answer like the CPU mesh.
"""

import textwrap

import pytest
from numba import cuda
from numba.core import types

import numba_sim as sim
from numba_sim import native, spatial
from numba_sim.typing.mesh import mesh_type
from numba_sim.typing.spatial_common import prepare_cuda_arg

import simulated_native
from mesh_shapes import cube

POINTS = types.float32[:, ::1]
FLOATS = types.float32[::1]


pytestmark = pytest.mark.usefixtures("private_device_code_cache")


def mesh_queries_kernel(mesh, queries, out):
    i = cuda.grid(1)
    if i < queries.shape[0]:
        p = sim.vec3(queries[i, 0], queries[i, 1], queries[i, 2])
        q = sim.mesh_query_point(mesh, p, 10.0)
        r = sim.mesh_query_ray(mesh, p, sim.vec3(0.0, 0.0, 1.0), 10.0)
        count = 0
        for f in sim.mesh_query_aabb(mesh, p, p + sim.vec3(0.1, 0.1, 0.1)):
            count += f
        x = sim.mesh_eval_position(mesh, q.face, q.u, q.v)
        a = sim.mesh_query_point_no_sign(mesh, p, 10.0)
        b = sim.mesh_query_point_sign_normal(mesh, p, 10.0)
        c = sim.mesh_query_point_sign_normal(mesh, p, 10.0, 0.01)
        d = sim.mesh_query_furthest_point_no_sign(mesh, p, 0.0)
        w = sim.mesh_query_point_sign_winding_number(mesh, p, 10.0)
        g = sim.mesh_query_ray(mesh, p, sim.vec3(0.0, 0.0, 1.0), 10.0,
                               sim.mesh_get_group_root(mesh, 3))
        vel = sim.mesh_eval_velocity(mesh, q.face, q.u, q.v)
        hits = sim.mesh_query_ray_count_intersections(mesh, p, sim.vec3(1.0, 0.0, 0.0))
        anyhit = sim.mesh_query_ray_anyhit(mesh, p, sim.vec3(0.0, 1.0, 0.0), 5.0)
        parity = sim.mesh_query_point_sign_parity(mesh, p, 10.0, 3, 0.05)
        out[i] = (q.sign + r.t + r.normal.z + x.x + float(count) + (1.0 if q.result else 0.0)
                  + a.u + b.sign + c.sign + d.v + w.sign + g.t + vel.y + float(hits)
                  + (1.0 if anyhit else 0.0) + parity.sign)


@pytest.mark.parametrize("handle", [mesh_type, types.uint64], ids=["Mesh", "uint64"])
@pytest.mark.parametrize("cc, lto", [((7, 5), True), ((9, 0), True), ((7, 5), False)],
                         ids=["sm_75-lto", "sm_90-lto", "sm_75-no-lto"])
def test_query_kernel_links_offline(offline_cuda, handle, cc, lto):
    argtypes = (handle, POINTS, FLOATS)
    assert offline_cuda.cubin(mesh_queries_kernel, argtypes, cc=cc, lto=lto)[:4] == b"\x7fELF"


def test_lto_inlines_the_queries(offline_cuda):
    if native.linked_device_code_kind() != "ltoir":
        pytest.skip("nvJitLink is not available: device code is linked as PTX")
    library = offline_cuda.compile(mesh_queries_kernel, (mesh_type, POINTS, FLOATS), cc=(7, 5))
    ptx = library.get_lto_ptx(cc=(7, 5))
    assert "sim_mesh" not in ptx and "sim_bvh" not in ptx
    assert "call" not in ptx.replace("callseq", "")


def test_prepare_cuda_arg_passes_the_id_and_refuses_a_cpu_mesh():
    class FakeCudaMesh:
        device = "cuda:0"
        id = 0xFACE0

    assert prepare_cuda_arg(mesh_type, FakeCudaMesh()) == (types.uint64, 0xFACE0)
    with pytest.raises(ValueError, match=r"CUDA kernel received a Mesh on 'cpu'"):
        prepare_cuda_arg(mesh_type, spatial.Mesh(*cube()))


@sim.kernel
def signed_distance_kernel(mesh: sim.Mesh, queries: sim.array(dtype=sim.vec3),
                           out: sim.array(dtype=float)):
    i = sim.tid()
    q = sim.mesh_query_point(mesh, queries[i], 100.0)
    out[i] = q.sign * sim.length(sim.mesh_eval_position(mesh, q.face, q.u, q.v) - queries[i])


def test_sim_kernel_with_a_mesh_compiles_for_cuda_offline(offline_cuda):
    library = signed_distance_kernel.compile("cuda", [mesh_type, POINTS, FLOATS], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


# --------------------------------------------------------------------------
# The CUDA build under the simulator

SIMULATED_MESH = textwrap.dedent("""
    import ctypes
    import numpy as np
    from numba import cuda
    from numba_sim.spatial import mesh_build_cuda
    from numba_sim.spatial.bvh import counts
    from numba_sim.spatial.common import MESH_BVH_OFFSET, MESH_EDGE_LENGTH_SUM_OFFSET
    from numba_sim.spatial.mesh import Mesh
    from numba_sim.spatial.mesh_query import mesh_query_point
    from mesh_shapes import torus
    from simulated_native import at, handle, library

    points, faces = torus(rings=10, sides=6)
    cpu = Mesh(points, faces, bvh_constructor="lbvh", support_winding_number=True)
    gpu_points = cuda.to_device(points)
    gpu = mesh_build_cuda.CudaMeshStorage(gpu_points, cuda.to_device(faces), 0,
                                          support_winding_number=True)
    gpu.build(2, 4)
    storage = cpu._storage
    storage.prepare_signs()  # a host mesh makes them at its first signed query
    assert np.array_equal(np.asarray(gpu.edge_faces), storage.edge_faces)
    assert np.array_equal(np.asarray(gpu.tri_lowers), storage.tri_lowers)
    assert np.allclose(np.asarray(gpu.vertex_normals), storage.vertex_normals, atol=1e-5)
    assert counts(gpu.id + MESH_BVH_OFFSET) == storage.bvh_counts()
    edge_length_sum = MESH_EDGE_LENGTH_SUM_OFFSET // 4  # float32 slot of edge_length_sum
    assert np.isclose(np.asarray(gpu.descriptor).view(np.float32)[edge_length_sum],
                      storage.descriptor.view(np.float32)[edge_length_sum], rtol=1e-5)

    rng = np.random.default_rng(0)
    queries = rng.uniform(-1.5, 1.5, (200, 3)).astype(np.float32)
    for p in queries:  # the simulated descriptor is in host memory: the host library reads it
        a = mesh_query_point(cpu, p, 10.0)
        hit = np.zeros(8, np.uint32)
        found = library.sim_mesh_query_point(handle(gpu.id), at(p), ctypes.c_float(10.0),
                                             at(hit))
        assert bool(found) == a.result and hit.view(np.int32)[7] == a.face
        assert hit.view(np.float32)[3] == a.sign
    points *= 1.5  # moved: both refit
    gpu_points.copy_to_device(points)
    cpu.refit()
    gpu.refit()
    assert np.array_equal(np.asarray(gpu.tri_uppers), storage.tri_uppers)
    assert np.array_equal(np.asarray(gpu.leaf_points), storage.leaf_points)
    reachable = storage.refit_order[: storage.bvh_counts()[1]]
    assert np.array_equal(np.asarray(gpu.bvh.nodes)[reachable], storage.nodes[reachable])
    # the solid-angle expansions of the reachable nodes, level by level on the GPU
    assert np.allclose(np.asarray(gpu.solid_angle_props)[reachable],
                       storage.solid_angle_props[reachable], rtol=1e-5, atol=1e-6)
    print("built")
""")


def test_cuda_mesh_build_in_the_simulator_answers_like_the_cpu_mesh(tmp_path):
    assert simulated_native.run(SIMULATED_MESH, tmp_path).strip().endswith("built")


SIMULATED_GROUPED_MESH = textwrap.dedent("""
    import ctypes
    import numpy as np
    from numba import cuda
    from numba_sim.spatial import mesh_build_cuda
    from numba_sim.spatial.mesh import Mesh
    from numba_sim.spatial.mesh_query import mesh_get_group_root, mesh_query_ray
    from mesh_shapes import torus
    from simulated_native import at, handle, library

    points, faces = torus(rings=10, sides=6)
    groups = (np.arange(len(faces)) % 3).astype(np.int32) * 5
    cpu = Mesh(points, faces, groups=groups, bvh_constructor="median", bvh_leaf_size=4)
    gpu = mesh_build_cuda.CudaMeshStorage(cuda.to_device(points), cuda.to_device(faces), 0,
                                          groups=groups)  # (checked on the host by Mesh)
    gpu.build(1, 4)  # median: on the host, copied, with the group tables
    velocities = (points * 3).astype(np.float32)
    gpu.set_velocities(cuda.to_device(velocities))
    out = np.zeros(3, np.float32)
    library.sim_mesh_eval_velocity.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_float,
                                               ctypes.c_float, ctypes.c_void_p]
    library.sim_mesh_eval_velocity(handle(gpu.id), 5, 0.25, 0.5, at(out))
    v = velocities[faces[5]]
    assert np.allclose(out, 0.25 * v[0] + 0.5 * v[1] + 0.25 * v[2], atol=1e-6)
    library.sim_mesh_query_ray.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_float,
                                           ctypes.c_void_p, ctypes.c_int]
    rng = np.random.default_rng(2)
    for group in (0, 5, 10, 7):
        root = library.sim_mesh_get_group_root(handle(gpu.id), group)
        assert root == mesh_get_group_root(cpu, group), group
        for start in rng.uniform(-1.5, 1.5, (20, 3)).astype(np.float32):
            d = (-start).astype(np.float32)
            hit = np.zeros(8, np.uint32)
            found = library.sim_mesh_query_ray(handle(gpu.id), at(start), at(d), 10.0, at(hit),
                                               root)
            expected = mesh_query_ray(cpu, start, d, 10.0, root)
            assert bool(found) == expected.result
            assert hit.view(np.int32)[7] == expected.face
            if found and root >= 0:
                assert groups[expected.face] == group
    print("built")
""")


def test_grouped_cuda_mesh_build_in_the_simulator_answers_like_the_cpu_mesh(tmp_path):
    assert simulated_native.run(SIMULATED_GROUPED_MESH, tmp_path).strip().endswith("built")
