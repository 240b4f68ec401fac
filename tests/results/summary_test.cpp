// `dicebench show RUN`: the run's record, pretty-printed configuration and per-problem verdicts.
#include <doctest/doctest.h>

#include "results/run_summary.hpp"
#include "test_support.hpp"

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
  NewEvaluation evaluation;
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
  CHECK(text.find("id  level  name       samples  verdicts\n") != std::string::npos);
  CHECK(text.find(" 1      1  Add              2  extraction_failed 1, correct 1\n") != std::string::npos);
  CHECK(text.find(" 2      1  Mul              1  pending 1\n") != std::string::npos);
  CHECK(text.find(" 3      2  Unsampled        0  \u2013\n") != std::string::npos);

  auto missing = format_run_summary(store, 5);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "no run 5 in " + store.path());
}
