// The sandbox's system-call filter and Landlock rules against hostile programs of our own
// (hostile_calls.cpp): each refused call class is refused under dicebench-sandbox, and the same
// attempt run with the filter left out (--no-syscall-filter) succeeds or fails otherwise, except
// where this machine itself refuses it (said per case). Landlock: writes outside the job folder
// where namespaces cannot be had, the candidate's own thread names under /proc (CUDA's cuInit
// needs them), other processes' memory, TCP. Threads and subprocesses keep working. Built twice:
// on the CPU (integration) and with DICEBENCH_SANDBOX_TESTS_ON_CUDA, CUDA's and Triton's start-up
// under the same sandbox (gpu).
#include "harness/sandbox/protections.hpp"
#include "harness/sandbox/syscall_filter.hpp"
#include "tests/test_files.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace dicebench;

namespace {

const std::string kSandbox = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-sandbox";
const std::string kHostile = HOSTILE_CALLS;
const std::string kPython = DICEBENCH_PYTHON;

struct Ran {
  int status = -1;  // as waitpid gives it
  std::string out;  // stdout, trailing newline removed
  std::string err;
  bool exited(int code) const { return WIFEXITED(status) && WEXITSTATUS(status) == code; }
};

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  return text;
}

// Runs argv with stdout and stderr captured (stderr through a file, so neither pipe can block the other).
Ran run(const std::vector<std::string>& argv) {
  test::TempDir errors("hostile-stderr");
  const std::string err_path = errors.path / "stderr";
  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, STDERR_FILENO);
    close(out[0]);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  Ran r;
  r.out = read_all(out[0]);
  close(out[0]);
  waitpid(child, &r.status, 0);
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  r.err = test::read_text(err_path);
  return r;
}

// The checkout and the build stay visible where the sandbox's private /tmp would cover them (a
// checkout under /tmp: hostile_calls, the launcher and the Python environment), as the host keeps
// the worker's runtime visible.
const std::vector<std::string> kVisibleRuntime = {"--read-only", DICEBENCH_SOURCE_DIR, "--read-only",
                                                  DICEBENCH_BUILD_DIR};

// dicebench-sandbox around `program`, with the launcher's `options` (--no-syscall-filter, ...).
std::vector<std::string> sandboxed(const std::string& job_dir, const std::vector<std::string>& options,
                                   const std::vector<std::string>& program) {
  std::vector<std::string> argv{kSandbox, "--mode", "best", "--job-dir", job_dir};
  argv.insert(argv.end(), kVisibleRuntime.begin(), kVisibleRuntime.end());
  argv.insert(argv.end(), options.begin(), options.end());
  argv.emplace_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

// One attempt of hostile_calls under the sandbox: its outcome ("ok", "EPERM", ...).
[[maybe_unused]] std::string attempt(const std::string& job_dir, const std::vector<std::string>& options,
                                     const std::string& name, const std::string& arg = "") {
  std::vector<std::string> program{kHostile, name};
  if (!arg.empty()) program.push_back(arg);
  const Ran r = run(sandboxed(job_dir, options, program));
  INFO(name << ": " << r.err);
  CHECK(r.exited(0));
  return r.out;
}

[[maybe_unused]] nlohmann::json probe(const std::vector<std::string>& options = {}) {
  std::vector<std::string> argv{kSandbox, "--probe"};
  argv.insert(argv.end(), options.begin(), options.end());
  const Ran r = run(argv);
  REQUIRE_MESSAGE(r.exited(0), r.err);
  return nlohmann::json::parse(r.out).at("protections");
}

// Yama's kernel.yama.ptrace_scope (0 where Yama is absent): from 1, only descendants may be traced.
[[maybe_unused]] int yama_ptrace_scope() {
  std::ifstream scope("/proc/sys/kernel/yama/ptrace_scope");
  int value = 0;
  return scope >> value ? value : 0;
}

// The Landlock ABI of this kernel (0: none), as the launcher asks it.
[[maybe_unused]] long landlock_abi() {
  const long abi = syscall(444 /* landlock_create_ruleset */, nullptr, 0, 1u /* ..._VERSION */);
  return abi < 0 ? 0 : abi;
}

}  // namespace

#ifndef DICEBENCH_SANDBOX_TESTS_ON_CUDA
TEST_CASE("the probe reports every protection of the vocabulary, the filter and Landlock among them") {
  const auto protections = probe();
  CHECK(protections.size() == sandbox::kProtections.size());
  for (const auto name : sandbox::kProtections) CHECK_MESSAGE(protections.contains(std::string(name)), name);
  const auto& filter = protections.at("syscall_filter");
  CHECK_MESSAGE(filter.at("active").get<bool>(), filter.dump());
  // The detail names every class of kRefusedCalls.
  for (const auto& refused : sandbox::kRefusedCalls)
    CHECK_MESSAGE(filter.at("detail").get<std::string>().find(refused.refused_class) != std::string::npos,
                  refused.refused_class);
  const auto& landlock = protections.at("landlock");
  if (landlock_abi() >= 2) {
    CHECK_MESSAGE(landlock.at("active").get<bool>(), landlock.dump());
    CHECK(landlock.at("detail").get<std::string>().find("/proc") != std::string::npos);
  } else {
    MESSAGE("this kernel's Landlock ABI is " << landlock_abi() << ": landlock reported missing");
    CHECK_FALSE(landlock.at("active").get<bool>());
  }
}

TEST_CASE("each refused call class: refused under the sandbox, reaching the kernel without the filter") {
  test::TempDir job("hostile-calls");
  struct Case {
    const char* attempt;
    const char* arg;
    const char* refused;  // the filter's answer
    // Why this machine refuses it without the filter too, where it always does; nullptr where the
    // kernel may allow it (then an EPERM without the filter is reported, not hidden).
    const char* refused_anyway;
  };
  // Without the filter, and without Landlock (which refuses mount and ptrace outside the job's
  // domain on its own): the sandbox as it was before either.
  const std::vector<std::string> unprotected{"--no-syscall-filter", "--no-landlock"};
  const Case cases[] = {
      {"ptrace_sibling", "", "EPERM", nullptr},
      {"process_vm_readv", "", "EPERM", nullptr},
      {"perf_event_open", "", "EPERM", nullptr},
      {"bpf", "", "EPERM", nullptr},
      {"userfaultfd", "", "EPERM", nullptr},
      {"keyctl", "", "EPERM", nullptr},
      {"unshare", "", "EPERM", nullptr},
      {"setns", "", "EPERM", nullptr},
      {"clone", "", "EPERM", nullptr},
      {"clone", "clone3", "ENOSYS", nullptr},
      {"io_uring_setup", "", "EPERM", nullptr},
      {"init_module", "", "EPERM", "loading a module needs CAP_SYS_MODULE of the host (or modules in the kernel)"},
      {"mount", "", "EPERM", nullptr},
      {"raw_socket", "", "EPERM", nullptr},
  };
  int reached = 0;
  for (const auto& c : cases) {
    const std::string name = std::string(c.attempt) + (*c.arg ? std::string(" ") + c.arg : "");
    CAPTURE(name);
    const std::string filtered = attempt(job.path, {}, c.attempt, c.arg);
    CHECK(filtered == c.refused);
    const std::string unfiltered = attempt(job.path, unprotected, c.attempt, c.arg);
    if (c.refused_anyway) {
      MESSAGE(name << ": refused without the filter too (" << unfiltered << "): " << std::string(c.refused_anyway));
      CHECK(unfiltered != "ok");
    } else if (unfiltered == c.refused) {
      MESSAGE(name << ": this machine refuses it without the filter too (" << unfiltered
                   << "): the filter's refusal cannot be told apart here");
    } else {
      ++reached;
      MESSAGE(name << ": " << unfiltered << " without the filter, " << filtered << " with it");
    }
  }
  // Most classes reach the kernel: 12 of 14 on CI; where user namespaces are refused (Ubuntu's
  // AppArmor for users other than root) unshare, setns, clone and mount do not.
  CHECK(reached >= 7);
  // Landlock alone refuses mounts too (a second wall behind the filter).
  CHECK(attempt(job.path, {"--no-syscall-filter"}, "mount") == "EPERM");
}

#if defined(__x86_64__)
TEST_CASE("the 32-bit system-call gate cannot pass the filter by: the job is killed") {
  test::TempDir job("hostile-int80");
  const Ran filtered = run(sandboxed(job.path, {}, {kHostile, "int80"}));
  CHECK_MESSAGE((WIFSIGNALED(filtered.status) && WTERMSIG(filtered.status) == SIGSYS), filtered.out, filtered.err);
  const Ran unfiltered = run(sandboxed(job.path, {"--no-syscall-filter"}, {kHostile, "int80"}));
  REQUIRE(unfiltered.exited(0));
  if (unfiltered.out == "ENOSYS")
    MESSAGE("this kernel has no 32-bit system calls (ia32_emulation off)");
  else
    CHECK(unfiltered.out == "ok");
}
#endif

TEST_CASE("under the filter, threads and subprocesses still work (clone3 refused, glibc falls back to clone)") {
  test::TempDir job("hostile-threads");
  const std::string script =
      "import threading, subprocess, multiprocessing\n"
      "seen = []\n"
      "threads = [threading.Thread(target=seen.append, args=(i,)) for i in range(4)]\n"
      "[t.start() for t in threads]; [t.join() for t in threads]\n"
      "assert sorted(seen) == [0, 1, 2, 3]\n"
      "assert subprocess.run(['true']).returncode == 0\n"
      "assert subprocess.run(['sh', '-c', 'echo hi'], capture_output=True).stdout == b'hi\\n'\n"
      "ctx = multiprocessing.get_context('fork')\n"
      "p = ctx.Process(target=print, args=('child',)); p.start(); p.join(); assert p.exitcode == 0\n"
      "print('threads and subprocesses ok')\n";
  const Ran r = run(sandboxed(job.path, {}, {kPython, "-c", script}));
  CHECK_MESSAGE(r.exited(0), r.err);
  CHECK(r.out.find("threads and subprocesses ok") != std::string::npos);
  CHECK(attempt(job.path, {}, "clone", "clone3") == "ENOSYS");
}

TEST_CASE("eval.sandbox=require: a protection left out ends the launch before the program runs") {
  test::TempDir job("hostile-require");
  const std::vector<std::string> limits{"--memory-max", "1073741824", "--pids-max", "256"};
  const auto complete = [&] {
    const auto protections = probe(limits);
    for (const auto name : sandbox::kProtections)
      if (!protections.at(std::string(name)).at("active").get<bool>()) return false;
    return true;
  };
  auto required = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv{kSandbox, "--mode", "require", "--job-dir", job.path};
    argv.insert(argv.end(), kVisibleRuntime.begin(), kVisibleRuntime.end());
    argv.insert(argv.end(), limits.begin(), limits.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--", kHostile, "keyctl"});
    return run(argv);
  };
  for (const char* off : {"--no-syscall-filter", "--no-landlock"}) {
    CAPTURE(off);
    const Ran r = required({off});
    CHECK(r.exited(sandbox::kLauncherFailed));
    CHECK(r.out.empty());  // the program never ran
  }
  if (complete()) {
    const Ran r = required({});
    CHECK_MESSAGE(r.exited(0), r.err);
    CHECK(r.out == "EPERM");
  } else {
    MESSAGE("this machine lacks a protection: require refuses every launch here");
  }
}

TEST_CASE("Landlock: a job without namespaces still writes only to its own folder") {
  if (landlock_abi() < 2) {
    MESSAGE("no Landlock ABI 2 here");
    return;
  }
  // A launcher inside a sandbox gets no namespace at all (the outer filter refuses them), as on a
  // host without user namespaces: the mount view is gone, and Landlock alone keeps the job in.
  test::TempDir outer("hostile-landlock");
  const std::string inner = outer.path / "inner";
  fs::create_directories(inner);
  const std::string beside = outer.path / "beside-the-job";
  // The outer sandbox's private /tmp stands for the host's, where other jobs' folders lie.
  const std::string shared_tmp = "/tmp/dicebench-landlock-" + std::to_string(getpid());
  auto nested = [&](const std::vector<std::string>& inner_options, const std::vector<std::string>& program) {
    std::vector<std::string> inner_argv{kSandbox, "--mode", "best", "--job-dir", inner};
    inner_argv.insert(inner_argv.end(), kVisibleRuntime.begin(), kVisibleRuntime.end());
    inner_argv.insert(inner_argv.end(), inner_options.begin(), inner_options.end());
    inner_argv.emplace_back("--");
    inner_argv.insert(inner_argv.end(), program.begin(), program.end());
    return run(sandboxed(outer.path, {}, inner_argv));
  };
  const Ran refused = nested({}, {kHostile, "write", beside});
  INFO(refused.err);
  CHECK(refused.err.find("pid_namespace (refused") != std::string::npos);  // the inner launcher's summary
  CHECK(refused.err.find("mount_namespace (refused") != std::string::npos);
  CHECK(refused.out == "EACCES");
  CHECK_FALSE(fs::exists(beside));
  CHECK(nested({}, {kHostile, "write", inner + "/own"}).out == "ok");
  CHECK(nested({}, {kHostile, "write", shared_tmp}).out == "EACCES");
  CHECK(nested({}, {kHostile, "write", "/dev/null"}).out == "ok");
  CHECK(nested({}, {kHostile, "name_thread"}).out == "ok");  // its own /proc/PID stays writable
  CHECK(nested({"--no-landlock"}, {kHostile, "write", shared_tmp}).out == "ok");
  const Ran allowed = nested({"--no-landlock"}, {kHostile, "write", beside});
  CHECK(allowed.out == "ok");
  CHECK(fs::exists(beside));
  // Its ancestors outside the Landlock domain (the inner launcher) cannot be read either, though
  // they are its user's and dumpable: Landlock lets a job trace only its own domain.
  const Ran launcher_memory = nested({}, {kHostile, "proc_mem", "launcher"});
  CHECK(launcher_memory.out == "EACCES");
  const std::string unrestricted = nested({"--no-landlock"}, {kHostile, "proc_mem", "launcher"}).out;
  if (yama_ptrace_scope() >= 1) {
    MESSAGE("Yama's ptrace_scope " << yama_ptrace_scope() << " closes an ancestor's memory without Landlock too ("
                                   << unrestricted << ")");
    CHECK(unrestricted != "ok");
  } else {
    CHECK(unrestricted == "ok");
  }
}

TEST_CASE("Landlock: the job names its own threads under /proc (as CUDA's cuInit does), other processes stay closed") {
  test::TempDir job("hostile-proc");
  // glibc writes /proc/self/task/TID/comm for another thread; with /proc read-only under Landlock,
  // cuInit fails with error 304 on the GPU host.
  CHECK(attempt(job.path, {}, "name_thread") == "ok");
  CHECK(attempt(job.path, {}, "write", "/proc/self/comm") == "ok");
  // The sandbox's init (pid 1 of the job's namespace), outside the job's Landlock domain and not
  // dumpable: closed with or without Landlock.
  CHECK(attempt(job.path, {}, "proc_mem", "1") == "EACCES");
  // The job's own children are in its domain: their memory stays readable, as a debugger's would.
  CHECK(attempt(job.path, {}, "process_vm_readv") == "EPERM");  // ... though the filter refuses this call
  CHECK(attempt(job.path, {"--no-syscall-filter"}, "process_vm_readv") == "ok");
}

TEST_CASE("Landlock: no TCP, not even on the job's own loopback") {
  test::TempDir job("hostile-tcp");
  if (landlock_abi() < 4) {
    MESSAGE("Landlock ABI " << landlock_abi() << " has no network rules");
    return;
  }
  CHECK(attempt(job.path, {}, "tcp_bind") == "EACCES");
  CHECK(attempt(job.path, {}, "tcp_connect", "9") == "EACCES");
  CHECK(attempt(job.path, {"--no-landlock"}, "tcp_bind") == "ok");
  const std::string unrestricted = attempt(job.path, {"--no-landlock"}, "tcp_connect", "9");
  CHECK(unrestricted != "EACCES");  // ECONNREFUSED: nothing listens on the job's loopback
}
#else
// The launcher's log names the active protections in its summary line ("active: a, b; missing: ...").
bool active_in_log(const std::string& log, const std::string& protection) {
  const auto active = log.rfind("active: ");
  if (active == std::string::npos) return false;
  const std::string list = log.substr(active, log.find("; missing", active) - active);
  return list.find(protection) != std::string::npos;
}

TEST_CASE("CUDA and Triton start under the filter and Landlock") {
  test::TempDir job("sandbox-cuda");
  const std::string script =
      "import threading, torch\n"
      "torch.cuda.init()\n"
      "x = torch.randn(512, 512, device='cuda')\n"
      "y = (x @ x).sum().item()\n"
      "torch.cuda.synchronize()\n"
      "print('cuda ok', torch.cuda.get_device_name(0), flush=True)\n"
      "try:\n"
      "    import triton, triton.language as tl\n"
      "except ImportError:\n"
      "    print('no triton')\n"
      "else:\n"
      "    @triton.jit\n"
      "    def add(a, b, out, n, BLOCK: tl.constexpr):\n"
      "        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "        tl.store(out + i, tl.load(a + i, mask=i < n) + tl.load(b + i, mask=i < n), mask=i < n)\n"
      "    a = torch.randn(1000, device='cuda'); out = torch.empty_like(a)\n"
      "    add[(4,)](a, a, out, 1000, BLOCK=256)\n"
      "    assert torch.allclose(out, 2 * a)\n"
      "    print('triton ok', flush=True)\n";
  // From a file, as a worker's code is: Triton's jit reads its function's source file.
  const std::string program = job / "cuda_and_triton.py";
  test::write(program, script);
  const Ran r =
      run(sandboxed(job.path, {"--memory-max", std::to_string(16ull << 30), "--pids-max", "1024"}, {kPython, program}));
  CHECK_MESSAGE(r.exited(0), r.err);
  CHECK(r.out.find("cuda ok") != std::string::npos);
  CHECK((r.out.find("triton ok") != std::string::npos || r.out.find("no triton") != std::string::npos));
  CHECK(active_in_log(r.err, "landlock"));
  CHECK(active_in_log(r.err, "syscall_filter"));
}
#endif
