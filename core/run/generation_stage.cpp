// The generation stage: batches through the model, one transaction per stored sample.
#include "core/run/generation_stage.hpp"

#include "core/host/plugin_call.hpp"
#include "core/host/progress.hpp"

#include <algorithm>
#include <chrono>

namespace dicebench::run {

GenerationOutcome generate_samples(host::RunPlan& plan, results::Store& store, int64_t run, size_t already_done) {
  GenerationOutcome outcome;
  outcome.already_done = already_done;
  host::Progress progress("generating", plan.requests.size(), "samples");
  // The count moves with each sample stored (a served model's answers arrive one by one); the rate
  // and the ETA move per batch, as a batch's samples may also arrive together when it ends.
  progress.rate_by_batches();
  const auto generation_start = std::chrono::steady_clock::now();
  std::optional<Error> failure;
  for (size_t start = 0; start < plan.requests.size() && !failure; start += plan.batch_size) {
    if (host::HostServices::cancel_requested()) break;
    const size_t end = std::min(plan.requests.size(), start + plan.batch_size);
    const std::vector<host::GenerationRequest> batch(plan.requests.begin() + static_cast<std::ptrdiff_t>(start),
                                                     plan.requests.begin() + static_cast<std::ptrdiff_t>(end));
    auto generated = plan.model->generate(batch, [&](size_t index, host::Generation&& generation) -> Result<void> {
      const host::GenerationRequest& request = batch[index];
      const host::PlannedProblem* problem = plan.find_problem({request.level, request.problem_id});
      results::NewSample sample;
      sample.run = run;
      sample.level = request.level;
      sample.problem_id = request.problem_id;
      sample.sample_index = request.sample_index;
      sample.prompt_hash = problem->prompt_hash;
      sample.gen_stats_json = generation.stats_json.empty() ? "{}" : generation.stats_json;
      const size_t failed_before = outcome.totals.failed;
      outcome.totals.add(sample.gen_stats_json);
      const bool request_failed = outcome.totals.failed > failed_before;  // no completion to extract from
      if (generation.candidate) {
        sample.candidate = std::move(generation.candidate);
      } else {
        const size_t index = *plan.suite->index_of(problem->problem.key());
        auto extraction = request.infill ? plan.suite->extract_span(index, generation.completion)
                                         : plan.suite->extract(index, generation.completion);
        if (!extraction) return extraction.error();
        sample.candidate = std::move(extraction->candidate);
        if (!extraction->details_json.empty()) sample.extraction_details_json = std::move(extraction->details_json);
      }
      if (!sample.candidate && !request_failed) ++outcome.extraction_failures;
      sample.completion = std::move(generation.completion);
      auto stored = store.insert_sample(sample);
      if (!stored) return stored.error();
      ++outcome.stored;
      progress.advance();
      return {};
    });
    progress.settle();
    if (!generated) failure = generated.error();
  }
  outcome.timing = progress.finish();
  outcome.generation_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - generation_start).count();

  // A model that stopped (its server stopped answering) leaves what it gave no result for to be
  // generated: the run is interrupted, to be resumed, as on Ctrl-C.
  const bool model_stopped = failure && failure->kind == ErrorKind::model_stopped;
  const bool cancelled = failure && failure->kind == ErrorKind::cancelled;
  if (failure && !cancelled && !model_stopped) {
    outcome.end = StageEnd::failed;
    outcome.error = failure->message;
  } else if (host::HostServices::cancel_requested() || cancelled || model_stopped) {
    outcome.end = StageEnd::interrupted;
    if (model_stopped && !host::HostServices::cancel_requested()) outcome.error = failure->message;
  }
  return outcome;
}

}  // namespace dicebench::run
