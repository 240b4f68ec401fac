// Integration tests of the dicebench commands that read flags, margins and problem traits:
// report (fast_p without samples below the memory floor, flag counts, --exclude-degenerate),
// show, report --html, compare (--min-change, borderline flips), gate (borderline flips as noise
// or failures, with a summary-file baseline) and export. The databases are written through the
// results store, so no worker or torch runs here.
#include "cli_runner.hpp"
#include "tests/results/planned_run.hpp"
#include "tests/test_files.hpp"

#include "core/base/text.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using dicebench::test::check_one_error_line;
using dicebench::test::run_cli;
namespace results = dicebench::results;
using dicebench::EvaluationFlag;
using dicebench::Verdict;
using results::testing::level_problems;
using results::testing::planned_run;
using results::testing::set_traits;

namespace {

std::string read(const std::string& path) { return dicebench::test::read_text(path); }

nlohmann::json json_of(const dicebench::test::CliResult& r) {
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

// Run 1: problem 1 correct 4x but degenerate (zeros_pass); 2 correct 2x, borderline; 3 correct 3x
// below the memory floor; 4 output_mismatch. Problems 2-4 checked and not degenerate.
void flagged_run(results::Store& store) {
  const auto run = planned_run(
      store,
      {{1, 0, Verdict::correct, 4.0},
       {2, 0, Verdict::correct, 2.0, 0.05, 0.9, {{EvaluationFlag::borderline, "margin 0.9"}}},
       {3, 0, Verdict::correct, 3.0, 0.05, 0.01, {{EvaluationFlag::below_memory_floor, "0.333 ms, floor 0.4 ms"}}},
       {4, 0, Verdict::output_mismatch}},
      level_problems(4));
  set_traits(store, run, {{1, R"(["zeros_pass"])"}, {2, "[]"}, {3, "[]"}, {4, "[]"}});
}

}  // namespace

TEST_CASE("report counts flags, leaves samples below the memory floor out of fast_p, and says what it excluded") {
  results::testing::TempDir dir;
  const std::string db = dir.file("results.db");
  {
    results::Store store = results::testing::open_store(db);
    flagged_run(store);
  }
  const auto table = run_cli({"report", "1", "--db", db});
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("flags: below_memory_floor 1, borderline 1\n") != std::string::npos);
  CHECK(table.out.find("degenerate problems: 1 of 4 (zeros_pass 1)\n") != std::string::npos);
  CHECK(table.out.find("total  non-degenerate      3") != std::string::npos);
  CHECK(table.out.find("--exclude-degenerate") == std::string::npos);

  // fast_1: problems 1 and 2 of 4 (3 is below the floor); geomean (4 * 2 * 3)^(1/3).
  const auto all = json_of(run_cli({"report", "1", "--db", db, "--json"}));
  CHECK(all["exclude_degenerate"] == false);
  CHECK(all["total"]["fast_p"]["1"] == 0.5);
  CHECK(all["total"]["geomean_speedup"].get<double>() == doctest::Approx(std::cbrt(24.0)));
  CHECK(all["total"]["flags"]["below_memory_floor"] == 1);
  CHECK(all["total"]["non_degenerate"]["fast_1"].get<double>() == doctest::Approx(1.0 / 3.0));

  // Without the degenerate problem 1: fast_1 1/3, geomean (2 * 3)^(1/2).
  const auto excluded = json_of(run_cli({"report", "1", "--db", db, "--json", "--exclude-degenerate"}));
  CHECK(excluded["exclude_degenerate"] == true);
  CHECK(excluded["total"]["fast_p"]["1"].get<double>() == doctest::Approx(1.0 / 3.0));
  CHECK(excluded["total"]["geomean_speedup"].get<double>() == doctest::Approx(std::sqrt(6.0)));
  CHECK(excluded["total"]["correct_rate"] == 0.75);
  const auto said = run_cli({"report", "1", "--db", db, "--exclude-degenerate"});
  REQUIRE_MESSAGE(said.exit_code == 0, said.err);
  CHECK(said.out.find("fast_p and geomean leave out the 1 degenerate problem (--exclude-degenerate)\n") !=
        std::string::npos);

  const auto html = run_cli({"report", "1", "--db", db, "--exclude-degenerate", "--html", dir.file("r.html")});
  REQUIRE_MESSAGE(html.exit_code == 0, html.err);
  const std::string page = read(dir.file("r.html"));
  CHECK(page.find(R"(<p id="exclude-degenerate">)") != std::string::npos);
  CHECK(page.find(R"(<span class="flag flag-borderline" title="margin 0.9">borderline</span>)") != std::string::npos);
  CHECK(page.find(R"(<td data-traits="zeros_pass">)") != std::string::npos);

  const auto show = run_cli({"show", "1", "--db", db});
  REQUIRE_MESSAGE(show.exit_code == 0, show.err);
  CHECK(show.out.find("zeros_pass\n") != std::string::npos);
  CHECK(show.out.find("correct BORDERLINE") != std::string::npos);
  CHECK(show.out.find("borderline (margin 0.9)") != std::string::npos);
  CHECK(show.out.find("below_memory_floor (0.333 ms, floor 0.4 ms)") != std::string::npos);

  // The exports carry them too.
  const auto jsonl = run_cli({"export", "1", "--db", db, "--format", "jsonl"});
  REQUIRE_MESSAGE(jsonl.exit_code == 0, jsonl.err);
  const auto lines = dicebench::split(std::string(dicebench::trim(jsonl.out)), '\n');
  REQUIRE(lines.size() == 4);
  CHECK(nlohmann::json::parse(lines[0])["problem_traits"] == nlohmann::json::array({"zeros_pass"}));
  CHECK(nlohmann::json::parse(lines[1])["margin"] == 0.9);
  CHECK(nlohmann::json::parse(lines[2])["flags"] == nlohmann::json::array({"below_memory_floor"}));
}

TEST_CASE("compare: a change within --min-change is not listed, borderline flips apart, bad values refused") {
  results::testing::TempDir dir;
  const std::string db = dir.file("results.db");
  {
    results::Store store = results::testing::open_store(db);
    // Problem 1: 99.88 ms -> 99.67 ms, beyond both tight spreads; problem 2: correct -> wrong, borderline.
    planned_run(store,
                {{1, 0, Verdict::correct, 1.0 / 99.88, 0.0005},
                 {2, 0, Verdict::correct, 2.0, 0.05, 0.95, {{EvaluationFlag::borderline, "margin 0.95"}}}},
                level_problems(2));
    planned_run(
        store,
        {{1, 0, Verdict::correct, 1.0 / 99.67, 0.0005},
         {2, 0, Verdict::output_mismatch, std::nullopt, 0.05, 1.05, {{EvaluationFlag::borderline, "margin 1.05"}}}},
        level_problems(2));
  }
  const auto table = run_cli({"compare", "1", "2", "--db", db});
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("problem 1 P1") == std::string::npos);
  CHECK(table.out.find("flipped (0; ") != std::string::npos);
  CHECK(table.out.find("borderline flips (1; ") != std::string::npos);
  CHECK(
      table.out.find(
          "problem 2 P2 (level 1) sample 0: correct -> incorrect (correct -> output_mismatch), margin 0.95 -> 1.05") !=
      std::string::npos);

  const auto any = json_of(run_cli({"compare", "1", "2", "--db", db, "--json", "--min-change", "0"}));
  CHECK(any["min_change"] == 0.0);
  REQUIRE(any["flips"].size() == 2);
  CHECK(any["flips"][0]["problem_id"] == 1);
  CHECK(any["flips"][0]["kind"] == "faster");
  CHECK(any["flips"][1]["borderline"] == true);
  CHECK(json_of(run_cli({"compare", "1", "2", "--db", db, "--json"}))["flips"].size() == 1);

  for (const char* bad : {"abc", "1", "1.5", "nan", "--min-change=-0.1"}) {
    const std::string arg = bad;
    const bool inline_value = arg.rfind("--", 0) == 0;
    const auto r = inline_value ? run_cli({"compare", "1", "2", "--db", db, arg})
                                : run_cli({"compare", "1", "2", "--db", db, "--min-change", arg});
    check_one_error_line(r, "--min-change must be a fraction of the runtime in [0, 1), such as 0.05; not '" +
                                (inline_value ? std::string("-0.1") : arg) + "'");
    CHECK(r.out.empty());
  }
}

TEST_CASE("gate: a borderline sample that became incorrect is noise unless the rules say fail, also from a summary") {
  results::testing::TempDir dir;
  const std::string db = dir.file("results.db");
  {
    results::Store store = results::testing::open_store(db);
    planned_run(store,
                {{1, 0, Verdict::correct, 2.0, 0.05, 0.95, {{EvaluationFlag::borderline, "margin 0.95"}}},
                 {2, 0, Verdict::correct, 2.0},
                 {3, 0, Verdict::correct, 2.0}},
                level_problems(3));
    planned_run(
        store,
        {{1, 0, Verdict::output_mismatch, std::nullopt, 0.05, 1.05, {{EvaluationFlag::borderline, "margin 1.05"}}},
         {2, 0, Verdict::correct, 2.0},
         {3, 0, Verdict::correct, 2.0}},
        level_problems(3));
  }
  const auto noise =
      run_cli({"gate", "--baseline", "1", "--candidate", "2", "--db", db, "--json", dir.file("gate.json")});
  CHECK_MESSAGE(noise.exit_code == 0, (noise.out + noise.err));
  CHECK(noise.out.find("1 borderline became incorrect, counted as noise: problem 1 P1 sample 0") != std::string::npos);
  CHECK(nlohmann::json::parse(read(dir.file("gate.json")))["borderline_noise"][0]["problem_id"] == 1);

  dicebench::test::write(dir.file("strict.toml"), "[flips]\nborderline = \"fail\"\n");
  const auto strict =
      run_cli({"gate", "--baseline", "1", "--candidate", "2", "--db", db, "--rules", dir.file("strict.toml")});
  CHECK_MESSAGE(strict.exit_code == 3, (strict.out + strict.err));
  CHECK(strict.out.find("1 became incorrect: problem 1 P1 sample 0 (correct -> output_mismatch)") != std::string::npos);

  // The baseline's flags survive a summary file.
  const auto exported =
      run_cli({"export", "1", "--db", db, "--format", "summary", "--output", dir.file("baseline.json")});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.err);
  CHECK(run_cli({"gate", "--baseline", dir.file("baseline.json"), "--candidate", "2", "--db", db}).exit_code == 0);
  CHECK(run_cli({"gate", "--baseline", dir.file("baseline.json"), "--candidate", "2", "--db", db, "--rules",
                 dir.file("strict.toml")})
            .exit_code == 3);

  dicebench::test::write(dir.file("bad.toml"), "[flips]\nborderline = \"sometimes\"\n");
  check_one_error_line(
      run_cli({"gate", "--baseline", "1", "--candidate", "2", "--db", db, "--rules", dir.file("bad.toml")}),
      dir.file("bad.toml") + ":2:14: 'borderline' must be \"noise\" or \"fail\"");
}

TEST_CASE("export --format kernelbench: compiled false for a failure while loading and for a missing ModelNew") {
  results::testing::TempDir dir;
  const std::string db = dir.file("results.db");
  {
    results::Store store = results::testing::open_store(db);
    planned_run(store,
                {{1,
                  0,
                  Verdict::runtime_error,
                  std::nullopt,
                  0.05,
                  std::nullopt,
                  {},
                  R"({"failed_stage":"load"})",
                  false,
                  "RuntimeError: boom at import"},
                 {2,
                  0,
                  Verdict::runtime_error,
                  std::nullopt,
                  0.05,
                  std::nullopt,
                  {},
                  "",
                  true,
                  "dicebench_harness.loading.ProgramError: the candidate defines no class ModelNew"},
                 {3,
                  0,
                  Verdict::runtime_error,
                  std::nullopt,
                  0.05,
                  std::nullopt,
                  {},
                  R"({"failed_stage":"init"})",
                  true,
                  "RuntimeError: CUDA error"}},
                level_problems(3));
  }
  const auto r =
      run_cli({"export", "1", "--db", db, "--format", "kernelbench", "--output", dir.file("eval_results.json")});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto json = nlohmann::json::parse(read(dir.file("eval_results.json")));
  CHECK(json["1"][0]["compiled"] == false);
  CHECK(json["1"][0]["metadata"].contains("compilation_error"));
  CHECK(json["2"][0]["compiled"] == false);
  CHECK(json["2"][0]["metadata"].contains("compilation_error"));
  CHECK(json["3"][0]["compiled"] == true);
  CHECK(json["3"][0]["metadata"]["runtime_error"] == "RuntimeError: CUDA error");
}
