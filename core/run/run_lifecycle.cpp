// The run lifecycle: resume or plan, preflight, record, generate, evaluate, report.
#include "core/run/run_lifecycle.hpp"

#include "core/host/evaluation_settings.hpp"
#include "core/host/log.hpp"
#include "core/host/plugin_registry.hpp"
#include "core/host/run_plan.hpp"
#include "core/host/setting_names.hpp"
#include "core/run/evaluation_session.hpp"
#include "core/run/resume.hpp"
#include "core/run/run_record.hpp"
#include "core/run/run_status.hpp"

#include <fmt/format.h>

#include <map>

namespace dicebench::run {
namespace {

// A setting that says where candidates are judged, not how: the Ray cluster (eval.ray,
// eval.ray_actors, eval.ray_resource). The verdicts are the same either way.
bool is_placement_setting(const std::string& key) { return key.starts_with("eval.ray"); }

// The settings the run starts from: a new run's, or a resumed run's own with the request's
// replacements; either way with the database where it is now (a model's cache lives beside it).
host::Config starting_config(const RunRequest& request, const std::optional<ResumedRun>& resumed) {
  host::Config config = resumed ? resumed->config : request.settings;
  if (resumed) {
    // Where it is judged is the resume's to say (run --resume N --ray ADDRESS, or here): not the run's.
    host::Config own;
    for (const auto& [key, value] : config.values())
      if (!is_placement_setting(key)) own.set(key, value);
    config = std::move(own);
    for (const auto& [key, value] : request.settings.values()) config.set(key, value);
  }
  config.set("db", request.db);
  return config;
}

// The settings a resume changes (those of the request that differ from the run's stored ones). Only
// the model's and the suite's own settings may change ("openai.base_url", "kernelbench.root"): what
// they change in completions or prompts is checked by the model's describe() and the problems'
// prompt hashes; the host's own (problems, samples, seed, eval.*) are the run's.
Result<std::map<std::string, ChangedSetting>> resume_changes(const RunRequest& request, const ResumedRun& resumed,
                                                             const host::RunPlan& plan) {
  std::map<std::string, ChangedSetting> changed;
  const std::string model_section = plan.model_plugin.info.name + ".";
  const std::string suite_section = plan.suite_plugin.info.name + ".";
  for (const auto& [key, value] : request.settings.values()) {
    if (key == "db" || is_placement_setting(key)) continue;
    const auto stored = resumed.config.get(key);
    if (stored && *stored == value) continue;
    if (key.rfind(model_section, 0) != 0 && key.rfind(suite_section, 0) != 0)
      return make_error(
          fmt::format("--resume continues run {} with its own settings; {} cannot change (a resume may change "
                      "the model's and the suite's own settings, such as {}base_url)",
                      resumed.state.run, key, model_section));
    changed[key] = {stored, value};
  }
  return changed;
}

std::map<ProblemKey, ProblemSource> problem_sources(const host::RunPlan& plan) {
  std::map<ProblemKey, ProblemSource> sources;
  for (const auto& problem : plan.problems)
    sources[problem.problem.key()] = {problem.problem.source, problem.problem.content_hash};
  return sources;
}

// Evaluates the run's pending samples, ends the run and, when it finished, makes its report.
Result<void> evaluate(host::RunPlan& plan, results::Store& store, EvaluationSession& session, RunStatusKeeper& status,
                      RunOutcome& outcome) {
  outcome.evaluation_device = session.settings().device;
  outcome.evaluation_slots = session.slots();
  outcome.evaluation_pool = session.ray_pool_description();
  auto evaluated = evaluate_pending(store, outcome.run, problem_sources(plan), session);
  if (!evaluated) {
    (void)status.end(StageEnd::failed);
    outcome.status = RunStatus::failed;
    outcome.error = evaluated.error().message;
    return {};
  }
  const StageEnd end = evaluated->interrupted ? StageEnd::interrupted : StageEnd::completed;
  DICEBENCH_TRY(status.end(end));
  outcome.status = status_of(end);
  outcome.evaluation = std::move(*evaluated);
  auto time = results::time_breakdown(store, outcome.run);
  if (!time) return time.error();
  outcome.time = std::move(*time);
  if (end != StageEnd::completed) return {};
  auto report = results::compute_report(store, outcome.run);
  if (report)
    outcome.report = std::move(*report);
  else
    outcome.error = report.error().message;
  return {};
}

}  // namespace

Result<RunOutcome> run_lifecycle(const RunRequest& request, const RunEvents& events) {
  host::HostServices::install_signal_handlers();
  const auto& registry = host::PluginRegistry::installed(
      request.plugin_dirs.empty() ? host::PluginRegistry::default_search_dirs() : request.plugin_dirs);
  // A setting no one reads is a typo: refused before anything is opened.
  DICEBENCH_TRY(host::check_setting_names(request.settings, registry));
  // The database first: a read-only, locked or newer database fails before any work.
  auto store = results::Store::open(request.db);
  if (!store) return store.error();
  std::optional<ResumedRun> resumed;
  if (request.resume) {
    auto read = resume_run(*store, *request.resume, request.generate_only);
    if (!read) return read.error();
    resumed = std::move(*read);
  }
  auto planned = host::plan_run(starting_config(request, resumed), registry, resumed ? &resumed->state : nullptr);
  if (!planned) return planned.error();
  host::RunPlan& plan = **planned;
  // The model and the suite have read their settings: one in their sections they did not ask for is a typo.
  DICEBENCH_TRY(host::check_settings_asked(request.settings, plan.services->asked(),
                                           {plan.model_plugin.info.name, plan.suite_plugin.info.name},
                                           /*other_sections=*/true));
  std::map<std::string, ChangedSetting> changed;
  if (resumed) {
    auto changes = resume_changes(request, *resumed, plan);
    if (!changes) return changes.error();
    changed = std::move(*changes);
  }
  // Evaluation's settings and prerequisites are checked before anything is generated or stored.
  std::unique_ptr<EvaluationSession> evaluation;
  if (request.generate_only) {
    // Not used now, but stored with the run, which a later --resume evaluates with them as they are.
    auto settings = host::evaluation_settings(plan.config);
    if (!settings) return settings.error();
  } else {
    auto opened = EvaluationSession::open(plan.config, &*plan.suite);
    if (!opened) return opened.error();
    host::log_info("sandbox: {}", (*opened)->sandbox_summary());  // said before anything runs
    plan.sandbox_json = (*opened)->sandbox_json();
    evaluation = std::move(*opened);
  }

  RunOutcome outcome;
  outcome.model_spec = plan.model_spec;
  outcome.suite_name = plan.suite_name;
  outcome.problems = plan.problems.size();
  for (const auto& problem : plan.problems) outcome.samples += static_cast<size_t>(problem.samples);
  const size_t already_done = resumed ? resumed->state.done.size() : 0;
  host::log_info("{} {}: {} problems, {} samples to generate{}", resumed ? "resuming run" : "run",
                 resumed ? std::to_string(*request.resume) : plan.model_spec + " on " + plan.suite_name,
                 plan.problems.size(), plan.requests.size(),
                 resumed ? fmt::format(" ({} already stored)", already_done) : "");

  if (resumed) {
    outcome.run = *request.resume;
  } else {
    auto id = record_run(plan, *store);
    if (!id) return id.error();
    outcome.run = *id;
  }
  RunStatusKeeper status(*store, outcome.run, resumed ? resumed->status : RunStatus::running);
  if (auto recorded = record_problems(plan, *store, outcome.run); !recorded) {
    if (!resumed) (void)status.end(StageEnd::failed);
    return recorded.error();
  }
  DICEBENCH_TRY(status.reopen());
  if (!changed.empty()) {
    DICEBENCH_TRY(record_resume(*store, outcome.run, resumed->config_json, changed));
    for (const auto& [key, change] : changed)
      host::log_info("run {}: {} changes from {} to {} (recorded in runs.config '$.resumes')", outcome.run, key,
                     change.from ? "'" + *change.from + "'" : std::string("its default"), "'" + change.to + "'");
  }

  outcome.generation = generate_samples(plan, *store, outcome.run, already_done);
  if (outcome.generation.end != StageEnd::completed || !evaluation) {
    DICEBENCH_TRY(status.end(outcome.generation.end));
    outcome.status = status_of(outcome.generation.end);
    outcome.error = outcome.generation.error;
    if (events.generated) events.generated(outcome);
    return outcome;
  }
  if (events.generated) events.generated(outcome);
  DICEBENCH_TRY(evaluate(plan, *store, *evaluation, status, outcome));
  return outcome;
}

}  // namespace dicebench::run
