// Recording a planned run in the store: its row (settings, seed and the reproducibility record)
// and its problems.
#pragma once

#include "core/base/result.hpp"
#include "core/host/run_plan.hpp"
#include "results/store/store.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace dicebench::run {

// Creates the run's row, status running, with this machine's reproducibility record; returns its id.
Result<int64_t> record_run(const host::RunPlan& plan, results::Store& store);

// A setting a resume changed: its stored value (none when the run left it at its default) and
// the new one.
struct ChangedSetting {
  std::optional<std::string> from;
  std::string to;
};

// Records a resume that changed settings in the run's configuration (runs.config, whose JSON is
// `stored_config_json`): "settings" takes the new values, so that a later resume starts from them,
// and "resumes" gains {"at": UTC time, "changed": {KEY: {"from": old or null, "to": new}}}.
Result<void> record_resume(results::Store& store, int64_t run, const std::string& stored_config_json,
                           const std::map<std::string, ChangedSetting>& changed);

// Registers the plan's problems in `run`; a resumed run's stored problems must be unchanged.
Result<void> record_problems(const host::RunPlan& plan, results::Store& store, int64_t run);

}  // namespace dicebench::run
