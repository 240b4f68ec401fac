// Presenting a RunReport: a terminal table (one row per level plus a total) and JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "results/report.hpp"

namespace dicebench::results {

// A header line (run id, model, suite, status, created), the metrics table and a line of
// verdict counts. Rates are shown as percentages, "–" where a figure has no data.
std::string format_report(const RunReport& report);

// {"run": {...}, "levels": [...], "total": {...}}; rates as fractions, missing figures null,
// fast_p and pass_at_k keyed by p and k as strings ("0.5", "2").
nlohmann::json report_json(const RunReport& report);

}  // namespace dicebench::results
