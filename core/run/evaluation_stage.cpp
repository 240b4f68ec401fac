// The evaluation stage: the pending samples shared out to one slot worker per slot.
#include "core/run/evaluation_stage.hpp"

#include "core/host/progress.hpp"
#include "core/run/slot_worker.hpp"

#include <thread>

namespace dicebench::run {

Result<EvaluationSummary> evaluate_pending(results::Store& store, int64_t run,
                                           const std::map<ProblemKey, ProblemSource>& problems,
                                           const EvaluationSession& session) {
  auto todo = pending_samples(store, run, problems);
  if (!todo) return todo.error();
  host::Progress progress("evaluating", todo->size(), "samples");
  SharedEvaluation shared{store, run, *todo, problems, session, progress};
  const auto& slots = session.slots();
  if (slots.size() <= 1) {
    run_slot(shared, slots.empty() ? std::nullopt : slots.front());
  } else {
    std::vector<std::thread> threads;
    for (const auto& slot : slots) threads.emplace_back([&shared, &slot] { run_slot(shared, slot); });
    for (auto& thread : threads) thread.join();
  }
  if (shared.first_error) return *shared.first_error;
  shared.summary.timing = progress.finish();
  return std::move(shared.summary);
}

}  // namespace dicebench::run
