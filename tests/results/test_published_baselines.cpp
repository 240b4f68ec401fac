// Published KernelBench baseline files: reading them (and refusing malformed ones with one line
// naming the entry), re-deriving a run's speedups and fast_p against one by hand-computable
// numbers, listing the problems a file lacks, and writing our cached baselines in that format.
#include <doctest/doctest.h>

#include <cmath>

#include "planned_run.hpp"
#include "results/report/published_baselines.hpp"
#include "results/report/report.hpp"
#include "results/store/baseline_cache.hpp"
#include "results/store/run_results.hpp"
#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

namespace {

// A file written for this test: problems 1 and 2 of level 1 (and one the runs below lack).
constexpr const char* kPublished = R"({
  "level1": {
    "1_P1.py": {"mean": 1.5, "std": 0.01, "min": 1.4, "max": 1.6, "num_trials": 100, "hardware": "Test GPU", "device": "cuda:0"},
    "2_P2.py": {"mean": 0.2, "std": 0.01, "min": 0.19, "max": 0.21, "num_trials": 100, "hardware": "Test GPU", "device": "cuda:0"},
    "99_Other.py": {"mean": 7.0, "hardware": "Test GPU"}
  }
})";

std::optional<double> fast(const LevelReport& level, double p) {
  for (const FastP& entry : level.fast_p)
    if (entry.p == p) return entry.value;
  FAIL("no fast_p entry for p = " << p);
  return std::nullopt;
}

std::string read_error(const TempDir& dir, const std::string& text) {
  write_bytes(dir.file("baselines.json"), text);
  auto read = read_published_baselines(dir.file("baselines.json"));
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().message.find('\n') == std::string::npos);
  return read.error().message;
}

}  // namespace

TEST_CASE("speedups and fast_p against a published file: published mean / candidate mean, missing problems listed") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  // planned_run times a candidate at 1 / speedup ms (median and mean) against a 1 ms baseline.
  const auto run = planned_run(store,
                               {{1, 0, Verdict::correct, 2.0},     // 0.5 ms: 1.5 / 0.5 = 3.0
                                {1, 1, Verdict::correct, 0.5},     // 2 ms: 1.5 / 2 = 0.75
                                {2, 0, Verdict::correct, 4.0},     // 0.25 ms: 0.2 / 0.25 = 0.8
                                {2, 1, Verdict::output_mismatch},  // no speedup either way
                                {3, 0, Verdict::correct, 8.0}},    // not in the file: no speedup
                               level_problems(3));
  RunResults results = require_ok(load_run_results(store, run));
  const RunReport live = compute_report(results);
  CHECK(fast(live.total, 1.0) == doctest::Approx(3.0 / 5));  // 2, 4 and 8 against our baseline

  write_bytes(dir.file("published.json"), kPublished);
  const PublishedBaselines published = require_ok(read_published_baselines(dir.file("published.json")));
  CHECK(published.hardware == "Test GPU");
  const PublishedCoverage coverage = apply_published_baselines(results, published);
  REQUIRE(coverage.covered.size() == 2);
  REQUIRE(coverage.missing.size() == 1);
  CHECK(coverage.missing[0].problem_id == 3);
  CHECK(results.samples[0].speedup == doctest::Approx(3.0));
  CHECK(results.samples[0].baseline_ms == doctest::Approx(1.5));
  CHECK(results.samples[1].speedup == doctest::Approx(0.75));
  CHECK(results.samples[2].speedup == doctest::Approx(0.8));
  CHECK_FALSE(results.samples[3].speedup);
  CHECK_FALSE(results.samples[4].speedup);
  CHECK_FALSE(results.samples[4].baseline_ms);

  const RunReport report = compute_report(results);
  CHECK(fast(report.total, 0.0) == doctest::Approx(3.0 / 5));
  CHECK(fast(report.total, 1.0) == doctest::Approx(1.0 / 5));
  CHECK(fast(report.total, 0.8) == doctest::Approx(1.0 / 5));  // 0.8 is not strictly above 0.8
  REQUIRE(report.total.geomean_speedup);
  CHECK(*report.total.geomean_speedup == doctest::Approx(std::cbrt(3.0 * 0.75 * 0.8)));
  CHECK(report.total.speedup_samples == 3);
  CHECK(report.total.correct == 4);  // correctness is the run's own

  CHECK(format_coverage(coverage) == "published baselines " + dir.file("published.json") +
                                         " (Test GPU): 2 of 3 problems; not in the file (no speedup): 1/3 P3\n");
  const nlohmann::json json = coverage_json(coverage);
  CHECK(json["covered"] == 2);
  CHECK(json["missing"][0]["file"] == "3_P3.py");
  REQUIRE(json["covered_problems"].size() == 2);
  CHECK(json["covered_problems"][1]["file"] == "2_P2.py");
}

TEST_CASE("a malformed baseline file is one error line naming the entry") {
  TempDir dir;
  CHECK(read_error(dir, "not json").find("not a JSON object of levels") != std::string::npos);
  CHECK(read_error(dir, R"({"lvl1": {}})").find("key 'lvl1' is not a level") != std::string::npos);
  CHECK(read_error(dir, R"({"level1": []})").find("level1 is not an object") != std::string::npos);
  CHECK(read_error(dir, R"({"level1": {"1_A.py": {"std": 1}}})").find("level1/1_A.py has no positive number 'mean'") !=
        std::string::npos);
  CHECK(read_error(dir, R"({"level1": {"1_A.py": {"mean": -1}}})").find("level1/1_A.py") != std::string::npos);
  auto missing = read_published_baselines(dir.file("absent.json"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("absent.json") != std::string::npos);
}

TEST_CASE("our cached baselines export in KernelBench's format and read back") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  planned_run(store, {{1, 0, Verdict::correct, 2.0}}, level_problems(3));  // problems content-1..3
  const auto put = [&](const std::string& hash, const std::string& device, const std::string& method, double mean) {
    Timing b;
    b.median_ms = mean * 0.9;
    b.mean_ms = mean;
    b.std_ms = 0.1;
    b.min_ms = mean / 2;
    b.max_ms = mean * 2;
    b.p10_ms = b.p90_ms = mean;
    b.trials = 50;
    require_ok(put_baseline(store, {hash, device, "2.5.0", method}, b));
  };
  put("content-1", "NVIDIA H200", "eager/cupti_runtime/fresh_inputs_warm", 3.0);
  put("content-2", "NVIDIA H200", "compile/cupti_runtime/fresh_inputs_warm", 9.0);  // another method
  put("content-3", "cpu", "eager/cpu_perf_counter/fresh_inputs_warm", 5.0);         // another device

  const nlohmann::json gpu = require_ok(export_published_baselines(store, "cuda", "eager"));
  REQUIRE(gpu.size() == 1);
  REQUIRE(gpu["level1"].size() == 1);
  const nlohmann::json& entry = gpu["level1"]["1_P1.py"];
  CHECK(entry["mean"] == 3.0);
  CHECK(entry["num_trials"] == 50);
  CHECK(entry["hardware"] == "NVIDIA H200");
  CHECK(entry["device"] == "cuda");
  CHECK(require_ok(export_published_baselines(store, "cuda", "compile"))["level1"].contains("2_P2.py"));
  CHECK(require_ok(export_published_baselines(store, "cpu", "eager"))["level1"].contains("3_P3.py"));

  // Read back, it re-derives speedups as a published file does.
  write_bytes(dir.file("ours.json"), gpu.dump());
  const PublishedBaselines ours = require_ok(read_published_baselines(dir.file("ours.json")));
  CHECK(ours.hardware == "NVIDIA H200");
  CHECK(ours.timings.at(1).at("1_P1.py").mean_ms == 3.0);

  put("content-3", "NVIDIA A100", "eager/cupti_runtime/fresh_inputs_warm", 4.0);
  auto ambiguous = export_published_baselines(store, "cuda", "eager");
  REQUIRE_FALSE(ambiguous.ok());
  CHECK(ambiguous.error().message.find("several devices ('NVIDIA A100', 'NVIDIA H200'); give one with --device NAME") !=
        std::string::npos);
  const nlohmann::json a100 = require_ok(export_published_baselines(store, "NVIDIA A100", "eager"));
  CHECK(a100["level1"].size() == 1);
  CHECK(a100["level1"].contains("3_P3.py"));
  auto none = export_published_baselines(store, "NVIDIA B200", "eager");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("no eager baselines on device 'NVIDIA B200'") != std::string::npos);
}
