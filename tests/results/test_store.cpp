// Writes and reads of the results store: runs, problems (and their hash check on resume),
// samples, evaluations (with margins and flags), problems' traits, and the set of finished
// samples a resumed run skips.
#include <doctest/doctest.h>

#include <type_traits>

#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

static_assert(!std::is_copy_constructible_v<Store>);
static_assert(std::is_nothrow_move_constructible_v<Store>);
static_assert(std::is_nothrow_move_assignable_v<Store>);

TEST_CASE("runs are created, read back and finished") {
  TempDir dir;
  const std::string path = dir.file("results.db");
  Store store = open_store(path);
  const auto first = require_ok(store.create_run(sample_run()));
  NewRun second_run = sample_run();
  second_run.model = "dice-8b";
  second_run.gpu.reset();
  const auto second = require_ok(store.create_run(second_run));
  CHECK(first == 1);
  CHECK(second == 2);

  RunRow row = require_ok(store.run(first));
  CHECK(row.id == first);
  CHECK(row.status == RunStatus::running);
  CHECK_FALSE(row.finished.has_value());
  CHECK(row.model == "replay:/tmp/completions");
  CHECK(row.suite == "kernelbench-l1");
  CHECK(row.config_json == R"({"samples":3,"temperature":0.7})");
  CHECK(row.gpu == std::optional<std::string>("NVIDIA H200"));
  CHECK_FALSE(row.torch_version.has_value());
  CHECK(row.seed == 42);
  REQUIRE(row.created.size() == 20);  // 2026-11-29T15:42:52Z
  CHECK(row.created[10] == 'T');
  CHECK(row.created.back() == 'Z');

  require_ok(store.finish_run(first, RunStatus::interrupted));
  row = require_ok(store.run(first));
  CHECK(row.status == RunStatus::interrupted);
  REQUIRE(row.finished.has_value());
  CHECK(row.finished->back() == 'Z');
  // Resuming sets it running again and clears the finish time.
  require_ok(store.finish_run(first, RunStatus::running));
  CHECK_FALSE(require_ok(store.run(first)).finished.has_value());
  // Forward only: a finished run stays finished, its finish time too.
  require_ok(store.finish_run(first, RunStatus::finished));
  const auto finished_at = require_ok(store.run(first)).finished;
  for (const RunStatus back : {RunStatus::running, RunStatus::interrupted, RunStatus::failed}) {
    auto refused = store.finish_run(first, back);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message == path + ": cannot update run " + std::to_string(first) +
                                         ": it is finished, and a finished run's status does not change");
  }
  CHECK(require_ok(store.run(first)).status == RunStatus::finished);
  CHECK(require_ok(store.run(first)).finished == finished_at);

  const auto runs = require_ok(store.runs());
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].model == "dice-8b");
  CHECK_FALSE(runs[1].gpu.has_value());

  auto missing = store.run(12);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "no run 12 in " + path);
  auto missing_finish = store.finish_run(12, RunStatus::finished);
  REQUIRE_FALSE(missing_finish.ok());
  CHECK(missing_finish.error().message == "no run 12 in " + path);

  // Movable: the moved-to store keeps working.
  Store moved = std::move(store);
  CHECK(require_ok(moved.runs()).size() == 2);
}

TEST_CASE("problems are registered once and a changed problem is refused on resume") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  require_ok(store.create_run(sample_run()));
  const auto run = require_ok(store.create_run(sample_run()));  // run 2, so ids differ from problem ids
  const std::vector<ProblemRow> problems = {problem(1, 1, "Add"), problem(3, 1, "Conv"), problem(2, 2, "Gemm")};
  require_ok(store.add_problems(run, problems));
  require_ok(store.add_problems(run, problems));  // identical again: fine (resume)

  auto stored = require_ok(store.problems(run));
  REQUIRE(stored.size() == 3);
  CHECK(stored[0].problem_id == 1);  // by level, then id
  CHECK(stored[1].problem_id == 3);
  CHECK(stored[1].path == "level1/3_Conv.py");
  CHECK(stored[2].problem_id == 2);
  CHECK(stored[2].level == 2);
  CHECK(stored[2].name == "Gemm");

  std::vector<ProblemRow> changed = {problem(4, 1, "New"), problem(3, 1, "Conv")};
  changed[1].content_hash = "different";
  auto refused = store.add_problems(run, changed);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "problem 1/3 changed since run 2 started (content hash differs)");
  CHECK(require_ok(store.problems(run)).size() == 3);  // problem 4 was not added either

  changed[1] = problem(3, 1, "Conv");
  changed[1].prompt_hash = "other prompt";
  auto prompt_changed = store.add_problems(run, changed);
  REQUIRE_FALSE(prompt_changed.ok());
  CHECK(prompt_changed.error().message == "problem 1/3 changed since run 2 started (prompt hash differs)");
}

TEST_CASE("samples and evaluations are stored and read back") {
  TempDir dir;
  const std::string path = dir.file("results.db");
  Store store = open_store(path);
  const auto run = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(run, {problem(1, 1, "Add"), problem(2, 1, "Mul")}));

  const auto s0 = require_ok(store.insert_sample(new_sample(run, 1, 0)));
  const auto s1 = require_ok(store.insert_sample(new_sample(run, 1, 1, /*with_candidate=*/false)));
  const auto s2 = require_ok(store.insert_sample(new_sample(run, 2, 0)));

  auto duplicate = store.insert_sample(new_sample(run, 1, 1));
  REQUIRE_FALSE(duplicate.ok());
  CHECK(duplicate.error().message == path + ": run 1 already has sample 1 of problem 1/1");
  NewSample negative = new_sample(run, 1, -1);
  CHECK_FALSE(store.insert_sample(negative).ok());
  NewSample bad_stats = new_sample(run, 1, 5);
  bad_stats.gen_stats_json = "tokens=12";
  CHECK_FALSE(store.insert_sample(bad_stats).ok());

  CHECK(require_ok(store.sample_count(run)) == 3);
  auto samples = require_ok(store.samples(run));
  REQUIRE(samples.size() == 3);
  CHECK(samples[0].id == s0);
  CHECK(samples[0].extraction == "ok");
  CHECK(samples[0].candidate == std::optional<std::string>("class ModelNew: pass\n"));
  CHECK_FALSE(samples[0].completion.has_value());
  CHECK(samples[1].extraction == "no_code_block");
  CHECK_FALSE(samples[1].candidate.has_value());
  CHECK(samples[1].gen_stats_json == R"({"tokens":12})");
  auto with_text = require_ok(store.samples(run, /*with_completion=*/true));
  CHECK(with_text[0].completion == std::optional<std::string>("```python\nclass ModelNew: pass\n```"));

  StoredEvaluation evaluation;
  evaluation.sample = s0;
  evaluation.status = Verdict::correct;
  evaluation.compiled = true;
  evaluation.correct = true;
  evaluation.device = "cuda:0";
  evaluation.runtime_ms = 0.25;
  evaluation.baseline_ms = 0.5;
  evaluation.speedup = 2.0;
  evaluation.failed_stage = "timing";  // a details key
  evaluation.device_busy_ms = 0.133;
  evaluation.host_wall_ms = 0.7;
  evaluation.call_host_ms = 0.05;
  evaluation.launch_latency_ms = 0.06;
  evaluation.start_span_ms = 0.19;
  require_ok(store.insert_evaluation(evaluation));

  auto again = store.insert_evaluation(evaluation);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().message == path + ": sample " + std::to_string(s0) + " already has an evaluation");

  StoredEvaluation contradiction;
  contradiction.sample = s2;
  contradiction.status = Verdict::output_mismatch;
  contradiction.compiled = true;
  contradiction.correct = true;
  contradiction.device = "cpu";
  auto refused = store.insert_evaluation(contradiction);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("verdict output_mismatch contradicts correct=1") != std::string::npos);

  auto pending = require_ok(store.pending_samples(run));
  REQUIRE(pending.size() == 1);
  CHECK(pending[0].id == s2);
  CHECK(pending[0].candidate.has_value());

  StoredEvaluation failed;
  failed.sample = s2;
  failed.status = Verdict::compile_failed;
  failed.device = "cpu";
  failed.error_class = "nvrtc";
  failed.error_message = "error: expected ';'";
  require_ok(store.insert_evaluation(failed));
  CHECK(require_ok(store.pending_samples(run)).empty());

  auto evaluations = require_ok(store.evaluations(run));
  REQUIRE(evaluations.size() == 2);
  CHECK(evaluations[0].sample == s0);
  CHECK(evaluations[0].status == Verdict::correct);
  CHECK(evaluations[0].speedup == std::optional<double>(2.0));
  CHECK(evaluations[0].failed_stage == std::optional<std::string>("timing"));
  CHECK_FALSE(evaluations[0].runtime_std_ms.has_value());
  CHECK(evaluations[0].device_busy_ms == std::optional<double>(0.133));
  CHECK(evaluations[0].host_wall_ms == std::optional<double>(0.7));
  CHECK(evaluations[0].call_host_ms == std::optional<double>(0.05));
  CHECK(evaluations[0].launch_latency_ms == std::optional<double>(0.06));
  CHECK(evaluations[0].start_span_ms == std::optional<double>(0.19));
  CHECK_FALSE(evaluations[1].call_host_ms.has_value());
  CHECK(evaluations[1].status == Verdict::compile_failed);
  CHECK_FALSE(evaluations[1].compiled);
  CHECK(evaluations[1].error_message == std::optional<std::string>("error: expected ';'"));
  CHECK(details_json(evaluations[1]) == "{}");
  (void)s1;
}

TEST_CASE("a reopened run reports which samples are already done") {
  TempDir dir;
  const std::string path = dir.file("results.db");
  std::int64_t run = 0;
  {
    Store store = open_store(path);
    run = require_ok(store.create_run(sample_run()));
    require_ok(store.add_problems(run, {problem(1, 1, "Add"), problem(2, 1, "Mul")}));
    require_ok(store.insert_sample(new_sample(run, 1, 0)));
    require_ok(store.insert_sample(new_sample(run, 1, 1)));
    require_ok(store.insert_sample(new_sample(run, 2, 0, false)));
    // A process killed here loses only the sample in flight.
  }
  Store store = open_store(path);
  const auto done = require_ok(store.done_samples(run));
  const std::set<std::pair<dicebench::ProblemKey, int>> expected = {{{1, 1}, 0}, {{1, 1}, 1}, {{1, 2}, 0}};
  CHECK(done == expected);
  CHECK(done.count({{1, 2}, 1}) == 0);
  require_ok(store.add_problems(run, {problem(1, 1, "Add"), problem(2, 1, "Mul")}));
  require_ok(store.insert_sample(new_sample(run, 2, 1)));
  CHECK(require_ok(store.done_samples(run)).size() == 4);
  CHECK_FALSE(store.done_samples(99).ok());
}

TEST_CASE("verdict and run status names round-trip") {
  for (Verdict verdict : kAllVerdicts) CHECK(parse_verdict(verdict_name(verdict)) == verdict);
  CHECK(verdict_name(Verdict::output_mismatch) == "output_mismatch");
  CHECK_FALSE(parse_verdict("wrong").has_value());
  CHECK(parse_run_status("interrupted") == RunStatus::interrupted);
  CHECK_FALSE(parse_run_status("paused").has_value());
}

TEST_CASE("evaluation flags, margins and problem traits are stored and read back") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  const auto run = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(run, {problem(1, 1, "Add"), problem(2, 1, "Mul")}));
  const auto s0 = require_ok(store.insert_sample(new_sample(run, 1, 0)));
  StoredEvaluation e;
  e.sample = s0;
  e.status = Verdict::correct;
  e.compiled = e.correct = true;
  e.device = "cuda:0";
  e.margin = 0.75;
  e.memory_floor_ms = 0.05;
  e.flags = {{"borderline", "margin 0.75"}, {"below_memory_floor", "0.01 ms, floor 0.05 ms"}};
  require_ok(store.insert_evaluation(e));
  require_ok(store.set_problem_traits(run, {1, 1}, R"(["zeros_pass"])"));

  const auto evaluations = require_ok(store.evaluations(run));
  REQUIRE(evaluations.size() == 1);
  CHECK(evaluations[0].margin == std::optional<double>(0.75));
  CHECK(evaluations[0].memory_floor_ms == std::optional<double>(0.05));
  REQUIRE(evaluations[0].flags.size() == 2);
  CHECK(evaluations[0].flags[0].name == flag_name(EvaluationFlag::below_memory_floor));  // vocabulary order
  CHECK(evaluations[0].flags[1].detail == "margin 0.75");
  const auto problems = require_ok(store.problems(run));
  CHECK(problems[0].traits_json == std::optional<std::string>(R"(["zeros_pass"])"));
  CHECK_FALSE(problems[1].traits_json);
  auto missing = store.set_problem_traits(run, {1, 9}, "[]");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("cannot store the traits of problem 1/9 in run 1: no such problem") !=
        std::string::npos);

  for (EvaluationFlag flag : kAllEvaluationFlags) CHECK(parse_flag(flag_name(flag)) == flag);
  for (ProblemTrait trait : kAllProblemTraits) CHECK(parse_trait(trait_name(trait)) == trait);
  CHECK(is_borderline_margin(0.5));
  CHECK(is_borderline_margin(2.0));
  CHECK_FALSE(is_borderline_margin(0.49));
  CHECK_FALSE(is_borderline_margin(2.01));
}
