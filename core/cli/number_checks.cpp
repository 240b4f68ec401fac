// Numeric option checks on the text as given (number_checks.hpp).
#include "core/cli/number_checks.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string>

namespace dicebench::cli {
namespace {

// The whole text as one number of the type (no sign where the type has none).
template <typename Number>
bool parse_all(const std::string& text, Number& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && stop == end;
}

std::string range_text(const std::string& least, const std::string& most) { return "from " + least + " to " + most; }

}  // namespace

CLI::Validator whole_number(int64_t least, int64_t most) {
  const std::string range = range_text(std::to_string(least), std::to_string(most));
  return CLI::Validator(
      [least, most, range](std::string& text) -> std::string {
        int64_t value = 0;
        if (!parse_all(text, value) || value < least || value > most)
          return fmt::format("'{}' is not a whole number {}", text, range);
        return {};
      },
      "INT " + range);
}

CLI::Validator unsigned_number(uint64_t most) {
  const std::string range = range_text("0", std::to_string(most));
  return CLI::Validator(
      [most, range](std::string& text) -> std::string {
        uint64_t value = 0;
        if (text.starts_with('-') || text.starts_with('+') || !parse_all(text, value) || value > most)
          return fmt::format("'{}' is not a whole number {}", text, range);
        return {};
      },
      "UINT " + range);
}

CLI::Validator real_number(double least, double most) {
  const std::string range = range_text(fmt::format("{}", least), fmt::format("{}", most));
  return CLI::Validator(
      [least, most, range](std::string& text) -> std::string {
        double value = 0;
        if (!parse_all(text, value) || !std::isfinite(value) || value < least || value > most)
          return fmt::format("'{}' is not a number {}", text, range);
        return {};
      },
      "NUMBER " + range);
}

}  // namespace dicebench::cli
