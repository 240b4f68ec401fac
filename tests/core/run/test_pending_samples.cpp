// Tests of which samples the evaluation stage evaluates.
#include "core/run/pending_samples.hpp"

#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

TEST_CASE("pending samples are those without an evaluation, in stored order") {
  TempDir dir;
  Store store = open_store(dir.file("runs.db"));
  const auto id = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(id, {problem(1, 1, "Add"), problem(2, 1, "ReluSquare")}));
  const auto first = require_ok(store.insert_sample(new_sample(id, 1, 0)));
  const auto second = require_ok(store.insert_sample(new_sample(id, 1, 1, false)));
  const auto third = require_ok(store.insert_sample(new_sample(id, 2, 0)));
  StoredEvaluation evaluation;
  evaluation.sample = first;
  evaluation.status = Verdict::correct;
  evaluation.compiled = evaluation.correct = true;
  evaluation.device = "cpu";
  require_ok(store.insert_evaluation(evaluation));

  const std::map<ProblemKey, run::ProblemSource> problems = {{{1, 1}, {"src1", "content-1"}},
                                                             {{1, 2}, {"src2", "content-2"}}};
  const auto pending = require_ok(run::pending_samples(store, id, problems));
  REQUIRE(pending.size() == 2);
  CHECK(pending[0].id == second);
  CHECK_FALSE(pending[0].candidate.has_value());
  CHECK(pending[1].id == third);
  CHECK(pending[1].candidate == std::optional<std::string>("class ModelNew: pass\n"));
  CHECK(require_ok(run::unevaluated_samples(store, id)) == 2);

  // A candidate of a problem the suite no longer has is an error; a sample without one is not.
  auto missing = run::pending_samples(store, id, {{{1, 1}, {"src1", "content-1"}}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message ==
        "run " + std::to_string(id) + " has a sample of problem 1/2, which the suite no longer has");
}
