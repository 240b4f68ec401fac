// `dicebench export` formats of a run's results: KernelBench's eval_results.json layout (so its
// analysis scripts keep working), one JSON line per sample, and CSV.
#pragma once

#include <string>

#include "core/base/result.hpp"
#include "results/run_results.hpp"

namespace dicebench::results {

// {"<problem_id>": [{"sample_id", "compiled", "correctness", "metadata", "runtime",
// "runtime_stats"}, ...], ...}, keys in numeric order, as KernelBench's eval_from_generations
// writes it: runtime is the candidate's mean in ms (-1.0 when not timed), runtime_stats holds
// mean/std/min/max/num_trials/hardware/device (empty when not timed). Samples still pending are
// left out, as KernelBench holds only evaluated ones. KernelBench keys a file by problem id
// within one level, so a run that covers several levels is refused.
Result<std::string> export_kernelbench(const RunResults& run);

// One sample_record per line, each line ending in '\n'.
std::string export_jsonl(const RunResults& run);

// A header of sample_record's keys, then one line per sample (booleans 1/0, null empty),
// quoted as `dicebench query --format csv` quotes.
std::string export_csv(const RunResults& run);

}  // namespace dicebench::results
