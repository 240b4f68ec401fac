// Problem selections such as "1-4,7,10-12" (a single-level suite) or "1/1-10,2/5,3/1-3" (LEVEL/IDS
// items, for a suite over several levels): parsing, resolving against a suite's problems, and
// writing them back.
#pragma once

#include "core/base/problem_key.hpp"
#include "core/base/result.hpp"

#include <set>
#include <string>
#include <vector>

namespace dicebench::host {

// Each comma-separated item is IDS (an id or a range A-B) or LEVEL/IDS. A plain item gets level 0:
// "the suite's only level", which resolve_selection fills in.
Result<std::set<ProblemKey>> parse_problem_selection(const std::string& text);

// "1-4,7" for level-0 keys, "1/1-3,2/5" otherwise (the inverse of parse_problem_selection).
std::string format_problem_selection(const std::set<ProblemKey>& keys);

// The selected problems among `available` (a suite's problems): plain ids name the suite's only
// level (an error for a suite over several levels, which says how to name them); every selected
// problem must exist, and the error names the first missing ones and what the suite has.
Result<std::set<ProblemKey>> resolve_selection(const std::set<ProblemKey>& selected,
                                               const std::vector<ProblemKey>& available, const std::string& suite);

}  // namespace dicebench::host
