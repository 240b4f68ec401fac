// What a run that evaluates checks before anything is generated or stored: its evaluation
// settings and slots resolve, the candidate sandbox gives what eval.sandbox asks for (said in the
// log), and the workers' Python has the modules the suite's candidates import.
#pragma once

#include "core/base/result.hpp"
#include "core/host/config.hpp"
#include "harness/client/evaluator.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dicebench::run {

struct EvaluationSetup {
  harness::EvaluationSettings settings;
  std::vector<std::optional<std::string>> slots;  // see host::evaluation_slots
  std::string sandbox_json;                       // the sandbox's protections, for the run's record
};

// `suite_settings_json`: the suite's describe() (its candidate_python_modules are checked).
Result<EvaluationSetup> prepare_evaluation(const host::Config& config, const std::string& suite_settings_json);

}  // namespace dicebench::run
