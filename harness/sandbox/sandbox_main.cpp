// dicebench-sandbox: runs one untrusted job (a candidate worker) in a sandbox of its own.
//
//   dicebench-sandbox [--mode best|require] --job-dir DIR [--hide DIR]... [--memory-max BYTES]
//                     [--pids-max N] [--file-size-max BYTES] [--open-files-max N]
//                     [--keep-env NAME]... [--read-only DIR]... [--share-dev-shm WHY]
//                     [--no-landlock] [--no-syscall-filter] (--probe | -- PROGRAM ARG...)
//
// Three processes: this one, the supervisor, stays in the host's namespaces and cgroup; it
// clones the namespace's init into new PID, network, mount, IPC and UTS namespaces (and a user
// namespace when not root), puts it into the job's cgroup, and waits. The init sets up the mount
// view (mount_view.hpp) and loopback, forks the worker and reaps; the worker applies the rlimits,
// the environment allow-list and the job folder as cwd, HOME and TMPDIR, drops its privileges,
// restricts its writes with Landlock (landlock_rules.hpp), installs the system-call filter
// (syscall_filter.hpp) and execs PROGRAM. --no-landlock and --no-syscall-filter leave those two
// out; only the cost benchmark (tools/perf/syscall_filter_cost.py) passes them, never the host. The job cannot see or
// signal the supervisor or the host. When the worker ends, init ends, and the kernel ends every other process of the
// namespace; the supervisor then checks that none is left (killing what is) and exits as the worker did (same code, or
// killed by the same signal), so the host sees the worker's own status. If the supervisor is killed, init is killed
// with it (PR_SET_PDEATHSIG) and the namespace with init; if the host dies, the supervisor ends the job. What each
// stage set up, or why it could not, goes to the job's log (stderr) as one line; --probe sets the whole sandbox up
// around nothing and prints that report as JSON. Under --mode require a missing protection ends
// the launch with status 125 before PROGRAM runs.
#include "core/base/number_text.hpp"
#include "harness/sandbox/job_limits.hpp"
#include "harness/sandbox/landlock_rules.hpp"
#include "harness/sandbox/mount_view.hpp"
#include "harness/sandbox/privileges.hpp"
#include "harness/sandbox/protections.hpp"
#include "harness/sandbox/sandbox_report.hpp"
#include "harness/sandbox/syscall_filter.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace {

namespace sb = dicebench::sandbox;
namespace fs = std::filesystem;

struct Options {
  bool require = false;
  bool probe = false;
  bool landlock = true;        // --no-landlock: the cost benchmark's baseline only
  bool syscall_filter = true;  // --no-syscall-filter: likewise
  std::string job_dir;
  std::vector<std::string> hidden;
  std::vector<std::string> keep_env;
  std::vector<std::string> read_only;  // visible read-only even where a private tmpfs covers them
  sb::Limits limits;
  std::vector<char*> program;
};

void log_line(const std::string& text) {
  const std::string line = std::string(sb::kLogPrefix) + text + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

[[noreturn]] void usage(const std::string& why) {
  log_line(why);
  std::fprintf(stderr,
               "usage: dicebench-sandbox [--mode best|require] --job-dir DIR [--hide DIR]... [--memory-max BYTES]\n"
               "         [--pids-max N] [--file-size-max BYTES] [--open-files-max N] [--keep-env NAME]...\n"
               "         [--read-only DIR]... [--share-dev-shm WHY]\n"
               "         [--no-landlock] [--no-syscall-filter] (--probe | -- PROGRAM ARG...)\n"
               "  --no-landlock, --no-syscall-filter: leave that protection out (reported missing); for\n"
               "  measuring what they cost (tools/perf/syscall_filter_cost.py) only: dicebench never passes them\n");
  std::exit(sb::kLauncherFailed);
}

uint64_t number(const char* text, const char* flag) {
  const auto value = dicebench::parse_number<uint64_t>(text);
  if (!value) usage(std::string(flag) + " takes a whole number, not '" + text + "'");
  return *value;
}

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--probe") {
      o.probe = true;
      continue;
    }
    if (arg == "--no-landlock" || arg == "--no-syscall-filter") {
      (arg == "--no-landlock" ? o.landlock : o.syscall_filter) = false;
      continue;
    }
    if (i + 1 >= argc) usage("missing value after " + std::string(arg));
    const char* value = argv[++i];
    if (arg == "--mode") {
      if (std::string_view(value) != "best" && std::string_view(value) != "require")
        usage("--mode is best or require, not '" + std::string(value) + "'");
      o.require = std::string_view(value) == "require";
    } else if (arg == "--job-dir")
      o.job_dir = value;
    else if (arg == "--hide")
      o.hidden.emplace_back(value);
    else if (arg == "--keep-env")
      o.keep_env.emplace_back(value);
    else if (arg == "--read-only")
      o.read_only.emplace_back(value);
    else if (arg == "--memory-max")
      o.limits.memory_bytes = number(value, "--memory-max");
    else if (arg == "--pids-max")
      o.limits.pids = number(value, "--pids-max");
    else if (arg == "--file-size-max")
      o.limits.file_size_bytes = number(value, "--file-size-max");
    else if (arg == "--open-files-max")
      o.limits.open_files = number(value, "--open-files-max");
    else
      usage("unknown option " + std::string(arg));
  }
  for (; i < argc; ++i) o.program.push_back(argv[i]);
  o.program.push_back(nullptr);
  if (o.probe == (o.program.size() > 1)) usage("give --probe or a program after --, not both");
  if (!o.probe && o.job_dir.empty()) usage("--job-dir is required");
  return o;
}

// The job's environment: the allow-listed variables of ours, and the job folder as home.
std::vector<std::string> job_environment(const Options& o) {
  static constexpr std::string_view kNames[] = {
      "PATH",           "LANG",       "LANGUAGE", "TZ", "TERM", "LD_LIBRARY_PATH", "PYTHONUNBUFFERED",
      "PYTHONHASHSEED", "PYTHONPATH", "CC",       "CXX"};
  static constexpr std::string_view kPrefixes[] = {
      "LC_",  "CUDA_",     "NVIDIA_", "TORCH_", "DICEBENCH_FASTPATH_", "OMP_",
      "MKL_", "OPENBLAS_", "TRITON_", "NVCC_",  "XDG_CACHE_HOME"};
  std::vector<std::string> env;
  for (char** entry = environ; *entry; ++entry) {
    const std::string_view variable = *entry;
    const std::string_view name = variable.substr(0, variable.find('='));
    if (name == "HOME" || name == "TMPDIR" || name == "PWD") continue;
    bool keep = false;
    for (auto n : kNames) keep |= name == n;
    for (auto p : kPrefixes) keep |= name.rfind(p, 0) == 0;
    for (const auto& n : o.keep_env) keep |= name == n;
    if (keep) env.emplace_back(variable);
  }
  env.push_back("HOME=" + o.job_dir);
  env.push_back("TMPDIR=" + o.job_dir);
  env.push_back("PWD=" + o.job_dir);
  return env;
}

// A stage's report line to the supervisor; in require mode a missing protection ends the stage.
void report(int fd, bool require, std::string_view protection, const std::string& failure, const std::string& detail) {
  const std::string line = sb::Report::line_for(protection, failure.empty(), failure.empty() ? detail : failure);
  (void)!write(fd, line.data(), line.size());
  if (require && !failure.empty()) _exit(sb::kLauncherFailed);
}

std::string loopback_up() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("socket: ") + std::strerror(errno);
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  std::string why;
  if (ioctl(fd, SIOCGIFFLAGS, &request) != 0) why = std::string("SIOCGIFFLAGS lo: ") + std::strerror(errno);
  request.ifr_flags |= IFF_UP;
  if (why.empty() && ioctl(fd, SIOCSIFFLAGS, &request) != 0) why = std::string("bring lo up: ") + std::strerror(errno);
  close(fd);
  return why;
}

struct Pipes {
  int go[2];      // supervisor -> init: uid maps written, cgroup joined
  int report[2];  // init and worker -> supervisor: report lines
  int status[2];  // init -> supervisor: the worker's wait status
};

// The worker: limits, environment, privileges, then PROGRAM (or, probing, nothing).
// `private_view`: the mount view is set up (private /tmp, /dev and the rest; Landlock lets the job
// write there).
[[noreturn]] void run_worker(const Options& o, const Pipes& p, bool new_user, bool private_view) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const std::string rlimits = sb::apply_rlimits(o.limits, new_user || getuid() != 0);
  std::string file_limits = "no core files";
  if (o.limits.file_size_bytes)
    file_limits += ", RLIMIT_FSIZE " + std::to_string(o.limits.file_size_bytes >> 20) + " MiB";
  if (o.limits.open_files) file_limits += ", RLIMIT_NOFILE " + std::to_string(o.limits.open_files);
  report(p.report[1], o.require, "file_limits", rlimits, file_limits);
  const std::vector<std::string> env = job_environment(o);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  if (!o.job_dir.empty() && chdir(o.job_dir.c_str()) != 0) {
    log_line("cannot enter the job folder " + o.job_dir + ": " + std::strerror(errno));
    _exit(sb::kLauncherFailed);
  }
  report(p.report[1], o.require, "no_new_privileges", sb::set_no_new_privileges(), "PR_SET_NO_NEW_PRIVS");
  report(p.report[1], o.require, "capabilities", sb::drop_capabilities(), "all dropped, bounding set empty");
  // Both need no_new_privs; the filter comes last, so that nothing of ours runs under it but exec.
  std::string landlock = "turned off (--no-landlock)", landlock_detail;
  if (o.landlock)
    landlock = sb::restrict_with_landlock({.job_dir = o.job_dir, .private_view = private_view}, &landlock_detail);
  report(p.report[1], o.require, "landlock", landlock, landlock_detail);
  std::string filter = "turned off (--no-syscall-filter)", filter_detail;
  if (o.syscall_filter) filter = sb::install_syscall_filter(&filter_detail);
  report(p.report[1], o.require, "syscall_filter", filter, filter_detail);
  close(p.report[1]);
  if (o.probe) _exit(0);
  execvpe(o.program[0], o.program.data(), envp.data());
  log_line(std::string("cannot run ") + o.program[0] + ": " + std::strerror(errno));
  _exit(127);
}

// The namespace's init: mount view, loopback, then the worker, reaping until it ends.
[[noreturn]] void run_init(const Options& o, const Pipes& p, int flags, const std::string& job_dir) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  prctl(PR_SET_DUMPABLE, 0);
  close(p.go[1]);
  close(p.report[0]);
  close(p.status[0]);
  char go = 0;
  if (read(p.go[0], &go, 1) != 1) _exit(sb::kLauncherFailed);  // the supervisor went away
  close(p.go[0]);
  const bool new_pid = flags & CLONE_NEWPID;
  bool private_view = false;
  if (flags & CLONE_NEWNS) {
    // A fresh /proc even without a PID namespace of our own: CUDA fails to start (error 304) on
    // the host's /proc made read-only. In a user namespace the kernel allows it only with our own
    // PID namespace; without one the host's stays, read-only.
    const bool proc = new_pid || !(flags & CLONE_NEWUSER);
    sb::MountViewOptions view{job_dir, o.hidden, o.read_only, proc, static_cast<bool>(flags & CLONE_NEWNET)};
    if (o.limits.memory_bytes) view.tmpfs_bytes = std::max<uint64_t>(o.limits.memory_bytes / 4, 64ull << 20);
    const std::string failed = sb::set_up_mount_view(view);
    private_view = failed.empty();
    report(p.report[1], o.require, "mount_namespace", failed,
           "read-only filesystem; private job folder, /tmp, /var/tmp, /dev/shm, /run; minimal /dev");
  }
  if (flags & CLONE_NEWNET) report(p.report[1], o.require, "network_namespace", loopback_up(), "loopback only");
  if (flags & CLONE_NEWIPC) report(p.report[1], o.require, "ipc_namespace", "", "own System V IPC and message queues");
  if (flags & CLONE_NEWUTS) (void)!sethostname("dicebench-job", 13);
  if (new_pid) report(p.report[1], o.require, "pid_namespace", "", "the job's init is pid 1");
  const pid_t worker = fork();
  if (worker < 0) _exit(sb::kLauncherFailed);
  if (worker == 0) run_worker(o, p, flags & CLONE_NEWUSER, private_view);
  close(p.report[1]);
  while (true) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid == worker) {
      (void)!write(p.status[1], &status, sizeof status);
      _exit(0);
    }
    if (pid < 0 && errno != EINTR) _exit(sb::kLauncherFailed);
  }
}

pid_t clone_init(int flags) {
  return static_cast<pid_t>(
      syscall(SYS_clone, static_cast<unsigned long>(flags) | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

// The namespaces this host lets us create, one at a time (after all at once was refused).
int usable_namespaces(int wanted, int always, sb::Report& report) {
  int usable = 0;
  for (int flag : {CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUTS}) {
    if (!(wanted & flag)) continue;
    const pid_t one = clone_init(flag | always);
    if (one == 0) _exit(0);
    if (one > 0) {
      usable |= flag;
      waitpid(one, nullptr, 0);
      continue;
    }
    const std::string why = std::string("refused: ") + std::strerror(errno);
    const char* name = flag == CLONE_NEWPID   ? "pid_namespace"
                       : flag == CLONE_NEWNET ? "network_namespace"
                       : flag == CLONE_NEWNS  ? "mount_namespace"
                       : flag == CLONE_NEWIPC ? "ipc_namespace"
                                              : nullptr;
    if (name) report.set(name, false, why);
  }
  if (usable == 0 && always) return 0;  // no user namespace: nothing at all
  return usable | always;
}

bool write_file(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// Reads report lines until every stage has closed its end (the worker closes it at exec).
std::string read_report(int fd, std::chrono::seconds limit) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd in{fd, POLLIN, 0};
    if (poll(&in, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

[[noreturn]] void exit_as(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
  }
  std::exit(WIFEXITED(status) ? WEXITSTATUS(status) : sb::kLauncherFailed);
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::string probe_dir;
  if (o.probe && o.job_dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "dicebench-sandbox-probe-XXXXXX").string();
    if (!mkdtemp(pattern.data())) usage("cannot create a probe folder");
    o.job_dir = probe_dir = pattern;
  }
  std::error_code ec;
  o.job_dir = fs::canonical(o.job_dir, ec).string();
  if (ec) usage("no job folder " + o.job_dir);
  for (auto& hidden : o.hidden) hidden = fs::weakly_canonical(hidden, ec).string();
  // Our log lines append: the worker appends to the same file through its own descriptor.
  fcntl(STDERR_FILENO, F_SETFL, fcntl(STDERR_FILENO, F_GETFL) | O_APPEND);
  // Folders that the private tmpfs on /tmp, /var/tmp, /run and /dev/shm hide already stay as they are.
  std::erase_if(o.hidden, [](const std::string& path) {
    for (const char* private_root : {"/tmp", "/var/tmp", "/run", "/dev/shm"}) {
      const std::string root = private_root;
      if (path == root || path.rfind(root + "/", 0) == 0) return true;
    }
    return path == "/" || path.empty();
  });
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // The host that started us: when it dies (we are handed to another parent), the job ends too.
  // Polled rather than PR_SET_PDEATHSIG, which fires when the spawning *thread* ends.
  const pid_t host = getppid();

  sb::Report report;
  std::string no_cgroup = "no limit given";
  std::optional<sb::JobCgroup> cgroup =
      o.limits.memory_bytes || o.limits.pids ? sb::JobCgroup::create(o.limits, &no_cgroup) : std::nullopt;
  const bool watchdog = !cgroup;
  auto limit_detail = [&](uint64_t value, const std::string& amount) {
    return value == 0 ? std::string()
           : cgroup   ? "cgroup v" + std::to_string(cgroup->version()) + ", " + amount
                      : "watchdog, " + amount + " (no cgroup: " + no_cgroup + ")";
  };
  if (o.limits.memory_bytes)
    report.set("memory_limit", true, limit_detail(o.limits.memory_bytes, mib(o.limits.memory_bytes)));
  else
    report.set("memory_limit", false, "no limit given");
  if (o.limits.pids)
    report.set("process_limit", true, limit_detail(o.limits.pids, std::to_string(o.limits.pids) + " processes"));
  else
    report.set("process_limit", false, "no limit given");

  const bool root = geteuid() == 0;
  const int always = root ? 0 : CLONE_NEWUSER;
  const int wanted = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS;
  int flags = wanted | always;

  Pipes p{};
  if (pipe2(p.go, O_CLOEXEC) != 0 || pipe2(p.report, O_CLOEXEC) != 0 || pipe2(p.status, O_CLOEXEC) != 0)
    usage("pipe failed");
  pid_t init = clone_init(flags);
  if (init < 0) {
    flags = usable_namespaces(wanted, always, report);
    init = clone_init(flags);
  }
  if (init < 0) usage(std::string("cannot start the job: ") + std::strerror(errno));
  if (init == 0) run_init(o, p, flags, o.job_dir);
  close(p.go[0]);
  close(p.report[1]);
  close(p.status[1]);
  if (!(flags & CLONE_NEWPID) && !report.entries().count("pid_namespace"))
    report.set("pid_namespace", false, "no user namespace");
  if (!(flags & CLONE_NEWNET) && !report.entries().count("network_namespace"))
    report.set("network_namespace", false, "no user namespace");
  if (!(flags & CLONE_NEWNS) && !report.entries().count("mount_namespace"))
    report.set("mount_namespace", false, "no user namespace");
  if (!(flags & CLONE_NEWIPC) && !report.entries().count("ipc_namespace"))
    report.set("ipc_namespace", false, "no user namespace");
  if (flags & CLONE_NEWUSER) {
    write_file("/proc/" + std::to_string(init) + "/setgroups", "deny");
    write_file("/proc/" + std::to_string(init) + "/uid_map",
               std::to_string(getuid()) + " " + std::to_string(getuid()) + " 1");
    write_file("/proc/" + std::to_string(init) + "/gid_map",
               std::to_string(getgid()) + " " + std::to_string(getgid()) + " 1");
  }
  std::string cgroup_failed;
  if (cgroup && !cgroup->add(init, &cgroup_failed)) {
    report.set("memory_limit", false, "cannot join the job's cgroup: " + cgroup_failed);
    report.set("process_limit", false, "cannot join the job's cgroup: " + cgroup_failed);
  }
  const bool limits_missing = (o.limits.memory_bytes == 0 || o.limits.pids == 0 || !cgroup_failed.empty());
  if (o.require && (flags != (wanted | always) || limits_missing)) {
    kill(init, SIGKILL);
    waitpid(init, nullptr, 0);
    log_line("a required protection is unavailable: " + report.summary());
    if (o.probe) std::printf("%s\n", report.json().c_str());
    std::exit(sb::kLauncherFailed);
  }
  (void)!write(p.go[1], "g", 1);
  close(p.go[1]);

  report.add_lines(read_report(p.report[0], std::chrono::seconds(60)));
  close(p.report[0]);
  log_line(report.summary());
  if (o.probe) std::printf("%s\n", report.json().c_str());

  // Wait for init, reaping orphans handed to us (we are a subreaper) and, without a cgroup,
  // watching the job's memory and process count.
  std::string exceeded;
  int init_status = 0;
  while (true) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid == init) {
      init_status = status;
      break;
    }
    if (pid > 0) continue;
    if (pid < 0 && errno == ECHILD) break;
    if (getppid() != host) {
      kill(init, SIGKILL);
      sb::kill_descendants(getpid());
      log_line("the host went away; the job was ended");
    }
    if (watchdog && exceeded.empty()) {
      const sb::JobUsage usage = sb::measure_descendants(getpid());
      if (o.limits.memory_bytes && usage.anonymous_bytes > o.limits.memory_bytes)
        exceeded =
            "memory limit (" + mib(usage.anonymous_bytes) + " resident, limit " + mib(o.limits.memory_bytes) + ")";
      else if (o.limits.pids && usage.processes > o.limits.pids)
        exceeded = "process limit (" + std::to_string(usage.processes) + " processes, limit " +
                   std::to_string(o.limits.pids) + ")";
      if (!exceeded.empty()) {
        kill(init, SIGKILL);
        sb::kill_descendants(getpid());
      }
    }
    pollfd wait_status{p.status[0], POLLIN, 0};
    poll(&wait_status, 1, 20);
  }
  int worker_status = 0;
  const bool known = read(p.status[0], &worker_status, sizeof worker_status) == sizeof worker_status;
  if (!known) worker_status = WIFSIGNALED(init_status) ? init_status : (SIGKILL & 0x7f);  // init itself was killed

  if (cgroup) {
    if (cgroup->oom_killed())
      exceeded = "memory limit (" + mib(o.limits.memory_bytes) + "; the kernel's OOM killer ended it)";
    cgroup->kill_all();
  }
  if (const int left = sb::kill_descendants(getpid()); left > 0)
    log_line(std::to_string(left) + " processes of the job outlived it and were killed");
  while (waitpid(-1, nullptr, WNOHANG) > 0) {}
  if (!exceeded.empty()) {
    log_line("the job exceeded its " + exceeded + " and was killed");
    worker_status = SIGKILL & 0x7f;
  }
  cgroup.reset();
  if (!probe_dir.empty()) fs::remove_all(probe_dir, ec);
  exit_as(worker_status);
}
