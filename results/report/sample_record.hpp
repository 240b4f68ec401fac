// One sample's result as a flat JSON record (the JSONL and CSV exports and the samples of a run
// summary file), and reading such a record back.
#pragma once

#include <nlohmann/json.hpp>

#include "core/base/result.hpp"
#include "results/store/run_results.hpp"

namespace dicebench::results {

// Keys in a fixed order: run, problem_id, level, problem, sample_index, verdict (null while
// pending), has_candidate, compiled, correct, speedup, runtime_* (ms), baseline_ms,
// baseline_mean_ms, runtime_trials, custom_kernel_share, compile_path, device, error_class,
// error_message, margin, memory_floor_ms, flags (names, in the vocabulary's order), flag_details
// ({name: detail}), problem_traits (names; null when never checked), failed_stage. Absent figures
// are null.
nlohmann::ordered_json sample_record(const RunResults& run, const SampleResult& sample);

// The inverse of sample_record (the problem name and run id are not kept); a record of summary
// format 1, without margin, flags, traits and failed stage, reads them as absent. `where` names
// the record in errors ("summary.json: sample 3").
Result<SampleResult> parse_sample_record(const nlohmann::json& record, const std::string& where);

}  // namespace dicebench::results
