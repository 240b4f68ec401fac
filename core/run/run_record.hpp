// Recording a planned run in the store: its row (settings, seed and the reproducibility record)
// and its problems.
#pragma once

#include "core/base/result.hpp"
#include "core/host/run_plan.hpp"
#include "results/store.hpp"

#include <cstdint>

namespace dicebench::run {

// Creates the run's row, status running, with this machine's reproducibility record; returns its id.
Result<int64_t> record_run(const host::RunPlan& plan, results::Store& store);

// Registers the plan's problems in `run`; a resumed run's stored problems must be unchanged.
Result<void> record_problems(const host::RunPlan& plan, results::Store& store, int64_t run);

}  // namespace dicebench::run
