// Dropping a sandboxed worker's privileges (privileges.hpp).
#include "harness/sandbox/privileges.hpp"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace dicebench::sandbox {

std::string drop_capabilities() {
  // Without CAP_SETPCAP (a user namespace's unmapped root, say) these two fail: the capset below
  // still empties the sets, and no_new_privs keeps exec from filling them again.
  prctl(PR_SET_SECUREBITS,
        SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
            SECBIT_KEEP_CAPS_LOCKED,
        0, 0, 0);
  for (int cap = 0; cap <= 63; ++cap)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
      return std::string("PR_CAPBSET_DROP: ") + std::strerror(errno);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) return std::string("capset: ") + std::strerror(errno);
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("CapEff:", 0) == 0 && line.find_first_not_of("0\t ", 7) != std::string::npos)
      return "capabilities remain: " + line;
  return "";
}

std::string set_no_new_privileges() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("PR_SET_NO_NEW_PRIVS: ") + std::strerror(errno);
  return "";
}

}  // namespace dicebench::sandbox
