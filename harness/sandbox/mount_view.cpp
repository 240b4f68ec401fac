// The job's filesystem view (mount_view.hpp).
#include "harness/sandbox/mount_view.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dicebench::sandbox {
namespace {

namespace fs = std::filesystem;

std::string failure(const std::string& what) { return what + ": " + std::strerror(errno); }

// /proc entries that write to the kernel and stay read-only in the job's fresh /proc.
constexpr const char* kProcReadOnly[] = {"sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "scsi"};

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

struct MountAttr {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};

// Every mount below "/" read-only and nosuid: mount_setattr(2) over the whole tree where the
// kernel has it (5.12), else a remount of each mount point from /proc/self/mountinfo.
std::string make_tree_read_only() {
#ifdef SYS_mount_setattr
  MountAttr attr{MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, 0, 0};
  if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &attr, sizeof attr) == 0) return "";
  if (errno != ENOSYS) return failure("mount_setattr(/, read-only)");
#endif
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    // Remounting keeps the flags the kernel locked (nodev, noexec) by passing them back.
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID;
    if (line.find(" nodev") != std::string::npos || line.find(",nodev") != std::string::npos) flags |= MS_NODEV;
    if (line.find(",noexec") != std::string::npos || line.find(" noexec") != std::string::npos) flags |= MS_NOEXEC;
    if (mount(nullptr, point.c_str(), nullptr, flags, nullptr) != 0 && errno != ENOENT && errno != EACCES)
      return failure("remount " + point + " read-only");
  }
  return "";
}

// Binds `source` (a path, possibly through /proc/self/fd) at `target`, then makes that mount
// read-only or read-write.
std::string bind(const std::string& source, const std::string& target, bool read_only, bool recursive = false) {
  if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND | (recursive ? MS_REC : 0), nullptr) != 0)
    return failure("bind " + source + " at " + target);
  const unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | (read_only ? MS_RDONLY : 0);
  if (mount(nullptr, target.c_str(), nullptr, flags, nullptr) != 0) return failure("remount " + target);
  return "";
}

std::string private_tmpfs(const std::string& path, uint64_t bytes, const char* mode) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return "";  // nothing to hide or replace
  const std::string data = "size=" + std::to_string(bytes) + ",mode=" + mode;
  if (mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, data.c_str()) != 0)
    return failure("tmpfs on " + path);
  return "";
}

// An empty file or folder at `target` to bind a node onto.
bool make_mount_point(const std::string& target, bool directory) {
  if (directory) return mkdir(target.c_str(), 0755) == 0 || errno == EEXIST;
  const int fd = open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// A tmpfs /dev with the allowed nodes bound from the host's /dev (opened as `host_dev`), the
// usual links and a private /dev/shm; read-only once set up.
std::string set_up_dev(int host_dev, uint64_t tmpfs_bytes) {
  if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=1m,mode=0755") != 0) return failure("tmpfs on /dev");
  std::vector<std::string> nodes(kDeviceNodes.begin(), kDeviceNodes.end());
  if (DIR* dir = fdopendir(dup(host_dev))) {
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name.rfind("nvidia", 0) == 0) nodes.push_back(name);
    }
    closedir(dir);
  }
  const std::string host = "/proc/self/fd/" + std::to_string(host_dev) + "/";
  for (const auto& name : nodes) {
    struct stat st {};
    if (fstatat(host_dev, name.c_str(), &st, 0) != 0) continue;
    const bool directory = S_ISDIR(st.st_mode);
    const std::string target = "/dev/" + name;
    if (!make_mount_point(target, directory)) return failure("create " + target);
    if (mount((host + name).c_str(), target.c_str(), nullptr, MS_BIND | (directory ? MS_REC : 0), nullptr) != 0)
      return failure("bind /dev/" + name);
  }
  const std::pair<const char*, const char*> links[] = {{"/proc/self/fd", "/dev/fd"},
                                                       {"/proc/self/fd/0", "/dev/stdin"},
                                                       {"/proc/self/fd/1", "/dev/stdout"},
                                                       {"/proc/self/fd/2", "/dev/stderr"}};
  for (const auto& [to, link] : links)
    if (symlink(to, link) != 0) return failure(std::string("link ") + link);
  if (mkdir("/dev/shm", 01777) != 0) return failure("create /dev/shm");
  if (mount(nullptr, "/dev", nullptr, MS_REMOUNT | MS_NOSUID | MS_NOEXEC | MS_RDONLY, "size=1m,mode=0755") != 0)
    return failure("remount /dev read-only");
  return private_tmpfs("/dev/shm", tmpfs_bytes, "1777");
}

}  // namespace

std::string set_up_mount_view(const MountViewOptions& options) {
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return failure("make / private");
  // Opened before anything is mounted over them.
  const int job = open(options.job_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (job < 0) return failure("open the job folder " + options.job_dir);
  // Folders to keep visible that a private or hidden tmpfs below would cover (the worker's own
  // files where the project lies under /tmp, the compile cache), parents first; others are
  // visible already. A path that is no folder (a zip on sys.path) or is gone is passed over.
  std::vector<std::string> kept;
  for (const auto& path : options.read_only) {
    bool covered = false;
    for (const std::string& root : {std::string("/tmp"), std::string("/var/tmp"), std::string("/run")})
      covered |= path.rfind(root + "/", 0) == 0;
    for (const auto& root : options.hidden) covered |= path == root || path.rfind(root + "/", 0) == 0;
    if (covered) kept.push_back(path);
  }
  std::sort(kept.begin(), kept.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  std::vector<std::pair<std::string, int>> read_only;
  for (const auto& path : kept) {
    const int fd = open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) read_only.emplace_back(path, fd);
  }
  const int host_dev = open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (host_dev < 0) return failure("open /dev");

  if (auto why = make_tree_read_only(); !why.empty()) return why;
  if (options.new_proc) {
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return failure("mount /proc");
    for (const char* entry : kProcReadOnly) {
      const std::string path = std::string("/proc/") + entry;
      struct stat st {};
      if (lstat(path.c_str(), &st) != 0) continue;
      if (auto why = bind(path, path, true, true); !why.empty()) return why;
    }
  }
  // A sysfs of the job's own network namespace (the host's lists the host's interfaces).
  if (options.new_sysfs && mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, nullptr) != 0)
    return failure("mount /sys");
  if (auto why = set_up_dev(host_dev, options.tmpfs_bytes); !why.empty()) return why;
  close(host_dev);
  for (const char* path : {"/tmp", "/var/tmp", "/run"})
    if (auto why = private_tmpfs(path, options.tmpfs_bytes, "1777"); !why.empty()) return why;
  // Hidden folders stay writable until the job folder's mount point is made (it may lie inside one).
  for (const auto& path : options.hidden)
    if (auto why = private_tmpfs(path, 1 << 20, "0755"); !why.empty()) return why;

  std::error_code ec;
  for (const auto& [path, fd] : read_only) {
    fs::create_directories(path, ec);  // inside a fresh tmpfs, or inside a parent bound just before
    if (auto why = bind("/proc/self/fd/" + std::to_string(fd), path, true); !why.empty()) return why;
    close(fd);
  }
  // The job folder at its own path, read-write, whatever was mounted over its parents (last, so
  // that a read-only folder around it does not cover it).
  fs::create_directories(options.job_dir, ec);  // inside a fresh tmpfs; exists already elsewhere
  if (!fs::is_directory(options.job_dir, ec)) return "no mount point for the job folder " + options.job_dir;
  if (auto why = bind("/proc/self/fd/" + std::to_string(job), options.job_dir, false); !why.empty()) return why;
  close(job);
  for (const auto& path : options.hidden) {
    if (!fs::is_directory(path, ec)) continue;
    if (mount(nullptr, path.c_str(), nullptr, MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_RDONLY, "size=1m,mode=0755") !=
            0 &&
        errno != EINVAL)  // EINVAL: the path lies in another tmpfs (/tmp), not a mount point of its own
      return failure("remount " + path + " read-only");
  }
  return "";
}

}  // namespace dicebench::sandbox
