// A planned run's row and problems in the store.
#include "core/run/run_record.hpp"

#include "core/host/repro.hpp"

#include <nlohmann/json.hpp>

#include <ctime>

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

Result<void> record_resume(results::Store& store, int64_t run, const std::string& stored_config_json,
                           const std::map<std::string, ChangedSetting>& changed) {
  if (changed.empty()) return {};
  nlohmann::json config = nlohmann::json::parse(stored_config_json, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object())
    return make_error("run " + std::to_string(run) + ": its stored configuration is not a JSON object");
  nlohmann::json record = nlohmann::json::object();
  for (const auto& [key, change] : changed) {
    config["settings"][key] = change.to;
    record[key] = {{"from", change.from ? nlohmann::json(*change.from) : nlohmann::json(nullptr)}, {"to", change.to}};
  }
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char at[32];
  std::strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &utc);
  if (!config.contains("resumes") || !config["resumes"].is_array()) config["resumes"] = nlohmann::json::array();
  config["resumes"].push_back({{"at", at}, {"changed", record}});
  return store.set_run_config(run, config.dump());
}

Result<void> record_problems(const host::RunPlan& plan, results::Store& store, int64_t run) {
  std::vector<results::ProblemRow> rows;
  for (const auto& p : plan.problems)
    rows.push_back({p.problem.id, p.problem.level, p.problem.name, p.problem.path, p.problem.content_hash,
                    p.prompt_hash, std::nullopt});  // traits: the evaluation stage records them (set_problem_traits)
  return store.add_problems(run, rows);
}

}  // namespace dicebench::run
