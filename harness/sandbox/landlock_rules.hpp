// Landlock rules for a sandboxed job, set by the worker stage of dicebench-sandbox just before it
// execs the job's program: the job and everything it starts may write (create, remove, rename,
// truncate) only beneath its job folder and the folders of kWritableFolders, and may bind or
// connect no TCP socket. Reading and executing stay allowed wherever the mount view shows files.
// With the mount view (mount_view.hpp) these are the places it leaves writable, so the rules are
// a second wall. Without it (no mount namespace could be had) those folders are the host's,
// shared with other jobs, so the job may write only to its folder, the device nodes of
// kDeviceNodes and NVIDIA's, and its own /proc/PID.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace dicebench::sandbox {

// Writable besides the job folder, in the mount view: its private tmpfs folders; /dev, whose nodes
// (/dev/null, /dev/nvidia*) CUDA opens read-write; and /proc, where CUDA's cuInit names its
// threads through /proc/self/task/N/comm (with /proc read-only it fails with error 304). Other
// processes' /proc entries (/proc/N/mem) stay closed: Landlock lets a job reach only processes of
// its own domain.
inline constexpr std::array<std::string_view, 6> kWritableFolders = {"/tmp", "/var/tmp", "/dev/shm",
                                                                     "/run", "/dev",     "/proc"};

struct LandlockOptions {
  std::string job_dir;
  bool private_view = true;  // the mount view is set up: kWritableFolders are the job's own
  bool restrict_tcp = true;  // from ABI 4: no TCP bind or connect at all
};

// Restricts the calling process (no_new_privs must be set). Returns "" on success, else why
// Landlock is missing; `detail` gets what was set ("ABI 7: writes only to the job folder, /tmp,
// ...; no TCP"). Folders that do not exist are passed over.
std::string restrict_with_landlock(const LandlockOptions& options, std::string* detail);

}  // namespace dicebench::sandbox
