// Presenting a comparison of two runs: terminal tables (one per level and the total) with the
// flipped problems (borderline flips listed apart, as noise), and JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "results/report/compare.hpp"

namespace dicebench::results {

std::string format_comparison(const Comparison& comparison);

// {"a": run, "b": run, "alpha", "min_change", "bootstrap": {...}, "levels": [...], "total": {...},
// "flips": [{"kind", "problem_id", ..., "margin_a", "margin_b", "borderline"}]};
// each level {"level", "paired_samples", "paired_problems", "metrics": [{"metric", "a", "b",
// "delta", "test", "p_value", "gained", "lost", "interval", "beyond_noise"}]}.
nlohmann::json comparison_json(const Comparison& comparison);

// Text of a metric's value: rates as percentages, speedups as "1.234x", counts as integers.
std::string format_metric_value(const std::string& metric, std::optional<double> value);
// The delta: "+3.3pp" for rates, "+0.120x" for speedups, "+2" for counts.
std::string format_metric_delta(const std::string& metric, std::optional<double> delta);

}  // namespace dicebench::results
