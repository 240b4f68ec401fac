// The evaluator (harness/client/evaluator.hpp) driven through its C++ API, as the run's slot
// workers and the Python module drive it, on the CPU through real workers: a correct candidate and
// the figures it carries, the baseline it reuses, given or timed, prefetching, a candidate's
// failures as verdicts against a harness failure as an error, and the tolerance it was given.
#include "core/base/whole_file.hpp"
#include "harness/client/evaluator.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

using namespace dicebench;
using harness::Evaluator;
using results::Verdict;

namespace {

const std::string kEval = std::string(DICEBENCH_TEST_DATA_DIR) + "/eval/";

std::string source(const std::string& name) {
  auto text = read_whole_file(kEval + name, "test file");
  REQUIRE_MESSAGE(text.ok(), (text ? std::string() : text.error().message));
  return *text;
}

harness::EvaluationSettings cpu_settings() {
  harness::EvaluationSettings s;
  s.worker_executable = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-worker";
  s.sandbox.executable = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-sandbox";
  s.device = "cpu";
  s.fastpath = false;
  s.trials = 3;
  s.min_trials = 6;
  s.max_trials = 12;
  s.budget_seconds = 1.0;
  s.secret = 42;
  return s;
}

const std::string kProblem = "problem_linear_relu.py";
const std::string kHash = "sha256:test-evaluator-linear-relu";

}  // namespace

TEST_CASE("a correct candidate carries its times, its speedup and the phases it went through") {
  Evaluator evaluator(cpu_settings());
  auto first = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(first.ok(), (first ? std::string() : first.error().message));
  CHECK(first->status == Verdict::correct);
  CHECK(first->compiled);
  CHECK(first->correct);
  CHECK(first->failed_stage.empty());
  REQUIRE(first->runtime);
  REQUIRE(first->baseline);
  CHECK(first->runtime->trials >= 6);
  CHECK(first->runtime->trials <= 12);
  CHECK(first->runtime->median_ms > 0);
  REQUIRE(first->speedup);
  CHECK(*first->speedup == doctest::Approx(first->baseline->median_ms / first->runtime->median_ms));
  CHECK(first->baseline_measured);
  CHECK(first->max_abs_diff.value_or(1) < 1e-5);
  CHECK(first->input_bytes == 16 * 32 * 4);
  CHECK(first->output_bytes == 16 * 32 * 4);
  for (const char* phase : {"prepare", "trials", "timing", "baseline"}) CHECK_MESSAGE(first->phases.count(phase) == 1, phase);

  // The same problem again: the baseline timed once is reused, not timed again.
  auto second = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE(second.ok());
  CHECK(second->status == Verdict::correct);
  CHECK_FALSE(second->baseline_measured);
  REQUIRE(second->baseline);
  CHECK(second->baseline->median_ms == first->baseline->median_ms);
}

TEST_CASE("a baseline given from the results cache is used instead of timing one") {
  Evaluator evaluator(cpu_settings());
  harness::Timing given;
  given.median_ms = given.mean_ms = 1000.0;
  given.trials = 7;
  evaluator.set_baseline(kHash, given);
  auto e = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
  CHECK_FALSE(e->baseline_measured);
  REQUIRE(e->baseline);
  CHECK(e->baseline->median_ms == 1000.0);
  REQUIRE(e->speedup);
  CHECK(*e->speedup == doctest::Approx(1000.0 / e->runtime->median_ms));
}

TEST_CASE("a prefetched candidate loads ahead and is then judged like any other") {
  Evaluator evaluator(cpu_settings());
  const std::string wrong = source("wrong_shape.py");
  CHECK(evaluator.load_state(wrong) == Evaluator::LoadState::queued);
  evaluator.prefetch(wrong);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (evaluator.load_state(wrong) != Evaluator::LoadState::ready && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(evaluator.load_state(wrong) == Evaluator::LoadState::ready);
  auto e = evaluator.evaluate(source(kProblem), kHash, wrong);
  REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
  CHECK(e->status == Verdict::shape_mismatch);
  CHECK(e->compiled);
  CHECK_FALSE(e->correct);
  CHECK(e->failed_trial == 0);
  CHECK(e->failed_stage == "trials");
  CHECK_FALSE(e->runtime);
  CHECK_FALSE(e->speedup);
}

TEST_CASE("a candidate's failures are verdicts, and a reference that cannot run is the harness's error") {
  Evaluator evaluator(cpu_settings());
  auto raises = evaluator.evaluate(source(kProblem), kHash, source("raises.py"));
  REQUIRE_MESSAGE(raises.ok(), (raises ? std::string() : raises.error().message));
  CHECK(raises->status == Verdict::runtime_error);
  CHECK_FALSE(raises->error_message.empty());

  auto syntax = evaluator.evaluate(source(kProblem), kHash, source("syntax_error.py"));
  REQUIRE(syntax.ok());
  CHECK(syntax->status == Verdict::compile_failed);
  CHECK_FALSE(syntax->compiled);

  // The problem itself raises: no candidate is to blame, and no verdict is made up.
  const std::string broken_problem = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                                     "        raise RuntimeError('reference broke')\n"
                                     "def get_inputs():\n    return [torch.randn(4)]\ndef get_init_inputs():\n    return []\n";
  auto broken = evaluator.evaluate(broken_problem, "sha256:test-evaluator-broken", source("correct.py"));
  CHECK_FALSE(broken.ok());
}

TEST_CASE("the tolerance the evaluator is given decides a near miss") {
  auto strict = cpu_settings();
  Evaluator strict_evaluator(strict);
  auto off = strict_evaluator.evaluate(source(kProblem), kHash, source("off_by_1e3.py"));
  REQUIRE_MESSAGE(off.ok(), (off ? std::string() : off.error().message));
  CHECK(off->status == Verdict::output_mismatch);
  REQUIRE(off->margin);
  CHECK(*off->margin > 1.0);

  auto loose = cpu_settings();
  loose.tolerance = "uniform";
  Evaluator loose_evaluator(loose);
  auto passes = loose_evaluator.evaluate(source(kProblem), kHash, source("off_by_1e3.py"));
  REQUIRE(passes.ok());
  CHECK(passes->status == Verdict::correct);
  REQUIRE(passes->margin);
  CHECK(*passes->margin <= 1.0);
}

TEST_CASE("timed calls come in batches made ahead, each timed trial after a warm call, and timing says why it stopped") {
  Evaluator evaluator(cpu_settings());
  auto e = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
  REQUIRE(e->status == Verdict::correct);
  REQUIRE(e->runtime);
  const auto& t = *e->runtime;
  CHECK(t.warm_calls == t.trials);  // CPU calls are far under the 5 ms above which warm calls stop
  // Every call the loop made (warm-up, warm and timed) went through the host, and a few checked
  // ones after it where too few of them were checked.
  CHECK(e->timed_calls >= cpu_settings().warmup + t.trials + t.warm_calls);
  CHECK(e->timed_calls <= cpu_settings().warmup + t.trials + t.warm_calls + 3);
  CHECK(e->checked_calls >= 3);
  CHECK(e->checked_calls * 10 >= e->timed_calls);
  CHECK(e->timed_batches >= 1);
  CHECK(e->timed_batches <= (e->timed_calls + 31) / 32 + 1);
  CHECK((t.stop_reason == "converged" || t.stop_reason == "max_trials" || t.stop_reason == "budget"));
  REQUIRE(e->baseline);
  CHECK(e->baseline->warm_calls == e->baseline->trials);
  CHECK(!e->baseline->stop_reason.empty());

  auto cold = cpu_settings();
  cold.warm_calls = false;
  Evaluator without(cold);
  auto off = without.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(off.ok(), (off ? std::string() : off.error().message));
  REQUIRE(off->runtime);
  CHECK(off->runtime->warm_calls == 0);
  CHECK(off->timed_calls >= cold.warmup + off->runtime->trials);
  CHECK(off->timed_calls <= cold.warmup + off->runtime->trials + 3);
}

TEST_CASE("a stable candidate stops timing at its spread, not at its budget") {
  auto s = cpu_settings();
  s.min_trials = 6;
  s.max_trials = 1000;
  s.budget_seconds = 30;
  s.target_rel_ci = 0.5;  // any CPU timing is this stable
  Evaluator evaluator(s);
  auto e = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
  REQUIRE(e->runtime);
  CHECK(e->runtime->stop_reason == "converged");
  CHECK(e->runtime->trials < 20);
  CHECK(e->phases.at("timing") < 15);
}

TEST_CASE("with a batch budget smaller than a call, every call is a batch of its own, and a stale answer still fails") {
  auto s = cpu_settings();
  s.batch_bytes = 1;
  Evaluator evaluator(s);
  auto honest = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(honest.ok(), (honest ? std::string() : honest.error().message));
  CHECK(honest->status == Verdict::correct);
  CHECK(honest->timed_batches == honest->timed_calls);
  // A cache keyed on the input's shape answers stale once the correctness trials are over: a checked
  // timed call catches it, in batches of one as in batches of many.
  for (const int64_t budget : {int64_t{1}, int64_t{4} << 30}) {
    auto settings = cpu_settings();
    settings.batch_bytes = budget;
    Evaluator stale_evaluator(settings);
    auto stale = stale_evaluator.evaluate(source(kProblem), kHash, source("shape_keyed_cache.py"));
    REQUIRE_MESSAGE(stale.ok(), (stale ? std::string() : stale.error().message));
    CHECK(stale->status == Verdict::output_mismatch);
    CHECK(stale->failed_stage == "timing");
    REQUIRE(stale->failed_call);
    CHECK(stale->error_message.rfind("timed call " + std::to_string(*stale->failed_call) + ":", 0) == 0);
    if (budget > 1) CHECK(stale->timed_batches < stale->timed_calls);
  }
}
