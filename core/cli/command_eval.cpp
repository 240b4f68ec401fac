// `dicebench eval --problem FILE --candidate FILE...`: evaluates candidates against one problem
// through the run's evaluation session (core/run/evaluation_session.hpp: its settings, sandbox
// check, slots and, with --suite, the suite's review of each candidate), printing each verdict (or
// JSON: an object for one candidate, an array for several).
#include "core/base/text.hpp"
#include "core/base/whole_file.hpp"
#include "core/cli/commands.hpp"
#include "core/cli/number_checks.hpp"
#include "core/cli/suite_flags.hpp"
#include "core/cli/tolerance_option.hpp"
#include "core/host/log.hpp"
#include "core/run/evaluation_session.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace dicebench::cli {
Command add_eval_command(CLI::App& parent) {
  struct Options {
    std::string problem, device, tolerance, suite, db;
    std::vector<std::string> candidates;
    int trials = 5;
    double timeout = 300, compile_timeout = 600;
    bool json = false, no_fastpath = false;
    std::vector<std::string> sets;
    SuiteFlags suite_flags;  // --kernelbench-root and the like, declared by suite plugins
  };
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("eval", "Evaluate candidate programs against one problem");
  app->add_option("--problem", o->problem, "Problem file (class Model, get_inputs, get_init_inputs)")->required();
  app->add_option("--candidate", o->candidates, "Candidate file (class ModelNew); give it again for more")->required();
  app->add_option("--device", o->device, "cpu or cuda (default: cuda where a GPU is visible)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app->add_option("--trials", o->trials, "Correctness trials")->check(whole_number(1, 1000000))->capture_default_str();
  add_tolerance_option(*app, o->tolerance);
  const CLI::Validator seconds = real_number(1.0, 86400.0);
  app->add_option("--timeout", o->timeout, "Seconds the candidate may run (init, trials, timing)")
      ->check(seconds)
      ->capture_default_str();
  app->add_option("--compile-timeout", o->compile_timeout,
                  "Seconds the candidate's worker may take to start and compile")
      ->check(seconds)
      ->capture_default_str();
  app->add_flag("--no-fastpath", o->no_fastpath, "Build load_inline calls with torch's own toolchain only");
  app->add_option("--suite", o->suite,
                  "The suite the problem is from (e.g. kernelbench-l1): its review flags each candidate as in a run");
  app->add_option(
      "--db", o->db,
      "A results database whose stored baselines, traits and bandwidths are used as a run uses them (read only)");
  app->add_option("--set", o->sets,
                  "Any setting as KEY=VALUE, e.g. eval.sandbox=require or kernelbench.backend=triton");
  app->add_flag("--json", o->json, "Print the evaluation as JSON");
  app->preparse_callback(
      [o, app](size_t) { add_suite_flags(*app, host::PluginRegistry::installed(), o->suite_flags); });
  return {app, [o]() {
            if (!o->suite_flags.conflicts.empty()) return fail(o->suite_flags.conflicts.front());
            const auto read_problem = read_whole_file(o->problem, "problem");
            if (!read_problem) return fail(read_problem.error().message);
            const std::string& problem = *read_problem;
            std::vector<std::string> candidates;
            for (const auto& path : o->candidates) {
              auto candidate = read_whole_file(path, "candidate");
              if (!candidate) return fail(candidate.error().message);
              candidates.push_back(std::move(*candidate));
            }
            host::Config config;
            if (!o->device.empty()) config.set("eval.device", o->device);
            if (!o->tolerance.empty()) config.set("eval.tolerance", o->tolerance);
            config.set("eval.trials", std::to_string(o->trials));
            config.set("eval.timeout_s", fmt::format("{}", o->timeout));
            config.set("eval.compile_timeout_s", fmt::format("{}", o->compile_timeout));
            if (o->no_fastpath) config.set("eval.fastpath", "off");
            if (!o->suite.empty()) config.set("suite", o->suite);
            if (!o->db.empty()) config.set("db", o->db);
            o->suite_flags.apply(config);
            for (const auto& assignment : o->sets)
              if (auto assigned = config.assign(assignment); !assigned) return fail(assigned.error().message);
            auto session = run::EvaluationSession::open_with_suite(config);
            if (!session) return fail(session.error().message);
            host::log_info("sandbox: {}",
                           (*session)->sandbox_summary());  // as run says it: a log line, before anything runs
            std::vector<run::EvaluationSession::Pair> batch;
            for (auto& candidate : candidates) batch.push_back({problem, std::move(candidate)});
            auto evaluations = (*session)->evaluate(batch);
            nlohmann::json all = nlohmann::json::array();
            for (size_t i = 0; i < evaluations.size(); ++i) {
              auto& e = evaluations[i];
              if (!e) return fail(e.error().message);
              if (o->json) {
                nlohmann::json out = evaluation_json(*e);
                if (evaluations.size() > 1) out["candidate"] = o->candidates[i];  // which one, in the array
                out["sandbox"] = nlohmann::json::parse((*session)->sandbox_json());
                all.push_back(std::move(out));
                continue;
              }
              if (evaluations.size() > 1) fmt::print("{}{}\n", i ? "\n" : "", o->candidates[i]);
              fmt::print("{}", evaluation_text(*e));
            }
            if (o->json)
              fmt::print(
                  "{}\n",
                  (all.size() == 1 ? all[0] : all).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
            return 0;
          }};
}

}  // namespace dicebench::cli
