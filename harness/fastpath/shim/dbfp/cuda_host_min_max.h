// The host min and max of nvcc for the fast path's cuda_sources glue. nvcc gives every .cu file
// cuda_runtime.h, which declares in the global namespace, for host code too, min(int, int) and
// max(int, int) and overloads for the other integer pairs and for float and double
// (crt/math_functions.h): host code of cuda_sources may call min/max unqualified under torch's
// build. This is the same overload set with the same results: an integer pair of mixed signedness
// compares as the unsigned type; float and double pairs use fminf/fmin/fmaxf/fmax (a NaN operand
// gives the other one, unlike std::min). Linkage as in CUDA's headers (the int pair inline, the rest
// static inline), so a candidate that redefines one fails here as under nvcc. Nothing else of
// CUDA's host math is declared, and the cpp_sources glue (g++ there too) does not get these.
#pragma once

#include <math.h>

#define DBFP_HOST_MIN_MAX(NAME, OP, FLOAT_FN, DOUBLE_FN)                                                      \
  inline int NAME(const int a, const int b) { return a OP b ? a : b; }                                      \
  static inline unsigned int NAME(const unsigned int a, const unsigned int b) { return a OP b ? a : b; }    \
  static inline unsigned int NAME(const int a, const unsigned int b) {                                      \
    return NAME(static_cast<unsigned int>(a), b);                                                           \
  }                                                                                                         \
  static inline unsigned int NAME(const unsigned int a, const int b) {                                      \
    return NAME(a, static_cast<unsigned int>(b));                                                           \
  }                                                                                                         \
  static inline long int NAME(const long int a, const long int b) { return a OP b ? a : b; }                \
  static inline unsigned long int NAME(const unsigned long int a, const unsigned long int b) {              \
    return a OP b ? a : b;                                                                                  \
  }                                                                                                         \
  static inline unsigned long int NAME(const long int a, const unsigned long int b) {                       \
    return NAME(static_cast<unsigned long int>(a), b);                                                      \
  }                                                                                                         \
  static inline unsigned long int NAME(const unsigned long int a, const long int b) {                       \
    return NAME(a, static_cast<unsigned long int>(b));                                                      \
  }                                                                                                         \
  static inline long long int NAME(const long long int a, const long long int b) { return a OP b ? a : b; } \
  static inline unsigned long long int NAME(const unsigned long long int a, const unsigned long long int b) { \
    return a OP b ? a : b;                                                                                  \
  }                                                                                                         \
  static inline unsigned long long int NAME(const long long int a, const unsigned long long int b) {        \
    return NAME(static_cast<unsigned long long int>(a), b);                                                 \
  }                                                                                                         \
  static inline unsigned long long int NAME(const unsigned long long int a, const long long int b) {        \
    return NAME(a, static_cast<unsigned long long int>(b));                                                 \
  }                                                                                                         \
  static inline float NAME(const float a, const float b) { return FLOAT_FN(a, b); }                         \
  static inline double NAME(const double a, const double b) { return DOUBLE_FN(a, b); }                     \
  static inline double NAME(const float a, const double b) { return DOUBLE_FN(static_cast<double>(a), b); } \
  static inline double NAME(const double a, const float b) { return DOUBLE_FN(a, static_cast<double>(b)); }

DBFP_HOST_MIN_MAX(min, <, fminf, fmin)
DBFP_HOST_MIN_MAX(max, >, fmaxf, fmax)
#undef DBFP_HOST_MIN_MAX
