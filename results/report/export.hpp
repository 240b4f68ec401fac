// `dicebench export` formats of a run's results: KernelBench's eval_results.json layout (so its
// analysis scripts keep working), one JSON line per sample, and CSV.
#pragma once

#include <optional>
#include <string>

#include "core/base/result.hpp"
#include "results/store/run_results.hpp"

namespace dicebench::results {

// {"<problem_id>": [{"sample_id", "compiled", "correctness", "metadata", "runtime",
// "runtime_stats"}, ...], ...}, keys in numeric order, as KernelBench's eval_from_generations
// writes it: compiled is kernelbench_compiled, runtime is the candidate's mean in ms (-1.0 when
// not timed), runtime_stats holds mean/std/min/max/num_trials/hardware/device (empty when not
// timed). metadata has KernelBench's keys (compilation_error for a failure while loading,
// runtime_error, correctness_issue, excessive_speedup) and dicebench_* keys (verdict, speedup,
// failed_stage, margin, flags with their details, problem_traits). Samples still pending are left
// out, as KernelBench holds only evaluated ones. KernelBench keys a file by problem id within one
// level: `level` picks one of a run that covers several (which is refused without it); a level
// the run does not cover is refused too. README.md "Exporting to KernelBench" documents the mapping.
Result<std::string> export_kernelbench(const RunResults& run, std::optional<int> level = std::nullopt);

// The candidate failed while loading: not compiled, or failed_stage "load", or (evaluations
// stored before the stage was recorded) the harness's words for a candidate without ModelNew.
bool failed_while_loading(const SampleResult& sample);

// KernelBench's `compiled`: compiled and not failed while loading (KernelBench records any
// exception while loading the module, and a missing ModelNew, as compiled = false).
bool kernelbench_compiled(const SampleResult& sample);

// One sample_record per line, each line ending in '\n'.
std::string export_jsonl(const RunResults& run);

// A header of sample_record's keys, then one line per sample (booleans 1/0, null empty),
// quoted as `dicebench query --format csv` quotes.
std::string export_csv(const RunResults& run);

}  // namespace dicebench::results
