// The torch:: namespace of the fast path's shim: what torch/types.h declares on top of at::.
#pragma once

#include "dbfp/torch_core.h"

namespace torch {
using namespace at;  // as torch/types.h does
using std::nullopt;
using std::optional;
using Dtype = at::ScalarType;
constexpr auto kUInt8 = at::kByte;
constexpr auto kInt8 = at::kChar;
constexpr auto kInt16 = at::kShort;
constexpr auto kInt32 = at::kInt;
constexpr auto kInt64 = at::kLong;
constexpr auto kUInt16 = at::ScalarType::UInt16;
constexpr auto kUInt32 = at::ScalarType::UInt32;
constexpr auto kUInt64 = at::ScalarType::UInt64;
constexpr auto kFloat16 = at::kHalf;
constexpr auto kFloat32 = at::kFloat;
constexpr auto kFloat64 = at::kDouble;
constexpr auto kU8 = kUInt8;
constexpr auto kI8 = kInt8;
constexpr auto kI16 = kInt16;
constexpr auto kI32 = kInt32;
constexpr auto kI64 = kInt64;
constexpr auto kF16 = kFloat16;
constexpr auto kF32 = kFloat32;
constexpr auto kF64 = kFloat64;
}  // namespace torch

#include "dbfp/tensor_data_container.h"

// AT_DISPATCH_*: the three type families whose kernels the fast path instantiates by name.
namespace dbfp {
inline c10::ScalarType dispatch_type(c10::ScalarType t) { return t; }
}  // namespace dbfp
#define DBFP_DISPATCH_CASE(ENUM, TYPE, ...) \
  case ::c10::ScalarType::ENUM: {           \
    using scalar_t = TYPE;                  \
    return __VA_ARGS__();                   \
  }
#define DBFP_DISPATCH_FAIL(NAME, ST)                                                                          \
  default:                                                                                                   \
    throw ::c10::NotImplementedError(::c10::str('"', NAME, "\" not implemented for '", ::c10::toString(ST), "'"))
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...)                         \
  [&] {                                                                     \
    const ::c10::ScalarType dbfp_st_ = ::dbfp::dispatch_type(TYPE);         \
    switch (dbfp_st_) {                                                     \
      DBFP_DISPATCH_CASE(Double, double, __VA_ARGS__)                       \
      DBFP_DISPATCH_CASE(Float, float, __VA_ARGS__)                         \
      DBFP_DISPATCH_FAIL(NAME, dbfp_st_);                                   \
    }                                                                       \
  }()
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...)                         \
  [&] {                                                                     \
    const ::c10::ScalarType dbfp_st_ = ::dbfp::dispatch_type(TYPE);         \
    switch (dbfp_st_) {                                                     \
      DBFP_DISPATCH_CASE(Byte, uint8_t, __VA_ARGS__)                        \
      DBFP_DISPATCH_CASE(Char, int8_t, __VA_ARGS__)                         \
      DBFP_DISPATCH_CASE(Int, int32_t, __VA_ARGS__)                         \
      DBFP_DISPATCH_CASE(Long, int64_t, __VA_ARGS__)                        \
      DBFP_DISPATCH_CASE(Short, int16_t, __VA_ARGS__)                       \
      DBFP_DISPATCH_FAIL(NAME, dbfp_st_);                                   \
    }                                                                       \
  }()
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...)                              \
  [&] {                                                                     \
    const ::c10::ScalarType dbfp_st_ = ::dbfp::dispatch_type(TYPE);         \
    switch (dbfp_st_) {                                                     \
      DBFP_DISPATCH_CASE(Byte, uint8_t, __VA_ARGS__)                        \
      DBFP_DISPATCH_CASE(Char, int8_t, __VA_ARGS__)                         \
      DBFP_DISPATCH_CASE(Int, int32_t, __VA_ARGS__)                         \
      DBFP_DISPATCH_CASE(Long, int64_t, __VA_ARGS__)                        \
      DBFP_DISPATCH_CASE(Short, int16_t, __VA_ARGS__)                       \
      DBFP_DISPATCH_CASE(Double, double, __VA_ARGS__)                       \
      DBFP_DISPATCH_CASE(Float, float, __VA_ARGS__)                         \
      DBFP_DISPATCH_FAIL(NAME, dbfp_st_);                                   \
    }                                                                       \
  }()
