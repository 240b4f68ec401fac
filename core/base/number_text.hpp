// Numbers read from text as a user gave it (settings, options, problem selections, sizes): the whole
// text is one number of the type, finite, and within the range asked for; anything else is none,
// never the nearest number the type holds nor an exception. The one parser of numbers in text.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

namespace dicebench {

// The whole of `text` as one number of type T (a sign only where T has one; no leading '+', no
// spaces), finite, in [least, most].
template <class T>
std::optional<T> parse_number(std::string_view text, T least = std::numeric_limits<T>::lowest(),
                              T most = std::numeric_limits<T>::max()) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>)
    if (!std::isfinite(value)) return std::nullopt;
  if (value < least || value > most) return std::nullopt;
  return value;
}

// A size in bytes: a whole number with an optional unit, any case: B, K/KB/KiB, M/MB/MiB, G/GB/GiB,
// T/TB/TiB (all binary: 1K = 1024 bytes); none for anything else or beyond 2^64 - 1 bytes.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace dicebench
