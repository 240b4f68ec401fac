// Planning a run: resolves configuration, plugins, problems, prompts and the list of samples to
// generate, and lets the model check every request, all before anything is written.
#pragma once

#include "core/base/problem_key.hpp"
#include "core/base/result.hpp"
#include "core/host/config.hpp"
#include "core/host/host_services.hpp"
#include "core/host/model_session.hpp"
#include "core/host/plugin_registry.hpp"
#include "core/host/suite_session.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dicebench::host {

struct PlannedProblem {
  SuiteProblem problem;
  std::string prompt;
  std::string prompt_hash;  // "sha256:<hex>"
  int samples = 1;
};

// What a resumed run fixes from its first start.
struct ResumeState {
  int64_t run = 0;
  std::set<std::pair<ProblemKey, int>> done;  // (problem, sample index) already stored
  std::string model_settings_json;            // the model's describe() when the run started
};

struct RunPlan {
  Config config;  // resolved settings; its address is what plugins see through the services
  std::unique_ptr<HostServices> services;
  std::string model_spec;
  std::string suite_name;
  LoadedPlugin suite_plugin;
  LoadedPlugin model_plugin;
  std::optional<SuiteSession> suite;
  std::optional<ModelSession> model;
  std::vector<PlannedProblem> problems;
  uint64_t seed = 0;
  size_t batch_size = 1;
  std::vector<GenerationRequest> requests;  // what remains to be generated
  std::string suite_settings_json;
  std::string model_settings_json;
  std::optional<std::string> sandbox_json;  // for the reproducibility record, when the run evaluates

  // The resolved configuration as stored in runs.config (enough to resume the run).
  std::string config_json() const;
  const PlannedProblem* find_problem(const ProblemKey& key) const;
};

// Builds the plan for a new run (resume == nullptr) or for the rest of a stored run.
Result<std::unique_ptr<RunPlan>> plan_run(Config config, const PluginRegistry& registry, const ResumeState* resume);

// The settings of a stored run, from its runs.config JSON, for resuming it.
Result<Config> config_from_run_json(const std::string& config_json);

// The seed of one sample, derived from the run's seed. The level is left out on purpose: a run over
// several levels gives each problem the seeds a single-level run with the same seed gives it.
uint64_t sample_seed(uint64_t run_seed, int64_t problem_id, int sample_index);

}  // namespace dicebench::host
