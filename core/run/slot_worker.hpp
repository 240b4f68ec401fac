// One slot of the evaluation stage: its own Evaluator (reference worker, candidate workers) takes
// samples from the stage's shared queue until none is left, the stage stops, or Ctrl-C; what the
// slots share (the store's one connection, the summary, the progress line) is under one lock.
#pragma once

#include "core/host/progress.hpp"
#include "core/run/evaluation_caches.hpp"
#include "core/run/evaluation_stage.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dicebench::run {

struct SharedEvaluation {
  SharedEvaluation(results::Store& store, int64_t run, const std::vector<results::SampleRow>& todo,
                   const std::map<ProblemKey, ProblemSource>& problems, const EvaluationSession& session, host::Progress& progress)
      : store(store), run(run), todo(todo), problems(problems), session(session), settings(session.settings()), progress(progress) {}

  results::Store& store;
  int64_t run;
  const std::vector<results::SampleRow>& todo;
  const std::map<ProblemKey, ProblemSource>& problems;
  const EvaluationSession& session;  // settings and the suite's review
  const harness::EvaluationSettings& settings;
  host::Progress& progress;

  std::atomic<size_t> cursor{0};  // the next sample of `todo` no slot has claimed
  std::atomic<bool> stop{false};
  std::mutex lock;                // for everything below and the store
  std::optional<Error> first_error;
  EvaluationSummary summary;
  EvaluationCaches caches;
  std::set<ProblemKey> traits_noted;  // problems whose traits this run has recorded

  // Records the first error and stops every slot.
  void fail(Error error);
  bool stopping() const;
};

// Evaluates samples on `slot` (a GPU to pin, or none) until the queue is empty or the stage stops.
void run_slot(SharedEvaluation& shared, const std::optional<std::string>& slot);

}  // namespace dicebench::run
