// Reward shapes (core/run/reward.hpp) from evaluations: each shape's value, its parameters'
// defaults from the spec, the flags that zero a reward, DICE's z-score within a problem's group,
// and the caller's mistakes.
#include "core/run/reward.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace dicebench;

namespace {

Evaluation judged(Verdict verdict, std::optional<double> speedup = std::nullopt) {
  Evaluation e;
  e.verdict = verdict;
  e.correct = verdict == Verdict::correct;
  e.speedup = speedup;
  return e;
}

Judgement item(const std::string& problem, Evaluation evaluation) {
  Judgement j;
  j.problem = problem;
  j.evaluation = std::move(evaluation);
  return j;
}

}  // namespace

TEST_CASE("each reward shape's value, with its spec's defaults and given parameters") {
  const auto correctness = run::reward_spec("correctness").value();
  CHECK(run::reward_of(judged(Verdict::correct, 2.0), correctness) == 1.0);
  CHECK(run::reward_of(judged(Verdict::timeout), correctness) == 0.0);

  const auto speedup = run::reward_spec("speedup", {{"cap", 5.0}}).value();
  CHECK(run::reward_of(judged(Verdict::correct, 2.5), speedup) == 2.5);
  CHECK(run::reward_of(judged(Verdict::correct, 50.0), speedup) == 5.0);
  CHECK(run::reward_of(judged(Verdict::output_mismatch), speedup) == 0.0);

  const auto plus = run::reward_spec("correct_plus_speedup").value();
  CHECK(plus.param("correct_weight") == 0.3);  // Kevin-32B's, the spec's default
  CHECK(run::reward_of(judged(Verdict::correct, 2.0), plus) == doctest::Approx(2.3));
  CHECK(run::reward_of(judged(Verdict::compile_failed), plus) == 0.0);

  const auto log = run::reward_spec("log_speedup").value();
  CHECK(run::reward_of(judged(Verdict::correct, std::exp(1.0)), log) == doctest::Approx(1.0));
  CHECK(run::reward_of(judged(Verdict::correct, 1e6), log) == 3.0);    // clipped high
  CHECK(run::reward_of(judged(Verdict::correct, 1e-6), log) == -1.0);  // clipped low
  CHECK(run::reward_of(judged(Verdict::crashed), log) == -2.0);
  CHECK(run::reward_spec("log_speedup").value().params_json() ==
        nlohmann::json{{"high", 3.0}, {"incorrect", -2.0}, {"low", -1.0}});
}

TEST_CASE("a hack or below-floor flag zeroes every shape's reward, an informative flag does not") {
  for (const auto flag : kRewardZeroingFlags) {
    auto e = judged(Verdict::correct, 3.0);
    e.flags.emplace_back(flag, "seen");
    for (const auto shape : kAllRewardShapes)
      CHECK(run::reward_of(e, run::reward_spec(reward_shape_name(shape)).value()) == 0.0);
  }
  auto borderline = judged(Verdict::correct, 3.0);
  borderline.flags.emplace_back(EvaluationFlag::borderline, "margin 0.7");
  CHECK(run::reward_of(borderline, run::reward_spec("speedup").value()) == 3.0);
}

TEST_CASE("correctness with zscore normalises within each problem's judged items, as DICE does") {
  std::vector<Judgement> batch = {item("a", judged(Verdict::correct)), item("a", judged(Verdict::timeout)),
                                  item("a", judged(Verdict::correct)), item("b", judged(Verdict::correct)),
                                  item("b", judged(Verdict::correct)), item("a", Evaluation{})};
  batch.back().status = ItemStatus::problem_failed;  // not judged: no reward, not in the group
  batch.back().evaluation.reset();
  run::apply_rewards(batch, run::reward_spec("correctness", {{"zscore", 1.0}}).value());
  const double std_dev = std::sqrt(2.0) / 3.0;  // population std of {1, 0, 1}
  CHECK(*batch[0].reward == doctest::Approx((1 - 2.0 / 3) / std_dev));
  CHECK(*batch[1].reward == doctest::Approx((0 - 2.0 / 3) / std_dev));
  CHECK(*batch[3].reward == 0.0);  // a group all alike carries no signal
  CHECK_FALSE(batch[5].reward.has_value());
  CHECK(batch[0].reward_shape == "correctness");
  CHECK(batch[5].reward_shape.empty());
}

TEST_CASE("an unknown shape or parameter, or a value that is not finite, is the caller's error") {
  const auto unknown = run::reward_spec("fastest");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().kind == ErrorKind::bad_input);
  CHECK(unknown.error().message.find("correctness, speedup, correct_plus_speedup, log_speedup") != std::string::npos);
  CHECK_FALSE(run::reward_spec("speedup", {{"weight", 1.0}}));
  CHECK_FALSE(run::reward_spec("speedup", {{"cap", std::nan("")}}));
}
