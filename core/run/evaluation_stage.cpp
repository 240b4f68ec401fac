// The evaluation stage: the run's pending samples through the session's one evaluation loop, each
// result stored and counted as it is final.
#include "core/run/evaluation_stage.hpp"

#include "core/host/host_services.hpp"
#include "core/host/progress.hpp"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <set>

namespace dicebench::run {
namespace {

// What the stage's callbacks share: the store (its one connection) and the counts, under one lock.
struct Stage {
  results::Store& store;
  int64_t run;
  host::Progress& progress;
  std::mutex lock{};
  EvaluationSummary summary{};
  std::optional<Error> first_error{};
  std::atomic<bool> stop{false};
  std::set<ProblemKey> traits_noted{};  // problems whose traits this run has recorded

  // Stores one row and counts it. Under the lock.
  Result<void> record(const results::StoredEvaluation& row) {
    DICEBENCH_TRY(store.insert_evaluation(row));
    ++summary.verdicts[std::string(verdict_name(row.status))];
    for (const auto& flag : row.flags) ++summary.flags[flag.name];
    ++summary.evaluated;
    progress.advance();
    return {};
  }
  // Records the first error and stops the rest. Under the lock.
  void fail(Error error) {
    if (!first_error) first_error = std::move(error);
    stop = true;
  }
};

}  // namespace

Result<EvaluationSummary> evaluate_pending(results::Store& store, int64_t run,
                                           const std::map<ProblemKey, ProblemSource>& problems,
                                           EvaluationSession& session) {
  auto todo = pending_samples(store, run, problems);
  if (!todo) return todo.error();
  host::Progress progress("evaluating", todo->size(), "samples");
  Stage stage{store, run, progress};
  // Baselines, traits and bandwidths come from the run's store and what is measured goes there,
  // under the stage's lock.
  session.use_store(store, stage.lock, /*writable=*/true);
  std::vector<EvaluationSession::Pair> batch;
  std::vector<const results::SampleRow*> samples;  // batch's, in order
  {
    std::lock_guard guard(stage.lock);
    for (const auto& sample : *todo) {
      if (!sample.candidate) {
        if (auto stored = stage.record(
                results::stored_evaluation(sample.id, extraction_failed_evaluation(session.settings().device)));
            !stored)
          return stored.error();
        continue;
      }
      const ProblemKey key{sample.level, sample.problem_id};
      batch.push_back({problems.at(key).source, *sample.candidate, key});
      samples.push_back(&sample);
    }
  }
  session.evaluate(
      batch,
      [&](size_t index, Result<Evaluation> evaluation) {
        std::lock_guard guard(stage.lock);
        if (stage.stop) return;
        const results::SampleRow& sample = *samples[index];
        const ProblemKey key{sample.level, sample.problem_id};
        if (!evaluation)
          return stage.fail(make_error(fmt::format("problem {} sample {}: {}", problem_key_text(key),
                                                   sample.sample_index, evaluation.error().message)));
        // The problem's traits, in the run, the first time this run knows them.
        if (evaluation->problem_traits && stage.traits_noted.insert(key).second) {
          if (auto noted = store.set_problem_traits(run, key, evaluation->problem_traits->traits.dump()); !noted)
            return stage.fail(noted.error());
          if (!evaluation->problem_traits->traits.empty()) ++stage.summary.degenerate_problems;
        }
        if (auto stored = stage.record(results::stored_evaluation(sample.id, *evaluation)); !stored)
          stage.fail(stored.error());
      },
      [&] { return stage.stop || host::HostServices::cancel_requested(); });
  std::lock_guard guard(stage.lock);
  if (stage.first_error) return *stage.first_error;
  if (host::HostServices::cancel_requested()) stage.summary.interrupted = true;
  stage.summary.timing = progress.finish();
  return std::move(stage.summary);
}

}  // namespace dicebench::run
