// Runs the dicebench executable from tests: in the foreground with captured output, or in the
// background so a test can kill it.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace dicebench::test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `dicebench args...` with extra environment entries ("KEY=VALUE"), waiting for it.
CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// Starts `dicebench args...` with output discarded; returns its pid.
pid_t start_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
// Waits for a started process; returns its exit code, or 128 + signal.
int wait_cli(pid_t pid);

}  // namespace dicebench::test
