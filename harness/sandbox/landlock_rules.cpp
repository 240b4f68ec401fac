// The job's Landlock rules (landlock_rules.hpp), through the raw system calls: the structures
// and access bits are those of <linux/landlock.h>, spelled out here for headers older than the
// kernel (Debian 12's know ABI 2; the kernel may have ABI 7).
#include "harness/sandbox/landlock_rules.hpp"

#include "harness/sandbox/mount_view.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <vector>

namespace dicebench::sandbox {
namespace {

namespace fs = std::filesystem;

#ifndef SYS_landlock_create_ruleset
constexpr long kCreateRuleset = 444, kAddRule = 445, kRestrictSelf = 446;  // the same on every architecture
#else
constexpr long kCreateRuleset = SYS_landlock_create_ruleset, kAddRule = SYS_landlock_add_rule,
               kRestrictSelf = SYS_landlock_restrict_self;
#endif
constexpr uint32_t kCreateRulesetVersion = 1u << 0;  // LANDLOCK_CREATE_RULESET_VERSION
constexpr int kRulePathBeneath = 1;                  // LANDLOCK_RULE_PATH_BENEATH

// LANDLOCK_ACCESS_FS_*: the rights that change the filesystem, by the ABI that brought them.
// EXECUTE, READ_FILE and READ_DIR are not handled (so stay allowed), nor IOCTL_DEV (ABI 5: CUDA
// drives its devices by ioctl).
constexpr uint64_t kWriteFile = 1ull << 1, kRemoveDir = 1ull << 4, kRemoveFile = 1ull << 5, kMakeChar = 1ull << 6,
                   kMakeDir = 1ull << 7, kMakeReg = 1ull << 8, kMakeSock = 1ull << 9, kMakeFifo = 1ull << 10,
                   kMakeBlock = 1ull << 11, kMakeSym = 1ull << 12;
constexpr uint64_t kWritesAbi1 = kWriteFile | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir | kMakeReg | kMakeSock |
                                 kMakeFifo | kMakeBlock | kMakeSym;
constexpr uint64_t kRefer = 1ull << 13;     // ABI 2: renames and links across folders
constexpr uint64_t kTruncate = 1ull << 14;  // ABI 3
// LANDLOCK_ACCESS_NET_* (ABI 4).
constexpr uint64_t kBindTcp = 1ull << 0, kConnectTcp = 1ull << 1;

struct RulesetAttr {  // struct landlock_ruleset_attr up to ABI 4's handled_access_net
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
};

struct __attribute__((packed)) PathBeneathAttr {  // struct landlock_path_beneath_attr
  uint64_t allowed_access;
  int32_t parent_fd;
};

std::string failure(const std::string& what) { return what + ": " + std::strerror(errno); }

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Rights that apply to a file, not a folder (the rest of `rights` are about a folder's entries).
uint64_t file_rights(uint64_t rights) { return rights & (kWriteFile | kTruncate); }

// Grants `rights` beneath the folder `path`, or its file rights on the file `path`; nothing where
// it is not there.
std::string allow(int ruleset, const std::string& path, uint64_t rights, bool* granted) {
  *granted = false;
  const Fd place(open(path.c_str(), O_PATH | O_CLOEXEC));
  if (place.fd < 0) return "";  // not there (no /run on this host, say): nothing to grant
  struct stat st {};
  if (fstat(place.fd, &st) != 0) return failure("stat " + path);
  PathBeneathAttr rule{S_ISDIR(st.st_mode) ? rights : file_rights(rights), place.fd};
  if (syscall(kAddRule, ruleset, kRulePathBeneath, &rule, 0) != 0) return failure("landlock_add_rule " + path);
  *granted = true;
  return "";
}

// Without the mount view: the host's device nodes a job may write (kDeviceNodes, NVIDIA's), and
// the job's own /proc/PID (its threads' names) rather than every process's.
std::vector<std::string> places_without_view() {
  std::vector<std::string> places;
  places.reserve(kDeviceNodes.size() + 1);
  for (const auto node : kDeviceNodes) places.push_back("/dev/" + std::string(node));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec))
    if (entry.path().filename().string().rfind("nvidia", 0) == 0) places.push_back(entry.path().string());
  places.push_back("/proc/" + std::to_string(getpid()));
  return places;
}

}  // namespace

std::string restrict_with_landlock(const LandlockOptions& options, std::string* detail) {
  const long abi = syscall(kCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  if (abi < 0) {
    if (errno == ENOSYS) return "the kernel has no Landlock (ENOSYS)";
    if (errno == EOPNOTSUPP) return "Landlock is turned off in this kernel (EOPNOTSUPP; boot with lsm=...,landlock)";
    return failure("landlock_create_ruleset(version)");
  }
  // ABI 1 refuses every rename or link across folders (EXDEV) and cannot be told otherwise;
  // caches written by rename into place (Triton's) would fail, so ABI 2 (Linux 5.19) is the least.
  if (abi < 2) return "Landlock ABI " + std::to_string(abi) + " refuses renames across folders; ABI 2 is needed";
  uint64_t writes = kWritesAbi1 | kRefer;
  if (abi >= 3) writes |= kTruncate;
  const bool tcp = options.restrict_tcp && abi >= 4;
  RulesetAttr attr{writes, tcp ? (kBindTcp | kConnectTcp) : 0};
  const size_t attr_size = abi >= 4 ? sizeof attr : sizeof attr.handled_access_fs;
  const Fd ruleset(static_cast<int>(syscall(kCreateRuleset, &attr, attr_size, 0u)));
  if (ruleset.fd < 0) return failure("landlock_create_ruleset");

  bool granted = false;
  if (auto why = allow(ruleset.fd, options.job_dir, writes, &granted); !why.empty()) return why;
  if (!granted) return "cannot open the job folder " + options.job_dir;
  std::string places = "the job folder";
  if (options.private_view) {
    for (const auto folder : kWritableFolders) {
      if (auto why = allow(ruleset.fd, std::string(folder), writes, &granted); !why.empty()) return why;
      if (granted) places += ", " + std::string(folder);
    }
  } else {
    for (const auto& place : places_without_view())
      if (auto why = allow(ruleset.fd, place, writes, &granted); !why.empty()) return why;
    places += ", /dev's nodes, its own /proc/PID (no mount view: not the host's /tmp, /dev/shm, /run)";
  }
  if (syscall(kRestrictSelf, ruleset.fd, 0u) != 0) return failure("landlock_restrict_self");
  if (detail)
    *detail = "ABI " + std::to_string(abi) + ": writes only to " + places +
              (tcp                    ? "; no TCP"
               : options.restrict_tcp ? "; TCP not restricted (ABI 4 needed)"
                                      : "; TCP not restricted");
  return "";
}

}  // namespace dicebench::sandbox
