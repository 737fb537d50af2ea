"""What the physics layer's CUDA code may hold of float64: nothing of its own.

``assert_float32_only(ptx)`` allows only libdevice's ``sinf``/``cosf`` reduction of huge
arguments (Payne-Hanek: an integer times pi/2 * 2^-64 in float64, then back to float32),
which any kernel calling ``sin``/``cos`` carries, and float32 -> float64 conversions
for ``printf`` (``cvt.f64.f32``).
"""

PAYNE_HANEK = "0d3BF921FB54442D19"  # pi/2 * 2^-64
ALLOWED = ("cvt.rn.f64.s64", "cvt.rn.f32.f64", "cvt.f64.f32", ".reg .f64")


def assert_float32_only(ptx):
    f64 = [line.strip() for line in ptx.splitlines() if ".f64" in line]
    stray = [line for line in f64 if not line.startswith(ALLOWED)
             and not (line.startswith("mul.f64") and PAYNE_HANEK in line)]
    assert not stray, stray
