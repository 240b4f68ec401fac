// Problem selections such as "1-4,7,10-12": parsing and checking against a suite's ids.
#pragma once

#include "core/base/result.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace dicebench::host {

Result<std::set<int64_t>> parse_problem_selection(const std::string& text);
// "1-4,7" from a set of ids (the inverse of parse_problem_selection).
std::string format_problem_selection(const std::set<int64_t>& ids);
// Every selected id must be one of `available`; the error names the first missing ones.
Result<void> check_selection(const std::set<int64_t>& selected, const std::vector<int64_t>& available,
                             const std::string& suite);

}  // namespace dicebench::host
