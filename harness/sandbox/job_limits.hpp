// Resource limits of a sandboxed job. The job's processes go into a cgroup v2 of their own
// (memory.max with swap off, pids.max, the whole group OOM-killed together) where the host lets us
// create one: under our own cgroup when it delegates the memory and pids controllers, else under
// a "dicebench" cgroup at the hierarchy's root. Where the host has cgroup v1 instead, the job gets
// a cgroup in its memory hierarchy (memory.limit_in_bytes, and memsw where swap is accounted) and
// one in its pids hierarchy (pids.max), placed the same way. Where none works, a watchdog in the
// supervisor polls the job's processes (their anonymous resident memory and their count) and kills
// the job past either limit: unlike RLIMIT_AS it leaves CUDA's large virtual reservations alone.
// Per-process rlimits (file size, open files, no core files; process count where not root) apply too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dicebench::sandbox {

struct Limits {
  uint64_t memory_bytes = 0;  // 0: no memory limit
  uint64_t pids = 0;          // 0: no process limit
  uint64_t file_size_bytes = 0;
  uint64_t open_files = 0;
};

// A cgroup made for one job (v2: one; v1: one in the memory and one in the pids hierarchy);
// removed (its processes killed first) on destruction.
class JobCgroup {
 public:
  // Makes the cgroup and writes the limits; nullopt with *why when the host does not allow it.
  static std::optional<JobCgroup> create(const Limits& limits, std::string* why);
  JobCgroup(JobCgroup&& other) noexcept;
  JobCgroup& operator=(JobCgroup&&) = delete;
  ~JobCgroup();

  bool add(pid_t pid, std::string* why) const;
  // Kills every process in it (cgroup.kill, else SIGKILL to each listed) and waits until it is empty.
  void kill_all() const;
  bool oom_killed() const;  // the memory controller counted an OOM kill
  uint64_t peak_memory() const;
  int version() const { return version_; }  // 2 or 1
  const std::string& path() const { return dirs_.front(); }

 private:
  JobCgroup(std::vector<std::string> dirs, int version) : dirs_(std::move(dirs)), version_(version) {}
  std::vector<std::string> dirs_;
  int version_ = 2;
};

// What the watchdog saw when it last looked: the job's processes (the supervisor's descendants).
struct JobUsage {
  uint64_t processes = 0;
  uint64_t anonymous_bytes = 0;
};
JobUsage measure_descendants(pid_t ancestor);
// SIGKILL to every descendant of `ancestor` until none is left (they may be forking); returns how
// many were killed.
int kill_descendants(pid_t ancestor);

// Applies the per-process rlimits to the calling process; "" or what failed.
std::string apply_rlimits(const Limits& limits, bool process_count);

}  // namespace dicebench::sandbox
