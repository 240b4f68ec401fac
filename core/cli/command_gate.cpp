// `dicebench gate --baseline REF --candidate REF [--rules FILE]`: a CI regression gate. Compares
// the candidate run with a baseline (a run, possibly in another database, or a run summary file
// committed next to the code), checks the rules, prints a short table, optionally writes a JSON
// summary and JUnit XML, and exits 3 when a rule failed (1 on an error). With --baseline-file,
// both runs' speedups are taken against a published KernelBench baseline file.
#include "core/cli/commands.hpp"
#include "core/cli/number_checks.hpp"
#include "core/cli/run_reference.hpp"
#include "results/report/compare.hpp"
#include "results/report/gate.hpp"
#include "results/report/gate_format.hpp"
#include "results/report/gate_rules.hpp"
#include "results/report/published_baselines.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <set>

namespace dicebench::cli {

namespace {
constexpr int kGateFailed = 3;  // a rule failed (errors exit 1)
}  // namespace

Command add_gate_command(CLI::App& parent) {
  struct Options {
    std::string baseline, candidate, db = kDefaultDatabase, rules, json, junit, baseline_file;
    results::CompareOptions compare;
  };
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "gate", "Fail (exit 3) when a candidate run regresses against a baseline: rules on metrics and flipped problems");
  app->add_option("--baseline", o->baseline,
                  "RUN, DATABASE:RUN or a run summary file (dicebench export --format summary)")
      ->required();
  app->add_option("--candidate", o->candidate, "RUN or DATABASE:RUN")->required();
  app->add_option("--db", o->db, "Results database for plain run ids")->capture_default_str();
  app->add_option("--rules", o->rules,
                  "Rules file (TOML); default: correct_rate and fast_1 may not drop beyond noise, "
                  "no correct problem may become incorrect");
  app->add_option("--json", o->json, "Write a JSON summary to this file");
  app->add_option("--junit", o->junit, "Write JUnit XML to this file");
  app->add_option("--alpha", o->compare.alpha, "Significance level of the noise tests")
      ->check(real_number(1e-9, 0.5))
      ->capture_default_str();
  app->add_option("--resamples", o->compare.bootstrap.resamples, "Bootstrap resamples")
      ->check(whole_number(100, 1000000))
      ->capture_default_str();
  app->add_option("--seed", o->compare.bootstrap.seed, "Bootstrap seed")
      ->check(unsigned_number())
      ->capture_default_str();
  app->add_option("--baseline-file", o->baseline_file,
                  "Both runs' speedups against this published KernelBench baseline file (problems it lacks get none)");
  return {app, [o]() {
            o->compare.bootstrap.confidence = 1.0 - o->compare.alpha;
            auto baseline_ref = parse_run_reference(o->baseline, o->db, true);
            if (!baseline_ref) return fail(baseline_ref.error().message);
            auto candidate_ref = parse_run_reference(o->candidate, o->db, true);
            if (!candidate_ref) return fail(candidate_ref.error().message);
            auto baseline = load_run(*baseline_ref);
            if (!baseline) return fail(baseline.error().message);
            auto candidate = load_run(*candidate_ref);
            if (!candidate) return fail(candidate.error().message);
            if (!o->baseline_file.empty()) {
              auto published = results::read_published_baselines(o->baseline_file);
              if (!published) return fail(published.error().message);
              results::apply_published_baselines(*baseline, *published);
              fmt::print("{}", results::format_coverage(results::apply_published_baselines(*candidate, *published)));
            }
            auto comparison = results::compare_runs(*baseline, *candidate, o->compare);
            if (!comparison) return fail(comparison.error().message);
            std::set<int> levels;
            for (const auto& level : comparison->levels) levels.insert(*level.level);
            auto rules = o->rules.empty() ? Result<results::GateRules>(results::default_gate_rules(levels))
                                          : results::read_gate_rules(o->rules);
            if (!rules) return fail(rules.error().message);
            const results::GateResult result = results::check_gate(*comparison, *rules);
            if (!o->json.empty()) {
              auto written = write_output(
                  o->json,
                  results::gate_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
              if (!written) return fail(written.error().message);
            }
            if (!o->junit.empty()) {
              auto written = write_output(o->junit, results::gate_junit(result));
              if (!written) return fail(written.error().message);
            }
            fmt::print("{}", results::format_gate(result));
            return result.passed ? 0 : kGateFailed;
          }};
}

}  // namespace dicebench::cli
