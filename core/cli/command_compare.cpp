// `dicebench compare A B`: two runs of one suite side by side, per level, with deltas, noise
// tests and the problems that flipped (borderline flips apart; slower or faster only beyond the
// timing spread and --min-change). A and B are run references (RUN, DATABASE:RUN or a run
// summary file).
#include "core/cli/commands.hpp"
#include "core/cli/number_checks.hpp"
#include "core/cli/run_reference.hpp"
#include "results/report/compare.hpp"
#include "results/report/compare_format.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace dicebench::cli {

Command add_compare_command(CLI::App& parent) {
  struct Options {
    std::string a, b, db = kDefaultDatabase, min_change = "0.05";
    bool json = false;
    results::CompareOptions compare;
  };
  auto o = std::make_shared<Options>();
  CLI::App* app =
      parent.add_subcommand("compare", "Compare two runs of one suite: deltas, noise tests, flipped problems");
  app->add_option("a", o->a, "Run A: RUN, DATABASE:RUN or a run summary file")->required();
  app->add_option("b", o->b, "Run B: RUN, DATABASE:RUN or a run summary file")->required();
  app->add_option("--db", o->db, "Results database for plain run ids")->capture_default_str();
  app->add_option("--alpha", o->compare.alpha,
                  "Significance level: McNemar p below it, or a bootstrap interval of "
                  "confidence 1 - alpha without 0, is beyond noise")
      ->check(real_number(1e-9, 0.5))
      ->capture_default_str();
  app->add_option("--resamples", o->compare.bootstrap.resamples, "Bootstrap resamples")
      ->check(whole_number(100, 1000000))
      ->capture_default_str();
  app->add_option("--seed", o->compare.bootstrap.seed, "Bootstrap seed")
      ->check(unsigned_number())
      ->capture_default_str();
  app->add_option("--min-change", o->min_change,
                  "List a problem as slower or faster only when its median runtime changed by more than this fraction "
                  "(and beyond its p10-p90 timing spread)")
      ->capture_default_str();
  app->add_flag("--json", o->json, "Print JSON instead of tables");
  return {app, [o]() {
            o->compare.bootstrap.confidence = 1.0 - o->compare.alpha;
            auto min_change = results::parse_min_change(o->min_change);
            if (!min_change) return fail(min_change.error().message);
            o->compare.min_change = *min_change;
            auto ref_a = parse_run_reference(o->a, o->db, true);
            if (!ref_a) return fail(ref_a.error().message);
            auto ref_b = parse_run_reference(o->b, o->db, true);
            if (!ref_b) return fail(ref_b.error().message);
            auto a = load_run(*ref_a);
            if (!a) return fail(a.error().message);
            auto b = load_run(*ref_b);
            if (!b) return fail(b.error().message);
            auto comparison = results::compare_runs(*a, *b, o->compare);
            if (!comparison) return fail(comparison.error().message);
            if (o->json) {
              fmt::print(
                  "{}\n",
                  results::comparison_json(*comparison).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
            } else {
              fmt::print("{}", results::format_comparison(*comparison));
            }
            return 0;
          }};
}

}  // namespace dicebench::cli
