// Numeric option checks on the text as given (number_checks.hpp).
#include "core/cli/number_checks.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string>

namespace dicebench::cli {
namespace {

template <typename Number>
bool parse_whole(const std::string& text, Number& value) {
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
        if (!parse_whole(text, value) || value < least || value > most)
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
        if (text.starts_with('-') || text.starts_with('+') || !parse_whole(text, value) || value > most)
          return fmt::format("'{}' is not a whole number {}", text, range);
        return {};
      },
      "UINT " + range);
}

CLI::Validator real_number(double least, double most) {
  const std::string range = fmt::format("from {} to {}", least, most);
  return CLI::Validator(
      [least, most, range](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (error != std::errc() || stop != end || !std::isfinite(value) || value < least || value > most)
          return fmt::format("'{}' is not a number {}", text, range);
        return {};
      },
      "NUMBER " + range);
}

}  // namespace dicebench::cli
