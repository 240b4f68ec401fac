// A planned run's row and problems in the store.
#include "core/run/run_record.hpp"

#include "core/host/repro.hpp"

#include <optional>
#include <vector>

namespace dicebench::run {

Result<int64_t> record_run(const host::RunPlan& plan, results::Store& store) {
  host::ReproRecord repro = host::collect_repro_record();
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
  return store.create_run(run);
}

Result<void> record_problems(const host::RunPlan& plan, results::Store& store, int64_t run) {
  std::vector<results::ProblemRow> rows;
  for (const auto& p : plan.problems)
    rows.push_back({p.problem.id, p.problem.level, p.problem.name, p.problem.path, p.problem.content_hash, p.prompt_hash,
                    std::nullopt});  // traits: the evaluation stage records them (set_problem_traits)
  return store.add_problems(run, rows);
}

}  // namespace dicebench::run
