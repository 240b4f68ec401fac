// Executing a planned run: records it (or continues a stored one), generates in batches, extracts
// candidates and stores each sample in its own transaction, with progress and a summary.
#pragma once

#include "core/base/result.hpp"
#include "core/host/generation_totals.hpp"
#include "core/host/run_plan.hpp"
#include "results/store.hpp"

#include <optional>
#include <string>

namespace dicebench::host {

struct RunOutcome {
  int64_t run = 0;
  results::RunStatus status = results::RunStatus::finished;
  size_t stored = 0;
  size_t extraction_failures = 0;
  size_t already_done = 0;
  std::string error;  // why the run stopped early (status failed)
  std::string timing;  // "16 samples in 0.2 s (80/s)"
  GenerationTotals totals;      // over the samples generated now
  double generation_seconds = 0;
};

// Creates the run row (resume_run == nullopt) or continues resume_run, then generates the plan's
// requests. A failure while generating marks the run failed and keeps what was stored.
Result<RunOutcome> execute_run(RunPlan& plan, results::Store& store, std::optional<int64_t> resume_run,
                               size_t already_done);

}  // namespace dicebench::host
