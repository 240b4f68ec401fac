// Tests of the run's status through its lifecycle: forward only, a finished run stays finished.
#include "core/run/run_status.hpp"

#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;
using run::RunStatusKeeper;
using run::StageEnd;

namespace {

RunStatus stored_status(Store& store, int64_t id) { return require_ok(store.run(id)).status; }

}  // namespace

TEST_CASE("a stage's end maps to the run's status") {
  CHECK(run::status_of(StageEnd::completed) == RunStatus::finished);
  CHECK(run::status_of(StageEnd::interrupted) == RunStatus::interrupted);
  CHECK(run::status_of(StageEnd::failed) == RunStatus::failed);
}

TEST_CASE("a new run is running until it ends, and ends once") {
  TempDir dir;
  Store store = open_store(dir.file("runs.db"));
  const auto id = require_ok(store.create_run(sample_run()));
  RunStatusKeeper status(store, id, RunStatus::running);
  require_ok(status.reopen());  // nothing to reopen
  CHECK(stored_status(store, id) == RunStatus::running);
  CHECK_FALSE(require_ok(store.run(id)).finished.has_value());
  require_ok(status.end(StageEnd::completed));
  CHECK(stored_status(store, id) == RunStatus::finished);
  CHECK(status.status() == RunStatus::finished);
  CHECK(require_ok(store.run(id)).finished.has_value());
}

TEST_CASE("a resumed run that had stopped runs again and ends as its stages end") {
  TempDir dir;
  Store store = open_store(dir.file("runs.db"));
  for (const RunStatus stopped : {RunStatus::interrupted, RunStatus::failed}) {
    const auto id = require_ok(store.create_run(sample_run()));
    require_ok(store.finish_run(id, stopped));
    RunStatusKeeper status(store, id, stopped);
    require_ok(status.reopen());
    CHECK(stored_status(store, id) == RunStatus::running);
    CHECK_FALSE(require_ok(store.run(id)).finished.has_value());
    require_ok(status.end(StageEnd::interrupted));
    CHECK(stored_status(store, id) == RunStatus::interrupted);
  }
}

TEST_CASE("a run that finished before never goes back to running, whatever its evaluation does") {
  TempDir dir;
  Store store = open_store(dir.file("runs.db"));
  const auto id = require_ok(store.create_run(sample_run()));
  require_ok(store.finish_run(id, RunStatus::finished));  // --generate-only
  const auto finished_at = require_ok(store.run(id)).finished;
  for (const StageEnd end : {StageEnd::completed, StageEnd::interrupted, StageEnd::failed}) {
    RunStatusKeeper status(store, id, RunStatus::finished);
    require_ok(status.reopen());
    CHECK(stored_status(store, id) == RunStatus::finished);
    require_ok(status.end(end));
    CHECK(stored_status(store, id) == RunStatus::finished);
    CHECK(require_ok(store.run(id)).finished == finished_at);
  }
}
