// Integration tests of --baseline-file (report, gate, export) and `dicebench baselines export`,
// on a database written through the results store (no worker, no torch): figures computable by
// hand, the problems a file lacks listed, and a malformed file ending in one error line.
#include "cli_runner.hpp"
#include "results/store/baseline_cache.hpp"
#include "tests/results/planned_run.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

using dicebench::test::check_one_error_line;
using dicebench::test::run_cli;
namespace results = dicebench::results;
using dicebench::Verdict;
using results::testing::level_problems;
using results::testing::planned_run;

namespace {

// Problems 1 and 2 of level 1 at 1.5 ms and 0.2 ms on "Test GPU" (written for this test).
constexpr const char* kPublished =
    R"({"level1": {"1_P1.py": {"mean": 1.5, "hardware": "Test GPU"}, "2_P2.py": {"mean": 0.2, "hardware": "Test GPU"}}})";

nlohmann::json json_of(const dicebench::test::CliResult& r) {
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

// Against our 1 ms baselines: 2x, 4x, 8x. Against the file: 3.0, 0.8, and problem 3 missing.
void timed_run(results::Store& store) {
  planned_run(store, {{1, 0, Verdict::correct, 2.0}, {2, 0, Verdict::correct, 4.0}, {3, 0, Verdict::correct, 8.0}},
              level_problems(3));
}

}  // namespace

TEST_CASE("report, gate and export take speedups from --baseline-file and list the problems it lacks") {
  results::testing::TempDir dir;
  const std::string db = dir.file("results.db");
  {
    results::Store store = results::testing::open_store(db);
    timed_run(store);
    timed_run(store);
  }
  const std::string file = dir.file("published.json");
  results::testing::write_bytes(file, kPublished);

  const nlohmann::json live = json_of(run_cli({"report", "1", "--db", db, "--json"}));
  CHECK(live["total"]["fast_p"]["1"] == doctest::Approx(1.0));
  CHECK_FALSE(live.contains("published_baselines"));

  const nlohmann::json published = json_of(run_cli({"report", "1", "--db", db, "--json", "--baseline-file", file}));
  CHECK(published["total"]["fast_p"]["1"] == doctest::Approx(1.0 / 3));  // only 3.0 beats 1
  CHECK(published["total"]["fast_p"]["0"] == doctest::Approx(2.0 / 3));  // problem 3 has no speedup
  CHECK(published["total"]["geomean_speedup"] == doctest::Approx(std::sqrt(3.0 * 0.8)));
  CHECK(published["published_baselines"]["hardware"] == "Test GPU");
  CHECK(published["published_baselines"]["covered"] == 2);
  CHECK(published["published_baselines"]["missing"][0]["file"] == "3_P3.py");

  const auto table = run_cli({"report", "1", "--db", db, "--baseline-file", file});
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("published baselines " + file +
                       " (Test GPU): 2 of 3 problems; not in the file (no speedup): 1/3 P3\n") != std::string::npos);

  const auto gate = run_cli({"gate", "--baseline", "1", "--candidate", "2", "--db", db, "--baseline-file", file});
  CHECK_MESSAGE(gate.exit_code == 0, (gate.out + gate.err));
  CHECK(gate.out.find("(Test GPU): 2 of 3 problems") != std::string::npos);

  const auto exported = run_cli({"export", "1", "--db", db, "--format", "kernelbench", "--baseline-file", file});
  const nlohmann::json kernelbench = json_of(exported);
  CHECK(kernelbench["1"][0]["metadata"]["dicebench_speedup"] == doctest::Approx(3.0));
  CHECK_FALSE(kernelbench["3"][0]["metadata"].contains("dicebench_speedup"));
  CHECK(exported.err.find("not in the file (no speedup): 1/3 P3") != std::string::npos);

  results::testing::write_bytes(dir.file("bad.json"), R"({"level1": {"1_P1.py": {"std": 1}}})");
  for (const std::string command : {"report", "export"}) {
    std::vector<std::string> args = {command, "1", "--db", db, "--baseline-file", dir.file("bad.json")};
    if (command == "export") args.insert(args.end(), {"--format", "csv"});
    check_one_error_line(run_cli(args), "level1/1_P1.py has no positive number 'mean'");
  }
  check_one_error_line(
      run_cli({"gate", "--baseline", "1", "--candidate", "2", "--db", db, "--baseline-file", dir.file("bad.json")}),
      "level1/1_P1.py has no positive number 'mean'");
}

TEST_CASE("baselines export writes the cached baselines in KernelBench's format, read back by --baseline-file") {
  results::testing::TempDir dir;
  const std::string db = dir.file("results.db");
  {
    results::Store store = results::testing::open_store(db);
    timed_run(store);
    dicebench::Timing b;
    b.median_ms = b.mean_ms = b.min_ms = b.max_ms = b.p10_ms = b.p90_ms = 4.0;
    b.trials = 100;
    results::testing::require_ok(results::put_baseline(
        store, {"content-1", "NVIDIA H200", "2.5.0", "eager/cupti_runtime/fresh_inputs_warm"}, b));
  }
  const std::string out = dir.file("ours.json");
  const auto exported = run_cli({"baselines", "export", "--device", "cuda", "--db", db, "-o", out});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.err);
  const nlohmann::json ours = nlohmann::json::parse(results::testing::read_bytes(out));
  CHECK(ours["level1"]["1_P1.py"]["mean"] == 4.0);
  CHECK(ours["level1"]["1_P1.py"]["hardware"] == "NVIDIA H200");

  const nlohmann::json report = json_of(run_cli({"report", "1", "--db", db, "--json", "--baseline-file", out}));
  CHECK(report["total"]["geomean_speedup"] == doctest::Approx(8.0));  // 4 ms / 0.5 ms
  CHECK(report["published_baselines"]["covered"] == 1);

  check_one_error_line(run_cli({"baselines", "export", "--device", "cpu", "--db", db}),
                       "no eager baselines on device 'cpu'");
}
