// The rules `dicebench gate` checks, read from TOML or the defaults: per metric (optionally one
// level, optionally one suite) the largest allowed drop from baseline to candidate, absolute,
// relative or "noise" (any drop the comparison finds beyond noise fails), and whether a problem
// that was correct may become incorrect.
//
//   [[rule]]
//   metric = "correct_rate"        # compiled_rate, correct_rate, fast_<p>, geomean_speedup, pass@<k>
//   level = 1                      # optional: one level (default: all levels together)
//   suite = "kernelbench-l1"       # optional: only for runs of this suite
//   max_drop = "noise"             # or a number in the metric's units (0.02: two points of a rate)
//   max_relative_drop = 0.05       # optional: a fraction of the baseline's value
//
//   [flips]
//   correct_to_incorrect = "fail"  # or "allow"
//   allowed = [12, 40, "2/5"]      # problems that may become incorrect: ids (any level), LEVEL/ID
//   borderline = "noise"           # or "fail": a borderline sample that became incorrect fails too
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/problem_key.hpp"
#include "core/base/result.hpp"

namespace dicebench::results {

struct GateRule {
  std::string metric;
  std::optional<int> level;
  std::optional<std::string> suite;
  bool noise = false;
  std::optional<double> max_drop;
  std::optional<double> max_relative_drop;
  std::string origin;  // "FILE:LINE:COL" of the rule, or "default"
};

struct GateRules {
  std::vector<GateRule> rules;
  bool fail_on_new_incorrect = true;
  std::set<ProblemKey> allowed_incorrect;  // level 0: the id at any level
  bool allows_incorrect(const ProblemKey& problem) const {
    return allowed_incorrect.count(problem) || allowed_incorrect.count({0, problem.problem_id});
  }
  // A sample flagged borderline (in either run) that became incorrect: noise by default.
  bool fail_on_borderline_flip = false;
};

// correct_rate and fast_1 may not drop beyond noise, all levels together and, when the runs cover
// several `levels`, per level too; no correct problem may become incorrect, except a borderline
// one (noise).
GateRules default_gate_rules(const std::set<int>& levels = {});

// Errors name the place: "FILE:LINE:COL: ...", for TOML syntax, unknown keys, unknown metrics,
// wrong types and rules without a bound.
Result<GateRules> parse_gate_rules(std::string_view text, const std::string& source);
Result<GateRules> read_gate_rules(const std::string& path);

}  // namespace dicebench::results
