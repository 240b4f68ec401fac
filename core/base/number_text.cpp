// Sizes read from text (number_text.hpp).
#include "core/base/number_text.hpp"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace dicebench {

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const auto value = parse_number<std::uint64_t>(text.substr(0, digits));
  if (!value) return std::nullopt;
  std::string unit(text.substr(digits));
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static constexpr std::array<std::pair<std::string_view, int>, 14> kShifts = {{{"", 0},
                                                                                {"B", 0},
                                                                                {"K", 10},
                                                                                {"KB", 10},
                                                                                {"KIB", 10},
                                                                                {"M", 20},
                                                                                {"MB", 20},
                                                                                {"MIB", 20},
                                                                                {"G", 30},
                                                                                {"GB", 30},
                                                                                {"GIB", 30},
                                                                                {"T", 40},
                                                                                {"TB", 40},
                                                                                {"TIB", 40}}};
  for (const auto& [name, shift] : kShifts)
    if (unit == name) return shift && *value > (UINT64_MAX >> shift) ? std::nullopt : std::optional(*value << shift);
  return std::nullopt;
}

}  // namespace dicebench
