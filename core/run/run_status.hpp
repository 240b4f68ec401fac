// A run's status moves forward only: a new run, or a resumed one that had not finished, is running
// through generation and evaluation and ends finished, interrupted or failed. A run that finished
// before (generated under --generate-only, evaluated now) stays finished whatever follows; the
// store refuses to move a finished run back.
#pragma once

#include "core/base/result.hpp"
#include "results/store/store.hpp"

#include <cstdint>

namespace dicebench::run {

// How a stage ended.
enum class StageEnd { completed, interrupted, failed };

// The status a run ends with when its last stage ended so (completed: finished).
RunStatus status_of(StageEnd end);

// The stored status of the run this process works on.
class RunStatusKeeper {
 public:
  // `stored`: the run's status when this process took it up (running for a run it created).
  RunStatusKeeper(results::Store& store, int64_t run, RunStatus stored) : store_(store), run_(run), status_(stored) {}

  // A resumed run that had not finished (interrupted, failed, or killed while running) runs again.
  Result<void> reopen();
  // Records how the run ended, unless it had finished before.
  Result<void> end(StageEnd end);
  RunStatus status() const { return status_; }

 private:
  Result<void> set(RunStatus status);

  results::Store& store_;
  int64_t run_;
  RunStatus status_;
  bool finished_before_ = status_ == RunStatus::finished;
};

}  // namespace dicebench::run
