// GPU tests of candidate evaluation (label gpu; skipped where no GPU is visible): plain PyTorch
// and load_inline candidates evaluated on CUDA through the real workers (inputs and outputs as
// CUDA IPC handles), their compile path and device profile; an abort, an illegal address and a
// kernel that never ends, none of which may poison the next evaluation; Triton candidates (elementwise,
// autotuned, a row reduction, a tl.dot matmul, a decoy, a wrong one, an illegal address); and
// `run --gpus` on the one GPU such a host has: a run on it, and GPUs that are not there.
#include "cli_runner.hpp"

#include <doctest/doctest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

using dicebench::test::run_cli;

namespace {

const std::string kEval = std::string(DICEBENCH_TEST_DATA_DIR) + "/eval/";

nlohmann::json evaluate_on_cuda(const std::string& candidate, std::vector<std::string> extra = {},
                                const std::string& problem = "problem_linear_relu.py") {
  std::vector<std::string> args = {"eval",   "--problem", kEval + problem, "--candidate", kEval + candidate,
                                   "--json", "--device",  "cuda"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("a plain PyTorch candidate is correct on CUDA and timed") {
  const auto e = evaluate_on_cuda("correct.py");
  CHECK(e["verdict"] == "correct");
  CHECK(e["runtime"]["median_ms"].get<double>() > 0);
  CHECK(e["baseline"]["median_ms"].get<double>() > 0);
  CHECK(e["compile"]["path"] == "none");
  REQUIRE(e["profile"].is_object());
  CHECK(e["profile"]["candidate_share"] == 0.0);
  CHECK(e["profile"]["busy_ms"].get<double>() > 0);
  CHECK(e["profile"]["call_host_ms"].get<double>() > 0);
  CHECK(e["profile"]["launch_latency_ms"].get<double>() > 0);
  CHECK(e["profile"]["span_ms"].get<double>() > e["profile"]["launch_latency_ms"].get<double>());
  CHECK(e["profile"]["span_ms"].get<double>() >= e["profile"]["busy_ms"].get<double>());
  CHECK(!e["profile"]["kernels"].empty());
}

TEST_CASE("a load_inline candidate compiles and is correct on CUDA") {
  const auto e = evaluate_on_cuda("cuda_relu_inline.py");
  CHECK_MESSAGE(e["verdict"] == "correct", e.dump());
  CHECK(e["compiled"] == true);
  CHECK_MESSAGE(e["compile"]["path"] == "nvrtc", e["compile"].dump());
  REQUIRE(e["profile"].is_object());
  CHECK(e["profile"]["candidate_share"].get<double>() > 0.0);
  bool relu_from_candidate = false;
  for (const auto& k : e["profile"]["kernels"])
    if (k["name"].get<std::string>().find("relu_kernel") != std::string::npos)
      relu_from_candidate = k["from_candidate"];
  CHECK(relu_from_candidate);
}

TEST_CASE("an illegal address and a kernel that never ends are charged to their candidates only") {
  const auto illegal = evaluate_on_cuda("illegal_address.py");
  CHECK_MESSAGE((illegal["verdict"] == "runtime_error" || illegal["verdict"] == "crashed"), illegal.dump());
  const auto endless = evaluate_on_cuda("endless_kernel.py", {"--timeout", "20"});
  CHECK_MESSAGE(endless["verdict"] == "timeout", endless.dump());
  CHECK(evaluate_on_cuda("correct.py")["verdict"] == "correct");
}

TEST_CASE("a cached answer and a change once timing starts are caught on CUDA") {
  CHECK(evaluate_on_cuda("cached_output.py")["verdict"] == "output_mismatch");
  CHECK(evaluate_on_cuda("lazy_after_timing.py")["verdict"] == "output_mismatch");
}

TEST_CASE("on CUDA, work deferred to a patched torch.cuda.synchronize or done while inputs arrive is no help") {
  // Its forward returns an unwritten tensor and launches the work from torch.cuda.synchronize,
  // Stream and Event waits, and torch.Tensor's copies: the harness synchronizes and copies with
  // calls bound before the candidate loaded (harness/worker/python/dicebench_harness/sealed.py).
  const auto deferred = evaluate_on_cuda("deferred_to_harness.py");
  CHECK_MESSAGE(deferred["verdict"] == "output_mismatch", deferred.dump());
  CHECK(deferred["failed_trial"] == 0);
  // Nor does work done while the inputs arrive (patched torch.Tensor.as_strided, which the IPC import
  // used, and torch.set_float32_matmul_precision).
  const auto gap = evaluate_on_cuda("precomputes_in_gap.py");
  CHECK_MESSAGE(gap["verdict"] == "correct", gap.dump());
  CHECK(gap["log_tail"].get<std::string>().find("work done before the call") == std::string::npos);
}

TEST_CASE("a CUDA graph replayed on its first call's input pointers fails a call whose inputs lie elsewhere") {
  const auto honest = evaluate_on_cuda("correct.py");
  CHECK_MESSAGE(honest["verdict"] == "correct", honest.dump());
  CHECK(honest["timed_calls"]["fresh_placements"].get<int>() >= 2);
  // The replay reads where the first call's inputs were: stale values (output_mismatch) or, once
  // that region is unmapped by the fresh placement, an illegal address (runtime_error). Either way
  // it fails, at a trial after the first.
  const auto replay = evaluate_on_cuda("cuda_graph_replay.py");
  CHECK_MESSAGE((replay["verdict"] == "output_mismatch" || replay["verdict"] == "runtime_error"), replay.dump());
  CHECK_FALSE(replay["correct"].get<bool>());
  CHECK(replay["failed_trial"].get<int>() >= 1);
}

TEST_CASE("outputs on another device than the inputs are a runtime error") {
  const auto moved = evaluate_on_cuda("cpu_output.py");
  CHECK(moved["verdict"] == "runtime_error");
  CHECK(moved["error_message"].get<std::string>().find("tensor on cpu") != std::string::npos);
}

TEST_CASE("a crash on CUDA is charged to its candidate and the next one starts clean") {
  CHECK(evaluate_on_cuda("aborts.py")["verdict"] == "crashed");
  CHECK(evaluate_on_cuda("correct.py")["verdict"] == "correct");
}

TEST_CASE("wrong answers are caught on CUDA as on the CPU") {
  CHECK(evaluate_on_cuda("off_by_1e3.py")["verdict"] == "output_mismatch");
  CHECK(evaluate_on_cuda("wrong_shape.py")["verdict"] == "shape_mismatch");
  CHECK(evaluate_on_cuda("mutates_inputs.py")["verdict"] == "correct");
}

TEST_CASE("on CUDA, timed calls get fresh inputs through IPC, and answers cached on an input never pass") {
  const auto honest = evaluate_on_cuda("content_keyed_cache.py");
  CHECK_MESSAGE(honest["verdict"] == "correct", honest.dump());
  CHECK(honest["log_tail"].get<std::string>().find("cache hits: 1") == std::string::npos);
  CHECK(honest["timed_calls"]["checked"].get<int>() >= 3);
  const auto stale = evaluate_on_cuda("shape_keyed_cache.py");
  CHECK_MESSAGE(stale["verdict"] == "output_mismatch", stale.dump());
  CHECK(stale["failed_stage"] == "timing");
  const auto lazy = evaluate_on_cuda("tensor_subclass.py");
  CHECK(lazy["verdict"] == "runtime_error");
  CHECK(lazy["error_message"].get<std::string>().find("DeferredResult") != std::string::npos);
}

TEST_CASE("on CUDA, a call that does no work is below the memory floor the GPU's bandwidth sets") {
  const auto honest = evaluate_on_cuda("correct.py");
  CHECK(honest["verdict"] == "correct");
  CHECK(honest["memory_floor_ms"].get<double>() > 0);
  CHECK_FALSE(honest["flags"].contains("below_memory_floor"));
  // Returning its 2 GiB input: correct (ReLU of torch.rand), but it moved no byte.
  const auto idle = evaluate_on_cuda("returns_input.py", {}, "problem_relu_of_rand_large.py");
  CHECK_MESSAGE(idle["verdict"] == "correct", idle.dump());
  CHECK(idle["flags"].contains("output_aliases_input"));
  CHECK_MESSAGE(idle["flags"].contains("below_memory_floor"), idle.dump());
  CHECK(idle["problem_traits"] == nlohmann::json::array({"output_equals_input"}));
  CHECK(idle["runtime"]["median_ms"].get<double>() < idle["memory_floor_ms"].get<double>());
}

TEST_CASE("a failure of the fast path's glue is re-judged with torch's toolchain, and the disagreement kept") {
  const auto e = evaluate_on_cuda("fastpath_disagrees.py");
  CHECK_MESSAGE(e["verdict"] == "correct", e.dump());
  CHECK(e["compile"]["path"] == "fallback");  // the toolchain's build, which decided the verdict
  REQUIRE(e["fastpath_outcome"].is_object());
  CHECK(e["fastpath_outcome"]["verdict"] == "runtime_error");
  CHECK(e["fastpath_outcome"]["compile_path"] == "nvrtc");
  CHECK(e["flags"].contains("fastpath_disagreement"));
  // With the check off, the fast path's verdict stands.
  const auto unchecked = evaluate_on_cuda("fastpath_disagrees.py", {"--set", "eval.confirm_fastpath=off"});
  CHECK(unchecked["verdict"] == "runtime_error");
  CHECK(unchecked["fastpath_outcome"].is_null());
  // The same failure as the module loads: re-judged as soon as the load fails, the same verdicts.
  const auto at_load = evaluate_on_cuda("fastpath_disagrees_at_load.py");
  CHECK_MESSAGE(at_load["verdict"] == "correct", at_load.dump());
  CHECK(at_load["compile"]["path"] == "fallback");
  REQUIRE(at_load["fastpath_outcome"].is_object());
  CHECK(at_load["fastpath_outcome"]["verdict"] == "runtime_error");
  CHECK(at_load["fastpath_outcome"]["compile_path"] == "nvrtc");
  CHECK(at_load["flags"].contains("fastpath_disagreement"));
}

TEST_CASE("a failure before anything the fast path built ran is not re-judged with torch's toolchain") {
  // Its forward passes one argument too many: both builds' modules refuse the call before any of
  // the candidate's code runs, so the fast path's verdict stands without a toolchain build.
  const auto e = evaluate_on_cuda("wrong_arity_inline.py");
  CHECK_MESSAGE(e["verdict"] == "runtime_error", e.dump());
  CHECK(e["compile"]["path"] == "nvrtc");
  CHECK(e["fastpath_outcome"].is_null());
  CHECK(e["toolchain"].is_null());
  CHECK(e["error_message"].get<std::string>().find("incompatible function arguments") != std::string::npos);
}

TEST_CASE("three extensions named alike, built at once by torch's toolchain, are each judged on their own build") {
  // Measured before the sandbox: in a shared ~/.cache/torch_extensions, real candidates that all
  // named their extension fused_ops got compile_failed when they compiled at once.
  const auto r =
      run_cli({"eval", "--problem", kEval + "problem_linear_relu.py", "--candidate", kEval + "fused_ops_relu.py",
               "--candidate", kEval + "fused_ops_fmax.py", "--candidate", kEval + "fused_ops_copy.py", "--json",
               "--device", "cuda", "--set", "eval.fastpath=off", "--set", "eval.prefetch=3"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto all = nlohmann::json::parse(r.out);
  REQUIRE(all.size() == 3);
  CHECK_MESSAGE(all[0]["verdict"] == "correct", all[0].dump());
  CHECK_MESSAGE(all[1]["verdict"] == "correct", all[1].dump());
  CHECK_MESSAGE(all[2]["verdict"] == "output_mismatch", all[2].dump());
  for (const auto& e : all) CHECK(e["compile"]["path"] != "nvrtc");
}

namespace {

// The candidate's share of device time, and whether a kernel whose name holds `name` was its own.
bool ran_own_kernel(const nlohmann::json& e, const std::string& name) {
  if (!e["profile"].is_object() || e["profile"]["candidate_share"].get<double>() <= 0.0) return false;
  for (const auto& k : e["profile"]["kernels"])
    if (k["name"].get<std::string>().find(name) != std::string::npos && k["from_candidate"].get<bool>()) return true;
  return false;
}

std::vector<nlohmann::json> evaluate_all_on_cuda(const std::vector<std::string>& candidates,
                                                 const std::string& problem) {
  std::vector<std::string> args = {"eval", "--problem", kEval + problem, "--json", "--device", "cuda"};
  for (const auto& c : candidates) args.insert(args.end(), {"--candidate", kEval + c});
  const auto r = run_cli(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto all = nlohmann::json::parse(r.out);
  if (candidates.size() == 1) return {all};  // one candidate: one object
  REQUIRE(all.size() == candidates.size());
  return {all.begin(), all.end()};
}

}  // namespace

TEST_CASE(
    "Triton candidates on the GPU: each verdict and share, the decoy at 0, a fault charged to its own candidate") {
  const auto e = evaluate_all_on_cuda({"triton_relu.py", "triton_autotuned.py", "triton_decoy.py", "triton_wrong.py",
                                       "triton_illegal_address.py", "triton_relu.py"},
                                      "problem_linear_relu.py");
  // Elementwise: its kernel is its own, compiled at its first launch (a correctness trial) and
  // timed apart from every call.
  CHECK_MESSAGE(e[0]["verdict"] == "correct", e[0].dump());
  CHECK(ran_own_kernel(e[0], "relu_kernel"));
  CHECK(e[0]["compile"]["jit"]["count"].get<int>() >= 1);
  CHECK(e[0]["compile"]["jit"]["seconds"].get<double>() > 0.0);
  CHECK(e[0]["compile"]["jit"]["compiles"][0]["name"] == "relu_kernel");
  // Autotuned: every config compiled, the kernel its own.
  CHECK_MESSAGE(e[1]["verdict"] == "correct", e[1].dump());
  CHECK(ran_own_kernel(e[1], "relu_kernel"));
  CHECK(e[1]["compile"]["jit"]["count"].get<int>() >= 2);
  // The decoy: defined, never launched; torch computes. Correct, share 0, nothing compiled.
  CHECK_MESSAGE(e[2]["verdict"] == "correct", e[2].dump());
  CHECK(e[2]["profile"]["candidate_share"].get<double>() == 0.0);
  CHECK(e[2]["compile"]["jit"]["count"].get<int>() == 0);
  // A wrong one: its compile is reported all the same.
  CHECK(e[3]["verdict"] == "output_mismatch");
  CHECK(e[3]["compile"]["jit"]["count"].get<int>() >= 1);
  CHECK_MESSAGE((e[4]["verdict"] == "crashed" || e[4]["verdict"] == "runtime_error"), e[4].dump());
  CHECK_MESSAGE(e[5]["verdict"] == "correct", e[5].dump());  // after the fault, the same GPU, fine

  const auto row_sum = evaluate_all_on_cuda({"triton_row_sum.py"}, "../kernelbench/level1/10_RowSum.py");
  CHECK_MESSAGE(row_sum[0]["verdict"] == "correct", row_sum[0].dump());
  CHECK(ran_own_kernel(row_sum[0], "row_sum_kernel"));
  const auto matmul = evaluate_all_on_cuda({"triton_matmul.py"}, "problem_matmul.py");
  CHECK_MESSAGE(matmul[0]["verdict"] == "correct", matmul[0].dump());
  CHECK(ran_own_kernel(matmul[0], "matmul_kernel"));
}

TEST_CASE(
    "run --gpus 0 evaluates every sample on that GPU, and a GPU that is not there, or named twice, is one error line") {
  namespace fs = std::filesystem;
  const fs::path tmp = fs::temp_directory_path() / ("dicebench-gpus-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const std::string db = (tmp / "runs.db").string();
  const std::string replay = std::string(DICEBENCH_TEST_DATA_DIR) + "/replay/quickstart";
  const std::string kernelbench = std::string(DICEBENCH_TEST_DATA_DIR) + "/kernelbench";
  const auto run = run_cli({"run", "--model", "replay:" + replay, "--suite", "kernelbench-l1", "--kernelbench-root",
                            kernelbench, "--device", "cuda", "--gpus", "0", "--db", db});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // Every sample with a candidate has a verdict, judged on the GPU (its name, not "cpu").
  const auto judged =
      run_cli({"query", "--db", db, "--format", "json",
               "select count(*) as n, sum(e.device = 'cpu') as on_cpu, count(distinct e.device) as devices, "
               "sum(e.status = 'correct') as correct from samples s join evaluations e on e.sample = s.id"});
  REQUIRE_MESSAGE(judged.exit_code == 0, judged.err);
  const auto rows = nlohmann::json::parse(judged.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["n"].get<int>() >= 4);
  CHECK(rows[0]["on_cpu"].get<int>() == 0);
  CHECK(rows[0]["devices"].get<int>() == 1);
  CHECK(rows[0]["correct"].get<int>() >= 1);

  const int gpus = [] {
    int count = 0;
    for (int i = 0; i < 64; ++i)
      if (fs::exists("/dev/nvidia" + std::to_string(i))) ++count;
    return count;
  }();
  const std::string missing = std::to_string(gpus > 0 ? gpus : 1);
  for (const std::string& wanted : {"0," + missing, std::string("0,0")}) {
    const auto refused = run_cli({"run", "--model", "replay:" + replay, "--suite", "kernelbench-l1",
                                  "--kernelbench-root", kernelbench, "--device", "cuda", "--gpus", wanted, "--db", db});
    dicebench::test::check_one_error_line(refused, "eval.gpus names GPU");
  }
  const auto runs = run_cli({"query", "--db", db, "--format", "json", "select count(*) as n from runs"});
  REQUIRE(runs.exit_code == 0);
  CHECK(nlohmann::json::parse(runs.out)[0]["n"] == 1);  // the refused runs stored nothing
  fs::remove_all(tmp);
}
