// Presenting a RunReport: a terminal table (one row per level plus a total) and JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "results/report/report.hpp"

namespace dicebench::results {

// A header line (run id, model, suite, status, created; what --exclude-degenerate left out), the
// metrics table, a line of verdict counts, a line of flag counts, a line of degenerate problems
// by trait and, when there are any, correct %, fast_1 and geomean over all problems and over the
// non-degenerate ones. Rates are shown as percentages, "–" where a figure has no data.
std::string format_report(const RunReport& report);

// {"run": {...}, "exclude_degenerate": bool, "levels": [...], "total": {...}}; rates as fractions,
// missing figures null, fast_p and pass_at_k keyed by p and k as strings ("0.5", "2"); each level
// also has "flags" and "traits" (counts by name), "degenerate_problems", "unchecked_problems",
// and "all_problems" and "non_degenerate" ({"problems", "decided", "correct", "correct_rate",
// "fast_1", "geomean_speedup"}).
nlohmann::json report_json(const RunReport& report);

}  // namespace dicebench::results
