// GPU tests of candidate evaluation (label gpu; skipped where no GPU is visible): plain PyTorch
// and load_inline candidates evaluated on CUDA through the real workers, a crash that must not
// poison the next evaluation, and the device recorded in the results.
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
}

TEST_CASE("a load_inline candidate compiles and is correct on CUDA") {
  const auto e = evaluate_on_cuda("cuda_relu_inline.py");
  CHECK_MESSAGE(e["verdict"] == "correct", e.dump());
  CHECK(e["compiled"] == true);
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
