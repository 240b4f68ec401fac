// One evaluation slot's loop: claim, evaluate, store, count.
#include "core/run/slot_worker.hpp"

#include "core/host/host_services.hpp"
#include "core/run/evaluation_row.hpp"
#include "core/run/sample_picking.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dicebench::run {
namespace {

// Records the problem's traits in the run, the first time this run knows them. Under the lock.
Result<void> note_problem_traits(SharedEvaluation& shared, const harness::Evaluator& evaluator, const ProblemKey& problem,
                                 const std::string& problem_hash) {
  const auto traits = evaluator.traits(problem_hash);
  if (!traits || !shared.traits_noted.insert(problem).second) return {};
  DICEBENCH_TRY(shared.store.set_problem_traits(shared.run, problem, stored_json(traits->traits)));
  if (!traits->traits.empty()) ++shared.summary.degenerate_problems;
  return {};
}

// The evaluation row of a sample that has a candidate: the evaluator gets the cached measurements,
// evaluates, and what it measured, the problem's traits and the suite's review (its calls
// serialised by the lock) go with it.
Result<results::NewEvaluation> evaluate_candidate(SharedEvaluation& shared, harness::Evaluator& evaluator, const std::string& slot,
                                                  const results::SampleRow& sample) {
  const ProblemKey key{sample.level, sample.problem_id};
  const ProblemSource& problem = shared.problems.at(key);
  auto keys = cache_keys(evaluator, problem.content_hash);
  if (!keys) return keys.error();
  {
    std::lock_guard guard(shared.lock);
    DICEBENCH_TRY(shared.caches.prime(shared.store, evaluator, slot, *keys));
  }
  auto evaluation = evaluator.evaluate(problem.source, problem.content_hash, *sample.candidate);
  if (!evaluation)
    return make_error(fmt::format("problem {} sample {}: {}", problem_key_text(key), sample.sample_index, evaluation.error().message));
  std::lock_guard guard(shared.lock);
  DICEBENCH_TRY(store_measured(shared.store, *keys, *evaluation));
  DICEBENCH_TRY(note_problem_traits(shared, evaluator, key, problem.content_hash));
  results::NewEvaluation row = evaluation_row(sample.id, *evaluation, shared.settings.device);
  if (shared.review) {
    auto found = shared.review(key, *sample.candidate);
    if (!found) return found.error();
    for (auto& [flag, detail] : *found) row.flags.push_back({flag, std::move(detail)});
  }
  return row;
}

// Stores one evaluation row and counts it.
Result<void> record(SharedEvaluation& shared, const results::NewEvaluation& row) {
  std::lock_guard guard(shared.lock);
  DICEBENCH_TRY(shared.store.insert_evaluation(row));
  ++shared.summary.verdicts[std::string(results::verdict_name(row.status))];
  for (const auto& flag : row.flags) ++shared.summary.flags[std::string(results::flag_name(flag.flag))];
  ++shared.summary.evaluated;
  shared.progress.advance();
  return {};
}

}  // namespace

void SharedEvaluation::fail(Error error) {
  std::lock_guard guard(lock);
  if (!first_error) first_error = std::move(error);
  stop = true;
}

bool SharedEvaluation::stopping() const { return stop || host::HostServices::cancel_requested(); }

void run_slot(SharedEvaluation& shared, const std::optional<std::string>& slot) {
  harness::EvaluationSettings mine = shared.settings;
  mine.visible_devices = slot;
  harness::Evaluator evaluator(mine);
  evaluator.start_reference();
  const std::string slot_name = slot.value_or("cpu");
  ClaimedSamples claimed(shared.todo, shared.cursor,
                         {[&](const std::string& candidate) { evaluator.prefetch(candidate); },
                          [&](const std::string& candidate) { return evaluator.load_state(candidate); }},
                         mine.prefetch);
  while (!claimed.empty() && !shared.stop) {
    if (host::HostServices::cancel_requested()) {
      std::lock_guard guard(shared.lock);
      shared.summary.interrupted = true;
      shared.stop = true;
      break;
    }
    const results::SampleRow& sample = claimed.take([&] { return shared.stopping(); });
    auto row = sample.candidate ? evaluate_candidate(shared, evaluator, slot_name, sample)
                                : Result<results::NewEvaluation>(extraction_failed_row(sample.id, shared.settings.device));
    if (!row) return shared.fail(row.error());
    if (auto stored = record(shared, *row); !stored) return shared.fail(stored.error());
  }
}

}  // namespace dicebench::run
