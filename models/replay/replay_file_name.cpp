// Parsing and formatting of replay file names (see replay_file_name.hpp).
#include "models/replay/replay_file_name.hpp"

#include <charconv>
#include <limits>

namespace dicebench::replay {
namespace {

// Consumes `literal` at the front of `text`.
bool take(std::string_view& text, std::string_view literal) {
  if (!text.starts_with(literal)) return false;
  text.remove_prefix(literal.size());
  return true;
}

// Consumes a run of ASCII digits (no sign) that fits in [0, max].
bool take_number(std::string_view& text, int64_t max, int64_t* out) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return false;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || end != text.data() + digits || value > max) return false;
  text.remove_prefix(digits);
  *out = value;
  return true;
}

}  // namespace

std::optional<ParsedFileName> parse_file_name(std::string_view name) {
  constexpr int64_t max32 = std::numeric_limits<int32_t>::max();
  constexpr int64_t max64 = std::numeric_limits<int64_t>::max();
  int64_t level = 0, problem = 0, sample = 0;
  if (!take(name, "level_") || !take_number(name, max32, &level) ||       //
      !take(name, "_problem_") || !take_number(name, max64, &problem) ||  //
      !take(name, "_sample_") || !take_number(name, max32, &sample))
    return std::nullopt;
  ParsedFileName parsed;
  parsed.key = SampleKey{static_cast<int32_t>(level), problem, static_cast<int32_t>(sample)};
  if (name == "_kernel.py") {
    parsed.kind = FileKind::kernel;
  } else if (name == ".txt") {
    parsed.kind = FileKind::completion;
  } else {
    return std::nullopt;
  }
  return parsed;
}

std::string file_name(const SampleKey& key, FileKind kind) {
  return "level_" + std::to_string(key.level) + "_problem_" + std::to_string(key.problem_id) + "_sample_" +
         std::to_string(key.sample_index) + (kind == FileKind::kernel ? "_kernel.py" : ".txt");
}

std::string describe(const SampleKey& key) {
  return "level " + std::to_string(key.level) + " problem " + std::to_string(key.problem_id) + " sample " +
         std::to_string(key.sample_index);
}

}  // namespace dicebench::replay
