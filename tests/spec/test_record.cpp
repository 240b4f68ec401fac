// The evaluation record generated from core/spec/evaluation.toml, through every shape it takes: its
// JSON (`dicebench eval --json`) and back, the row the store writes and reads back, the flat export
// record and back, the evaluations table a fresh database gets, and `dicebench eval`'s text.
#include "core/spec/evaluation.hpp"
#include "core/spec/evaluation_store.hpp"
#include "core/spec/protocol.hpp"
#include "results/report/sample_record.hpp"
#include "results/store/run_results.hpp"
#include "tests/results/test_support.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>
#include <string>

using namespace dicebench;

namespace {

// An evaluation with every member set (consistent enough for the store: correct and compiled).
Evaluation full_evaluation() {
  Evaluation e;
  e.verdict = Verdict::correct;
  e.compiled = e.correct = true;
  e.device = "cuda";
  e.runtime = Timing{1.0, 1.1, 0.1, 0.9, 1.3, 0.95, 1.2, 20, "converged", 20};
  e.baseline = Timing{2.0, 2.1, 0.2, 1.9, 2.3, 1.95, 2.2, 30, "budget", 30};
  e.speedup = 2.0;
  e.speedup_mean = 1.9;
  e.max_abs_diff = 1e-6;
  e.mean_abs_diff = 1e-7;
  e.failed_trial = 1;
  e.failed_call = 2;
  e.failed_stage = "timing";
  e.error_class = "output_mismatch";
  e.error_message = "what went wrong";
  e.margin = 0.5;
  e.io_bytes = {1024, 512};
  e.memory_floor_ms = 0.01;
  e.flags = {{EvaluationFlag::borderline, "margin 0.5"}, {EvaluationFlag::excessive_speedup, "20x"}};
  e.timed_calls = {20, 3, 1, 2, 0.5, 0.1, 0.05};
  e.problem_traits = ProblemTraits{nlohmann::json::array({"zeros_pass"}), nlohmann::json::object()};
  e.fastpath_outcome = nlohmann::json{{"verdict", "crashed"}};
  e.baseline_measured = true;
  e.compile = CompileInfo{"nvrtc",
                          "every call",
                          1.5,
                          "the log",
                          nlohmann::json::array({{{"name", "ext"}, {"error", "x"}}}),
                          {{"count", 1}, {"seconds", 0.3}, {"compiles", nlohmann::json::array()}}};
  e.profile =
      DeviceProfile{0.8, 1.0, 0.2, 0.01, 0.9, 0.75, {{"relu_kernel", "kernel", true, 1.0, 0.5, "1,1,1", "256,1,1"}}};
  e.log_tail = "printed";
  e.seconds = 3.0;
  e.latency_seconds = 4.0;
  e.phases = {{"trials", 0.5}, {"timing", 1.0}};
  e.toolchain = nlohmann::json{
      {"builds", 1}, {"cache_hits", 0}, {"failures", 0}, {"queued_seconds", 0.1}, {"build_seconds", 30.0}};
  return e;
}

}  // namespace

TEST_CASE("the record's JSON is eval --json's shape and reads back to the same record") {
  const Evaluation e = full_evaluation();
  const nlohmann::json out = evaluation_json(e);
  CHECK(out["verdict"] == "correct");
  CHECK(out["device"] == "cuda");
  CHECK(out["runtime"]["median_ms"] == 1.0);
  CHECK(out["runtime"]["stop_reason"] == "converged");
  CHECK(out["io_bytes"] == nlohmann::json{{"inputs", 1024}, {"outputs", 512}});
  CHECK(out["timed_calls"]["checked"] == 3);
  CHECK(out["problem_traits"] == nlohmann::json::array({"zeros_pass"}));  // the traits alone
  CHECK(out["flags"] == nlohmann::json{{"borderline", "margin 0.5"}, {"excessive_speedup", "20x"}});
  CHECK(out["profile"]["kernels"][0]["name"] == "relu_kernel");
  // Whether the baseline was timed here travels (a Ray actor's record says so to the host's store);
  // what only the host keeps does not.
  CHECK(out["baseline_measured"] == true);
  for (const char* internal : {"traits_measured", "bandwidth_measured", "fastpath_calls"})
    CHECK_FALSE(out.contains(internal));
  auto back = evaluation_from_json(out);
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().message));
  CHECK(evaluation_json(*back) == out);
  // Absent optionals are null, and read back absent.
  const nlohmann::json empty = evaluation_json(Evaluation{});
  CHECK(empty["runtime"].is_null());
  CHECK(empty["verdict"] == "crashed");  // the record's default: nothing judged it yet
  CHECK_FALSE(evaluation_from_json(empty)->runtime.has_value());
}

TEST_CASE("JSON that is not an evaluation is an error, not an exception") {
  CHECK_FALSE(evaluation_from_json(nlohmann::json::array()).ok());
  CHECK_FALSE(evaluation_from_json(nlohmann::json{{"verdict", "almost"}}).ok());
  CHECK_FALSE(evaluation_from_json(nlohmann::json{{"flags", {{"no_such_flag", ""}}}}).ok());
  CHECK_FALSE(evaluation_from_json(nlohmann::json{{"seconds", "three"}}).ok());
  CHECK(evaluation_from_json(nlohmann::json::object()).ok());
}

TEST_CASE("the stored row holds the spec's columns and details, and the store gives it back") {
  const Evaluation e = full_evaluation();
  results::StoredEvaluation row = results::stored_evaluation(7, e);
  CHECK(row.sample == 7);
  CHECK(row.status == Verdict::correct);
  CHECK(row.runtime_ms == std::optional<double>(1.0));
  CHECK(row.baseline_mean_ms == std::optional<double>(2.1));
  CHECK(row.launch_latency_ms == std::optional<double>(0.01));
  CHECK(row.compile_path == std::optional<std::string>("nvrtc"));
  CHECK(row.runtime_trials == std::optional<std::int64_t>(20));
  CHECK(row.baseline_source == std::optional<std::string>("measured"));
  CHECK((*row.compile_records)[0].contains("error") == false);  // in compile_log already
  CHECK(row.jit_compile.has_value());
  REQUIRE(row.flags.size() == 2);
  CHECK(row.flags[0].name == "excessive_speedup");  // the vocabulary's order, as the store reads them back
  REQUIRE(row.kernels.size() == 1);

  results::testing::TempDir dir;
  results::Store store = results::testing::open_store(dir.file("results.db"));
  const auto run = results::testing::require_ok(store.create_run(results::testing::sample_run()));
  results::testing::require_ok(store.add_problems(run, {results::testing::problem(1, 1, "Add")}));
  row.sample = results::testing::require_ok(store.insert_sample(results::testing::new_sample(run, 1, 0)));
  results::testing::require_ok(store.insert_evaluation(row));
  const auto rows = results::testing::require_ok(store.evaluations(run));
  REQUIRE(rows.size() == 1);
  results::StoredEvaluation read = rows[0];
  CHECK(!read.created.empty());
  read.created.clear();
  read.kernels = results::testing::require_ok(store.kernels(row.sample));
  CHECK(results::details_json(read) == results::details_json(row));
  results::ExportSample sample;
  CHECK(results::export_record(sample, &read) == results::export_record(sample, &row));
  CHECK(read.kernels.size() == 1);
  CHECK(read.kernels[0].grid == "1,1,1");
  CHECK(read.flags == row.flags);
}

TEST_CASE("what is empty or zero in the record is left out of the details, as the spec says") {
  Evaluation e;
  e.verdict = Verdict::compile_failed;
  e.device = "cpu";
  e.error_class = "compile_failed";
  const results::StoredEvaluation row = results::stored_evaluation(1, e);
  const auto details = nlohmann::json::parse(results::details_json(row));
  CHECK(details == nlohmann::json{{"seconds", 0.0}, {"latency_seconds", 0.0}, {"phases", nlohmann::json::object()}});
  CHECK_FALSE(row.error_message.has_value());  // NULL when empty
  CHECK(row.error_class == std::optional<std::string>("compile_failed"));
  CHECK_FALSE(row.compile_path.has_value());
}

TEST_CASE("a fresh database's evaluations table has the spec's columns, in order") {
  results::testing::TempDir dir;
  const std::string path = dir.file("results.db");
  results::testing::open_store(path);
  results::Database db = results::testing::raw_open(path);
  auto stmt = db.prepare("SELECT name FROM pragma_table_info('evaluations') ORDER BY cid", "test");
  REQUIRE(stmt.ok());
  std::vector<std::string> columns;
  for (;;) {
    auto row = stmt->step("test");
    REQUIRE(row.ok());
    if (!*row) break;
    columns.push_back(stmt->column_text(0));
  }
  std::string select = results::evaluation_select_sql(results::kSchemaVersion, "e");
  std::vector<std::string> spec;
  for (size_t at = 0; at < select.size();) {
    const size_t end = std::min(select.find(", ", at), select.size());
    spec.push_back(select.substr(at + 2, end - at - 2));  // past "e."
    at = end + 2;
  }
  // The table holds the columns of later versions at the end (ALTER TABLE adds them last).
  CHECK(std::set<std::string>(columns.begin(), columns.end()) == std::set<std::string>(spec.begin(), spec.end()));
  CHECK(columns.size() == static_cast<size_t>(results::kEvaluationSelectColumns));
}

TEST_CASE("the flat record of a sample without an evaluation has null figures") {
  results::ExportSample sample;
  sample.verdict = "extraction_failed";
  const auto record = results::export_record(sample, nullptr);
  CHECK(record["verdict"] == "extraction_failed");
  CHECK(record["compiled"] == false);
  CHECK(record["device"].is_null());
  CHECK(record["runtime_ms"].is_null());
  CHECK(record["flags"] == nlohmann::ordered_json::array());
}

TEST_CASE("dicebench eval's text, line by line") {
  const std::string text = evaluation_text(full_evaluation());
  CHECK(text ==
        "verdict: correct (trial 1) (timed call 2)\n"
        "runtime: 1.0000 ms median, baseline 2.0000 ms, speedup 2.000x\n"
        "max abs diff: 1e-06\n"
        "margin: 0.5 (worst |c - r| / (atol + rtol * |r|))\n"
        "flag borderline: margin 0.5\n"
        "flag excessive_speedup: 20x\n"
        "problem traits: [\"zeros_pass\"]\n"
        "compiled: nvrtc path in 1.50 s (every call)\n"
        "JIT-compiled: 1 kernel(s) at their first launch in 0.30 s (in no call's time)\n"
        "device: 0.8000 ms busy per call, 75% in the candidate's own kernels\n"
        "host: 0.2000 ms in the call; 0.0100 ms from the harness's start to the first device work\n"
        "timed calls: 20 on fresh inputs, 3 of them checked; 2 calls placed at fresh addresses\n"
        "output_mismatch: what went wrong\n"
        "evaluated in 3.0 s on cuda\n");
  Evaluation bare;
  bare.device = "cpu";
  CHECK(evaluation_text(bare) == "verdict: crashed\nevaluated in 0.0 s on cpu\n");
}

TEST_CASE("a worker's reply objects read into the record's parts") {
  const Timing t =
      timing_from_worker({{"median_ms", 1.5}, {"trials", 12}, {"stop_reason", "budget"}, {"timer", "cuda"}});
  CHECK(t.median_ms == 1.5);
  CHECK(t.trials == 12);
  CHECK(t.stop_reason == "budget");
  const DeviceProfile p = device_profile_from_worker(
      {{"busy_ms", 0.3}, {"kernels", {{{"name", "k"}, {"kind", "memcpy"}, {"ms_per_call", 0.1}}}}});
  REQUIRE(p.kernels.size() == 1);
  CHECK(p.kernels[0].kind == "memcpy");
  CHECK(p.kernels[0].ms_per_call == 0.1);
  CHECK(compile_info_from_worker(nlohmann::json::object()).path == "none");
}

TEST_CASE("a request's JSON holds its type and every field, defaults included") {
  const nlohmann::json prepare =
      protocol::ReferencePrepare{.job = "j", .problem_source = "src", .device = "cpu", .init_seed = 3, .work_dir = "/w"}
          .to_json();
  CHECK(prepare == nlohmann::json{{"type", "reference.prepare"},
                                  {"job", "j"},
                                  {"problem_source", "src"},
                                  {"device", "cpu"},
                                  {"init_seed", 3},
                                  {"work_dir", "/w"},
                                  {"problem_name", "problem"},
                                  {"tolerance", "per_dtype"},
                                  {"model_mode", "train"}});
  const nlohmann::json next =
      protocol::TimingNext{.job = "j", .call = 4, .inputs = {{"transport", "raw_file"}}}.to_json();
  CHECK(next["mask_key"].is_null());
  CHECK(next["fresh_placement"] == false);
}
