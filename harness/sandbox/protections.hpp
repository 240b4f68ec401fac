// The vocabulary of the candidate sandbox: the protections dicebench-sandbox sets up around a
// job, by the names the launcher reports and the host records, checks under eval.sandbox=require
// and prints. The one place these names are defined; tests check the launcher's report against it.
#pragma once

#include <array>
#include <string_view>

namespace dicebench::sandbox {

// Each protection, in the order they are reported.
inline constexpr std::array<std::string_view, 11> kProtections = {
    "pid_namespace",      // own PID namespace: sees and signals nothing outside; ends with the job
    "network_namespace",  // loopback only
    "mount_namespace",    // read-only filesystem; private job folder, /tmp, /var/tmp, /dev/shm, /run; minimal /dev
    "ipc_namespace",      // own System V IPC and POSIX message queues
    "memory_limit",   // host memory: cgroup v2 memory.max or v1 memory.limit_in_bytes, else a watchdog over the job's
                      // resident memory
    "process_limit",  // process count: cgroup v2 or v1 pids.max, else the watchdog (and RLIMIT_NPROC where not root)
    "file_limits",    // RLIMIT_FSIZE, RLIMIT_NOFILE, no core files
    "no_new_privileges",  // PR_SET_NO_NEW_PRIVS
    "capabilities",       // every capability dropped, bounding set cleared
    "landlock",           // writes only beneath the job folder and the private folders; no TCP (landlock_rules.hpp)
    "syscall_filter",     // seccomp: tracing, namespaces, keyrings, BPF, io_uring, mounts, ... refused
                          // (syscall_filter.hpp)
};

// Values of eval.sandbox.
inline constexpr std::array<std::string_view, 3> kModes = {"best", "require", "off"};

// The exit status of the launcher when a required protection cannot be had or the launcher
// itself fails before the worker starts.
inline constexpr int kLauncherFailed = 125;

// The prefix of every line the launcher writes to the job's log.
inline constexpr std::string_view kLogPrefix = "dicebench-sandbox: ";

}  // namespace dicebench::sandbox
