// Problem selections such as "1-4,7,10-12" and "1/1-10,2/5".
#include "core/host/problem_selection.hpp"

#include "core/base/number_text.hpp"

#include "core/base/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <map>

namespace dicebench::host {
namespace {

constexpr const char* kHowTo = "use ids and ranges like 1-4,7, or LEVEL/IDS items like 1/1-10,2/5";

Result<int64_t> selection_number(std::string_view text, const std::string& whole, const char* what) {
  if (const auto value = parse_number<int64_t>(text, 0)) return *value;
  return make_error(ErrorKind::bad_input,
                    fmt::format("bad problem selection '{}': '{}' is not a {} ({})", whole, text, what, kHowTo));
}

// "1-4,7" from ids.
std::string format_ids(const std::set<int64_t>& ids) {
  std::vector<std::string> parts;
  for (auto it = ids.begin(); it != ids.end();) {
    const int64_t first = *it;
    int64_t last = first;
    while (++it != ids.end() && *it == last + 1) last = *it;
    parts.push_back(first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
  }
  return join(parts, ",");
}

std::map<int, std::set<int64_t>> by_level(const std::set<ProblemKey>& keys) {
  std::map<int, std::set<int64_t>> out;
  for (const ProblemKey& key : keys) out[key.level].insert(key.problem_id);
  return out;
}

// "level 1 1-3, level 2 1" (or "1-3" for a single level).
std::string describe_levels(const std::set<ProblemKey>& keys) {
  const auto levels = by_level(keys);
  if (levels.empty()) return "none";
  if (levels.size() == 1) return format_ids(levels.begin()->second);
  std::vector<std::string> parts;
  for (const auto& [level, ids] : levels) parts.push_back(fmt::format("level {} {}", level, format_ids(ids)));
  return join(parts, ", ");
}

}  // namespace

Result<std::set<ProblemKey>> parse_problem_selection(const std::string& text) {
  std::set<ProblemKey> keys;
  if (trim(text).empty()) return make_error(ErrorKind::bad_input, fmt::format("empty problem selection ({})", kHowTo));
  for (const auto& raw : split(text, ',')) {
    std::string_view part = trim(raw);
    if (part.empty())
      return make_error(ErrorKind::bad_input,
                        fmt::format("bad problem selection '{}': an empty item between commas ({})", text, kHowTo));
    int level = 0;
    if (const size_t slash = part.find('/'); slash != std::string_view::npos) {
      auto parsed = selection_number(trim(part.substr(0, slash)), text, "level");
      if (!parsed) return parsed.error();
      if (*parsed < 1 || *parsed > 99)
        return make_error(
            ErrorKind::bad_input,
            fmt::format("bad problem selection '{}': no level {} in '{}' (levels start at 1)", text, *parsed, part));
      level = static_cast<int>(*parsed);
      part = trim(part.substr(slash + 1));
    }
    if (part.starts_with('-'))  // "-1": not a range without its start
      return make_error(ErrorKind::bad_input,
                        fmt::format("bad problem selection '{}': '{}' is not a problem id (ids are 0 or more; {})",
                                    text, part, kHowTo));
    const size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      auto id = selection_number(part, text, "problem id");
      if (!id) return id.error();
      keys.insert({level, *id});
      continue;
    }
    auto first = selection_number(trim(part.substr(0, dash)), text, "problem id");
    if (!first) return first.error();
    auto last = selection_number(trim(part.substr(dash + 1)), text, "problem id");
    if (!last) return last.error();
    if (*last < *first)
      return make_error(ErrorKind::bad_input,
                        fmt::format("bad problem selection '{}': range {} ends before it starts", text, part));
    if (*last - *first > 1'000'000)
      return make_error(ErrorKind::bad_input,
                        fmt::format("bad problem selection '{}': range {} is too large", text, part));
    for (int64_t id = *first; id <= *last; ++id) keys.insert({level, id});
  }
  return keys;
}

std::string format_problem_selection(const std::set<ProblemKey>& keys) {
  std::vector<std::string> parts;
  for (const auto& [level, ids] : by_level(keys)) {
    if (level == 0) {
      parts.push_back(format_ids(ids));
      continue;
    }
    for (const auto& range : split(format_ids(ids), ',')) parts.push_back(fmt::format("{}/{}", level, range));
  }
  return join(parts, ",");
}

Result<std::set<ProblemKey>> resolve_selection(const std::set<ProblemKey>& selected,
                                               const std::vector<ProblemKey>& available, const std::string& suite) {
  const std::set<ProblemKey> have(available.begin(), available.end());
  std::set<int> levels;
  for (const ProblemKey& key : have) levels.insert(key.level);
  std::set<ProblemKey> resolved;
  for (ProblemKey key : selected) {
    if (key.level == 0) {
      if (levels.size() > 1)
        return make_error(
            ErrorKind::bad_input,
            fmt::format("{} covers levels {}: name its problems as LEVEL/IDS, e.g. {}/{} (plain id {} names no level)",
                        suite, fmt::join(levels, ", "), *levels.begin(), key.problem_id, key.problem_id));
      key.level = levels.empty() ? 0 : *levels.begin();
    }
    resolved.insert(key);
  }
  std::set<ProblemKey> missing;
  for (const ProblemKey& key : resolved)
    if (!have.count(key)) missing.insert(key);
  if (missing.empty()) return resolved;
  std::set<int> missing_levels;
  for (const ProblemKey& key : missing) missing_levels.insert(key.level);
  if (levels.size() <= 1 && missing_levels == levels) {
    std::set<ProblemKey> plain_missing;
    for (const ProblemKey& key : missing) plain_missing.insert({0, key.problem_id});
    return make_error(ErrorKind::bad_input,
                      fmt::format("{} has no problem {} (it has {})", suite, format_problem_selection(plain_missing),
                                  describe_levels(have)));
  }
  return make_error(ErrorKind::bad_input,
                    fmt::format("{} has no problem {} (it has {})", suite, format_problem_selection(missing),
                                levels.size() == 1 ? fmt::format("level {} {}", *levels.begin(), describe_levels(have))
                                                   : describe_levels(have)));
}

}  // namespace dicebench::host
