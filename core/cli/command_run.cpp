// `dicebench run`: generate completions for a suite with a model and store them (then evaluate,
// once the evaluation worker exists); `--resume RUN` continues a stored run.
#include "core/base/text.hpp"
#include "core/cli/commands.hpp"
#include "core/host/evaluation_stage.hpp"
#include "core/host/host_services.hpp"
#include "core/host/log.hpp"
#include "core/host/run_executor.hpp"
#include "core/host/run_plan.hpp"
#include "harness/client/python_modules.hpp"
#include "results/report.hpp"
#include "results/report_format.hpp"
#include "results/store.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>

#define DICEBENCH_CHECK_STORE(expr)                        \
  do {                                                     \
    if (auto checked_ = (expr); !checked_) return fail(checked_.error().message); \
  } while (0)

namespace dicebench::cli {
namespace {

// Samples of a run that still need an evaluation row.
Result<size_t> unevaluated_samples(results::Store& store, int64_t run) {
  auto samples = store.sample_count(run);
  if (!samples) return samples.error();
  auto evaluations = store.evaluations(run);
  if (!evaluations) return evaluations.error();
  return static_cast<size_t>(*samples) - evaluations->size();
}

struct RunOptions {
  std::string model, model_path, suite, problems, config_file, kernelbench_root, device, tolerance, gpus;
  std::optional<int> trials;
  std::string db = kDefaultDatabase;
  std::optional<int> samples;
  std::optional<int64_t> seed, resume;
  std::optional<int> batch_size;
  std::vector<std::string> sets;
  bool generate_only = false;
};

Result<host::Config> resolve_config(const RunOptions& o) {
  host::Config config;
  if (!o.config_file.empty()) {
    auto loaded = host::Config::from_toml_file(o.config_file);
    if (!loaded) return loaded.error();
    config = std::move(*loaded);
  }
  if (!o.model.empty()) config.set("model", o.model);
  if (!o.model_path.empty()) config.set("model_path", o.model_path);
  if (!o.suite.empty()) config.set("suite", o.suite);
  if (!o.problems.empty()) config.set("problems", o.problems);
  if (o.samples) config.set("samples", std::to_string(*o.samples));
  if (o.seed) config.set("seed", std::to_string(*o.seed));
  if (o.batch_size) config.set("batch_size", std::to_string(*o.batch_size));
  if (!o.kernelbench_root.empty()) config.set("kernelbench.root", o.kernelbench_root);
  if (!o.device.empty()) config.set("eval.device", o.device);
  if (!o.gpus.empty()) config.set("eval.gpus", o.gpus);
  if (!o.tolerance.empty()) config.set("eval.tolerance", o.tolerance);
  if (o.trials) config.set("eval.trials", std::to_string(*o.trials));
  for (const auto& assignment : o.sets) DICEBENCH_TRY(config.assign(assignment));
  return config;
}

int run(const RunOptions& o, CLI::App& app) {
  host::HostServices::install_signal_handlers();
  const auto registry = host::PluginRegistry::discover(host::PluginRegistry::default_search_dirs());

  // The database first: a read-only, locked or newer database fails before any work.
  const std::string db = o.db;
  auto store = results::Store::open(db);
  if (!store) return fail(store.error().message);

  std::optional<host::ResumeState> resume;
  host::Config config;
  if (o.resume) {
    for (const char* flag : {"--model", "--model-path", "--suite", "--problems", "--samples", "--seed", "--config", "--set", "--batch-size",
                             "--device", "--trials", "--tolerance"})
      if (app.count(flag)) return fail(fmt::format("--resume continues run {} with its own settings; drop {}", *o.resume, flag));
    auto stored = store->run(*o.resume);
    if (!stored) return fail(stored.error().message);
    auto pending = unevaluated_samples(*store, *o.resume);
    if (!pending) return fail(pending.error().message);
    if (stored->status == results::RunStatus::finished && (o.generate_only || *pending == 0))
      return fail(fmt::format("run {} is already finished; nothing to resume", *o.resume));
    auto restored = host::config_from_run_json(stored->config_json);
    if (!restored) return fail(fmt::format("run {}: {}", *o.resume, restored.error().message));
    config = std::move(*restored);
    config.set("db", db);  // where the database is now (a model's cache lives beside it)
    if (!o.kernelbench_root.empty()) config.set("kernelbench.root", o.kernelbench_root);
    auto done = store->done_samples(*o.resume);
    if (!done) return fail(done.error().message);
    resume = host::ResumeState{*o.resume, std::move(*done), ""};
    resume->model_settings_json = nlohmann::json::parse(stored->config_json).at("model").dump();
  } else {
    auto resolved = resolve_config(o);
    if (!resolved) return fail(resolved.error().message);
    config = std::move(*resolved);
    config.set("db", db);
  }

  auto plan = host::plan_run(std::move(config), registry, resume ? &*resume : nullptr);
  if (!plan) return fail(plan.error().message);
  auto& p = **plan;

  // Evaluation settings are checked before anything is generated or stored.
  std::optional<harness::EvaluationSettings> settings;
  std::vector<std::optional<std::string>> slots;
  if (!o.generate_only) {
    auto resolved = host::evaluation_settings(p.config);
    if (!resolved) return fail(resolved.error().message);
    settings = std::move(*resolved);
    auto resolved_slots = host::evaluation_slots(p.config, settings->device);
    if (!resolved_slots) return fail(resolved_slots.error().message);
    slots = std::move(*resolved_slots);
    // Which protections candidates get here, said before anything runs (and refused under require).
    auto sandbox = harness::sandbox_status(settings->sandbox);
    if (!sandbox) return fail(sandbox.error().message);
    host::log_info("sandbox: {}", sandbox->summary());
    p.sandbox_json = sandbox->json();
    // What the suite's candidates import must be there (a Triton run without triton).
    const auto suite_settings = nlohmann::json::parse(p.suite_settings_json, nullptr, false);
    std::vector<std::string> modules;
    if (suite_settings.is_object())
      for (const auto& m : suite_settings.value("candidate_python_modules", nlohmann::json::array()))
        if (m.is_string()) modules.push_back(m.get<std::string>());
    auto missing = harness::missing_python_modules(modules);
    if (!missing) return fail(missing.error().message);
    if (!missing->empty())
      return fail(fmt::format("this run's candidates import {}, which the workers' Python ({}) lacks; install it there",
                              fmt::join(*missing, ", "), harness::worker_python()));
  }

  size_t total_samples = 0;
  for (const auto& problem : p.problems) total_samples += static_cast<size_t>(problem.samples);
  host::log_info("{} {}: {} problems, {} samples to generate{}", o.resume ? "resuming run" : "run", o.resume ? std::to_string(*o.resume) : p.model_spec + " on " + p.suite_name,
                 p.problems.size(), p.requests.size(),
                 resume ? fmt::format(" ({} already stored)", resume->done.size()) : "");

  auto outcome = host::execute_run(p, *store, o.resume, resume ? resume->done.size() : 0);
  if (!outcome) return fail(outcome.error().message);

  fmt::print("run {}: {} on {}, {} problems, {} samples\n", outcome->run, p.model_spec, p.suite_name, p.problems.size(), total_samples);
  fmt::print("  generated {}{}\n", outcome->timing,
             outcome->already_done ? fmt::format(", {} stored before", outcome->already_done) : "");
  fmt::print("{}", outcome->totals.summary(outcome->generation_seconds));
  fmt::print("  no code block in {} completion(s) (stored as extraction failures)\n", outcome->extraction_failures);
  const auto stop_line = [&](results::RunStatus status, const std::string& why) {
    fmt::print("  database: {}\n", db);
    if (status == results::RunStatus::interrupted) {
      fmt::print("  interrupted: continue with dicebench run --resume {}{} --db {}\n", outcome->run,
                 o.generate_only ? " --generate-only" : "", db);
      return 130;
    }
    return fail(fmt::format("run {} stopped: {}; what was stored is kept, continue with dicebench run --resume {}{} --db {}",
                            outcome->run, why, outcome->run, o.generate_only ? " --generate-only" : "", db));
  };
  if (outcome->status != results::RunStatus::finished) return stop_line(outcome->status, outcome->error);

  if (o.generate_only) {
    fmt::print("  evaluation: not run (--generate-only)\n  database: {}\n  next: dicebench show {} --db {}\n", db,
               outcome->run, db);
    return 0;
  }
  std::map<ProblemKey, host::ProblemSource> sources;
  for (const auto& problem : p.problems) sources[problem.problem.key()] = {problem.problem.source, problem.problem.content_hash};
  DICEBENCH_CHECK_STORE(store->finish_run(outcome->run, results::RunStatus::running));
  const host::CandidateReview review = [&p](const ProblemKey& key, const std::string& candidate)
      -> Result<std::vector<std::pair<results::EvaluationFlag, std::string>>> {
    const auto index = p.suite->index_of(key);
    if (!index) return std::vector<std::pair<results::EvaluationFlag, std::string>>{};
    return p.suite->review(*index, candidate);
  };
  auto evaluated = host::evaluate_pending(*store, outcome->run, sources, *settings, slots, review);
  if (!evaluated) {
    (void)store->finish_run(outcome->run, results::RunStatus::failed);
    return stop_line(results::RunStatus::failed, evaluated.error().message);
  }
  const auto final_status = evaluated->interrupted ? results::RunStatus::interrupted : results::RunStatus::finished;
  DICEBENCH_CHECK_STORE(store->finish_run(outcome->run, final_status));
  std::string verdicts;
  for (const auto& [verdict, count] : evaluated->verdicts) verdicts += fmt::format("{}{} {}", verdicts.empty() ? "" : ", ", verdict, count);
  std::string where = settings->device;
  if (settings->device == "cuda") {
    std::vector<std::string> gpus;
    for (const auto& slot : slots) gpus.push_back(slot.value_or("?"));
    where += fmt::format(" (GPU {})", join(gpus, ","));
  } else if (slots.size() > 1) {
    where += fmt::format(" ({} workers)", slots.size());
  }
  fmt::print("  evaluated {} on {}: {}\n", evaluated->timing, where, verdicts.empty() ? "nothing to do" : verdicts);
  // What qualifies those verdicts; a fast-path disagreement is a defect of the fast path.
  std::string flags;
  for (const auto& [flag, count] : evaluated->flags) flags += fmt::format("{}{} {}", flags.empty() ? "" : ", ", flag, count);
  if (!flags.empty()) fmt::print("  flagged: {}\n", flags);
  if (evaluated->degenerate_problems)
    fmt::print("  degenerate problems (their answer can pass without being computed): {}\n", evaluated->degenerate_problems);
  if (final_status != results::RunStatus::finished) return stop_line(final_status, "");
  // The run's report, as `dicebench report RUN` prints it.
  auto report = results::compute_report(*store, outcome->run);
  if (!report) return stop_line(final_status, report.error().message);
  fmt::print("\n{}", results::format_report(*report));
  fmt::print("  database: {}\n  next: dicebench show {} --db {}\n", db, outcome->run, db);
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& parent) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* app = parent.add_subcommand("run", "Generate samples for a suite with a model, evaluate and store them");
  app->add_option("--model", o->model, "Model name (dicebench list models), e.g. dice-8b or replay:FOLDER");
  app->add_option("--model-path", o->model_path, "The model's folder (config.json, safetensors, tokenizer.json) instead of the Hugging Face cache");
  app->add_option("--suite", o->suite, "Suite name (dicebench list suites), e.g. kernelbench-l2, or kernelbench for every level");
  app->add_option("--problems", o->problems, "Problem ids and ranges, e.g. 1-4,7; LEVEL/IDS items for --suite kernelbench, e.g. 1/1-10,2/5 (default: all)");
  app->add_option("--samples", o->samples, "Samples per problem (default 1)")->check(CLI::PositiveNumber);
  app->add_option("--db", o->db, "Results database")->capture_default_str();
  app->add_option("--config", o->config_file, "TOML configuration file; flags override it");
  app->add_option("--resume", o->resume, "Continue the stored run RUN where it stopped");
  app->add_option("--seed", o->seed, "Run seed (default: random, recorded)")->check(CLI::NonNegativeNumber);
  app->add_option("--batch-size", o->batch_size, "Requests per generate call (default: the model's)")->check(CLI::PositiveNumber);
  app->add_option("--kernelbench-root", o->kernelbench_root, "KernelBench checkout (or its folder holding level1/...)");
  app->add_option("--set", o->sets, "Any setting as KEY=VALUE, e.g. kernelbench.prompt=zero_shot");
  app->add_flag("--generate-only", o->generate_only, "Store samples without evaluating them");
  app->add_option("--device", o->device, "Evaluate on cpu or cuda (default: cuda where a GPU is visible)")->check(CLI::IsMember({"cpu", "cuda"}));
  app->add_option("--gpus", o->gpus, "GPUs to evaluate on, one worker set each, e.g. 0,1 (default: all visible)");
  app->add_option("--trials", o->trials, "Correctness trials per candidate (default 5)")->check(CLI::PositiveNumber);
  app->add_option("--tolerance", o->tolerance, "kernelbench (fp32 1e-4, fp16/bf16 1e-2) or compat (1e-2 for all)")
      ->check(CLI::IsMember({"kernelbench", "compat"}));
  return {app, [o, app]() { return run(*o, *app); }};
}

}  // namespace dicebench::cli
