// The run's status through its lifecycle, forward only.
#include "core/run/run_status.hpp"

namespace dicebench::run {

RunStatus status_of(StageEnd end) {
  switch (end) {
    case StageEnd::completed:
      return RunStatus::finished;
    case StageEnd::interrupted:
      return RunStatus::interrupted;
    case StageEnd::failed:
      return RunStatus::failed;
  }
  return RunStatus::failed;
}

Result<void> RunStatusKeeper::reopen() {
  if (finished_before_ || status_ == RunStatus::running) return {};
  return set(RunStatus::running);
}

Result<void> RunStatusKeeper::end(StageEnd end) {
  if (finished_before_) return {};
  return set(status_of(end));
}

Result<void> RunStatusKeeper::set(RunStatus status) {
  DICEBENCH_TRY(store_.finish_run(run_, status));
  status_ = status;
  return {};
}

}  // namespace dicebench::run
