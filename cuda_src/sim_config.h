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

// Host entry points that do most of a query's work are built twice on x86-64
// with GCC or Clang, with everything they call inlined: for the baseline CPU
// and for AVX2 + FMA (x86-64-v3), the loader picking the one the CPU runs
// (function multiversioning). Elsewhere, and on the device, this is nothing.
#if !defined(SIM_DEVICE_COMPILE) && defined(__x86_64__) && defined(__GNUC__) && \
    defined(__ELF__) && !defined(SIM_NO_CLONES)
#define SIM_HOT __attribute__((flatten, target_clones("arch=x86-64-v3", "default")))
#else
#define SIM_HOT
#endif

// Compile-time field offsets for layout checks. NVRTC has no <cstddef>, and
// NVRTC 13.0 has no __builtin_offsetof either (13.5 has): where it is missing
// the offset checks are left to the host build of the same header (the sizes
// are still checked on both sides).
#if !defined(SIM_DEVICE_COMPILE)
#define SIM_HAS_OFFSETOF 1
#elif defined(__has_builtin)
#if __has_builtin(__builtin_offsetof)
#define SIM_HAS_OFFSETOF 1
#endif
#endif
#ifdef SIM_HAS_OFFSETOF
#define SIM_ASSERT_OFFSET(type, field, offset, message) \
    static_assert(__builtin_offsetof(type, field) == (offset), message)
#else
#define SIM_ASSERT_OFFSET(type, field, offset, message) static_assert(true, message)
#endif

// No contraction of a * b + c into fused multiply-adds in host code (GCC
// contracts by default wherever the target has FMA, as the x86-64-v3 clones
// below do): the host library computes what Warp's CPU code computes, in the
// same roundings. Explicit fmaf calls are kept. (NVRTC contracts on the
// device, as Warp's CUDA code does.)
#if !defined(SIM_DEVICE_COMPILE)
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
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

// Leading zero bits of x (32 for 0), +infinity, arc cosine and float atomic
// add. On the host atomic_add_f is a plain add: host code that calls it runs
// it on one thread.
#ifdef SIM_DEVICE_COMPILE
SIM_FUNC int32 clz_u32(uint32 x) { return __clz((int)x); }
SIM_FUNC float inf_f() { return __int_as_float(0x7f800000); }
SIM_FUNC float acos_f(float x) { return acosf(x); }
SIM_FUNC float atan2_f(float y, float x) { return atan2f(y, x); }
SIM_FUNC void atomic_add_f(float* p, float v) { atomicAdd(p, v); }
#else
SIM_FUNC int32 clz_u32(uint32 x) { return x == 0 ? 32 : __builtin_clz(x); }
SIM_FUNC float inf_f() { return __builtin_huge_valf(); }
SIM_FUNC float acos_f(float x) { return __builtin_acosf(x); }
SIM_FUNC float atan2_f(float y, float x) { return __builtin_atan2f(y, x); }
SIM_FUNC void atomic_add_f(float* p, float v) { *p += v; }
#endif

}  // namespace sim

#endif  // SIM_CONFIG_H
