// Several single-level runs of one model read as one run over their levels (`dicebench report 3 4
// 5`, with or without --html): one table by level with a total, as a run of the whole benchmark
// would give.
#pragma once

#include <vector>

#include "core/base/result.hpp"
#include "results/store/run_results.hpp"

namespace dicebench::results {

// The runs put together: their problems and samples by level, RunResults::parts naming the runs.
// The run row is the first run's, with the suites joined by "+", the earliest creation, the latest
// finish (none unless every run finished) and the first status that is not "finished". Errors (one
// line): runs of different models, a run that covers several levels, two runs of one level.
Result<RunResults> combine_level_runs(std::vector<RunResults> runs);

}  // namespace dicebench::results
