// A worker process ends with the process that started it, even while it reads nothing: the host
// killed while a reference runs a problem that never returns left that worker running, orphaned,
// for minutes (harness/worker/main.cpp, end_with_parent).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

TEST_CASE("a worker whose parent is killed ends within seconds, its channel still open") {
  const std::string worker = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-worker";
  int channel[2], report[2];
  REQUIRE(pipe(channel) == 0);  // this process keeps the write end: the worker never sees its channel end
  REQUIRE(pipe(report) == 0);
  const pid_t parent = fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {  // the worker's parent: starts it, says its pid, and waits to be killed
    const pid_t child = fork();
    if (child == 0) {
      dup2(channel[0], STDIN_FILENO);
      const int null_fd = open("/dev/null", O_WRONLY);
      dup2(null_fd, STDOUT_FILENO);
      execl(worker.c_str(), worker.c_str(), "--role", "reference", "--device", "cpu", static_cast<char*>(nullptr));
      _exit(127);
    }
    (void)!write(report[1], &child, sizeof child);
    pause();
    _exit(0);
  }
  close(channel[0]);
  close(report[1]);
  pid_t worker_pid = 0;
  REQUIRE(read(report[0], &worker_pid, sizeof worker_pid) == static_cast<ssize_t>(sizeof worker_pid));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE(kill(worker_pid, 0) == 0);  // started, and waiting on its open channel
  REQUIRE(kill(parent, SIGKILL) == 0);
  waitpid(parent, nullptr, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    gone = kill(worker_pid, 0) != 0 && errno == ESRCH;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!gone) kill(worker_pid, SIGKILL);
  CHECK(gone);
  close(channel[1]);
  close(report[0]);
}
