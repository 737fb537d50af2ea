"""Scalar types as annotations and casts (Warp's names), as NumPy's scalar types.

``sim.float32(x)`` converts in Python, in compiled code and in kernels alike,
because Numba types NumPy's scalar constructors as casts.  In annotations,
Python's ``float`` means float32 and ``int`` means int32 (Warp's rule).
"""

import numpy as np

float16 = np.float16
float32 = np.float32
float64 = np.float64
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
uint16 = np.uint16
uint32 = np.uint32
uint64 = np.uint64
bool = np.bool_

__all__ = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "bool"]
