// The evaluation stage of a run: evaluates every stored sample that has no evaluation yet through
// the harness's isolated workers, one Evaluator per slot (a GPU, or a CPU worker) in parallel, and
// stores each verdict in its own transaction; samples without a candidate get extraction_failed.
#pragma once

#include "core/base/result.hpp"
#include "core/run/pending_samples.hpp"
#include "harness/client/evaluator.hpp"
#include "results/store.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dicebench::run {

struct EvaluationSummary {
  size_t evaluated = 0;
  std::map<std::string, size_t> verdicts;
  std::map<std::string, size_t> flags;  // evaluations by flag (results/flags.hpp)
  size_t degenerate_problems = 0;       // problems with a degenerate trait
  std::string timing;
  bool interrupted = false;
};

// What reading a candidate for a problem finds (the suite's review): flags added to its evaluation.
using CandidateReview = std::function<Result<std::vector<std::pair<results::EvaluationFlag, std::string>>>(
    const ProblemKey& problem, const std::string& candidate)>;

// Evaluates the run's pending samples on `slots` (see host::evaluation_slots); `review` (if set) is
// called for every candidate, from those slots' threads. The first error stops every slot.
Result<EvaluationSummary> evaluate_pending(results::Store& store, int64_t run,
                                           const std::map<ProblemKey, ProblemSource>& problems,
                                           const harness::EvaluationSettings& settings,
                                           const std::vector<std::optional<std::string>>& slots,
                                           const CandidateReview& review = {});

}  // namespace dicebench::run
