// Numeric option checks on the text as given (number_checks.hpp).
#include "core/cli/number_checks.hpp"

#include "core/base/number_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string>

namespace dicebench::cli {
namespace {

std::string range_text(const std::string& least, const std::string& most) { return "from " + least + " to " + most; }

}  // namespace

CLI::Validator whole_number(int64_t least, int64_t most) {
  const std::string range = range_text(std::to_string(least), std::to_string(most));
  return CLI::Validator(
      [least, most, range](std::string& text) -> std::string {
        if (!parse_number<int64_t>(text, least, most)) return fmt::format("'{}' is not a whole number {}", text, range);
        return {};
      },
      "INT " + range);
}

CLI::Validator unsigned_number(uint64_t most) {
  const std::string range = range_text("0", std::to_string(most));
  return CLI::Validator(
      [most, range](std::string& text) -> std::string {
        if (!parse_number<uint64_t>(text, 0, most)) return fmt::format("'{}' is not a whole number {}", text, range);
        return {};
      },
      "UINT " + range);
}

CLI::Validator real_number(double least, double most) {
  const std::string range = range_text(fmt::format("{}", least), fmt::format("{}", most));
  return CLI::Validator(
      [least, most, range](std::string& text) -> std::string {
        if (!parse_number<double>(text, least, most)) return fmt::format("'{}' is not a number {}", text, range);
        return {};
      },
      "NUMBER " + range);
}

}  // namespace dicebench::cli
