// Resource limits of a sandboxed job (job_limits.hpp).
#include "harness/sandbox/job_limits.hpp"

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

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

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

bool has_limits(const std::string& dir) {
  std::error_code ec;
  return fs::exists(dir + "/memory.max", ec) && fs::exists(dir + "/pids.max", ec);
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

std::optional<JobCgroup> JobCgroup::create(const Limits& limits, std::string* why) {
  std::string mount_point, own;
  if (!own_cgroup(&mount_point, &own)) {
    *why = "no cgroup v2 hierarchy";
    return std::nullopt;
  }
  const std::string name = "job-" + std::to_string(getpid());
  std::string reasons;
  // Under our own cgroup (a delegated one), else under <root>/dicebench.
  const std::string own_dir = mount_point + (own == "/" ? "" : own);
  const std::string root_dir = mount_point + "/dicebench";
  std::vector<std::string> parents{own_dir + "/dicebench"};
  if (parents.front() != root_dir) parents.push_back(root_dir);
  for (const std::string& parent : parents) {
    std::error_code ec;
    const bool existed = fs::is_directory(parent, ec);
    if (!existed && mkdir(parent.c_str(), 0755) != 0) {
      reasons += "; cannot create " + parent + ": " + std::strerror(errno);
      continue;
    }
    std::string ignored;
    write_text(parent + "/cgroup.subtree_control", "+memory +pids", &ignored);
    sweep_stale(parent, "job-");
    const std::string dir = parent + "/" + name;
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      reasons += "; cannot create " + dir + ": " + std::strerror(errno);
      continue;
    }
    if (!has_limits(dir)) {
      rmdir(dir.c_str());
      if (!existed) rmdir(parent.c_str());
      reasons += "; " + parent + " does not delegate the memory and pids controllers";
      continue;
    }
    JobCgroup group(dir);
    std::string failed;
    if ((limits.memory_bytes && !write_text(dir + "/memory.max", std::to_string(limits.memory_bytes), &failed)) ||
        (limits.pids && !write_text(dir + "/pids.max", std::to_string(limits.pids), &failed))) {
      reasons += "; " + failed;
      continue;  // the destructor removes it
    }
    write_text(dir + "/memory.swap.max", "0", &ignored);  // absent without swap accounting
    write_text(dir + "/memory.oom.group", "1", &ignored);
    return group;
  }
  *why = reasons.empty() ? "no usable cgroup" : reasons.substr(2);
  return std::nullopt;
}

JobCgroup::JobCgroup(JobCgroup&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

JobCgroup::~JobCgroup() {
  if (path_.empty()) return;
  kill_all();
  for (int attempt = 0; attempt < 200 && rmdir(path_.c_str()) != 0 && errno == EBUSY; ++attempt)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

bool JobCgroup::add(pid_t pid, std::string* why) const {
  return write_text(path_ + "/cgroup.procs", std::to_string(pid), why);
}

void JobCgroup::kill_all() const {
  std::error_code ec;
  const bool has_kill = fs::exists(path_ + "/cgroup.kill", ec);
  for (int attempt = 0; attempt < 400; ++attempt) {
    const auto pids = listed_pids(path_ + "/cgroup.procs");
    if (pids.empty()) return;
    if (has_kill) write_text(path_ + "/cgroup.kill", "1", nullptr);
    else
      for (pid_t pid : pids) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool JobCgroup::oom_killed() const {
  std::istringstream events(read_text(path_ + "/memory.events"));
  std::string key;
  for (uint64_t value = 0; events >> key >> value;)
    if (key == "oom_kill" && value > 0) return true;
  return false;
}

uint64_t JobCgroup::peak_memory() const {
  const std::string text = read_text(path_ + "/memory.peak");
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
