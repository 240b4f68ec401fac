// Checking gate rules against a comparison of a baseline (A) and a candidate (B) run: one
// outcome per rule, plus the flip rule (no correct problem becomes incorrect unless allowed; a
// borderline one is noise unless the rules' [flips] borderline = "fail").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/report/compare.hpp"
#include "results/report/gate_rules.hpp"

namespace dicebench::results {

enum class RuleStatus { passed, failed, skipped };
std::string_view rule_status_name(RuleStatus status);

struct RuleOutcome {
  std::string name;                   // "correct_rate", "fast_1 level 2", "no correct problem becomes incorrect"
  std::string bound;                  // "noise (McNemar p=0.031)", "max drop 2.0pp", ...
  std::optional<std::string> metric;  // none for the flip rule
  std::optional<double> baseline, candidate, delta;
  RuleStatus status = RuleStatus::passed;
  std::string message;  // why it failed or was skipped; the flipped problems
  std::string origin;   // where the rule came from
};

struct GateResult {
  bool passed = true;
  RunRow baseline, candidate;
  std::vector<RuleOutcome> outcomes;
  std::vector<Flip> new_incorrect;     // correct in the baseline, incorrect in the candidate, not allowed
  std::vector<Flip> borderline_noise;  // became incorrect, but borderline: counted as noise
};

// A rule is skipped when its suite is not the runs' suite, its level is in neither run, or the
// baseline has no value for its metric; it fails when the candidate has none but the baseline
// does.
GateResult check_gate(const Comparison& comparison, const GateRules& rules);

}  // namespace dicebench::results
