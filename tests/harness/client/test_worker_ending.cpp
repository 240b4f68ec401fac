// Ending a worker (WorkerProcess::end): a worker asked to end answers shutdown.done, once it has
// zeroed the device memory it held (none on the CPU), and exits, and the host goes on at once; one
// that does not answer (silent_worker.py) is killed when kShutdownGrace has passed, not later.
#include <doctest/doctest.h>

#include <signal.h>
#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>

#include "core/spec/protocol.hpp"
#include "harness/client/worker_process.hpp"

namespace fs = std::filesystem;
using dicebench::harness::kShutdownGrace;
using dicebench::harness::WorkerEnding;
using dicebench::harness::WorkerOptions;
using dicebench::harness::WorkerProcess;

namespace {

struct Folder {
  fs::path path;
  Folder() {
    std::string pattern = (fs::temp_directory_path() / "dicebench-ending-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()));
    path = pattern;
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

double seconds_since(std::chrono::steady_clock::time_point began) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

bool gone(int pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

WorkerOptions silent_worker() {
  setenv("SILENT_WORKER_PROTOCOL", std::to_string(dicebench::protocol::kVersion).c_str(), 1);
  WorkerOptions options;
  options.executable = std::string(DICEBENCH_SOURCE_DIR) + "/tests/harness/client/silent_worker.py";
  options.role = "candidate";
  return options;
}

}  // namespace

TEST_CASE("a worker asked to end answers shutdown.done and exits, and the host does not wait out the grace") {
  const Folder folder;
  for (const char* role : {"candidate", "reference"}) {
    CAPTURE(role);
    WorkerOptions options;
    options.executable = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-worker";
    options.role = role;
    options.log_path = (folder.path / (std::string(role) + ".log")).string();
    auto worker = WorkerProcess::start(options);
    REQUIRE_MESSAGE(worker, (worker ? "" : worker.error().message));
    const int pid = (*worker)->hello().value("pid", 0);
    const auto began = std::chrono::steady_clock::now();
    CHECK((*worker)->end() == WorkerEnding::answered);
    CHECK(seconds_since(began) < 3.0);
    const auto& answer = (*worker)->shutdown_reply();
    CHECK(answer.value("type", "") == "shutdown.done");
    CHECK(answer.value("zeroed_bytes", -1) == 0);
    CHECK(answer.value("message", "?").empty());
    CHECK_FALSE((*worker)->alive());
    CHECK(gone(pid));
  }
}

TEST_CASE("a worker that does not answer shutdown is killed once the grace has passed") {
  const WorkerOptions options = silent_worker();
  auto worker = WorkerProcess::start(options);
  REQUIRE_MESSAGE(worker, (worker ? "" : worker.error().message));
  const int pid = (*worker)->hello().value("pid", 0);
  REQUIRE(pid > 0);
  const auto began = std::chrono::steady_clock::now();
  CHECK((*worker)->end() == WorkerEnding::killed);
  const double waited = seconds_since(began);
  CHECK(waited >= std::chrono::duration<double>(kShutdownGrace).count() - 0.05);
  CHECK(waited < std::chrono::duration<double>(kShutdownGrace).count() + 3.0);
  CHECK((*worker)->shutdown_reply().is_null());
  CHECK(gone(pid));
}

TEST_CASE("a dead worker is only reaped") {
  const WorkerOptions options = silent_worker();
  auto worker = WorkerProcess::start(options);
  REQUIRE(worker);
  (*worker)->kill();
  const auto began = std::chrono::steady_clock::now();
  CHECK((*worker)->end() == WorkerEnding::killed);
  CHECK(seconds_since(began) < 1.0);
}
