// The checks a run that evaluates passes before it starts.
#include "core/run/evaluation_preflight.hpp"

#include "core/host/evaluation_settings.hpp"
#include "core/host/log.hpp"
#include "harness/client/python_modules.hpp"
#include "harness/client/sandbox_launch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace dicebench::run {

Result<EvaluationSetup> prepare_evaluation(const host::Config& config, const std::string& suite_settings_json) {
  auto settings = host::evaluation_settings(config);
  if (!settings) return settings.error();
  auto slots = host::evaluation_slots(config, settings->device);
  if (!slots) return slots.error();
  // Which protections candidates get here, said before anything runs (and refused under require).
  auto sandbox = harness::sandbox_status(settings->sandbox);
  if (!sandbox) return sandbox.error();
  host::log_info("sandbox: {}", sandbox->summary());
  // What the suite's candidates import must be there (a Triton run without triton).
  const auto suite_settings = nlohmann::json::parse(suite_settings_json, nullptr, false);
  std::vector<std::string> modules;
  if (suite_settings.is_object())
    for (const auto& m : suite_settings.value("candidate_python_modules", nlohmann::json::array()))
      if (m.is_string()) modules.push_back(m.get<std::string>());
  auto missing = harness::missing_python_modules(modules);
  if (!missing) return missing.error();
  if (!missing->empty())
    return make_error(fmt::format("this run's candidates import {}, which the workers' Python ({}) lacks; install it there",
                                  fmt::join(*missing, ", "), harness::worker_python()));
  return EvaluationSetup{std::move(*settings), std::move(*slots), sandbox->json()};
}

}  // namespace dicebench::run
