// Resource limits of a sandboxed job (job_limits.hpp).
#include "harness/sandbox/job_limits.hpp"
#include "core/base/whole_file.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

namespace dicebench::sandbox {
namespace {

namespace fs = std::filesystem;

// A /proc or cgroup file's text; "" once the process or group is gone.
std::string read_text(const std::string& path) { return read_whole_file(path).value_or(""); }

bool write_text(const std::string& path, const std::string& text, std::string* why) {
  std::ofstream out(path);
  out << text;
  out.flush();
  if (out) return true;
  if (why) *why = "cannot write " + path + ": " + std::strerror(errno);
  return false;
}

// The cgroup v2 mount point and the calling process's cgroup below it.
bool own_cgroup(std::string* mount_point, std::string* own) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    *mount_point = point;
  }
  if (mount_point->empty()) return false;
  std::ifstream self("/proc/self/cgroup");
  while (std::getline(self, line))
    if (line.rfind("0::", 0) == 0) {
      *own = line.substr(3);
      return true;
    }
  return false;
}

// cgroup v1: the mount point of the hierarchy holding `controller`, and the calling process's
// cgroup in it.
bool own_v1_cgroup(const std::string& controller, std::string* mount_point, std::string* own) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 7, "cgroup ") != 0) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string type, source, options;
    tail >> type >> source >> options;
    bool found = false;
    std::istringstream list(options);
    for (std::string option; std::getline(list, option, ',');) found |= option == controller;
    if (!found) continue;
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    *mount_point = point;
  }
  if (mount_point->empty()) return false;
  std::ifstream self("/proc/self/cgroup");
  while (std::getline(self, line)) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::istringstream list(line.substr(first + 1, second - first - 1));
    for (std::string name; std::getline(list, name, ',');)
      if (name == controller) {
        *own = line.substr(second + 1);
        return true;
      }
  }
  return false;
}

// Removes empty job cgroups that launchers killed before they could clean up.
void sweep_stale(const std::string& parent, const std::string& prefix) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long owner = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (owner > 0 && (kill(static_cast<pid_t>(owner), 0) == 0 || errno != ESRCH)) continue;
    rmdir(entry.path().c_str());
  }
}

std::vector<pid_t> listed_pids(const std::string& file) {
  std::vector<pid_t> pids;
  std::istringstream in(read_text(file));
  for (long pid; in >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// pid -> parent pid of every process.
std::map<pid_t, pid_t> process_parents() {
  std::map<pid_t, pid_t> parents;
  DIR* proc = opendir("/proc");
  if (!proc) return parents;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end) continue;
    const std::string stat = read_text(std::string("/proc/") + entry->d_name + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    long ppid = 0;
    rest >> state >> ppid;
    parents[static_cast<pid_t>(pid)] = static_cast<pid_t>(ppid);
  }
  closedir(proc);
  return parents;
}

std::vector<pid_t> descendants(pid_t ancestor) {
  const auto parents = process_parents();
  std::map<pid_t, std::vector<pid_t>> children;
  for (const auto& [pid, ppid] : parents) children[ppid].push_back(pid);
  std::vector<pid_t> found, pending{ancestor};
  while (!pending.empty()) {
    const pid_t pid = pending.back();
    pending.pop_back();
    for (pid_t child : children[pid]) {
      found.push_back(child);
      pending.push_back(child);
    }
  }
  return found;
}

}  // namespace

namespace {

// <parent>/job-<our pid> under `parents` in order (our own cgroup's "dicebench" first, then the
// hierarchy root's): the first that can be made and whose `files` exist; "" with reasons added.
std::string make_job_dir(const std::vector<std::string>& parents, const std::vector<std::string>& files,
                         const char* subtree_control, std::string* reasons) {
  const std::string name = "job-" + std::to_string(getpid());
  for (const std::string& parent : parents) {
    std::error_code ec;
    const bool existed = fs::is_directory(parent, ec);
    if (!existed && mkdir(parent.c_str(), 0755) != 0) {
      *reasons += "; cannot create " + parent + ": " + std::strerror(errno);
      continue;
    }
    std::string ignored;
    if (subtree_control) write_text(parent + "/cgroup.subtree_control", subtree_control, &ignored);
    sweep_stale(parent, "job-");
    const std::string dir = parent + "/" + name;
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      *reasons += "; cannot create " + dir + ": " + std::strerror(errno);
      continue;
    }
    bool complete = true;
    for (const auto& file : files) complete &= fs::exists(dir + "/" + file, ec);
    if (!complete) {
      rmdir(dir.c_str());
      if (!existed) rmdir(parent.c_str());
      *reasons += "; " + parent + " does not delegate the controllers";
      continue;
    }
    return dir;
  }
  return "";
}

std::vector<std::string> parents_of(const std::string& mount_point, const std::string& own) {
  const std::string own_parent = mount_point + (own == "/" ? "" : own) + "/dicebench";
  const std::string root_parent = mount_point + "/dicebench";
  return own_parent == root_parent ? std::vector<std::string>{root_parent}
                                   : std::vector<std::string>{own_parent, root_parent};
}

}  // namespace

std::optional<JobCgroup> JobCgroup::create(const Limits& limits, std::string* why) {
  std::string reasons, mount_point, own;
  if (own_cgroup(&mount_point, &own)) {
    const std::string dir =
        make_job_dir(parents_of(mount_point, own), {"memory.max", "pids.max"}, "+memory +pids", &reasons);
    if (!dir.empty()) {
      JobCgroup group({dir}, 2);
      std::string failed, ignored;
      if ((limits.memory_bytes && !write_text(dir + "/memory.max", std::to_string(limits.memory_bytes), &failed)) ||
          (limits.pids && !write_text(dir + "/pids.max", std::to_string(limits.pids), &failed))) {
        *why = failed;
        return std::nullopt;  // the destructor removes it
      }
      write_text(dir + "/memory.swap.max", "0", &ignored);  // absent without swap accounting
      write_text(dir + "/memory.oom.group", "1", &ignored);
      return group;
    }
  } else {
    reasons += "; no cgroup v2 hierarchy";
  }
  // cgroup v1: the memory and pids controllers in hierarchies of their own (a job in each).
  std::vector<std::string> dirs;
  std::string failed, ignored;
  const std::pair<const char*, std::vector<std::string>> wanted[] = {{"memory", {"memory.limit_in_bytes"}},
                                                                     {"pids", {"pids.max"}}};
  for (const auto& [controller, files] : wanted) {
    std::string v1_mount, v1_own;
    if (!own_v1_cgroup(controller, &v1_mount, &v1_own)) {
      reasons += std::string("; no cgroup v1 ") + controller + " hierarchy";
      break;
    }
    const std::string dir = make_job_dir(parents_of(v1_mount, v1_own), files, nullptr, &reasons);
    if (dir.empty()) break;
    dirs.push_back(dir);
  }
  if (dirs.size() == 2) {
    JobCgroup group(dirs, 1);
    const std::string& memory = dirs[0];
    if ((limits.memory_bytes &&
         !write_text(memory + "/memory.limit_in_bytes", std::to_string(limits.memory_bytes), &failed)) ||
        (limits.pids && !write_text(dirs[1] + "/pids.max", std::to_string(limits.pids), &failed))) {
      *why = failed;
      return std::nullopt;
    }
    // Memory and swap together, where swap is accounted.
    if (limits.memory_bytes)
      write_text(memory + "/memory.memsw.limit_in_bytes", std::to_string(limits.memory_bytes), &ignored);
    return group;
  }
  for (const auto& dir : dirs) rmdir(dir.c_str());
  *why = reasons.empty() ? "no usable cgroup" : reasons.substr(2);
  return std::nullopt;
}

JobCgroup::JobCgroup(JobCgroup&& other) noexcept : dirs_(std::move(other.dirs_)), version_(other.version_) {
  other.dirs_.clear();
}

JobCgroup::~JobCgroup() {
  if (dirs_.empty()) return;
  kill_all();
  for (const auto& dir : dirs_)
    for (int attempt = 0; attempt < 200 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++attempt)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

bool JobCgroup::add(pid_t pid, std::string* why) const {
  for (const auto& dir : dirs_)
    if (!write_text(dir + "/cgroup.procs", std::to_string(pid), why)) return false;
  return true;
}

void JobCgroup::kill_all() const {
  std::error_code ec;
  for (int attempt = 0; attempt < 400; ++attempt) {
    bool any = false;
    for (const auto& dir : dirs_) {
      const auto pids = listed_pids(dir + "/cgroup.procs");
      if (pids.empty()) continue;
      any = true;
      if (fs::exists(dir + "/cgroup.kill", ec))
        write_text(dir + "/cgroup.kill", "1", nullptr);
      else
        for (pid_t pid : pids) kill(pid, SIGKILL);
    }
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool JobCgroup::oom_killed() const {
  if (dirs_.empty()) return false;
  // v2: memory.events; v1: memory.oom_control (its oom_kill line, since Linux 4.13).
  std::istringstream events(read_text(dirs_.front() + (version_ == 2 ? "/memory.events" : "/memory.oom_control")));
  std::string key;
  for (uint64_t value = 0; events >> key >> value;)
    if (key == "oom_kill" && value > 0) return true;
  return false;
}

uint64_t JobCgroup::peak_memory() const {
  if (dirs_.empty()) return 0;
  const std::string text = read_text(dirs_.front() + (version_ == 2 ? "/memory.peak" : "/memory.max_usage_in_bytes"));
  return text.empty() ? 0 : std::strtoull(text.c_str(), nullptr, 10);
}

JobUsage measure_descendants(pid_t ancestor) {
  JobUsage usage;
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  for (pid_t pid : descendants(ancestor)) {
    ++usage.processes;
    std::istringstream statm(read_text("/proc/" + std::to_string(pid) + "/statm"));
    uint64_t size = 0, resident = 0, shared = 0;
    if (statm >> size >> resident >> shared && resident > shared) usage.anonymous_bytes += (resident - shared) * page;
  }
  return usage;
}

int kill_descendants(pid_t ancestor) {
  std::set<pid_t> killed;
  for (int round = 0; round < 1000; ++round) {
    const auto pids = descendants(ancestor);
    bool any_alive = false;
    for (pid_t pid : pids) {
      // Zombies wait for their parent (or us, the subreaper) to reap them; they hold nothing.
      const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
      const size_t close = stat.rfind(')');
      if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z') continue;
      any_alive = true;
      if (kill(pid, SIGKILL) == 0) killed.insert(pid);
    }
    if (!any_alive) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return static_cast<int>(killed.size());
}

std::string apply_rlimits(const Limits& limits, bool process_count) {
  auto set = [](int resource, uint64_t value, const char* name) -> std::string {
    rlimit current{};
    getrlimit(resource, &current);
    rlimit wanted{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    if (geteuid() != 0 && current.rlim_max != RLIM_INFINITY && wanted.rlim_max > current.rlim_max)
      wanted.rlim_cur = wanted.rlim_max = current.rlim_max;  // cannot raise a hard limit
    if (setrlimit(resource, &wanted) != 0) return std::string("setrlimit(") + name + "): " + std::strerror(errno);
    return "";
  };
  std::string why;
  if (limits.file_size_bytes) why += set(RLIMIT_FSIZE, limits.file_size_bytes, "RLIMIT_FSIZE");
  if (limits.open_files) why += set(RLIMIT_NOFILE, limits.open_files, "RLIMIT_NOFILE");
  why += set(RLIMIT_CORE, 0, "RLIMIT_CORE");
  if (process_count && limits.pids) {
    // RLIMIT_NPROC counts every task of the user, so the job gets its limit above what runs now.
    uint64_t tasks = 0;
    const std::string uid = std::to_string(getuid());
    for (const auto& [pid, ppid] : process_parents()) {
      std::istringstream status(read_text("/proc/" + std::to_string(pid) + "/status"));
      std::string key, value, line;
      bool mine = false;
      uint64_t threads = 0;
      while (std::getline(status, line)) {
        if (line.rfind("Uid:", 0) == 0) mine = std::istringstream(line.substr(4)) >> value && value == uid;
        if (line.rfind("Threads:", 0) == 0) threads = std::strtoull(line.c_str() + 8, nullptr, 10);
      }
      if (mine) tasks += threads;
    }
    why += set(RLIMIT_NPROC, tasks + limits.pids, "RLIMIT_NPROC");
  }
  return why;
}

}  // namespace dicebench::sandbox
