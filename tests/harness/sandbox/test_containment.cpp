// Containment through `dicebench run`: one hostile candidate per escape class among honest ones,
// each judged while the host, the other candidates and the machine stay untouched. Where this
// machine refuses a protection (dicebench-sandbox --probe says which), the tests check the degraded
// behaviour the run reports instead of the protected one. Built twice: on the CPU (integration),
// and with DICEBENCH_CONTAINMENT_ON_CUDA the hostile set alone on CUDA (gpu, test_containment_gpu).
#include "tests/core/cli/cli_runner.hpp"
#include "tests/test_files.hpp"

#include "harness/sandbox/protections.hpp"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <pwd.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace dicebench;
using test::run_cli;
using test::scalar;
namespace fs = std::filesystem;

namespace {

const std::string kKernelBench = std::string(DICEBENCH_TEST_DATA_DIR) + "/kernelbench";
#ifdef DICEBENCH_CONTAINMENT_ON_CUDA
const std::string kDevice = "cuda";
const std::string kMemoryMax = "8GiB";  // a CUDA process maps GBs of libraries before any candidate code
#else
const std::string kDevice = "cpu";
const std::string kMemoryMax = "1GiB";
#endif
const std::string kSandbox = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-sandbox";

// What the probe says this machine allows (the default limits).
nlohmann::json probe() {
  const std::string out = fs::temp_directory_path() / ("dicebench-probe-" + std::to_string(getpid()) + ".json");
  const std::string command = kSandbox + " --probe --memory-max 1073741824 --pids-max 512 > " + out + " 2>/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  const std::string text = test::read_text(out);
  fs::remove(out);
  return nlohmann::json::parse(text).at("protections");
}

bool active(const nlohmann::json& protections, const char* name) {
  return protections.at(name).at("active").get<bool>();
}

// A candidate for 1_Add (x + y) that first does `hostile` (Python, at import) and is otherwise right.
std::string add_candidate(const std::string& hostile, const std::string& in_forward = "") {
  return "import os, sys, signal, socket, subprocess, time, pwd\nimport torch, torch.nn as nn\n" + hostile +
         "\nclass ModelNew(nn.Module):\n    def forward(self, x, y):\n" + in_forward + "        return x + y\n";
}

// Processes alive anywhere on this machine whose command line holds `marker`.
int processes_with(const std::string& marker) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string cmdline = read_whole_file(entry.path() / "cmdline").value_or("");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(marker) != std::string::npos && cmdline.find("python3 -c") == std::string::npos) ++count;
  }
  return count;
}

struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    socklen_t length = sizeof address;
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
    REQUIRE(listen(fd, 8) == 0);
  }
  bool was_reached() const { return accept(fd, nullptr, nullptr) >= 0; }
  ~Listener() { close(fd); }
};

}  // namespace

TEST_CASE("hostile candidates among honest ones: the host, the machine and other jobs stay untouched") {
  const auto protections = probe();
  test::TempDir tmp("containment");
  const std::string marker = "dbx" + std::to_string(getpid());
  const std::string home = getpwuid(getuid())->pw_dir;
  const std::string cache = tmp / "fastpath-cache";
  fs::create_directories(cache);
  const std::vector<std::string> targets = {
      home + "/" + marker, home + "/.cache/" + marker, cache + "/" + marker, (fs::current_path() / marker).string(),
      "/tmp/" + marker,    "/var/tmp/" + marker,       "/dev/shm/" + marker, (tmp.path / marker).string()};
  for (const auto& t : targets) fs::remove(t);
  std::string writes = "for path in [";
  for (const auto& t : targets) writes += "'" + t + "', ";
  writes += "]:\n    try:\n        open(path, 'w').write('planted')\n    except OSError:\n        pass\n";
  Listener listener;
  const std::string replay = tmp / "replay";
  const bool pid_namespace = active(protections, "pid_namespace");
  std::vector<std::string> samples = {
      add_candidate(""),
      // Signals every process it can see, its parent first.
      pid_namespace ? add_candidate("try:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept OSError:\n    pass\n"
                                    "for p in os.listdir('/proc'):\n    if p.isdigit() and int(p) != os.getpid():\n"
                                    "        try:\n            os.kill(int(p), signal.SIGKILL)\n        except "
                                    "OSError:\n            pass\n")
                    : add_candidate(""),
      // Children that leave its session and sleep on.
      add_candidate("for _ in range(3):\n    subprocess.Popen(['sleep', '" + std::to_string(900000 + getpid() % 1000) +
                    "'], start_new_session=True)\n"),
      add_candidate(writes),
      add_candidate("s = socket.socket()\ns.settimeout(2)\ntry:\n    s.connect(('127.0.0.1', " +
                    std::to_string(listener.port) + "))\n    s.sendall(b'escaped')\nexcept OSError:\n    pass\n"),
      // Host memory without bound, once it runs.
      add_candidate("", "        hog = []\n        while True:\n            hog.append(bytearray(64 << 20))\n"),
      add_candidate(""),
      // Processes without bound (2000 against a limit of 256), counting those the kernel allowed.
      add_candidate("children = []\ntry:\n    for _ in range(2000):\n        "
                    "children.append(subprocess.Popen(['sleep', '600']))\n"
                    "except OSError:\n    pass\nprint('forked', len(children), flush=True)\n"
                    "for child in children:\n    child.kill()\n    child.wait()\n"),
  };
  for (size_t i = 0; i < samples.size(); ++i)
    test::write(replay + "/level_1_problem_1_sample_" + std::to_string(i) + "_kernel.py", samples[i]);
  const std::string db = tmp / "runs.db";
  const auto started = std::chrono::steady_clock::now();
  const auto r = run_cli({"run",
                          "--model",
                          "replay:" + replay,
                          "--suite",
                          "kernelbench-l1",
                          "--kernelbench-root",
                          kKernelBench,
                          "--problems",
                          "1",
                          "--samples",
                          std::to_string(samples.size()),
                          "--device",
                          kDevice,
                          "--db",
                          db,
                          "--set",
                          "eval.memory_max=" + kMemoryMax,
                          "--set",
                          "eval.fastpath_cache=" + cache,
                          "--set",
                          "eval.timing_budget_s=0.2",
                          "--set",
                          "eval.pids_max=256"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("sandbox: active: ") != std::string::npos);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  MESSAGE(samples.size() << " candidates judged on " << kDevice << " in " << seconds << " s");

  auto verdict = [&](int sample) {
    return scalar(db, "select e.status from evaluations e join samples s on s.id = e.sample where s.sample_index = " +
                          std::to_string(sample));
  };
  CHECK(verdict(0) == "correct");
  CHECK(verdict(1) == "correct");  // every kill failed: it sees no process but its own namespace's
  CHECK(verdict(2) == "correct");
  CHECK(verdict(3) == "correct");
  CHECK(verdict(4) == "correct");
  CHECK(verdict(5) == "crashed");
  CHECK(scalar(db,
               "select e.error_message like '%memory limit%' from evaluations e join samples s on s.id = e.sample "
               "where s.sample_index = 5") == "1");
  CHECK(verdict(6) == "correct");
  // The fork bomb: refused by the kernel past the limit (a cgroup's pids.max), or killed by the
  // watchdog where no cgroup can be made.
  const std::string bomb = verdict(7);
  const std::string bomb_log = scalar(db,
                                      "select json_extract(e.details, '$.log_tail') from evaluations e join samples s "
                                      "on s.id = e.sample where s.sample_index = 7");
  if (active(protections, "process_limit") &&
      protections.at("process_limit").at("detail").get<std::string>().rfind("cgroup", 0) == 0) {
    CHECK_MESSAGE(bomb == "correct", bomb_log);
    const auto at = bomb_log.find("forked ");
    REQUIRE(at != std::string::npos);
    CHECK(std::stoi(bomb_log.substr(at + 7)) < 256);
  } else {
    CHECK(bomb == "crashed");
    CHECK(scalar(db,
                 "select e.error_message like '%process limit%' from evaluations e join samples s on s.id = e.sample "
                 "where s.sample_index = 7") == "1");
  }

  std::this_thread::sleep_for(std::chrono::seconds(1));
  CHECK(processes_with("sleep " + std::to_string(900000 + getpid() % 1000)) == 0);
  for (const auto& t : targets) {
    CHECK_MESSAGE(!fs::exists(t), t);
    fs::remove(t);
  }
  CHECK_FALSE(listener.was_reached());
  // The run records what the sandbox had.
  const auto repro = nlohmann::json::parse(scalar(db, "select repro from runs"));
  CHECK(repro.at("sandbox").at("mode") == "best");
  for (const auto name : sandbox::kProtections)
    CHECK(repro.at("sandbox").at("protections").contains(std::string(name)));
}

#ifndef DICEBENCH_CONTAINMENT_ON_CUDA
TEST_CASE("a host killed during evaluation resumes, and no job process outlives it") {
  test::TempDir tmp("containment-resume");
  const std::string replay = tmp / "replay";
  const std::string sleeper = std::to_string(800000 + getpid() % 1000);
  for (int i = 0; i < 3; ++i)
    test::write(
        replay + "/level_1_problem_1_sample_" + std::to_string(i) + "_kernel.py",
        add_candidate(i == 0 ? "subprocess.Popen(['sleep', '" + sleeper + "'], start_new_session=True)\ntime.sleep(8)\n"
                             : ""));
  const std::string db = tmp / "runs.db";
  const std::vector<std::string> args = {"run",
                                         "--model",
                                         "replay:" + replay,
                                         "--suite",
                                         "kernelbench-l1",
                                         "--kernelbench-root",
                                         kKernelBench,
                                         "--problems",
                                         "1",
                                         "--samples",
                                         "3",
                                         "--device",
                                         "cpu",
                                         "--db",
                                         db,
                                         "--set",
                                         "eval.timing_budget_s=0.2",
                                         "--set",
                                         "eval.prefetch=1"};
  const pid_t host = test::start_cli(args);
  // Killed while the first candidate sleeps in its load.
  for (int i = 0; i < 200 && processes_with("sleep " + sleeper) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(processes_with("sleep " + sleeper) > 0);
  kill(host, SIGKILL);
  test::wait_cli(host);
  // The job dies with its supervisor's group (the init is killed with the supervisor).
  for (int i = 0; i < 50 && processes_with("sleep " + sleeper) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto protections = probe();
  if (active(protections, "pid_namespace")) CHECK(processes_with("sleep " + sleeper) == 0);

  const auto resumed = run_cli({"run", "--resume", "1", "--db", db});
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(scalar(db, "select count(*) from evaluations") == "3");
  CHECK(scalar(db, "select status from runs") == "finished");
}

TEST_CASE("eval.sandbox: require runs only with every protection, off says so, anything else is one error line") {
  const auto protections = probe();
  bool complete = true;
  for (const auto name : sandbox::kProtections) complete &= active(protections, std::string(name).c_str());
  const std::string candidate = std::string(DICEBENCH_TEST_DATA_DIR) + "/eval/correct.py";
  const std::string problem = std::string(DICEBENCH_TEST_DATA_DIR) + "/eval/problem_linear_relu.py";
  const auto required = run_cli({"eval", "--problem", problem, "--candidate", candidate, "--device", "cpu", "--json",
                                 "--set", "eval.sandbox=require"});
  if (complete) {
    REQUIRE_MESSAGE(required.exit_code == 0, required.err);
    const auto j = nlohmann::json::parse(required.out);
    CHECK(j.at("verdict") == "correct");
    CHECK(j.at("sandbox").at("mode") == "require");
  } else {
    test::check_one_error_line(required, "eval.sandbox=require");
  }
  const auto off =
      run_cli({"eval", "--problem", problem, "--candidate", candidate, "--device", "cpu", "--set", "eval.sandbox=off"});
  REQUIRE_MESSAGE(off.exit_code == 0, off.err);
  CHECK(off.err.find("sandbox: off") != std::string::npos);  // a log line, as run's
  test::check_one_error_line(run_cli({"eval", "--problem", problem, "--candidate", candidate, "--device", "cpu",
                                      "--set", "eval.sandbox=strict"}),
                             "eval.sandbox must be best, require or off");
  test::check_one_error_line(run_cli({"eval", "--problem", problem, "--candidate", candidate, "--device", "cpu",
                                      "--set", "eval.memory_max=lots"}),
                             "eval.memory_max");
}

TEST_CASE("the launcher's probe reports exactly the protections of the vocabulary") {
  const auto protections = probe();
  CHECK(protections.size() == sandbox::kProtections.size());
  for (const auto name : sandbox::kProtections) CHECK(protections.contains(std::string(name)));
}
#endif  // DICEBENCH_CONTAINMENT_ON_CUDA
