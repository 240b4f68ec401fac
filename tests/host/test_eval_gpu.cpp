// GPU tests of candidate evaluation (label gpu; skipped where no GPU is visible): plain PyTorch
// and load_inline candidates evaluated on CUDA through the real workers (inputs and outputs as
// CUDA IPC handles), their compile path and device profile; an abort, an illegal address and a
// kernel that never ends, none of which may poison the next evaluation.
#include "cli_runner.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using dicebench::test::run_cli;

namespace {

const std::string kEval = std::string(DICEBENCH_TEST_DATA_DIR) + "/eval/";

nlohmann::json evaluate_on_cuda(const std::string& candidate, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"eval", "--problem", kEval + "problem_linear_relu.py", "--candidate", kEval + candidate,
                                   "--json", "--device", "cuda"};
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
    if (k["name"].get<std::string>().find("relu_kernel") != std::string::npos) relu_from_candidate = k["from_candidate"];
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

TEST_CASE("a crash on CUDA is charged to its candidate and the next one starts clean") {
  CHECK(evaluate_on_cuda("aborts.py")["verdict"] == "crashed");
  CHECK(evaluate_on_cuda("correct.py")["verdict"] == "correct");
}

TEST_CASE("wrong answers are caught on CUDA as on the CPU") {
  CHECK(evaluate_on_cuda("off_by_1e3.py")["verdict"] == "output_mismatch");
  CHECK(evaluate_on_cuda("wrong_shape.py")["verdict"] == "shape_mismatch");
  CHECK(evaluate_on_cuda("mutates_inputs.py")["verdict"] == "correct");
}
