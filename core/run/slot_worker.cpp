// One evaluation slot's loop: claim, evaluate, store, count.
#include "core/run/slot_worker.hpp"

#include "core/host/host_services.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace dicebench::run {
namespace {

// Records the problem's traits in the run, the first time this run knows them. Under the lock.
Result<void> note_problem_traits(SharedEvaluation& shared, const harness::Evaluator& evaluator, const ProblemKey& problem,
                                 const std::string& problem_hash) {
  const auto traits = evaluator.traits(problem_hash);
  if (!traits || !shared.traits_noted.insert(problem).second) return {};
  DICEBENCH_TRY(shared.store.set_problem_traits(shared.run, problem, traits->traits.dump()));
  if (!traits->traits.empty()) ++shared.summary.degenerate_problems;
  return {};
}

// The evaluation row of a sample the evaluator has judged: what it measured goes to the caches,
// the problem's traits to the run, and what the suite's review found (when the sample was claimed)
// with the row. Callers hold the lock.
Result<results::StoredEvaluation> finished_row(SharedEvaluation& shared, const harness::Evaluator& evaluator, const CacheKeys& keys,
                                            const results::SampleRow& sample, Result<Evaluation> evaluation,
                                            ReviewFindings findings) {
  const ProblemKey key{sample.level, sample.problem_id};
  const ProblemSource& problem = shared.problems.at(key);
  if (!evaluation)
    return make_error(fmt::format("problem {} sample {}: {}", problem_key_text(key), sample.sample_index, evaluation.error().message));
  DICEBENCH_TRY(store_measured(shared.store, keys, *evaluation));
  DICEBENCH_TRY(note_problem_traits(shared, evaluator, key, problem.content_hash));
  for (auto& finding : findings) evaluation->flags.push_back(std::move(finding));
  return results::stored_evaluation(sample.id, *evaluation);
}

// Stores one evaluation row and counts it.
Result<void> record(SharedEvaluation& shared, const results::StoredEvaluation& row) {
  std::lock_guard guard(shared.lock);
  DICEBENCH_TRY(shared.store.insert_evaluation(row));
  ++shared.summary.verdicts[std::string(verdict_name(row.status))];
  for (const auto& flag : row.flags) ++shared.summary.flags[flag.name];
  ++shared.summary.evaluated;
  shared.progress.advance();
  return {};
}

// The row of a sample whose completion holds no code: nothing ran.
results::StoredEvaluation extraction_failed_row(int64_t sample, const std::string& device) {
  results::StoredEvaluation row;
  row.sample = sample;
  row.status = Verdict::extraction_failed;
  row.device = device;
  row.error_class = std::string(verdict_name(Verdict::extraction_failed));
  row.error_message = "the completion holds no code block";
  return row;
}

}  // namespace

void SharedEvaluation::fail(Error error) {
  std::lock_guard guard(lock);
  if (!first_error) first_error = std::move(error);
  stop = true;
}

bool SharedEvaluation::stopping() const { return stop || host::HostServices::cancel_requested(); }

// The slot's evaluator takes samples from the shared cursor while it wants more (its room ahead
// of the device, toolchain_builds.hpp's waiting room), and judges whichever has loaded first,
// starting the others' loads meanwhile; a sample without a candidate is stored at once. Before
// the GPU judges anything, the evaluator gets the stored baselines and traits of the problems
// claimed so far.
void run_slot(SharedEvaluation& shared, const std::optional<std::string>& slot) {
  harness::EvaluationSettings mine = shared.settings;
  mine.visible_devices = slot;
  harness::Evaluator evaluator(mine);
  evaluator.start_reference();
  const std::string slot_name = slot.value_or("cpu");
  struct Claimed {
    const results::SampleRow* sample;
    ReviewFindings findings;  // the suite's review, read as it was claimed
  };
  std::map<int64_t, Claimed> submitted;                    // by sample id
  std::map<std::string, CacheKeys> keys;                   // by problem hash, once primed
  std::set<std::string> to_prime;
  const auto claim = [&]() -> Result<bool> {
    const size_t index = shared.cursor++;
    if (index >= shared.todo.size()) return false;
    const results::SampleRow& sample = shared.todo[index];
    if (!sample.candidate) {
      DICEBENCH_TRY(record(shared, extraction_failed_row(sample.id, shared.settings.device)));
      return true;
    }
    const ProblemSource& problem = shared.problems.at({sample.level, sample.problem_id});
    auto findings = shared.session.review({sample.level, sample.problem_id}, *sample.candidate);
    if (!findings) return findings.error();
    evaluator.submit({sample.id, problem.source, problem.content_hash, *sample.candidate});
    submitted[sample.id] = {&sample, std::move(*findings)};
    if (!keys.count(problem.content_hash)) to_prime.insert(problem.content_hash);
    return true;
  };
  while (!shared.stop) {
    if (host::HostServices::cancel_requested()) {
      std::lock_guard guard(shared.lock);
      shared.summary.interrupted = true;
      shared.stop = true;
      break;
    }
    while (evaluator.wants_more() && !shared.stop) {
      auto claimed = claim();
      if (!claimed) return shared.fail(claimed.error());
      if (!*claimed) break;
    }
    if (evaluator.pending() == 0) {
      if (shared.cursor >= shared.todo.size()) break;
      continue;  // everything claimed so far was stored without evaluation
    }
    for (const auto& hash : to_prime) {
      auto primed = cache_keys(evaluator, hash);
      if (!primed) return shared.fail(primed.error());
      std::lock_guard guard(shared.lock);
      if (auto done = shared.caches.prime(shared.store, evaluator, slot_name, *primed); !done) return shared.fail(done.error());
      keys.emplace(hash, std::move(*primed));
    }
    to_prime.clear();
    auto finished = evaluator.next([&] { return shared.stopping(); });
    if (!finished) continue;  // stopping: the loop's top says why
    Claimed claimed = std::move(submitted.at(finished->tag));
    submitted.erase(finished->tag);
    const results::SampleRow& sample = *claimed.sample;
    const std::string& hash = shared.problems.at({sample.level, sample.problem_id}).content_hash;
    Result<results::StoredEvaluation> row = make_error("unset");
    {
      std::lock_guard guard(shared.lock);
      row = finished_row(shared, evaluator, keys.at(hash), sample, std::move(finished->evaluation), std::move(claimed.findings));
    }
    if (!row) return shared.fail(row.error());
    if (auto stored = record(shared, *row); !stored) return shared.fail(stored.error());
  }
}

}  // namespace dicebench::run
