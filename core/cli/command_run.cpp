// `dicebench run`: its options (the host's, and the flags the installed suite plugins declare:
// suite_flags.hpp), mapped to a run request for the run lifecycle (core/run), and the summary printed
// from what comes back; `--resume RUN` continues a stored run.
#include "core/base/text.hpp"
#include "core/cli/commands.hpp"
#include "core/cli/number_checks.hpp"
#include "core/cli/run_reference.hpp"
#include "core/cli/suite_flags.hpp"
#include "core/cli/tolerance_option.hpp"
#include "core/host/infill.hpp"
#include "core/host/plugin_registry.hpp"
#include "core/run/run_lifecycle.hpp"
#include "results/report/report_format.hpp"
#include "results/report/time_breakdown.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>

namespace dicebench::cli {
namespace {

struct RunOptions {
  std::string model, model_path, suite, config_file, device, tolerance, gpus, infill, ray;
  std::optional<std::string> problems;  // given empty, an error (not every problem)
  std::optional<int> trials;
  std::string db = kDefaultDatabase;
  std::optional<int> samples;
  std::optional<int64_t> seed, resume;
  std::optional<int> batch_size;
  std::vector<std::string> sets;
  bool generate_only = false;
  std::string json;        // the run's summary as JSON, written to this file
  SuiteFlags suite_flags;  // --kernelbench-root and the like, declared by suite plugins
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
  if (o.problems) config.set("problems", *o.problems);
  if (o.samples) config.set("samples", std::to_string(*o.samples));
  if (o.seed) config.set("seed", std::to_string(*o.seed));
  if (o.batch_size) config.set("batch_size", std::to_string(*o.batch_size));
  if (!o.infill.empty()) config.set("infill", o.infill);
  o.suite_flags.apply(config);
  if (!o.device.empty()) config.set("eval.device", o.device);
  if (!o.gpus.empty()) config.set("eval.gpus", o.gpus);
  if (!o.ray.empty()) config.set("eval.ray", o.ray);
  if (!o.tolerance.empty()) config.set("eval.tolerance", o.tolerance);
  if (o.trials) config.set("eval.trials", std::to_string(*o.trials));
  for (const auto& assignment : o.sets) DICEBENCH_TRY(config.assign(assignment));
  return config;
}

// "1 problem", "3 problems".
std::string count_of(size_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

// The generation part of the summary, printed when generation ends.
void print_generated(const run::RunOutcome& outcome) {
  const auto& generation = outcome.generation;
  fmt::print("run {}: {} on {}, {}, {}\n", outcome.run, outcome.model_spec, outcome.suite_name,
             count_of(outcome.problems, "problem"), count_of(outcome.samples, "sample"));
  fmt::print("  generated {}{}\n", generation.timing,
             generation.already_done ? fmt::format(", {} stored before", generation.already_done) : "");
  fmt::print("{}", generation.totals.summary(generation.generation_seconds));
  if (generation.extraction_failures)
    fmt::print("  no code block in {} (stored as extraction failures)\n",
               count_of(generation.extraction_failures, "completion"));
}

// The evaluation part: verdicts, where they ran, flags and degenerate problems.
void print_evaluated(const run::RunOutcome& outcome) {
  const run::EvaluationSummary& evaluated = *outcome.evaluation;
  std::string verdicts;
  for (const auto& [verdict, count] : evaluated.verdicts)
    verdicts += fmt::format("{}{} {}", verdicts.empty() ? "" : ", ", verdict, count);
  std::string where = outcome.evaluation_device;
  if (!outcome.evaluation_pool.empty()) {
    where += " (" + outcome.evaluation_pool + ")";
  } else if (outcome.evaluation_device == "cuda") {
    std::vector<std::string> gpus;
    for (const auto& slot : outcome.evaluation_slots) gpus.push_back(slot.value_or("?"));
    where += fmt::format(" (GPU {})", join(gpus, ","));
  } else if (outcome.evaluation_slots.size() > 1) {
    where += fmt::format(" ({} workers)", outcome.evaluation_slots.size());
  }
  fmt::print("  evaluated {} on {}: {}\n", evaluated.timing, where, verdicts.empty() ? "nothing to do" : verdicts);
  // What qualifies those verdicts; a fast-path disagreement is a defect of the fast path.
  std::string flags;
  for (const auto& [flag, count] : evaluated.flags)
    flags += fmt::format("{}{} {}", flags.empty() ? "" : ", ", flag, count);
  if (!flags.empty()) fmt::print("  flagged: {}\n", flags);
  if (evaluated.degenerate_problems)
    fmt::print("  degenerate problems (their answer can pass without being computed): {}\n",
               evaluated.degenerate_problems);
  if (outcome.time) fmt::print("{}", results::format_time_breakdown(*outcome.time));
}

// The run's summary as JSON (--json FILE): what it did, its verdicts and flags, where its
// evaluation time went, and its report once finished.
Result<void> write_summary_json(const std::string& path, const run::RunOutcome& outcome) {
  nlohmann::json summary = {{"run", outcome.run},           {"status", run_status_name(outcome.status)},
                            {"model", outcome.model_spec},  {"suite", outcome.suite_name},
                            {"problems", outcome.problems}, {"samples", outcome.samples},
                            {"error", outcome.error}};
  if (outcome.evaluation) {
    summary["evaluation"] = {{"device", outcome.evaluation_device},
                             {"evaluated", outcome.evaluation->evaluated},
                             {"verdicts", outcome.evaluation->verdicts},
                             {"flags", outcome.evaluation->flags},
                             {"degenerate_problems", outcome.evaluation->degenerate_problems}};
  }
  if (outcome.time) summary["time"] = results::time_breakdown_json(*outcome.time);
  if (outcome.report) summary["report"] = results::report_json(*outcome.report);
  return write_output(path, summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

int run(const RunOptions& o, CLI::App& app) {
  if (app.count("--ray") && o.ray.empty())
    return fail("--ray needs a Ray cluster's address (auto, HOST:PORT or ray://...)");
  run::RunRequest request;
  request.db = o.db;
  request.generate_only = o.generate_only;
  if (!o.suite_flags.conflicts.empty()) return fail(o.suite_flags.conflicts.front());
  if (!o.json.empty())  // the summary is written once the run ends: its path is checked now
    if (auto writable = check_output_path(o.json); !writable) return fail(writable.error().message);
  if (o.resume) {
    for (const char* flag : {"--model", "--model-path", "--suite", "--problems", "--samples", "--seed", "--config",
                             "--batch-size", "--device", "--trials", "--tolerance"})
      if (app.count(flag))
        return fail(fmt::format("--resume continues run {} with its own settings; drop {}", *o.resume, flag));
    request.resume = o.resume;
    o.suite_flags.apply(request.settings);  // they replace the stored values (where the suite's files are now)
    if (!o.ray.empty()) request.settings.set("eval.ray", o.ray);  // where it is judged is the resume's
    // So may the model's and the suite's own settings (the run lifecycle checks which, and records the change).
    for (const auto& assignment : o.sets)
      if (auto assigned = request.settings.assign(assignment); !assigned) return fail(assigned.error().message);
  } else {
    auto resolved = resolve_config(o);
    if (!resolved) return fail(resolved.error().message);
    request.settings = std::move(*resolved);
  }

  auto outcome = run::run_lifecycle(request, {print_generated});
  if (!outcome) return fail(outcome.error().message);
  if (!o.json.empty())
    if (auto written = write_summary_json(o.json, *outcome); !written) return fail(written.error().message);
  const std::string& db = o.db;
  const std::string again =
      fmt::format("dicebench run --resume {}{} --db {}", outcome->run, o.generate_only ? " --generate-only" : "", db);
  const auto stopped = [&] {
    fmt::print("  database: {}\n", db);
    if (outcome->status == RunStatus::interrupted) {
      // Stopped by the model (its server stopped answering) rather than by Ctrl-C: one error line.
      if (!outcome->error.empty())
        return fail(fmt::format("run {} interrupted: {}; what was stored is kept, continue with {}", outcome->run,
                                outcome->error, again));
      fmt::print("  interrupted: continue with {}\n", again);
      return 130;
    }
    return fail(fmt::format("run {} stopped: {}; what was stored is kept, continue with {}", outcome->run,
                            outcome->error, again));
  };
  if (!outcome->evaluation) {
    if (outcome->status != RunStatus::finished) return stopped();
    fmt::print("  evaluation: not run (--generate-only)\n  database: {}\n  next: dicebench show {} --db {}\n", db,
               outcome->run, db);
    return 0;
  }
  print_evaluated(*outcome);
  if (outcome->status != RunStatus::finished || !outcome->report) return stopped();
  // The run's report, as `dicebench report RUN` prints it.
  fmt::print("\n{}", results::format_report(*outcome->report));
  fmt::print("  database: {}\n  next: dicebench show {} --db {}\n", db, outcome->run, db);
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& parent) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* app = parent.add_subcommand("run", "Generate samples for a suite with a model, evaluate and store them");
  app->add_option("--model", o->model, "Model name (dicebench list models), e.g. dice-8b or replay:FOLDER");
  app->add_option("--model-path", o->model_path,
                  "The model's folder (config.json, safetensors, tokenizer.json) instead of the Hugging Face cache");
  app->add_option("--suite", o->suite,
                  "Suite name (dicebench list suites), e.g. kernelbench-l2, or kernelbench for every level");
  app->add_option(
      "--problems", o->problems,
      "Problem ids and ranges, e.g. 1-4,7; LEVEL/IDS items for --suite kernelbench, e.g. 1/1-10,2/5 (default: all)");
  app->add_option("--samples", o->samples, "Samples per problem (default 1)")->check(whole_number(1, 1000000));
  app->add_option("--db", o->db, "Results database")->capture_default_str();
  app->add_option("--config", o->config_file, "TOML configuration file; flags override it");
  app->add_option("--resume", o->resume, "Continue the stored run RUN where it stopped")->check(whole_number(1));
  app->add_option("--seed", o->seed, "Run seed (default: random, recorded)")->check(whole_number(0));
  app->add_option("--batch-size", o->batch_size, "Requests per generate call (default: the model's)")
      ->check(whole_number(1, 1000000));
  app->add_option("--set", o->sets, "Any setting as KEY=VALUE, e.g. kernelbench.prompt=zero_shot");
  app->add_option("--infill", o->infill,
                  "For suites of spans to fill (dice-infill): native (the model fills the span itself), chat (the "
                  "suite's prompt) "
                  "or auto, the default: native where the model can")
      ->check(CLI::IsMember(std::vector<std::string>(host::kInfillModes.begin(), host::kInfillModes.end())));
  app->add_flag("--generate-only", o->generate_only, "Store samples without evaluating them");
  app->add_option("--json", o->json,
                  "Also write the run's summary as JSON to this file (verdicts, where the time went, the report)");
  app->add_option("--device", o->device, "Evaluate on cpu or cuda (default: cuda where a GPU is visible)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app->add_option("--gpus", o->gpus, "GPUs to evaluate on, one worker set each, e.g. 0,1 (default: all visible)");
  app->add_option("--ray", o->ray,
                  "Judge on a Ray cluster's evaluator pool (auto, HOST:PORT or ray://...), one actor per GPU of it, "
                  "with this run's settings; a resume may name another or none");
  app->add_option("--trials", o->trials, "Correctness trials per candidate (default 5)")
      ->check(whole_number(1, 1000000));
  add_tolerance_option(*app, o->tolerance);
  // The suites' own flags, from the installed plugins' manifests: looked for once `run` is on the
  // command line (other commands need no plugins), before its arguments are parsed.
  app->preparse_callback(
      [o, app](size_t) { add_suite_flags(*app, host::PluginRegistry::installed(), o->suite_flags); });
  return {app, [o, app]() { return run(*o, *app); }};
}

}  // namespace dicebench::cli
