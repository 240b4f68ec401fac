// Resuming a stored run: its own settings read back from runs.config, the samples it stored
// already, and whether anything is left to do.
#pragma once

#include "core/base/result.hpp"
#include "core/host/config.hpp"
#include "core/host/run_plan.hpp"
#include "results/store/store.hpp"

#include <cstdint>

namespace dicebench::run {

struct ResumedRun {
  host::Config config;      // the run's settings as it stored them
  host::ResumeState state;  // what it stored already, and its model's settings
  RunStatus status;         // its status before this resume
  std::string config_json;  // runs.config as stored
};

// Reads run `run` back to continue it. A finished run is refused when there is nothing left to do:
// `generate_only`, or every sample evaluated.
Result<ResumedRun> resume_run(results::Store& store, int64_t run, bool generate_only);

}  // namespace dicebench::run
