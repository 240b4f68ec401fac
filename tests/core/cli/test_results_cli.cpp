// Integration tests of the commands that read results (export, compare, gate, report --html):
// on real runs (replayed candidates evaluated on the CPU by the real workers: a baseline, a
// candidate run that lost a correct problem, kept in another database, and an equal run), and
// every bad input ending in one error line. The HTML page in a browser: html_report_browser_test.py.
#include "cli_runner.hpp"
#include "tests/test_files.hpp"

#include "core/base/text.hpp"

#include <doctest/doctest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace dicebench;
using test::run_cli;
using test::TempDir;
using test::write;
namespace fs = std::filesystem;

using test::check_one_error_line;

namespace {

const std::string kKernelBench = std::string(DICEBENCH_TEST_DATA_DIR) + "/kernelbench";

std::string read(const std::string& path) { return dicebench::test::read_text(path); }

// Candidates for the three level-1 test problems, each correct but slowed by a sleep so that
// no speedup comes near 1 (fast_1 is 0 in every run, whatever the CPU's timing noise); with
// `lose_relu_square` problem 2's candidate forgets the square (output_mismatch).
void make_candidates(const std::string& dir, bool lose_relu_square) {
  fs::create_directories(dir);
  const std::string head = "import time\nimport torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n";
  write(dir + "/level_1_problem_1_sample_0_kernel.py",
        head + "    def forward(self, x, y):\n        time.sleep(0.002)\n        return x + y\n");
  write(dir + "/level_1_problem_2_sample_0_kernel.py",
        head + "    def forward(self, x):\n        time.sleep(0.002)\n        return torch.relu(x)" +
            (lose_relu_square ? "\n" : " ** 2\n"));
  write(dir + "/level_1_problem_10_sample_0_kernel.py",
        head +
            "    def __init__(self, dim):\n        super().__init__()\n        self.dim = dim\n\n"
            "    def forward(self, x):\n        time.sleep(0.002)\n        return x.sum(dim=self.dim)\n");
}

void evaluated_run(const std::string& replay, const std::string& db) {
  const auto r = run_cli({"run", "--model", "replay:" + replay, "--suite", "kernelbench-l1", "--kernelbench-root",
                          kKernelBench, "--device", "cpu", "--db", db, "--set", "eval.timing_budget_s=1"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
}

nlohmann::json json_of(const test::CliResult& r) {
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

const nlohmann::json& metric(const nlohmann::json& level, const std::string& name) {
  for (const auto& m : level["metrics"])
    if (m["metric"] == name) return m;
  FAIL("no metric " << name);
  static const nlohmann::json none;
  return none;
}

}  // namespace

TEST_CASE("export, compare and gate work on real CPU runs, across databases") {
  TempDir tmp("real");
  make_candidates(tmp / "good", false);
  make_candidates(tmp / "lost", true);
  const std::string db = tmp / "results.db", other = tmp / "other.db";
  evaluated_run(tmp / "good", db);     // run 1: baseline, three correct
  evaluated_run(tmp / "good", db);     // run 2: equal
  evaluated_run(tmp / "lost", other);  // other.db run 1: problem 2 became incorrect

  // export: KernelBench's layout, JSON lines, CSV.
  {
    const auto kb =
        run_cli({"export", "1", "--db", db, "--format", "kernelbench", "--output", tmp / "eval_results.json"});
    REQUIRE_MESSAGE(kb.exit_code == 0, kb.err);
    const auto eval_results = nlohmann::json::parse(read(tmp / "eval_results.json"));
    CHECK(eval_results.size() == 3);
    for (const char* id : {"1", "2", "10"}) {
      REQUIRE(eval_results.contains(id));
      CHECK(eval_results[id][0]["correctness"] == true);
      CHECK(eval_results[id][0]["runtime"].get<double>() >= 2.0);  // the sleep, in ms
      CHECK(eval_results[id][0]["runtime_stats"]["device"] == "cpu");
    }
    const auto jsonl = run_cli({"export", other + ":1", "--format", "jsonl"});
    REQUIRE_MESSAGE(jsonl.exit_code == 0, jsonl.err);
    const auto lines = split(std::string(trim(jsonl.out)), '\n');
    REQUIRE(lines.size() == 3);
    CHECK(nlohmann::json::parse(lines[1])["verdict"] == "output_mismatch");
    const auto csv = run_cli({"export", "1", "--db", db, "--format", "csv"});
    REQUIRE_MESSAGE(csv.exit_code == 0, csv.err);
    CHECK(split(std::string(trim(csv.out)), '\n').size() == 4);
  }

  // compare: the lost problem, and nothing between equal runs.
  {
    const auto lost = json_of(run_cli({"compare", "1", other + ":1", "--db", db, "--json"}));
    const auto& correct = metric(lost["total"], "correct_rate");
    CHECK(correct["a"] == 1.0);
    CHECK(correct["b"].get<double>() == doctest::Approx(2.0 / 3.0));
    CHECK(correct["lost"] == 1);
    CHECK(correct["p_value"] == 1.0);
    CHECK(correct["beyond_noise"] == false);
    CHECK(metric(lost["total"], "fast_1")["delta"] == 0.0);
    const auto flipped = std::count_if(lost["flips"].begin(), lost["flips"].end(),
                                       [](const nlohmann::json& f) { return f["kind"] == "correct -> incorrect"; });
    CHECK(flipped == 1);
    const auto table = run_cli({"compare", "1", other + ":1", "--db", db});
    REQUIRE_MESSAGE(table.exit_code == 0, table.err);
    CHECK(
        table.out.find("problem 2 ReluSquare (level 1) sample 0: correct -> incorrect (correct -> output_mismatch)") !=
        std::string::npos);

    const auto equal = json_of(run_cli({"compare", "1", "2", "--db", db, "--json"}));
    CHECK(metric(equal["total"], "correct_rate")["delta"] == 0.0);
    for (const auto& m : equal["total"]["metrics"])
      if (m["metric"] != "geomean_speedup") CHECK_MESSAGE(m["beyond_noise"] == false, m.dump());
  }

  // gate: fails (exit 3) on the run that lost a correct problem, passes on the equal one, with
  // the baseline as a run in the database or as a summary file exported earlier.
  {
    const auto lost = run_cli({"gate", "--baseline", "1", "--candidate", other + ":1", "--db", db, "--json",
                               tmp / "gate.json", "--junit", tmp / "gate.xml"});
    CHECK_MESSAGE(lost.exit_code == 3, (lost.out + lost.err));
    CHECK(lost.out.find("gate FAILED: 1 of 3 rules") != std::string::npos);
    CHECK(lost.out.find("1 became incorrect: problem 2 ReluSquare sample 0 (correct -> output_mismatch)") !=
          std::string::npos);
    const auto summary = nlohmann::json::parse(read(tmp / "gate.json"));
    CHECK(summary["passed"] == false);
    CHECK(summary["new_incorrect"][0]["problem_id"] == 2);
    const std::string junit = read(tmp / "gate.xml");
    CHECK(junit.find("failures=\"1\"") != std::string::npos);
    CHECK(junit.find("<failure message=\"1 became incorrect") != std::string::npos);

    const auto exported =
        run_cli({"export", "1", "--db", db, "--format", "summary", "--output", tmp / "baseline.json"});
    REQUIRE_MESSAGE(exported.exit_code == 0, exported.err);
    const auto equal = run_cli({"gate", "--baseline", tmp / "baseline.json", "--candidate", "2", "--db", db});
    CHECK_MESSAGE(equal.exit_code == 0, (equal.out + equal.err));
    CHECK(equal.out.find("gate passed") != std::string::npos);
    const auto lost_again = run_cli({"gate", "--baseline", tmp / "baseline.json", "--candidate", other + ":1"});
    CHECK(lost_again.exit_code == 3);

    write(tmp / "allow.toml", "[flips]\nallowed = [2]\n");
    const auto allowed =
        run_cli({"gate", "--baseline", "1", "--candidate", other + ":1", "--db", db, "--rules", tmp / "allow.toml"});
    CHECK_MESSAGE(allowed.exit_code == 0, (allowed.out + allowed.err));
  }
}

TEST_CASE("bad input: runs that do not exist, runs of different suites, bad rules files, newer baselines") {
  TempDir tmp("bad");
  const std::string db = tmp / "results.db";
  fs::create_directories(tmp / "replay");
  write(tmp / "replay/level_1_problem_1_sample_0_kernel.py", "class ModelNew:\n    pass\n");
  write(tmp / "replay/level_2_problem_1_sample_0_kernel.py", "class ModelNew:\n    pass\n");
  for (const char* suite : {"kernelbench-l1", "kernelbench-l2"}) {
    const auto r = run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", suite, "--kernelbench-root",
                            kKernelBench, "--generate-only", "--db", db});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  check_one_error_line(run_cli({"export", "7", "--db", db, "--format", "csv"}), "no run 7 in " + db);
  check_one_error_line(run_cli({"compare", "1", "7", "--db", db}), "no run 7 in " + db);
  check_one_error_line(run_cli({"compare", "1", tmp / "absent.db:1", "--db", db}),
                       "no database at " + (tmp / "absent.db"));
  check_one_error_line(run_cli({"compare", "1", "not-a-run", "--db", db}), "'not-a-run' is not a run");
  check_one_error_line(run_cli({"compare", "1", tmp / "absent.json", "--db", db}),
                       "'" + (tmp / "absent.json") + "' is not a run, and no such file exists");
  check_one_error_line(run_cli({"compare", "1", tmp / "replay", "--db", db}),
                       "'" + (tmp / "replay") + "' is a folder, not a run");
  // Options that do not go together are refused rather than one of them ignored.
  check_one_error_line(run_cli({"report", "1", "--db", db, "--json", "--html", tmp / "r.html"}),
                       "--json excludes --html");
  check_one_error_line(run_cli({"export", "1", "--db", db, "--format", "csv", "--level", "1"}),
                       "--level goes with --format kernelbench only");
  check_one_error_line(run_cli({"-v", "-q", "report", "1", "--db", db}), "--verbose excludes --quiet");
  check_one_error_line(run_cli({"export", "1", "--db", db, "--format", "csv", "--output", ""}),
                       "cannot write an output file with an empty name");
  CHECK_FALSE(fs::exists(".tmp"));
  check_one_error_line(
      run_cli({"compare", "1", "2", "--db", db}),
      "run 1 is of suite kernelbench-l1 and run 2 of suite kernelbench-l2: only runs of one suite compare");
  const auto out = tmp / "out.csv";
  write(out, "kept");
  check_one_error_line(run_cli({"export", "7", "--db", db, "--format", "csv", "--output", out}), "no run 7");
  CHECK(read(out) == "kept");

  write(tmp / "rules.toml", "[[rule]]\nmetric = \"correct_rate\"\nmax_drop = \"lots\"\n");
  check_one_error_line(
      run_cli({"gate", "--baseline", "1", "--candidate", "1", "--db", db, "--rules", tmp / "rules.toml"}),
      tmp / "rules.toml:3:12: 'max_drop' must be a number or \"noise\"");
  check_one_error_line(
      run_cli({"gate", "--baseline", "1", "--candidate", "1", "--db", db, "--rules", tmp / "absent.toml"}),
      "cannot read rules file " + (tmp / "absent.toml"));
  const auto exported = run_cli({"export", "1", "--db", db, "--format", "summary", "--output", tmp / "baseline.json"});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.err);
  auto summary = nlohmann::json::parse(read(tmp / "baseline.json"));
  summary["version"] = 99;
  write(tmp / "baseline.json", summary.dump());
  check_one_error_line(
      run_cli({"gate", "--baseline", tmp / "baseline.json", "--candidate", "1", "--db", db}),
      (tmp / "baseline.json") + " was written by a newer dicebench (run summary format 99, this build reads up to 2)");
  check_one_error_line(run_cli({"gate", "--baseline", "1", "--candidate", "2", "--db", db}),
                       "only runs of one suite compare");

  // Runs of one level cannot make one table by level (test_whole_benchmark puts levels together).
  check_one_error_line(run_cli({"report", "1", "1", "--db", db}), "runs 1 and 1 are both of level 1");
  check_one_error_line(run_cli({"report", "1", "7", "--db", db, "--html", tmp / "r.html"}), "no run 7 in " + db);
  check_one_error_line(run_cli({"report", "1", "2", "1", "--db", db, "--html", tmp / "r.html"}),
                       "runs 1 and 1 are both of level 1");
  CHECK_FALSE(fs::exists(tmp / "r.html"));
  const auto single = run_cli({"report", "1", "--db", db, "--html", tmp / "r.html"});
  CHECK_MESSAGE(single.exit_code == 0, single.err);
  CHECK(read(tmp / "r.html").rfind("<!DOCTYPE html>", 0) == 0);
}
