// The evaluation stage: the pending samples shared out to one slot worker per slot.
#include "core/run/evaluation_stage.hpp"

#include "core/host/progress.hpp"
#include "core/run/slot_worker.hpp"

#include <thread>

namespace dicebench::run {

Result<EvaluationSummary> evaluate_pending(results::Store& store, int64_t run,
                                           const std::map<ProblemKey, ProblemSource>& problems,
                                           const harness::EvaluationSettings& settings,
                                           const std::vector<std::optional<std::string>>& slots,
                                           const CandidateReview& review) {
  auto todo = pending_samples(store, run, problems);
  if (!todo) return todo.error();
  host::Progress progress("evaluating", todo->size(), "samples");
  // One pool of torch's toolchain builds for every slot: its limit is the machine's.
  harness::EvaluationSettings shared_settings = settings;
  if (!shared_settings.toolchain_builds)
    shared_settings.toolchain_builds = std::make_shared<harness::ToolchainBuilds>(harness::toolchain_build_settings(settings));
  SharedEvaluation shared{store, run, *todo, problems, shared_settings, review, progress};
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
