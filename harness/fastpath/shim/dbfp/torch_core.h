// The fast path's stand-in for the part of libtorch's C++ API that candidate host code uses
// (harness/fastpath/README.md lists it). Every call forwards through the dbfp_api table
// (dbfp/abi.h) to real ATen in the dicebench_fastpath_native module, so results are the same
// tensors ATen would give. What is not declared here does not compile, and the candidate falls
// back to torch's own toolchain: that is how unsupported host code is found.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dbfp/abi.h"

#define DBFP_EXPORT extern "C" __attribute__((visibility("default")))

namespace dbfp {
// Set by dbfp_glue_init. Code that runs while the glue is being loaded (a tensor made by a
// static initializer) finds the table through the variable the module sets before loading.
inline const dbfp_api* g_api = nullptr;
inline const dbfp_api& api() {
  if (__builtin_expect(g_api == nullptr, 0)) {
    const char* address = std::getenv("DICEBENCH_FASTPATH_API");
    if (address) g_api = reinterpret_cast<const dbfp_api*>(std::strtoull(address, nullptr, 16));
  }
  return *g_api;
}
}  // namespace dbfp

// ------------------------------------------------------------------------------------------
// c10: scalar types, devices, errors, ArrayRef, Half, Scalar
namespace c10 {

enum class ScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7, ComplexHalf = 8,
  ComplexFloat = 9, ComplexDouble = 10, Bool = 11, QInt8 = 12, QUInt8 = 13, QInt32 = 14, BFloat16 = 15,
  Float8_e5m2 = 23, Float8_e4m3fn = 24, UInt16 = 27, UInt32 = 28, UInt64 = 29, Undefined = 46
};
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kComplexFloat = ScalarType::ComplexFloat;
constexpr ScalarType kComplexDouble = ScalarType::ComplexDouble;
constexpr ScalarType kUInt16 = ScalarType::UInt16;
constexpr ScalarType kUInt32 = ScalarType::UInt32;
constexpr ScalarType kUInt64 = ScalarType::UInt64;

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 14 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kMeta = DeviceType::Meta;
using DeviceIndex = int8_t;

enum class Layout : int8_t { Strided = 0, Sparse = 1 };
constexpr Layout kStrided = Layout::Strided;
constexpr Layout kSparse = Layout::Sparse;

enum class MemoryFormat : int8_t { Contiguous = 0, Preserve = 1, ChannelsLast = 2, ChannelsLast3d = 3 };

using std::nullopt;
using std::optional;
using nullopt_t = std::nullopt_t;

inline const char* toString(ScalarType t) { return dbfp::api().scalar_type_name(static_cast<int32_t>(t)); }
inline std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << toString(t); }

inline std::size_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: case ScalarType::QInt8:
    case ScalarType::QUInt8: case ScalarType::Float8_e5m2: case ScalarType::Float8_e4m3fn: return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: case ScalarType::UInt16: return 2;
    case ScalarType::Int: case ScalarType::Float: case ScalarType::QInt32: case ScalarType::UInt32:
    case ScalarType::ComplexHalf: return 4;
    case ScalarType::Long: case ScalarType::Double: case ScalarType::ComplexFloat: case ScalarType::UInt64: return 8;
    case ScalarType::ComplexDouble: return 16;
    default: return 0;
  }
}
inline bool isFloatingType(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::BFloat16 ||
         t == ScalarType::Float8_e5m2 || t == ScalarType::Float8_e4m3fn;
}
inline bool isIntegralType(ScalarType t, bool include_bool) {
  return t == ScalarType::Byte || t == ScalarType::Char || t == ScalarType::Short || t == ScalarType::Int ||
         t == ScalarType::Long || t == ScalarType::UInt16 || t == ScalarType::UInt32 || t == ScalarType::UInt64 ||
         (include_bool && t == ScalarType::Bool);
}
inline bool isComplexType(ScalarType t) {
  return t == ScalarType::ComplexHalf || t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble;
}

// Errors: c10::Error is what TORCH_CHECK throws; the bound function's wrapper turns each into the
// Python exception torch would raise.
class Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& msg() const { return message_; }

 private:
  std::string message_;
};
class ValueError : public Error { using Error::Error; };
class TypeError : public Error { using Error::Error; };
class IndexError : public Error { using Error::Error; };
class NotImplementedError : public Error { using Error::Error; };
class LinAlgError : public Error { using Error::Error; };
class OutOfMemoryError : public Error { using Error::Error; };

template <class T>
class ArrayRef;

namespace detail {
inline void str_into(std::ostringstream&) {}
template <class T, class... R>
void str_into(std::ostringstream& out, const T& first, const R&... rest) {
  out << first;
  str_into(out, rest...);
}
}  // namespace detail

template <class... A>
std::string str(const A&... args) {
  std::ostringstream out;
  detail::str_into(out, args...);
  return out.str();
}
inline std::string str() { return std::string(); }
inline std::string str(const char* s) { return s; }
inline std::string str(const std::string& s) { return s; }

template <class T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;
  using size_type = std::size_t;

  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}
  constexpr ArrayRef(const T* data, std::size_t size) : data_(data), size_(size) {}
  constexpr ArrayRef(const T* begin, const T* end) : data_(begin), size_(static_cast<std::size_t>(end - begin)) {}
  template <class A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), size_(v.size()) {}
  template <std::size_t N>
  constexpr ArrayRef(const std::array<T, N>& a) : data_(a.data()), size_(N) {}
  template <std::size_t N>
  constexpr ArrayRef(const T (&a)[N]) : data_(a), size_(N) {}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  // Like ATen's: valid until the end of the full expression that holds the braced list.
  constexpr ArrayRef(const std::initializer_list<T>& list)
      : data_(list.begin() == list.end() ? nullptr : list.begin()), size_(list.size()) {}
#pragma GCC diagnostic pop

  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T* cbegin() const { return data_; }
  constexpr const T* cend() const { return data_ + size_; }
  constexpr const T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  constexpr const T& operator[](std::size_t i) const { return data_[i]; }
  const T& at(std::size_t i) const {
    if (i >= size_) throw IndexError(str("ArrayRef: invalid index Index = ", i, "; Length = ", size_));
    return data_[i];
  }
  bool equals(ArrayRef other) const {
    return size_ == other.size_ && std::equal(begin(), end(), other.begin());
  }
  ArrayRef slice(std::size_t start, std::size_t n) const { return ArrayRef(data_ + start, n); }
  ArrayRef slice(std::size_t start) const { return ArrayRef(data_ + start, size_ - start); }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  operator std::vector<T>() const { return vec(); }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};
template <class T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) { return a.equals(b); }
template <class T>
bool operator!=(ArrayRef<T> a, ArrayRef<T> b) { return !a.equals(b); }
template <class T>
bool operator==(const std::vector<T>& a, ArrayRef<T> b) { return ArrayRef<T>(a).equals(b); }
template <class T>
bool operator==(ArrayRef<T> a, const std::vector<T>& b) { return a.equals(ArrayRef<T>(b)); }
template <class T>
std::ostream& operator<<(std::ostream& out, ArrayRef<T> list) {
  out << "[";
  for (std::size_t i = 0; i < list.size(); ++i) out << (i ? ", " : "") << list[i];
  return out << "]";
}
using IntArrayRef = ArrayRef<int64_t>;
using OptionalIntArrayRef = std::optional<IntArrayRef>;

struct Device {
  Device(DeviceType type, DeviceIndex index = -1) : type_(type), index_(index) {}
  explicit Device(const std::string& text) {
    std::string name = text.substr(0, text.find(':'));
    if (name == "cuda") type_ = DeviceType::CUDA;
    else if (name == "cpu") type_ = DeviceType::CPU;
    else if (name == "meta") type_ = DeviceType::Meta;
    else throw Error("Expected one of cpu, cuda, meta device type at start of device string: " + text);
    if (text.find(':') != std::string::npos) index_ = static_cast<DeviceIndex>(std::stoi(text.substr(text.find(':') + 1)));
  }
  Device(const char* text) : Device(std::string(text)) {}
  DeviceType type() const { return type_; }
  DeviceIndex index() const { return index_; }
  bool has_index() const { return index_ != -1; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_meta() const { return type_ == DeviceType::Meta; }
  void set_index(DeviceIndex index) { index_ = index; }
  std::string str() const {
    std::string s = type_ == DeviceType::CUDA ? "cuda" : type_ == DeviceType::CPU ? "cpu" : "meta";
    if (has_index()) s += ":" + std::to_string(static_cast<int>(index_));
    return s;
  }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  DeviceType type_ = DeviceType::CPU;
  DeviceIndex index_ = -1;
};
inline std::ostream& operator<<(std::ostream& out, const Device& d) { return out << d.str(); }
inline std::ostream& operator<<(std::ostream& out, DeviceType t) {
  return out << (t == DeviceType::CUDA ? "cuda" : t == DeviceType::CPU ? "cpu" : "meta");
}

// What Tensor::dtype() returns: compares with ScalarType.
class TypeMeta {
 public:
  TypeMeta() = default;
  TypeMeta(ScalarType t) : type_(t) {}
  ScalarType toScalarType() const { return type_; }
  std::size_t itemsize() const { return elementSize(type_); }
  const char* name() const { return toString(type_); }
  bool operator==(const TypeMeta& o) const { return type_ == o.type_; }
  bool operator!=(const TypeMeta& o) const { return type_ != o.type_; }
  operator ScalarType() const { return type_; }
  template <class T>
  static TypeMeta Make();

 private:
  ScalarType type_ = ScalarType::Undefined;
};
inline bool operator==(const TypeMeta& a, ScalarType b) { return a.toScalarType() == b; }
inline bool operator==(ScalarType a, const TypeMeta& b) { return a == b.toScalarType(); }
inline bool operator!=(const TypeMeta& a, ScalarType b) { return a.toScalarType() != b; }
inline bool operator!=(ScalarType a, const TypeMeta& b) { return a != b.toScalarType(); }
inline std::ostream& operator<<(std::ostream& out, const TypeMeta& t) { return out << t.name(); }
inline ScalarType typeMetaToScalarType(TypeMeta t) { return t.toScalarType(); }

// Storage-only half-precision types: host code passes their pointers to kernels.
struct Half {
  uint16_t x = 0;
  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }
  Half() = default;
  constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}
  Half(float value) {
    uint32_t f;
    std::memcpy(&f, &value, 4);
    uint32_t sign = (f >> 16) & 0x8000u;
    uint32_t mant = f & 0x7fffffu;
    int32_t exp = static_cast<int32_t>((f >> 23) & 0xffu) - 127 + 15;
    if (((f >> 23) & 0xffu) == 0xffu) {
      x = static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
    } else if (exp >= 0x1f) {
      x = static_cast<uint16_t>(sign | 0x7c00u);
    } else if (exp <= 0) {
      if (exp < -10) {
        x = static_cast<uint16_t>(sign);
      } else {
        mant |= 0x800000u;
        uint32_t shift = static_cast<uint32_t>(14 - exp);
        uint32_t half_mant = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
        x = static_cast<uint16_t>(sign | half_mant);
      }
    } else {
      uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
      uint32_t rem = mant & 0x1fffu;
      if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
      x = static_cast<uint16_t>(h);
    }
  }
  operator float() const {
    uint32_t sign = (static_cast<uint32_t>(x) & 0x8000u) << 16;
    uint32_t exp = (x >> 10) & 0x1fu, mant = x & 0x3ffu, f;
    if (exp == 0) {
      if (mant == 0) {
        f = sign;
      } else {
        int e = -1;
        do {
          ++e;
          mant <<= 1;
        } while ((mant & 0x400u) == 0);
        f = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
      }
    } else if (exp == 0x1f) {
      f = sign | 0x7f800000u | (mant << 13);
    } else {
      f = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float out;
    std::memcpy(&out, &f, 4);
    return out;
  }
};
struct BFloat16 {
  uint16_t x = 0;
  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }
  BFloat16() = default;
  constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  BFloat16(float value) {
    uint32_t f;
    std::memcpy(&f, &value, 4);
    if (std::isnan(value)) {
      x = 0x7fc0u;
    } else {
      uint32_t rounding_bias = 0x7fffu + ((f >> 16) & 1u);
      x = static_cast<uint16_t>((f + rounding_bias) >> 16);
    }
  }
  operator float() const {
    uint32_t f = static_cast<uint32_t>(x) << 16;
    float out;
    std::memcpy(&out, &f, 4);
    return out;
  }
};
template <class T>
struct complex {
  T real_, imag_;
};

template <class T>
struct CppTypeToScalarType;
#define DBFP_SCALAR_OF(T, S) \
  template <>                \
  struct CppTypeToScalarType<T> { static constexpr ScalarType value = ScalarType::S; };
DBFP_SCALAR_OF(uint8_t, Byte)
DBFP_SCALAR_OF(int8_t, Char)
DBFP_SCALAR_OF(int16_t, Short)
DBFP_SCALAR_OF(int, Int)
DBFP_SCALAR_OF(int64_t, Long)
DBFP_SCALAR_OF(Half, Half)
DBFP_SCALAR_OF(float, Float)
DBFP_SCALAR_OF(double, Double)
DBFP_SCALAR_OF(bool, Bool)
DBFP_SCALAR_OF(BFloat16, BFloat16)
DBFP_SCALAR_OF(uint16_t, UInt16)
DBFP_SCALAR_OF(uint32_t, UInt32)
DBFP_SCALAR_OF(uint64_t, UInt64)
DBFP_SCALAR_OF(complex<float>, ComplexFloat)
DBFP_SCALAR_OF(complex<double>, ComplexDouble)
#undef DBFP_SCALAR_OF

template <class T>
TypeMeta TypeMeta::Make() { return TypeMeta(CppTypeToScalarType<T>::value); }

// A number argument of an operator (int, floating or bool).
class Scalar {
 public:
  enum class Tag { Int, Double, Bool };
  Scalar() : Scalar(int64_t(0)) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : tag_(Tag::Int), i_(static_cast<int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : tag_(Tag::Double), d_(static_cast<double>(v)) {}
  Scalar(bool v) : tag_(Tag::Bool), i_(v ? 1 : 0) {}
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}
  bool isIntegral(bool include_bool) const { return tag_ == Tag::Int || (include_bool && tag_ == Tag::Bool); }
  bool isFloatingPoint() const { return tag_ == Tag::Double; }
  bool isBoolean() const { return tag_ == Tag::Bool; }
  double toDouble() const { return tag_ == Tag::Double ? d_ : static_cast<double>(i_); }
  float toFloat() const { return static_cast<float>(toDouble()); }
  int64_t toLong() const { return tag_ == Tag::Double ? static_cast<int64_t>(d_) : i_; }
  int toInt() const { return static_cast<int>(toLong()); }
  bool toBool() const { return tag_ == Tag::Double ? d_ != 0 : i_ != 0; }
  Half toHalf() const { return Half(toFloat()); }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return toBool();
    else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(toDouble());
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(toFloat());
    else return static_cast<T>(toLong());
  }
  Tag tag() const { return tag_; }
  int64_t raw_int() const { return i_; }
  double raw_double() const { return d_; }

 private:
  Tag tag_;
  int64_t i_ = 0;
  double d_ = 0;
};
inline std::ostream& operator<<(std::ostream& out, const Scalar& s) {
  if (s.isFloatingPoint()) return out << s.toDouble();
  if (s.isBoolean()) return out << (s.toBool() ? "true" : "false");
  return out << s.toLong();
}

}  // namespace c10

namespace caffe2 {
using c10::TypeMeta;
}

// ------------------------------------------------------------------------------------------
// Checks (TORCH_CHECK and friends): the messages torch builds.
#define DBFP_CHECK_IMPL(ERROR, cond, ...)                                                         \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      throw ERROR(::dbfp::check_message("Expected " #cond " to be true, but got false.  "         \
                                        "(Could this error message be improved?  If so, please "  \
                                        "report an enhancement request to PyTorch.)",             \
                                        ##__VA_ARGS__));                                          \
    }                                                                                             \
  } while (false)
#define TORCH_CHECK(cond, ...) DBFP_CHECK_IMPL(::c10::Error, cond, ##__VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) DBFP_CHECK_IMPL(::c10::ValueError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) DBFP_CHECK_IMPL(::c10::TypeError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) DBFP_CHECK_IMPL(::c10::IndexError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) DBFP_CHECK_IMPL(::c10::NotImplementedError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_LINALG(cond, ...) DBFP_CHECK_IMPL(::c10::LinAlgError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_WITH(error_t, cond, ...) DBFP_CHECK_IMPL(::c10::error_t, cond, ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...) DBFP_CHECK_IMPL(::c10::Error, cond, ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) do { } while (false)
#define AT_ASSERT(cond, ...) DBFP_CHECK_IMPL(::c10::Error, cond, ##__VA_ARGS__)
#define AT_ASSERTM(cond, ...) DBFP_CHECK_IMPL(::c10::Error, cond, ##__VA_ARGS__)
#define AT_ERROR(...) throw ::c10::Error(::c10::str(__VA_ARGS__))
#define TORCH_WARN(...) ::dbfp::api().warn(::c10::str(__VA_ARGS__).c_str())
#define TORCH_WARN_ONCE(...)                                                   \
  do {                                                                         \
    static bool dbfp_warned_ = (::dbfp::api().warn(::c10::str(__VA_ARGS__).c_str()), true); \
    (void)dbfp_warned_;                                                        \
  } while (false)
// TORCH_CHECK_EQ and friends: an expression, as torch's (c10's MessageLogger at FATAL severity,
// told not to abort): on failure the message, which more << can extend, goes to stderr with the
// logger's prefix and is thrown as c10::Error when the full expression ends. The operands are
// evaluated again for the message, as in torch.
#define DBFP_CHECK_OP(val1, val2, op)                                                                  \
  ((val1)op(val2)) ? (void)0                                                                           \
                   : ::dbfp::CheckOpVoidify() & ::dbfp::CheckOpFailure(__FILE__, __LINE__).stream()  \
                                                    << "Check failed: " #val1 " " #op " " #val2 " ("  \
                                                    << (val1) << " vs. " << (val2) << "). "
#define TORCH_CHECK_EQ(val1, val2) DBFP_CHECK_OP(val1, val2, ==)
#define TORCH_CHECK_NE(val1, val2) DBFP_CHECK_OP(val1, val2, !=)
#define TORCH_CHECK_LE(val1, val2) DBFP_CHECK_OP(val1, val2, <=)
#define TORCH_CHECK_LT(val1, val2) DBFP_CHECK_OP(val1, val2, <)
#define TORCH_CHECK_GE(val1, val2) DBFP_CHECK_OP(val1, val2, >=)
#define TORCH_CHECK_GT(val1, val2) DBFP_CHECK_OP(val1, val2, >)
#define C10_LIKELY(x) __builtin_expect(static_cast<bool>(x), 1)
#define C10_UNLIKELY(x) __builtin_expect(static_cast<bool>(x), 0)
#define C10_UNUSED __attribute__((__unused__))
#define C10_API
#define TORCH_API
#define C10_HOST_DEVICE
#define C10_DEVICE
#define C10_HOST
#define C10_ALWAYS_INLINE inline __attribute__((__always_inline__))

namespace dbfp {
class CheckOpFailure {
 public:
  CheckOpFailure(const char* file, int line) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    tm local{};
    localtime_r(&now.tv_sec, &local);
    char prefix[48];
    std::snprintf(prefix, sizeof prefix, "[F%d %02d:%02d:%02d.%09ld ", (local.tm_mon + 1) * 100 + local.tm_mday,
                  local.tm_hour, local.tm_min, local.tm_sec, static_cast<long>(now.tv_nsec));
    const char* base = std::strrchr(file, '/');
    stream_ << prefix << (base ? base + 1 : file) << ":" << line << "] ";
  }
  CheckOpFailure(const CheckOpFailure&) = delete;
  CheckOpFailure& operator=(const CheckOpFailure&) = delete;
  ~CheckOpFailure() noexcept(false) {
    stream_ << "\n";
    std::cerr << stream_.str() << std::flush;
    throw ::c10::Error(stream_.str());
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};
struct CheckOpVoidify {
  void operator&(const std::ostream&) {}
};

inline std::string check_message(const char* default_message) { return default_message; }
template <class... A>
std::string check_message(const char*, const A&... args) { return ::c10::str(args...); }
}  // namespace dbfp

// ------------------------------------------------------------------------------------------
// at::Tensor and the operators that reach ATen through the table.
namespace at {
using c10::ArrayRef;
using c10::BFloat16;
using c10::Device;
using c10::DeviceType;
using c10::Half;
using c10::IntArrayRef;
using c10::kBFloat16;
using c10::kBool;
using c10::kByte;
using c10::kChar;
using c10::kComplexDouble;
using c10::kComplexFloat;
using c10::kCPU;
using c10::kCUDA;
using c10::kDouble;
using c10::kFloat;
using c10::kHalf;
using c10::kInt;
using c10::kLong;
using c10::kMeta;
using c10::kShort;
using c10::kStrided;
using c10::Layout;
using c10::MemoryFormat;
using c10::nullopt;
using c10::optional;
using c10::OptionalIntArrayRef;
using c10::Scalar;
using c10::ScalarType;
using c10::toString;
using c10::TypeMeta;
using c10::elementSize;
using c10::isFloatingType;
using c10::isIntegralType;
using c10::isComplexType;

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}
  TensorOptions(TypeMeta t) : dtype_(t.toScalarType()) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType t) : device_(Device(t)) {}
  TensorOptions(Layout l) : layout_(l) {}
  TensorOptions(MemoryFormat m) : memory_format_(m) {}

  TensorOptions dtype(ScalarType t) const { TensorOptions o = *this; o.dtype_ = t; return o; }
  TensorOptions dtype(TypeMeta t) const { return dtype(t.toScalarType()); }
  TensorOptions dtype(std::optional<ScalarType> t) const { TensorOptions o = *this; o.dtype_ = t; return o; }
  template <class T>
  TensorOptions dtype() const { return dtype(c10::CppTypeToScalarType<T>::value); }
  TensorOptions device(Device d) const { TensorOptions o = *this; o.device_ = d; return o; }
  TensorOptions device(DeviceType t, c10::DeviceIndex i = -1) const { return device(Device(t, i)); }
  TensorOptions device(std::optional<Device> d) const { TensorOptions o = *this; o.device_ = d; return o; }
  TensorOptions device_index(int i) const { return device(Device(DeviceType::CUDA, static_cast<c10::DeviceIndex>(i))); }
  TensorOptions layout(Layout l) const { TensorOptions o = *this; o.layout_ = l; return o; }
  TensorOptions requires_grad(bool r) const { TensorOptions o = *this; o.requires_grad_ = r; return o; }
  TensorOptions requires_grad(std::optional<bool> r) const { TensorOptions o = *this; o.requires_grad_ = r; return o; }
  TensorOptions pinned_memory(bool p) const { TensorOptions o = *this; o.pinned_memory_ = p; return o; }
  TensorOptions memory_format(MemoryFormat m) const { TensorOptions o = *this; o.memory_format_ = m; return o; }

  TypeMeta dtype() const { return TypeMeta(dtype_.value_or(ScalarType::Float)); }
  Device device() const { return device_.value_or(Device(DeviceType::CPU)); }
  Layout layout() const { return layout_.value_or(Layout::Strided); }
  bool requires_grad() const { return requires_grad_.value_or(false); }
  bool pinned_memory() const { return pinned_memory_.value_or(false); }
  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }
  bool has_layout() const { return layout_.has_value(); }
  bool has_requires_grad() const { return requires_grad_.has_value(); }
  bool has_memory_format() const { return memory_format_.has_value(); }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }
  std::optional<Layout> layout_opt() const { return layout_; }
  std::optional<bool> requires_grad_opt() const { return requires_grad_; }
  std::optional<bool> pinned_memory_opt() const { return pinned_memory_; }
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }
  int device_index() const { return device().index(); }
  bool is_cuda() const { return device().is_cuda(); }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<Layout> layout_;
  std::optional<bool> requires_grad_;
  std::optional<bool> pinned_memory_;
  std::optional<MemoryFormat> memory_format_;
};
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions dtype(TypeMeta t) { return TensorOptions().dtype(t); }
template <class T>
inline TensorOptions dtype() { return TensorOptions().dtype<T>(); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions device(DeviceType t, c10::DeviceIndex i = -1) { return TensorOptions().device(t, i); }
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline TensorOptions memory_format(MemoryFormat m) { return TensorOptions().memory_format(m); }
inline TensorOptions device_index(int i) { return TensorOptions().device_index(i); }

class Tensor;
using TensorList = ArrayRef<Tensor>;
using ITensorListRef = ArrayRef<Tensor>;

}  // namespace at

namespace dbfp {
[[noreturn]] inline void raise_api_error() { throw ::c10::Error(api().last_error()); }
inline void check_status(int32_t status) {
  if (status != 0) raise_api_error();
}
inline dbfp_op find_op(const char* name, const char* overload) {
  dbfp_op op = api().find_op(name, overload);
  if (!op) raise_api_error();
  return op;
}
// An operator resolved once per call site.
#define DBFP_OP(name, overload)                                      \
  ([]() -> dbfp_op {                                                 \
    static const dbfp_op dbfp_cached_op_ = ::dbfp::find_op(name, overload); \
    return dbfp_cached_op_;                                          \
  }())
}  // namespace dbfp

namespace at {

class Tensor {
 public:
  Tensor() = default;
  Tensor(const Tensor& other) : impl_(other.impl_) {
    if (impl_) dbfp::api().retain(impl_);
  }
  Tensor(Tensor&& other) noexcept : impl_(other.impl_) { other.impl_ = nullptr; }
  ~Tensor() {
    if (impl_) dbfp::api().release(impl_);
  }
  Tensor& operator=(const Tensor& other) & {
    if (other.impl_) dbfp::api().retain(other.impl_);
    if (impl_) dbfp::api().release(impl_);
    impl_ = other.impl_;
    return *this;
  }
  Tensor& operator=(Tensor&& other) & noexcept {
    std::swap(impl_, other.impl_);
    return *this;
  }
  // Assigning into a temporary (t[i] = x) copies values, as in ATen.
  Tensor& operator=(const Tensor& other) && { return copy_(other); }
  Tensor& operator=(const Scalar& value) && { return fill_(value); }

  // A tensor that takes over one reference to `impl`.
  static Tensor adopt(dbfp_tensor impl) {
    Tensor t;
    t.impl_ = impl;
    return t;
  }
  // A tensor that adds a reference to `impl`.
  static Tensor borrow(dbfp_tensor impl) {
    if (impl) dbfp::api().retain(impl);
    return adopt(impl);
  }
  dbfp_tensor handle() const { return impl_; }
  dbfp_tensor release() {
    dbfp_tensor h = impl_;
    impl_ = nullptr;
    return h;
  }

  bool defined() const { return impl_ != nullptr; }
  void reset() { *this = Tensor(); }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  int64_t numel() const { return dbfp::api().numel(checked()); }
  int64_t dim() const { return dbfp::api().dim(checked()); }
  int64_t ndimension() const { return dim(); }
  IntArrayRef sizes() const { return IntArrayRef(dbfp::api().sizes(checked()), static_cast<std::size_t>(dim())); }
  IntArrayRef strides() const { return IntArrayRef(dbfp::api().strides(checked()), static_cast<std::size_t>(dim())); }
  IntArrayRef sym_sizes() const { return sizes(); }
  int64_t size(int64_t d) const { return sizes()[wrap_dim(d)]; }
  int64_t stride(int64_t d) const { return strides()[wrap_dim(d)]; }
  int64_t storage_offset() const { return dbfp::api().storage_offset(checked()); }
  ScalarType scalar_type() const { return static_cast<ScalarType>(dbfp::api().scalar_type(checked())); }
  TypeMeta dtype() const { return TypeMeta(scalar_type()); }
  Layout layout() const { return static_cast<Layout>(dbfp::api().layout(checked())); }
  Device device() const {
    return Device(static_cast<DeviceType>(dbfp::api().device_type(checked())),
                  static_cast<c10::DeviceIndex>(dbfp::api().device_index(impl_)));
  }
  int64_t get_device() const { return is_cuda() ? device().index() : -1; }
  bool is_cuda() const { return dbfp::api().device_type(checked()) == static_cast<int32_t>(DeviceType::CUDA); }
  bool is_cpu() const { return dbfp::api().device_type(checked()) == static_cast<int32_t>(DeviceType::CPU); }
  bool is_meta() const { return dbfp::api().device_type(checked()) == static_cast<int32_t>(DeviceType::Meta); }
  bool is_floating_point() const { return c10::isFloatingType(scalar_type()); }
  bool is_complex() const { return c10::isComplexType(scalar_type()); }
  bool is_signed() const {
    ScalarType t = scalar_type();
    return t != ScalarType::Byte && t != ScalarType::Bool && t != ScalarType::UInt16 && t != ScalarType::UInt32 &&
           t != ScalarType::UInt64;
  }
  bool requires_grad() const { return dbfp::api().requires_grad(checked()) != 0; }
  bool is_contiguous(MemoryFormat format = MemoryFormat::Contiguous) const {
    int32_t r = dbfp::api().is_contiguous(checked(), static_cast<int32_t>(format));
    if (r < 0) dbfp::raise_api_error();
    return r != 0;
  }
  int64_t element_size() const { return dbfp::api().element_size(checked()); }
  int64_t itemsize() const { return element_size(); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel() * element_size()); }
  bool is_same_size(const Tensor& other) const { return sizes().equals(other.sizes()); }
  TensorOptions options() const { return TensorOptions().dtype(scalar_type()).device(device()).layout(layout()); }
  const Tensor& _base() const { return *this; }

  void* data_ptr() const { return raw_data(-1, true); }
  template <class T>
  T* data_ptr() const {
    return static_cast<T*>(raw_data(static_cast<int32_t>(c10::CppTypeToScalarType<std::remove_cv_t<T>>::value), true));
  }
  template <class T>
  T* mutable_data_ptr() const { return data_ptr<T>(); }
  void* mutable_data_ptr() const { return raw_data(-1, true); }
  template <class T>
  const T* const_data_ptr() const {
    return static_cast<const T*>(raw_data(static_cast<int32_t>(c10::CppTypeToScalarType<std::remove_cv_t<T>>::value), false));
  }
  const void* const_data_ptr() const { return raw_data(-1, false); }

  // Operators (in tensor_ops.h).
  Tensor contiguous(MemoryFormat format = MemoryFormat::Contiguous) const;
  Tensor clone(std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor view(IntArrayRef size) const;
  Tensor view(ScalarType dtype) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor expand(IntArrayRef size, bool implicit = false) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor to(TensorOptions options, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor to(DeviceType type) const { return to(TensorOptions(Device(type))); }
  Tensor cpu() const { return to(TensorOptions(Device(DeviceType::CPU))); }
  Tensor cuda() const { return to(TensorOptions(Device(DeviceType::CUDA))); }
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor type_as(const Tensor& other) const { return to(other.scalar_type()); }
  Tensor detach() const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  const Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  Tensor& fill_(const Scalar& value);
  const Tensor& fill_(const Scalar& value) const;
  Tensor& zero_();
  const Tensor& zero_() const;
  Tensor& resize_(IntArrayRef size);
  Scalar item() const;
  template <class T>
  T item() const { return item().to<T>(); }

  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1);
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& other, const Scalar& alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);
  Tensor pow(const Scalar& exponent) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor relu() const;
  Tensor& relu_();
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor reciprocal() const;
  Tensor square() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor eq(const Scalar& other) const;
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor ge(const Scalar& other) const;
  Tensor le(const Scalar& other) const;
  Tensor all() const;
  Tensor any() const;
  Tensor norm(const Scalar& p = 2) const;
  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;

  Tensor operator-() const { return neg(); }
  Tensor& operator+=(const Tensor& other) { return add_(other); }
  Tensor& operator+=(const Scalar& other) { return add_(other); }
  Tensor& operator-=(const Tensor& other) { return sub_(other); }
  Tensor& operator-=(const Scalar& other) { return sub_(other); }
  Tensor& operator*=(const Tensor& other) { return mul_(other); }
  Tensor& operator*=(const Scalar& other) { return mul_(other); }
  Tensor& operator/=(const Tensor& other) { return div_(other); }
  Tensor& operator/=(const Scalar& other) { return div_(other); }

 private:
  dbfp_tensor checked() const {
    if (!impl_) throw ::c10::Error("tensor does not have a device");
    return impl_;
  }
  std::size_t wrap_dim(int64_t d) const {
    int64_t n = dim();
    int64_t lo = n > 0 ? -n : -1, hi = n > 0 ? n - 1 : 0;
    if (d < lo || d > hi)
      throw ::c10::IndexError(::c10::str("Dimension out of range (expected to be in range of [", lo, ", ", hi,
                                         "], but got ", d, ")"));
    return static_cast<std::size_t>(d < 0 ? d + (n > 0 ? n : 1) : d);
  }
  void* raw_data(int32_t expected, bool want_mutable) const {
    void* out = nullptr;
    dbfp::check_status(dbfp::api().data_ptr(checked(), expected, want_mutable ? 1 : 0, &out));
    return out;
  }

  dbfp_tensor impl_ = nullptr;
};

// at::TensorBase is the same class here.
using TensorBase = Tensor;

inline std::optional<Device> device_of(const Tensor& t) {
  if (t.defined()) return t.device();
  return std::nullopt;
}
inline std::optional<Device> device_of(const std::optional<Tensor>& t) {
  return t.has_value() ? device_of(*t) : std::nullopt;
}

}  // namespace at

#include "dbfp/tensor_ops.h"
