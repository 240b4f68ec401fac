// Executing a planned run: batches through the model, one transaction per stored sample.
#include "core/host/run_executor.hpp"

#include "core/host/log.hpp"
#include "core/host/progress.hpp"
#include "core/host/repro.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace dicebench::host {

Result<RunOutcome> execute_run(RunPlan& plan, results::Store& store, std::optional<int64_t> resume_run,
                               size_t already_done) {
  RunOutcome outcome;
  outcome.already_done = already_done;
  if (resume_run) {
    outcome.run = *resume_run;
  } else {
    ReproRecord repro = collect_repro_record();
    repro.sandbox_json = plan.sandbox_json;
    results::NewRun run;
    run.model = plan.model_spec;
    run.suite = plan.suite_name;
    run.config_json = plan.config_json();
    run.dicebench_version = repro.dicebench_version;
    run.git_sha = repro.git_sha;
    run.host = repro.host;
    run.gpu = repro.gpu;
    run.driver_version = repro.driver_version;
    run.cuda_version = repro.cuda_version;
    run.torch_version = repro.torch_version;
    run.seed = static_cast<int64_t>(plan.seed);
    run.repro_json = repro.to_json();
    auto id = store.create_run(run);
    if (!id) return id.error();
    outcome.run = *id;
  }

  std::vector<results::ProblemRow> rows;
  for (const auto& p : plan.problems)
    rows.push_back({p.problem.id, p.problem.level, p.problem.name, p.problem.path, p.problem.content_hash, p.prompt_hash,
                    std::nullopt});  // traits: the evaluation stage records them (set_problem_traits)
  if (auto added = store.add_problems(outcome.run, rows); !added) {
    if (!resume_run) (void)store.finish_run(outcome.run, results::RunStatus::failed);
    return added.error();
  }

  Progress progress("generating", plan.requests.size(), "samples");
  const auto generation_start = std::chrono::steady_clock::now();
  std::string failure;
  for (size_t start = 0; start < plan.requests.size() && failure.empty(); start += plan.batch_size) {
    if (HostServices::cancel_requested()) break;
    const size_t end = std::min(plan.requests.size(), start + plan.batch_size);
    const std::vector<GenerationRequest> batch(plan.requests.begin() + static_cast<std::ptrdiff_t>(start),
                                               plan.requests.begin() + static_cast<std::ptrdiff_t>(end));
    // Progress moves once per batch: a batch's samples arrive together when it ends, and counting
    // them one by one would make the first of them look like the rate (an ETA of hours).
    size_t stored_in_batch = 0;
    auto generated = plan.model->generate(batch, [&](size_t index, Generation&& generation) -> Result<void> {
      const GenerationRequest& request = batch[index];
      const PlannedProblem* problem = plan.find_problem({request.level, request.problem_id});
      results::NewSample sample;
      sample.run = outcome.run;
      sample.level = request.level;
      sample.problem_id = request.problem_id;
      sample.sample_index = request.sample_index;
      sample.prompt_hash = problem->prompt_hash;
      sample.gen_stats_json = generation.stats_json.empty() ? "{}" : generation.stats_json;
      outcome.totals.add(sample.gen_stats_json);
      if (generation.candidate) {
        sample.candidate = std::move(generation.candidate);
      } else {
        auto candidate = plan.suite->extract(generation.completion);
        if (!candidate) return candidate.error();
        sample.candidate = std::move(*candidate);
      }
      if (!sample.candidate) ++outcome.extraction_failures;
      sample.completion = std::move(generation.completion);
      auto stored = store.insert_sample(sample);
      if (!stored) return stored.error();
      ++outcome.stored;
      ++stored_in_batch;
      return {};
    });
    progress.advance(stored_in_batch);
    if (!generated) failure = generated.error().message;
  }
  outcome.timing = progress.finish();
  outcome.generation_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - generation_start).count();

  if (!failure.empty() && failure != "cancelled") {
    outcome.status = results::RunStatus::failed;
    outcome.error = failure;
  } else if (HostServices::cancel_requested() || failure == "cancelled") {
    outcome.status = results::RunStatus::interrupted;
  } else {
    outcome.status = results::RunStatus::finished;
  }
  if (auto finished = store.finish_run(outcome.run, outcome.status); !finished) return finished.error();
  return outcome;
}

}  // namespace dicebench::host
