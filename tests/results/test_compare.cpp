// Comparing runs: paired McNemar counts and p-values, bootstrap intervals, flips (borderline ones
// apart; slower or faster only beyond the spread and the minimum change), --min-change values,
// and runs of different suites refused.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "planned_run.hpp"
#include "results/report/compare.hpp"
#include "results/report/compare_format.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

namespace {

Comparison compare(Store& store, std::int64_t a, std::int64_t b, const CompareOptions& options = {}) {
  const RunResults ra = require_ok(load_run_results(store, a));
  const RunResults rb = require_ok(load_run_results(store, b));
  return require_ok(compare_runs(ra, rb, options));
}

}  // namespace

TEST_CASE("a candidate that lost six correct problems is beyond noise, and flips name them") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  // A: 12 problems all correct at 1.5x. B: problems 1-6 wrong, 7-12 correct at 1.5x except
  // problem 12, which became slower beyond its spread (p10..p90 of A: 0.633..0.7 ms; B at
  // speedup 1.2: 0.79..0.875 ms), and problem 11, faster (B at speedup 3).
  std::vector<PlannedSample> plan_a, plan_b;
  for (int p = 1; p <= 12; ++p) {
    plan_a.push_back({p, 0, Verdict::correct, 1.5});
    if (p <= 6)
      plan_b.push_back({p, 0, Verdict::output_mismatch});
    else
      plan_b.push_back({p, 0, Verdict::correct, p == 12 ? 1.2 : p == 11 ? 3.0 : 1.5});
  }
  const auto a = planned_run(store, plan_a, level_problems(12));
  const auto b = planned_run(store, plan_b, level_problems(12));
  const Comparison c = compare(store, a, b);
  REQUIRE(c.levels.size() == 1);
  CHECK(c.total.paired_samples == 12);
  CHECK(c.total.paired_problems == 12);

  const MetricComparison* correct = c.total.find("correct_rate");
  REQUIRE(correct);
  CHECK(*correct->a == 1.0);
  CHECK(*correct->b == 0.5);
  CHECK(*correct->delta == -0.5);
  CHECK(correct->lost == 6);
  CHECK(correct->gained == 0);
  CHECK(*correct->p_value == doctest::Approx(0.03125));  // 2 / 2^6
  CHECK(correct->beyond_noise);
  const MetricComparison* compiled = c.total.find("compiled_rate");
  CHECK(*compiled->p_value == 1.0);
  CHECK_FALSE(compiled->beyond_noise);

  // fast_1: A 12/12, B 6/12. Every resample keeps B below A: beyond noise.
  const MetricComparison* fast1 = c.total.find("fast_1");
  REQUIRE(fast1->interval);
  CHECK(*fast1->delta == -0.5);
  CHECK(fast1->interval->high < 0);
  CHECK(fast1->interval->contains(-0.5));
  CHECK(fast1->beyond_noise);

  REQUIRE(c.flips.size() == 8);
  for (int i = 0; i < 6; ++i) {
    CHECK(c.flips[i].kind == FlipKind::became_incorrect);
    CHECK(c.flips[i].problem_id == i + 1);
    CHECK(c.flips[i].verdict_b == "output_mismatch");
  }
  CHECK(c.flips[6].kind == FlipKind::became_faster);
  CHECK(c.flips[6].problem_id == 11);
  CHECK(c.flips[7].kind == FlipKind::became_slower);
  CHECK(c.flips[7].problem_id == 12);

  const std::string text = format_comparison(c);
  CHECK(text.find("correct_rate") != std::string::npos);
  CHECK(text.find("McNemar p=0.0312 (+0/-6)") != std::string::npos);
  CHECK(text.find("problem 3 P3 (level 1) sample 0: correct -> incorrect (correct -> output_mismatch)") !=
        std::string::npos);
  const auto json = comparison_json(c);
  CHECK(json["flips"].size() == 8);
  CHECK(json["total"]["metrics"][4]["metric"] == "correct_rate");
  CHECK(json["total"]["metrics"][4]["beyond_noise"] == true);
}

TEST_CASE("equal runs differ by nothing and one lost problem is within noise") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const std::vector<PlannedSample> same = {
      {1, 0, Verdict::correct, 2.0}, {2, 0, Verdict::correct, 0.5}, {3, 0, Verdict::compile_failed}};
  const auto a = planned_run(store, same, level_problems(3));
  const auto b = planned_run(store, same, level_problems(3));
  const Comparison equal = compare(store, a, b);
  for (const MetricComparison& m : equal.total.metrics) {
    CHECK_MESSAGE(!m.beyond_noise, m.metric);
    if (m.delta) CHECK_MESSAGE(*m.delta == 0.0, m.metric);
  }
  CHECK(equal.flips.empty());
  const MetricComparison* geomean = equal.total.find("geomean_speedup");
  CHECK(*geomean->a == doctest::Approx(1.0));
  CHECK(geomean->interval->low == 0.0);
  CHECK(geomean->interval->high == 0.0);

  const auto c = planned_run(
      store, {{1, 0, Verdict::runtime_error}, {2, 0, Verdict::correct, 0.5}, {3, 0, Verdict::compile_failed}},
      level_problems(3));
  const Comparison one_lost = compare(store, a, c);
  const MetricComparison* correct = one_lost.total.find("correct_rate");
  CHECK(correct->lost == 1);
  CHECK(*correct->p_value == 1.0);
  CHECK_FALSE(correct->beyond_noise);
  REQUIRE(one_lost.flips.size() == 1);
  CHECK(one_lost.flips[0].problem_id == 1);
}

TEST_CASE("runs of different suites are refused") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const auto a = planned_run(store, {}, level_problems(1));
  const auto b = planned_run(store, {}, level_problems(1, 2), "kernelbench-l2");
  const auto refused = compare_runs(require_ok(load_run_results(store, a)), require_ok(load_run_results(store, b)));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message ==
        "run 1 is of suite kernelbench-l1 and run 2 of suite kernelbench-l2: only runs of one suite compare");
}

TEST_CASE("a correctness flip of a borderline sample is listed apart, as noise") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const std::pair<EvaluationFlag, std::string> borderline_a{EvaluationFlag::borderline, "margin 0.8"};
  const std::pair<EvaluationFlag, std::string> borderline_b{EvaluationFlag::borderline, "margin 1.2"};
  // 1: borderline on both sides; 2: far off in B (margin 30), not borderline; 3: borderline in A only.
  const auto a = planned_run(store,
                             {{1, 0, Verdict::correct, 2.0, 0.05, 0.8, {borderline_a}},
                              {2, 0, Verdict::correct, 2.0, 0.05, 0.1},
                              {3, 0, Verdict::correct, 2.0, 0.05, 0.7, {borderline_a}}},
                             level_problems(3));
  const auto b = planned_run(store,
                             {{1, 0, Verdict::output_mismatch, std::nullopt, 0.05, 1.2, {borderline_b}},
                              {2, 0, Verdict::output_mismatch, std::nullopt, 0.05, 30.0},
                              {3, 0, Verdict::runtime_error}},
                             level_problems(3));
  const Comparison c = compare(store, a, b);
  REQUIRE(c.flips.size() == 3);
  CHECK(c.flips[0].borderline);
  CHECK(*c.flips[0].margin_a == 0.8);
  CHECK(*c.flips[0].margin_b == 1.2);
  CHECK_FALSE(c.flips[1].borderline);
  CHECK(c.flips[2].borderline);
  CHECK_FALSE(c.flips[2].margin_b);

  const std::string text = format_comparison(c);
  INFO(text);
  CHECK(text.find("flipped (1; ") != std::string::npos);
  CHECK(text.find("  problem 2 P2 (level 1) sample 0: correct -> incorrect (correct -> output_mismatch)\n") !=
        std::string::npos);
  const auto borderline = text.find("borderline flips (2; margin within [0.5, 2] in A or B");
  REQUIRE(borderline != std::string::npos);
  CHECK(text.find(
            "  problem 1 P1 (level 1) sample 0: correct -> incorrect (correct -> output_mismatch), margin 0.8 -> 1.2\n",
            borderline) != std::string::npos);
  CHECK(
      text.find(
          "  problem 3 P3 (level 1) sample 0: correct -> incorrect (correct -> runtime_error), margin 0.7 -> \u2013\n",
          borderline) != std::string::npos);
  const auto json = comparison_json(c);
  CHECK(json["flips"][0]["borderline"] == true);
  CHECK(json["flips"][0]["margin_b"] == 1.2);
  CHECK(json["flips"][1]["borderline"] == false);
}

TEST_CASE("slower or faster needs the minimum relative change: 99.88 ms -> 99.67 ms is not listed") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  // Problem 1: 99.88 ms (p10-p90 99.83..99.93) -> 99.67 ms (99.62..99.72): beyond the spreads, but
  // 0.2% faster. Problem 2: 10 ms -> 8 ms, 20% faster. Problem 3: 1 ms -> 1.5 ms, 50% slower.
  const auto a = planned_run(store,
                             {{1, 0, Verdict::correct, 1.0 / 99.88, 0.0005},
                              {2, 0, Verdict::correct, 0.1, 0.01},
                              {3, 0, Verdict::correct, 1.0, 0.01}},
                             level_problems(3));
  const auto b = planned_run(store,
                             {{1, 0, Verdict::correct, 1.0 / 99.67, 0.0005},
                              {2, 0, Verdict::correct, 0.125, 0.01},
                              {3, 0, Verdict::correct, 1.0 / 1.5, 0.01}},
                             level_problems(3));
  const Comparison c = compare(store, a, b);
  CHECK(c.options.min_change == 0.05);
  REQUIRE(c.flips.size() == 2);
  CHECK(c.flips[0].problem_id == 2);
  CHECK(c.flips[0].kind == FlipKind::became_faster);
  CHECK(c.flips[1].problem_id == 3);
  CHECK(c.flips[1].kind == FlipKind::became_slower);
  const std::string text = format_comparison(c);
  INFO(text);
  CHECK(text.find("problem 1 P1") == std::string::npos);
  CHECK(text.find("problem 2 P2 (level 1) sample 0: faster (10 ms -> 8 ms)") != std::string::npos);
  CHECK(text.find("by more than 5% of A's median") != std::string::npos);

  // The spreads alone would list problem 1: with no minimum change it is "faster".
  CompareOptions any_change;
  any_change.min_change = 0;
  const Comparison any = compare(store, a, b, any_change);
  REQUIRE(any.flips.size() == 3);
  CHECK(any.flips[0].problem_id == 1);
  CHECK(any.flips[0].kind == FlipKind::became_faster);
  CHECK(*any.flips[0].runtime_a_ms == doctest::Approx(99.88));
  CHECK(*any.flips[0].runtime_b_ms == doctest::Approx(99.67));
  // A minimum above 20% keeps only problem 3 (50% slower).
  CompareOptions big_change;
  big_change.min_change = 0.3;
  const Comparison big = compare(store, a, b, big_change);
  REQUIRE(big.flips.size() == 1);
  CHECK(big.flips[0].problem_id == 3);
  CHECK(comparison_json(c)["min_change"] == 0.05);
}

TEST_CASE("--min-change takes a fraction from 0 up to but not including 1") {
  CHECK(require_ok(parse_min_change("0.05")) == 0.05);
  CHECK(require_ok(parse_min_change("0")) == 0.0);
  CHECK(require_ok(parse_min_change("0.5")) == 0.5);
  for (const char* bad : {"-0.1", "1", "5", "abc", "", "0.05x", "nan", "inf", "5%"}) {
    const auto refused = parse_min_change(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message ==
          std::string("--min-change must be a fraction of the runtime in [0, 1), such as 0.05; not '") + bad + "'");
  }
}
