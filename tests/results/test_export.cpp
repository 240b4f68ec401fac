// Loading a run's results (with flags, margins and traits; and from older schemas), the
// KernelBench / JSONL / CSV exports, and run summary files written and read back (format 1 files
// still read, newer ones refused).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/base/text.hpp"
#include "planned_run.hpp"
#include "results/report/export.hpp"
#include "results/report/report.hpp"
#include "results/report/report_format.hpp"
#include "results/report/summary_file.hpp"
#include "results/store/run_results.hpp"
#include "results/store/schema.hpp"

using namespace dicebench;
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
  CHECK(s.verdict() == "correct");
  CHECK(s.correct);
  CHECK(*s.runtime_ms == doctest::Approx(0.5));
  CHECK(*s.runtime_p90_ms == doctest::Approx(0.525));
  CHECK(*s.runtime_trials == 100);
  CHECK(*s.custom_kernel_share == 0.75);
  CHECK(*s.compile_path == "nvrtc");
  CHECK(s.candidate == std::optional<std::string>("class ModelNew: pass\n"));
  CHECK(results.samples[2].verdict() == "extraction_failed");
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
  CHECK(rows[0].rfind("run,problem_id,level,problem,sample_index,verdict,has_candidate,compiled,correct,speedup,", 0) ==
        0);
  CHECK(rows[1].rfind("1,1,1,P1,0,correct,1,1,1,2,0.5,", 0) == 0);
  CHECK(rows[4].rfind("1,3,1,P3,0,,1,0,0,,", 0) == 0);
}

TEST_CASE("a run summary reads back to the same report, and newer or foreign files are refused") {
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
  CHECK(newer.error().message ==
        path + " was written by a newer dicebench (run summary format 3, this build reads up to 2)");

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
  make_version3_database(path);
  auto store = Store::open(path, OpenMode::ReadOnly);
  REQUIRE(store.ok());
  CHECK(store->schema_version() == 3);
  const RunResults results = require_ok(load_run_results(*store, 1, {.sources = true}));
  REQUIRE(results.samples.size() == 1);
  CHECK(results.samples[0].correct);
  CHECK_FALSE(results.samples[0].custom_kernel_share);
  CHECK(*require_ok(compute_report(*store, 1)).total.geomean_speedup == 2.0);
}

namespace {

// Problem 1: correct 2x, borderline, excessive speedup; problem 2: correct 3x below the memory
// floor, degenerate (zeros_pass); problem 3: output_mismatch; problem 1 checked, not degenerate;
// problem 3 never checked.
std::int64_t flagged_run(Store& store) {
  const auto run = planned_run(
      store,
      {{1,
        0,
        Verdict::correct,
        2.0,
        0.05,
        0.93,
        {{EvaluationFlag::borderline, "margin 0.93"}, {EvaluationFlag::excessive_speedup, "2x over a bound of 1.5x"}}},
       {2, 0, Verdict::correct, 3.0, 0.05, 0.0, {{EvaluationFlag::below_memory_floor, "0.333 ms, floor 0.400 ms"}}},
       {3, 0, Verdict::output_mismatch, std::nullopt, 0.05, 7.5}},
      level_problems(3));
  set_traits(store, run, {{1, "[]"}, {2, R"(["zeros_pass"])"}});
  return run;
}

}  // namespace

TEST_CASE("a run's results carry margins, flags with details, and the problems' traits") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const RunResults results = require_ok(load_run_results(store, flagged_run(store)));
  REQUIRE(results.samples.size() == 3);
  const SampleResult& first = results.samples[0];
  CHECK(*first.margin == 0.93);
  // In the vocabulary's order, whatever order they were stored in.
  REQUIRE(first.flags.size() == 2);
  CHECK(first.flags[0] == SampleFlag{"excessive_speedup", "2x over a bound of 1.5x"});
  CHECK(first.flags[1] == SampleFlag{"borderline", "margin 0.93"});
  CHECK(first.has_flag(EvaluationFlag::borderline));
  CHECK_FALSE(first.has_flag(EvaluationFlag::below_memory_floor));
  CHECK(first.problem_traits == std::optional<std::vector<std::string>>(std::vector<std::string>{}));
  CHECK(results.samples[1].problem_traits == std::optional<std::vector<std::string>>({"zeros_pass"}));
  CHECK_FALSE(results.samples[2].problem_traits);
  CHECK(results.samples[2].flags.empty());
  CHECK(*results.samples[2].margin == 7.5);

  // Traits that are not a JSON array of names are refused, naming the problem.
  require_ok(store.set_problem_traits(1, {1, 3}, R"({"zeros_pass": true})"));
  auto malformed = load_run_results(store, 1);
  REQUIRE_FALSE(malformed.ok());
  CHECK(malformed.error().message == store.path() +
                                         ": problem 1/3 of run 1: traits must be a JSON array of trait names, not "
                                         R"({"zeros_pass": true})");
}

TEST_CASE("JSONL and CSV carry margin, flags and problem traits") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const RunResults results = require_ok(load_run_results(store, flagged_run(store)));
  std::vector<nlohmann::json> lines;
  for (const auto& line : dicebench::split(export_jsonl(results), '\n'))
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["margin"] == 0.93);
  CHECK(lines[0]["flags"] == nlohmann::json::array({"excessive_speedup", "borderline"}));
  CHECK(lines[0]["flag_details"]["borderline"] == "margin 0.93");
  CHECK(lines[0]["problem_traits"] == nlohmann::json::array());
  CHECK(lines[1]["problem_traits"] == nlohmann::json::array({"zeros_pass"}));
  CHECK(lines[1]["flags"] == nlohmann::json::array({"below_memory_floor"}));
  CHECK(lines[2]["problem_traits"].is_null());
  CHECK(lines[2]["flags"] == nlohmann::json::array());
  CHECK(lines[2]["failed_stage"].is_null());

  const auto rows = dicebench::split(export_csv(results), '\n');
  CHECK(rows[0].find(",error_message,margin,memory_floor_ms,flags,flag_details,problem_traits,failed_stage") !=
        std::string::npos);
  CHECK(rows[1].find(R"(,0.93,,"[""excessive_speedup"",""borderline""]",)") != std::string::npos);
  CHECK(rows[2].find(R"(,"[""zeros_pass""]",)") != std::string::npos);
}

TEST_CASE("KernelBench's compiled is false for every failure while loading, a missing ModelNew included") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const std::string missing_model = "dicebench_harness.loading.ProgramError: the candidate defines no class ModelNew";
  const auto run =
      planned_run(store,
                  {// 1: the module raised while loading (this evaluator: compiled = 0, failed_stage load)
                   {1,
                    0,
                    Verdict::runtime_error,
                    std::nullopt,
                    0.05,
                    std::nullopt,
                    {},
                    R"({"failed_stage":"load"})",
                    false,
                    "RuntimeError: boom at import"},
                   // 2: no ModelNew, stored by the evaluator before this change (compiled = 1, no stage)
                   {2, 0, Verdict::runtime_error, std::nullopt, 0.05, std::nullopt, {}, "", true, missing_model},
                   // 3: loaded, failed in ModelNew(*init_inputs)
                   {3,
                    0,
                    Verdict::runtime_error,
                    std::nullopt,
                    0.05,
                    std::nullopt,
                    {},
                    R"({"failed_stage":"init"})",
                    true,
                    "RuntimeError: CUDA error"},
                   // 4: correct, flagged
                   {4, 0, Verdict::correct, 40.0, 0.05, 0.2, {{EvaluationFlag::excessive_speedup, "40x over 10x"}}},
                   // 5: wrong output
                   {5, 0, Verdict::output_mismatch, std::nullopt, 0.05, 3.0},
                   // 6: compile error
                   {6, 0, Verdict::compile_failed}},
                  level_problems(6));
  set_traits(store, run, {{4, R"(["constant_output"])"}});
  const RunResults results = require_ok(load_run_results(store, run));
  CHECK(failed_while_loading(results.samples[0]));
  CHECK(failed_while_loading(results.samples[1]));
  CHECK_FALSE(failed_while_loading(results.samples[2]));
  CHECK_FALSE(failed_while_loading(results.samples[3]));
  CHECK(results.samples[1].compiled);  // as stored: only the export applies KernelBench's rule

  const auto json = nlohmann::json::parse(require_ok(export_kernelbench(results)));
  CHECK(json["1"][0]["compiled"] == false);
  CHECK(json["1"][0]["metadata"]["compilation_error"] == "RuntimeError: boom at import");
  CHECK(json["1"][0]["metadata"]["dicebench_failed_stage"] == "load");
  CHECK(json["2"][0]["compiled"] == false);
  CHECK(json["2"][0]["metadata"]["compilation_error"] == missing_model);
  CHECK(json["3"][0]["compiled"] == true);
  CHECK(json["3"][0]["correctness"] == false);
  CHECK(json["3"][0]["metadata"]["runtime_error"] == "RuntimeError: CUDA error");
  CHECK(json["4"][0]["compiled"] == true);
  CHECK(json["4"][0]["correctness"] == true);
  CHECK(json["4"][0]["runtime"].get<double>() == doctest::Approx(0.025));
  CHECK(json["4"][0]["metadata"]["excessive_speedup"] == true);
  CHECK(json["4"][0]["metadata"]["dicebench_flags"]["excessive_speedup"] == "40x over 10x");
  CHECK(json["4"][0]["metadata"]["dicebench_margin"] == 0.2);
  CHECK(json["4"][0]["metadata"]["dicebench_problem_traits"] == nlohmann::json::array({"constant_output"}));
  CHECK(json["5"][0]["compiled"] == true);
  CHECK(json["5"][0]["metadata"]["correctness_issue"] == "max abs diff 0.5");
  CHECK_FALSE(json["5"][0]["metadata"].contains("excessive_speedup"));
  CHECK(json["6"][0]["compiled"] == false);
  CHECK(json["6"][0]["metadata"]["compilation_error"] == "max abs diff 0.5");
}

TEST_CASE("a run summary keeps flags, margins and traits, and a summary of format 1 still reads") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const RunResults results = require_ok(load_run_results(store, flagged_run(store)));
  const std::string path = dir.file("summary.json");
  write_bytes(path, write_summary(results));
  const auto doc = nlohmann::json::parse(read_bytes(path));
  CHECK(doc["version"] == 2);
  CHECK(doc["problems"][1]["traits"] == nlohmann::json::array({"zeros_pass"}));
  CHECK(doc["problems"][2]["traits"].is_null());
  const RunResults back = require_ok(read_summary(path));
  REQUIRE(back.samples.size() == 3);
  CHECK(back.samples[0].flags == results.samples[0].flags);
  CHECK(*back.samples[0].margin == 0.93);
  CHECK(back.samples[1].problem_traits == std::optional<std::vector<std::string>>({"zeros_pass"}));
  CHECK(back.problems[1].traits_json == std::optional<std::string>(R"(["zeros_pass"])"));
  CHECK_FALSE(back.problems[2].traits_json);
  const RunReport report = compute_report(back);
  CHECK(report.total.degenerate_problems == 1);
  CHECK(*report.total.fast_p[3].value == doctest::Approx(1.0 / 3.0));  // fast_1: problem 2 is below the floor
  CHECK(report_json(report) == report_json(compute_report(results)));
  CHECK(report_json(compute_report(back, {.exclude_degenerate = true})) ==
        report_json(compute_report(results, {.exclude_degenerate = true})));

  // Format 1, as dicebench wrote it before flags: no traits, margins or flags.
  const std::string v1 = dir.file("v1.json");
  write_bytes(v1, R"({
  "format": "dicebench-run-summary", "version": 1,
  "run": {"id": 4, "created": "2026-11-01T10:00:00Z", "finished": null, "status": "finished", "model": "m",
          "suite": "kernelbench-l1", "config": {}, "dicebench_version": "0.1.0", "git_sha": "abc", "host": "h",
          "gpu": null, "driver_version": null, "cuda_version": null, "torch_version": null, "seed": 1},
  "problems": [{"problem_id": 1, "level": 1, "name": "Add", "path": "level1/1_Add.py", "content_hash": "c",
                "prompt_hash": "p"}],
  "samples": [{"run": 4, "problem_id": 1, "level": 1, "problem": "Add", "sample_index": 0, "verdict": "correct",
               "has_candidate": true, "compiled": true, "correct": true, "speedup": 2.0, "runtime_ms": 0.5,
               "runtime_mean_ms": 0.5, "runtime_std_ms": null, "runtime_min_ms": null, "runtime_max_ms": null,
               "runtime_p10_ms": 0.45, "runtime_p90_ms": 0.55, "baseline_ms": 1.0, "baseline_mean_ms": 1.0,
               "runtime_trials": 10, "custom_kernel_share": null, "compile_path": "nvrtc", "device": "cuda:0",
               "error_class": null, "error_message": null}],
  "report": {}
})");
  const RunResults old = require_ok(read_summary(v1));
  CHECK(old.run.id == 4);
  REQUIRE(old.samples.size() == 1);
  CHECK(old.samples[0].correct);
  CHECK(old.samples[0].flags.empty());
  CHECK_FALSE(old.samples[0].margin);
  CHECK_FALSE(old.samples[0].problem_traits);
  CHECK_FALSE(old.problems[0].traits_json);
  const RunReport old_report = compute_report(old);
  CHECK(*old_report.total.fast_p[3].value == 1.0);
  CHECK(old_report.total.unchecked_problems == 1);

  // A malformed traits list in a summary is refused.
  auto bad = doc;
  bad["problems"][0]["traits"] = "zeros_pass";
  write_bytes(path, bad.dump());
  CHECK(read_summary(path).error().message.find("malformed run summary") != std::string::npos);
}

TEST_CASE("kernel infilling's fields travel in JSONL, CSV and the run summary") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const auto run = planned_infill_run(store);
  const RunResults results = require_ok(load_run_results(store, run));
  std::vector<nlohmann::json> lines;
  for (const auto& line : dicebench::split(export_jsonl(results), '\n'))
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["infill_exact_match"] == true);
  CHECK(lines[1]["infill_edit_distance"] == 9);
  CHECK(lines[2]["infill_exact_match"].is_null());
  const auto rows = dicebench::split(export_csv(results), '\n');
  CHECK(rows[0].find(",infill_exact_match,infill_edit_distance") != std::string::npos);

  const std::string path = dir.file("summary.json");
  write_bytes(path, write_summary(results));
  const RunReport back = compute_report(require_ok(read_summary(path)));
  CHECK(back.total.infill_samples == 2);
  CHECK(back.total.infill_exact == 1);
  CHECK(*back.total.infill_mean_edit_distance == doctest::Approx(4.5));
}
