"""The builtins on a real GPU agree with the CPU: the per-type functions of
tests/test_builtins.py run as CUDA kernels and are compared with the compiled CPU
results.  Operations the CPU computes exactly (rounding, min/max, signs,
constructions) must match bit for bit; the others within their tolerance plus a
few ulps of the operands' scale (libdevice's functions and the fused
multiply-adds NVVM contracts differ from libm and the CPU's separate roundings).
"""

import numpy as np
import pytest
from numba import cuda
from test_builtins import GROUPS, Env, bound, close, flat, generated, run_compiled, sample_inputs

import numba_sim as sim

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")

GPU_EXTRA_TOLERANCE = 8


@pytest.mark.parametrize("group_name", list(GROUPS))
def test_builtins_on_gpu_match_cpu(group_name):
    group = GROUPS[group_name]
    fn, names, layout, size = generated(group_name)
    kernel = cuda.jit(extensions=[sim.cuda_args])(fn)
    for trial in range(2):
        inputs = sample_inputs(group, trial)
        on_cpu = run_compiled(group, inputs)
        out = cuda.to_device(np.full(size, -12345.0))
        kernel[1, 1](out, *[inputs[n] for n in names])
        on_gpu = out.copy_to_host()
        env = Env(inputs)
        for case, cpu, where in zip(group.cases, on_cpu, layout):
            tolerance = case.tol + GPU_EXTRA_TOLERANCE if case.tol else 0
            limit = bound(group, case, env, flat(case.reference(env)), tolerance)
            ok, error = close(on_gpu[where], cpu, limit, case.sign_free)
            assert ok, f"{group.name}: {case.expr}: GPU {on_gpu[where]} != CPU {cpu} ({error:.3g})"
