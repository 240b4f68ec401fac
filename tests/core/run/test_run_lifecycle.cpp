// Tests of the whole lifecycle without the CLI: generate-only runs of the test-slow model on the
// project's own KernelBench problems, a failed run resumed to the end, and what the lifecycle
// refuses before it stores anything.
#include "core/run/run_lifecycle.hpp"

#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

namespace {

run::RunRequest generate_only(const std::string& db) {
  run::RunRequest request;
  request.db = db;
  request.generate_only = true;
  request.plugin_dirs = {DICEBENCH_TEST_PLUGINS, DICEBENCH_PLUGIN_DIR};
  request.settings.set("model", "test-slow");
  request.settings.set("suite", "kernelbench-l1");
  request.settings.set("kernelbench.root", std::string(DICEBENCH_TEST_DATA_DIR) + "/kernelbench");
  request.settings.set("samples", "2");
  request.settings.set("seed", "7");
  return request;
}

}  // namespace

TEST_CASE("a generate-only run is recorded, generated and finished, and cannot be resumed") {
  TempDir dir;
  const std::string db = dir.file("runs.db");
  std::vector<int64_t> generated;
  const run::RunEvents events{[&](const run::RunOutcome& o) { generated.push_back(o.run); }};
  const auto outcome = require_ok(run::run_lifecycle(generate_only(db), events));
  CHECK(generated == std::vector<int64_t>{outcome.run});
  CHECK(outcome.status == RunStatus::finished);
  CHECK(outcome.model_spec == "test-slow");
  CHECK(outcome.suite_name == "kernelbench-l1");
  CHECK(outcome.problems == 3);
  CHECK(outcome.samples == 6);
  CHECK(outcome.generation.stored == 6);
  CHECK(outcome.generation.end == run::StageEnd::completed);
  CHECK_FALSE(outcome.evaluation.has_value());
  CHECK_FALSE(outcome.report.has_value());
  {
    Store store = open_store(db);
    CHECK(require_ok(store.run(outcome.run)).status == RunStatus::finished);
    CHECK(require_ok(store.sample_count(outcome.run)) == 6);
  }

  run::RunRequest again;
  again.db = db;
  again.resume = outcome.run;
  again.generate_only = true;
  again.plugin_dirs = {DICEBENCH_TEST_PLUGINS, DICEBENCH_PLUGIN_DIR};
  auto refused = run::run_lifecycle(again);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "run 1 is already finished; nothing to resume");
}

TEST_CASE("a run that failed in generation is reopened when resumed and finishes") {
  TempDir dir;
  const std::string db = dir.file("runs.db");
  auto request = generate_only(db);
  request.settings.set("test-slow.fail_at", "2");
  const auto failed = require_ok(run::run_lifecycle(request));
  CHECK(failed.status == RunStatus::failed);
  CHECK(failed.error == "test-slow: failing on problem 2 as configured");
  CHECK(failed.generation.stored == 2);  // problem 1's samples
  {
    Store store = open_store(db);
    CHECK(require_ok(store.run(failed.run)).status == RunStatus::failed);
    // The model stops failing (as a model that failed for a passing reason would).
    REQUIRE(store.database()
                .exec("UPDATE runs SET config = json_remove(config, '$.settings.\"test-slow.fail_at\"')", "test")
                .ok());
  }

  run::RunRequest resume;
  resume.db = db;
  resume.resume = failed.run;
  resume.generate_only = true;
  resume.plugin_dirs = request.plugin_dirs;
  const auto resumed = require_ok(run::run_lifecycle(resume));
  CHECK(resumed.run == failed.run);
  CHECK(resumed.status == RunStatus::finished);
  CHECK(resumed.generation.already_done == 2);
  CHECK(resumed.generation.stored == 4);
  Store store = open_store(db);
  CHECK(require_ok(store.run(failed.run)).status == RunStatus::finished);
  CHECK(require_ok(store.sample_count(failed.run)) == 6);
}

TEST_CASE("what the lifecycle refuses before it stores anything") {
  TempDir dir;
  const std::string db = dir.file("runs.db");
  auto no_suite = generate_only(db);
  no_suite.settings = {};
  no_suite.settings.set("model", "test-slow");
  auto refused = run::run_lifecycle(no_suite);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "no suite given: pass --suite NAME (see dicebench list suites)");

  auto bad_eval = generate_only(db);
  bad_eval.generate_only = false;
  bad_eval.settings.set("eval.device", "tpu");
  refused = run::run_lifecycle(bad_eval);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "eval.device must be cpu or cuda, not 'tpu'");

  Store store = open_store(db);
  CHECK(require_ok(store.runs()).empty());
}
