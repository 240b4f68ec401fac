// Problem selections such as "1-4,7,10-12".
#include "core/host/problem_selection.hpp"

#include "core/base/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace dicebench::host {
namespace {

Result<int64_t> parse_id(std::string_view text, const std::string& whole) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0)
    return make_error(fmt::format("bad problem selection '{}': '{}' is not a problem id (use ids and ranges like 1-4,7)", whole, text));
  return value;
}

}  // namespace

Result<std::set<int64_t>> parse_problem_selection(const std::string& text) {
  std::set<int64_t> ids;
  if (trim(text).empty()) return make_error("empty problem selection (use ids and ranges like 1-4,7)");
  for (const auto& raw : split(text, ',')) {
    const std::string_view part = trim(raw);
    const size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      auto id = parse_id(part, text);
      if (!id) return id.error();
      ids.insert(*id);
      continue;
    }
    auto first = parse_id(trim(part.substr(0, dash)), text);
    if (!first) return first.error();
    auto last = parse_id(trim(part.substr(dash + 1)), text);
    if (!last) return last.error();
    if (*last < *first) return make_error(fmt::format("bad problem selection '{}': range {} ends before it starts", text, part));
    if (*last - *first > 1'000'000) return make_error(fmt::format("bad problem selection '{}': range {} is too large", text, part));
    for (int64_t id = *first; id <= *last; ++id) ids.insert(id);
  }
  return ids;
}

std::string format_problem_selection(const std::set<int64_t>& ids) {
  std::vector<std::string> parts;
  for (auto it = ids.begin(); it != ids.end();) {
    const int64_t first = *it;
    int64_t last = first;
    while (++it != ids.end() && *it == last + 1) last = *it;
    parts.push_back(first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
  }
  return join(parts, ",");
}

Result<void> check_selection(const std::set<int64_t>& selected, const std::vector<int64_t>& available,
                             const std::string& suite) {
  std::set<int64_t> missing;
  for (const int64_t id : selected)
    if (std::find(available.begin(), available.end(), id) == available.end()) missing.insert(id);
  if (missing.empty()) return {};
  std::set<int64_t> have(available.begin(), available.end());
  return make_error(fmt::format("{} has no problem {} (it has {})", suite, format_problem_selection(missing),
                                have.empty() ? "none" : format_problem_selection(have)));
}

}  // namespace dicebench::host
