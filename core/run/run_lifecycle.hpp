// The run lifecycle, the one entry point of `dicebench run`: opens the database, reads a resumed
// run back, plans, checks that evaluation can run, records the run, generates, evaluates and
// reports, moving the run's status forward only (run_status.hpp). What happened comes back as a
// RunOutcome for the caller to print.
#pragma once

#include "core/base/result.hpp"
#include "core/host/config.hpp"
#include "core/run/evaluation_stage.hpp"
#include "core/run/generation_stage.hpp"
#include "results/report/report.hpp"
#include "results/report/time_breakdown.hpp"
#include "results/store/store.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dicebench::run {

struct RunRequest {
  std::string db;                 // the results database
  std::optional<int64_t> resume;  // continue this stored run with its own settings
  // A new run's settings; for a resumed run, settings that replace its stored ones (where the
  // suite's files are now).
  host::Config settings;
  bool generate_only = false;
  std::vector<std::string> plugin_dirs;  // empty: host::PluginRegistry::default_search_dirs()
};

struct RunOutcome {
  int64_t run = 0;
  // How the work on the run ended: finished, interrupted or failed (stored so, except that a run
  // that had finished before stays finished).
  RunStatus status = RunStatus::finished;
  std::string error;  // why it stopped (failed), or why the report could not be made
  std::string model_spec;
  std::string suite_name;
  size_t problems = 0;
  size_t samples = 0;  // all of the run's samples, stored before or now
  GenerationOutcome generation;
  // Absent under generate_only, and when generation stopped or evaluation failed.
  std::optional<EvaluationSummary> evaluation;
  std::string evaluation_device;                             // cpu or cuda
  std::vector<std::optional<std::string>> evaluation_slots;  // see host::evaluation_slots
  std::string evaluation_pool;                               // the Ray pool it was judged on (run --ray), else empty
  std::optional<results::RunReport> report;                  // a finished, evaluated run's
  std::optional<results::TimeBreakdown> time;                // where its evaluation time went, once evaluated
};

struct RunEvents {
  // Once generation has ended, before evaluation starts.
  std::function<void(const RunOutcome&)> generated;
};

// An error before the run is recorded (bad settings, an unusable plugin, a locked database, a
// resume with nothing to do) comes back as the error, nothing stored, as does an error of the
// store. A stage that stops keeps what was stored, and says so in the outcome's status.
Result<RunOutcome> run_lifecycle(const RunRequest& request, const RunEvents& events = {});

}  // namespace dicebench::run
