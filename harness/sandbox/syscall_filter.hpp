// The system-call filter of a sandboxed job: a seccomp deny-list (libseccomp), installed by the
// worker stage of dicebench-sandbox just before it execs the job's program, so that the job and
// everything it starts cannot trace or read other processes, make namespaces, reach the kernel's
// keyrings, BPF, performance counters, io_uring, modules or mounts. Everything else stays allowed:
// CUDA, torch, Python, compilers and their threads and subprocesses need nothing refused here.
// kRefusedCalls is the one list of what is refused: the filter, the README and the tests use it.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace dicebench::sandbox {

// One refused system call, by its name on the native architecture, with the class it belongs to.
struct RefusedCall {
  std::string_view call;
  std::string_view refused_class;
};

// Refused with EPERM unless said otherwise. Names this libseccomp or architecture does not know are
// passed over (the call does not exist there).
inline constexpr std::array<RefusedCall, 54> kRefusedCalls = {{
    {"ptrace", "process tracing"},
    {"kcmp", "process tracing"},
    {"process_vm_readv", "other processes' memory and descriptors"},
    {"process_vm_writev", "other processes' memory and descriptors"},
    {"pidfd_getfd", "other processes' memory and descriptors"},
    {"perf_event_open", "performance counters and BPF"},
    {"bpf", "performance counters and BPF"},
    {"userfaultfd", "userfaultfd"},
    {"unshare", "new namespaces"},
    {"setns", "new namespaces"},
    {"clone", "new namespaces"},   // only with a CLONE_NEW* flag (namespace_clone_flags())
    {"clone3", "new namespaces"},  // ENOSYS: its flags lie in memory; glibc then falls back to clone
    {"keyctl", "kernel keyring"},
    {"add_key", "kernel keyring"},
    {"request_key", "kernel keyring"},
    {"io_uring_setup", "io_uring"},
    {"io_uring_enter", "io_uring"},
    {"io_uring_register", "io_uring"},
    {"init_module", "kernel modules and kexec"},
    {"finit_module", "kernel modules and kexec"},
    {"delete_module", "kernel modules and kexec"},
    {"kexec_load", "kernel modules and kexec"},
    {"kexec_file_load", "kernel modules and kexec"},
    {"mount", "mounts"},
    {"umount2", "mounts"},
    {"pivot_root", "mounts"},
    {"chroot", "mounts"},
    {"move_mount", "mounts"},
    {"open_tree", "mounts"},
    {"fsopen", "mounts"},
    {"fsmount", "mounts"},
    {"fsconfig", "mounts"},
    {"fspick", "mounts"},
    {"mount_setattr", "mounts"},
    {"open_by_handle_at", "file handles and filesystem watches"},
    {"name_to_handle_at", "file handles and filesystem watches"},
    {"fanotify_init", "file handles and filesystem watches"},
    {"fanotify_mark", "file handles and filesystem watches"},
    {"socket", "raw sockets"},  // only AF_PACKET, and SOCK_RAW of AF_INET and AF_INET6 (netlink stays)
    {"swapon", "system administration"},
    {"swapoff", "system administration"},
    {"reboot", "system administration"},
    {"acct", "system administration"},
    {"quotactl", "system administration"},
    {"quotactl_fd", "system administration"},
    {"lookup_dcookie", "system administration"},
    {"syslog", "system administration"},
    {"iopl", "system administration"},
    {"ioperm", "system administration"},
    {"settimeofday", "system administration"},
    {"clock_settime", "system administration"},
    {"clock_adjtime", "system administration"},
    {"adjtimex", "system administration"},
    {"vhangup", "system administration"},
}};

// The CLONE_NEW* flags: clone with any of them is refused with EPERM (flags lie in argument 0 on
// x86_64 and aarch64).
unsigned long namespace_clone_flags();

// Installs the filter on the calling thread (no_new_privs must be set). Returns "" on success,
// else what failed; `detail` gets what is refused ("54 calls refused: process tracing, ...").
std::string install_syscall_filter(std::string* detail);

}  // namespace dicebench::sandbox
