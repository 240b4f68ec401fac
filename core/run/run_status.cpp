// The run's status through its lifecycle, forward only.
#include "core/run/run_status.hpp"

namespace dicebench::run {

results::RunStatus status_of(StageEnd end) {
  switch (end) {
    case StageEnd::completed: return results::RunStatus::finished;
    case StageEnd::interrupted: return results::RunStatus::interrupted;
    case StageEnd::failed: return results::RunStatus::failed;
  }
  return results::RunStatus::failed;
}

Result<void> RunStatusKeeper::reopen() {
  if (finished_before_ || status_ == results::RunStatus::running) return {};
  return set(results::RunStatus::running);
}

Result<void> RunStatusKeeper::end(StageEnd end) {
  if (finished_before_) return {};
  return set(status_of(end));
}

Result<void> RunStatusKeeper::set(results::RunStatus status) {
  DICEBENCH_TRY(store_.finish_run(run_, status));
  status_ = status;
  return {};
}

}  // namespace dicebench::run
