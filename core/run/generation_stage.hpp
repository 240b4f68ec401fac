// The generation stage of a run: the plan's requests through the model in batches, each
// completion's candidate extracted by the suite (unless the model gave one) and each sample stored
// in its own transaction, with progress. It leaves the run's status to the lifecycle.
#pragma once

#include "core/host/generation_totals.hpp"
#include "core/host/run_plan.hpp"
#include "core/run/run_status.hpp"
#include "results/store/store.hpp"

#include <string>

namespace dicebench::run {

struct GenerationOutcome {
  StageEnd end = StageEnd::completed;
  std::string
      error;  // why generation stopped (end == failed, or interrupted by the model: its server stopped answering)
  size_t stored = 0;
  size_t extraction_failures = 0;  // completions without a code block (failed requests apart)
  size_t already_done = 0;         // samples stored before (a resumed run)
  std::string timing;              // "16 samples in 0.2 s (80/s)"
  host::GenerationTotals totals;   // over the samples generated now
  double generation_seconds = 0;
};

// Generates the plan's remaining requests into `run`. Ctrl-C or the model's cancelled or stopped ends it
// interrupted (with the model's reason in `error` when it gave one: its server stopped answering); an error of the
// model, the suite or the store ends it failed, keeping what was stored.
GenerationOutcome generate_samples(host::RunPlan& plan, results::Store& store, int64_t run, size_t already_done);

}  // namespace dicebench::run
