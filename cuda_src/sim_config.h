// Portability layer shared by every header in cuda_src/.
//
// These headers compile as host C++ (g++, for the host library built by
// setup.py) and as CUDA device code under NVRTC, which finds no system
// headers: nothing here may include <cstdint>, <cmath> or any other system
// header. Fixed-width integers and math come from the definitions below.
#ifndef SIM_CONFIG_H
#define SIM_CONFIG_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SIM_DEVICE_COMPILE 1
#define SIM_FUNC __host__ __device__ inline
// Entry points: C ABI, external linkage, callable from Numba-generated code.
#define SIM_EXPORT extern "C" __device__
#else
#define SIM_FUNC inline
#ifdef _MSC_VER
#define SIM_EXPORT extern "C" __declspec(dllexport)
#else
#define SIM_EXPORT extern "C" __attribute__((visibility("default")))
#endif
#endif

namespace sim {

typedef signed char int8;
typedef unsigned char uint8;
typedef short int16;
typedef unsigned short uint16;
typedef int int32;
typedef unsigned int uint32;
typedef long long int64;
typedef unsigned long long uint64;

static_assert(sizeof(int32) == 4 && sizeof(int64) == 8, "unexpected integer sizes");

// Math wrappers: compiler built-ins on the host, CUDA device built-ins
// (available in NVRTC without headers) on the device.
#ifdef SIM_DEVICE_COMPILE
SIM_FUNC float sqrt_f(float x) { return sqrtf(x); }
SIM_FUNC float abs_f(float x) { return fabsf(x); }
SIM_FUNC float min_f(float a, float b) { return fminf(a, b); }
SIM_FUNC float max_f(float a, float b) { return fmaxf(a, b); }
#else
SIM_FUNC float sqrt_f(float x) { return __builtin_sqrtf(x); }
SIM_FUNC float abs_f(float x) { return __builtin_fabsf(x); }
SIM_FUNC float min_f(float a, float b) { return __builtin_fminf(a, b); }
SIM_FUNC float max_f(float a, float b) { return __builtin_fmaxf(a, b); }
#endif

SIM_FUNC float clamp_f(float x, float lo, float hi) { return min_f(max_f(x, lo), hi); }

}  // namespace sim

#endif  // SIM_CONFIG_H
