// `dicebench show RUN`: the run's record, pretty-printed configuration, per-problem verdicts and
// traits, and per-sample verdicts (BORDERLINE marked), margins and flags.
#include <doctest/doctest.h>

#include "planned_run.hpp"
#include "results/report/run_summary.hpp"
#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

TEST_CASE("the run summary shows the record, the config and per-problem verdict counts") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  const auto run = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(run, {problem(1, 1, "Add"), problem(2, 1, "Mul"), problem(3, 2, "Unsampled")}));
  const auto s0 = require_ok(store.insert_sample(new_sample(run, 1, 0)));
  require_ok(store.insert_sample(new_sample(run, 1, 1, false)));
  require_ok(store.insert_sample(new_sample(run, 2, 0)));
  StoredEvaluation evaluation;
  evaluation.sample = s0;
  evaluation.status = Verdict::correct;
  evaluation.compiled = evaluation.correct = true;
  evaluation.device = "cuda:0";
  require_ok(store.insert_evaluation(evaluation));
  require_ok(store.finish_run(run, RunStatus::finished));

  const std::string text = require_ok(format_run_summary(store, run));
  INFO(text);
  CHECK(text.rfind("run 1: replay:/tmp/completions on kernelbench-l1, finished\n", 0) == 0);
  CHECK(text.find("  dicebench  0.1.0 (git abcdef123456)\n") != std::string::npos);
  CHECK(text.find("  gpu        NVIDIA H200 (driver \u2013, CUDA \u2013, torch \u2013)\n") != std::string::npos);
  CHECK(text.find("  seed       42\n") != std::string::npos);
  CHECK(text.find("config:\n  {\n    \"samples\": 3,\n    \"temperature\": 0.7\n  }\n") != std::string::npos);
  CHECK(text.find("problems: 3, samples: 3\n") != std::string::npos);
  CHECK(text.find("id  level  name       samples  verdicts                        traits\n") != std::string::npos);
  CHECK(text.find(" 1      1  Add              2  extraction_failed 1, correct 1  \u2013\n") != std::string::npos);
  CHECK(text.find(" 2      1  Mul              1  pending 1                       \u2013\n") != std::string::npos);
  CHECK(text.find(" 3      2  Unsampled        0  \u2013                               \u2013\n") != std::string::npos);
  CHECK(text.find("samples: 3\n") != std::string::npos);
  CHECK(text.find("      1       1  extraction_failed       \u2013        \u2013  \u2013\n") != std::string::npos);
  CHECK(text.find("      2       0  pending                 \u2013        \u2013  \u2013\n") != std::string::npos);

  auto missing = format_run_summary(store, 5);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "no run 5 in " + store.path());
}

TEST_CASE("show gives each problem's traits and each sample's margin and flags, borderline marked") {
  TempDir dir;
  Store store = open_store(dir.file("results.db"));
  const auto run = planned_run(
      store,
      {{1, 0, Verdict::correct, 2.0, 0.05, 0.93, {{EvaluationFlag::borderline, "margin 0.93"}}},
       {2, 0, Verdict::correct, 3.0, 0.05, 0.01, {{EvaluationFlag::below_memory_floor, "0.333 ms, floor 0.4 ms"}}},
       {3, 0, Verdict::output_mismatch, std::nullopt, 0.05, 12.0}},
      level_problems(3));
  set_traits(store, run, {{1, "[]"}, {2, R"(["zeros_pass","near_constant_output"])"}});
  const std::string text = require_ok(format_run_summary(store, run));
  INFO(text);
  CHECK(text.find("id  level  name  samples  verdicts           traits\n") != std::string::npos);
  CHECK(text.find(" 1      1  P1          1  correct 1          none\n") != std::string::npos);
  CHECK(text.find(" 2      1  P2          1  correct 1          zeros_pass, near_constant_output\n") !=
        std::string::npos);
  CHECK(text.find(" 3      1  P3          1  output_mismatch 1  \u2013\n") != std::string::npos);
  CHECK(text.find("samples: 3\n") != std::string::npos);
  CHECK(text.find("      1       0  correct BORDERLINE    0.93   2.000x  borderline (margin 0.93)\n") !=
        std::string::npos);
  CHECK(text.find(
            "      2       0  correct               0.01   3.000x  below_memory_floor (0.333 ms, floor 0.4 ms)\n") !=
        std::string::npos);
  CHECK(text.find("      3       0  output_mismatch         12        \u2013  \u2013\n") != std::string::npos);
  CHECK(text.find("BORDERLINE: margin within [0.5, 2]: new inputs may flip the verdict\n") != std::string::npos);
  CHECK(text.find("below_memory_floor: faster than moving its inputs") != std::string::npos);
  CHECK(text.find("excessive_speedup:") == std::string::npos);
}
