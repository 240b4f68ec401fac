// The evaluation stage of a run: evaluates every stored sample that has no evaluation yet through
// the harness's isolated workers, one Evaluator per slot (a GPU, or a CPU worker) in parallel, and
// stores each verdict in its own transaction; samples without a candidate get extraction_failed.
#pragma once

#include "core/base/result.hpp"
#include "core/run/evaluation_session.hpp"
#include "core/run/pending_samples.hpp"
#include "harness/client/evaluator.hpp"
#include "results/store/store.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dicebench::run {

struct EvaluationSummary {
  size_t evaluated = 0;
  std::map<std::string, size_t> verdicts;
  std::map<std::string, size_t> flags;  // evaluations by flag (core/spec/vocabulary.toml)
  size_t degenerate_problems = 0;       // problems with a degenerate trait
  std::string timing;
  bool interrupted = false;
};

// Evaluates the run's pending samples through the session (its one evaluation loop, on every slot,
// the suite's review read for each candidate): each result is stored in its own transaction as it
// is final, with the baselines, traits and bandwidths the run's store holds and gets. The first
// error stops the rest; Ctrl-C ends the stage as interrupted.
Result<EvaluationSummary> evaluate_pending(results::Store& store, int64_t run,
                                           const std::map<ProblemKey, ProblemSource>& problems,
                                           EvaluationSession& session);

}  // namespace dicebench::run
