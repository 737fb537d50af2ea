#!/usr/bin/env bash
# gpu_check.sh - one prepared run of numba_sim's CUDA half on a machine with an NVIDIA GPU.
#
# Run it from the project root on the GPU machine (it installs nothing; no network):
#     bash gpu_check.sh                     # results under $OUT (or ./gpu_check_out)
# Whole run <= GPU_CHECK_BUDGET seconds (default 470, i.e. under 8 minutes); every step
# runs under `timeout`, and a step that would overrun the budget is skipped and said so.
#
#   1. environment: nvidia-smi summary, Python package versions, missing packages, NVVM/
#      NVRTC/nvJitLink versions; builds numba_sim._native for this Python when absent;
#   2. python -m pytest -q tests/gpu/<file>, every file in its own process and all files at
#      once, a hard time limit per file;
#   3. python benchmarks/gpu.py under a time limit;
#   4. an independent check (not the project's tests): the particle update on 16M vec3
#      particles (CuPy arrays, sim.launch(device="cuda")) timed with CUDA events against a
#      CuPy device-to-device copy of the same bytes, and a HashGrid neighbour count on 200k
#      points, GPU against CPU (exact equality);
#   5. a summary, printed last (and written to $OUT/summary.txt).
#
# Files under $OUT (at most 8): summary.txt, env.txt, pytest.log
# (every file's output, one after another), bench.log, independent.log, logs.tar.gz (each
# test file's own output, junit XML, host-library build log).
# Without a GPU it stops after step 1 (a few seconds) with exit code 3, unless
# GPU_CHECK_FORCE=1 (then every step runs and fails or skips fast - for testing this script).
# Environment knobs: PYTHON (default python3), GPU_CHECK_BUDGET, GPU_CHECK_FILES (space-
# separated test file names to run, default all), GPU_CHECK_SKIP_BUILD=1.

set -u
START=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET:-470}
DEADLINE=$((START + BUDGET))
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu_check_out}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/gpu_check.XXXXXX)
mkdir -p "$WORK/logs"
PY=${PYTHON:-python3}
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
: >"$OUT/pytest.log"

export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export NUMBA_SIM_CACHE_DIR="$WORK/cache"   # one cache for this run (NVRTC'd cuda_src once)
export PYTHONDONTWRITEBYTECODE=1
export PYTHONUNBUFFERED=1

now() { date +%s; }
elapsed() { echo $(($(now) - START)); }
left() { echo $((DEADLINE - $(now))); }
note() { echo "$*" | tee -a "$SUMMARY"; }
# cap SECONDS RESERVE: min(SECONDS, time left minus RESERVE), at least 0
cap() {
    local c=$1 r=$(($(left) - $2))
    [ "$r" -lt "$c" ] && c=$r
    [ "$c" -lt 0 ] && c=0
    echo "$c"
}

finish() {
    local rc=$1
    (cd "$WORK" && tar -czf "$OUT/logs.tar.gz" logs 2>/dev/null)
    {
        echo
        echo "==================== gpu_check summary ($(elapsed) s of $BUDGET s) ===================="
        cat "$SUMMARY"
        echo "results: $OUT (summary.txt env.txt pytest.log bench.log independent.log logs.tar.gz)"
    } | tee "$WORK/summary.final"
    cp "$WORK/summary.final" "$SUMMARY"
    [ "${GPU_CHECK_KEEP:-0}" = 1 ] || rm -rf "$WORK"
    exit "$rc"
}

if [ ! -d "$ROOT/numba_sim" ] || [ ! -d "$ROOT/tests/gpu" ]; then
    echo "gpu_check: run me from the numba_sim project root (no numba_sim/ or tests/gpu/ in $ROOT)"
    exit 2
fi

# ---------------------------------------------------------------- 1. environment
{
    echo "== gpu_check.sh at $(date -u +%FT%TZ) in $ROOT"
    echo "== nvidia-smi"
    if command -v nvidia-smi >/dev/null 2>&1; then
        timeout -k 5 20 nvidia-smi -L 2>&1
        timeout -k 5 20 nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,persistence_mode \
            --format=csv 2>&1
        timeout -k 5 20 nvidia-smi 2>&1 | head -25
    else
        echo "nvidia-smi: not found"
    fi
    echo "== tools"
    for t in nvcc ptxas cuobjdump nvdisasm compute-sanitizer ncu g++ c++; do
        printf '%-18s %s\n' "$t" "$(command -v $t 2>/dev/null || echo '-')"
    done
} >"$OUT/env.txt" 2>&1
SMI_GPU=$(grep -c '^GPU [0-9]' "$OUT/env.txt" || true)

cat >"$WORK/probe.py" <<'PYEOF'
"""Versions, missing packages and whether CUDA works; KEY=VALUE lines for the shell."""
import importlib
import importlib.metadata as md
import os
import sys

out = []


def kv(key, value):
    out.append(f"{key}={value}")


def version(dist):
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


print(f"python {sys.version.split()[0]} at {sys.executable}")
dists = ["numpy", "numba", "numba-cuda", "cupy-cuda13x", "cupy-cuda12x", "cupy", "pytest",
         "pytest-timeout", "hypothesis", "scipy", "cuda-bindings", "cuda-core",
         "cuda-python", "nvidia-nvjitlink", "nvidia-cuda-nvrtc", "nvidia-nvvm",
         "nvidia-cuda-runtime", "torch", "warp-lang"]
for d in dists:
    print(f"  {d:22s} {version(d) or '-'}")
missing = []
needed = {"numpy": "numpy", "numba": "numba", "numba.cuda": "numba-cuda", "cupy": "cupy-cuda13x",
          "pytest": "pytest", "hypothesis": "hypothesis (tests/conftest.py)",
          "scipy": "scipy (tests/test_builtins.py)"}
for module, what in needed.items():
    try:
        importlib.import_module(module)
    except Exception as e:  # noqa: BLE001
        missing.append(what)
        print(f"  MISSING {what}: {type(e).__name__}: {e}")
kv("HAVE_PYTEST", int(version("pytest") is not None))
kv("HAVE_PYTEST_TIMEOUT", int(version("pytest-timeout") is not None))
kv("HAVE_CUPY", int("cupy-cuda13x" not in missing))
pins = {"numba": ((0, 68, 1), (0, 69)), "numba-cuda": ((0, 30, 4), (0, 31))}
for dist, (low, high) in pins.items():
    v = version(dist)
    if v:
        t = tuple(int(p) for p in v.split(".")[:3] if p.isdigit())
        if not (low <= t < high):
            print(f"  PIN MISMATCH: {dist} {v} (setup.cfg wants >={'.'.join(map(str, low))}, "
                  f"<{'.'.join(map(str, high))})")
            kv("PIN_MISMATCH", f"{dist}-{v}")
gpu = 0
try:
    from numba import cuda
    print(f"  numba.cuda implementation: {getattr(cuda, 'implementation', '?')}")
    if cuda.is_available():
        for d in cuda.list_devices():
            print(f"  CUDA device {d.id}: {getattr(d.name, 'decode', lambda: d.name)()} cc {d.compute_capability}")
        gpu = 1
        try:
            from numba.cuda.cudadrv.driver import driver
            print(f"  driver CUDA version: {driver.get_version()}")
        except Exception as e:  # noqa: BLE001
            print(f"  driver CUDA version: ? ({type(e).__name__})")
    else:
        print("  numba.cuda.is_available(): False")
    try:
        from numba.cuda.cudadrv import nvvm
        print(f"  NVVM: {nvvm.NVVM().get_version()}")
    except Exception as e:  # noqa: BLE001
        print(f"  NVVM: not found ({type(e).__name__}: {e})")
        missing.append("NVVM (libnvvm: nvidia-nvvm wheel or CUDA_HOME)")
except Exception as e:  # noqa: BLE001
    print(f"  numba.cuda: broken ({type(e).__name__}: {e})")
try:
    from cuda.bindings import nvjitlink, nvrtc
    print(f"  nvJitLink: {nvjitlink.version()}  NVRTC: {nvrtc.nvrtcVersion()[1:]}")
except Exception as e:  # noqa: BLE001
    print(f"  nvJitLink/NVRTC: not found ({type(e).__name__}: {e})")
try:
    import cupy
    print(f"  cupy {cupy.__version__}: runtime {cupy.cuda.runtime.runtimeGetVersion()}, "
          f"devices {cupy.cuda.runtime.getDeviceCount()}")
except Exception as e:  # noqa: BLE001
    print(f"  cupy: no device use ({type(e).__name__}: {str(e)[:200]})")
try:
    import numba_sim
    print(f"  numba_sim {numba_sim.__version__} from {numba_sim.__file__}")
    kv("HAVE_SIM", 1)
    try:
        import numba_sim._native  # noqa: F401
        kv("HAVE_NATIVE", 1)
    except Exception as e:  # noqa: BLE001
        print(f"  numba_sim._native: not importable ({type(e).__name__}: {e})")
        kv("HAVE_NATIVE", 0)
except Exception as e:  # noqa: BLE001
    print(f"  numba_sim: NOT importable ({type(e).__name__}: {e})")
    missing.append(f"numba_sim import ({type(e).__name__}: {str(e)[:160]})")
    kv("HAVE_SIM", 0)
    kv("HAVE_NATIVE", 0)
kv("GPU", gpu)
kv("MISSING", "'" + "; ".join(missing) + "'")
print("\n".join(out))
PYEOF

echo "== python probe" >>"$OUT/env.txt"
timeout -k 5 60 "$PY" "$WORK/probe.py" >"$WORK/probe.out" 2>&1
PROBE_RC=$?
cat "$WORK/probe.out" >>"$OUT/env.txt"
grep -E '^[A-Z_]+=' "$WORK/probe.out" >"$WORK/probe.env" || true
GPU=0 HAVE_PYTEST=0 HAVE_PYTEST_TIMEOUT=0 HAVE_CUPY=0 HAVE_SIM=0 HAVE_NATIVE=0 MISSING='' PIN_MISMATCH=''
# shellcheck disable=SC1091
. "$WORK/probe.env" 2>/dev/null || true

note "env: $($PY -c 'import sys; print("Python", sys.version.split()[0])' 2>&1 | head -1);" \
     "nvidia-smi GPUs: $SMI_GPU; numba.cuda GPU: $GPU; probe rc $PROBE_RC"
grep -E 'CUDA device|driver CUDA|NVVM:|nvJitLink:|cupy [0-9]|numba_sim|PIN MISMATCH|^  numba |^  numba-cuda ' "$WORK/probe.out" |
    sed 's/^ */env:   /' | tee -a "$SUMMARY"
[ -n "$MISSING" ] && note "env: MISSING packages: $MISSING"
[ -n "$PIN_MISMATCH" ] && note "env: version outside setup.cfg's pins: $PIN_MISMATCH"

if [ "$GPU" != 1 ] && [ "${GPU_CHECK_FORCE:-0}" != 1 ]; then
    note "RESULT: NO GPU - numba.cuda.is_available() is False (or the probe failed); nothing" \
         "else was run. See env.txt."
    finish 3
fi

# the host library (numba_sim._native) for *this* Python: the CPU side of every comparison
if [ "$HAVE_SIM" = 1 ] && [ "$HAVE_NATIVE" != 1 ] && [ "${GPU_CHECK_SKIP_BUILD:-0}" != 1 ]; then
    t=$(cap 90 300)
    if [ "$t" -gt 0 ]; then
        tb=$(now)
        timeout -k 5 "$t" "$PY" setup.py -q build_ext --inplace -j 8 >"$WORK/logs/build_ext.log" 2>&1
        brc=$?
        if timeout 30 "$PY" -c "import numba_sim._native" >>"$WORK/logs/build_ext.log" 2>&1; then
            note "host library: built numba_sim._native for this Python in $(($(now) - tb)) s"
            HAVE_NATIVE=1
        else
            note "host library: BUILD FAILED (rc $brc; logs.tar.gz logs/build_ext.log):" \
                 "$(tail -2 "$WORK/logs/build_ext.log" | tr '\n' ' ' | cut -c1-300)"
        fi
    fi
fi
[ "$HAVE_NATIVE" != 1 ] && note "host library: numba_sim._native NOT importable - CPU references" \
    "of HashGrid/Bvh/Mesh/native builtins will fail"

# ---------------------------------------------------------------- 2. tests/gpu, file by file
TEST_RESERVE=140   # seconds kept for the benchmark, the independent check and the summary
# file:cap (most informative and cheapest first)
FILES="test_cuda_runtime_gpu.py:60 test_cuda_launch_gpu.py:60 test_native_gpu.py:45 test_atomics_random_gpu.py:60
test_hash_grid_gpu.py:75 test_value_types_gpu.py:60 test_examples_gpu.py:100
test_bvh_gpu.py:90 test_mesh_gpu.py:90 test_builtins_gpu.py:100"
if [ -n "${GPU_CHECK_FILES:-}" ]; then
    sel=""
    for f in $FILES; do
        case " $GPU_CHECK_FILES " in *" ${f%%:*} "*) sel="$sel $f" ;; esac
    done
    FILES=$sel
fi
if [ "$HAVE_PYTEST" != 1 ]; then
    note "tests: SKIPPED - pytest is missing"
    FILES=""
fi
TIMEOUT_OPT=""
if [ "$HAVE_PYTEST_TIMEOUT" = 1 ]; then
    TIMEOUT_OPT="--timeout=60"
else
    note "tests: pytest-timeout missing: per-file limits by timeout(1) only"
fi
T_PASS=0 T_FAIL=0 T_SKIP=0 F_BAD=0
# every file in its own process, all at once (16 cores; compilation dominates), each with its cap
run_file() {
    local f=$1 c=$2 name=${1%.py} t0 rc
    t0=$(now)
    timeout -k 10 "$c" "$PY" -m pytest -q -rfEs -p no:cacheprovider $TIMEOUT_OPT \
        --junitxml="$WORK/logs/$name.xml" "tests/gpu/$f" >"$WORK/logs/$name.log" 2>&1
    rc=$?
    echo "$rc $(($(now) - t0)) $c" >"$WORK/logs/$name.rc"
}
for entry in $FILES; do
    f=${entry%%:*}
    c=$(cap "${entry##*:}" "$TEST_RESERVE")
    if [ "$c" -lt 15 ]; then
        note "tests: $f NOT RUN (budget spent)"
        F_BAD=$((F_BAD + 1))
        continue
    fi
    run_file "$f" "$c" &
done
wait
for entry in $FILES; do
    f=${entry%%:*}
    name=${f%.py}
    [ -f "$WORK/logs/$name.rc" ] || continue
    read -r rc dt c <"$WORK/logs/$name.rc"
    {
        echo "=================== tests/gpu/$f (rc $rc, ${dt} s, limit $c s)"
        cat "$WORK/logs/$name.log"
    } >>"$OUT/pytest.log"
    line=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error|errors|deselected)|no tests ran' \
        "$WORK/logs/$name.log" | tail -1 | sed 's/=//g; s/^ *//')
    p=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
    fl=$(echo "$line" | grep -oE '[0-9]+ (failed|errors?)' | awk '{s += $1} END {print s + 0}')
    s=$(echo "$line" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+' || echo 0)
    T_PASS=$((T_PASS + ${p:-0})); T_FAIL=$((T_FAIL + ${fl:-0})); T_SKIP=$((T_SKIP + ${s:-0}))
    case $rc in
        0) if [ "${s:-0}" -gt 0 ] && [ "${p:-0}" -eq 0 ]; then verdict="ALL SKIPPED"; F_BAD=$((F_BAD + 1))
           elif [ "${s:-0}" -gt 0 ]; then verdict="PASS (with skips)"
           else verdict="PASS"; fi ;;
        1) verdict="FAIL"; F_BAD=$((F_BAD + 1)) ;;
        5) verdict="NO TESTS"; F_BAD=$((F_BAD + 1)) ;;
        124|137) verdict="TIMEOUT after ${c} s"; F_BAD=$((F_BAD + 1)) ;;
        *) verdict="ERROR rc $rc"; F_BAD=$((F_BAD + 1)) ;;
    esac
    note "tests: $f: $verdict - ${line:-no pytest summary line} (${dt} s)"
    if [ "$rc" != 0 ]; then
        grep -E '^(FAILED|ERROR) |^E  ' "$WORK/logs/$name.log" | head -8 | cut -c1-300 |
            sed 's/^/tests:     /' | tee -a "$SUMMARY"
    fi
done
[ -n "$FILES" ] && note "tests: total $T_PASS passed, $T_FAIL failed/errors, $T_SKIP skipped;" \
    "$F_BAD file(s) not clean"

# ---------------------------------------------------------------- 3. benchmarks/gpu.py
c=$(cap 120 80)
if [ "$HAVE_CUPY" != 1 ]; then
    note "bench: SKIPPED - CuPy is missing"
elif [ "$c" -lt 20 ]; then
    note "bench: NOT RUN (budget spent)"
else
    t0=$(now)
    timeout -k 10 "$c" "$PY" benchmarks/gpu.py --repeat 10 >"$OUT/bench.log" 2>&1
    rc=$?
    note "bench: rc $rc in $(($(now) - t0)) s (limit $c s)$( [ $rc = 124 ] && echo ' TIMEOUT')"
    grep -E 'GPU:|particle update|launch overhead|graph of|HashGrid|Bvh|Mesh|not available|not measured' "$OUT/bench.log" |
        cut -c1-240 | sed 's/^/bench:   /' | tee -a "$SUMMARY"
    [ "$rc" != 0 ] && grep -vE 'GPU:|particle update|launch overhead|graph of|HashGrid|Bvh|Mesh|not available|not measured' \
        "$OUT/bench.log" | tail -3 | cut -c1-240 | sed 's/^/bench:   /' | tee -a "$SUMMARY"
fi

# ---------------------------------------------------------------- 4. independent check
cat >"$WORK/independent.py" <<'PYEOF'
"""Independent GPU check of numba_sim (not the project's tests).

A. The seed's particle update on 16M vec3 particles, CuPy arrays, sim.launch(device="cuda"),
   timed with CUDA events (on CuPy's default stream and on a non-blocking stream), against a
   CuPy device-to-device copy of the same bytes; the result is checked against NumPy.
B. HashGrid neighbour counts (and sums of neighbour ids) on 200k points: GPU grid + GPU kernel
   against CPU grid + CPU kernel. Exact equality on points quantised to 2^-10 with a radius of
   51/1024, where |d|^2 <= r^2 is exact in float32 with or without FMA contraction; on the
   plain float points the number of differing counts is reported (FMA: may be a few).
"""
import sys
import time

import numpy as np

RESULTS = []


def result(name, ok, detail):
    RESULTS.append((name, ok))
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def main():
    import os

    import numba_sim as sim

    cpu_only = os.environ.get("INDEPENDENT_CPU_ONLY") == "1"  # to test this script without a GPU
    if not cpu_only:
        import cupy as cp
        from numba import cuda

        if not cuda.is_available() or cp.cuda.runtime.getDeviceCount() < 1:
            print("FAIL setup: no CUDA device for numba-cuda / CuPy")
            return 3
        dev = cuda.get_current_device()
        print(f"device: {getattr(dev.name, 'decode', lambda: dev.name)()} cc {dev.compute_capability}", flush=True)

    @sim.kernel
    def integrate(x: sim.array(dtype=sim.vec3), v: sim.array(dtype=sim.vec3), dt: float):
        i = sim.tid()
        v[i] = v[i] + sim.vec3(0.0, -9.8, 0.0) * dt
        x[i] = x[i] + v[i] * dt

    # ---------------------------------------------------------------- A
    if not cpu_only:
        particles_check(sim, cp, integrate)
    neighbour_check(sim, None if cpu_only else cp)
    return 0


def particles_check(sim, cp, integrate):
    n = 16 * 1024 * 1024
    dt = 0.01
    rng = np.random.default_rng(0)
    x0 = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    v0 = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    x, v = cp.asarray(x0), cp.asarray(v0)
    t = time.perf_counter()
    sim.launch(integrate, dim=n, inputs=[x, v, dt], device="cuda")  # compiles
    cp.cuda.get_current_stream().synchronize()
    print(f"first launch (compile + run): {time.perf_counter() - t:.2f} s", flush=True)
    f32 = np.float32
    v1 = v0 + np.array([0.0, -9.8, 0.0], f32) * f32(dt)
    x1 = x0 + v1 * f32(dt)
    gx, gv = x.get(), v.get()
    err_x = float(np.max(np.abs(gx - x1)))
    err_v = float(np.max(np.abs(gv - v1)))
    result("particles.correct", bool(np.allclose(gx, x1, rtol=1e-6, atol=1e-6)
                                     and np.allclose(gv, v1, rtol=1e-6, atol=1e-6)),
           f"max |x - numpy| {err_x:.2e}, max |v - numpy| {err_v:.2e}")
    moved = 4 * x.nbytes  # read x and v, write x and v

    def event_times(fn, reps, stream):
        """Per-call GPU times (ms) from events around each of `reps` back-to-back calls."""
        events = [cp.cuda.Event() for _ in range(reps + 1)]
        fn()
        stream.synchronize()
        events[0].record(stream)
        for k in range(reps):
            fn()
            events[k + 1].record(stream)
        events[-1].synchronize()
        return [cp.cuda.get_elapsed_time(events[k], events[k + 1]) for k in range(reps)]

    src = cp.zeros(moved // 2, dtype=np.uint8)
    dst = cp.empty_like(src)
    lines = []
    for label, stream in (("default stream", cp.cuda.Stream.null),
                          ("non-blocking stream", cp.cuda.Stream(non_blocking=True))):
        with stream:
            upd = event_times(lambda: sim.launch(integrate, dim=n, inputs=[x, v, dt],
                                                 device="cuda"), 20, stream)
            memcpy = event_times(lambda: dst.data.copy_from_device_async(src.data, src.nbytes,
                                                                         stream), 20, stream)
            kcopy = event_times(lambda: cp.copyto(dst, src), 20, stream)
        # the first interval holds the host's launch latency; medians of the rest
        t_upd, t_mem, t_k = (float(np.median(s[1:])) for s in (upd, memcpy, kcopy))
        t_copy = min(t_mem, t_k)
        ratio = t_copy / t_upd
        lines.append((label, t_upd, t_mem, t_k, ratio))
        print(f"{label}: update {t_upd:.3f} ms = {moved / t_upd / 1e6:.0f} GB/s; "
              f"D2D memcpy {t_mem:.3f} ms = {moved / t_mem / 1e6:.0f} GB/s; "
              f"copy kernel {t_k:.3f} ms = {moved / t_k / 1e6:.0f} GB/s; "
              f"ratio copy/update {ratio:.2f}", flush=True)
        wall = []
        for _ in range(5):
            t = time.perf_counter()
            sim.launch(integrate, dim=n, inputs=[x, v, dt], device="cuda")
            stream.synchronize()
            wall.append((time.perf_counter() - t) * 1e3)
        print(f"{label}: wall-clock launch+sync {np.median(wall):.3f} ms "
              f"(events say {t_upd:.3f} ms; far smaller would mean the launch is not on this "
              f"stream)", flush=True)
        if t_upd < 0.02 or np.median(wall) > 20 * t_upd + 1.0:
            result(f"particles.stream[{label}]", False,
                   "events do not bracket the kernel: sim.launch is not on CuPy's current stream?")
    label, t_upd, t_mem, t_k, ratio = lines[0]
    result("particles.ratio", ratio >= 0.7,
           f"update/copy bandwidth ratio {ratio:.2f} (target >= 0.7; update {t_upd:.3f} ms, "
           f"copy {min(t_mem, t_k):.3f} ms, {moved / 1e6:.0f} MB moved)")
    del x, v, src, dst
    cp.get_default_memory_pool().free_all_blocks()


def neighbour_check(sim, cp):
    # ---------------------------------------------------------------- B
    @sim.kernel
    def neighbours(grid: sim.uint64, points: sim.array(dtype=sim.vec3), radius: float,
                   counts: sim.array(dtype=sim.int32), id_sums: sim.array(dtype=sim.int64)):
        i = sim.tid()
        p = points[i]
        c = int(0)
        s = sim.int64(0)
        for j in sim.hash_grid_query(grid, p, radius):
            d = points[j] - p
            if sim.dot(d, d) <= radius * radius:
                c += 1
                s += sim.int64(j)
        counts[i] = c
        id_sums[i] = s

    count = 200_000
    side = (count / 40_000) ** (1 / 3)  # about 21 neighbours within 0.05
    raw = np.random.default_rng(1).uniform(0, side, (count, 3)).astype(np.float32)
    quantised = (np.round(raw * 1024) / 1024).astype(np.float32)
    for label, points, radius, exact in (("quantised", quantised, np.float32(51 / 1024), True),
                                         ("float", raw, np.float32(0.05), False)):
        cpu_grid = sim.HashGrid(128, 128, 128)
        cpu_grid.build(points, radius)
        c_cpu = np.zeros(count, np.int32)
        s_cpu = np.zeros(count, np.int64)
        sim.launch(neighbours, dim=count, inputs=[cpu_grid.id, points, radius, c_cpu, s_cpu])
        if cp is None:
            print(f"INFO hashgrid.{label} (CPU only): mean {c_cpu.mean():.2f} neighbours, min "
                  f"{c_cpu.min()}, max {c_cpu.max()}, id-sum total {int(s_cpu.sum())}", flush=True)
            continue
        gpu_grid = sim.HashGrid(128, 128, 128, device="cuda")
        gpu_points = cp.asarray(points)
        gpu_grid.reserve(count)
        stream = cp.cuda.get_current_stream()
        e0, e1, e2 = cp.cuda.Event(), cp.cuda.Event(), cp.cuda.Event()
        c_gpu = cp.full(count, -1, np.int32)
        s_gpu = cp.full(count, -1, np.int64)
        gpu_grid.build(gpu_points, radius)  # compiles the build kernels
        sim.launch(neighbours, dim=count, inputs=[gpu_grid.id, gpu_points, radius, c_gpu, s_gpu],
                   device="cuda")
        stream.synchronize()
        e0.record(stream)
        gpu_grid.build(gpu_points, radius)
        e1.record(stream)
        sim.launch(neighbours, dim=count, inputs=[gpu_grid.id, gpu_points, radius, c_gpu, s_gpu],
                   device="cuda")
        e2.record(stream)
        e2.synchronize()
        t_build, t_query = cp.cuda.get_elapsed_time(e0, e1), cp.cuda.get_elapsed_time(e1, e2)
        cg, sg = c_gpu.get(), s_gpu.get()
        differ = int(np.count_nonzero((cg != c_cpu) | (sg != s_cpu)))
        detail = (f"{count} points, mean {c_cpu.mean():.1f} neighbours (min {c_cpu.min()}), "
                  f"{differ} rows differ; GPU build {t_build:.3f} ms, query {t_query:.3f} ms")
        if differ:
            k = int(np.flatnonzero((cg != c_cpu) | (sg != s_cpu))[0])
            detail += f"; first at {k}: gpu {cg[k]}/{sg[k]} cpu {c_cpu[k]}/{s_cpu[k]}"
        if exact:
            result(f"hashgrid.{label}.exact", differ == 0 and c_cpu.min() >= 1, detail)
        else:
            print(f"INFO hashgrid.{label}: {detail} (FMA contraction may move a few boundary "
                  f"pairs)", flush=True)


if __name__ == "__main__":
    try:
        rc = main()
    except Exception:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        print("FAIL independent: exception (above)")
        rc = 1
    bad = [n for n, ok in RESULTS if not ok]
    print(f"independent: {len(RESULTS) - len(bad)} passed, {len(bad)} failed {bad}", flush=True)
    sys.exit(rc or (1 if bad else 0))
PYEOF
c=$(cap 90 8)
if [ "$HAVE_CUPY" != 1 ]; then
    note "independent: SKIPPED - CuPy is missing"
elif [ "$c" -lt 20 ]; then
    note "independent: NOT RUN (budget spent)"
else
    t0=$(now)
    timeout -k 10 "$c" "$PY" "$WORK/independent.py" >"$OUT/independent.log" 2>&1
    rc=$?
    note "independent: rc $rc in $(($(now) - t0)) s (limit $c s)$( [ $rc = 124 ] && echo ' TIMEOUT')"
    grep -E '^(PASS|FAIL|INFO)|ratio copy|independent:' "$OUT/independent.log" | cut -c1-260 |
        sed 's/^/independent:   /' | tee -a "$SUMMARY"
    [ "$rc" != 0 ] && grep -vE '^(PASS|FAIL|INFO)|ratio copy|independent:' "$OUT/independent.log" | tail -4 |
        cut -c1-240 | sed 's/^/independent:   /' | tee -a "$SUMMARY"
fi

# ---------------------------------------------------------------- 5. summary
if [ "$F_BAD" = 0 ] && [ -n "$FILES" ] && ! grep -qE '^(independent|bench):.*(FAIL|TIMEOUT|rc [1-9])' "$SUMMARY"; then
    note "RESULT: OK"
    finish 0
fi
note "RESULT: PROBLEMS (see above)"
finish 1
