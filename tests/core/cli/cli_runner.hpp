// Runs the dicebench executable from tests: in the foreground with captured output, or in the
// background so a test can kill it; checks a failed run's one error line.
#pragma once

#include <sys/types.h>
#include <string>
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

// Checks (doctest) a non-zero exit and exactly one error line, the last thing on stderr, saying `part`.
void check_one_error_line(const CliResult& result, const std::string& part);

}  // namespace dicebench::test
