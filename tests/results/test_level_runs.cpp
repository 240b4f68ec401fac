// Single-level runs of one model put together as one run over their levels: one report with a row
// per level and the total; runs that cannot be put together refused with one line.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planned_run.hpp"
#include "results/report/level_runs.hpp"
#include "results/report/report.hpp"
#include "results/report/report_format.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

TEST_CASE("single-level runs make one report by level, with the total over all of them") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const auto one =
      planned_run(store, {{1, 0, Verdict::correct, 2.0}, {2, 0, Verdict::output_mismatch}}, level_problems(2, 1));
  const auto two = planned_run(store, {{1, 0, Verdict::correct, 0.5}}, level_problems(1, 2), "kernelbench-l2");
  auto combined =
      combine_level_runs({require_ok(load_run_results(store, two)), require_ok(load_run_results(store, one))});
  REQUIRE_MESSAGE(combined.ok(), (combined.ok() ? "" : combined.error().message));
  CHECK(combined->run.suite == "kernelbench-l2+kernelbench-l1");
  REQUIRE(combined->parts.size() == 2);
  CHECK(combined->parts[0].id == two);
  REQUIRE(combined->samples.size() == 3);
  CHECK(combined->samples[0].level == 1);  // by level, whatever order the runs came in
  CHECK(combined->samples[2].level == 2);

  const RunReport report = compute_report(*combined);
  REQUIRE(report.levels.size() == 2);
  CHECK(report.levels[0].problems == 2);
  CHECK(report.levels[1].problems == 1);
  CHECK(report.total.problems == 3);
  CHECK(report.total.correct == 2);
  CHECK(report.total.geomean_speedup == doctest::Approx(1.0));  // 2.0x and 0.5x
  const std::string text = format_report(report);
  CHECK(text.rfind(fmt::format("runs {}, {}  model ", two, one), 0) == 0);
  CHECK(report_json(report)["runs"].size() == 2);
}

TEST_CASE("runs of two models, of one level twice, or of several levels are refused") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const auto one = planned_run(store, {{1, 0, Verdict::correct, 2.0}}, level_problems(1, 1));
  const auto again = planned_run(store, {{1, 0, Verdict::correct, 2.0}}, level_problems(1, 1));
  const auto both =
      planned_run(store, {{1, 0, Verdict::correct, 2.0}}, {problem(1, 1, "A"), problem(1, 2, "B")}, "kernelbench");
  auto load = [&](std::int64_t run) { return require_ok(load_run_results(store, run)); };

  auto twice = combine_level_runs({load(one), load(again)});
  REQUIRE_FALSE(twice.ok());
  CHECK(
      twice.error().message ==
      fmt::format("runs {} and {} are both of level 1: give one run per level (or see dicebench compare)", one, again));
  auto several = combine_level_runs({load(one), load(both)});
  REQUIRE_FALSE(several.ok());
  CHECK(several.error().message ==
        fmt::format("run {} covers 2 levels: only single-level runs make one table by level", both));
  RunResults other = load(again);
  other.run.model = "qwen3-8b";
  other.problems[0].level = 2;
  other.samples[0].level = 2;
  auto models = combine_level_runs({load(one), other});
  REQUIRE_FALSE(models.ok());
  CHECK(models.error().message.find("only runs of one model make one table by level") != std::string::npos);
}
