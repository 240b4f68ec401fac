// Integration tests of candidate evaluation on the CPU through the real worker processes
// (`dicebench eval` and `dicebench run` without --generate-only): every verdict, timeouts and
// crashes charged to the candidate alone, the problem's names in the candidate's namespace, and the
// candidate unable to reach the results or the reference's worker.
#include "cli_runner.hpp"

#include "core/base/text.hpp"
#include "core/base/whole_file.hpp"
#include "results/store/query.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace dicebench;
using test::run_cli;
namespace fs = std::filesystem;

namespace {

const std::string kEval = std::string(DICEBENCH_TEST_DATA_DIR) + "/eval/";
const std::string kKernelBench = std::string(DICEBENCH_TEST_DATA_DIR) + "/kernelbench";
// Marks the worker processes this test's commands start (see worker_processes()).
const std::string kTag = "DICEBENCH_TEST_TAG=" + std::to_string(getpid());

// Several candidates in one `dicebench eval` (one reference worker, candidates started ahead):
// their evaluations in order.
std::vector<nlohmann::json> evaluate_all(const std::vector<std::string>& candidates,
                                         std::vector<std::string> extra = {},
                                         const std::string& problem = "problem_linear_relu.py") {
  std::vector<std::string> args = {"eval", "--problem", kEval + problem, "--json", "--device", "cpu"};
  for (const auto& candidate : candidates) args.insert(args.end(), {"--candidate", kEval + candidate});
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args, {kTag});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto out = nlohmann::json::parse(r.out);
  if (candidates.size() == 1) return {out};
  REQUIRE(out.is_array());
  REQUIRE(out.size() == candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) CHECK(out[i]["candidate"] == kEval + candidates[i]);
  return {out.begin(), out.end()};
}

nlohmann::json evaluate(const std::string& candidate, std::vector<std::string> extra = {},
                        const std::string& problem = "problem_linear_relu.py") {
  return evaluate_all({candidate}, std::move(extra), problem).front();
}

// Worker processes still alive that were started by this test process's commands: they carry
// DICEBENCH_TEST_TAG=<our pid> in their environment (other tests may run workers at the same time).

int worker_processes() {
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    // A process may end between listing and reading: nothing to read, not counted.
    const std::string cmdline = read_whole_file(entry.path() / "cmdline").value_or("");
    if (cmdline.find("dicebench-worker") == std::string::npos) continue;
    const std::string environ = read_whole_file(entry.path() / "environ").value_or("");
    if (environ.find(kTag + '\0') != std::string::npos) ++count;
  }
  return count;
}

// Whether every such worker has ended within 5 s: the host reaps the sandbox around a worker, and a
// worker killed with it can take a moment to go (under load) after the command returns.
bool workers_ended() {
  for (int tries = 0; tries < 50 && worker_processes() > 0; ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return worker_processes() == 0;
}

}  // namespace

TEST_CASE("a correct candidate is correct and timed against a live baseline") {
  const auto e = evaluate("correct.py");
  CHECK(e["verdict"] == "correct");
  CHECK(e["compiled"] == true);
  CHECK(e["correct"] == true);
  CHECK(e["runtime"]["median_ms"].get<double>() > 0);
  CHECK(e["baseline"]["median_ms"].get<double>() > 0);
  CHECK(e["speedup"].get<double>() ==
        doctest::Approx(e["baseline"]["median_ms"].get<double>() / e["runtime"]["median_ms"].get<double>()));
  CHECK(e["max_abs_diff"].get<double>() < 1e-5);
  CHECK(e["margin"].get<double>() <= 1.0);
  CHECK(e["flags"].empty());
  CHECK(e["problem_traits"] == nlohmann::json::array());
  CHECK(e["failed_stage"] == "");
  // Where the timing loop's time went: the reference's batches and comparisons lie inside it.
  const auto& loop = e["timed_calls"];
  CHECK(loop["batches"].get<int>() >= 1);
  CHECK(loop["batches_s"].get<double>() > 0);
  CHECK(loop["compares_s"].get<double>() > 0);  // every loop has checked calls
  CHECK(loop["loop_s"].get<double>() > loop["batches_s"].get<double>() + loop["compares_s"].get<double>());
  CHECK(loop["loop_s"].get<double>() <= e["phases"]["timing"].get<double>());
}

TEST_CASE("tolerance is per dtype by default, or uniform, and the old name compat is uniform") {
  const auto strict = evaluate("off_by_1e3.py");
  CHECK(strict["verdict"] == "output_mismatch");
  CHECK(strict["max_abs_diff"].get<double>() == doctest::Approx(1e-3).epsilon(0.01));
  CHECK(strict["failed_trial"] == 0);
  const auto uniform = evaluate("off_by_1e3.py", {"--tolerance", "uniform"});
  CHECK(uniform["verdict"] == "correct");
  const auto compat = evaluate("off_by_1e3.py", {"--tolerance", "compat"});
  CHECK(compat["verdict"] == "correct");
}

TEST_CASE("shape and dtype mismatches and NaN outputs have their own verdicts") {
  const auto e = evaluate_all({"wrong_shape.py", "wrong_dtype.py", "nan_output.py"});
  CHECK(e[0]["verdict"] == "shape_mismatch");
  CHECK(e[1]["verdict"] == "dtype_mismatch");
  CHECK(e[2]["verdict"] == "output_mismatch");
}

TEST_CASE("compile and runtime failures are told apart") {
  const auto e = evaluate_all({"syntax_error.py", "raises.py"});
  const auto& syntax = e[0];
  CHECK(syntax["verdict"] == "compile_failed");
  CHECK(syntax["compiled"] == false);
  const auto& raises = e[1];
  CHECK(raises["verdict"] == "runtime_error");
  CHECK(raises["compiled"] == true);
  CHECK(raises["error_message"].get<std::string>().find("this kernel is not finished") != std::string::npos);
}

TEST_CASE("a crashing or hanging candidate is charged alone and leaves no process behind") {
  const auto e = evaluate_all({"aborts.py", "hangs.py"}, {"--timeout", "4"});
  const auto& crashed = e[0];
  CHECK(crashed["verdict"] == "crashed");
  CHECK(crashed["error_message"].get<std::string>().find("SIGABRT") != std::string::npos);
  const auto& hung = e[1];
  CHECK(hung["verdict"] == "timeout");
  CHECK(hung["seconds"].get<double>() < 30);
  CHECK(workers_ended());
}

TEST_CASE("mutating inputs cannot change the verdict and cached or lazy outputs are caught") {
  const auto e = evaluate_all({"mutates_inputs.py", "cached_output.py", "lazy_after_timing.py"});
  CHECK(e[0]["verdict"] == "correct");
  const auto& cached = e[1];
  CHECK(cached["verdict"] == "output_mismatch");
  CHECK(cached["failed_trial"] == 1);
  // Wrong from its ninth call on: caught by a checked timed call, or by the call after timing.
  const auto& lazy = e[2];
  CHECK(lazy["verdict"] == "output_mismatch");
  const std::string message = lazy["error_message"];
  CHECK((message.find("timed call") != std::string::npos || message.find("after timing started") != std::string::npos));
}

TEST_CASE("timed calls get fresh inputs: answers cached on an input never pass timing") {
  const auto e = evaluate_all({"content_keyed_cache.py", "shape_keyed_cache.py"});
  // Keyed on the pointer plus a sample of the contents, or on the input object: it never hits, so
  // it computes honestly every call and is correct.
  const auto& honest = e[0];
  CHECK(honest["verdict"] == "correct");
  const std::string log = honest["log_tail"];
  CHECK(log.find("cache hits: 0") != std::string::npos);
  CHECK(log.find("cache hits: 1") == std::string::npos);
  CHECK(honest["timed_calls"]["calls"].get<int>() >= 23);  // 3 warm-up calls, at least 10 timed, each after a warm call
  // Every timed call follows a warm call, unless the trials' running median reached 5 ms (the
  // timing loop's WARM_CALL_MAX_MS), which only a loaded machine makes of this call: a CI run saw
  // 92 warm calls for 100 trials at a median of 3.25 ms (0.08 ms unloaded).
  if (honest["runtime"]["max_ms"].get<double>() < 5.0)
    CHECK(honest["runtime"]["warm_calls"] == honest["runtime"]["trials"]);
  else
    CHECK(honest["runtime"]["warm_calls"].get<int>() >= 1);
  CHECK(honest["runtime"]["warm_calls"].get<int>() <= honest["runtime"]["trials"].get<int>());
  CHECK(honest["timed_calls"]["batches"].get<int>() >= 1);
  CHECK(honest["timed_calls"]["batches"].get<int>() < honest["timed_calls"]["calls"].get<int>());
  CHECK(honest["timed_calls"]["checked"].get<int>() >= 3);
  CHECK(honest["timed_calls"]["checked"].get<int>() * 10 >= honest["timed_calls"]["calls"].get<int>());
  // Stale answers from a cache that hits once the correctness trials are over: a checked timed call.
  const auto& stale = e[1];
  CHECK(stale["verdict"] == "output_mismatch");
  CHECK(stale["failed_stage"] == "timing");
  REQUIRE(stale["failed_call"].is_number());
  CHECK(stale["error_message"].get<std::string>().rfind(fmt::format("timed call {}:", stale["failed_call"].get<int>()),
                                                        0) == 0);
}

TEST_CASE("a patched torch gets no control between a call's inputs and its outputs, nor a patched clock") {
  const auto e = evaluate_all({"correct.py", "deferred_to_harness.py", "slows_the_clock.py", "precomputes_in_gap.py",
                               "profiles_the_harness.py"});
  // Its forward returns an unwritten tensor and computes it the next time the harness synchronizes,
  // detaches, clones, copies or saves a tensor: the harness reads outputs with none of those, so the
  // first trial sees what the call returned (before, it passed, timed at 0.032 ms against 0.082).
  const auto& deferred = e[1];
  CHECK(deferred["verdict"] == "output_mismatch");
  CHECK(deferred["failed_stage"] == "trials");
  CHECK(deferred["failed_trial"] == 0);
  // time.perf_counter patched to run a thousand times slow (before, its calls timed about 0.0001 ms
  // against about 0.08 ms for the same work, and it passed with a speedup of 350).
  const auto& slow_clock = e[2];
  REQUIRE(slow_clock["verdict"] == "correct");
  // Against the honest call's fastest time, which load does not inflate (a loaded CI run timed the
  // honest median at 3.25 ms, 40 times its usual, and the patched clock's at 0.24 ms: honest work).
  const double honest = e[0]["runtime"]["min_ms"].get<double>();
  CHECK(slow_clock["runtime"]["median_ms"].get<double>() > honest / 10);
  CHECK(slow_clock["flags"].empty());
  // It computes each call's answer while the inputs arrive, from a patched torch.load and
  // torch.set_float32_matmul_precision: the harness receives inputs and applies its numerics with
  // neither (before, 46 of the calls in its log were answered so, timed at 0.019 ms against 0.083).
  const auto& gap = e[3];
  CHECK(gap["verdict"] == "correct");
  CHECK(gap["log_tail"].get<std::string>().find("work done before the call") == std::string::npos);
  // Its sys.setprofile hook does the work when the harness calls its own output checks (before,
  // correct at 0.032 ms against 0.084): the harness removes hooks as the call's last step.
  const auto& hooked = e[4];
  CHECK(hooked["verdict"] == "output_mismatch");
  CHECK(hooked["failed_trial"] == 0);
}

TEST_CASE("a tensor subclass is a runtime error naming its type, no ModelNew is not compiled, endless timing is cut") {
  const auto e = evaluate_all({"tensor_subclass.py", "no_modelnew.py", "asks_for_more_calls.py"});
  const auto& lazy = e[0];
  CHECK(lazy["verdict"] == "runtime_error");
  CHECK(lazy["failed_stage"] == "trials");
  CHECK(lazy["error_message"].get<std::string>().find("DeferredResult") != std::string::npos);
  // It did not load: not compiled, as KernelBench counts it.
  const auto& missing = e[1];
  CHECK(missing["verdict"] == "runtime_error");
  CHECK(missing["compiled"] == false);
  CHECK(missing["failed_stage"] == "load");
  // Asking for more calls than its loop may make breaks the protocol: the worker is ended.
  const auto& endless = e[2];
  CHECK(endless["verdict"] == "crashed");
  CHECK(endless["failed_stage"] == "timing");
  CHECK(endless["error_message"].get<std::string>().find("candidate.call_done") != std::string::npos);
  CHECK(endless["timed_calls"]["calls"].get<int>() <= 3 + 2 * 100);  // warm-up, then 100 trials with their warm calls
}

TEST_CASE("Triton candidates run under Triton's interpreter on the CPU") {
  const auto e =
      evaluate_all({"triton_relu.py", "triton_wrong.py", "triton_wrong_shape.py", "triton_kernel_raises.py"});
  CHECK_MESSAGE(e[0]["verdict"] == "correct", e[0]["error_message"]);
  CHECK(e[0]["runtime"]["median_ms"].get<double>() > 0);
  CHECK(e[1]["verdict"] == "output_mismatch");
  CHECK_MESSAGE(e[2]["verdict"] == "shape_mismatch", e[2].dump());
  CHECK_MESSAGE(e[3]["verdict"] == "runtime_error", e[3].dump());
  CHECK(e[3]["error_message"].get<std::string>().find("arange") != std::string::npos);
}

TEST_CASE("a Triton row reduction, a tl.dot matmul and an autotuned kernel are correct under the interpreter") {
  // The autotuner times its configs on the CPU there (harness/worker/python/dicebench_harness/triton_interpreter.py);
  // without that it asked for a GPU driver ("0 active drivers").
  const std::vector<std::string> short_timing = {"--set", "eval.timing_budget_s=0.5"};
  const auto autotuned = evaluate("triton_autotuned.py", short_timing);
  CHECK_MESSAGE(autotuned["verdict"] == "correct", autotuned.dump());
  const auto row_sum = evaluate("triton_row_sum.py", short_timing, "../kernelbench/level1/10_RowSum.py");
  CHECK_MESSAGE(row_sum["verdict"] == "correct", row_sum.dump());
  const auto matmul = evaluate("triton_matmul.py", short_timing, "problem_matmul.py");
  CHECK_MESSAGE(matmul["verdict"] == "correct", matmul.dump());
}

TEST_CASE("a candidate sees the names its problem's source defines, as KernelBench runs both in one namespace") {
  // class ModelNew(Model) without a Model of its own: the problem's (before, a NameError at load).
  const auto subclass = evaluate("subclasses_problem_model.py");
  CHECK_MESSAGE(subclass["verdict"] == "correct", subclass.dump());
  CHECK(subclass["flags"].empty());
  // The problem's module-level sizes and constant, and its get_inputs; then a Model of the
  // candidate's own over the problem's (with the problem's, Model() would raise).
  const auto e = evaluate_all({"uses_problem_names.py", "defines_its_own_model.py"}, {}, "problem_module_names.py");
  CHECK_MESSAGE(e[0]["verdict"] == "correct", e[0].dump());
  CHECK_MESSAGE(e[1]["verdict"] == "correct", e[1].dump());
}

TEST_CASE("with the problem's names, a candidate still reaches nothing of the reference's worker") {
  // It looks for a built reference in its process and remakes inputs with the problem's get_inputs
  // under seeds it guesses: the reference and the inputs' seeds live in the reference's worker.
  const auto e = evaluate("guesses_reference_inputs.py");
  CHECK_MESSAGE(e["verdict"] == "output_mismatch", e.dump());
  CHECK(e["failed_stage"] == "trials");
  CHECK(e["failed_trial"] == 0);
  const std::string log = e["log_tail"];
  CHECK(log.find("reference objects found: 0; problem modules found: 0") != std::string::npos);
  CHECK(log.find("no guessed seed remakes the inputs") != std::string::npos);
  CHECK(log.find("guessed the inputs' seed") == std::string::npos);
}

TEST_CASE("returning the input is flagged, and a problem whose output is its input has that trait") {
  const auto same = evaluate("returns_input.py", {}, "problem_relu_of_rand.py");
  CHECK(same["verdict"] == "correct");
  CHECK(same["flags"].contains("output_aliases_input"));
  CHECK(same["problem_traits"] == nlohmann::json::array({"output_equals_input"}));
}

TEST_CASE("a memory floor and a speedup bound flag a correct candidate, and bad values are one error line") {
  // 1 kB/s: no call moves its inputs and outputs that fast.
  const auto flagged =
      evaluate("correct.py", {"--set", "eval.bandwidth_gbps=0.000001", "--set", "eval.speedup_bound=0.000001"});
  CHECK(flagged["verdict"] == "correct");
  CHECK(flagged["flags"].contains("below_memory_floor"));
  CHECK(flagged["flags"].contains("excessive_speedup"));
  CHECK(flagged["memory_floor_ms"].get<double>() > flagged["runtime"]["median_ms"].get<double>());
  CHECK(flagged["io_bytes"]["inputs"] == 16 * 32 * 4);
  CHECK(flagged["io_bytes"]["outputs"] == 16 * 32 * 4);
  for (const std::string bad : {"eval.speedup_bound=fast", "eval.bandwidth_gbps=-3", "eval.confirm_fastpath=maybe"}) {
    const auto r = run_cli({"eval", "--problem", kEval + "problem_linear_relu.py", "--candidate", kEval + "correct.py",
                            "--device", "cpu", "--set", bad});
    test::check_one_error_line(r, bad.substr(0, bad.find('=')));
  }
  // A setting nothing reads is refused, not ignored: a typo in [eval], a plugin's setting without its
  // suite, a key the suite does not read.
  const std::vector<std::pair<std::vector<std::string>, std::string>> unread = {
      {{"--set", "eval.speedup_bund=3"}, "unknown setting 'eval.speedup_bund'"},
      {{"--set", "kernelbench.backend=triton"},
       "setting 'kernelbench.backend' is for the kernelbench plugin, which this evaluation "
       "does not use (give --suite)"},
      {{"--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench, "--set", "kernelbench.bakend=triton"},
       "setting 'kernelbench.bakend' is not one the kernelbench plugin reads (did you mean 'kernelbench.backend'"}};
  for (const auto& [extra, message] : unread) {
    std::vector<std::string> args = {
        "eval", "--problem", kEval + "problem_linear_relu.py", "--candidate", kEval + "correct.py", "--device", "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    test::check_one_error_line(run_cli(args), message);
  }
}

TEST_CASE("a candidate that is slow to load holds up none of the candidates behind it") {
  const fs::path tmp = fs::temp_directory_path() / ("dicebench-eval-order-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "replay");
  // Problem 1's candidate takes 15 s to load (its module sleeps); 2's and 10's load at once.
  {
    std::ofstream(tmp / "replay/level_1_problem_1_sample_0_kernel.py")
        << "import time\ntime.sleep(15)\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x, "
           "y):\n        return x + y\n";
  }
  {
    std::ofstream(tmp / "replay/level_1_problem_2_sample_0_kernel.py")
        << "import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return "
           "torch.relu(x)\n";
  }
  {
    std::ofstream(tmp / "replay/level_1_problem_10_sample_0_kernel.py")
        << "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return "
           "x.sum(dim=1)\n";
  }
  const std::string db = (tmp / "results.db").string();
  const auto r = run_cli({"run", "--model", "replay:" + (tmp / "replay").string(), "--suite", "kernelbench-l1",
                          "--kernelbench-root", kKernelBench, "--device", "cpu", "--db", db});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // Stored in the order evaluated: the slow one last, though it comes first.
  auto order = results::run_query(db,
                                  "select s.problem_id, e.status from evaluations e join samples s on s.id = e.sample "
                                  "order by e.created, s.problem_id");
  REQUIRE(order.ok());
  REQUIRE(order->rows.size() == 3);
  CHECK(std::get<std::int64_t>(order->rows[2][0]) == 1);
  CHECK(std::get<std::string>(order->rows[2][1]) == "correct");
  fs::remove_all(tmp);
}

TEST_CASE("run evaluates every stored sample on the CPU and report reads the verdicts") {
  const fs::path tmp = fs::temp_directory_path() / ("dicebench-eval-run-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "replay");
  const auto copy = [&](const std::string& from, const std::string& to) {
    fs::copy_file(kEval + from, tmp / "replay" / to);
  };
  // Problem 1 adds two tensors, 2 squares a ReLU, 10 sums rows: one right, one wrong, one without code.
  {
    std::ofstream(tmp / "replay/level_1_problem_1_sample_0_kernel.py")
        << "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x, y):\n        return x + y\n";
  }
  {
    std::ofstream(tmp / "replay/level_1_problem_2_sample_0_kernel.py")
        << "import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return "
           "torch.relu(x)\n";
  }
  { std::ofstream(tmp / "replay/level_1_problem_10_sample_0.txt") << "I would rather not."; }
  (void)copy;
  const std::string db = (tmp / "results.db").string();
  const auto r = run_cli({"run", "--model", "replay:" + (tmp / "replay").string(), "--suite", "kernelbench-l1",
                          "--kernelbench-root", kKernelBench, "--device", "cpu", "--db", db});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto q = results::run_query(
      db, "select s.problem_id, e.status from samples s join evaluations e on e.sample = s.id order by s.problem_id");
  REQUIRE(q.ok());
  REQUIRE(q->rows.size() == 3);
  CHECK(std::get<std::string>(q->rows[0][1]) == "correct");
  CHECK(std::get<std::string>(q->rows[1][1]) == "output_mismatch");
  CHECK(std::get<std::string>(q->rows[2][1]) == "extraction_failed");
  auto status = results::run_query(db, "select status from runs");
  REQUIRE(status.ok());
  CHECK(std::get<std::string>(status->rows[0][0]) == "finished");
  const auto report = run_cli({"report", "1", "--db", db, "--json"});
  REQUIRE(report.exit_code == 0);
  const auto json = nlohmann::json::parse(report.out);
  CHECK(json.dump().find("\"correct_rate\"") != std::string::npos);

  // The baseline timed in run 1 is cached (by problem hash, device, torch and timer) and reused.
  auto cached = results::run_query(db, "select count(*), min(device_name), min(method) from baselines");
  REQUIRE(cached.ok());
  CHECK(std::get<std::int64_t>(cached->rows[0][0]) == 1);
  CHECK(std::get<std::string>(cached->rows[0][1]) == "cpu");
  CHECK(std::get<std::string>(cached->rows[0][2]) == "eager/cpu_perf_counter/fresh_inputs_warm");
  // So are the problems' traits (judged once per problem, device and tolerance), and each problem of
  // the run records its own: none of these three is degenerate.
  auto traits = results::run_query(db, "select count(*), min(traits), min(tolerance) from problem_traits");
  REQUIRE(traits.ok());
  CHECK(std::get<std::int64_t>(traits->rows[0][0]) == 2);  // problems 1 and 2; 10 has no candidate
  CHECK(std::get<std::string>(traits->rows[0][1]) == "[]");
  CHECK(std::get<std::string>(traits->rows[0][2]) == "per_dtype");
  auto recorded = results::run_query(db, "select problem_id, traits from problems where run = 1 order by problem_id");
  REQUIRE(recorded.ok());
  REQUIRE(recorded->rows.size() == 3);
  CHECK(std::get<std::string>(recorded->rows[0][1]) == "[]");
  CHECK(std::get<std::string>(recorded->rows[1][1]) == "[]");
  CHECK(std::holds_alternative<std::monostate>(recorded->rows[2][1]));  // not checked: nothing to evaluate
  const auto again = run_cli({"run", "--model", "replay:" + (tmp / "replay").string(), "--suite", "kernelbench-l1",
                              "--kernelbench-root", kKernelBench, "--problems", "1", "--device", "cpu", "--db", db});
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  auto sources = results::run_query(db,
                                    "select json_extract(e.details, '$.baseline_source') from evaluations e "
                                    "join samples s on s.id = e.sample where s.problem_id = 1 order by s.run");
  REQUIRE(sources.ok());
  REQUIRE(sources->rows.size() == 2);
  CHECK(std::get<std::string>(sources->rows[0][0]) == "measured");
  CHECK(std::get<std::string>(sources->rows[1][0]) == "cache");
  auto paths =
      results::run_query(db,
                         "select compile_path, compile_reason from evaluations e join samples s on s.id = e.sample "
                         "where s.run = 1 and e.status = 'correct'");
  REQUIRE(paths.ok());
  REQUIRE(paths->rows.size() == 1);
  CHECK(std::get<std::string>(paths->rows[0][0]) == "none");  // no load_inline call

  // Two CPU workers evaluate the same samples in parallel, with the same verdicts.
  const auto parallel =
      run_cli({"run", "--model", "replay:" + (tmp / "replay").string(), "--suite", "kernelbench-l1",
               "--kernelbench-root", kKernelBench, "--device", "cpu", "--db", db, "--set", "eval.cpu_workers=2"});
  REQUIRE_MESSAGE(parallel.exit_code == 0, parallel.err);
  CHECK(parallel.out.find("(2 workers)") != std::string::npos);
  auto verdicts =
      results::run_query(db,
                         "select s.problem_id, e.status from samples s join evaluations e on e.sample = s.id "
                         "where s.run = 3 order by s.problem_id");
  REQUIRE(verdicts.ok());
  REQUIRE(verdicts->rows.size() == 3);
  for (size_t i = 0; i < 3; ++i)
    CHECK(std::get<std::string>(verdicts->rows[i][1]) == std::get<std::string>(q->rows[i][1]));

  // GPUs that are not there are refused before anything is stored.
  const auto no_gpu = run_cli({"run", "--model", "replay:" + (tmp / "replay").string(), "--suite", "kernelbench-l1",
                               "--kernelbench-root", kKernelBench, "--device", "cuda", "--gpus", "7", "--db", db});
  CHECK(no_gpu.exit_code != 0);
  CHECK(no_gpu.err.find("eval.gpus names GPU '7'") != std::string::npos);
  // Nor are GPUs asked for quietly dropped on the CPU.
  test::check_one_error_line(
      run_cli({"run", "--model", "replay:" + (tmp / "replay").string(), "--suite", "kernelbench-l1",
               "--kernelbench-root", kKernelBench, "--device", "cpu", "--gpus", "0", "--db", db}),
      "eval.gpus names GPUs ('0'), but this evaluation runs on the CPU");
  auto runs = results::run_query(db, "select count(*) from runs");
  REQUIRE(runs.ok());
  CHECK(std::get<std::int64_t>(runs->rows[0][0]) == 3);
  fs::remove_all(tmp);
}

TEST_CASE("a run's CPU workers share one baseline per problem, timed once") {
  const fs::path tmp = fs::temp_directory_path() / ("dicebench-one-baseline-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "replay");
  // Four right answers to one problem: both workers need its baseline at once.
  for (int sample = 0; sample < 4; ++sample)
    fs::copy_file(std::string(DICEBENCH_TEST_DATA_DIR) + "/replay/quickstart/level_1_problem_1_sample_0_kernel.py",
                  tmp / "replay" / fmt::format("level_1_problem_1_sample_{}_kernel.py", sample));
  const std::string db = (tmp / "results.db").string();
  const auto r = run_cli(
      {"run", "--model", "replay:" + (tmp / "replay").string(), "--suite", "kernelbench-l1", "--kernelbench-root",
       kKernelBench, "--device", "cpu", "--db", db, "--set", "eval.cpu_workers=2", "--set", "eval.timing_budget_s=0.5"},
      {kTag});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto baselines = results::run_query(
      db, "select count(*), count(distinct baseline_ms) from sample_results where verdict = 'correct'");
  REQUIRE(baselines.ok());
  CHECK(std::get<std::int64_t>(baselines->rows[0][0]) == 4);
  CHECK(std::get<std::int64_t>(baselines->rows[0][1]) == 1);
  fs::remove_all(tmp);
}

TEST_CASE("the README's first command runs the main job end to end from the checkout alone") {
  const fs::path tmp = fs::temp_directory_path() / ("dicebench-quickstart-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const std::string db = (tmp / "results.db").string();
  // As README.md gives it (tools/dicebench is this build's dicebench), on the CPU.
  const auto r = run_cli({"run", "--model", "replay:" + std::string(DICEBENCH_TEST_DATA_DIR) + "/replay/quickstart",
                          "--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench, "--samples", "2", "--set",
                          "kernelbench.backend=triton", "--device", "cpu", "--db", db},
                         {kTag});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto verdicts = results::run_query(
      db, "select problem_id, sample_index, verdict from sample_results order by problem_id, sample_index");
  REQUIRE(verdicts.ok());
  std::vector<std::string> seen;
  for (const auto& row : verdicts->rows)
    seen.push_back(fmt::format("{}/{} {}", std::get<std::int64_t>(row[0]), std::get<std::int64_t>(row[1]),
                               std::get<std::string>(row[2])));
  CHECK(seen == std::vector<std::string>{"1/0 correct", "1/1 output_mismatch", "2/0 correct", "2/1 output_mismatch",
                                         "10/0 shape_mismatch", "10/1 extraction_failed"});
  // The stale cache fails a checked timed call, after passing every correctness trial.
  CHECK(results::run_query(db,
                           "select 1 from evaluations e join samples s on s.id = e.sample where s.problem_id = 1 "
                           "and s.sample_index = 1 and e.error_message like 'timed call %'")
            ->rows.size() == 1);
  // Its candidates write the kernels the prompt asked for: nothing is flagged.
  CHECK(results::run_query(db, "select flag from evaluation_flags")->rows.empty());
  // It ends with the run's report.
  CHECK(r.out.find("fast_") != std::string::npos);
  CHECK(r.out.find("next: dicebench show 1") != std::string::npos);
  fs::remove_all(tmp);
}

TEST_CASE("a candidate that rewrites its worker's replies is crashed, and the candidates after it are judged") {
  // Its code runs in the worker, so it can send any JSON: mistyped or missing fields are a
  // protocol breach charged to it, never an error that ends the evaluation (or a run, every resume).
  const auto e = evaluate_all({"rewrites_reply_types.py", "rewrites_reply_fields.py", "correct.py"});
  for (int i : {0, 1}) {
    CHECK_MESSAGE(e[i]["verdict"] == "crashed", e[i].dump());
    CHECK(e[i]["error_message"].get<std::string>().find("broke the protocol") != std::string::npos);
  }
  CHECK(e[2]["verdict"] == "correct");
  CHECK(workers_ended());
}

TEST_CASE(
    "a candidate whose worker ends timing without its timing is crashed, and the candidates after it are judged") {
  // A timing reply without the timing the host asked for is the candidate breaking the protocol,
  // charged to it, never the harness's error that would end the evaluation.
  const auto e = evaluate_all({"drops_its_timing.py", "correct.py"});
  CHECK_MESSAGE(e[0]["verdict"] == "crashed", e[0].dump());
  CHECK(e[0]["error_message"].get<std::string>().find("without a result the host asked for") != std::string::npos);
  CHECK(e[1]["verdict"] == "correct");
  CHECK(workers_ended());
}

TEST_CASE("a candidate whose worker names a verdict outside the vocabulary is crashed, not a runtime_error") {
  // Its forward replies fail with error class "almost_correct": a protocol breach charged to it.
  const auto e = evaluate_all({"rewrites_reply_verdict.py", "correct.py"});
  CHECK_MESSAGE(e[0]["verdict"] == "crashed", e[0].dump());
  CHECK(e[0]["error_class"] == "crashed");
  const std::string message = e[0]["error_message"];
  CHECK(message.find("broke the protocol") != std::string::npos);
  CHECK(message.find("almost_correct") != std::string::npos);
  CHECK(e[1]["verdict"] == "correct");
  CHECK(workers_ended());
}
