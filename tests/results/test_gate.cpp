// Gate rules from TOML (and their errors with file:line:col), and gate outcomes on planned runs:
// the defaults, absolute and relative bounds, allowed flips, borderline flips (noise by default,
// a failure with [flips] borderline = "fail"), suite filters, JSON and JUnit XML.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "planned_run.hpp"
#include "results/report/gate.hpp"
#include "results/report/gate_format.hpp"
#include "results/report/gate_rules.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

namespace {

std::string rules_error(const std::string& text) {
  auto rules = parse_gate_rules(text, "rules.toml");
  REQUIRE_FALSE(rules.ok());
  return rules.error().message;
}

// Baseline: problems 1-4 correct at 2x. Candidate: problem 1 output_mismatch, the rest equal.
struct Runs {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  Comparison comparison;
  Runs() {
    const auto a = planned_run(store,
                               {{1, 0, Verdict::correct, 2.0},
                                {2, 0, Verdict::correct, 2.0},
                                {3, 0, Verdict::correct, 2.0},
                                {4, 0, Verdict::correct, 2.0}},
                               level_problems(4));
    const auto b = planned_run(store,
                               {{1, 0, Verdict::output_mismatch},
                                {2, 0, Verdict::correct, 2.0},
                                {3, 0, Verdict::correct, 2.0},
                                {4, 0, Verdict::correct, 2.0}},
                               level_problems(4));
    comparison =
        require_ok(compare_runs(require_ok(load_run_results(store, a)), require_ok(load_run_results(store, b))));
  }
};

}  // namespace

TEST_CASE("gate rules read from TOML") {
  const GateRules rules = require_ok(parse_gate_rules(R"(
[[rule]]
metric = "correct_rate"
max_drop = "noise"

[[rule]]
metric = "fast_1.5"
level = 2
suite = "kernelbench-l2"
max_drop = 0.05
max_relative_drop = 0.1

[flips]
allowed = [12, 40, "2/5"]
)",
                                                      "rules.toml"));
  REQUIRE(rules.rules.size() == 2);
  CHECK(rules.rules[0].noise);
  CHECK(rules.rules[0].origin == "rules.toml:2:1");
  CHECK(rules.rules[1].metric == "fast_1.5");
  CHECK(rules.rules[1].level == 2);
  CHECK(rules.rules[1].suite == "kernelbench-l2");
  CHECK(*rules.rules[1].max_drop == 0.05);
  CHECK(*rules.rules[1].max_relative_drop == 0.1);
  CHECK(rules.fail_on_new_incorrect);
  CHECK(rules.allowed_incorrect == std::set<dicebench::ProblemKey>{{0, 12}, {0, 40}, {2, 5}});
  CHECK(rules.allows_incorrect({3, 12}));  // a plain id: at any level
  CHECK(rules.allows_incorrect({2, 5}));
  CHECK_FALSE(rules.allows_incorrect({1, 5}));

  const GateRules defaults = default_gate_rules();
  REQUIRE(defaults.rules.size() == 2);
  CHECK(defaults.rules[0].metric == "correct_rate");
  CHECK(defaults.rules[1].metric == "fast_1");
  CHECK(defaults.fail_on_new_incorrect);
  // Runs over several levels: the same rules per level, then all levels together.
  const GateRules per_level = default_gate_rules({1, 2});
  REQUIRE(per_level.rules.size() == 6);
  CHECK(per_level.rules[0].level == 1);
  CHECK(per_level.rules[3].level == 2);
  CHECK(per_level.rules[3].metric == "fast_1");
  CHECK_FALSE(per_level.rules[4].level);
  CHECK(default_gate_rules({3}).rules.size() == 2);
}

TEST_CASE("bad rules files are refused at the place of the mistake") {
  CHECK(rules_error("[[rule]\nmetric = 1").rfind("rules.toml:1:", 0) == 0);
  CHECK(rules_error("[[rule]]\nmetric = \"correct_rat\"\nmax_drop = 0.1\n") ==
        "rules.toml:2:10: unknown metric 'correct_rat' (did you mean 'correct_rate'?)");
  CHECK(rules_error("[[rule]]\nmetric = \"correct_rate\"\nmax_dorp = 0.1\n") ==
        "rules.toml:3:1: unknown key 'max_dorp' in [[rule]] (did you mean 'max_drop'?)");
  CHECK(rules_error("[[rule]]\nmetric = \"correct_rate\"\n") ==
        "rules.toml:1:1: a [[rule]] needs max_drop or max_relative_drop");
  CHECK(rules_error("[[rule]]\nmetric = \"pass@1\"\nmax_drop = \"noise\"\n") ==
        "rules.toml:3:12: pass@1 has no noise test; give max_drop as a number");
  CHECK(rules_error("[[rule]]\nmetric = \"fast_1\"\nmax_drop = -1\n") ==
        "rules.toml:3:12: 'max_drop' must be a number >= 0");
  for (const char* bad : {"x", "2/x", "0/1", "2/", "/3", "2/3/4"})
    CHECK(rules_error(fmt::format("[flips]\nallowed = [\"{}\"]\n", bad)) ==
          "rules.toml:2:12: 'allowed' must hold problem ids or \"LEVEL/ID\" strings such as \"2/5\"");
  CHECK(rules_error("[gate]\n").rfind("rules.toml:1:2: unknown key 'gate' in the rules file", 0) == 0);
  CHECK(read_gate_rules("/nonexistent/rules.toml")
            .error()
            .message.rfind("cannot read rules file /nonexistent/rules.toml", 0) == 0);
}

TEST_CASE("the default gate fails on a problem that became incorrect, and allowed flips pass") {
  Runs runs;
  const GateResult failed = check_gate(runs.comparison, default_gate_rules());
  CHECK_FALSE(failed.passed);
  REQUIRE(failed.outcomes.size() == 3);
  // One lost of four: McNemar p = 1, within noise.
  CHECK(failed.outcomes[0].name == "correct_rate");
  CHECK(failed.outcomes[0].status == RuleStatus::passed);
  CHECK(*failed.outcomes[0].delta == -0.25);
  CHECK(failed.outcomes[1].status == RuleStatus::passed);
  CHECK(failed.outcomes[2].status == RuleStatus::failed);
  CHECK(failed.outcomes[2].message == "1 became incorrect: problem 1 P1 sample 0 (correct -> output_mismatch)");
  CHECK(failed.outcomes[2].bound == "none");
  REQUIRE(failed.new_incorrect.size() == 1);

  GateRules allow = default_gate_rules();
  allow.allowed_incorrect = {{0, 1}};
  const GateResult allowed = check_gate(runs.comparison, allow);
  CHECK(allowed.passed);
  CHECK(allowed.outcomes[2].message == "1 allowed became incorrect");
  CHECK(allowed.outcomes[2].bound == "problems 1");

  const std::string table = format_gate(failed);
  CHECK(table.find("gate FAILED: 1 of 3 rules") != std::string::npos);
  CHECK(format_gate(allowed).find("gate passed") != std::string::npos);
  const auto json = gate_json(failed);
  CHECK(json["passed"] == false);
  CHECK(json["rules"][2]["status"] == "FAIL");
  CHECK(json["new_incorrect"][0]["problem_id"] == 1);
  const std::string junit = gate_junit(failed);
  CHECK(junit.find("<testsuites name=\"dicebench gate\" tests=\"3\" failures=\"1\" skipped=\"0\">") !=
        std::string::npos);
  CHECK(junit.find("<testcase classname=\"dicebench.gate\" name=\"correct_rate\"/>") != std::string::npos);
  CHECK(junit.find("<failure message=\"1 became incorrect: problem 1 P1 sample 0 (correct -&gt; output_mismatch)\">") !=
        std::string::npos);
}

TEST_CASE("absolute and relative bounds, level and suite filters") {
  Runs runs;
  // correct_rate 1.0 -> 0.75: a drop of 0.25 (25% of the baseline); fast_1 the same.
  const GateRules rules = require_ok(parse_gate_rules(R"(
[[rule]]
metric = "correct_rate"
max_drop = 0.25
[[rule]]
metric = "correct_rate"
max_drop = 0.2
[[rule]]
metric = "fast_1"
max_relative_drop = 0.3
[[rule]]
metric = "fast_1"
max_relative_drop = 0.1
[[rule]]
metric = "geomean_speedup"
level = 3
max_drop = 0
[[rule]]
metric = "correct_rate"
suite = "kernelbench-l2"
max_drop = 0
[flips]
correct_to_incorrect = "allow"
)",
                                                      "rules.toml"));
  const GateResult result = check_gate(runs.comparison, rules);
  REQUIRE(result.outcomes.size() == 7);
  CHECK(result.outcomes[0].status == RuleStatus::passed);  // 0.25 <= 0.25
  CHECK(result.outcomes[1].status == RuleStatus::failed);
  CHECK(result.outcomes[1].message == "dropped by 25.0pp");
  CHECK(result.outcomes[2].status == RuleStatus::passed);
  CHECK(result.outcomes[3].status == RuleStatus::failed);
  CHECK(result.outcomes[3].message == "dropped by 25% of the baseline");
  CHECK(result.outcomes[4].status == RuleStatus::skipped);
  CHECK(result.outcomes[4].message == "neither run has level 3");
  CHECK(result.outcomes[5].status == RuleStatus::skipped);
  CHECK(result.outcomes[5].message == "for suite kernelbench-l2, not kernelbench-l1");
  CHECK(result.outcomes[6].status == RuleStatus::passed);
  CHECK_FALSE(result.passed);
  CHECK(gate_junit(result).find("skipped=\"2\"") != std::string::npos);
}

TEST_CASE("a borderline sample that became incorrect is noise by default and fails when the rules say fail") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  // Baseline: 1-4 correct at 2x, problem 1 narrowly (margin 0.95). Candidate: problem 1 narrowly
  // wrong (margin 1.1); both flagged borderline.
  const auto a = planned_run(store,
                             {{1, 0, Verdict::correct, 2.0, 0.05, 0.95, {{EvaluationFlag::borderline, "margin 0.95"}}},
                              {2, 0, Verdict::correct, 2.0},
                              {3, 0, Verdict::correct, 2.0},
                              {4, 0, Verdict::correct, 2.0}},
                             level_problems(4));
  const auto b = planned_run(
      store,
      {{1, 0, Verdict::output_mismatch, std::nullopt, 0.05, 1.1, {{EvaluationFlag::borderline, "margin 1.1"}}},
       {2, 0, Verdict::correct, 2.0},
       {3, 0, Verdict::correct, 2.0},
       {4, 0, Verdict::correct, 2.0}},
      level_problems(4));
  const Comparison comparison =
      require_ok(compare_runs(require_ok(load_run_results(store, a)), require_ok(load_run_results(store, b))));

  const GateResult noise = check_gate(comparison, default_gate_rules());
  CHECK(noise.passed);
  REQUIRE(noise.outcomes.size() == 3);
  CHECK(noise.outcomes[2].status == RuleStatus::passed);
  CHECK(noise.outcomes[2].message == "1 borderline became incorrect, counted as noise: problem 1 P1 sample 0");
  CHECK(noise.new_incorrect.empty());
  REQUIRE(noise.borderline_noise.size() == 1);
  const auto json = gate_json(noise);
  CHECK(json["borderline_noise"][0]["problem_id"] == 1);
  CHECK(json["borderline_noise"][0]["margin_candidate"] == 1.1);
  CHECK(json["new_incorrect"].empty());

  const GateRules noise_rules = require_ok(parse_gate_rules("[flips]\nborderline = \"noise\"\n", "rules.toml"));
  CHECK_FALSE(noise_rules.fail_on_borderline_flip);
  CHECK(check_gate(comparison, noise_rules).passed);

  const GateRules strict = require_ok(parse_gate_rules("[flips]\nborderline = \"fail\"\n", "rules.toml"));
  CHECK(strict.fail_on_borderline_flip);
  const GateResult failed = check_gate(comparison, strict);
  CHECK_FALSE(failed.passed);
  REQUIRE(failed.new_incorrect.size() == 1);
  CHECK(failed.borderline_noise.empty());
  CHECK(failed.outcomes.back().message == "1 became incorrect: problem 1 P1 sample 0 (correct -> output_mismatch)");
  CHECK(gate_junit(failed).find("failures=\"1\"") != std::string::npos);

  CHECK(rules_error("[flips]\nborderline = \"maybe\"\n") ==
        "rules.toml:2:14: 'borderline' must be \"noise\" or \"fail\"");
  CHECK(rules_error("[flips]\nbordreline = \"fail\"\n") ==
        "rules.toml:2:1: unknown key 'bordreline' in [flips] (did you mean 'borderline'?)");
}
