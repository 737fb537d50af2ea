"""Warp's mathematical constants (warp/_src/constants.py): Python floats, so inside a
kernel or func they are float32, as Warp's ``wp.constant`` floats are (the kernel rewrite
types the floats it reads from globals float32), and float64 in host code."""

import math

E = e = 2.71828182845904523536
LOG2E = log2e = 1.44269504088896340736
LOG10E = log10e = 0.43429448190325182765
LN2 = ln2 = 0.69314718055994530942
LN10 = ln10 = 2.30258509299404568402
PHI = phi = 1.61803398874989484820
PI = pi = 3.14159265358979323846
HALF_PI = half_pi = 1.57079632679489661923
TAU = tau = 6.28318530717958647692
INF = inf = math.inf
NAN = nan = float("nan")

__all__ = ["E", "e", "LOG2E", "log2e", "LOG10E", "log10e", "LN2", "ln2", "LN10", "ln10",
           "PHI", "phi", "PI", "pi", "HALF_PI", "half_pi", "TAU", "tau", "INF", "inf", "NAN",
           "nan"]
