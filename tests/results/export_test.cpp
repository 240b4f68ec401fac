// Loading a run's results, the KernelBench / JSONL / CSV exports, and run summary files written
// and read back (including one from a newer format).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/base/text.hpp"
#include "planned_run.hpp"
#include "results/export.hpp"
#include "results/report.hpp"
#include "results/report_format.hpp"
#include "results/run_results.hpp"
#include "results/schema.hpp"
#include "results/summary_file.hpp"

using namespace dicebench::results;
using namespace dicebench::results::testing;

namespace {

// Problem 1: correct 2x and output_mismatch; problem 2: no code block; problem 3: pending.
std::int64_t small_run(Store& store) {
  return planned_run(store,
                     {{1, 0, Verdict::correct, 2.0},
                      {1, 1, Verdict::output_mismatch},
                      {2, 0, Verdict::extraction_failed},
                      {3, 0, std::nullopt}},
                     level_problems(3));
}

}  // namespace

TEST_CASE("a run's results load with verdicts, timings and, when asked, sources") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const auto run = small_run(store);
  const RunResults results = require_ok(load_run_results(store, run, {.sources = true}));
  REQUIRE(results.samples.size() == 4);
  CHECK(results.problems.size() == 3);
  const SampleResult& s = results.samples[0];
  CHECK(s.verdict == "correct");
  CHECK(s.correct);
  CHECK(*s.runtime_ms == doctest::Approx(0.5));
  CHECK(*s.runtime_p90_ms == doctest::Approx(0.525));
  CHECK(*s.runtime_trials == 100);
  CHECK(*s.custom_kernel_share == 0.75);
  CHECK(*s.compile_path == "nvrtc");
  CHECK(s.candidate == std::optional<std::string>("class ModelNew: pass\n"));
  CHECK(results.samples[2].verdict == "extraction_failed");
  CHECK_FALSE(results.samples[2].has_candidate);
  CHECK(results.samples[3].pending);
  CHECK_FALSE(require_ok(load_run_results(store, run)).samples[0].candidate);

  auto missing = load_run_results(store, 99);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("no run 99") != std::string::npos);
}

TEST_CASE("the KernelBench export has eval_results.json's layout") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const RunResults results = require_ok(load_run_results(store, small_run(store)));
  const auto json = nlohmann::json::parse(require_ok(export_kernelbench(results)));
  // Keys are problem ids; pending samples are left out.
  CHECK(json.size() == 2);
  REQUIRE(json.contains("1"));
  REQUIRE(json["1"].size() == 2);
  const auto& correct = json["1"][0];
  CHECK(correct["sample_id"] == 0);
  CHECK(correct["compiled"] == true);
  CHECK(correct["correctness"] == true);
  CHECK(correct["runtime"].get<double>() == doctest::Approx(0.5));
  CHECK(correct["runtime_stats"]["mean"].get<double>() == doctest::Approx(0.5));
  CHECK(correct["runtime_stats"]["num_trials"] == 100);
  CHECK(correct["runtime_stats"]["hardware"] == "NVIDIA H200");
  CHECK(correct["metadata"]["dicebench_verdict"] == "correct");
  const auto& wrong = json["1"][1];
  CHECK(wrong["correctness"] == false);
  CHECK(wrong["runtime"] == -1.0);
  CHECK(wrong["runtime_stats"].empty());
  CHECK(wrong["metadata"]["correctness_issue"] == "max abs diff 0.5");
  CHECK(json["2"][0]["compiled"] == false);

  // One file holds one level.
  const auto two_levels = planned_run(store, {}, {problem(1, 1, "A"), problem(2, 2, "B")});
  auto refused = export_kernelbench(require_ok(load_run_results(store, two_levels)));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("covers 2 levels") != std::string::npos);
}

TEST_CASE("JSONL has one record per sample and CSV the same columns") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const RunResults results = require_ok(load_run_results(store, small_run(store)));
  const std::string jsonl = export_jsonl(results);
  std::vector<nlohmann::json> lines;
  for (const auto& line : dicebench::split(jsonl, '\n'))
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  REQUIRE(lines.size() == 4);
  CHECK(lines[0]["problem"] == "P1");
  CHECK(lines[0]["verdict"] == "correct");
  CHECK(lines[0]["speedup"] == 2.0);
  CHECK(lines[3]["verdict"].is_null());

  const std::string csv = export_csv(results);
  const auto rows = dicebench::split(csv, '\n');
  CHECK(rows[0].rfind("run,problem_id,level,problem,sample_index,verdict,has_candidate,compiled,correct,speedup,", 0) == 0);
  CHECK(rows[1].rfind("1,1,1,P1,0,correct,1,1,1,2,0.5,", 0) == 0);
  CHECK(rows[4].rfind("1,3,1,P3,0,,1,0,0,,", 0) == 0);
}

TEST_CASE("a run summary reads back to the same report, newer or foreign files are refused") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const RunResults results = require_ok(load_run_results(store, small_run(store)));
  const std::string path = dir.file("summary.json");
  write_bytes(path, write_summary(results));
  const RunResults back = require_ok(read_summary(path));
  CHECK(back.run.id == results.run.id);
  CHECK(back.run.suite == "kernelbench-l1");
  CHECK(back.samples.size() == results.samples.size());
  CHECK(report_json(compute_report(back)) == report_json(compute_report(results)));

  auto doc = nlohmann::json::parse(read_bytes(path));
  doc["version"] = kSummaryFormatVersion + 1;
  write_bytes(path, doc.dump());
  auto newer = read_summary(path);
  REQUIRE_FALSE(newer.ok());
  CHECK(newer.error().message == path + " was written by a newer dicebench (run summary format 2, this build reads up to 1)");

  write_bytes(path, R"({"format": "something-else", "version": 1})");
  CHECK(read_summary(path).error().message.find("not a dicebench run summary") != std::string::npos);
  write_bytes(path, "{ not json");
  CHECK(read_summary(path).error().message.find("not JSON") != std::string::npos);
  doc["version"] = 1;
  doc["samples"][0].erase("correct");
  write_bytes(path, doc.dump());
  CHECK(read_summary(path).error().message.find("sample 0: malformed sample record") != std::string::npos);
  CHECK(read_summary(dir.file("absent.json")).error().message.find("cannot read run summary") != std::string::npos);
}

TEST_CASE("a read-only database of schema version 3 still loads and reports") {
  TempDir dir;
  const std::string path = dir.file("v3.db");
  require_ok(create_schema_version(path, 3));
  {
    Database db = raw_open(path);
    raw_exec(db, "INSERT INTO runs (created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro) "
                 "VALUES ('t','finished','m','kernelbench-l1','{}','v','g','h',1,'{}');"
                 "INSERT INTO problems VALUES (1, 1, 1, 'Add', 'level1/1_Add.py', 'c', 'p');"
                 "INSERT INTO samples (run, problem_id, sample_index, prompt_hash, completion, candidate, extraction, "
                 "gen_stats, created) VALUES (1, 1, 0, 'p', 'x', 'class ModelNew: pass', 'ok', '{}', 't');"
                 "INSERT INTO evaluations (sample, status, compiled, correct, device, runtime_ms, speedup, created) "
                 "VALUES (1, 'correct', 1, 1, 'cpu', 0.5, 2.0, 't');");
  }
  auto store = Store::open(path, OpenMode::ReadOnly);
  REQUIRE(store.ok());
  CHECK(store->schema_version() == 3);
  const RunResults results = require_ok(load_run_results(*store, 1, {.sources = true}));
  REQUIRE(results.samples.size() == 1);
  CHECK(results.samples[0].correct);
  CHECK_FALSE(results.samples[0].custom_kernel_share);
  CHECK(*require_ok(compute_report(*store, 1)).total.geomean_speedup == 2.0);
}
