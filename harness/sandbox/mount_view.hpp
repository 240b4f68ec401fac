// The filesystem a sandboxed job sees, set up inside its own mount namespace by the namespace's
// init: every mount read-only and nosuid; a fresh /proc for the job's PID namespace with its
// kernel knobs (/proc/sys, /proc/sysrq-trigger, ...) read-only; a read-only /sys of its own network
// namespace; a /dev holding only the null,
// random and tty nodes and the NVIDIA devices; empty private tmpfs on /tmp, /var/tmp, /dev/shm and
// /run (where the host's service sockets live) and on each hidden folder; the job folder bound
// read-write at its own path.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::sandbox {

// Device nodes a job may open, besides the NVIDIA ones (every /dev/nvidia*, /dev/nvidia-caps).
inline constexpr std::array<std::string_view, 6> kDeviceNodes = {"null", "zero", "full", "random", "urandom", "tty"};

struct MountViewOptions {
  std::string job_dir;                 // read-write, at its own path
  std::vector<std::string> hidden;     // replaced by empty read-only tmpfs (other jobs' folders)
  std::vector<std::string> read_only;  // kept visible, read-only, where a private or hidden tmpfs covers them
  bool new_proc = false;               // mount a fresh /proc (of the current PID namespace)
  bool new_sysfs = false;              // mount a read-only /sys of the current network namespace
  uint64_t tmpfs_bytes = 1ull << 30;   // size of each private tmpfs
};

// Sets the view up in the calling process's (new, private) mount namespace. Returns "" on
// success, else what failed.
std::string set_up_mount_view(const MountViewOptions& options);

}  // namespace dicebench::sandbox
