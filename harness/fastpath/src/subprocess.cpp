// Child processes for the fast compile path (subprocess.hpp).
#include "harness/fastpath/src/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace dicebench::fastpath {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Result<ChildProcess> ChildProcess::start(const std::vector<std::string>& argv) {
  if (argv.empty()) return make_error("no command");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group, so a timeout can end the compiler and whatever it started.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The C locale: plain ASCII quotes in compiler messages, whatever the caller's locale.
  static char c_locale[] = "LC_ALL=C";
  std::vector<char*> env{c_locale};
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "LC_ALL=", 7) != 0) env.push_back(*e);
  env.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return make_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  ChildProcess child;
  child.pid_ = pid;
  child.output_fd_ = fds[0];
  child.started_ = now_seconds();
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), output_fd_(other.output_fd_), started_(other.started_) {
  other.pid_ = -1;
  other.output_fd_ = -1;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (output_fd_ >= 0) close(output_fd_);
}

ProcessOutcome ChildProcess::finish(double timeout_seconds) {
  ProcessOutcome outcome;
  char buffer[8192];
  bool open = true;
  while (open) {
    double left = timeout_seconds - (now_seconds() - started_);
    if (left <= 0) {
      outcome.timed_out = true;
      kill(-pid_, SIGKILL);
      break;
    }
    pollfd p{output_fd_, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t n = read(output_fd_, buffer, sizeof(buffer));
    if (n > 0) {
      if (outcome.output.size() < (1u << 20)) outcome.output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      open = false;
    }
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  pid_ = -1;
  close(output_fd_);
  output_fd_ = -1;
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  outcome.seconds = now_seconds() - started_;
  return outcome;
}

Result<ProcessOutcome> run_process(const std::vector<std::string>& argv, double timeout_seconds) {
  auto child = ChildProcess::start(argv);
  if (!child) return child.error();
  return child.value().finish(timeout_seconds);
}

}  // namespace dicebench::fastpath
