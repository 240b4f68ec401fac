// Integration tests of the whole benchmark in one run (`--suite kernelbench`): the replay model's
// quickstart candidates for the project's own problems of levels 1-3 (tests/data), judged on the
// CPU by the real workers; per-level rows and a total in report, show, the HTML report, export,
// compare and gate; LEVEL/IDS selections, their errors and a resumed run; and report over several
// single-level runs of one model as one table by level.
#include "cli_runner.hpp"
#include "tests/test_files.hpp"

#include "results/store/store.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <sstream>

using namespace dicebench;
using test::check_one_error_line;
using test::run_cli;
using test::scalar;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kKernelBench = std::string(DICEBENCH_TEST_DATA_DIR) + "/kernelbench";
const std::string kQuickstart = "replay:" + std::string(DICEBENCH_TEST_DATA_DIR) + "/replay/quickstart";

std::string read(const std::string& path) { return dicebench::test::read_text(path); }

nlohmann::json json_of(const test::CliResult& r) {
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

// "level problem/sample verdict" of every sample of a run.
std::vector<std::string> verdicts(const std::string& db, int run) {
  auto rows = results::run_query(db, fmt::format("select level, problem_id, sample_index, verdict from sample_results "
                                                 "where run = {} order by level, problem_id, sample_index",
                                                 run));
  REQUIRE(rows.ok());
  std::vector<std::string> out;
  for (const auto& row : rows->rows)
    out.push_back(fmt::format("{} {}/{} {}", std::get<std::int64_t>(row[0]), std::get<std::int64_t>(row[1]),
                              std::get<std::int64_t>(row[2]),
                              std::holds_alternative<std::string>(row[3]) ? std::get<std::string>(row[3]) : "pending"));
  return out;
}

// The table rows of a report whose first cell is `name` ("1", "total").
bool has_row(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(name + " ", 0) == 0) return true;
  return false;
}

std::vector<std::string> whole_args(const std::string& db) {
  return {"run",      "--model", kQuickstart, "--suite", "kernelbench", "--kernelbench-root",    kKernelBench,
          "--device", "cpu",     "--db",      db,        "--set",       "eval.timing_budget_s=1"};
}

}  // namespace

TEST_CASE("the whole benchmark in one run, with per-level rows and a total in every output") {
  TempDir tmp("whole");
  const std::string db = tmp / "results.db";
  const auto run = run_cli(whole_args(db));
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);

  // Problem 1 of each level is a problem of its own; every sample carries its level.
  CHECK(verdicts(db, 1) == std::vector<std::string>{"1 1/0 correct", "1 1/1 output_mismatch", "1 2/0 correct",
                                                    "1 2/1 output_mismatch", "1 10/0 shape_mismatch",
                                                    "1 10/1 extraction_failed", "2 1/0 correct",
                                                    "2 1/1 output_mismatch", "3 1/0 correct", "3 1/1 runtime_error"});
  CHECK(scalar(db, "select group_concat(level || ':' || name, ' ') from problems where run = 1 and problem_id = 1") ==
        "1:Add 2:MatmulRelu 3:TinyMLP");
  CHECK(scalar(db, "select json_extract(config, '$.samples.\"3/1\"') from runs where id = 1") == "2");
  CHECK(scalar(db, "select json_extract(config, '$.suite.levels') from runs where id = 1") == "[1,2,3]");
  // The run ends with its report: a row per level and the total.
  for (const char* row : {"1", "2", "3", "total"}) CHECK_MESSAGE(has_row(run.out, row), run.out);

  {  // report: per level and in total
    const auto report = json_of(run_cli({"report", "1", "--db", db, "--json"}));
    REQUIRE(report["levels"].size() == 3);
    const std::map<int, std::pair<int, int>> expected = {{1, {3, 6}}, {2, {1, 2}}, {3, {1, 2}}};  // problems, samples
    for (const auto& level : report["levels"]) {
      const auto& [problems, samples] = expected.at(level["level"].get<int>());
      CHECK(level["problems"] == problems);
      CHECK(level["samples"] == samples);
    }
    CHECK(report["levels"][1]["correct"] == 1);
    CHECK(report["total"]["problems"] == 5);
    CHECK(report["total"]["samples"] == 10);
    CHECK(report["total"]["correct"] == 4);
    CHECK(report["total"]["correct_rate"].get<double>() == doctest::Approx(0.4));
  }
  {  // show: a level table with its total, and the level of every sample
    const auto show = run_cli({"show", "1", "--db", db});
    REQUIRE_MESSAGE(show.exit_code == 0, show.err);
    CHECK(show.out.find("MatmulRelu") != std::string::npos);
    CHECK(show.out.find("TinyMLP") != std::string::npos);
    // Its rows: level, problems, samples, pending, compiled, correct, as the database counts them.
    std::vector<std::string> expected;
    for (const char* where : {"level = 1", "level = 2", "level = 3", "1"})
      expected.push_back(
          scalar(db, fmt::format("select iif(count(distinct level) > 1, 'total', min(level)) || ' ' || "
                                 "count(distinct level || '/' || problem_id) || ' ' || count(*) || ' ' || "
                                 "count(*) filter (where verdict is null) || ' ' || sum(compiled) || ' ' || "
                                 "sum(correct) from sample_results where run = 1 and {}",
                                 where)));
    CHECK(expected.back() == "total 5 10 0 9 4");
    std::istringstream lines(show.out);
    std::vector<std::string> level_rows;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream cells(line);
      std::vector<std::string> c;
      for (std::string cell; cells >> cell;) c.push_back(cell);
      if (c.size() == 6 && (c[0] == "total" || c[0] == "1" || c[0] == "2" || c[0] == "3"))
        level_rows.push_back(fmt::format("{}", fmt::join(c, " ")));
    }
    CHECK(level_rows == expected);
  }
  {  // export: level per record, the report's levels in a summary, one level per KernelBench file
    const auto jsonl = run_cli({"export", "1", "--db", db, "--format", "jsonl"});
    REQUIRE_MESSAGE(jsonl.exit_code == 0, jsonl.err);
    std::map<int, int> per_level;
    std::istringstream lines(jsonl.out);
    for (std::string line; std::getline(lines, line);) ++per_level[nlohmann::json::parse(line)["level"].get<int>()];
    CHECK(per_level == std::map<int, int>{{1, 6}, {2, 2}, {3, 2}});
    const auto summary = json_of(run_cli({"export", "1", "--db", db, "--format", "summary"}));
    CHECK(summary["report"]["levels"].size() == 3);
    CHECK(summary["report"]["total"]["samples"] == 10);
    CHECK(summary["problems"].size() == 5);

    check_one_error_line(
        run_cli({"export", "1", "--db", db, "--format", "kernelbench"}),
        "run 1 covers 3 levels (1, 2, 3); KernelBench's eval_results.json holds one level: pass --level");
    check_one_error_line(run_cli({"export", "1", "--db", db, "--format", "kernelbench", "--level", "4"}),
                         "run 1 has no level 4 (it covers level 1, 2, 3)");
    const auto level2 = json_of(run_cli({"export", "1", "--db", db, "--format", "kernelbench", "--level", "2"}));
    REQUIRE(level2.size() == 1);
    REQUIRE(level2["1"].size() == 2);
    CHECK(level2["1"][0]["correctness"] == true);
    CHECK(level2["1"][1]["metadata"]["dicebench_verdict"] == "output_mismatch");
  }
  {  // the HTML report: a summary row per level and the total, problems of each level
    const auto written = run_cli({"report", "1", "--db", db, "--html", tmp / "r.html"});
    REQUIRE_MESSAGE(written.exit_code == 0, written.err);
    const std::string html = read(tmp / "r.html");
    for (const char* level : {"1", "2", "3", "total"})
      CHECK(html.find(fmt::format(R"(data-level="{}" data-metric="correct_rate")", level)) != std::string::npos);
    CHECK(html.find(R"(<tr data-level="3" data-problem="1" data-sample="1">)") != std::string::npos);
    CHECK(html.find(R"(<tr data-level="2" data-problem="1" data-sample="0">)") != std::string::npos);
  }
  {  // compare and gate: per level and all levels together
    const auto compared = json_of(run_cli({"compare", "1", "1", "--db", db, "--json"}));
    REQUIRE(compared["levels"].size() == 3);
    CHECK(compared["levels"][2]["level"] == 3);
    CHECK(compared["levels"][2]["paired_samples"] == 2);
    CHECK(compared["total"]["paired_samples"] == 10);
    CHECK(compared["total"]["paired_problems"] == 5);
    const auto text = run_cli({"compare", "1", "1", "--db", db});
    REQUIRE_MESSAGE(text.exit_code == 0, text.err);
    CHECK(text.out.find("level 3: 1 problems and 2 samples paired") != std::string::npos);
    CHECK(text.out.find("all levels: 5 problems and 10 samples paired") != std::string::npos);

    const auto gate = run_cli({"gate", "--baseline", "1", "--candidate", "1", "--db", db, "--json", tmp / "gate.json"});
    CHECK_MESSAGE(gate.exit_code == 0, (gate.out + gate.err));
    std::vector<std::string> names;
    const auto gate_json = nlohmann::json::parse(read(tmp / "gate.json"));
    for (const auto& rule : gate_json["rules"]) names.push_back(rule["name"]);
    CHECK(gate_json["passed"] == true);
    CHECK(names == std::vector<std::string>{"correct_rate level 1", "fast_1 level 1", "correct_rate level 2",
                                            "fast_1 level 2", "correct_rate level 3", "fast_1 level 3", "correct_rate",
                                            "fast_1", "no correct problem becomes incorrect"});
  }
}

TEST_CASE("LEVEL/IDS selections, their errors, and a resumed run over several levels") {
  TempDir tmp("whole-select");
  const std::string db = tmp / "results.db";
  auto args = whole_args(db);
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> out = args;
    out.insert(out.end(), more.begin(), more.end());
    return out;
  };
  check_one_error_line(
      run_cli(with({"--problems", "1/1,5"})),
      "kernelbench covers levels 1, 2, 3: name its problems as LEVEL/IDS, e.g. 1/5 (plain id 5 names no level)");
  check_one_error_line(run_cli(with({"--problems", "1/1,2/7"})),
                       "kernelbench has no problem 2/7 (it has level 1 1-2,10, level 2 1, level 3 1)");
  check_one_error_line(run_cli(with({"--problems", "9/1"})), "kernelbench has no problem 9/1");
  check_one_error_line(run_cli(with({"--problems", "x/1"})), "bad problem selection 'x/1': 'x' is not a level");
  check_one_error_line(run_cli({"run", "--model", kQuickstart, "--suite", "kernelbench-l1", "--kernelbench-root",
                                kKernelBench, "--problems", "2/1", "--db", db, "--generate-only"}),
                       "kernelbench-l1 has no problem 2/1 (it has level 1 1-2,10)");
  CHECK(scalar(db, "select count(*) from runs") == "0");  // nothing stored

  // Level 4 where the checkout has level4/; a checkout without level3/ is refused.
  const fs::path root = tmp / "root";
  fs::create_directories(root);
  for (const char* folder : {"level1", "level2", "level3", "prompts"})
    fs::copy(kKernelBench + "/" + folder, root / folder, fs::copy_options::recursive);
  test::write(root / "level4/1_Scale.py",
              "import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
              "        return 2 * x\n\ndef get_inputs():\n    return [torch.randn(4)]\n\n"
              "def get_init_inputs():\n    return []\n");
  fs::copy(std::string(DICEBENCH_TEST_DATA_DIR) + "/replay/quickstart", tmp / "replay4");
  test::write(tmp / "replay4/level_4_problem_1_sample_0_kernel.py",
              "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x + x\n");
  const auto four = run_cli({"run", "--model", "replay:" + (tmp / "replay4"), "--suite", "kernelbench",
                             "--kernelbench-root", root.string(), "--generate-only", "--db", tmp / "four.db"});
  REQUIRE_MESSAGE(four.exit_code == 0, four.err);
  CHECK(scalar(tmp / "four.db", "select json_extract(config, '$.suite.levels') from runs") == "[1,2,3,4]");
  CHECK(scalar(tmp / "four.db", "select json_extract(config, '$.suite.problems') from runs") == "6");
  CHECK(scalar(tmp / "four.db",
               "select group_concat(level || '/' || problem_id || '/' || sample_index) from samples "
               "where level = 4") == "4/1/0");
  fs::remove_all(root / "level3");
  check_one_error_line(run_cli({"run", "--model", kQuickstart, "--suite", "kernelbench", "--kernelbench-root",
                                root.string(), "--generate-only", "--db", tmp / "four.db"}),
                       "no level3 folder under " + root.string());

  // Stored without evaluation, then resumed: the stored LEVEL/IDS selection is read back.
  const auto generated = run_cli(with({"--problems", "1/2,2/1,3/1", "--samples", "1", "--generate-only"}));
  REQUIRE_MESSAGE(generated.exit_code == 0, generated.err);
  CHECK(scalar(db, "select group_concat(level || '/' || problem_id, ',') from problems where run = 1") ==
        "1/2,2/1,3/1");
  CHECK(verdicts(db, 1) == std::vector<std::string>{"1 2/0 pending", "2 1/0 pending", "3 1/0 pending"});
  const auto resumed = run_cli({"run", "--resume", "1", "--db", db});
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(verdicts(db, 1) == std::vector<std::string>{"1 2/0 correct", "2 1/0 correct", "3 1/0 correct"});
  for (const char* row : {"1", "2", "3", "total"}) CHECK_MESSAGE(has_row(resumed.out, row), resumed.out);

  // A single-level run stored before runs covered several levels keys its samples by plain id;
  // it still resumes.
  const auto single = run_cli({"run", "--model", kQuickstart, "--suite", "kernelbench-l1", "--kernelbench-root",
                               kKernelBench, "--problems", "2", "--samples", "1", "--generate-only", "--device", "cpu",
                               "--db", db, "--set", "eval.timing_budget_s=1"});
  REQUIRE_MESSAGE(single.exit_code == 0, single.err);
  {
    auto store = results::Store::open(db);
    REQUIRE(store.ok());
    REQUIRE(store->database()
                .exec("UPDATE runs SET config = json_set(config, '$.samples', json('{\"2\": 1}')) WHERE id = 2",
                      "old format")
                .ok());
  }
  const auto old = run_cli({"run", "--resume", "2", "--db", db});
  REQUIRE_MESSAGE(old.exit_code == 0, old.err);
  CHECK(verdicts(db, 2) == std::vector<std::string>{"1 2/0 correct"});
}

TEST_CASE("report puts single-level runs of one model together as one table by level") {
  TempDir tmp("level-runs");
  const std::string db = tmp / "results.db";
  for (const char* suite : {"kernelbench-l1", "kernelbench-l2", "kernelbench-l3"}) {
    const auto r = run_cli({"run", "--model", kQuickstart, "--suite", suite, "--kernelbench-root", kKernelBench,
                            "--generate-only", "--db", db});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  const auto table = run_cli({"report", "1", "2", "3", "--db", db});
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.rfind("runs 1, 2, 3  model " + kQuickstart + "  suite kernelbench-l1+kernelbench-l2+kernelbench-l3",
                        0) == 0);
  for (const char* row : {"1", "2", "3", "total"}) CHECK_MESSAGE(has_row(table.out, row), table.out);

  const auto report = json_of(run_cli({"report", "3", "1", "--db", db, "--json"}));
  REQUIRE(report["runs"].size() == 2);
  CHECK(report["runs"][0]["id"] == 3);
  REQUIRE(report["levels"].size() == 2);
  CHECK(report["levels"][0]["level"] == 1);
  CHECK(report["levels"][0]["samples"] == 6);
  CHECK(report["levels"][1]["level"] == 3);
  CHECK(report["total"]["samples"] == 8);
  CHECK(report["total"]["pending"] == 7);  // one completion without code is decided: extraction_failed

  const auto html = run_cli({"report", "1", "2", "3", "--db", db, "--html", tmp / "r.html"});
  REQUIRE_MESSAGE(html.exit_code == 0, html.err);
  const std::string page = read(tmp / "r.html");
  CHECK(page.find("runs 1, 2, 3") != std::string::npos);
  for (const char* level : {"1", "2", "3", "total"})
    CHECK(page.find(fmt::format(R"(data-run="0" data-level="{}" data-metric="samples")", level)) != std::string::npos);
  CHECK(page.find("run 2: " + kQuickstart + " on kernelbench-l2") != std::string::npos);

  // What cannot make one table by level: one error line each, no page written.
  check_one_error_line(run_cli({"report", "1", "1", "--db", db}), "runs 1 and 1 are both of level 1");
  const std::string other_model = "replay:" + (tmp / "other");
  fs::create_directories(tmp / "other");
  fs::copy_file(std::string(DICEBENCH_TEST_DATA_DIR) + "/replay/quickstart/level_2_problem_1_sample_0_kernel.py",
                tmp / "other/level_2_problem_1_sample_0_kernel.py");
  const auto other = run_cli({"run", "--model", other_model, "--suite", "kernelbench-l2", "--kernelbench-root",
                              kKernelBench, "--generate-only", "--db", db});
  REQUIRE_MESSAGE(other.exit_code == 0, other.err);
  check_one_error_line(
      run_cli({"report", "1", "4", "--db", db}),
      "run 1 is of model " + kQuickstart + " and run 4 of model " + other_model + ": only runs of one model");
  const auto whole = run_cli({"run", "--model", kQuickstart, "--suite", "kernelbench", "--kernelbench-root",
                              kKernelBench, "--generate-only", "--db", db});
  REQUIRE_MESSAGE(whole.exit_code == 0, whole.err);
  check_one_error_line(run_cli({"report", "2", "5", "--db", db, "--html", tmp / "bad.html"}),
                       "run 5 covers 3 levels: only single-level runs make one table by level");
  CHECK_FALSE(fs::exists(tmp / "bad.html"));
}
