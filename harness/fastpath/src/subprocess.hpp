// Runs a compiler as a child process (posix_spawn, no shell) and collects its output.
#pragma once

#include <sys/types.h>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::fastpath {

struct ProcessOutcome {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that ended it, if any
  bool timed_out = false;
  std::string output;  // stdout and stderr together
  double seconds = 0;
};

// A started child; finish() waits for it (killing it after `timeout_seconds`).
class ChildProcess {
 public:
  static Result<ChildProcess> start(const std::vector<std::string>& argv);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();
  ProcessOutcome finish(double timeout_seconds);

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int output_fd_ = -1;
  double started_ = 0;
};

// start() then finish().
Result<ProcessOutcome> run_process(const std::vector<std::string>& argv, double timeout_seconds);

}  // namespace dicebench::fastpath
