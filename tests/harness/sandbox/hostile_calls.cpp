// hostile_calls: what a hostile candidate would try against the sandbox's system-call filter and
// Landlock rules, one attempt per run, for test_syscall_filter.cpp. Each attempt is the real thing
// (attach to a sibling, read a child's memory, make a user namespace and mount in it, ...) and prints
// one line: "ok" when the kernel allowed it, else the errno's name ("EPERM").
//   hostile_calls ATTEMPT [ARG]
#include <fcntl.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

namespace {

// The attempt's outcome: 0, or the errno it failed with.
using Attempt = std::function<int(const char* arg)>;

int outcome(long result) { return result < 0 ? errno : 0; }

// A child that waits until killed, having first run `prepare`; returns its pid once it is ready.
pid_t waiting_child(const std::function<void()>& prepare = {}) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    if (prepare) prepare();
    (void)!write(ready[1], "r", 1);
    while (true) pause();
  }
  char byte = 0;
  (void)!read(ready[0], &byte, 1);
  close(ready[0]);
  close(ready[1]);
  return child;
}

void end(pid_t child) {
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

// Attaches to a sibling: two children of this process, the second tracing the first (which
// allows any tracer, as Yama's ptrace_scope 1 would otherwise refuse a non-descendant).
int ptrace_sibling(const char*) {
  const pid_t tracee = waiting_child([] { prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); });
  int result[2];
  if (pipe(result) != 0) return errno;
  const pid_t tracer = fork();
  if (tracer == 0) {
    int error = outcome(ptrace(PTRACE_ATTACH, tracee, nullptr, nullptr));
    if (error == 0) ptrace(PTRACE_DETACH, tracee, nullptr, nullptr);
    (void)!write(result[1], &error, sizeof error);
    _exit(0);
  }
  int error = EIO;
  (void)!read(result[0], &error, sizeof error);
  waitpid(tracer, nullptr, 0);
  end(tracee);
  return error;
}

// Reads a child's copy of a variable through process_vm_readv.
int read_child_memory(const char*) {
  static volatile int secret = 0;
  const pid_t child = waiting_child([] { secret = 42; });
  int copy = 0;
  iovec local{&copy, sizeof copy};
  iovec remote{const_cast<int*>(&secret), sizeof secret};
  const long read = process_vm_readv(child, &local, 1, &remote, 1, 0);
  const int error = read < 0 ? errno : copy == 42 ? 0 : EIO;
  end(child);
  return error;
}

// A software counter of this process, user space only (what perf_event_paranoid 2 allows).
int perf_counter(const char*) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) close(static_cast<int>(fd));
  return outcome(fd);
}

// A one-entry BPF array map (what unprivileged BPF allows where it is on).
int bpf_map(const char*) {
  struct {
    uint32_t map_type, key_size, value_size, max_entries;
    char rest[128];
  } attr{};
  attr.map_type = 2;  // BPF_MAP_TYPE_ARRAY
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  const long fd = syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, &attr, sizeof attr);
  if (fd >= 0) close(static_cast<int>(fd));
  return outcome(fd);
}

// A userfaultfd for user-space faults only (allowed without privilege since Linux 5.11).
int userfault(const char*) {
  constexpr int kUserModeOnly = 1;  // UFFD_USER_MODE_ONLY
  const long fd = syscall(SYS_userfaultfd, O_CLOEXEC | kUserModeOnly);
  if (fd >= 0) close(static_cast<int>(fd));
  return outcome(fd);
}

// The id of this user's keyring, made if need be.
int keyring(const char*) {
  constexpr long kGetKeyringId = 0, kUserKeyring = -4;  // KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING
  return outcome(syscall(SYS_keyctl, kGetKeyringId, kUserKeyring, 1));
}

int unshare_user(const char*) { return outcome(unshare(CLONE_NEWUSER)); }

// Joins a user namespace that a child made (the child's own when it could not make one).
int setns_user(const char*) {
  const pid_t child = waiting_child([] { (void)unshare(CLONE_NEWUSER); });
  const int fd = open(("/proc/" + std::to_string(child) + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC);
  const int error = fd < 0 ? errno : outcome(setns(fd, CLONE_NEWUSER));
  if (fd >= 0) close(fd);
  end(child);
  return error;
}

// A child in a new user namespace, made by clone (flags in argument 0) or by clone3 (flags in memory).
int clone_new_user(const char* how) {
  const bool three = how && std::string(how) == "clone3";
  long child;
  if (three) {
    struct {
      uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    } args{CLONE_NEWUSER, 0, 0, 0, SIGCHLD, 0, 0, 0};
    child = syscall(SYS_clone3, &args, sizeof args);
  } else {
    child = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  }
  if (child == 0) _exit(0);
  if (child > 0) waitpid(static_cast<pid_t>(child), nullptr, 0);
  return outcome(child);
}

// An io_uring instance.
int io_uring(const char*) {
  char params[120] = {};  // struct io_uring_params
  const long fd = syscall(SYS_io_uring_setup, 4, params);
  if (fd >= 0) close(static_cast<int>(fd));
  return outcome(fd);
}

// Loads a (empty, so invalid) kernel module.
int load_module(const char*) { return outcome(syscall(SYS_init_module, nullptr, 0, "")); }

// Mounts a tmpfs over /tmp, from a user and mount namespace of its own where it can make one.
int mount_tmpfs(const char*) {
  (void)unshare(CLONE_NEWUSER | CLONE_NEWNS);
  return outcome(mount("none", "/tmp", "tmpfs", 0, nullptr));
}

// A raw ICMP socket, from a user and network namespace of its own where it can make one.
int raw_socket(const char*) {
  (void)unshare(CLONE_NEWUSER | CLONE_NEWNET);
  const int fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
  if (fd >= 0) close(fd);
  return outcome(fd);
}

// getpid through the 32-bit system-call gate, which a filter for x86_64 calls alone would miss.
int int80_getpid(const char*) {
#if defined(__x86_64__)
  long result = 20;  // __NR_getpid on i386
  asm volatile("int $0x80" : "+a"(result) : : "memory");
  if (result < 0) {
    errno = static_cast<int>(-result);
    return errno;
  }
  return result == getpid() ? 0 : EIO;
#else
  return ENOSYS;
#endif
}

// Creates (or truncates) the file ARG for writing.
int write_file(const char* path) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  const int error = write(fd, "planted\n", 8) == 8 ? 0 : errno;
  close(fd);
  return error;
}

// Names another thread of this process, as CUDA names its threads: glibc writes
// /proc/self/task/TID/comm for any thread but the caller.
int name_thread(const char*) {
  pthread_t thread;
  int ready[2];
  if (pipe(ready) != 0) return errno;
  if (pthread_create(
          &thread, nullptr,
          [](void* fd) -> void* {
            char byte = 0;
            (void)!read(*static_cast<int*>(fd), &byte, 1);
            return nullptr;
          },
          &ready[0]) != 0)
    return EAGAIN;
  const int error = pthread_setname_np(thread, "dicebench-named");
  char name[32] = {};
  const int read_back = error == 0 ? pthread_getname_np(thread, name, sizeof name) : error;
  (void)!write(ready[1], "x", 1);
  pthread_join(thread, nullptr);
  return read_back != 0 ? read_back : std::string(name) == "dicebench-named" ? 0 : EIO;
}

// The parent of this process's parent: under dicebench-sandbox without a PID namespace, the launcher.
std::string grandparent() {
  std::ifstream stat("/proc/" + std::to_string(getppid()) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto fields = text.rfind(')');  // "pid (name) state ppid ..."
  if (fields == std::string::npos) return "0";
  std::istringstream rest(text.substr(fields + 2));
  std::string state, ppid;
  rest >> state >> ppid;
  return ppid;
}

// Opens the memory of process ARG (a pid, or "launcher": the grandparent) for reading.
int open_process_memory(const char* which) {
  const std::string pid = which && std::string(which) == "launcher" ? grandparent() : std::string(which ? which : "1");
  const int fd = open(("/proc/" + pid + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) close(fd);
  return fd < 0 ? errno : 0;
}

// Binds a TCP socket on loopback and connects to it.
int tcp_loopback(const char*) {
  const int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0) return errno;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int error = 0;
  if (bind(server, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(server, 1) != 0 ||
      getsockname(server, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    error = errno;
  close(server);
  return error;
}

// Connects to TCP port ARG on loopback: refused by Landlock, or by nobody listening.
int tcp_connect(const char* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(std::stoi(port ? port : "9")));
  const int error = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 ? 0 : errno;
  close(fd);
  return error;
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, Attempt> attempts = {
      {"ptrace_sibling", ptrace_sibling},
      {"process_vm_readv", read_child_memory},
      {"perf_event_open", perf_counter},
      {"bpf", bpf_map},
      {"userfaultfd", userfault},
      {"keyctl", keyring},
      {"unshare", unshare_user},
      {"setns", setns_user},
      {"clone", clone_new_user},
      {"io_uring_setup", io_uring},
      {"init_module", load_module},
      {"mount", mount_tmpfs},
      {"raw_socket", raw_socket},
      {"int80", int80_getpid},
      {"write", write_file},
      {"name_thread", name_thread},
      {"proc_mem", open_process_memory},
      {"tcp_bind", tcp_loopback},
      {"tcp_connect", tcp_connect},
  };
  const auto attempt = argc > 1 ? attempts.find(argv[1]) : attempts.end();
  if (attempt == attempts.end()) {
    std::fprintf(stderr, "usage: hostile_calls ATTEMPT [ARG]; attempts:");
    for (const auto& [name, _] : attempts) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  const int error = attempt->second(argc > 2 ? argv[2] : nullptr);
  std::printf("%s\n", error == 0 ? "ok" : strerrorname_np(error));
  return 0;
}
