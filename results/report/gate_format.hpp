// Presenting a gate's result: a short terminal table, a JSON summary and JUnit XML (one test
// case per rule) that CI systems display.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "results/report/gate.hpp"

namespace dicebench::results {

std::string format_gate(const GateResult& result);

// {"passed", "baseline": run, "candidate": run, "rules": [{"name", "metric", "bound", "baseline",
//  "candidate", "delta", "status", "message", "origin"}], "new_incorrect": [...],
//  "borderline_noise": [...] (borderline samples that became incorrect, counted as noise)}
nlohmann::json gate_json(const GateResult& result);

// <testsuites><testsuite name="dicebench gate" tests failures skipped><testcase ...> with a
// <failure> or <skipped> child where a rule failed or was skipped.
std::string gate_junit(const GateResult& result);

}  // namespace dicebench::results
