// Small text helpers shared across dicebench: splitting, trimming, edit distance, timestamps.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dicebench {

std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char separator);
std::string join(const std::vector<std::string>& parts, std::string_view separator);

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);
// The candidates closest to `name` (at most 3, within a distance that scales with length),
// formatted as "did you mean 'x'?" or "" when none is close.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

// Current UTC time as "2026-11-29T15:42:52Z".
std::string utc_now_iso8601();

}  // namespace dicebench
