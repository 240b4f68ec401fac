// Tests of reading a stored run back for --resume: its settings, what it stored, and the refusal
// of a run with nothing left to do.
#include "core/run/resume.hpp"

#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

namespace {

constexpr const char* kStoredConfig =
    R"({"settings":{"model":"test-slow","suite":"kernelbench-l1","kernelbench.root":"/old"},"samples":{"1/1":2,"1/2":2},)"
    R"("seed":7,"batch_size":1,"suite":{},"model":{"model":"test-slow"}})";

int64_t stored_run(Store& store, RunStatus status, int samples, int evaluated) {
  NewRun record = sample_run();
  record.config_json = kStoredConfig;
  const auto id = require_ok(store.create_run(record));
  require_ok(store.add_problems(id, {problem(1, 1, "Add"), problem(2, 1, "ReluSquare")}));
  for (int i = 0; i < samples; ++i) {
    const auto sample = require_ok(store.insert_sample(new_sample(id, 1 + i / 2, i % 2)));
    if (i >= evaluated) continue;
    StoredEvaluation evaluation;
    evaluation.sample = sample;
    evaluation.status = Verdict::correct;
    evaluation.compiled = true;
    evaluation.correct = true;
    evaluation.device = "cpu";
    require_ok(store.insert_evaluation(evaluation));
  }
  require_ok(store.finish_run(id, status));
  return id;
}

}  // namespace

TEST_CASE("a stopped run resumes with its own settings and what it stored") {
  TempDir dir;
  Store store = open_store(dir.file("runs.db"));
  const auto id = stored_run(store, RunStatus::interrupted, 3, 0);
  const auto resumed = require_ok(run::resume_run(store, id, false));
  CHECK(resumed.status == RunStatus::interrupted);
  CHECK(resumed.config.get("model") == std::optional<std::string>("test-slow"));
  CHECK(resumed.config.get("kernelbench.root") == std::optional<std::string>("/old"));
  CHECK(resumed.config.get("problems") == std::optional<std::string>("1/1-2"));
  CHECK(resumed.config.get("samples") == std::optional<std::string>("2"));
  CHECK(resumed.config.get("seed") == std::optional<std::string>("7"));
  CHECK(resumed.state.run == id);
  CHECK(resumed.state.done.size() == 3);
  CHECK(resumed.state.done.count({ProblemKey{1, 2}, 0}) == 1);
  CHECK(resumed.state.model_settings_json == R"({"model":"test-slow"})");
}

TEST_CASE("a finished run resumes only to evaluate what it has not evaluated") {
  TempDir dir;
  Store store = open_store(dir.file("runs.db"));
  const auto generated = stored_run(store, RunStatus::finished, 4, 1);  // --generate-only, then partly evaluated
  CHECK(require_ok(run::resume_run(store, generated, false)).status == RunStatus::finished);
  auto again = run::resume_run(store, generated, true);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().message == "run " + std::to_string(generated) + " is already finished; nothing to resume");

  const auto done = stored_run(store, RunStatus::finished, 4, 4);
  auto nothing = run::resume_run(store, done, false);
  REQUIRE_FALSE(nothing.ok());
  CHECK(nothing.error().message == "run " + std::to_string(done) + " is already finished; nothing to resume");

  auto missing = run::resume_run(store, 99, false);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "no run 99 in " + dir.file("runs.db"));
}

TEST_CASE("a run whose stored settings cannot be read is refused, naming the run") {
  TempDir dir;
  Store store = open_store(dir.file("runs.db"));
  NewRun record = sample_run();
  record.config_json = R"({"samples":3})";
  const auto id = require_ok(store.create_run(record));
  auto resumed = run::resume_run(store, id, false);
  REQUIRE_FALSE(resumed.ok());
  CHECK(resumed.error().message.rfind("run " + std::to_string(id) + ": the run's stored configuration cannot be read",
                                      0) == 0);
}
