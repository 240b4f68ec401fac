// Runs the dicebench executable from tests.
#include "cli_runner.hpp"

#include "core/base/text.hpp"
#include "core/base/whole_file.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

extern char** environ;

namespace dicebench::test {
namespace {

pid_t spawn(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& out_path,
            const std::string& err_path) {
  std::vector<std::string> argv_strings = {DICEBENCH_CLI};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv_strings[0]);
  return pid;
}

}  // namespace

int wait_cli(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  const std::string base = "/tmp/dicebench-cli-" + std::to_string(getpid());
  CliResult result;
  result.exit_code = wait_cli(spawn(args, env, base + ".out", base + ".err"));
  result.out = read_whole_file(base + ".out").value_or("");
  result.err = read_whole_file(base + ".err").value_or("");
  unlink((base + ".out").c_str());
  unlink((base + ".err").c_str());
  return result;
}

pid_t start_cli(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return spawn(args, env, "/dev/null", "/dev/null");
}

void check_one_error_line(const CliResult& r, const std::string& part) {
  CHECK(r.exit_code != 0);
  const auto lines = split(std::string(trim(r.err)), '\n');
  const auto errors = std::count_if(lines.begin(), lines.end(),
                                    [](const std::string& l) { return l.rfind("dicebench: error: ", 0) == 0; });
  CHECK_MESSAGE(errors == 1, r.err);
  CHECK_MESSAGE(lines.back().rfind("dicebench: error: ", 0) == 0, r.err);
  CHECK_MESSAGE(lines.back().find(part) != std::string::npos, r.err);
}

}  // namespace dicebench::test
