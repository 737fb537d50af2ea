"""The native pipeline: cuda_src/ reached from Numba's CPU and CUDA targets."""

import os
import shutil
import subprocess
import sys

import numba
import numpy as np
import pytest
from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

import numba_sim as sim
from numba_sim import native

N_CASES = 1000
# The device code contracts a*b+c into FMAs; the host code does not.
RTOL, ATOL = 1e-5, 1e-5


def reference_closest_points(a, b, p):
    """Closest points of segments ``a[i]``-``b[i]`` to ``p[i]``, in float64 NumPy."""
    a, b, p = (np.asarray(x, dtype=np.float64) for x in (a, b, p))
    ab = b - a
    denom = np.einsum("ij,ij->i", ab, ab)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.clip(np.einsum("ij,ij->i", p - a, ab) / denom, 0.0, 1.0)
    return np.where((denom > 0)[:, None], a + ab * t[:, None], a)


def random_cases(n=N_CASES, seed=0):
    """``(n, 9)`` float32 rows ``a, b, p``; every 10th segment is degenerate (a == b)."""
    rng = np.random.default_rng(seed)
    cases = rng.uniform(-10.0, 10.0, size=(n, 9)).astype(np.float32)
    cases[::10, 3:6] = cases[::10, 0:3]
    return cases


@numba.njit
def closest_points_cpu(cases):
    out = np.empty((cases.shape[0], 3), dtype=np.float32)
    for i in range(cases.shape[0]):
        c = cases[i]
        q = sim.closest_point_on_segment(sim.vec3(c[0], c[1], c[2]), sim.vec3(c[3], c[4], c[5]),
                                         sim.vec3(c[6], c[7], c[8]))
        out[i, 0] = q.x
        out[i, 1] = q.y
        out[i, 2] = q.z
    return out


def closest_points_kernel(cases, out):
    i = numba.cuda.grid(1)
    if i < cases.shape[0]:
        c = cases[i]
        q = sim.closest_point_on_segment(sim.vec3(c[0], c[1], c[2]), sim.vec3(c[3], c[4], c[5]),
                                         sim.vec3(c[6], c[7], c[8]))
        out[i, 0] = q.x
        out[i, 1] = q.y
        out[i, 2] = q.z


KERNEL_ARGTYPES = (types.float32[:, ::1], types.float32[:, ::1])


@pytest.fixture(autouse=True, scope="module")
def private_device_code_cache(tmp_path_factory):
    """Keeps the device code these tests build out of the user's cache."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("NUMBA_SIM_CACHE_DIR", str(tmp_path_factory.mktemp("numba_sim_cache")))
        yield


@intrinsic
def call_missing_native(typingctx):
    """Calls an entry point that cuda_src/ does not define."""

    def codegen(context, builder, signature, args):
        native.call_native(context, builder, "sim_no_such_function", ir.VoidType(), [])
        return context.get_dummy_value()

    return types.none(), codegen


def missing_native_kernel(out):
    call_missing_native()


@intrinsic
def native_closest_point_x(typingctx, a, b, p):
    """x of the closest point, through the generic API (float32 3-arrays in)."""

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, v) for t, v in zip(signature.args, args)]
        pointers = [array.data for array in arrays]
        out = native.alloca_floats(builder, 3)
        native.call_native(
            context, builder, "sim_closest_point_on_segment", ir.VoidType(), [*pointers, out]
        )
        return native.load_floats(builder, out, 1)[0]

    return types.float32(a, b, p), codegen


def native_closest_point_x_kernel(a, b, p, out):
    out[0] = native_closest_point_x(a, b, p)


# --------------------------------------------------------------------------
# CPU


def test_cpu_matches_numpy_reference():
    cases = random_cases()
    got = closest_points_cpu(cases)
    assert got.dtype == np.float32
    expected = reference_closest_points(cases[:, 0:3], cases[:, 3:6], cases[:, 6:9])
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    degenerate = slice(None, None, 10)
    np.testing.assert_array_equal(got[degenerate], cases[degenerate, 0:3])


def test_python_calls_the_same_native_code():
    """Python runs the host library through ctypes: bit-identical to compiled code."""
    cases = random_cases(n=50, seed=1)
    compiled = closest_points_cpu(cases)
    for row, expected in zip(cases, compiled):
        got = sim.closest_point_on_segment(sim.vec3(*row[0:3]), sim.vec3(*row[3:6]),
                                           sim.vec3(*row[6:9]))
        assert type(got) is sim.vec3
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_wrong_argument_types_name_the_builtin():
    with pytest.raises(TypeError, match="closest_point_on_segment.*three vec3"):
        sim.closest_point_on_segment(sim.vec3(), sim.vec3(), sim.vec3d())


def test_clamps_to_segment_ends():
    # p beyond b, before a, and beside the middle of the segment (0,0,0)-(2,0,0)
    assert closest_points_cpu(
        np.array(
            [
                [0, 0, 0, 2, 0, 0, 5, 1, 0],
                [0, 0, 0, 2, 0, 0, -3, 0, 4],
                [0, 0, 0, 2, 0, 0, 1, 7, 0],
            ],
            dtype=np.float32,
        )
    ).tolist() == [[2, 0, 0], [0, 0, 0], [1, 0, 0]]


def test_host_library_not_built_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(native.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"build_ext --inplace"):
        native.host_library_path()


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("nm") is None,
                    reason="reads ELF dynamic symbols with binutils' nm (Linux)")
def test_host_library_exports_only_its_entry_points():
    """numba_sim loads the library with RTLD_GLOBAL: any other exported symbol (a statically
    linked C++ runtime's, as one toolchain produced) would be bound by every library loaded
    after it, and importing torch or cupy afterwards crashed."""
    listing = subprocess.run(["nm", "-D", "--defined-only", native.host_library_path()],
                             capture_output=True, text=True, check=True).stdout
    names = {line.split()[-1] for line in listing.splitlines() if line.strip()}
    foreign = sorted(n for n in names if n != "PyInit__native" and not n.startswith("sim_"))
    assert "sim_hash_grid_query_begin" in names and not foreign, foreign[:10]


def test_cuda_src_takes_offsets_through_the_portable_macro():
    """NVRTC 13.0 has no __builtin_offsetof (13.5 has): only sim_config.h may use it,
    behind a __has_builtin check (the GPU machine's NVRTC failed on hashgrid.h)."""
    users = []
    for name in sorted(os.listdir(native.source_dir())):
        if name.endswith((".h", ".cpp")) and name != "sim_config.h":
            with open(os.path.join(native.source_dir(), name)) as f:
                if "__builtin_offsetof" in f.read():
                    users.append(name)
    assert not users


def test_unknown_host_symbol_is_a_lowering_error():
    @numba.njit
    def calls_missing():
        call_missing_native()

    with pytest.raises(Exception, match=r"sim_no_such_function.*not defined by the host library"):
        calls_missing()


# --------------------------------------------------------------------------
# NVRTC build and cache


@pytest.fixture
def nvrtc_counter(monkeypatch, tmp_path):
    """Counts NVRTC compilations, with the device code cache in a fresh directory."""
    monkeypatch.setenv("NUMBA_SIM_CACHE_DIR", str(tmp_path))
    calls = []
    compile_ = native._nvrtc_compile

    def counting_compile(sources, kind, arch):
        calls.append((kind, arch))
        return compile_(sources, kind, arch)

    monkeypatch.setattr(native, "_nvrtc_compile", counting_compile)
    return calls


def test_ltoir_is_built_offline_and_cached(nvrtc_counter, tmp_path):
    code = native.build_device_code("ltoir")
    path = native.device_code_cache_path("ltoir")
    assert nvrtc_counter == [("ltoir", "sm_75")]
    assert os.path.dirname(os.path.dirname(path)) == str(tmp_path)
    assert code[:4] == b"\xedCN\x7f"  # NVVM LTO-IR magic
    assert open(path, "rb").read() == code
    mtime = os.stat(path).st_mtime_ns

    assert native.build_device_code("ltoir") == code
    assert nvrtc_counter == [("ltoir", "sm_75")]
    assert os.stat(path).st_mtime_ns == mtime
    assert sorted(os.listdir(os.path.dirname(path))) == [os.path.basename(path)]  # no temp files


def test_ptx_build_exports_the_entry_points(nvrtc_counter):
    ptx = native.build_device_code("ptx").decode()
    assert ".target sm_75" in ptx
    assert ".visible .func sim_closest_point_on_segment(" in ptx


def test_cache_key_covers_sources_and_arch(monkeypatch):
    sources = native.read_sources()
    path = native.device_code_cache_path("ltoir", sources=sources)
    edited = dict(sources, **{"geometry.h": sources["geometry.h"] + b"\n"})
    assert native.device_code_cache_path("ltoir", sources=edited) != path
    assert native.device_code_cache_path("ltoir", arch="sm_80", sources=sources) != path
    assert native.device_code_cache_path("ptx", sources=sources) != path


def test_nvrtc_error_is_reported(monkeypatch, tmp_path):
    sources = native.read_sources()
    broken = dict(sources, **{native.ENTRY_POINTS: sources[native.ENTRY_POINTS] + b"\nnot c++;\n"})
    with pytest.raises(RuntimeError, match=r"NVRTC failed to compile cuda_src/entry_points.cpp"):
        native._nvrtc_compile(broken, "ptx", native.DEVICE_ARCH)


# --------------------------------------------------------------------------
# CUDA: compile and link offline


@pytest.mark.parametrize("lto", [True, False], ids=["lto", "no-lto"])
@pytest.mark.parametrize("cc", [(7, 5), (9, 0)], ids=["sm_75", "sm_90"])
def test_kernel_links_to_cubin_offline(offline_cuda, cc, lto):
    library = offline_cuda.compile(closest_points_kernel, KERNEL_ARGTYPES, cc=cc, lto=lto)
    cubin = bytes(library.get_cubin(cc=cc).code)
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("lto", [True, False], ids=["lto", "no-lto"])
def test_ptx_device_code_links_too(offline_cuda, monkeypatch, lto):
    """PTX, linked where nvJitLink is missing, links into both kinds of kernel."""
    monkeypatch.setattr(native, "linked_device_code_kind", lambda: "ptx")
    argtypes = (types.float32[::1],) * 4
    library = offline_cuda.compile(native_closest_point_x_kernel, argtypes, cc=(8, 0), lto=lto)
    assert native.device_code("ptx") in library._linking_files
    assert bytes(library.get_cubin(cc=(8, 0)).code)[:4] == b"\x7fELF"


def test_lto_kernel_inlines_the_native_call(offline_cuda):
    if native.linked_device_code_kind() != "ltoir":
        pytest.skip("nvJitLink is not available: device code is linked as PTX")
    library = offline_cuda.compile(closest_points_kernel, KERNEL_ARGTYPES, cc=(7, 5), lto=True)
    ptx = library.get_lto_ptx(cc=(7, 5))
    assert "sim_closest_point_on_segment" not in ptx
    assert "div.rn.f32" in ptx  # the segment parameter, computed in the kernel itself


@pytest.mark.parametrize("lto", [True, False], ids=["lto", "no-lto"])
def test_missing_native_symbol_fails_the_link(offline_cuda, lto):
    unresolved = r"(Unresolved extern function|Undefined reference to) 'sim_no_such_function'"
    with pytest.raises(Exception, match=unresolved):
        offline_cuda.cubin(missing_native_kernel, (types.float32[::1],), cc=(7, 5), lto=lto)
