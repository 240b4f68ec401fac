// One evaluation as JSON: what `dicebench eval --json` prints and the Python module returns, so
// both give the same fields from the same code.
#pragma once

#include "harness/client/evaluator.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace dicebench::harness {

// {"verdict", "compiled", "correct", "device", "runtime" / "baseline" (timing stats or null),
// "speedup", "speedup_mean", "max_abs_diff", "mean_abs_diff", "failed_trial", "error_class",
// "error_message", "seconds", "phases" (wall seconds by phase), "compile" (path, reason, seconds, log, records, or null),
// "profile" (device time per call and per kernel, or null)}.
nlohmann::json evaluation_json(const Evaluation& evaluation, const std::string& device);

}  // namespace dicebench::harness
