// The fast path's prelude for device code compiled by NVRTC (harness/fastpath/README.md).
// NVRTC has no C or C++ standard library headers. Device code written for nvcc gets, through
// torch/extension.h, <cmath>, <cfloat>, <climits>, <cstdint> and <algorithm>: this prelude gives
// their device-usable parts (integer types, limits macros, std:: math functions, std::min/max),
// and the stub headers beside it (cmath, cfloat, ...) only include it. Included first in every
// device part, as nvcc's implicit includes would be.
#pragma once

#ifndef DBFP_DEVICE_PRELUDE
#define DBFP_DEVICE_PRELUDE 1

// libcu++ defines the integer types and the <climits>/<cfloat> macros for NVRTC (int64_t is
// long long there, as libcu++ has it; 8 bytes either way).
#include <cuda/std/cstdint>
#include <cuda/std/climits>
#include <cuda/std/cfloat>

#ifndef SIZE_MAX
#define SIZE_MAX (18446744073709551615UL)
#endif
#ifndef FLT_RADIX
#define FLT_RADIX 2
#endif
#ifndef FLT_MANT_DIG
#define FLT_MANT_DIG 24
#endif
#ifndef DBL_MANT_DIG
#define DBL_MANT_DIG 53
#endif
#ifndef FLT_DIG
#define FLT_DIG 6
#endif
#ifndef DBL_DIG
#define DBL_DIG 15
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.40282346638528859811704183484516925e+38F
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.17549435082228750796873653722224568e-38F
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.19209289550781250000000000000000000e-7F
#endif
#ifndef FLT_TRUE_MIN
#define FLT_TRUE_MIN 1.40129846432481707092372958328991613e-45F
#endif
#ifndef DBL_MAX
#define DBL_MAX ((double)1.79769313486231570814527423731704357e+308L)
#endif
#ifndef DBL_MIN
#define DBL_MIN ((double)2.22507385850720138309023271733240406e-308L)
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON ((double)2.22044604925031308084726333618164062e-16L)
#endif
#ifndef DBL_TRUE_MIN
#define DBL_TRUE_MIN ((double)4.94065645841246544176568792868221372e-324L)
#endif
#ifndef FLT_MAX_EXP
#define FLT_MAX_EXP 128
#endif
#ifndef DBL_MAX_EXP
#define DBL_MAX_EXP 1024
#endif
#ifndef FLT_MIN_EXP
#define FLT_MIN_EXP (-125)
#endif
#ifndef DBL_MIN_EXP
#define DBL_MIN_EXP (-1021)
#endif

#define INFINITY (__builtin_bit_cast(float, 0x7f800000u))
#define NAN (__builtin_bit_cast(float, 0x7fc00000u))
#define HUGE_VALF INFINITY
#define HUGE_VAL (__builtin_bit_cast(double, 0x7ff0000000000000ul))

#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define M_PIf 3.14159265358979323846f

#ifndef NULL
#define NULL 0
#endif
#ifndef EXIT_SUCCESS
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#endif

// assert() is one of NVRTC's builtins.

namespace std {
using ::int8_t;
using ::int16_t;
using ::int32_t;
using ::int64_t;
using ::uint8_t;
using ::uint16_t;
using ::uint32_t;
using ::uint64_t;
using ::intptr_t;
using ::uintptr_t;
using ::size_t;
using ::ptrdiff_t;
typedef decltype(nullptr) nullptr_t;

template <class T>
__host__ __device__ constexpr const T& min(const T& a, const T& b) { return b < a ? b : a; }
template <class T>
__host__ __device__ constexpr const T& max(const T& a, const T& b) { return a < b ? b : a; }

#define DBFP_UNARY(name)                                                         \
  __device__ __forceinline__ float name(float x) { return ::name##f(x); }        \
  __device__ __forceinline__ double name(double x) { return ::name(x); }
DBFP_UNARY(sqrt)
DBFP_UNARY(cbrt)
DBFP_UNARY(exp)
DBFP_UNARY(exp2)
DBFP_UNARY(expm1)
DBFP_UNARY(log)
DBFP_UNARY(log2)
DBFP_UNARY(log10)
DBFP_UNARY(log1p)
DBFP_UNARY(sin)
DBFP_UNARY(cos)
DBFP_UNARY(tan)
DBFP_UNARY(asin)
DBFP_UNARY(acos)
DBFP_UNARY(atan)
DBFP_UNARY(sinh)
DBFP_UNARY(cosh)
DBFP_UNARY(tanh)
DBFP_UNARY(asinh)
DBFP_UNARY(acosh)
DBFP_UNARY(atanh)
DBFP_UNARY(erf)
DBFP_UNARY(erfc)
DBFP_UNARY(tgamma)
DBFP_UNARY(lgamma)
DBFP_UNARY(floor)
DBFP_UNARY(ceil)
DBFP_UNARY(round)
DBFP_UNARY(trunc)
DBFP_UNARY(rint)
DBFP_UNARY(nearbyint)
DBFP_UNARY(fabs)
#undef DBFP_UNARY

#define DBFP_BINARY(name)                                                                   \
  __device__ __forceinline__ float name(float x, float y) { return ::name##f(x, y); }       \
  __device__ __forceinline__ double name(double x, double y) { return ::name(x, y); }
DBFP_BINARY(pow)
DBFP_BINARY(fmin)
DBFP_BINARY(fmax)
DBFP_BINARY(fmod)
DBFP_BINARY(atan2)
DBFP_BINARY(hypot)
DBFP_BINARY(copysign)
DBFP_BINARY(remainder)
DBFP_BINARY(fdim)
#undef DBFP_BINARY

__device__ __forceinline__ float pow(float x, int y) { return ::powf(x, (float)y); }
__device__ __forceinline__ double pow(double x, int y) { return ::pow(x, (double)y); }
__device__ __forceinline__ float fma(float x, float y, float z) { return ::fmaf(x, y, z); }
__device__ __forceinline__ double fma(double x, double y, double z) { return ::fma(x, y, z); }
__device__ __forceinline__ float abs(float x) { return ::fabsf(x); }
__device__ __forceinline__ double abs(double x) { return ::fabs(x); }
__device__ __forceinline__ int abs(int x) { return ::abs(x); }
__device__ __forceinline__ long abs(long x) { return ::labs(x); }
__device__ __forceinline__ long long abs(long long x) { return ::llabs(x); }
__device__ __forceinline__ bool isnan(float x) { return ::isnan(x); }
__device__ __forceinline__ bool isnan(double x) { return ::isnan(x); }
__device__ __forceinline__ bool isinf(float x) { return ::isinf(x); }
__device__ __forceinline__ bool isinf(double x) { return ::isinf(x); }
__device__ __forceinline__ bool isfinite(float x) { return ::isfinite(x); }
__device__ __forceinline__ bool isfinite(double x) { return ::isfinite(x); }
__device__ __forceinline__ bool signbit(float x) { return ::signbit(x); }
__device__ __forceinline__ bool signbit(double x) { return ::signbit(x); }
}  // namespace std

#endif  // DBFP_DEVICE_PRELUDE
