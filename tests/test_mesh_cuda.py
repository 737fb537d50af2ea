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
        out[i] = q.sign + r.t + r.normal.z + x.x + float(count) + (1.0 if q.result else 0.0)


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
    from numba_sim.spatial.common import MESH_BVH_OFFSET
    from numba_sim.spatial.mesh import Mesh
    from numba_sim.spatial.mesh_query import mesh_query_point
    from mesh_shapes import torus
    from simulated_native import at, handle, library

    points, faces = torus(rings=10, sides=6)
    cpu = Mesh(points, faces, bvh_constructor="lbvh")
    gpu_points = cuda.to_device(points)
    gpu = mesh_build_cuda.CudaMeshStorage(gpu_points, cuda.to_device(faces), 0)
    gpu.build(2, 4)
    storage = cpu._storage
    assert np.array_equal(np.asarray(gpu.edge_faces), storage.edge_faces)
    assert np.array_equal(np.asarray(gpu.tri_lowers), storage.tri_lowers)
    assert np.allclose(np.asarray(gpu.vertex_normals), storage.vertex_normals, atol=1e-5)
    assert counts(gpu.id + MESH_BVH_OFFSET) == storage.bvh_counts()

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
    print("built")
""")


def test_cuda_mesh_build_in_the_simulator_answers_like_the_cpu_mesh(tmp_path):
    assert simulated_native.run(SIMULATED_MESH, tmp_path).strip().endswith("built")
