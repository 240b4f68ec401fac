// The report's figures against values computed by hand for a small run, the unbiased pass@k
// estimator, the table and JSON renderings, fast_p without samples below the memory floor, flag
// counts, the figures with and without degenerate problems (--exclude-degenerate), and the
// kernel-infilling figures.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "planned_run.hpp"
#include "results/report/report.hpp"
#include "results/report/report_format.hpp"
#include "results/store/query.hpp"
#include "results/store/run_results.hpp"
#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

namespace {

struct Planned {
  std::int64_t problem;
  int index;
  bool candidate;
  std::optional<Verdict> verdict;  // none: no evaluation row
  bool compiled;
  std::optional<double> speedup;
};

// Two levels, three problems, three samples each:
//   problem 1 (level 1): correct 2.0x, correct 0.25x, compile_failed
//   problem 2 (level 1): correct 1.0x, output_mismatch (compiled, speedup 3.0 that must not count),
//                        no code block and no evaluation (decided: extraction_failed)
//   problem 3 (level 2): correct 4.0x, pending (candidate, no evaluation), runtime_error (compiled)
const std::vector<Planned> kPlan = {
    {1, 0, true, Verdict::correct, true, 2.0},
    {1, 1, true, Verdict::correct, true, 0.25},
    {1, 2, true, Verdict::compile_failed, false, std::nullopt},
    {2, 0, true, Verdict::correct, true, 1.0},
    {2, 1, true, Verdict::output_mismatch, true, 3.0},
    {2, 2, false, std::nullopt, false, std::nullopt},
    {3, 0, true, Verdict::correct, true, 4.0},
    {3, 1, true, std::nullopt, false, std::nullopt},
    {3, 2, true, Verdict::runtime_error, true, std::nullopt},
};

std::int64_t build_run(Store& store) {
  const auto run = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(run, {problem(1, 1, "Add"), problem(2, 1, "Mul"), problem(3, 2, "ConvRelu")}));
  for (const Planned& plan : kPlan) {
    const auto sample = require_ok(
        store.insert_sample(new_sample(run, plan.problem, plan.index, plan.candidate, plan.problem == 3 ? 2 : 1)));
    if (!plan.verdict) continue;
    StoredEvaluation evaluation;
    evaluation.sample = sample;
    evaluation.status = *plan.verdict;
    evaluation.compiled = plan.compiled;
    evaluation.correct = *plan.verdict == Verdict::correct;
    evaluation.device = "cuda:0";
    evaluation.speedup = plan.speedup;
    if (plan.speedup) {
      evaluation.baseline_ms = 1.0;
      evaluation.runtime_ms = 1.0 / *plan.speedup;
    }
    require_ok(store.insert_evaluation(evaluation));
  }
  return run;
}

std::optional<double> fast(const LevelReport& level, double p) {
  for (const FastP& entry : level.fast_p) {
    if (entry.p == p) return entry.value;
  }
  FAIL("no fast_p entry for p = " << p);
  return std::nullopt;
}

void check_pass(const LevelReport& level, const std::vector<std::pair<int, double>>& expected) {
  REQUIRE(level.pass_at_k.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK(level.pass_at_k[i].k == expected[i].first);
    CHECK(level.pass_at_k[i].value == doctest::Approx(expected[i].second).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("unbiased pass@k matches hand-computed values and does not overflow") {
  CHECK(unbiased_pass_at_k(3, 2, 1) == doctest::Approx(2.0 / 3.0));
  CHECK(unbiased_pass_at_k(3, 1, 2) == doctest::Approx(2.0 / 3.0));  // 1 - C(2,2)/C(3,2) = 1 - 1/3
  CHECK(unbiased_pass_at_k(3, 2, 2) == 1.0);                         // n - c < k
  CHECK(unbiased_pass_at_k(5, 0, 3) == 0.0);
  CHECK(unbiased_pass_at_k(10, 3, 5) == doctest::Approx(11.0 / 12.0));  // 1 - C(7,5)/C(10,5) = 1 - 21/252
  CHECK(unbiased_pass_at_k(200, 1, 100) == doctest::Approx(0.5));       // 1 - C(199,100)/C(200,100) = 1 - 100/200
  CHECK(unbiased_pass_at_k(1000, 10, 100) > 0.6);
  CHECK(std::isfinite(unbiased_pass_at_k(1000, 10, 100)));
}

TEST_CASE("the report's figures match hand-computed values") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  require_ok(store.create_run(sample_run()));  // an empty run 1 first: reports must not mix runs
  const auto run = build_run(store);
  const RunReport report = require_ok(compute_report(store, run));
  CHECK(report.run.id == run);
  REQUIRE(report.levels.size() == 2);

  // Level 1: problems 1 and 2, 6 samples, none pending, 6 decided.
  //   compiled: 1,1,0 | 1,1,0 -> 4/6; correct: 2.0, 0.25, 1.0 -> 3/6.
  //   fast_0: 3/6; fast_0.5: {2.0, 1.0} 2/6; fast_0.8: 2/6; fast_1: {2.0} 1/6 (1.0 is not > 1);
  //   fast_1.5: 1/6; fast_2: 0/6 (2.0 is not > 2).
  //   geomean over correct: (2.0 * 0.25 * 1.0)^(1/3) = 0.5^(1/3) = 0.7937005259840998.
  //   pass@k: n = 3 for both; c = 2 and 1.
  //     pass@1 = (2/3 + 1/3) / 2 = 0.5
  //     pass@2 = (1 - C(1,2)/C(3,2) + 1 - C(2,2)/C(3,2)) / 2 = (1 + 2/3) / 2 = 5/6
  const LevelReport& l1 = report.levels[0];
  CHECK(l1.level == 1);
  CHECK(l1.problems == 2);
  CHECK(l1.samples == 6);
  CHECK(l1.pending == 0);
  CHECK(l1.decided == 6);
  CHECK(l1.compiled == 4);
  CHECK(l1.correct == 3);
  CHECK(*l1.compiled_rate == doctest::Approx(4.0 / 6.0));
  CHECK(*l1.correct_rate == doctest::Approx(0.5));
  CHECK(*fast(l1, 0.0) == doctest::Approx(3.0 / 6.0));
  CHECK(*fast(l1, 0.5) == doctest::Approx(2.0 / 6.0));
  CHECK(*fast(l1, 0.8) == doctest::Approx(2.0 / 6.0));
  CHECK(*fast(l1, 1.0) == doctest::Approx(1.0 / 6.0));
  CHECK(*fast(l1, 1.5) == doctest::Approx(1.0 / 6.0));
  CHECK(*fast(l1, 2.0) == 0.0);
  CHECK(l1.speedup_samples == 3);
  CHECK(*l1.geomean_speedup == doctest::Approx(0.7937005259840998).epsilon(1e-12));
  CHECK(l1.min_decided_per_problem == 3);
  check_pass(l1, {{1, 0.5}, {2, 5.0 / 6.0}});
  CHECK(l1.verdicts.at("correct") == 3);
  CHECK(l1.verdicts.at("compile_failed") == 1);
  CHECK(l1.verdicts.at("output_mismatch") == 1);
  CHECK(l1.verdicts.at("extraction_failed") == 1);

  // Level 2: problem 3, 3 samples, 1 pending, 2 decided.
  //   compiled 2/2; correct 1/2; fast_p: 4.0 beats every threshold -> 1/2 for all p.
  //   geomean 4.0; n = 2, c = 1: pass@1 = 1/2, pass@2 = 1 - C(1,2)/C(2,2) = 1.
  const LevelReport& l2 = report.levels[1];
  CHECK(l2.level == 2);
  CHECK(l2.problems == 1);
  CHECK(l2.samples == 3);
  CHECK(l2.pending == 1);
  CHECK(l2.decided == 2);
  CHECK(*l2.compiled_rate == 1.0);
  CHECK(*l2.correct_rate == 0.5);
  for (double p : kFastPThresholds) CHECK(*fast(l2, p) == 0.5);
  CHECK(*l2.geomean_speedup == doctest::Approx(4.0));
  check_pass(l2, {{1, 0.5}, {2, 1.0}});
  CHECK(l2.verdicts.at("runtime_error") == 1);

  // Total: 3 problems, 9 samples, 1 pending, 8 decided.
  //   compiled 6/8 = 0.75; correct 4/8 = 0.5.
  //   fast_0 4/8; fast_0.5 {2,1,4} 3/8; fast_0.8 3/8; fast_1 {2,4} 2/8; fast_1.5 2/8; fast_2 {4} 1/8.
  //   geomean (2 * 0.25 * 1 * 4)^(1/4) = 2^(1/4) = 1.189207115002721.
  //   min n = 2 (problem 3): pass@1 = (2/3 + 1/3 + 1/2) / 3 = 0.5;
  //   pass@2 = (1 + 2/3 + 1) / 3 = 8/9.
  const LevelReport& total = report.total;
  CHECK_FALSE(total.level.has_value());
  CHECK(total.problems == 3);
  CHECK(total.samples == 9);
  CHECK(total.pending == 1);
  CHECK(total.decided == 8);
  CHECK(*total.compiled_rate == 0.75);
  CHECK(*total.correct_rate == 0.5);
  CHECK(*fast(total, 0.0) == 0.5);
  CHECK(*fast(total, 0.5) == 0.375);
  CHECK(*fast(total, 0.8) == 0.375);
  CHECK(*fast(total, 1.0) == 0.25);
  CHECK(*fast(total, 1.5) == 0.25);
  CHECK(*fast(total, 2.0) == 0.125);
  CHECK(*total.geomean_speedup == doctest::Approx(1.189207115002721).epsilon(1e-12));
  CHECK(total.min_decided_per_problem == 2);
  check_pass(total, {{1, 0.5}, {2, 8.0 / 9.0}});
  CHECK(total.verdicts.at("correct") == 4);
  CHECK(total.verdicts.count("pending") == 0);

  // The view agrees on verdicts.
  auto view = require_ok(run_query(store.path(),
                                   "SELECT count(*) FILTER (WHERE verdict IS NULL), "
                                   "count(*) FILTER (WHERE verdict = 'extraction_failed') "
                                   "FROM sample_results WHERE run = " +
                                       std::to_string(run)));
  CHECK(std::get<std::int64_t>(view.rows[0][0]) == 1);
  CHECK(std::get<std::int64_t>(view.rows[0][1]) == 1);
}

TEST_CASE("a run without evaluations or with one sample per problem has no pass@k or speedups") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  const auto run = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(run, {problem(1, 1, "Add"), problem(2, 1, "Mul")}));
  require_ok(store.insert_sample(new_sample(run, 1, 0)));
  require_ok(store.insert_sample(new_sample(run, 2, 0, false)));
  const RunReport report = require_ok(compute_report(store, run));
  const LevelReport& total = report.total;
  CHECK(total.samples == 2);
  CHECK(total.pending == 1);
  CHECK(total.decided == 1);
  CHECK(*total.compiled_rate == 0.0);
  CHECK(*fast(total, 0.0) == 0.0);
  CHECK_FALSE(total.geomean_speedup.has_value());
  CHECK(total.pass_at_k.empty());
  CHECK(total.min_decided_per_problem == 0);

  const std::string table = format_report(report);
  CHECK(table.find("\u2013") != std::string::npos);
  CHECK(table.find("pass@") == std::string::npos);

  auto empty_run = require_ok(store.create_run(sample_run()));
  const RunReport empty = require_ok(compute_report(store, empty_run));
  CHECK(empty.levels.empty());
  CHECK_FALSE(empty.total.correct_rate.has_value());
  CHECK_FALSE(fast(empty.total, 1.0).has_value());

  auto missing = compute_report(store, 99);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "no run 99 in " + store.path());
}

TEST_CASE("the report renders as a table and as JSON") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  const auto run = build_run(store);
  const RunReport report = require_ok(compute_report(store, run));

  const std::string table = format_report(report);
  INFO(table);
  CHECK(table.rfind("run 1  model replay:/tmp/completions  suite kernelbench-l1  status running  created ", 0) == 0);
  CHECK(table.find("level  problems  samples  pending  compiled  correct  fast_0  fast_0.5  fast_0.8  fast_1  "
                   "fast_1.5  fast_2  geomean  pass@1  pass@2\n") != std::string::npos);
  CHECK(table.find("\n1      ") != std::string::npos);
  CHECK(table.find("\ntotal  ") != std::string::npos);
  CHECK(table.find("66.7%") != std::string::npos);   // level 1 compiled
  CHECK(table.find("0.794x") != std::string::npos);  // level 1 geomean
  CHECK(table.find("1.189x") != std::string::npos);  // total geomean
  CHECK(table.find("88.9%") != std::string::npos);   // total pass@2
  CHECK(table.find("verdicts: extraction_failed 1, compile_failed 1, runtime_error 1, output_mismatch 1, correct 4, "
                   "pending 1\n") != std::string::npos);

  const nlohmann::json json = report_json(report);
  CHECK(json["run"]["id"] == run);
  CHECK(json["run"]["status"] == "running");
  REQUIRE(json["levels"].size() == 2);
  CHECK(json["levels"][0]["level"] == 1);
  CHECK(json["levels"][0]["pass_at_k"]["2"].get<double>() == doctest::Approx(5.0 / 6.0));
  CHECK(json["levels"][1]["pending"] == 1);
  CHECK(json["total"]["level"].is_null());
  CHECK(json["total"]["fast_p"]["0.5"].get<double>() == 0.375);
  CHECK(json["total"]["fast_p"]["2"].get<double>() == 0.125);
  CHECK(json["total"]["compiled_rate"].get<double>() == 0.75);
  CHECK(json["total"]["geomean_speedup"].get<double>() == doctest::Approx(1.189207115002721));
  CHECK(json["total"]["verdicts"]["correct"] == 4);
}

TEST_CASE("fast_p leaves out a sample flagged below_memory_floor, and flags are counted") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  // Problem 1: correct at 3x but faster than moving its data allows; 2: correct 2x, borderline;
  // 3: correct 0.5x; 4: output_mismatch, borderline.
  const auto run = planned_run(
      store,
      {{1, 0, Verdict::correct, 3.0, 0.05, 0.01, {{EvaluationFlag::below_memory_floor, "0.333 ms, floor 0.500 ms"}}},
       {2, 0, Verdict::correct, 2.0, 0.05, 0.9, {{EvaluationFlag::borderline, "margin 0.9"}}},
       {3, 0, Verdict::correct, 0.5},
       {4, 0, Verdict::output_mismatch, std::nullopt, 0.05, 1.5, {{EvaluationFlag::borderline, "margin 1.5"}}}},
      level_problems(4));
  const RunReport report = require_ok(compute_report(store, run));
  const LevelReport& total = report.total;
  // Without the floor rule fast_1 would be 2/4 and fast_0 3/4.
  CHECK(*fast(total, 1.0) == 0.25);
  CHECK(*fast(total, 0.0) == 0.5);
  CHECK(*fast(total, 2.0) == 0.0);
  // The geometric mean still covers every correct sample: (3 * 2 * 0.5)^(1/3).
  CHECK(*total.geomean_speedup == doctest::Approx(std::cbrt(3.0)));
  CHECK(total.flags == std::map<std::string, std::int64_t>{{"below_memory_floor", 1}, {"borderline", 2}});
  CHECK(report.levels[0].flags.at("borderline") == 2);

  const RunResults results = require_ok(load_run_results(store, run));
  CHECK_FALSE(counts_as_fast(results.samples[0], 1.0));
  CHECK(counts_as_fast(results.samples[1], 1.0));
  CHECK_FALSE(counts_as_fast(results.samples[3], 0.0));

  const std::string table = format_report(report);
  INFO(table);
  CHECK(table.find("\nflags: below_memory_floor 1, borderline 2\n") != std::string::npos);
  CHECK(table.find("degenerate problems: traits not checked\n") != std::string::npos);
  const nlohmann::json json = report_json(report);
  CHECK(json["total"]["flags"]["below_memory_floor"] == 1);
  CHECK(json["total"]["fast_p"]["1"].get<double>() == 0.25);

  const auto clean = planned_run(store, {{1, 0, Verdict::correct, 3.0}}, level_problems(1));
  CHECK(format_report(require_ok(compute_report(store, clean))).find("\nflags: none\n") != std::string::npos);
}

TEST_CASE("degenerate problems: counted by trait, split out, and left out of fast_p and geomean on request") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  // 1: correct 4x, degenerate (zeros_pass, constant_output); 2: correct 2x, checked, not
  // degenerate; 3: correct 0.5x, never checked; 4: output_mismatch, not degenerate.
  const auto run = planned_run(store,
                               {{1, 0, Verdict::correct, 4.0},
                                {2, 0, Verdict::correct, 2.0},
                                {3, 0, Verdict::correct, 0.5},
                                {4, 0, Verdict::output_mismatch}},
                               level_problems(4));
  set_traits(store, run, {{1, R"(["zeros_pass","constant_output"])"}, {2, "[]"}, {4, "[]"}});

  const RunReport all = require_ok(compute_report(store, run));
  const LevelReport& total = all.total;
  CHECK_FALSE(total.excludes_degenerate);
  CHECK(*fast(total, 1.0) == 0.5);                                   // 1 and 2 of 4
  CHECK(*total.geomean_speedup == doctest::Approx(std::cbrt(4.0)));  // (4 * 2 * 0.5)^(1/3)
  CHECK(total.degenerate_problems == 1);
  CHECK(total.unchecked_problems == 1);
  CHECK(total.traits == std::map<std::string, std::int64_t>{{"constant_output", 1}, {"zeros_pass", 1}});
  CHECK(total.all_problems.problems == 4);
  CHECK(*total.all_problems.correct_rate == 0.75);
  CHECK(*total.all_problems.fast_1 == 0.5);
  CHECK(*total.all_problems.geomean_speedup == doctest::Approx(std::cbrt(4.0)));
  CHECK(total.non_degenerate.problems == 3);
  CHECK(total.non_degenerate.decided == 3);
  CHECK(*total.non_degenerate.correct_rate == doctest::Approx(2.0 / 3.0));
  CHECK(*total.non_degenerate.fast_1 == doctest::Approx(1.0 / 3.0));
  CHECK(*total.non_degenerate.geomean_speedup == doctest::Approx(1.0));  // (2 * 0.5)^(1/2)

  const std::string table = format_report(all);
  INFO(table);
  CHECK(table.find("--exclude-degenerate") == std::string::npos);
  CHECK(table.find("degenerate problems: 1 of 4 (constant_output 1, zeros_pass 1); traits not checked for 1\n") !=
        std::string::npos);
  CHECK(table.find("level  problems        count  correct  fast_1  geomean\n") != std::string::npos);
  CHECK(table.find("total  all                 4    75.0%   50.0%   1.587x\n") != std::string::npos);
  CHECK(table.find("total  non-degenerate      3    66.7%   33.3%   1.000x\n") != std::string::npos);

  const RunReport excluded = require_ok(compute_report(store, run, {.exclude_degenerate = true}));
  CHECK(excluded.total.excludes_degenerate);
  CHECK(*fast(excluded.total, 1.0) == doctest::Approx(1.0 / 3.0));
  CHECK(*fast(excluded.total, 0.0) == doctest::Approx(2.0 / 3.0));
  CHECK(*excluded.total.geomean_speedup == doctest::Approx(1.0));
  CHECK(excluded.total.speedup_samples == 2);
  CHECK(*excluded.total.correct_rate == 0.75);  // correct % still covers every problem
  CHECK(excluded.total.all_problems.fast_1 == total.all_problems.fast_1);
  const std::string excluded_table = format_report(excluded);
  CHECK(excluded_table.find("fast_p and geomean leave out the 1 degenerate problem (--exclude-degenerate)\n") !=
        std::string::npos);
  CHECK(excluded_table.find("33.3%") != std::string::npos);
  const nlohmann::json json = report_json(excluded);
  CHECK(json["exclude_degenerate"] == true);
  CHECK(json["total"]["excludes_degenerate"] == true);
  CHECK(json["total"]["degenerate_problems"] == 1);
  CHECK(json["total"]["traits"]["zeros_pass"] == 1);
  CHECK(json["total"]["non_degenerate"]["fast_1"].get<double>() == doctest::Approx(1.0 / 3.0));
  CHECK(json["total"]["all_problems"]["correct_rate"].get<double>() == 0.75);
}

TEST_CASE("infill figures count every sample whose extraction measured the middle, pending ones too") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  const auto run = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(run, {problem(1, 1, "Add"), problem(2, 1, "Mul")}));
  const auto with_details = [&](std::int64_t problem_id, int index, bool exact, int distance) {
    NewSample sample = new_sample(run, problem_id, index);
    sample.extraction_details_json =
        nlohmann::json{{"infill_exact_match", exact}, {"infill_edit_distance", distance}}.dump();
    return require_ok(store.insert_sample(sample));
  };
  const auto evaluated = with_details(1, 0, true, 0);
  with_details(1, 1, false, 12);                           // pending
  with_details(2, 0, false, 30);                           // pending
  require_ok(store.insert_sample(new_sample(run, 2, 1)));  // another suite's sample: no details
  StoredEvaluation evaluation;
  evaluation.sample = evaluated;
  evaluation.status = Verdict::correct;
  evaluation.compiled = evaluation.correct = true;
  evaluation.device = "cpu";
  require_ok(store.insert_evaluation(evaluation));

  const RunReport report = require_ok(compute_report(store, run));
  CHECK(report.total.infill_samples == 3);
  CHECK(report.total.infill_exact == 1);
  CHECK(report.total.infill_exact_rate == doctest::Approx(1.0 / 3));
  CHECK(report.total.infill_mean_edit_distance == doctest::Approx(14.0));
  CHECK(format_report(report).find(
            "infill: middle exact match 1 of 3 samples (33.3%), mean edit distance 14.0 bytes") != std::string::npos);
  CHECK(report_json(report)["total"]["infill"]["samples"] == 3);

  const RunReport plain = require_ok(compute_report(store, build_run(store)));
  CHECK(plain.total.infill_samples == 0);
  CHECK_FALSE(report_json(plain)["total"].contains("infill"));
  CHECK(format_report(plain).find("infill:") == std::string::npos);
}
